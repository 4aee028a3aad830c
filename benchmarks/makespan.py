"""Makespan: how close does a whole sweep, ramp-down included, come to the ideal C / L?

The default mixed benchmark set of ``sweepbench run`` (the VitaBench sample tasks of delivery,
in-store and OTA, and the generated T1 split flight+hotel+bar: episodes of 5 to 25 model
calls) with scripted/oracle and scripted/user, against a reference server in its own process
at a fixed latency L, at most C episodes in flight. An episode has one call in flight at a
time, so the ideal is C / L model calls per second with every slot busy from the first
second to the last.

Each sweep runs in a child process of its own, on a fresh store, once per order in every
repetition (the orders of one repetition back to back, so they share the machine's load):

- ``longest``: the default (``order = "longest"``, runner/schedule.py);
- ``file``: trial-major in file order (``--order file``), what sweeps did before;
- ``per_trial``: longest first inside each trial alone (bands of one trial): is that enough?

Per order: ``ratio`` = model calls / the whole sweep's wall time (``run_sweep`` from its call
to its return: loading tasks, ordering, every episode, judging, the last flush) / (C / L);
``span_ratio`` the same over the first episode's start to the last one's end; ``steady_ratio``
over the time every slot can be busy (first start to last start: what client CPU and the
event loop allow, the ceiling of the other two); ``ramp_down_s`` from the last start to the
last finish; ``startup_s`` before the first start; ``schedule_ratio`` what the order alone
allows: the run's own episodes (their call counts) replayed in the order they started on C
slots with every call taking exactly L (no CPU cost), total calls over C x that makespan.
Medians of --runs; one JSON object last.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

from throughput import measure, start_server, timed_sweep

ORDERS = ("longest", "file", "per_trial")


def child(spec: dict) -> dict:
    """Run one sweep in this process and measure it (called in a fresh interpreter)."""
    from sweepbench.config import load_config
    from sweepbench.runner import schedule

    if spec["order"] == "per_trial":
        schedule.BAND_SLOTS = 0  # every trial a band of its own
    endpoint = {"base_url": spec["url"], "max_concurrency": 100000, "timeout_s": 600.0}
    names = [*spec["models"], "scripted/user"]
    cfg = load_config(None, {
        "models": spec["models"], "user_model": "scripted/user", "trials": spec["trials"],
        "max_concurrency": spec["concurrency"],
        "order": "file" if spec["order"] == "file" else "longest",
        "endpoints": [{"name": n, **endpoint} for n in names],
    })
    store = Path(spec["dir"]) / f"{spec['name']}.sqlite"
    cpu, wall, t0 = timed_sweep(cfg, store)
    db = sqlite3.connect(store)
    calls = db.execute("SELECT count(*) FROM events WHERE kind = 'model_call' AND journal = ''"
                       ).fetchone()[0]
    first, last_start, last_end, episodes = db.execute(
        "SELECT min(started_at), max(started_at), max(finished_at), count(*) FROM episodes "
        "WHERE status = 'done'").fetchone()
    lengths = [n for (n,) in db.execute(
        "SELECT count(*) FROM episodes e JOIN events v ON v.episode_key = e.episode_key "
        "WHERE v.kind = 'model_call' AND v.journal = '' GROUP BY e.episode_key "
        "ORDER BY e.started_at, e.episode_key")]
    steady = db.execute("SELECT count(*) FROM events WHERE kind = 'model_call' AND journal = '' "
                        "AND ts <= ?", (last_start,)).fetchone()[0]
    db.close()
    return {"calls": calls, "episodes": episodes, "cpu_s": cpu, "wall_s": wall,
            "calls_per_s": calls / wall, "span_calls_per_s": calls / (last_end - first),
            "steady_calls_per_s": steady / max(last_start - first, 1e-9),
            "startup_s": first - t0, "ramp_down_s": last_end - last_start,
            "schedule_ratio": schedule_ratio(lengths, spec["concurrency"])}


def schedule_ratio(lengths: list[int], slots: int) -> float:
    """Total calls over ``slots`` x the makespan of ``lengths`` started in this order, each on
    the first slot free (a slot runs one call at a time, each call one unit)."""
    free = [0] * slots
    for n in lengths:
        heapq.heappush(free, heapq.heappop(free) + n)
    return sum(lengths) / (slots * max(free))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="fewer trials (32: 1,184 episodes, about 15 s a sweep on a quiet machine) "
                         "at the same C and L")
    ap.add_argument("--runs", type=int, default=3, help="repetitions (default 3)")
    ap.add_argument("--trials", type=int, help="trials per task (default 64: 2,368 episodes; quick 32)")
    ap.add_argument("--concurrency", type=int, default=256, help="C (default 256)")
    ap.add_argument("--latency", type=float, default=0.2, help="L in seconds (default 0.2)")
    ap.add_argument("--model", action="append", dest="models",
                    help="agent model (repeatable; default scripted/oracle)")
    ap.add_argument("--orders", default=",".join(ORDERS),
                    help=f"orders to measure, comma-separated (default {','.join(ORDERS)})")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.child:
        print(json.dumps(child(json.loads(opts.child))))
        return

    C, L = opts.concurrency, opts.latency
    trials = opts.trials or (32 if opts.quick else 64)
    orders = [o for o in opts.orders.split(",") if o]
    tmp = tempfile.mkdtemp(prefix="sweepbench-makespan-")
    server, url = start_server(L)
    rows: dict[str, list[dict]] = {o: [] for o in orders}
    load = [os.getloadavg()[0]]
    try:
        for r in range(opts.runs):
            for order in orders:
                rows[order].append(measure(script=__file__, spec={
                    "url": url, "dir": tmp, "name": f"{order}-{r}", "trials": trials,
                    "concurrency": C, "order": order,
                    "models": opts.models or ["scripted/oracle"]}))
                print(order, json.dumps(rows[order][-1]), file=sys.stderr)
            load.append(os.getloadavg()[0])
    finally:
        server.terminate()
        server.wait()

    ideal = C / L

    def med(order: str, field: str) -> float:
        return statistics.median(x[field] for x in rows[order])

    result: dict = {"size": "quick" if opts.quick else "full", "concurrency": C,
                    "latency_s": L, "ideal_calls_per_s": ideal, "runs": opts.runs,
                    "trials": trials, "episodes": int(med(orders[0], "episodes")),
                    "calls": int(med(orders[0], "calls")),
                    "load_1min": [round(x, 2) for x in load]}
    for order in orders:
        result[f"ratio_{order}"] = round(med(order, "calls_per_s") / ideal, 3)
    for order in orders:
        result[f"schedule_ratio_{order}"] = round(med(order, "schedule_ratio"), 3)
        result[f"span_ratio_{order}"] = round(med(order, "span_calls_per_s") / ideal, 3)
        result[f"steady_ratio_{order}"] = round(med(order, "steady_calls_per_s") / ideal, 3)
        result[f"ramp_down_s_{order}"] = round(med(order, "ramp_down_s"), 2)
        result[f"startup_s_{order}"] = round(med(order, "startup_s"), 2)
        result[f"wall_s_{order}"] = round(med(order, "wall_s"), 2)
        result[f"cpu_us_per_call_{order}"] = round(
            statistics.median(x["cpu_s"] / x["calls"] * 1e6 for x in rows[order]), 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
