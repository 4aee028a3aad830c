"""The ``sweepbench`` command.

``sweepbench run`` with no arguments is the embedded default: the built-in reference server on
loopback, scripted oracle and noisy agents on the project's own sample tasks, 4 trials, judged
by the deterministic state check, a leaderboard at the end. No network, no API key.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import shlex
import signal
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import msgspec
from rich.console import Console
from rich.text import Text

from sweepbench import __version__
from sweepbench.config import SweepConfig, load_config
from sweepbench.errors import ConfigError, ImportFormatError, Interrupted, SweepbenchError
from sweepbench.ids import STATE_JUDGE, JudgeMethod, UserMode, WorkOrder
from sweepbench.results.text import json_text, literal
from sweepbench.devserver.faults import FaultSpec, LatencySpec, parse_outage
from sweepbench.runner.work import DEFAULT_STORE

LLM_JUDGE_METHODS = [m.value for m in JudgeMethod if m != JudgeMethod.STATE]
err = Console(stderr=True, soft_wrap=True)
out = Console()


def _say(console: Console, message: str, style: str = "", *, one_line: bool = False) -> None:
    """Print a message that may hold names, ids or server text: literally (never rich
    markup), control characters escaped (newlines too when ``one_line``)."""
    console.print(literal(message, style, one_line=one_line), highlight=False)


def _error(message: str) -> None:
    """The one line of a failed command: ``error: ...`` on stderr."""
    err.print(Text.assemble(("error:", "red"), " ", literal(message, one_line=True)),
              highlight=False)


def _add_sweep_options(p: argparse.ArgumentParser, *, models: bool = True) -> None:
    p.add_argument("--benchmark", action="append", metavar="SPEC",
                   help="benchmark spec, e.g. vitabench:delivery (repeatable; default from config)")
    if models:
        p.add_argument("--model", action="append", metavar="NAME",
                       help="agent model: an endpoint name from the config or scripted/oracle, "
                            "scripted/noisy:P, scripted/chaos (repeatable)")
        p.add_argument("--user-model", metavar="NAME", help="user-simulator model (default scripted/user)")
        p.add_argument("--user-mode", choices=[m.value for m in UserMode],
                       help="VitaBench user mode: persona user (default), neutral user (persona "
                            "removed) or solo agent (a relay user says the whole instruction once)")
        p.add_argument("--trials", type=int, metavar="K", help="trials per (model, task) (default 4)")
    p.add_argument("--max-concurrency", type=int, metavar="N",
                   help="episodes making requests at once (default 64; while one sleeps before "
                        "a retry its slot may run another: lend_slots in the config)")
    p.add_argument("--data-dir", metavar="DIR",
                   help="benchmark data dir (default $SWEEPBENCH_DATA, else the built-in samples)")
    p.add_argument("--lang", choices=["en", "zh"], help="task language (default en)")
    p.add_argument("--task", action="append", dest="task_ids", metavar="ID", help="only this task id (repeatable)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N tasks of each benchmark")
    p.add_argument("--seed", type=int, help="seed of the scripted models (default 0)")
    p.add_argument("--latency", type=float, dest="reference_latency_s", metavar="S",
                   help="latency of the built-in reference server's models, seconds (default 0)")
    p.add_argument("--config", metavar="FILE", help="sweep config (TOML); options override it")
    p.add_argument("--out", metavar="PATH",
                   help=f"run store (SQLite) that keeps the episodes (default {DEFAULT_STORE}); "
                        "episodes it already holds are not run again")
    p.add_argument("--no-progress", action="store_true", help="no live progress display")
    p.add_argument("--retry-errors", action="store_true",
                   help="also run again the episodes that ended in error (continuing from "
                        "their journal); their old judgments no longer count")
    p.add_argument("--shard", metavar="I/N", help="run only shard I of N of the work (0-based); "
                   "combine the shard stores with `sweepbench merge`")


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """What `run` and `plan` share beyond the sweep options."""
    p.add_argument("--resume", metavar="RUN", help="the sweep of a stored run (a run id in the "
                   "store, or a store path for its latest run) with its stored config; options "
                   "given here (e.g. --trials) change it")
    p.add_argument("--judge-model", action="append", metavar="NAME",
                   help="LLM judge while the sweep runs, e.g. scripted/judge (repeatable; the "
                        "state check always runs)")
    p.add_argument("--judge-method", action="append", dest="judge_methods",
                   choices=LLM_JUDGE_METHODS,
                   help="LLM judge method (repeatable; default: sliding for VitaBench, likert "
                        "for T1)")
    p.add_argument("--max-cost", type=_non_negative_float, dest="max_cost_usd", metavar="USD",
                   help="spending cap over the sweep's episodes (stored calls included): no "
                        "episode starts once the spend plus what is in flight would pass it; "
                        f"exit status {BUDGET_EXIT}; a rerun with a higher cap continues")


def _add_fail_fast_options(p: argparse.ArgumentParser) -> None:
    """`run` only: the checks that stop a broken setup early."""
    p.add_argument("--no-preflight", action="store_true",
                   help="do not send the one request per endpoint that checks, before any "
                        "episode starts, that it is up and takes the key (key variables and "
                        "URLs are still checked)")
    p.add_argument("--error-streak", type=int, metavar="N",
                   help="stop starting episodes when the last N finished episodes all ended in "
                        f"error (default 20; 0: never); exit status {FAILING_EXIT}")


_OVERRIDES = ("max_concurrency", "data_dir", "lang", "task_ids", "limit", "seed",
              "reference_latency_s", "max_cost_usd", "error_streak", "order")


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The config fields given as options (None: not given)."""
    out = {k: getattr(args, k, None) for k in _OVERRIDES}
    out["benchmarks"] = args.benchmark
    out["models"] = getattr(args, "model", None)
    out["user_model"] = getattr(args, "user_model", None)
    out["user_mode"] = getattr(args, "user_mode", None)
    out["trials"] = getattr(args, "trials", None)
    out["judge_models"] = getattr(args, "judge_model", None)
    out["judge_methods"] = getattr(args, "judge_methods", None)
    return out


def _config(args: argparse.Namespace, **fixed: Any) -> SweepConfig:
    overrides = _overrides(args)
    overrides.update(fixed)
    return _load(args.config, overrides)


def _load(path: str | None, overrides: dict[str, Any] | None = None) -> SweepConfig:
    """``load_config`` plus what the config module cannot check itself: the reference
    server's specs and the scripted models' names (an unknown one fails here, listing the
    doubles, instead of as a 404 in every episode)."""
    from sweepbench.devserver.faults import check_outage
    from sweepbench.simulator.scripted.models import parse_scripted

    cfg = load_config(path, overrides)
    for key, parse in (("reference_faults", FaultSpec.parse),
                       ("reference_latency", LatencySpec.parse), ("reference_outage", check_outage)):
        value = getattr(cfg, key)
        try:
            if value:
                parse(value)
        except ValueError as exc:
            raise ConfigError(f"{key}: {exc}") from None
    reference = "http://reference.invalid"
    for name in dict.fromkeys([*cfg.models, cfg.user_model, *cfg.judge_models]):
        ep = cfg.endpoint(name, reference_url=reference)
        if ep.base_url == reference:
            try:
                parse_scripted(ep.model_name)
            except ValueError as exc:
                raise ConfigError(str(exc) if ep.model_name == name
                                  else f"model {name!r}: {exc}") from None
    return cfg


def _shard(args: argparse.Namespace):  # noqa: ANN202
    from sweepbench.runner.work import Shard

    try:
        return Shard.parse(args.shard) if getattr(args, "shard", None) else Shard(0, 1)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _store_path(out_path: str | Path | None, shard: Any) -> Path:
    from sweepbench.runner.work import DEFAULT_STORE

    if out_path:
        return Path(out_path)
    if shard.count > 1:
        return DEFAULT_STORE.with_name(
            f"{DEFAULT_STORE.stem}.shard-{shard.index}-of-{shard.count}{DEFAULT_STORE.suffix}")
    return DEFAULT_STORE


def _open_store(path: str | Path, *, create: bool = False):  # noqa: ANN202
    """A run store; says so when opening it migrated an older schema."""
    from sweepbench.store.runstore import RunStore

    store = RunStore(path, create=create)
    if store.migrated:
        _say(err, store.migrated)
    return store


def _run_sweep(cfg: SweepConfig, out_path: str | Path | None, show_progress: bool, *,
               retry_errors: bool = False, shard: Any = None, check_endpoints: bool = True):
    from sweepbench.store.lock import StoreLock
    from sweepbench.runner.plan import prior_per_episode
    from sweepbench.runner.progress import ProgressDisplay
    from sweepbench.runner.sweep import Shard, Sweep, install_uvloop

    part = shard or Shard(0, 1)
    path = _store_path(out_path, part)
    path.parent.mkdir(parents=True, exist_ok=True)
    install_uvloop()
    prices = {ep.name: ep for ep in cfg.endpoints}
    with StoreLock(path), _open_store(path, create=True) as store:
        prior = prior_per_episode(cfg, store) if _capped(cfg) else None
        with ProgressDisplay(err, enabled=show_progress, prices=prices) as progress:
            sweep = Sweep(cfg, store, progress=progress.update, retry_errors=retry_errors,
                          shard=part, prior=prior, check_endpoints=check_endpoints,
                          warn=lambda text: _say(err, text))
            return asyncio.run(sweep.run())


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
    with _open_store(path) as store:
        runs = store.runs()
        stored = next((r for r in runs if r["run_id"] == run_id), None) if run_id else (
            next((r for r in reversed(runs) if (r["info"] or {}).get("command") == "run"),
                 runs[-1] if runs else None))
    if stored is None:
        have = ", ".join(r["run_id"] for r in runs[-5:]) or "none"
        raise ConfigError(f"--resume {args.resume}: no such run in {path} (latest runs: {have})")
    config = dict(stored["config"])
    if args.config:  # full endpoint definitions (limits, prices, judges) from the file
        file_eps = {ep.name: ep for ep in load_config(args.config).endpoints}
        stored_eps = {e["name"]: e for e in config.get("endpoints", [])}
        stored_eps.update({name: msgspec.to_builtins(ep) for name, ep in file_eps.items()})
        config["endpoints"] = list(stored_eps.values())
    given = {k: v for k, v in _overrides(args).items() if v is not None}
    return _load(None, {**config, **given}), path


BUDGET_EXIT = 3
"""Exit status of a sweep stopped by its spending cap."""
ERRORS_EXIT = 4
"""Exit status of a sweep in which episodes ended in error."""
FAILING_EXIT = 5
"""Exit status of a sweep stopped because every recent episode ended in error."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM outside the sweep's event loop (loading tasks, reporting): like Ctrl-C."""


def _terminate(signum: int, frame: Any) -> None:
    raise _Terminated


def _retry_command(args: argparse.Namespace) -> str:
    argv = list(getattr(args, "argv", None) or ["run"])
    if "--retry-errors" not in argv:
        argv.append("--retry-errors")
    return shlex.join(["sweepbench", *argv])


def cmd_run(args: argparse.Namespace) -> int:
    from sweepbench.results.report import build_report, render
    from sweepbench.runner.build import benchmark_info

    if args.resume:
        cfg, out_path = _resume_config(args)
    else:
        cfg, out_path = _config(args), args.out
        if not (args.config or args.model or args.judge_model):
            # the embedded default's test doubles are judged by the judge double, so that
            # every benchmark has its paper's headline (VitaBench's is the LLM judge)
            cfg = msgspec.structs.replace(cfg, judge_models=["scripted/judge"])
    signal.signal(signal.SIGTERM, _terminate)  # the sweep's loop handles both itself
    outcome = _run_sweep(cfg, out_path, not args.no_progress, retry_errors=args.retry_errors,
                         shard=_shard(args), check_endpoints=not args.no_preflight)
    resumed = (f" ({outcome.resumed} resumed from their journal, {outcome.replayed_calls} "
               "recorded model calls reused)" if outcome.resumed else "")
    stored_errors = (f" ({outcome.stored_errors} of them ended in error)"
                     if outcome.stored_errors else "")
    _say(err, f"run {outcome.run_id}: {outcome.episodes} episodes run{resumed}, {outcome.skipped} "
              f"already finished in the store{stored_errors}, {outcome.errors} ended in error; "
              f"store: {outcome.store_path}")
    if outcome.changed:
        why = ", ".join(f"{what} ({n})" for what, n in sorted(outcome.changed.items()))
        _say(err, f"not reused: stored episodes of the same model, task and trial whose "
                  f"identity changed: {why}; they ran as new episodes (the old ones stay in "
                  "the store, superseded in reports)")
    for judge, n in sorted(outcome.judge_failures.items()):
        _say(err, f"{n} judgments by {judge} failed (left unjudged; run again to retry)")
    with _open_store(outcome.store_path) as store:
        report = build_report(store, outcome.run_id, benchmarks=benchmark_info())
        if outcome.errors:
            rows = {r["episode_key"] for r in store.episode_rows(outcome.run_id)
                    if r["status"] == "error"}
            reasons = Counter(rec.error for rec in store.records(rows).values())
            _say(err, "episodes that ended in error (counted as failures):", "yellow")
            for why, n in reasons.most_common(5):
                _say(err, f"  {n} x {why}", one_line=True)
            if len(reasons) > 5:
                _say(err, f"  ... and {sum(reasons.values()) - sum(n for _, n in reasons.most_common(5))} "
                          f"more, of {len(reasons) - 5} other reasons")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        out.print(render(report))
    if outcome.budget_stop:
        _say(err, f"stopped by the spending cap: {outcome.budget_stop}; {outcome.not_started} "
                  f"episodes not started (${outcome.spent:,.4f} spent on this selection); "
                  "run again with a higher --max-cost to continue")
        return BUDGET_EXIT
    if outcome.error_stop:
        _say(err, f"stopped: {outcome.error_stop}, so the setup looks broken (see the reasons "
                  f"above); {outcome.not_started} episodes not started. Fix it, then run "
                  f"`{_retry_command(args)}`")
        return FAILING_EXIT
    if outcome.errors or outcome.stored_errors:
        n = outcome.errors + outcome.stored_errors
        _say(err, f"{n} episodes of this selection ended in error; run them again with "
                  f"`{_retry_command(args)}`")
        return ERRORS_EXIT
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    """What a `run` with these options would do and cost, before spending anything."""
    from sweepbench.runner.plan import make_plan, render_plan

    if args.resume:
        cfg, out_path = _resume_config(args)
    else:
        cfg, out_path = _config(args), args.out
    path = _store_path(out_path, _shard(args))
    if path.is_file():
        with _open_store(path) as store:
            plan = make_plan(cfg, store, shard=_shard(args), retry_errors=args.retry_errors)
    else:
        plan = make_plan(cfg, None, shard=_shard(args), retry_errors=args.retry_errors)
    if args.json:
        print(json.dumps(plan, indent=2))
    else:
        out.print(render_plan(plan))
    return 0


def _prices(config: str | None) -> dict | None:
    """Per-endpoint prices from a config (they replace the stored ones in a report)."""
    return {ep.name: ep for ep in load_config(config).endpoints} if config else None


def _selection(args: argparse.Namespace):  # noqa: ANN202
    from sweepbench.results.selection import Selection, parse_trials

    try:
        trials = parse_trials(args.trials) if args.trials else None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return Selection(models=tuple(args.model or ()), benchmarks=tuple(args.benchmark or ()),
                     splits=tuple(args.split or ()), trials=trials, run_id=args.run)


def cmd_report(args: argparse.Namespace) -> int:
    from contextlib import ExitStack

    from sweepbench.errors import ReportError
    from sweepbench.results.report import build_report, render
    from sweepbench.runner.build import benchmark_info

    for p in args.paths:
        if not Path(p).is_file():
            _error(f"no run store at {p}")
            return 2
    with ExitStack() as stack:
        stores = [stack.enter_context(_open_store(p)) for p in args.paths]
        try:
            report = build_report(stores, method=args.method, judge=args.judge, k=args.k,
                                  prices=_prices(args.config), seed=args.seed,
                                  selection=_selection(args), benchmarks=benchmark_info())
        except ReportError as exc:
            _error(str(exc))
            return 2
    if args.html:
        from sweepbench.results.render.html import write_html

        write_html(report, args.html)
        _say(err, f"wrote {args.html}")
    if args.json:
        print(json.dumps(report, indent=2))
    elif not args.html:
        out.print(render(report))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from sweepbench.results.export.writers import (
        columns_doc,
        export_results_csv,
        export_tables,
        export_trajectories,
    )
    from sweepbench.runner.build import benchmark_info

    if args.columns:
        print(columns_doc())
        return 0
    if args.path is None:
        _error("name the run store to export")
        return 2
    if not (args.trajectories or args.csv or args.tables or args.inspect):
        _error("name an output: --tables DIR, --inspect DIR, "
               "--trajectories OUT.jsonl and/or --csv OUT.csv")
        return 2
    with _open_store(args.path) as store:
        if args.tables:
            formats = tuple(args.format or ["parquet", "csv", "jsonl"])
            for path, n in export_tables(store, args.run, args.tables, formats,
                                         benchmarks=benchmark_info()).items():
                _say(err, f"{n} rows -> {path}")
        if args.trajectories:
            n = export_trajectories(store, args.run, args.trajectories)
            _say(err, f"{n} trajectories -> {args.trajectories}")
        if args.csv:
            n = export_results_csv(store, args.run, args.csv, benchmarks=benchmark_info())
            _say(err, f"{n} rows -> {args.csv}")
        if args.inspect:
            from sweepbench.results.export.inspect_log import export_inspect
            from sweepbench.results.selection import Selection, load_view

            paths = export_inspect(store, load_view([store], Selection(run_id=args.run)),
                                   args.inspect)
            _say(err, f"{len(paths)} inspect_ai logs -> {args.inspect} (inspect view "
                      f"--log-dir {args.inspect})")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks import registry

    benchmark = registry.get(args.benchmark)
    with _open_store(args.store, create=True) as store:
        for f in args.files:
            try:
                summary = benchmark.import_results(store, Path(f), run_id=args.run,
                                                   model=args.model, lang=args.lang)
            except (ImportFormatError, OSError) as exc:
                _error(f"{f}: {exc}")
                return 2
            _say(err, f"{f}: run {summary.run_id}, {summary.episodes} episodes, "
                      f"{summary.judged} judged")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    cfg = _config(args, models=[args.model], trials=1, user_model="scripted/user")
    with tempfile.TemporaryDirectory() as tmp:
        outcome = _run_sweep(cfg, args.out or Path(tmp) / "replay.sqlite", not args.no_progress)
        with _open_store(outcome.store_path) as store:
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
        _say(out, f"{result['passed']}/{result['tasks']} tasks passed with {args.model}")
        for f in failures:
            kind = "UNREACHABLE" if "unreachable" in f else "FAIL"
            _say(out, f"  {kind} {f['task']}: {f['why']}", one_line=True)
    return 0 if not failures else 1


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
    cfg = _load(None, msgspec.to_builtins(cfg))  # validates the judge options

    async def judge():
        from sweepbench.store.lock import StoreLock

        with StoreLock(path), _open_store(path) as store:
            return await Sweep(cfg, store, command="judge").run(episodes=False)

    install_uvloop()
    outcome = asyncio.run(judge())
    judges = ", ".join(f"{m} / {meth}" for m, meth in cfg.judges())
    _say(err, f"run {outcome.run_id}: {outcome.judged} judgments made ({judges}); store: {path}")
    for judge_name, n in sorted(outcome.judge_failures.items()):
        _say(err, f"{n} judgments by {judge_name} failed (left unjudged)")
    with _open_store(path) as store:
        keys = list(store.run_selection(outcome.run_id))
        rows = store.judgments(keys)
    by_episode: dict[str, dict[tuple[str, str], bool | None]] = {}
    for j in rows:
        by_episode.setdefault(j["episode_key"], {})[(j["judge"], j["method"])] = j["passed"]
    for model, meth in cfg.judges()[1:]:
        state = (STATE_JUDGE, JudgeMethod.STATE)
        pairs = [(v[state], v[(model, meth)]) for v in by_episode.values()
                 if v.get(state) is not None and v.get((model, meth)) is not None]
        if pairs:
            agree = sum(a == b for a, b in pairs) / len(pairs)
            _say(err, f"agreement of {model} / {meth} with the state check on task pass: "
                      f"{agree:.1%} over {len(pairs)} episodes")
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from sweepbench.errors import StoreError
    from sweepbench.store.merge import merge_stores

    try:
        counts = merge_stores(args.out, args.inputs)
    except StoreError as exc:
        _error(str(exc))
        return 2
    _say(err, f"merged {len(args.inputs)} stores into {args.out}: " +
         ", ".join(f"{n} {t}" for t, n in counts.items()))
    return 0


def _mean_metrics(details: list[dict]) -> dict[str, float]:
    """Means of the numeric judgment details (T1's metrics), named as in the report."""
    from sweepbench.results.report import numeric_details

    sums: dict[str, list[float]] = {}
    for d in details:
        for name, value in numeric_details(d).items():
            sums.setdefault(name, []).append(float(value))
    return {k: round(sum(v) / len(v), 4) for k, v in sorted(sums.items())}


def cmd_serve(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks.doubles import scripted_models, warm
    from sweepbench.devserver.server import ReferenceServer
    from sweepbench.runner.sweep import tune_gc
    from sweepbench.simulator.scripted.models import SCRIPTED_MODELS

    tune_gc()
    try:
        server = ReferenceServer(scripted_models(), host=args.host, port=args.port,
                                 models=SCRIPTED_MODELS, latency=args.latency,
                                 faults=args.faults, seed=args.seed, rpm_limit=args.rpm,
                                 tpm_limit=args.tpm, outage=args.outage)
    except ValueError as exc:
        raise ConfigError(f"--host: {exc}") from None
    for spec in SweepConfig().benchmarks:  # loaded before the first request needs them
        try:
            warm(spec)
        except SweepbenchError as exc:  # not in this data dir: a request loads what it names
            _say(err, f"{spec} not preloaded: {exc}", "yellow")
    with _listening(args.host, args.port):
        server.run_forever()
    return 0


@contextmanager
def _listening(host: str, port: int) -> Iterator[None]:
    """A server that cannot bind (port in use, address not here) is one line, not a traceback."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            raise
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def cmd_tools(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks import registry
    from sweepbench.benchmarks.catalog import BenchmarkSpec

    spec = BenchmarkSpec.parse(args.benchmark)
    benchmark = registry.get(spec.benchmark)
    toolkit = benchmark.toolkit_for_domains(spec.domains)
    rows = [{"name": t.name, "domain": t.domain, "type": t.kind} for t in toolkit.tools.values()]
    graph = benchmark.tools_summary(toolkit)
    if args.json:
        print(json.dumps({"tools": rows, **graph}, indent=2))
    else:
        for r in rows:
            _say(out, f"{r['domain']:<10} {r['type']:<8} {r['name']}")
        extra = (f"; dependency graph: {graph['edges']} edges, density {graph['density']:.3f}"
                 if graph else "")
        _say(out, f"{len(rows)} tools{extra}")
    return 0


def cmd_tools_call(args: argparse.Namespace) -> int:
    """Run call sequences (one JSON object per line) from fresh episode states; one JSON line
    out per sequence. A bad line is reported on stderr, naming it, and the run goes on."""
    from sweepbench.benchmarks import registry
    from sweepbench.benchmarks.catalog import load_tasks

    benchmark = registry.get(args.call_benchmark)
    try:
        stream = sys.stdin if args.sequences == "-" else open(args.sequences, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {args.sequences}: {exc.strerror or exc}") from None
    failed = 0
    with stream:
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                seq = json.loads(line)
                if not isinstance(seq, dict):
                    raise ValueError(f"expected a JSON object, got {type(seq).__name__}")
                missing = [k for k in ("domain", "task_id", "calls") if k not in seq]
                if missing:
                    raise ValueError(f"missing {', '.join(missing)}")
                spec = f"{benchmark.name}:{seq['domain']}"
                tasks = {t.id: t for t in load_tasks(spec, data_dir=args.data_dir,
                                                     lang=seq.get("lang", "en"))}
                task = tasks.get(str(seq["task_id"]))
                if task is None:
                    raise ValueError(f"no task {seq['task_id']!r} in {spec} ({seq.get('lang', 'en')})")
                ran = benchmark.run_calls(task, seq["calls"])
            except (ValueError, SweepbenchError) as exc:
                failed += 1
                _error(f"{args.sequences} line {number}: {exc}")
                continue
            print(json_text(json.dumps({"key": seq.get("key"), **ran}, ensure_ascii=False)), flush=True)
    return 1 if failed else 0


def cmd_tasks(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks import registry
    from sweepbench.benchmarks.catalog import BenchmarkSpec, load_tasks

    spec = BenchmarkSpec.parse(args.benchmark)
    tasks = load_tasks(spec, data_dir=args.data_dir, lang=args.lang)
    if args.json:
        summary = registry.get(spec.benchmark).tasks_summary(spec.domains, tasks)
        print(json.dumps(summary if summary is not None else {"total": len(tasks), "tasks": [
            {"id": t.id, "domain": t.domain, "lang": t.lang} for t in tasks]}, indent=2))
    else:
        for t in tasks:
            _say(out, f"{t.id:<16} {t.domain:<10} {' '.join(t.instructions.split())[:90]}",
                 one_line=True)
        _say(out, f"{len(tasks)} tasks")
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    from sweepbench.runner.build import benchmark_info
    from sweepbench.view.server import serve

    with _listening(args.host, args.port):
        serve([Path(p) for p in args.stores], host=args.host, port=args.port,
              prices=_prices(args.config), benchmarks=benchmark_info(),
              allow_remote=args.allow_remote, say=lambda line: _say(err, line))
    return 0


def _checked(parse, *, result: bool = False):  # noqa: ANN001, ANN202
    """An argparse type that validates with ``parse`` (ValueError -> a usage error)."""
    def check(text: str):  # noqa: ANN202
        try:
            parsed = parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return parsed if result else text
    return check


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535, got {value}")
    return value


class _Parser(argparse.ArgumentParser):
    """Usage errors are one line like every other error (``--help`` shows the usage)."""

    def error(self, message: str) -> NoReturn:
        _error(f"{self.prog}: {message} (see {self.prog} --help)")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="sweepbench",
        description="Run interactive tool-use agent benchmarks (VitaBench, T1-Bench) at scale.")
    parser.add_argument("--version", action="version", version=f"sweepbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for name, about, func in (
            ("run", "run a sweep (no arguments: the embedded offline default)", cmd_run),
            ("plan", "what `run` with the same options would do: episodes, requests, tokens, "
                     "dollars and wall time, before spending", cmd_plan)):
        p = sub.add_parser(name, help=about)
        _add_sweep_options(p)
        _add_run_options(p)
        p.add_argument("--json", action="store_true",
                       help="print the report as JSON" if name == "run" else "print the plan as JSON")
        if name == "run":
            _add_fail_fast_options(p)
            p.add_argument("--order", choices=[o.value for o in WorkOrder],
                           help="the order episodes start in: longest expected first, fair "
                                "across models, in bands of whole trials (default), or file: "
                                "trial-major, tasks in file order")
        p.set_defaults(func=func)

    p = sub.add_parser("report", help="leaderboards of the episodes in one or more run stores "
                                      "(table, JSON or HTML)")
    p.add_argument("paths", nargs="+", metavar="STORE", help="run store(s) (SQLite files)")
    p.add_argument("--run", metavar="RUN_ID", help="only the episodes this run selected")
    p.add_argument("--model", action="append", metavar="NAME", help="only this model (repeatable)")
    p.add_argument("--benchmark", action="append", metavar="NAME",
                   help="only this benchmark, e.g. vitabench (repeatable)")
    p.add_argument("--split", action="append", metavar="SPLIT",
                   help="only episodes selected under this spec (t1:single, or single) or of "
                        "this domain (delivery) (repeatable)")
    p.add_argument("--trials", metavar="N|A-B",
                   help="only the first N trials, or trials A..B (0-based, inclusive)")
    p.add_argument("--judge", help="judge model to score by (default: per benchmark, the one "
                                   "with most verdicts of its headline method)")
    p.add_argument("--method", help="score every benchmark by this judge method instead of its "
                                    "headline (benchmarks it does not apply to: not applicable)")
    p.add_argument("--k", type=_positive_int, help="k for Avg@k / Pass@k / Pass^k (default: "
                                                    "trials per task)")
    p.add_argument("--config", metavar="FILE", help="price calls with this config's endpoint "
                                                     "prices instead of the stored ones")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report with plots")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "export", help="episodes, calls and judgments as Parquet / CSV / JSONL; trajectories; "
                       "inspect_ai logs",
        epilog="Columns: `sweepbench export --columns` prints them with their types and "
               "meanings (also in README.md, 'Exports').")
    p.add_argument("path", nargs="?", help="run store (SQLite file)")
    p.add_argument("--run", metavar="RUN_ID", help="only the episodes this run selected "
                                                   "(default: every episode)")
    p.add_argument("--tables", metavar="DIR", help="write episodes, calls and judgments tables "
                                                   "(DIR/episodes.parquet, ...)")
    p.add_argument("--format", action="append", choices=["parquet", "csv", "jsonl"],
                   help="format of --tables (repeatable; default all three; Parquet needs "
                        "pyarrow: the parquet extra)")
    p.add_argument("--trajectories", metavar="OUT.jsonl",
                   help="one finished episode per line: key, label, messages, usage, judgments")
    p.add_argument("--csv", metavar="OUT.csv", help="the episodes table as one CSV file")
    p.add_argument("--inspect", metavar="DIR", help="inspect_ai eval logs, one per model x "
                                                    "benchmark (the inspect extra)")
    p.add_argument("--columns", action="store_true", help="print every table's columns and exit")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", help="import another harness's result files (upstream "
                                      "VitaBench's) into a store")
    p.add_argument("store", help="run store to import into (created if missing)")
    p.add_argument("files", nargs="+", help="result files, e.g. upstream VitaBench simulation JSON")
    p.add_argument("--benchmark", default="vitabench",
                   help="benchmark whose importer reads the files (default vitabench)")
    p.add_argument("--run", metavar="RUN_ID", help="run id to import into (default: derived)")
    p.add_argument("--model", help="model name (default: from the file)")
    p.add_argument("--lang", choices=["en", "zh"], help="task language (default: detected)")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("replay", help="run every task with scripted/oracle through the full path "
                                      "and the state check")
    _add_sweep_options(p, models=False)
    p.add_argument("--model", default="scripted/oracle", help="agent model (default scripted/oracle)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("judge", help="judge a stored run's episodes again with other judges "
                                     "or methods (no agent or user model calls)")
    p.add_argument("store", metavar="STORE", help="a run store path (or a run id in the default "
                                                  f"store {DEFAULT_STORE})")
    p.add_argument("--run", dest="run_id", metavar="RUN_ID",
                   help="the run whose episodes to judge (default: the store's latest run)")
    p.add_argument("--judge-model", action="append", metavar="NAME",
                   help="judge model: an endpoint name or scripted/judge (repeatable)")
    p.add_argument("--method", action="append",
                   choices=LLM_JUDGE_METHODS,
                   help="judge method (repeatable; default: sliding for VitaBench, likert for T1)")
    p.add_argument("--judge-concurrency", type=int, metavar="N", help="episodes judged at once")
    p.add_argument("--config", metavar="FILE", help="config with the judge endpoints' definitions")
    p.add_argument("--max-concurrency", type=int, help=argparse.SUPPRESS)
    p.add_argument("--latency", type=float, dest="reference_latency_s", metavar="S",
                   help="latency of the built-in reference server's models, seconds")
    p.set_defaults(func=cmd_judge, benchmark=None)

    p = sub.add_parser("merge", help="combine run stores (shards of one sweep, or stores "
                                     "grown apart): every episode, run and price is kept")
    p.add_argument("out", help="output store (created if missing)")
    p.add_argument("inputs", nargs="+", help="input stores")
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser("serve", help="the OpenAI-compatible reference server of scripted models",
                       description="The OpenAI-compatible reference server of scripted models "
                       "(test doubles, not model results). The default benchmark set's tasks "
                       "are loaded before it listens; other tasks on their first request.")
    p.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8000, help="port (default 8000; 0: any free)")
    p.add_argument("--latency", type=_checked(LatencySpec.parse), metavar="SPEC",
                   help="answer latency: seconds, or fixed:S, uniform:LO,HI, "
                        "lognormal:median=M,sigma=S[,max=X] (seeded)")
    p.add_argument("--faults", type=_checked(FaultSpec.parse), metavar="SPEC",
                   help="faults per request, e.g. 429=0.1,500=0.05,timeout=0.02,reset=0.01,"
                        "garbage=0.01 (kinds: 429 500 502 503 timeout hang reset garbage overflow "
                        "length)")
    p.add_argument("--seed", type=int, default=0, help="seed of fault and latency draws (default 0)")
    p.add_argument("--rpm", type=_positive_int, metavar="N",
                   help="enforce N requests per minute per model (429 with Retry-After beyond)")
    p.add_argument("--tpm", type=_positive_int, metavar="N",
                   help="enforce N estimated tokens per minute per model")
    p.add_argument("--outage", type=_checked(parse_outage, result=True), metavar="START,DURATION",
                   help="answer 503 for DURATION seconds from START seconds after starting")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("view", help="browse run stores in a local web viewer (leaderboard, "
                                    "episode lists, conversations, judge windows)")
    p.add_argument("stores", nargs="+", metavar="STORE", help="run stores (SQLite files)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1; others need --allow-remote)")
    p.add_argument("--port", type=_port, default=8765, help="port (default 8765; 0: any free)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a non-loopback --host and answer requests for any host name")
    p.add_argument("--config", metavar="FILE",
                   help="config whose endpoint prices replace the prices the runs stored")
    p.set_defaults(func=cmd_view)

    p = sub.add_parser("tools", help="list a benchmark's tools; `tools call` runs tool calls")
    p.add_argument("--benchmark", default="vitabench:delivery,instore,ota", metavar="SPEC",
                   help="benchmark spec (default: all 66 VitaBench tools)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tools)
    calls = p.add_subparsers(dest="tools_command", metavar="{call}")
    c = calls.add_parser(
        "call", help="run tool-call sequences, each from a fresh state of its task",
        description="Reads call sequences, one JSON object per line: {key, domain (one domain "
                    "or a comma composition), lang, task_id, calls: [{tool, args}]}; an "
                    "argument {\"$ref_step\": i} is the id of the record call i created. Prints "
                    "one JSON line per sequence: {key, results: [{content, created}], "
                    "final_state}.")
    c.add_argument("sequences", metavar="SEQUENCES.jsonl", help="the sequences ('-': stdin)")
    c.add_argument("--data-dir", metavar="DIR",
                   help="benchmark data dir (default $SWEEPBENCH_DATA, else the built-in samples)")
    c.add_argument("--benchmark", dest="call_benchmark", default="vitabench", metavar="NAME",
                   help="the benchmark whose tools run (default vitabench)")
    c.set_defaults(func=cmd_tools_call)

    p = sub.add_parser("tasks", help="list a benchmark's tasks")
    p.add_argument("--benchmark", default="vitabench:delivery", metavar="SPEC")
    p.add_argument("--data-dir", metavar="DIR")
    p.add_argument("--lang", choices=["en", "zh"], default="en")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tasks)
    return parser


_CONTINUES = frozenset({"run", "judge"})
"""Commands that journal into a run store, so that the same command run again continues."""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = ["run"]
    args = build_parser().parse_args(argv)
    args.argv = argv
    if not getattr(args, "func", None):
        build_parser().print_help()
        return 2
    try:
        return args.func(args)
    except Interrupted as exc:  # SIGINT / SIGTERM during a sweep: it says what resumes
        _say(err, str(exc))
        return exc.exit_status
    except SweepbenchError as exc:  # every deliberate error: one line, no traceback
        _error(str(exc))
        return 2
    except KeyboardInterrupt as exc:
        # only a sweep or a judging continues where it stopped; a server, a viewer, a report
        # just stop
        hint = ("; re-run the same command to continue where it stopped"
                if args.command in _CONTINUES else "")
        _say(err, f"interrupted{hint}")
        return 128 + (signal.SIGTERM if isinstance(exc, _Terminated) else signal.SIGINT)

