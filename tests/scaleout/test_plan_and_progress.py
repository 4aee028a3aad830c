"""``plan --workers N`` and the live progress's line of workers."""

from __future__ import annotations

import io

from rich.console import Console

from sweepbench.config import load_config
from sweepbench.runner.plan import DRIVER_S_PER_CALL, RAY_STARTUP_S, make_plan
from sweepbench.runner.progress import ProgressDisplay


def test_plan_with_workers_shares_the_harness_time_and_adds_the_cluster_start(monkeypatch):
    monkeypatch.setattr("sweepbench.runner.plan.machine_load", lambda: 1.0)  # both alike
    # latency 0: the harness's own time per call bounds the sweep
    cfg = load_config(None, dict(models=["scripted/oracle"], trials=8, max_concurrency=512))
    one = make_plan(cfg, None)["wall_s"]
    four = make_plan(cfg, None, workers=4)["wall_s"]
    assert one["bound"] == four["bound"] == "the harness's own time per call"
    assert four["workers"] == 4 and one["workers"] is None
    harness = one["estimate"] - 0.5  # the start of one process, without history
    assert abs(four["estimate"] - (harness / 4 + 0.5 + RAY_STARTUP_S)) < 1e-6 * harness
    requests = make_plan(cfg, None)["requests"]
    # with enough workers the driver's own time per call is what bounds it
    many = make_plan(cfg, None, workers=10_000)["wall_s"]
    assert many["bound"] == "the driver's store writing"
    assert abs(many["estimate"] - (requests * DRIVER_S_PER_CALL + 0.5 + RAY_STARTUP_S)) < 0.05


def test_progress_line_names_each_worker_and_its_rate():
    out = io.StringIO()
    display = ProgressDisplay(Console(file=out, width=200), enabled=True, log_every_s=1.0,
                              clock=lambda: 10.0)
    display.update("workers", workers=lambda: {
        "w0": {"episodes": 12, "calls": 300, "calls_per_s": 150.0, "alive": True},
        "w1": {"episodes": 3, "calls": 40, "calls_per_s": 20.0, "alive": False}})
    line = display._line(10.0).plain
    assert "workers: w0 12 ep 150 calls/s, w1 3 ep 20 calls/s (dead)" in line
