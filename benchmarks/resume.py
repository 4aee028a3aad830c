"""Resume under SIGKILL: a sweep killed at 5 random points and resumed each time.

The sweep runs as a subprocess (`sweepbench run`) against a reference server that lives in this
process, so the server's view survives the kills. The server computes each request's journal
hash (the same hash the run store records for every model call), so the benchmark can tell a
*recorded* call that was requested again (a bug: paid twice) from a call that was in flight
when the process died (never recorded, so legitimately requested again).

Compared with an uninterrupted run of the same sweep: identical final metrics and transcripts,
recorded calls repeated, SQLite integrity_check. Prints one JSON object last.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import msgspec

from sweepbench.benchmarks.doubles import scripted_models
from sweepbench.results.report import build_report
from sweepbench.store.codec import register
from sweepbench.store.runstore import RunStore
from sweepbench.runner.journal import _RequestHasher
from sweepbench.devserver.server import ReferenceServer

MODELS = ["scripted/oracle", "scripted/noisy:0.3"]


def config_text(url: str, trials: int, concurrency: int) -> str:
    lines = [f"models = {json.dumps(MODELS)}", f"trials = {trials}",
             f"max_concurrency = {concurrency}"]
    for name in [*MODELS, "scripted/user"]:
        lines += ["[[endpoints]]", f'name = "{name}"', f'base_url = "{url}"',
                  "max_concurrency = 100000", "max_retries = 10"]
    return "\n".join(lines) + "\n"


class LoggingResolver:
    """Serves the scripted models and logs (segment, episode, journal hash) per request."""

    def __init__(self) -> None:
        self.segment = 0
        self.served: list[tuple[int, str, str]] = []

    def __call__(self, name: str):
        policy = scripted_models()(name)
        if policy is None:
            return None

        def logged(req):
            episode = (req.sweepbench or {}).get("episode", "")
            role = (req.sweepbench or {}).get("role", "")
            self.served.append((self.segment, f"{episode}#{role}", _RequestHasher().digest(req)))
            return policy(req)

        return logged


def recorded_calls(store_path: Path) -> set[tuple[str, str]]:
    """(episode#role, request hash) of every model call the store has recorded."""
    if not store_path.exists():
        return set()
    db = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
    register(db)  # sb_json: compressed payloads as JSON text
    try:
        rows = db.execute("SELECT e.label, sb_json(v.payload) FROM events v JOIN episodes e USING "
                          "(episode_key) WHERE v.kind = 'model_call' AND v.journal = ''").fetchall()
    finally:
        db.close()
    out = set()
    for eid, payload in rows:
        p = json.loads(payload)
        out.add((f"{eid}#{p['role']}", p["request_hash"]))
    return out


def metrics(report: dict) -> dict:
    """Each benchmark's leaderboard numbers per model (not the timing profile, which differs
    run to run)."""
    keys = ("tasks", "episodes", "errors", "avg", "pass_at_k", "pass_hat_k", "state",
            "unjudged", "domains")
    return {b: {m: {k: (v.get(k) if k != "domains" else
                        {d: (ds["avg"], ds["pass_hat_k"]) for d, ds in v["domains"].items()})
                    for k in keys} for m, v in bs["models"].items()}
            for b, bs in report["benchmarks"].items()}


def transcripts(store: RunStore, run_id: str | None = None) -> dict[str, bytes]:
    return {f"{r.model}|{r.task_id}|{r.trial}": msgspec.json.encode(r.messages)
            for r in store.episodes(run_id)}


async def run_cli(args: list[str], cwd: Path) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sweepbench.cli", *args, cwd=cwd, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def main_async(opts: argparse.Namespace) -> dict:
    rng = random.Random(opts.seed)
    resolver = LoggingResolver()
    tmp = Path(tempfile.mkdtemp(prefix="sweepbench-resume-"))
    async with ReferenceServer(resolver, latency_s=opts.latency) as server:
        cfg = tmp / "sweep.toml"
        cfg.write_text(config_text(server.url, opts.trials, opts.concurrency))
        base = ["run", "--config", str(cfg), "--no-progress"]

        t0 = time.perf_counter()
        ref = await run_cli([*base, "--out", str(tmp / "ref.sqlite")], tmp)
        assert await ref.wait() == 0, "uninterrupted run failed"
        ref_s = time.perf_counter() - t0

        store = tmp / "killed.sqlite"
        resolver.segment, kills, recorded_before = 1, 0, [set()]
        while kills < opts.kills:
            proc = await run_cli([*base, "--out", str(store)], tmp)
            await asyncio.sleep(rng.uniform(0.06, 0.14) * ref_s)  # 5 kills well inside one run
            if proc.returncode is not None:
                break  # finished before the kill point: no more kills possible
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
            kills += 1
            recorded_before.append(recorded_calls(store))
            resolver.segment += 1
        proc = await run_cli([*base, "--out", str(store)], tmp)
        assert await proc.wait() == 0, "final resumed run failed"

    # a served request repeats a recorded call if that call was recorded before its segment
    repeated = sum(1 for seg, who, h in resolver.served
                   if seg >= 1 and (who, h) in recorded_before[min(seg - 1, len(recorded_before) - 1)])
    served_after_ref = Counter(seg for seg, _, _ in resolver.served)
    with RunStore(tmp / "ref.sqlite") as a, RunStore(store) as b:
        # every invocation is a run of its own: compare the stores' episodes
        identical = (metrics(build_report(a)) == metrics(build_report(b))
                     and transcripts(a) == transcripts(b))
        needed = sum(r.agent_calls + r.user_calls for r in b.episodes())
    db = sqlite3.connect(store)
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    db.close()
    paid = sum(n for seg, n in served_after_ref.items() if seg >= 1)
    return {
        "kills": kills,
        "repeated_recorded_calls": repeated,
        "identical": identical,
        "integrity_ok": integrity == "ok",
        "calls_needed": needed,
        "calls_paid": paid,
        "lost_in_flight": paid - needed - repeated,
        "uninterrupted_s": round(ref_s, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller sweep (under a minute)")
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=None, help="repetitions (default 3, quick 1)")
    opts = ap.parse_args()
    opts.trials, opts.concurrency, opts.latency = (8, 16, 0.03) if opts.quick else (24, 32, 0.03)
    runs = opts.runs or (1 if opts.quick else 3)
    results = []
    for i in range(runs):
        opts.seed += i
        results.append(asyncio.run(main_async(opts)))
        print(json.dumps(results[-1]), file=sys.stderr)
    worst = max(results, key=lambda r: (r["repeated_recorded_calls"], not r["identical"]))
    summary = {**worst, "runs": runs,
               "identical": all(r["identical"] for r in results),
               "integrity_ok": all(r["integrity_ok"] for r in results),
               "kills": min(r["kills"] for r in results)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
