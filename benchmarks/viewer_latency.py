"""How fast does ``sweepbench view`` answer on a store of 100,000 episodes?

The store: a real sweep through the built-in reference server (scripted/oracle and
scripted/noisy:0.3 on the default tasks, scripted/user, scripted/judge with the
sliding-window and Likert judges), whose episodes (records, journals, judgments and judge
journals, byte for byte) are then written again through the store's API under other model
names, task ids and identities until the store holds ``--episodes`` (default 100,000), all
selected by one run: real message sizes and shapes, at a fraction of the time a sweep of that
size would take.

Measured through HTTP against the viewer's app (in this process, on loopback), each a median
over ``--repeats`` requests, with the first (SQLite-cold) request reported apart:

- **first page**: what the page fetches to show the leaderboards of every episode in the
  store (``/api/stores``, ``/api/summary``) plus the first page of the episode list
  (``/api/episodes``);
- **episode page**: ``/api/episode`` and ``/api/same-task`` of a different episode each time;
- beyond the target: the same for one run's selection and with another source for VitaBench
  (each computed on its first request, then kept), a filtered list deep in its pages, and
  one bounded text search request.

The viewer computes each store's leaderboard aggregates once before it serves (``startup``)
and keeps them until the store changes; everything else is read per request.

The target is 300 ms for each of the first two; ``*_ratio`` is the median over the target
(below 1 meets it). Prints one JSON object last.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import msgspec
from aiohttp import web

from sweepbench.cli import main as cli_main
from sweepbench.ids import EpisodeId, EpisodeKey, TaskKey
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.runner.build import benchmark_info
from sweepbench.runner.work import new_run_id
from sweepbench.view.server import build_app, prepare

TARGET_MS = 300.0


def seed_store(path: Path) -> None:
    """A real scripted sweep with the LLM judges (about 150 episodes)."""
    code = cli_main(["run", "--trials", "2", "--judge-model", "scripted/judge",
                     "--no-progress", "--out", str(path)])
    if code:
        raise SystemExit(f"the seed sweep failed ({code})")


def grow(seed: Path, out: Path, episodes: int, models: int) -> dict:
    """Write the seed's episodes again under other names until ``out`` holds ``episodes``,
    all selected by one run, as a sweep of that size would store them."""
    with RunStore(seed, create=False) as src:
        run = src.runs()[-1]
        rows = {r["episode_key"]: r for r in src.episode_rows()}
        records = src.records()
        journals = {key: {j: src.events(key, journal=j, raw=True) for j in src.journals(key)}
                    for key in records}
        judged: dict[str, list[dict]] = {}
        for j in src.judgments():
            judged.setdefault(j["episode_key"], []).append(j)
        identities = src.identities()
    trials = max(r.trial for r in records.values()) + 1
    # (benchmark, domain, task, trial) -> the seed's episodes of it, one per seed model
    slots: dict[tuple, list[tuple[str, object]]] = {}
    for key, rec in records.items():
        slots.setdefault((rec.benchmark, rec.domain, rec.task_id, rec.trial), []).append(
            (key, rec))
    order = sorted(slots)
    copies = -(-episodes // (models * len(order)))
    rng = random.Random(0)
    written = 0
    t0 = time.perf_counter()
    names = [f"model-{m:02d}" for m in range(models)]
    price = {"input": 1.0, "cached_input": 0.1, "output": 4.0}
    with RunStore(out) as store:
        run_id = new_run_id()
        store.begin_run(run_id, {**run["config"], "note": "viewer_latency: grown from a seed"},
                        prices={**run["prices"], **{n: price for n in names}},
                        info=run["info"])
        for m, model in enumerate(names):
            skill = (m + 0.5) / models  # how often this model's episode is the oracle's
            for copy in range(copies):
                for slot in order:
                    if written >= episodes:
                        break
                    pool = sorted(slots[slot], key=lambda x: x[1].model != "scripted/oracle")
                    key, rec = pool[0] if rng.random() < skill or len(pool) == 1 else pool[1]
                    row = rows[key]
                    task_id = f"{rec.task_id}-r{copy:03d}"
                    label = str(EpisodeId(model, TaskKey(rec.benchmark, rec.domain, rec.lang,
                                                         task_id), rec.trial))
                    identity = {**identities[key], "agent": {"scripted": model},
                                "task": f"{identities[key].get('task')}-r{copy:03d}"}
                    new = str(EpisodeKey.of(identity))
                    meta = EpisodeMeta(key=new, label=label, model=model,
                                       benchmark=rec.benchmark, domain=rec.domain,
                                       task_id=task_id, lang=rec.lang, trial=rec.trial,
                                       spec=row["spec"], user_model=row["user_model"],
                                       user_mode=row["user_mode"], identity=identity,
                                       unreachable=row["unreachable"])
                    store.select(run_id, [meta])
                    store.episode_started(meta, run_id=run_id)
                    for journal, events in journals[key].items():
                        for ev in events:
                            endpoint = (model if ev["endpoint"] == rec.model
                                        else ev["endpoint"])
                            store.event(new, ev["seq"], ev["kind"], ev["payload"],
                                        journal=journal, run_id=run_id, endpoint=endpoint)
                    store.episode_finished(new, msgspec.structs.replace(
                        rec, model=model, task_id=task_id, run_id=run_id), run_id=run_id)
                    for j in judged.get(key, []):
                        store.judgment(new, judge=j["judge"], method=j["method"],
                                       passed=j["passed"], score=j["score"],
                                       details=j["details"], run_id=run_id,
                                       judge_key=j["judge_key"])
                    written += 1
                    if written % 2_000 == 0:
                        store.flush_sync()
                        print(json.dumps({"written": written,
                                          "s": round(time.perf_counter() - t0, 1)}),
                              file=sys.stderr)
        store.finish_run(run_id, "done")
    return {"run_id": run_id, "episodes": written, "trials": trials,
            "generate_s": time.perf_counter() - t0}


async def measure(path: Path, run_id: str, repeats: int) -> dict:
    app = build_app([path], benchmarks=benchmark_info())
    runner = web.AppRunner(app, access_log=None)
    t = time.perf_counter()
    await runner.setup()  # the viewer computes the stores' leaderboards before serving
    startup_ms = (time.perf_counter() - t) * 1000
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    base = f"http://127.0.0.1:{port}/api/"
    sid = path.stem
    out: dict[str, list[float]] = {"startup": [startup_ms]}
    try:
        async with aiohttp.ClientSession() as http:
            async def get(name: str, **params: object) -> dict:
                scope = {} if name == "stores" else {"store": sid}  # /api/stores takes none
                async with http.get(base + name, params={
                        **scope, **{k: str(v) for k, v in params.items()}}) as r:
                    assert r.status == 200, await r.text()
                    return await r.json()

            async def timed(key: str, *calls: tuple[str, dict]) -> list[dict]:
                t = time.perf_counter()
                results = [await get(name, **params) for name, params in calls]
                out.setdefault(key, []).append((time.perf_counter() - t) * 1000)
                return results

            # every episode of the store (the default, as `report`), each benchmark by its
            # headline
            for _ in range(repeats):
                _, summary, first = await timed(
                    "first_page", ("stores", {}), ("summary", {}), ("episodes", {"page": 0}))
            assert first["total"] >= 1
            keys = []
            rng = random.Random(0)
            for _ in range(repeats):
                page = rng.randrange(max(1, first["total"] // 50))
                listed = await get("episodes", page=page)
                keys.append(rng.choice(listed["rows"])["episode_key"])
            for key in keys:
                episode, _ = await timed("episode_page", ("episode", {"id": key}),
                                         ("same-task", {"id": key}))
                assert episode["messages"]
            # one run's selection (through run_episodes): computed on first request, then kept
            for _ in range(repeats):
                await timed("run_first_page", ("summary", {"run": run_id}),
                            ("episodes", {"run": run_id, "page": 0}))
            # another source for VitaBench: computed on first request, then kept
            vitabench = next(b["name"] for b in summary["benchmarks"]  # named by release
                             if b["name"].split("@")[0] == "vitabench")
            for _ in range(repeats):
                await timed("other_source_summary", ("summary", {
                    f"src.{vitabench}": "state/state"}))
            model = summary["cells"][0]["model"]
            for i in range(repeats):
                await timed("filtered_deep_page", ("episodes", {
                    "model": model, "outcome": "failed", "page": 20 + i}))
            for i in range(repeats):
                await timed("search_one_request", ("episodes", {"q": f"order {i}"}))
    finally:
        await runner.cleanup()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=100_000)
    ap.add_argument("--models", type=int, default=25)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="10,000 episodes")
    ap.add_argument("--keep", metavar="DIR", help="build the store in DIR and keep it "
                    "(reused when it is there)")
    opts = ap.parse_args()
    episodes = 10_000 if opts.quick else opts.episodes
    tmp = Path(opts.keep or tempfile.mkdtemp(prefix="sweepbench-view-"))
    tmp.mkdir(parents=True, exist_ok=True)
    store = tmp / f"viewer-{episodes}.sqlite"
    if store.exists():
        with RunStore(store, create=False) as s:
            built = {"run_id": s.latest_run_id(), "episodes": len(s.episode_status()),
                     "generate_s": None}
    else:
        seed = tmp / "seed.sqlite"
        if not seed.exists():
            seed_store(seed)
        built = grow(seed, store, episodes, opts.models)
    t = time.perf_counter()
    prepare([store], lambda line: print(line, file=sys.stderr))
    index_s = time.perf_counter() - t
    times = asyncio.run(measure(store, built["run_id"], opts.repeats))
    med = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "episodes": built["episodes"],
        "store_mb": round(store.stat().st_size / 2**20),
        "generate_s": None if built["generate_s"] is None else round(built["generate_s"], 1),
        "index_s": round(index_s, 2),
        "repeats": opts.repeats,
        **{f"{k}_ms": round(v, 1) for k, v in med.items()},
        **{f"{k}_cold_ms": round(v[0], 1) for k, v in times.items()},
        "target_ms": TARGET_MS,
        "first_page_ratio": round(med["first_page"] / TARGET_MS, 3),
        "episode_page_ratio": round(med["episode_page"] / TARGET_MS, 3),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
