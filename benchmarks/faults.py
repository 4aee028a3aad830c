"""Faults and outages: does a sweep against a misbehaving endpoint lose nothing and change nothing?

One sweep (scripted/oracle + scripted/noisy:0.3 on the built-in VitaBench sample tasks, a
temporary store) runs three times against the reference server:

- ``clean``: no faults; the reference for the final metrics.
- ``faults``: ``--faults`` (default ``429=0.1,500=0.05,timeout=0.02,reset=0.01,garbage=0.01``,
  seeded) on every request.
- ``outage``: no faults, but the endpoint answers 503 for ``--outage START,DURATION`` seconds
  into the sweep (the sweep is slowed by ``--latency`` so the outage falls in mid-sweep).

Measured per run: episodes planned/finished, ``lost`` (missing, or ended in error), whether the
report's metrics and every episode's trajectory (termination, messages, final state, prompt and
completion tokens) equal the clean run's, retries per call (client-side attempts; and server-side
HTTP requests per answered call), the largest attempts of one call, 429s and faults by kind as
the server counted them, wall time. For the outage run also: 503s answered and the number of
calls that were in flight over the outage. ``needed_max_retries``: the fewest retries per call
that would have lost nothing in the faults run (the largest attempts of any call, minus one).

Targets: 0 lost episodes, metrics identical to the clean run; the outage fell inside the
sweep (``outage_spanned``: 503s were answered), and during it no episode fails and retries stay
bounded (``outage_max_attempts`` <= the retry budget + 1).

Until the sweep config carries reference-server settings (see the lead's diff), the server
and the scripted endpoints are configured here by subclassing ``SweepConfig`` and wrapping
``ReferenceServer`` / ``ModelClient`` in ``sweepbench.runner.sweep``. Prints one JSON object
last. ``--quick``: 4 trials (56 episodes a run), under a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

from sweepbench.config import Endpoint, SweepConfig
from sweepbench.errors import ModelError
from sweepbench.results.report import build_report
from sweepbench.store.runstore import RunStore
from sweepbench.runner import build as build_mod
from sweepbench.runner import sweep as sweep_mod
from sweepbench.client.facade import ModelClient
from sweepbench.devserver.faults import parse_outage
from sweepbench.devserver.server import ReferenceServer

DEFAULT_FAULTS = "429=0.1,500=0.05,timeout=0.02,reset=0.01,garbage=0.01"


class BenchConfig(SweepConfig, kw_only=True):
    """A SweepConfig whose scripted endpoints take the benchmark's retry budget and timeout."""

    def endpoint(self, name: str, reference_url: str | None = None) -> Endpoint:
        ep = super().endpoint(name, reference_url)
        if ep.scripted:
            ep = msgspec.structs.replace(ep, max_retries=_SETTINGS["max_retries"],
                                         timeout_s=_SETTINGS["timeout_s"])
        return ep


_SETTINGS: dict[str, Any] = {}
_SERVERS: list[ReferenceServer] = []
_CALLS: list[dict[str, Any]] = []


class RecordingClient(ModelClient):
    """The sweep's client, recording every call's attempts and outcome."""

    async def complete(self, request):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        try:
            result = await super().complete(request)
        except ModelError as err:
            _CALLS.append({"ok": False, "attempts": err.attempts, "t0": t0,
                           "t1": time.perf_counter(), "error": type(err).__name__})
            raise
        _CALLS.append({"ok": True, "attempts": result.attempts, "t0": t0,
                       "t1": time.perf_counter()})
        return result


def _server_factory(resolve, **kwargs):  # type: ignore[no-untyped-def]
    kwargs.update(_SETTINGS["server"])
    if kwargs.get("latency"):
        kwargs.pop("latency_s", None)
    server = ReferenceServer(resolve, **kwargs)
    _SERVERS.append(server)
    return server


def _trajectory_digest(store: RunStore, run_id: str) -> dict[str, str]:
    out = {}
    for rec in store.episodes(run_id):
        key = f"{rec.model}|{rec.domain}|{rec.task_id}|{rec.trial}"
        blob = msgspec.json.encode([
            rec.termination, rec.messages, rec.final_state,
            rec.agent_usage.prompt_tokens, rec.agent_usage.completion_tokens,
            rec.user_usage.prompt_tokens, rec.user_usage.completion_tokens,
        ])
        out[key] = hashlib.sha256(blob).hexdigest()
    return out


_TIMING = ("profile",)  # wall-time and latency statistics differ from run to run by nature


def _metrics(value: Any) -> Any:
    """The report's per-model metrics without timing statistics."""
    if isinstance(value, dict):
        return {k: _metrics(v) for k, v in value.items() if k not in _TIMING}
    if isinstance(value, list):
        return [_metrics(v) for v in value]
    return value


async def run_once(name: str, cfg: SweepConfig, server: dict[str, Any], *, max_retries: int,
                   timeout_s: float, workdir: Path) -> dict[str, Any]:
    _SETTINGS.update(server=server, max_retries=max_retries, timeout_s=timeout_s)
    _SERVERS.clear()
    _CALLS.clear()
    store_path = workdir / f"{name}.sqlite"
    t0 = time.perf_counter()
    outcome = await sweep_mod.run_sweep(cfg, store_path)
    wall = time.perf_counter() - t0
    srv = _SERVERS[0]
    with RunStore(store_path) as store:
        report = build_report(store, outcome.run_id)
        rows = store.episode_rows(outcome.run_id)
        digest = _trajectory_digest(store, outcome.run_id)
        errors = [r.error for r in store.episodes(outcome.run_id) if r.termination == "error"]
    planned = outcome.episodes + outcome.skipped
    finished = sum(r["status"] == "done" for r in rows)
    stats = srv.stats()
    answered = sum(stats["answered"].values())
    http = sum(stats["requests"].values()) + stats["outage_rejected"] + stats["rejected"]
    attempts = [c["attempts"] for c in _CALLS]
    out = {
        "episodes": planned,
        "finished": finished,
        "lost": planned - finished,
        "errors": sorted(Counter(e.split(":")[0] + ": " + e.split(":")[1].strip()
                                 if e and ":" in e else str(e) for e in errors).items())[:5],
        "calls": len(_CALLS),
        "failed_calls": sum(not c["ok"] for c in _CALLS),
        "retries_per_call": round(sum(a - 1 for a in attempts) / max(1, len(attempts)), 4),
        "http_per_answered_call": round(http / max(1, answered), 4),
        "max_attempts": max(attempts, default=0),
        "server": stats,
        "wall_s": round(wall, 2),
        "_metrics": _metrics(report["models"]),
        "_digest": digest,
    }
    if srv.outage is not None:
        start, duration = srv.outage
        # the server's clock started a moment after t0; calls overlapping the window
        over = [c for c in _CALLS if c["t1"] - t0 >= start and c["t0"] - t0 <= start + duration]
        out["outage"] = {
            "start_s": start, "duration_s": duration,
            "answered_503": stats["outage_rejected"],
            "calls_over_outage": len(over),
            "failed_calls_over_outage": sum(not c["ok"] for c in over),
            "max_attempts_over_outage": max((c["attempts"] for c in over), default=0),
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 trials; under a minute")
    ap.add_argument("--trials", type=int, help="trials per (model, task) (default 4 quick, 16)")
    ap.add_argument("--faults", default=DEFAULT_FAULTS)
    ap.add_argument("--seed", type=int, default=0, help="fault seed")
    ap.add_argument("--outage", metavar="START,DURATION",
                    help="503s from START s for DURATION s (default 0.5,3; quick 0.1,1: its "
                         "sweep is over in half a second)")
    ap.add_argument("--latency", default="uniform:0.01,0.03",
                    help="reference latency in the outage run (so the sweep spans the outage)")
    ap.add_argument("--max-retries", type=int, default=6, help="scripted endpoints' budget")
    ap.add_argument("--timeout", type=float, default=1.0, help="client timeout per request, s")
    ap.add_argument("--fault-retry-after", type=float, default=0.2,
                    help="Retry-After of injected 429s, s")
    ap.add_argument("--max-concurrency", type=int, default=64)
    args = ap.parse_args()
    trials = args.trials or (4 if args.quick else 16)
    outage_spec = args.outage or ("0.1,1" if args.quick else "0.5,3")
    os.environ.pop("SWEEPBENCH_DATA", None)  # the built-in sample tasks, always

    build_mod.ReferenceServer = _server_factory  # type: ignore[assignment]
    build_mod.ModelClient = RecordingClient  # type: ignore[misc]
    cfg = BenchConfig(models=["scripted/oracle", "scripted/noisy:0.3"],
                      benchmarks=["vitabench:delivery"], trials=trials,
                      max_concurrency=args.max_concurrency, seed=0)
    common = {"max_retries": args.max_retries, "timeout_s": args.timeout}
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="sweepbench-faults-") as tmp:
        work = Path(tmp)
        runs["clean"] = asyncio.run(run_once("clean", cfg, {}, workdir=work, **common))
        runs["faults"] = asyncio.run(run_once(
            "faults", cfg, {"faults": args.faults, "seed": args.seed, "hang_s": 60.0,
                            "fault_retry_after_s": args.fault_retry_after},
            workdir=work, **common))
        runs["outage"] = asyncio.run(run_once(
            "outage", cfg, {"outage": parse_outage(outage_spec), "latency": args.latency},
            workdir=work, **common))

    clean = runs["clean"]
    summary: dict[str, Any] = {"trials": trials, "faults": args.faults, "seed": args.seed,
                               "max_retries": args.max_retries, "timeout_s": args.timeout}
    for name, r in runs.items():
        r["identical_metrics"] = r["_metrics"] == clean["_metrics"]
        r["identical_trajectories"] = r["_digest"] == clean["_digest"]
        summary[name] = {k: v for k, v in r.items() if not k.startswith("_")}
    faults, outage = runs["faults"], runs["outage"]
    result = {
        **summary,
        "lost_episodes": faults["lost"] + outage["lost"],
        "identical": faults["identical_metrics"] and faults["identical_trajectories"]
        and outage["identical_metrics"] and outage["identical_trajectories"],
        "outage_failed_episodes": outage["lost"],
        "retries_per_call": faults["retries_per_call"],
        "outage_retries_per_call": outage["retries_per_call"],
        "outage_max_attempts": outage.get("outage", {}).get("max_attempts_over_outage"),
        # a sweep over before the outage began would pass the outage checks vacuously
        "outage_spanned": (outage.get("outage", {}).get("answered_503") or 0) > 0,
        "needed_max_retries": faults["max_attempts"] - 1 if faults["lost"] == 0 else None,
        "clean_lost": clean["lost"],
    }
    result["targets_met"] = (result["lost_episodes"] == 0 and result["identical"]
                             and result["outage_spanned"]
                             and (result["outage_max_attempts"] or 0) <= args.max_retries + 1)
    print(json.dumps(result, indent=1, default=str))
    return 0 if result["targets_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
