"""The sweep on a real local Ray cluster (in-process, 127.0.0.1): the same episodes as one
process, one store written by the driver, and a killed worker's episodes continued elsewhere
from their journals."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from sweepbench.config import load_config
from sweepbench.results.report import build_report
from sweepbench.runner.sweep import Sweep
from sweepbench.store.runstore import RunStore

from ..support import without_backups

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

from sweepbench.scaleout.cluster import Cluster  # noqa: E402
from sweepbench.scaleout.driver import Driver  # noqa: E402

METRICS = ("k", "tasks", "episodes", "errors", "avg", "pass_at_k", "pass_hat_k", "state",
           "unjudged", "metrics")
MODELS = ["scripted/oracle", "scripted/noisy:0.3"]
CFG = dict(models=MODELS, trials=2, max_concurrency=8, reference_latency_s=0.02,
           endpoints=without_backups(*MODELS, "scripted/user"))


@pytest.fixture(scope="module")
def cluster():
    assert not ray.is_initialized()
    with Cluster(workers=2) as c:  # starts the local cluster as ``run --workers 2`` does
        yield c


def metrics(report: dict) -> dict:
    return {b: {m: {k: v.get(k) for k in METRICS} for m, v in bs["models"].items()}
            for b, bs in report["benchmarks"].items()}


def stored(store: RunStore, run_id: str) -> tuple[dict[str, bytes], dict]:
    """Every episode's transcript and termination, and the leaderboards."""
    episodes = {f"{r.model}|{r.task_id}|{r.trial}": msgspec.json.encode(
        [r.termination, r.messages]) for r in store.episodes(run_id)}
    return episodes, metrics(build_report(store, run_id))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One process's run of CFG: what every run on Ray must store."""
    cfg = load_config(None, CFG)
    with RunStore(tmp_path_factory.mktemp("one") / "one.sqlite") as store:
        sweep = Sweep(cfg, store)
        asyncio.run(sweep.run())
        return stored(store, sweep.run_id), sweep.reference.stats()


def test_two_workers_store_what_one_process_stores(cluster, reference, tmp_path):
    cfg = load_config(None, CFG)
    with RunStore(tmp_path / "ray.sqlite") as store:
        driver = Driver(cfg, store, cluster=cluster, workers=2)
        outcome = asyncio.run(driver.run())
        assert outcome.errors == 0 and outcome.episodes == len(reference[0][0])
        assert stored(store, driver.run_id) == reference[0]
        # both workers ran episodes: the work was pulled by each, not run by one
        assert all(w.episodes > 0 for w in driver.workers)
        # every answer the driver's reference server gave is journaled once: no call twice
        assert (driver.reference.stats()["requests"] == reference[1]["requests"])


def test_a_killed_workers_episodes_continue_from_their_journals(cluster, reference, tmp_path):
    cfg = load_config(None, CFG)
    with RunStore(tmp_path / "ray.sqlite") as store:
        driver = Driver(cfg, store, cluster=cluster, workers=2)
        seen: dict[str, int] = {}

        async def run_and_kill():
            task = asyncio.create_task(driver.run())
            while not driver.workers or driver.workers[0].episodes < 2:
                await asyncio.sleep(0.005)
            victim = driver.workers[0]
            count = tmp_path / "unacknowledged"
            victim.handle.kill.remote(str(count))  # SIGKILL, counting what it leaves unstored
            outcome = await task
            seen["unacknowledged"] = int(count.read_text())
            return outcome

        outcome = asyncio.run(run_and_kill())
        assert driver.worker_deaths == 1 and outcome.errors == 0
        assert outcome.resumed >= 1  # continued from a journal, on the other worker
        assert stored(store, driver.run_id) == reference[0]
        extra = (sum(driver.reference.stats()["requests"].values())
                 - sum(reference[1]["requests"].values()))
        # made again: at most the calls the dead worker had in flight or had not reported
        assert 0 <= extra <= seen["unacknowledged"]


def test_workers_run_at_the_drivers_priority(cluster):
    """Ray's default would start them at nice 15: last for a core on a busy machine."""
    import os

    handles = cluster.start(1, cfg=msgspec.to_builtins(load_config(None, CFG)), run_id="nice",
                            slots=1, reference_url="http://127.0.0.1:9/v1")  # never called
    try:
        pid = ray.get(handles[0].pid.remote())
        assert os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0)
    finally:
        cluster.kill(handles)
