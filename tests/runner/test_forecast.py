"""`plan` for an adaptive sweep: a forecast from stored history, or a plain "cannot"."""

from __future__ import annotations

import numpy as np

from sweepbench.config import load_config
from sweepbench.runner import adaptive
from sweepbench.runner.forecast import forecast, simulate
from sweepbench.runner.rounds import AdaptiveSpec
from sweepbench.runner.sweep import run_sweep
from sweepbench.store.runstore import RunStore

MODELS = ["scripted/noisy:0.15", "scripted/noisy:0.45"]
CFG = dict(models=MODELS, trials=2, max_concurrency=8, limit=6, benchmarks=["t1:single"])
SPEC = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.15, max_trials=8, batch=4)
COST = {"dollars": 0.5, "requests": 10.0}


def test_simulated_ranking_spends_less_on_a_wide_gap_than_on_a_close_one():
    tasks = [f"t{i}" for i in range(40)]
    wide = {"a": dict.fromkeys(tasks, 0.8), "b": dict.fromkeys(tasks, 0.2)}
    close = {"a": dict.fromkeys(tasks, 0.52), "b": dict.fromkeys(tasks, 0.48)}
    spec = AdaptiveSpec(rule=adaptive.RANKED, start=2, margin=0.01, max_trials=12, batch=20)

    def total(rates, seed):
        n = simulate(rates, spec, 20, np.random.default_rng(seed))
        assert all(2 <= k <= 12 for m in n.values() for k in m.values())
        return sum(k for m in n.values() for k in m.values())

    assert total(wide, 0) == 2 * 40 * 2  # told apart by the first trials
    assert total(close, 0) > 2 * 40 * 2
    assert total(close, 1) == total(close, 1)  # seeded


async def test_forecast_needs_history_and_then_stays_within_the_cap(tmp_path):
    cfg = load_config(None, CFG)
    path = tmp_path / "s.sqlite"
    empty = forecast(cfg, None, SPEC, COST)
    assert "cannot" in empty and "12 of 12" in empty["cannot"]
    assert empty["cap"] == {"episodes": 12 * 8, "dollars": 12 * 8 * 0.5}

    await run_sweep(cfg, path)  # the adaptive sweep's first trials, as a fixed sweep
    with RunStore(path) as store:
        f = forecast(cfg, store, SPEC, COST)
    assert "cannot" not in f and f["stored"] == 12 * 2
    assert 12 * 2 <= f["episodes"]["median"] <= f["episodes"]["high"] <= 12 * 8
    assert f["to_run"]["median"] == f["episodes"]["median"] - 24
    assert f["dollars"]["high"] == f["to_run"]["high"] * 0.5
    assert f["requests"]["median"] == f["to_run"]["median"] * 10.0
