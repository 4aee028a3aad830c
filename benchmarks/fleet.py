"""Fleet: one model behind several replicas or keys; prefill saved, balance, losing a replica.

Replicas are reference servers in processes of their own (``sweepbench serve --cache-entries
N --latency L``), each with a finite simulated prefix cache (an LRU of message-boundary
prefixes). The agent, ``scripted/noisy:0.3``, is one endpoint listing the replicas
(``base_urls``); the user, ``scripted/user``, is on the sweep's built-in server. The default
benchmark set, ``--trials`` trials, ``--concurrency`` C in flight; every sweep in a child
process of its own, on a fresh store, with fresh replicas (empty caches). Each way in (a
replica) admits at most 0.6 C requests at once (``max_concurrency``: what one replica can
batch), so a replica loaded beyond the bound queues.

1. **Cache** (``--caches``, per replica): ``round_robin`` (each request to the next replica)
   against ``affinity`` (an episode and its task's trials on one replica, bounded loads), the
   two back to back in each of ``--runs`` repetitions. ``uncached_ratio_vs_round_robin``:
   uncached (prefilled) agent prompt tokens, affinity over round robin (medians); per cache
   size and the worst over sizes. ``wall_ratio_vs_round_robin``: sweep wall time, the same
   way. ``max_load_ratio``: the largest replica's mean requests in flight (the sum of its
   calls' wall time over the sweep's) over the mean of the replicas, worst over the affinity
   sweeps. ``tasks_split``: tasks whose calls went to both replicas, the most over the
   affinity sweeps (37 tasks in the default set).
2. **Kill** (affinity, the first cache size, ``--kill-latency``, ``--kill-trials``: a sweep
   long enough for a replica to start again within it): a calm sweep, then again with replica 0
   stopped once 20% of a calm sweep's agent calls are journaled and started again on its port
   at once (a replica takes seconds to start). ``failed_episodes_replica_
   down``: episodes ended in error; ``report_equal``: its report (leaderboards, no timing
   profile) equals the calm sweep's; ``readmitted_calls``: calls replica 0 answered after it
   came back.
3. **Keys**: one server enforcing ``--rpm`` R per key; the agent endpoint lists three keys
   (``api_key_envs``), each with ``rpm = R``. ``keys_rate_ratio``: agent calls per minute
   over the first 70% of them (from 2 s in: the buckets' initial burst left out) over 3R;
   ``keys_share_429``: requests answered 429 over all agent requests.

Targets (the fleet issue): uncached <= 0.75 of round robin's at every size, wall <= 1.05x,
max load <= 1.2x the mean; 0 failed episodes, the same report, the replica taken back; keys at
>= 0.9 x 3R with <= 1% 429s. One JSON object last; ``--quick``: one repetition.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from throughput import free_port, measure, timed_sweep

AGENT = "scripted/noisy:0.3"
KEYS = ("FLEET_BENCH_KEY_1", "FLEET_BENCH_KEY_2", "FLEET_BENCH_KEY_3")
REPO = Path(__file__).resolve().parent.parent


def start_replica(port: int, *, latency: float, cache: int = 200_000,
                  rpm: int | None = None) -> subprocess.Popen:
    """``sweepbench serve`` on ``port`` in a process of its own, once it answers."""
    cmd = [sys.executable, "-m", "sweepbench.cli", "serve", "--port", str(port), "--latency",
           str(latency), "--cache-entries", str(cache)] + (["--rpm", str(rpm)] if rpm else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=REPO)
    for _ in range(1200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1).read()
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"replica on port {port} exited ({proc.returncode})")
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"replica on port {port} did not start")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def child(spec: dict) -> dict:
    """Run one sweep in this process; what it cost, from its store."""
    from sweepbench.config import load_config

    agent = {"name": AGENT, "routing": spec.get("routing", "affinity"), "hedge": False,
             "max_concurrency": spec["way_cap"], "timeout_s": 600.0,
             "breaker_cooldown_s": 0.5, "load_factor": spec.get("load_factor", 1.2),
             **spec["ways"]}
    cfg = load_config(None, {
        "models": [AGENT], "user_model": "scripted/user", "trials": spec["trials"],
        "max_concurrency": spec["concurrency"], "judge_models": [],
        "endpoints": [agent, {"name": "scripted/user", "max_concurrency": 100000,
                              "hedge": False}]})
    store = Path(spec["store"])
    _, wall, t0 = timed_sweep(cfg, store)
    from sweepbench.store.codec import register

    db = sqlite3.connect(store)
    register(db)  # sb_json: compressed payloads as JSON text
    calls = db.execute(
        "SELECT json_extract(p, '$.usage.prompt_tokens'), "
        "json_extract(p, '$.usage.cached_prompt_tokens'), "
        "json_extract(p, '$.replica'), json_extract(p, '$.wall_s'), "
        "json_extract(p, '$.statuses'), ts FROM (SELECT sb_json(payload) AS p, ts FROM events "
        "WHERE kind = 'model_call' AND journal = '' AND endpoint = ? LIMIT -1 OFFSET 0)",
        (AGENT,)).fetchall()
    errors = db.execute("SELECT count(*) FROM episodes WHERE termination = 'error'"
                        ).fetchone()[0]
    # tasks whose agent calls went to more than one replica (their trials' prefixes split)
    split = db.execute(
        "SELECT count(*) FROM (SELECT ep.domain, ep.task_id FROM events e JOIN episodes ep "
        "ON ep.episode_key = e.episode_key WHERE e.kind = 'model_call' AND e.journal = '' "
        "AND e.endpoint = ? GROUP BY ep.domain, ep.task_id "
        "HAVING count(DISTINCT json_extract(e.payload, '$.replica')) > 1)", (AGENT,)
    ).fetchone()[0]
    db.close()
    busy: dict[str, float] = {}
    share: dict[str, int] = {}
    for _, _, replica, call_wall, _, _ in calls:
        busy[replica] = busy.get(replica, 0.0) + (call_wall or 0.0)
        share[replica] = share.get(replica, 0) + 1
    loads = [b / wall for b in busy.values()]
    requests = [s for *_, statuses, _ in calls for s in json.loads(statuses or "[0]")]
    times = sorted(ts for *_, ts in calls)
    start = (min(times) if times else t0) + 2.0  # after the buckets' initial burst
    window = [t for t in times[:int(len(times) * 0.7)] if t >= start]
    return {
        "wall_s": wall, "errors": errors, "calls": len(calls), "tasks_split": split,
        "prompt": sum(p or 0 for p, *_ in calls),
        "uncached": sum((p or 0) - (c or 0) for p, c, *_ in calls),
        "calls_by_replica": share,
        "max_load_ratio": max(loads) / (sum(loads) / len(loads)) if loads else 0.0,
        "calls_per_min": 60 * len(window) / max(window[-1] - start, 1e-9) if window else 0.0,
        "share_429": sum(s == 429 for s in requests) / max(len(requests), 1),
    }


def report_of(store: str) -> dict:
    from sweepbench.results.report import build_report
    from sweepbench.store.runstore import RunStore

    with RunStore(store) as s:
        report = build_report(s, profile=False)
    # what describes the run (its id, times, the replicas' ports), not its results
    return {k: v for k, v in report.items()
            if k not in ("stores", "run", "run_id", "runs", "configuration")}


class Replicas:
    """Fresh replica processes for one sweep."""

    def __init__(self, n: int, **opts) -> None:
        self.ports = [free_port() for _ in range(n)]
        self.opts = opts
        self.procs = [start_replica(p, **opts) for p in self.ports]

    @property
    def urls(self) -> list[str]:
        return [f"http://127.0.0.1:{p}/v1" for p in self.ports]

    def close(self) -> None:
        for proc in self.procs:
            stop(proc)


def cache_sweeps(opts, tmp: str, base: dict) -> dict:
    """Point 1: round robin against affinity at each cache size, back to back."""
    rows: dict = {}
    for r in range(opts.runs):
        for cache in opts.caches:
            for routing in ("round_robin", "affinity"):
                reps = Replicas(2, latency=opts.latency, cache=cache)
                try:
                    out = measure(script=__file__, spec={
                        **base, "name": f"{routing}-{cache}-{r}", "routing": routing,
                        "store": f"{tmp}/{routing}-{cache}-{r}.sqlite",
                        "ways": {"base_urls": reps.urls}})
                finally:
                    reps.close()
                rows.setdefault((cache, routing), []).append(out)
                print(routing, cache, r, json.dumps(out), file=sys.stderr)
    per_size = {}
    for cache in opts.caches:
        rr, aff = rows[cache, "round_robin"], rows[cache, "affinity"]
        per_size[str(cache)] = {
            "uncached_ratio_vs_round_robin": round(statistics.median(
                a["uncached"] / b["uncached"] for a, b in zip(aff, rr)), 4),
            "wall_ratio_vs_round_robin": round(statistics.median(
                a["wall_s"] / b["wall_s"] for a, b in zip(aff, rr)), 4),
            "cached_share": {k: round(1 - statistics.median(x["uncached"] / x["prompt"]
                                                            for x in rows[cache, k]), 4)
                             for k in ("round_robin", "affinity")},
            "max_load_ratio": round(max(a["max_load_ratio"] for a in aff), 4),
            "calls_by_replica": aff[-1]["calls_by_replica"],
            "tasks_split": max(a["tasks_split"] for a in aff),
            "wall_s": {k: round(statistics.median(x["wall_s"] for x in rows[cache, k]), 2)
                       for k in ("round_robin", "affinity")},
        }
    return per_size


def agent_calls(store: str) -> int:
    """Agent calls a sweep in progress has journaled (0 before its store exists)."""
    if not Path(store).exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            return db.execute("SELECT count(*) FROM events WHERE kind = 'model_call' AND "
                              "endpoint = ?", (AGENT,)).fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:  # not created yet
        return 0


def kill_sweep(opts, tmp: str, base: dict, cache: int) -> dict:
    """Point 2: a calm sweep, then the same with replica 0 stopped and started again."""
    stores, seen = {}, {}
    revived_at = 0.0
    for kind in ("calm", "killed"):
        reps = Replicas(2, latency=opts.kill_latency, cache=cache)
        store = stores[kind] = f"{tmp}/kill-{kind}.sqlite"
        spec = {**base, "name": kind, "store": store, "ways": {"base_urls": reps.urls},
                "trials": opts.kill_trials}
        proc = subprocess.Popen([sys.executable, __file__, "--child", json.dumps(spec)],
                                stdout=subprocess.PIPE, text=True)
        try:
            if kind == "killed":
                total = seen["calm"]["calls"]
                while agent_calls(store) < 0.2 * total and proc.poll() is None:
                    time.sleep(0.05)
                stop(reps.procs[0])  # killed at 20% of the calls: it starts again at once
                reps.procs[0] = start_replica(reps.ports[0], latency=opts.kill_latency, cache=cache)
                revived_at = time.time()
                killed_at_share = agent_calls(store) / total
            seen[kind] = json.loads(proc.communicate()[0].strip().splitlines()[-1])
        finally:
            reps.close()
    from sweepbench.store.codec import register

    db = sqlite3.connect(stores["killed"])
    register(db)
    back = db.execute("SELECT count(*) FROM events WHERE kind = 'model_call' AND "
                      "json_extract(sb_json(payload), '$.replica') = ? AND ts > ?",
                      (reps.urls[0], revived_at)).fetchone()[0]
    db.close()
    return {"failed_episodes_replica_down": seen["killed"]["errors"],
            "failed_episodes_calm": seen["calm"]["errors"],
            "report_equal": report_of(stores["calm"]) == report_of(stores["killed"]),
            "readmitted_calls": back, "revived_at_call_share": round(killed_at_share, 3),
            "kill_wall_s": {k: round(v["wall_s"], 2) for k, v in seen.items()}}


def keys_sweep(opts, tmp: str, base: dict) -> dict:
    """Point 3: three keys of RPM R each on one server that limits per key."""
    reps = Replicas(1, latency=opts.latency, rpm=opts.rpm)
    env = {**os.environ, **{k: f"bench-secret-{i}" for i, k in enumerate(KEYS)}}
    try:
        out = measure(script=__file__, env=env, spec={
            **base, "name": "keys", "store": f"{tmp}/keys.sqlite", "way_cap": 256,
            "ways": {"base_url": reps.urls[0], "api_key_env": KEYS[0],
                     "api_key_envs": list(KEYS[1:]), "rpm": opts.rpm}})
    finally:
        reps.close()
    return {"keys_rate_ratio": round(out["calls_per_min"] / (3 * opts.rpm), 4),
            "keys_share_429": round(out["share_429"], 4), "keys_calls": out["calls"],
            "keys_calls_by_key": out["calls_by_replica"], "keys_errors": out["errors"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one repetition")
    ap.add_argument("--runs", type=int, help="repetitions of the cache sweeps (default 3)")
    ap.add_argument("--caches", default="1000,500,250", help="cache entries per replica")
    ap.add_argument("--concurrency", type=int, default=256, help="C (default 256)")
    ap.add_argument("--trials", type=int, default=4)
    ap.add_argument("--latency", type=float, default=0.3, help="replica latency, seconds")
    ap.add_argument("--kill-latency", type=float, default=0.3,
                    help="replica latency of the kill sweeps (long enough to see it return)")
    ap.add_argument("--kill-trials", type=int, default=16,
                    help="trials of the kill sweeps (a replica takes seconds to start again)")
    ap.add_argument("--rpm", type=int, default=None,
                    help="R per key (default 600: a sweep of about 40 s; quick 1200)")
    ap.add_argument("--load-factor", type=float, default=1.2,
                    help="affinity's bound: no replica above this x the mean load")
    ap.add_argument("--parts", default="cache,kill,keys")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.child:
        print(json.dumps(child(json.loads(opts.child))))
        return
    opts.runs = opts.runs or (1 if opts.quick else 3)
    opts.rpm = opts.rpm or (1200 if opts.quick else 600)
    opts.caches = [int(c) for c in opts.caches.split(",")]
    parts = opts.parts.split(",")
    tmp = tempfile.mkdtemp(prefix="sweepbench-fleet-")
    base = {"trials": opts.trials, "concurrency": opts.concurrency,
            "load_factor": opts.load_factor,
            "way_cap": max(1, int(0.6 * opts.concurrency))}
    load = [os.getloadavg()[0]]
    result: dict = {"size": "quick" if opts.quick else "full", "runs": opts.runs,
                    "concurrency": opts.concurrency, "trials": opts.trials,
                    "latency_s": opts.latency, "caches": opts.caches, "rpm_per_key": opts.rpm,
                    "load_factor": opts.load_factor}
    if "cache" in parts:
        sizes = cache_sweeps(opts, tmp, base)
        result["uncached_ratio_vs_round_robin"] = max(
            s["uncached_ratio_vs_round_robin"] for s in sizes.values())
        result["wall_ratio_vs_round_robin"] = max(
            s["wall_ratio_vs_round_robin"] for s in sizes.values())
        result["max_load_ratio"] = max(s["max_load_ratio"] for s in sizes.values())
        result["by_cache"] = sizes
    if "kill" in parts:
        result.update(kill_sweep(opts, tmp, base, opts.caches[0]))
    if "keys" in parts:
        result.update(keys_sweep(opts, tmp, base))
    load.append(os.getloadavg()[0])
    result["load_1min"] = [round(x, 2) for x in load]
    result["targets"] = {"uncached_ratio_vs_round_robin": "<= 0.75",
                         "wall_ratio_vs_round_robin": "<= 1.05", "max_load_ratio": "<= 1.2",
                         "failed_episodes_replica_down": "0", "report_equal": "true",
                         "keys_rate_ratio": ">= 0.9", "keys_share_429": "<= 0.01"}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
