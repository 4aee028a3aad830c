"""`plan` for an adaptive sweep: a forecast from stored history, or a plain "cannot"."""

from __future__ import annotations

import msgspec
import numpy as np

from sweepbench.config import load_config
from sweepbench.runner import adaptive
from sweepbench.runner import forecast as fc
from sweepbench.runner.forecast import forecast, simulate
from sweepbench.runner.rounds import AdaptiveSpec
from sweepbench.runner.sweep import run_sweep
from sweepbench.runner.work import build_work
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


# ---- unit tests: the cost per episode, the simulation, and the forecast's figures by hand --

def test_per_episode_divides_the_plan_by_the_episodes_to_run():
    plan = {"episodes": {"to_run": 3, "to_continue": 1}, "dollars": 8.0, "requests": 20.0,
            "unpriced": ["a"], "endpoints": ["a", "b"]}
    assert fc.per_episode(plan) == {"dollars": 2.0, "requests": 5.0}
    assert fc.per_episode({**plan, "unpriced": ["a", "b"]}) == {"dollars": None,
                                                                "requests": 5.0}
    assert fc.per_episode({**plan, "episodes": {"to_run": 0, "to_continue": 0}}) == {
        "dollars": 0.0, "requests": 0.0}
    assert fc._times(None, 3) is None and fc._times(2.5, 4) == 10.0


def test_simulate_stops_at_once_when_the_first_trials_decide():
    tasks = {f"t{i}": 1.0 for i in range(10)}
    spec = AdaptiveSpec(rule=adaptive.RANKED, start=3, margin=0.05, max_trials=9)
    n = simulate({"a": tasks, "b": dict.fromkeys(tasks, 0.0)}, spec, 4,
                 np.random.default_rng(0))
    assert n == {"a": dict.fromkeys(tasks, 3), "b": dict.fromkeys(tasks, 3)}
    wide = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.9, max_trials=9)
    assert simulate({"a": {"t": 0.5}}, wide, 4, np.random.default_rng(0)) == {"a": {"t": 2}}
    # a target never met: every cell ends at the cap, batch after batch
    tight = AdaptiveSpec(rule=adaptive.CI, start=2, target=1e-6, max_trials=7)
    assert simulate({"a": {"t": 0.5, "u": 0.3}}, tight, 1, np.random.default_rng(0)) == {
        "a": {"t": 7, "u": 7}}
    assert fc.SIMULATIONS == 20 and fc.N_BOOT == 200 and fc.MIN_HISTORY == 2
    # a ranking whose pairs are all within the margin stops at once; without one it goes on
    even = {"a": dict.fromkeys(tasks, 0.5), "b": dict.fromkeys(tasks, 0.5)}
    close = AdaptiveSpec(rule=adaptive.RANKED, start=3, margin=1.0, max_trials=9)
    assert simulate(even, close, 4, np.random.default_rng(0)) == {
        "a": dict.fromkeys(tasks, 3), "b": dict.fromkeys(tasks, 3)}
    apart = AdaptiveSpec(rule=adaptive.RANKED, start=3, margin=None, max_trials=9)
    assert simulate(even, apart, 4, np.random.default_rng(0)) != {
        "a": dict.fromkeys(tasks, 3), "b": dict.fromkeys(tasks, 3)}


class _Store:
    """A test double of the store: the state check's verdicts of the items given."""

    def __init__(self, passed):
        self.passed = passed

    def episode_status(self, keys):
        return {k: "done" for k in keys if k in self.passed}

    def judgments(self, keys):
        return [{"episode_key": k, "judge": "state", "method": "state", "passed": self.passed[k]}
                for k in keys]


def test_forecast_figures_by_hand_from_the_simulations(monkeypatch):
    cfg = load_config(None, {**CFG, "seed": 7, "max_concurrency": 6})
    spec = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.2, max_trials=8)  # no batch
    items = build_work(msgspec.structs.replace(cfg, trials=8), None)
    # 3 trials on record of each cell (one beyond the first 2), passing by the trial's parity
    # and the model; the batch is the default, 6 slots over 2 models
    passed = {i.key: (i.trial + (i.model == MODELS[0])) % 2 == 0 for i in items if i.trial < 3}
    f = forecast(cfg, _Store(passed), spec, COST)
    assert f["stored"] == 12 * 3 and f["simulations"] == 20
    rates = {m: {} for m in MODELS}
    for m in MODELS:
        for i in items:
            if i.model == m and i.trial == 0:
                c = sum(passed[j.key] for j in items if j.model == m and j.task.key == i.task.key
                        and j.trial < 3)
                rates[m][i.task.key] = (c + 0.5) / 4
    rng = np.random.default_rng(7)
    totals = sorted(sum(max(k, 3) for tasks in simulate(rates, spec, 3, rng).values()
                        for k in tasks.values()) for _ in range(20))
    median = (totals[9] + totals[10]) / 2
    assert totals[0] < totals[9] < totals[18] < totals[19]  # the draws matter
    assert f["episodes"] == {"median": median, "high": totals[18]}
    assert f["to_run"] == {"median": median - 36, "high": totals[18] - 36}
    assert f["dollars"] == {"median": (median - 36) * 0.5, "high": (totals[18] - 36) * 0.5}
    assert f["requests"] == {"median": (median - 36) * 10.0, "high": (totals[18] - 36) * 10.0}
    # with few simulations the high figure is the last one (the 90th percentile's rank)
    monkeypatch.setattr(fc, "SIMULATIONS", 5)
    rng = np.random.default_rng(7)
    five = sorted(sum(max(k, 3) for tasks in simulate(rates, spec, 3, rng).values()
                      for k in tasks.values()) for _ in range(5))
    assert five[3] < five[4]
    assert forecast(cfg, _Store(passed), spec, COST)["episodes"]["high"] == five[4]
    monkeypatch.undo()
    unpriced = forecast(cfg, _Store(passed), spec, {"dollars": None, "requests": 2.0})
    assert unpriced["dollars"] == {"median": None, "high": None}
    assert unpriced["cap"] == {"episodes": 96, "dollars": None}
    assert f["rule"] == spec.describe() and f["cap"] == {"episodes": 96, "dollars": 48.0}


def test_forecast_counts_history_beyond_the_cap_as_stored_not_to_run():
    cfg = load_config(None, CFG)
    spec = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.9, max_trials=2)
    items = build_work(msgspec.structs.replace(cfg, trials=5), None)
    passed = {i.key: i.trial % 2 == 0 for i in items}  # 5 on record, cap 2
    f = forecast(cfg, _Store(passed), spec, COST)
    assert f["stored"] == 12 * 2  # only trials up to the cap count as stored
    assert f["episodes"] == {"median": 12 * 2, "high": 12 * 2}
    assert f["to_run"] == {"median": 0.0, "high": 0}
    assert f["dollars"] == {"median": 0.0, "high": 0.0}
    assert f["requests"] == {"median": 0.0, "high": 0.0}
    one = {i.key: True for i in items if i.trial == 0}
    # two cells short of history, of two models: the first (by model, then task) is named
    cells = sorted({(i.model, i.task.key) for i in items})
    short = {cells[0], cells[-1]}
    some = {i.key: True for i in items if i.trial < 2 and (i.model, i.task.key) not in short}
    assert forecast(cfg, _Store(some), spec, COST)["cannot"].startswith(
        f"2 of 12 (model, task) cells have fewer than 2 scored trials in the store (e.g. "
        f"{cells[0][0]} on {cells[0][1]}): ")
    got = forecast(cfg, _Store(one), spec, COST)
    first = min((i.model, i.task.key) for i in items)
    assert got["cannot"] == (
        f"12 of 12 (model, task) cells have fewer than 2 scored trials in the store (e.g. "
        f"{first[0]} on {first[1]}): no history to forecast from. Run a fixed sweep of "
        "--trials 2 first (an adaptive sweep reuses it), or cap the adaptive one with "
        "--max-cost")


def test_the_cells_are_the_configs_in_its_data_dir(tmp_path, monkeypatch):
    seen = []

    def built(cfg, data_dir):  # a test double: reads the built-in samples
        seen.append((data_dir, cfg.trials))
        return build_work(msgspec.structs.replace(cfg, data_dir=None), None)

    monkeypatch.setattr(fc, "build_work", built)
    cfg = load_config(None, {**CFG, "data_dir": str(tmp_path)})
    out = forecast(cfg, None, SPEC, COST)
    assert seen == [(tmp_path.resolve(), 8)]  # every trial up to the cap
    assert out["cap"]["episodes"] == len(build_work(load_config(None, {**CFG, "trials": 8}),
                                                    None))
