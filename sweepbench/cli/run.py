"""The commands that run episodes or judgments into a run store: ``run``, ``plan`` (what a run
would do, without running), ``replay`` (every task with the oracle) and ``judge`` (a stored
run judged again).

``run`` keeps its steps apart: the sweep runs, what it did is said (stderr), the report is
built from the store and printed (stdout), and why the sweep stopped short, if it did, is said
and becomes the exit status.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import shlex
import signal
import tempfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from sweepbench.cli.common import (
    BUDGET_EXIT,
    ERRORS_EXIT,
    FAILING_EXIT,
    STUCK_EXIT,
    UNDECIDED_EXIT,
    config_from_args,
    err,
    load_sweep_config,
    open_store,
    option_overrides,
    out,
    say,
    shard_of,
    store_path,
    terminate,
)
from sweepbench.cli.hints import fixes
from sweepbench.cli.judges import sweep_judges
from sweepbench.config import SweepConfig, load_config
from sweepbench.errors import ConfigError
from sweepbench.ids import STATE_JUDGE, JudgeMethod
from sweepbench.results.text import json_text

if TYPE_CHECKING:
    from sweepbench.runner.sweep import SweepOutcome
    from sweepbench.store.runstore import RunStore


def cmd_run(args: argparse.Namespace) -> int:
    from sweepbench.results.report import render

    cfg, out_path = _run_config(args)
    spec = adaptive_spec(args, cfg)
    signal.signal(signal.SIGTERM, terminate)  # the sweep's loop handles both itself
    if _scaled_out(args):  # --workers / --ray: the sweep on a Ray cluster
        from sweepbench.cli.scaleout import run_scaled_out

        outcome = run_scaled_out(cfg, out_path, args)
    else:
        outcome = _run_sweep(cfg, out_path, not args.no_progress,
                             retry_errors=args.retry_errors, shard=shard_of(args),
                             check_endpoints=not args.no_preflight, adaptive=spec)
    _say_outcome(outcome)
    report, reasons = _stored_report(outcome)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        out.print(render(report))
    return _exit_status(outcome, args, reasons, report.get("adaptive"))


def _scaled_out(args: argparse.Namespace) -> bool:
    """Whether the sweep runs on Ray (``--workers``, ``--ray``); RAY_ADDRESS alone does not."""
    return bool(getattr(args, "workers", None) or getattr(args, "ray", None))


def _run_config(args: argparse.Namespace) -> tuple[SweepConfig, str | Path | None]:
    """The sweep ``run`` runs (and ``plan`` plans) and the store it goes into."""
    if args.resume:
        return _resume_config(args)
    cfg = config_from_args(args)
    return sweep_judges(cfg, args, store_path(args.out, shard_of(args))), args.out


def _say_outcome(outcome: SweepOutcome) -> None:
    """What the sweep did: episodes run, reused and failed, and judgments that failed."""
    resumed = (f" ({outcome.resumed} resumed from their journal, {outcome.replayed_calls} "
               "recorded model calls reused)" if outcome.resumed else "")
    stored_errors = (f" ({outcome.stored_errors} of them ended in error)"
                     if outcome.stored_errors else "")
    say(err, f"run {outcome.run_id}: {outcome.episodes} episodes run{resumed}, {outcome.skipped} "
             f"already finished in the store{stored_errors}, {outcome.errors} ended in error; "
             f"store: {outcome.store_path}")
    if outcome.changed:
        why = ", ".join(f"{what} ({n})" for what, n in sorted(outcome.changed.items()))
        say(err, f"not reused: stored episodes of the same model, task and trial whose "
                 f"identity changed: {why}; they ran as new episodes (the old ones stay in "
                 "the store, superseded in reports)")
    for judge, n in sorted(outcome.judge_failures.items()):
        say(err, f"{n} judgments by {judge} failed (left unjudged; run again to retry)")


def _stored_report(outcome: SweepOutcome) -> tuple[dict, Counter[str]]:
    """The run's report from its store, and the reasons its selection's episodes ended in
    error (said when episodes run now did)."""
    from sweepbench.benchmarks.registry import benchmark_info
    from sweepbench.results.report import build_report

    reasons: Counter[str] = Counter()
    with open_store(outcome.store_path) as store:
        report = build_report(store, outcome.run_id, benchmarks=benchmark_info())
        if outcome.errors:
            reasons = _say_error_reasons(store, outcome.run_id)
        elif outcome.stored_errors:
            reasons = _error_reasons(store, outcome.run_id)
    return report, reasons


def _error_reasons(store: RunStore, run_id: str) -> Counter[str]:
    rows = {r["episode_key"] for r in store.episode_rows(run_id) if r["status"] == "error"}
    return Counter(rec.error for rec in store.records(rows).values())


def _say_error_reasons(store: RunStore, run_id: str) -> Counter[str]:
    """The five commonest reasons the run's episodes ended in error, with their counts; all
    of them."""
    reasons = _error_reasons(store, run_id)
    say(err, "episodes that ended in error (counted as failures):", "yellow")
    for why, n in reasons.most_common(5):
        say(err, f"  {n} x {why}", one_line=True)
    if len(reasons) > 5:
        more = sum(reasons.values()) - sum(n for _, n in reasons.most_common(5))
        say(err, f"  ... and {more} more, of {len(reasons) - 5} other reasons")
    return reasons


def _exit_status(outcome: SweepOutcome, args: argparse.Namespace,
                 reasons: Counter[str] | None = None, adaptive: dict | None = None) -> int:
    """Why the sweep stopped short, and what continues it, said; its exit status. Errors
    that no retry fixes (``reasons``: why episodes ended in error) name their fix first.
    An adaptive sweep (``adaptive``: the report's section) whose rule did not hold exits
    non-zero even when every episode ran: scripts must not take a cap for an answer."""
    needed = fixes(reasons or ())
    fix = f": {'; '.join(needed)}" if needed else ""
    run = _adaptive_run(outcome, adaptive)
    short = "the adaptive sweep stopped before its rule held; " if run else ""
    if outcome.budget_stop:
        say(err, f"{short}stopped by the spending cap: {outcome.budget_stop}; "
                 f"{outcome.not_started} episodes not started; ${outcome.spent:,.4f} spent on "
                 "this selection in all, once the episodes in flight ended and were judged; "
                 "run again with a higher --max-cost to continue")
        return BUDGET_EXIT
    if outcome.error_stop:
        say(err, f"{short}stopped: {outcome.error_stop}, so the setup looks broken (see the "
                 f"reasons above){fix}; {outcome.not_started} episodes not started. Fix it, "
                 f"then run `{_retry_command(args)}`")
        return FAILING_EXIT
    if outcome.errors or outcome.stored_errors:
        n = outcome.errors + outcome.stored_errors
        if needed:
            say(err, f"{n} episodes of this selection ended in error, some for a reason no "
                     f"retry fixes: {'; '.join(needed)}. Fix that first, then run them again "
                     f"with `{_retry_command(args)}`")
        else:
            say(err, f"{n} episodes of this selection ended in error; run them again with "
                     f"`{_retry_command(args)}`")
        if run:
            say(err, "the adaptive sweep decided with them counted as failures (as the report "
                     "scores them); run again with --retry-errors and it decides anew")
    undecided = _adaptive_exit(run, outcome.store_path) if run else 0
    if undecided:
        return undecided
    return ERRORS_EXIT if outcome.errors or outcome.stored_errors else 0


def _adaptive_run(outcome: SweepOutcome, adaptive: dict | None) -> dict | None:
    """The report's entry for this run if it was an adaptive sweep (rule, why it stopped)."""
    return next((r for r in (adaptive or {}).get("runs") or []
                 if r.get("run_id") == outcome.run_id), None)


def _adaptive_exit(run: dict, store: Path) -> int:
    """An adaptive run that stopped before its rule held on some benchmark: why, what was
    still lacking and how to go on, said; UNDECIDED_EXIT at ``--max-trials``, STUCK_EXIT
    when trials have no verdict to be had. 0 when the rule held. The spending cap and the
    error streak have their own statuses, before this."""
    whys = {b: d.get("why") for b, d in (run.get("benchmarks") or {}).items()}
    if run.get("why") == "stuck" or "stuck" in whys.values():
        say(err, "adaptive sweep stopped before its rule held: the trials it asked have no "
                 "verdict of their benchmark's headline, and running again would not give "
                 f"one (what to do is said above); exit status {STUCK_EXIT}")
        return STUCK_EXIT
    capped = sorted(b for b, why in whys.items() if why == "max_trials")
    if not capped:
        return 0
    lacking = []
    for b in capped:
        unmet = run["benchmarks"][b].get("unmet") or {}
        if unmet.get("wide"):
            lacking.append(f"{b}: " + ", ".join(
                f"{m} at +-{w:.3g}" if w is not None else f"{m} (nothing scored)"
                for m, w in unmet["wide"].items()) + f" (target +-{run.get('target'):g})")
        elif unmet.get("open_pairs"):
            lacking.append(f"{b}: " + ", ".join(p.replace("|", " vs ")
                                                  for p in unmet["open_pairs"])
                           + " not yet told apart")
        else:
            lacking.append(b)
    more = 2 * int(run.get("max_trials") or 0)
    go_on = shlex.join(["sweepbench", "run", "--resume", str(store),
                        "--max-trials", str(more)])
    say(err, f"adaptive sweep stopped before its rule held: every trial it would add is past "
             f"--max-trials {run.get('max_trials')}; not met on {'; '.join(lacking)}. The "
             f"report shows what was reached. To go on (the trials on record are reused): "
             f"`{go_on}`; exit status {UNDECIDED_EXIT}")
    return UNDECIDED_EXIT


def _retry_command(args: argparse.Namespace) -> str:
    argv = list(getattr(args, "argv", None) or ["run"])
    if "--retry-errors" not in argv:
        argv.append("--retry-errors")
    return shlex.join(["sweepbench", *argv])


def _run_sweep(cfg: SweepConfig, out_path: str | Path | None, show_progress: bool, *,
               retry_errors: bool = False, shard: Any = None, check_endpoints: bool = True,
               adaptive: Any = None):
    """Run the sweep into its store (locked while it runs), with the live progress display;
    ``adaptive`` (an ``AdaptiveSpec``): in rounds until its rule holds."""
    from sweepbench.store.lock import StoreLock
    from sweepbench.runner.plan import prior_per_episode
    from sweepbench.runner.progress import ProgressDisplay
    from sweepbench.runner.sweep import Shard, Sweep, install_uvloop

    part = shard or Shard(0, 1)
    path = store_path(out_path, part)
    install_uvloop()
    prices = {ep.name: ep for ep in cfg.endpoints if not ep.unpriced}
    with StoreLock(path), open_store(path, create=True) as store:
        prior = prior_per_episode(cfg, store) if _capped(cfg) else None
        with ProgressDisplay(err, enabled=show_progress, prices=prices) as progress:
            if adaptive is not None:
                return _run_rounds(cfg, store, adaptive, progress=progress.update,
                                   retry_errors=retry_errors, shard=part, prior=prior,
                                   check_endpoints=check_endpoints)
            sweep = Sweep(cfg, store, progress=progress.update, retry_errors=retry_errors,
                          shard=part, prior=prior, check_endpoints=check_endpoints,
                          warn=lambda text: say(err, text))
            return asyncio.run(sweep.run())


def adaptive_spec(args: argparse.Namespace, cfg: SweepConfig) -> Any:
    """The ``AdaptiveSpec`` that ``--target-ci`` / ``--until-ranked`` ask for (with
    ``--resume`` and neither: the stored run's, if it was adaptive); None for a fixed-k
    sweep."""
    from sweepbench.runner import adaptive
    from sweepbench.runner.rounds import DEFAULT_MAX_TRIALS, AdaptiveSpec

    target, ranked = getattr(args, "target_ci", None), getattr(args, "until_ranked", False)
    margin, cap = getattr(args, "margin", None), getattr(args, "max_trials", None)
    stored = (getattr(args, "stored_info", None) or {}).get("adaptive")
    if target is None and not ranked:
        if stored and isinstance(stored, dict):
            spec = AdaptiveSpec.from_info(stored)
            return dataclasses.replace(spec, max_trials=cap) if cap else spec
        if margin is not None or cap is not None:
            raise ConfigError("--margin and --max-trials are for an adaptive sweep: add "
                              "--target-ci W or --until-ranked")
        return None
    if margin is not None and not ranked:
        raise ConfigError("--margin goes with --until-ranked")
    if getattr(args, "shard", None):
        raise ConfigError("an adaptive sweep decides from every cell's outcomes: it cannot "
                          "run as one --shard of several")
    if _scaled_out(args):
        raise ConfigError("an adaptive sweep runs in one process for now: drop --workers / "
                          "--ray, or run a fixed number of --trials on the cluster")
    try:
        return AdaptiveSpec(rule=adaptive.CI if target is not None else adaptive.RANKED,
                            start=cfg.trials, target=target, margin=margin,
                            max_trials=cap or max(DEFAULT_MAX_TRIALS, cfg.trials))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _run_rounds(cfg: SweepConfig, store: RunStore, spec: Any, *, check_endpoints: bool,
                **sweep_args: Any) -> SweepOutcome:
    """An adaptive sweep (:mod:`sweepbench.runner.rounds`): rounds of the sweep; what it
    decided said on stderr."""
    from sweepbench.runner.rounds import AdaptiveSweep
    from sweepbench.runner.sweep import Sweep

    def make(*, items: Any, run_id: str, check_endpoints: bool, info: dict,
             retry_errors: Any) -> Sweep:
        return Sweep(cfg, store, items=items, run_id=run_id, info=info,
                     check_endpoints=check_endpoints and first, warn=lambda t: say(err, t),
                     retry_errors=retry_errors, **sweep_args)

    first = check_endpoints
    retry = sweep_args.pop("retry_errors", False)
    rounds = AdaptiveSweep(cfg, store, spec, make, shard=sweep_args.get("shard"),
                           say=lambda text: say(err, text), progress=sweep_args["progress"],
                           retry_errors=retry)
    outcome, summary = asyncio.run(rounds.run())
    for bench, b in summary["benchmarks"].items():
        n = b["trials_per_cell"]
        say(err, f"adaptive ({spec.rule}) on {bench}, after {b['rounds']} rounds: "
                 f"{b['stopped']}; "
                 f"{b['trials']} trials over {b['cells']} cells ({n['min']}-{n['max']} each, "
                 f"median {n['median']})")
    return outcome


def _capped(cfg: SweepConfig) -> bool:
    return cfg.max_cost_usd is not None or any(ep.max_cost_usd is not None for ep in cfg.endpoints)


def _resume_config(args: argparse.Namespace) -> tuple[SweepConfig, Path]:
    """The config a stored run was started with, changed by the options given now."""
    from sweepbench.runner.work import DEFAULT_STORE

    target = Path(args.resume)
    if target.suffix in (".sqlite", ".db") or target.is_file():
        path, run_id = target, None
    else:
        path, run_id = Path(getattr(args, "out", None) or DEFAULT_STORE), args.resume
    if not path.is_file():
        raise ConfigError(f"--resume {args.resume}: no run store at {path}")
    with open_store(path) as store:
        runs = store.runs()
        stored = next((r for r in runs if r["run_id"] == run_id), None) if run_id else (
            next((r for r in reversed(runs) if (r["info"] or {}).get("command") == "run"),
                 runs[-1] if runs else None))
    if stored is None:
        have = ", ".join(r["run_id"] for r in runs[-5:]) or "none"
        raise ConfigError(f"--resume {args.resume}: no such run in {path} (latest runs: {have})")
    args.stored_info = stored.get("info") or {}  # an adaptive run's rule, for adaptive_spec
    config = dict(stored["config"])
    config["benchmarks"] = _as_recorded(config.get("benchmarks"), stored.get("info") or {})
    if args.config:  # full endpoint definitions (limits, prices, judges) from the file
        file_eps = {ep.name: ep for ep in load_config(args.config).endpoints}
        stored_eps = {e["name"]: e for e in config.get("endpoints", [])}
        stored_eps.update({name: msgspec.to_builtins(ep) for name, ep in file_eps.items()})
        config["endpoints"] = list(stored_eps.values())
    given = {k: v for k, v in option_overrides(args).items() if v is not None}
    cfg = load_sweep_config(None, {**config, **given})
    release, own = getattr(args, "release", None), getattr(args, "prompts", None) == "own"
    if release is not None or own:  # the resumed sweep on another release: its own specs
        from sweepbench.benchmarks.catalog import choose

        cfg = msgspec.structs.replace(cfg, benchmarks=choose(cfg.benchmarks, release=release,
                                                             own_prompts=own))
    return cfg, path


def _as_recorded(specs: Any, info: dict) -> Any:
    """A stored run's benchmark specs as they were meant when it ran: a run recorded before
    releases had names (its info names plain ``vitabench``) ran a benchmark's first release,
    not what the bare name means today."""
    from sweepbench.benchmarks import registry

    if not isinstance(specs, list):
        return specs
    legacy = {name for name in (info.get("benchmarks") or {}) if "@" not in name}
    out = []
    for spec in specs:
        head, colon, rest = str(spec).partition(":")
        name = head.strip().lower()
        if name in legacy and "@" not in name and "+" not in name:
            releases = registry.get(name).releases
            if releases:
                head = f"{name}@{releases[0]}"
        out.append(head + colon + rest)
    return out


def cmd_plan(args: argparse.Namespace) -> int:
    """What a `run` with these options would do and cost, before spending anything."""
    from sweepbench.runner.plan import make_plan, render_plan

    cfg, out_path = _run_config(args)
    spec = adaptive_spec(args, cfg)
    path = store_path(out_path, shard_of(args))
    workers = args.workers
    if workers and not args.ray:  # a local cluster: as many at once as this machine's cores
        workers = min(workers, os.cpu_count() or 1)
    if path.is_file():
        with open_store(path) as store:
            plan = make_plan(cfg, store, shard=shard_of(args), retry_errors=args.retry_errors,
                             workers=workers)
            if spec is not None:
                plan["adaptive"] = _forecast(cfg, store, spec, args.retry_errors)
    else:
        plan = make_plan(cfg, None, shard=shard_of(args), retry_errors=args.retry_errors,
                         workers=workers)
        if spec is not None:
            plan["adaptive"] = _forecast(cfg, None, spec, args.retry_errors)
    if args.json:
        print(json.dumps(plan, indent=2))
    else:
        out.print(render_plan(plan))
        if spec is not None:
            say(out, _forecast_text(plan["adaptive"]))
    return 0


def _forecast(cfg: SweepConfig, store: RunStore | None, spec: Any, retry_errors: bool) -> dict:
    """An adaptive sweep's forecast (:mod:`sweepbench.runner.forecast`); the plan above it
    is that of its first trials."""
    from sweepbench.runner.forecast import forecast, per_episode
    from sweepbench.runner.plan import make_plan

    capped = msgspec.structs.replace(cfg, trials=spec.max_trials)
    cost = per_episode(make_plan(capped, store, retry_errors=retry_errors))
    return forecast(cfg, store, spec, cost)


def _forecast_text(f: dict) -> str:
    cap = f["cap"]
    dollars = (lambda d: "unpriced" if d is None else f"${d:,.2f}")  # noqa: E731
    head = (f"adaptive sweep ({f['rule']}); at most {cap['episodes']:,} episodes "
            f"({dollars(cap['dollars'])}) if every cell reached the cap")
    if "cannot" in f:
        return f"{head}. No forecast: {f['cannot']}"
    e, d = f["to_run"], f["dollars"]
    return (f"{head}. Forecast from the store's history ({f['simulations']} simulated "
            f"sweeps at its pass rates): {e['median']:,.0f} episodes to run "
            f"({dollars(d['median'])}), up to {e['high']:,.0f} ({dollars(d['high'])}); "
            f"{f['stored']:,} trials already stored. A guide, not a bound: real rates vary "
            "more than stored trials show")


def cmd_replay(args: argparse.Namespace) -> int:
    cfg = config_from_args(args, models=[args.model], trials=1, user_model="scripted/user")
    with tempfile.TemporaryDirectory() as tmp:
        outcome = _run_sweep(cfg, args.out or Path(tmp) / "replay.sqlite", not args.no_progress)
        with open_store(outcome.store_path) as store:
            rows = {r["episode_key"]: r for r in store.episode_rows(outcome.run_id)}
            judgments = [j for j in store.judgments(list(rows)) if j["method"] == JudgeMethod.STATE]
    failures = []
    for j in sorted(judgments, key=lambda j: (rows[j["episode_key"]]["task_id"])):
        if not j["passed"]:
            details = j.get("details") or {}
            row = rows[j["episode_key"]]
            failure = {"task": row["task_id"], "why": details.get("why")}
            why = row["unreachable"] or details.get("unreachable")
            if why:
                failure["unreachable"] = why  # a defect of the task data, not of the harness
            failures.append(failure)
    result = {"tasks": len(judgments), "passed": len(judgments) - len(failures),
              "unreachable": sum("unreachable" in f for f in failures), "failures": failures}
    metrics = _mean_metrics([j.get("details") or {} for j in judgments])
    if metrics:
        result["metrics"] = metrics
    if args.json:
        print(json_text(json.dumps(result, indent=2, ensure_ascii=False)))
    else:
        say(out, f"{result['passed']}/{result['tasks']} tasks passed with {args.model}")
        for f in failures:
            kind = "UNREACHABLE" if "unreachable" in f else "FAIL"
            say(out, f"  {kind} {f['task']}: {f['why']}", one_line=True)
    return 0 if not failures else 1


def _mean_metrics(details: list[dict]) -> dict[str, float]:
    """Means of the numeric judgment details (T1's metrics), named as in the report."""
    from sweepbench.results.report import numeric_details

    sums: dict[str, list[float]] = {}
    for d in details:
        for name, value in numeric_details(d).items():
            sums.setdefault(name, []).append(float(value))
    return {k: round(sum(v) / len(v), 4) for k, v in sorted(sums.items())}


def cmd_judge(args: argparse.Namespace) -> int:
    """Judge a stored run's episodes (again) with other judges; no agent or user model call."""
    from sweepbench.runner.sweep import Sweep, install_uvloop

    args.resume = args.run_id or args.store
    if args.run_id:
        args.out = args.store
    cfg, path = _resume_config(args)
    overrides = {"judge_models": args.judge_model, "judge_methods": args.method,
                 "judge_concurrency": args.judge_concurrency}
    cfg = msgspec.structs.replace(cfg, **{k: v for k, v in overrides.items() if v})
    cfg = load_sweep_config(None, msgspec.to_builtins(cfg))  # validates the judge options

    async def judge():
        from sweepbench.store.lock import StoreLock

        with StoreLock(path), open_store(path) as store:
            return await Sweep(cfg, store, command="judge").run(episodes=False)

    install_uvloop()
    outcome = asyncio.run(judge())
    judges = ", ".join(f"{m} / {meth}" for m, meth in cfg.judges())
    say(err, f"run {outcome.run_id}: {outcome.judged} judgments made ({judges}); store: {path}")
    for judge_name, n in sorted(outcome.judge_failures.items()):
        say(err, f"{n} judgments by {judge_name} failed (left unjudged)")
    with open_store(path) as store:
        keys = list(store.run_selection(outcome.run_id))
        rows = store.judgments(keys, keep=lambda details: None)  # verdicts: not the details
    by_episode: dict[str, dict[tuple[str, str], bool | None]] = {}
    for j in rows:
        by_episode.setdefault(j["episode_key"], {})[(j["judge"], j["method"])] = j["passed"]
    for model, meth in cfg.judges()[1:]:
        state = (STATE_JUDGE, JudgeMethod.STATE)
        pairs = [(v[state], v[(model, meth)]) for v in by_episode.values()
                 if v.get(state) is not None and v.get((model, meth)) is not None]
        if pairs:
            agree = sum(a == b for a, b in pairs) / len(pairs)
            say(err, f"agreement of {model} / {meth} with the state check on task pass: "
                     f"{agree:.1%} over {len(pairs)} episodes")
    return 0
