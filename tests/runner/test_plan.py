"""`sweepbench plan`: what a sweep would do, before it spends anything (accuracy ratios with
wall time are measured by benchmarks/plan_accuracy.py)."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from sweepbench.cli import main
from sweepbench.config import load_config
from sweepbench.store.runstore import RunStore
from sweepbench.results import fmt
from sweepbench.runner.plan import make_plan, render_plan
from sweepbench.runner.sweep import Sweep

BASE = {"benchmarks": ["vitabench:delivery", "t1:bar"], "models": ["scripted/oracle",
        "scripted/noisy:0.3"], "judge_models": ["scripted/judge"], "max_concurrency": 16,
        "endpoints": [{"name": "scripted/oracle", "price_input_per_mtok": 2.0,
                       "price_output_per_mtok": 8.0}]}


def test_without_history_the_plan_is_rough_and_says_so():
    cfg = load_config(None, {**BASE, "trials": 2})
    plan = make_plan(cfg, None)
    n = 2 * 2 * (7 + 25)  # trials x models x (delivery samples + bar templates)
    assert plan["episodes"] == {"selected": n, "stored": 0, "to_run": n, "to_continue": 0}
    assert plan["rough"] and all(v == ["the benchmark's defaults"]
                                 for v in plan["estimate_from"].values())
    oracle = plan["endpoints"]["scripted/oracle"]
    assert oracle["dollars"] == pytest.approx(
        (oracle["prompt_tokens"] * 2.0 + oracle["completion_tokens"] * 8.0) / 1e6)
    assert plan["dollars"] == pytest.approx(oracle["dollars"])  # the others are unpriced
    w = plan["wall_s"]
    assert 0 < w["low"] < w["estimate"] < w["high"] and w["bound"]


async def test_with_history_requests_and_tokens_are_close(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(load_config(None, {**BASE, "trials": 1}), store).run()
        cfg = load_config(None, {**BASE, "trials": 2})
        plan = make_plan(cfg, store)
        assert not plan["rough"]
        assert all(v == ["history of the task"] for v in plan["estimate_from"].values())
        ep = plan["episodes"]
        assert ep["stored"] == ep["to_run"] == ep["selected"] // 2
        sweep = Sweep(cfg, store)
        await sweep.run()
        server = sweep.reference
    requests = sum(server.requests.values())
    tokens = server.prompt_tokens + server.completion_tokens
    assert plan["requests"] == pytest.approx(requests, rel=0.15)
    assert plan["prompt_tokens"] + plan["completion_tokens"] == pytest.approx(tokens, rel=0.15)
    for name, e in plan["endpoints"].items():
        assert e["requests"] == pytest.approx(server.requests[name], rel=0.15), name


def test_plan_from_the_command_line_spends_nothing(tmp_path, capsys):
    out = tmp_path / "s.sqlite"
    assert main(["plan", "--benchmark", "t1:bar", "--model", "scripted/oracle", "--trials", "2",
                 "--out", str(out), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["episodes"]["to_run"] == 2 * 25 and plan["rough"]
    assert not out.exists()  # no store was made, no server started, nothing paid
    assert main(["plan", "--benchmark", "t1:bar", "--model", "scripted/oracle", "--trials", "2",
                 "--out", str(out)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "50 to run" in text and "rough estimate" in text and "wall time" in text


def test_a_model_with_three_keys_is_planned_at_three_times_its_per_key_rpm():
    from sweepbench.runner.plan import _wall_time

    def seconds(**keys):
        cfg = load_config(None, {"models": ["m"], "endpoints": [
            {"name": "m", "base_url": "http://a/v1", "rpm": 60, "rate_headroom": 1.0,
             **keys}]})
        return _wall_time(cfg, [1.0], [], {"m": [600.0, 0, 0, 0]}, {"m": 0.01}, 0.0)

    assert seconds() == (600.0, "m: rpm")  # 600 calls at 1 a second
    assert seconds(api_key_env="K1", api_key_envs=["K2", "K3"]) == (200.0, "m: rpm")


async def test_a_stored_judge_the_sweep_does_not_use_is_left_out(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(load_config(None, {**BASE, "benchmarks": ["vitabench:delivery"],
                                       "trials": 1}), store).run()
        unjudged = {**BASE, "benchmarks": ["vitabench:delivery"], "judge_models": [],
                    "trials": 2}
        plan = make_plan(load_config(None, unjudged), store)
    assert sorted(plan["endpoints"]) == ["scripted/noisy:0.3", "scripted/oracle",
                                         "scripted/user"]


def test_unpriced_endpoints_are_said_unpriced_not_zero_and_numbers_fit_80_columns():
    plan = make_plan(load_config(None, {**BASE, "trials": 2}), None)
    assert plan["unpriced"] == ["scripted/judge", "scripted/noisy:0.3", "scripted/user"]
    assert plan["endpoints"]["scripted/user"]["dollars"] is None
    console = Console(record=True, width=80, file=io.StringIO())
    console.print(render_plan(plan))
    lines = console.export_text().splitlines()
    assert max(map(len, lines)) <= 80 and not any("…" in line for line in lines)
    rows = {line.split()[0]: line.split() for line in lines if line.startswith("scripted/")}
    assert rows["scripted/user"][-1] == "unpriced"
    assert rows["scripted/oracle"][-1] == fmt.usd(plan["endpoints"]["scripted/oracle"]["dollars"])
    assert ("unpriced (no prices configured; not in the $ total): scripted/judge, "
            "scripted/noisy:0.3, scripted/user") in " ".join(" ".join(lines).split())


def test_without_history_the_harness_time_grows_with_the_square_root_of_the_load(monkeypatch):
    import os

    from sweepbench.runner import plan as plan_module

    cfg = load_config(None, {**BASE, "trials": 2})
    cores = os.cpu_count() or 1
    monkeypatch.setattr(plan_module.os, "getloadavg", lambda: (0.5 * cores, 0.0, 0.0))
    plan = make_plan(cfg, None)
    idle = plan["wall_s"]
    monkeypatch.setattr(plan_module.os, "getloadavg", lambda: (4.0 * cores, 0.0, 0.0))
    busy = make_plan(cfg, None)["wall_s"]
    assert (idle["machine_load"], busy["machine_load"]) == (1.0, 4.0)
    assert idle["bound"] == busy["bound"] == "the harness's own time per call"
    # twice the harness's time per call (sqrt 4), the same startup and judging tail
    harness = sum(e["requests"] for e in plan["endpoints"].values()) * 0.0006
    assert busy["estimate"] - idle["estimate"] == pytest.approx(harness, rel=1e-3)
