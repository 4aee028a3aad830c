"""Hung requests: does a sweep against an endpoint that sometimes never answers finish on time?

The same sweep (scripted/oracle + scripted/noisy:0.3 on the built-in VitaBench delivery
samples, ``--max-concurrency`` episodes wide, reference latency ``--latency``) runs against the
reference server three times per round, in one invocation:

- ``clean``: no faults.
- ``faults``: the standard fault mix (``--faults``, default
  ``429=0.1,500=0.05,timeout=0.02,reset=0.01,garbage=0.01``; injected 429s carry
  ``Retry-After: --fault-retry-after`` as in ``benchmarks/faults.py``; the ``timeout`` fault
  holds a request 300 s).
- ``hung``: the standard mix plus hung requests (``--hang``, default ``hang=0.01``: no byte,
  ever).

Every endpoint setting is the default (``timeout_s`` 120, the default time-to-first-byte
policy, hedging and ramp-down backups at their defaults for the endpoint: on, as scripted
endpoints have no prices; slot lending on, as by default). ``--compare-backups`` adds a run
per round, ``hung`` with ``backups = 0`` (the baseline configuration: hedging alone), and
``--compare-lending`` one with ``lend_slots = false`` (episodes keep their slots while they
sleep before a retry); each prints its ratio too.

Each round draws its faults and latencies with a seed of its own (``--seed`` + round; the
three runs of a round share it), so the medians are over fault draws, not over the timing
noise of one draw: a single unlucky request (a hang whose hedges hang too waits out the 10 s
first-byte floor) made one draw's hung run a sixth longer at ``--trials 32``.

Per run: wall time, episodes lost, whether the report's metrics and every trajectory equal the
first clean run's (as ``benchmarks/faults.py`` checks), and from the report's profile the hung
(TTFB-abandoned) requests, the hedges sent and won (ramp-down backups included), and the extra
requests hedging cost (as a share of the calls). Ratios are per round (same invocation),
medians over ``--rounds``: hung / clean (target <= 1.3), faults / clean (what the standard mix costs by itself) and
hung / faults (what the hung requests add). Also: results identical, 0 lost, and per run the
seconds the journaled calls spent queued on the endpoint's limits and in back-off, and their
whole wall time (each from its first send to its answer), summed over calls, and the slots'
occupancy (the episodes' summed durations over C x the first start to the last finish). The
wall ratio is the product of two: ``call_wall_ratio`` (hung / clean summed call time: what
the faults cost per call, whatever the order) and clean / hung occupancy (what the longer,
more variable episodes lose to the ramp-down). With slot lending an episode asleep before a
retry is running but holds no slot, so the occupancy can pass what the slots alone allow (up
to 1.25): it then also says how much of the sleeping the lent slots hid. Prints one JSON
object last.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from faults import _metrics, _trajectory_digest  # noqa: E402  (the same checks)

from sweepbench.config import Endpoint, SweepConfig  # noqa: E402
from sweepbench.results.report import build_report  # noqa: E402
from sweepbench.store.runstore import RunStore  # noqa: E402
from sweepbench.runner import build as build_mod  # noqa: E402
from sweepbench.runner import sweep as sweep_mod  # noqa: E402

STANDARD = "429=0.1,500=0.05,timeout=0.02,reset=0.01,garbage=0.01"
HANG = "hang=0.01"
_SERVERS: list[Any] = []
_SERVER_OPTIONS: dict[str, Any] = {}
_make_server = build_mod.reference_server


def _server(cfg: SweepConfig, **options: Any) -> Any:
    server = _make_server(cfg, **options, **_SERVER_OPTIONS)
    _SERVERS.append(server)
    return server


async def run_once(cfg: SweepConfig, store_path: Path) -> dict[str, Any]:
    _SERVERS.clear()
    t0 = time.perf_counter()
    outcome = await sweep_mod.run_sweep(cfg, store_path)
    wall = time.perf_counter() - t0
    with RunStore(store_path) as store:
        report = build_report(store, outcome.run_id)
        rows = store.episode_rows(outcome.run_id)
        digest = _trajectory_digest(store, outcome.run_id)
        waits = _time_split(store, rows, cfg.max_concurrency)
    planned = outcome.episodes + outcome.skipped
    finished = sum(r["status"] == "done" for r in rows)
    stalls = {"hung": 0, "hedged": 0, "hedge_wins": 0}
    calls = 0
    for entry in report["models"].values():
        profile = entry.get("profile") or {}
        calls += profile.get("model_calls") or 0
        for k in stalls:
            stalls[k] += (profile.get("stalls") or {}).get(k, 0)
    stats = _SERVERS[0].stats() if _SERVERS else {}
    return {"wall_s": round(wall, 2), "episodes": planned, "lost": planned - finished,
            "calls": calls, **stalls,
            "hedge_extra_requests_share": round(stalls["hedged"] / max(1, calls), 4),
            **waits, "server_requests": sum(stats.get("requests", {}).values()),
            "server_faults": stats.get("faults", {}),
            "_metrics": _metrics(report["models"]), "_digest": digest}


def _time_split(store: RunStore, rows: list[dict[str, Any]], slots: int) -> dict[str, float]:
    """Where a fault mix's time goes, summed over the journaled model calls: seconds queued on
    the endpoint's limits (pauses, the in-flight cap), asleep between attempts (back-off,
    Retry-After), and each call's whole wall time from its first send to its answer (failed
    attempts, waits and hedge delays included: what the faults cost whatever the order).
    ``occupancy``: the episodes' summed durations over ``slots`` x the first start to the last
    finish, i.e. how much of the sweep the slots were busy (what the order and ramp-down
    lose; with slot lending, sleepers on lent slots count too)."""
    queued = backoff = call_wall = 0.0
    for row in rows:
        for event in store.events(row["episode_key"], kind="model_call"):  # not the judges
            queued += event["payload"].get("queue_wait_s") or 0.0
            backoff += event["payload"].get("backoff_s") or 0.0
            call_wall += event["payload"].get("wall_s") or 0.0
    spans = [(r["started_at"], r["finished_at"]) for r in rows if r["finished_at"] is not None]
    busy = sum(end - start for start, end in spans)
    span = max(end for _, end in spans) - min(start for start, _ in spans) if spans else 0.0
    return {"queued_s": round(queued, 1), "backoff_s": round(backoff, 1),
            "call_wall_s": round(call_wall, 1),
            "occupancy": round(busy / (slots * span), 3) if span > 0 else 0.0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 trials, 2 rounds")
    ap.add_argument("--trials", type=int, help="trials per (model, task) (default 8; quick 2)")
    ap.add_argument("--rounds", type=int, help="clean + hung pairs (default 3; quick 2)")
    ap.add_argument("--faults", default=STANDARD, help="the standard fault mix")
    ap.add_argument("--hang", default=HANG, help="added to it in the hung run")
    ap.add_argument("--fault-retry-after", type=float, default=0.2,
                    help="Retry-After of injected 429s, s (as benchmarks/faults.py)")
    ap.add_argument("--seed", type=int, default=0,
                    help="the reference server's seed in the first round (round i: seed + i)")
    ap.add_argument("--latency", default="uniform:0.1,0.3", help="reference latency spec")
    ap.add_argument("--max-concurrency", type=int, default=32, help="episodes in flight")
    ap.add_argument("--compare-backups", action="store_true",
                    help="also run the hung mix with ramp-down backups off (backups = 0)")
    ap.add_argument("--compare-lending", action="store_true",
                    help="also run the hung mix with slot lending off (lend_slots = false)")
    args = ap.parse_args()
    trials = args.trials or (2 if args.quick else 8)
    rounds = args.rounds or (2 if args.quick else 3)
    os.environ.pop("SWEEPBENCH_DATA", None)  # the built-in sample tasks, always
    build_mod.reference_server = _server  # type: ignore[assignment]
    _SERVER_OPTIONS["fault_retry_after_s"] = args.fault_retry_after

    models = ["scripted/oracle", "scripted/noisy:0.3"]

    def config(faults: str | None, round_: int, backups: bool = True,
               lend: bool = True) -> SweepConfig:
        # backups off: the scripted endpoints as they are by default (max_retries 6, no
        # in-flight cap of their own), ramp-down backups aside
        endpoints = [] if backups else [
            Endpoint(name=name, backups=0, max_concurrency=1 << 16, max_retries=6)
            for name in (*models, "scripted/user")]
        return SweepConfig(models=models, benchmarks=["vitabench:delivery"], trials=trials,
                           max_concurrency=args.max_concurrency, seed=0,
                           reference_latency=args.latency, reference_faults=faults,
                           reference_seed=args.seed + round_, endpoints=endpoints,
                           lend_slots=lend)

    runs: dict[str, list[dict[str, Any]]] = {"clean": [], "faults": [], "hung": []}
    hung_faults = f"{args.faults},{args.hang}"
    plan: list[tuple[str, str | None, dict[str, bool]]] = [
        ("clean", None, {}), ("faults", args.faults, {}), ("hung", hung_faults, {})]
    if args.compare_backups:
        plan.append(("hung_no_backups", hung_faults, {"backups": False}))
    if args.compare_lending:
        plan.append(("hung_no_lending", hung_faults, {"lend": False}))
    for name, _, _ in plan:
        runs.setdefault(name, [])
    with tempfile.TemporaryDirectory(prefix="sweepbench-hung-") as tmp:
        for i in range(rounds):
            for name, faults, options in plan:
                r = asyncio.run(run_once(config(faults, i, **options),
                                         Path(tmp) / f"{name}{i}.sqlite"))
                runs[name].append(r)
                print(json.dumps({"run": name, "round": i, **{
                    k: v for k, v in r.items() if not k.startswith("_")}}), file=sys.stderr)
    ref = runs["clean"][0]
    every = [r for rs in runs.values() for r in rs]
    for r in every:
        r["identical"] = r["_metrics"] == ref["_metrics"] and r["_digest"] == ref["_digest"]
    ratios = [h["wall_s"] / c["wall_s"] for c, h in zip(runs["clean"], runs["hung"])]
    fratios = [f["wall_s"] / c["wall_s"] for c, f in zip(runs["clean"], runs["faults"])]
    med = lambda key, rs: statistics.median(r[key] for r in rs)  # noqa: E731
    result = {
        "trials": trials, "rounds": rounds, "faults": args.faults, "hang": args.hang,
        "fault_retry_after_s": args.fault_retry_after, "latency": args.latency,
        "max_concurrency": args.max_concurrency, "episodes": ref["episodes"],
        "clean_wall_s": med("wall_s", runs["clean"]),
        "faults_wall_s": med("wall_s", runs["faults"]),
        "hung_wall_s": med("wall_s", runs["hung"]),
        "wall_ratios": [round(x, 3) for x in ratios],
        "wall_ratio_median": round(statistics.median(ratios), 3),
        "faults_only_wall_ratio_median": round(statistics.median(fratios), 3),
        # what the hung requests add on top of the standard mix, same round
        "hung_over_faults_wall_ratio_median": round(statistics.median(
            h["wall_s"] / f["wall_s"] for f, h in zip(runs["faults"], runs["hung"])), 3),
        "lost_episodes": sum(r["lost"] for r in every),
        "identical": all(r["identical"] for r in every),
        "hung_requests_median": med("hung", runs["hung"]),
        "hedges_median": med("hedged", runs["hung"]),
        "hedge_wins_median": med("hedge_wins", runs["hung"]),
        "hedge_extra_requests_share_median": med("hedge_extra_requests_share", runs["hung"]),
        "clean_hedges_median": med("hedged", runs["clean"]),
        # summed over the calls of a run: what the retry/limits policy costs
        "queued_s_median": {k: med("queued_s", rs) for k, rs in runs.items()},
        "backoff_s_median": {k: med("backoff_s", rs) for k, rs in runs.items()},
        # the wall ratio split in two: the calls' own time (what the faults cost, whatever
        # the order) and how busy the slots were (what the order and the ramp-down lose)
        "call_wall_ratio_median": round(statistics.median(
            h["call_wall_s"] / c["call_wall_s"] for c, h in zip(runs["clean"], runs["hung"])), 3),
        "faults_call_wall_ratio_median": round(statistics.median(
            f["call_wall_s"] / c["call_wall_s"] for c, f in zip(runs["clean"], runs["faults"])),
            3),
        "occupancy_median": {k: med("occupancy", rs) for k, rs in runs.items()},
        **{f"{name[5:]}_wall_ratio_median": round(statistics.median(
            h["wall_s"] / c["wall_s"] for c, h in zip(runs["clean"], runs[name])), 3)
           for name, _, options in plan if options},
        **({"no_backups_hedge_extra_requests_share_median": med(
                "hedge_extra_requests_share", runs["hung_no_backups"])}
           if args.compare_backups else {}),
        "server_faults_last": runs["hung"][-1]["server_faults"],
    }
    result["targets_met"] = (result["wall_ratio_median"] <= 1.3 and result["identical"]
                             and result["lost_episodes"] == 0)
    print(json.dumps(result, indent=1))
    return 0 if result["targets_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
