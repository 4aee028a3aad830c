"""A sweep over a model with two replicas: one killed mid-sweep costs no episode and changes
no result, and is taken back when it returns."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sweepbench.benchmarks.doubles import scripted_models
from sweepbench.config import load_config
from sweepbench.devserver.server import ReferenceServer
from sweepbench.runner.sweep import run_sweep
from sweepbench.store.runstore import RunStore

AGENT = "scripted/noisy:0.3"


def config(urls: list[str]):
    return load_config(None, {
        "models": [AGENT], "benchmarks": ["t1:flight+hotel+bar"], "limit": 6, "trials": 4,
        "max_concurrency": 12, "judge_models": [],
        "endpoints": [{"name": AGENT, "base_urls": urls, "breaker_cooldown_s": 0.2,
                       "hedge": False, "max_concurrency": 64}]})


def outcomes(path: Path) -> dict:
    with RunStore(path) as store:
        rows = store.episode_rows()
        records = store.records([r["episode_key"] for r in rows])
        judged = {(j["episode_key"], j["judge"]): j["passed"] for j in store.judgments()}
    return {"episodes": {k: (r.termination, r.messages) for k, r in records.items()},
            "judged": judged}


async def sweep(path: Path, *, kill: bool) -> tuple[int, dict]:
    reps = [ReferenceServer(scripted_models(), latency_s=0.15) for _ in range(2)]
    for s in reps:
        await s.start()
    killed: dict = {}

    async def kill_and_revive() -> None:
        while sum(reps[0].answered.values()) < 20:
            await asyncio.sleep(0.01)
        port = reps[0].port
        await reps[0].stop()
        killed["at"] = sum(reps[1].answered.values())
        await asyncio.sleep(0.3)
        reps[0] = ReferenceServer(scripted_models(), latency_s=0.15, port=port)
        await reps[0].start()

    chaos = asyncio.create_task(kill_and_revive()) if kill else None
    try:
        out = await run_sweep(config([s.url for s in reps]), path)
        if chaos is not None:
            await chaos
    finally:
        for s in reps:
            await s.stop()
    return out.errors, {"revived_answered": sum(reps[0].answered.values()), **killed}


async def test_a_replica_killed_mid_sweep_fails_no_episode_and_changes_no_result(tmp_path):
    errors, _ = await sweep(tmp_path / "calm.sqlite", kill=False)
    assert errors == 0
    errors, seen = await sweep(tmp_path / "killed.sqlite", kill=True)
    assert errors == 0
    calm, killed = outcomes(tmp_path / "calm.sqlite"), outcomes(tmp_path / "killed.sqlite")
    assert len(calm["episodes"]) == 24 and killed == calm
    assert seen["revived_answered"] > 0  # the replica was taken back when it returned
