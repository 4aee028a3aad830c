"""How fast does ``sweepbench view`` answer on a store of 100,000 episodes?

The store: a real sweep through the built-in reference server (scripted/oracle and
scripted/noisy:0.3 on the default tasks, scripted/user, scripted/judge with the
sliding-window and Likert judges), whose episodes (records, journals, judgments and judge
journals, byte for byte) are then written again through the store's API under other model
names, task ids and trials until the store holds ``--episodes`` (default 100,000): real
message sizes and shapes, at a fraction of the time a sweep of that size would take.

Measured through HTTP against the viewer's app (in this process, on loopback), each a median
over ``--repeats`` requests, with the first (SQLite-cold) request reported apart:

- **first page**: what the page fetches to show the leaderboard (``/api/stores``,
  ``/api/summary``) plus the first page of the episode list (``/api/episodes``);
- **episode page**: ``/api/episode`` and ``/api/same-task`` of a different episode each time;
- beyond the target: another judge's leaderboard (its first request computes it), a
  filtered list deep in its pages, and one bounded text search request.

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
from sweepbench.ids import EpisodeId, TaskKey, judge_journal_id
from sweepbench.results.store import RunStore
from sweepbench.view.server import build_app, prepare_indexes

TARGET_MS = 300.0


def seed_store(path: Path) -> None:
    """A real scripted sweep with the LLM judges (about 150 episodes)."""
    code = cli_main(["run", "--trials", "2", "--judge-model", "scripted/judge",
                     "--no-progress", "--out", str(path)])
    if code:
        raise SystemExit(f"the seed sweep failed ({code})")


def grow(seed: Path, out: Path, episodes: int, models: int) -> dict:
    """Write the seed's episodes again under other names until ``out`` holds ``episodes``."""
    with RunStore(seed, create=False) as src:
        run_id = src.latest_run_id()
        config = src.run(run_id)["config"]
        rows = {r["episode_id"]: r for r in src.episode_rows(run_id)}
        records = src.episode_records(run_id)
        journals = {eid: src.events(run_id, eid, raw=True) for eid, _ in records}
        by_episode: dict[str, list[dict]] = {}
        for j in src.judgments(run_id):
            by_episode.setdefault(j["episode_id"], []).append(j)
        judge_journals = {
            (eid, j["judge"], j["method"]): src.events(
                run_id, judge_journal_id(j["judge"], j["method"], eid), raw=True)
            for eid, js in by_episode.items() for j in js}
    trials = max(r.trial for _, r in records) + 1
    # (task key, trial) -> the seed's episodes of it, one per seed model
    slots: dict[tuple[str, int], list[tuple[str, object]]] = {}
    for eid, rec in records:
        slots.setdefault((str(EpisodeId.parse(eid).task), rec.trial), []).append((eid, rec))
    order = sorted(slots)
    copies = -(-episodes // (models * len(order)))
    rng = random.Random(0)
    written = 0
    t0 = time.perf_counter()
    with RunStore(out) as store:
        store.begin_run(run_id, {**config, "note": "viewer_latency: grown from a seed sweep"})
        for m in range(models):
            model = f"model-{m:02d}"
            skill = (m + 0.5) / models  # how often this model's episode is the oracle's
            for copy in range(copies):
                for key in order:
                    if written >= episodes:
                        break
                    pool = sorted(slots[key], key=lambda x: x[1].model != "scripted/oracle")
                    eid, rec = pool[0] if rng.random() < skill or len(pool) == 1 else pool[1]
                    task = EpisodeId.parse(eid).task
                    task_id = f"{task.id}-r{copy:03d}"
                    new = str(EpisodeId(model, TaskKey(task.benchmark, task.domain, task.lang,
                                                       task_id), rec.trial))
                    row = rows[eid]
                    store.episode_started(run_id, new, model=model, benchmark=rec.benchmark,
                                          domain=rec.domain, task_id=task_id,
                                          lang=row["lang"] or "en", trial=rec.trial)
                    for ev in journals[eid]:
                        store.event(run_id, new, ev["seq"], ev["kind"], ev["payload"])
                    store.episode_finished(new, msgspec.structs.replace(
                        rec, model=model, task_id=task_id))
                    for j in by_episode.get(eid, []):
                        store.judgment(run_id, new, judge=j["judge"], method=j["method"],
                                       passed=j["passed"], score=j["score"],
                                       details=j["details"])
                        for ev in judge_journals[eid, j["judge"], j["method"]]:
                            store.event(run_id, judge_journal_id(j["judge"], j["method"], new),
                                        ev["seq"], ev["kind"], ev["payload"])
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
    app = build_app([path])
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
                async with http.get(base + name, params={"store": sid, "run": run_id,
                                                         **{k: str(v) for k, v in params.items()}}) as r:
                    assert r.status == 200, await r.text()
                    return await r.json()

            async def timed(key: str, *calls: tuple[str, dict]) -> list[dict]:
                t = time.perf_counter()
                results = [await get(name, **params) for name, params in calls]
                out.setdefault(key, []).append((time.perf_counter() - t) * 1000)
                return results

            for _ in range(repeats):
                _, summary, first = await timed(
                    "first_page", ("stores", {}), ("summary", {}), ("episodes", {"page": 0}))
            assert first["total"] >= 1
            ids = []
            rng = random.Random(0)
            for _ in range(repeats):
                page = rng.randrange(max(1, first["total"] // 50))
                listed = await get("episodes", page=page)
                ids.append(rng.choice(listed["rows"])["episode_id"])
            for eid in ids:
                episode, _ = await timed("episode_page", ("episode", {"id": eid}),
                                         ("same-task", {"id": eid}))
                assert episode["messages"]
            # another judge's leaderboard: computed on first request, then kept
            other = summary["pairs"][1]
            for _ in range(repeats):
                await timed("other_judge_summary", ("summary", {
                    "judge": other["judge"], "method": other["method"]}))
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
            built = {"run_id": s.latest_run_id(), "episodes": len(s.episode_status(
                s.latest_run_id())), "generate_s": None}
    else:
        seed = tmp / "seed.sqlite"
        if not seed.exists():
            seed_store(seed)
        built = grow(seed, store, episodes, opts.models)
    t = time.perf_counter()
    prepare_indexes([store], lambda line: print(line, file=sys.stderr))
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
