"""The ``sweepbench`` command.

``sweepbench run`` with no arguments is the embedded default: the built-in reference server on
loopback, scripted oracle and noisy agents on the project's own sample tasks, 4 trials, judged
by the deterministic state check, a leaderboard at the end. No network, no API key.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
from rich.console import Console
from rich.markup import escape

from sweepbench import __version__
from sweepbench.config import SweepConfig, load_config
from sweepbench.errors import ConfigError, ImportFormatError, SweepbenchError
from sweepbench.ids import STATE_JUDGE, EpisodeId, JudgeMethod, UserMode
from sweepbench.runner.faults import FaultSpec, LatencySpec, parse_outage

LLM_JUDGE_METHODS = [m.value for m in JudgeMethod if m != JudgeMethod.STATE]
err = Console(stderr=True, soft_wrap=True)
out = Console()


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
                            "removed) or solo agent (no user, whole instruction up front)")
        p.add_argument("--trials", type=int, metavar="K", help="trials per (model, task) (default 4)")
    p.add_argument("--max-concurrency", type=int, metavar="N", help="episodes in flight (default 64)")
    p.add_argument("--data-dir", metavar="DIR",
                   help="benchmark data dir (default $SWEEPBENCH_DATA, else the built-in samples)")
    p.add_argument("--lang", choices=["en", "zh"], help="task language (default en)")
    p.add_argument("--task", action="append", dest="task_ids", metavar="ID", help="only this task id (repeatable)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N tasks of each benchmark")
    p.add_argument("--seed", type=int, help="seed of the scripted models (default 0)")
    p.add_argument("--latency", type=float, dest="reference_latency_s", metavar="S",
                   help="latency of the built-in reference server's models, seconds (default 0)")
    p.add_argument("--config", metavar="FILE", help="sweep config (TOML); options override it")
    p.add_argument("--out", metavar="PATH", help="run store (SQLite); default runs/<run-id>.sqlite")
    p.add_argument("--no-progress", action="store_true", help="no live progress display")
    p.add_argument("--retry-errors", action="store_true",
                   help="also continue episodes that ended in error (from their journal)")
    p.add_argument("--shard", metavar="I/N", help="run only shard I of N of the work (0-based); "
                   "combine the shard stores with `sweepbench merge`")


def _config(args: argparse.Namespace, **fixed: Any) -> SweepConfig:
    keys = ("max_concurrency", "data_dir", "lang", "task_ids", "limit", "seed", "reference_latency_s")
    overrides = {k: getattr(args, k, None) for k in keys}
    overrides["benchmarks"] = args.benchmark
    overrides["models"] = getattr(args, "model", None)
    overrides["user_model"] = getattr(args, "user_model", None)
    overrides["user_mode"] = getattr(args, "user_mode", None)
    overrides["trials"] = getattr(args, "trials", None)
    overrides["judge_models"] = getattr(args, "judge_model", None)
    overrides["judge_methods"] = getattr(args, "judge_methods", None)
    overrides.update(fixed)
    return load_config(args.config, overrides)


def _run_sweep(cfg: SweepConfig, out_path: str | Path | None, show_progress: bool, *,
               retry_errors: bool = False, shard: str | None = None):
    from sweepbench.runner.progress import ProgressDisplay
    from sweepbench.runner.sweep import Shard, install_uvloop, run_id_for, run_sweep

    try:
        part = Shard.parse(shard) if shard else Shard(0, 1)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    suffix = f".shard-{part.index}-of-{part.count}" if part.count > 1 else ""
    path = Path(out_path) if out_path else Path("runs") / f"{run_id_for(cfg)}{suffix}.sqlite"
    install_uvloop()
    prices = {ep.name: ep for ep in cfg.endpoints}
    with ProgressDisplay(err, enabled=show_progress, prices=prices) as progress:
        return asyncio.run(run_sweep(cfg, path, progress=progress.update,
                                     retry_errors=retry_errors, shard=part))


def _resume_config(args: argparse.Namespace) -> tuple[SweepConfig, Path]:
    """The config a stored run was started with (speed options may still be overridden)."""
    from sweepbench.errors import StoreError
    from sweepbench.results.store import RunStore

    target = Path(args.resume)
    path = target if target.suffix in (".sqlite", ".db") or target.is_file() else Path("runs") / f"{args.resume}.sqlite"
    try:
        with RunStore(path, create=False) as store:
            run_id = store.latest_run_id()
            stored = store.run(run_id) if run_id else None
    except StoreError as exc:
        raise ConfigError(f"--resume {args.resume}: {exc}") from None
    if not stored:
        raise ConfigError(f"--resume {args.resume}: {path} holds no run")
    config = stored["config"]
    if args.config:  # full endpoint definitions (timeouts, prices, judges) from the file
        file_eps = {ep.name: ep for ep in load_config(args.config).endpoints}
        stored_eps = {e["name"]: e for e in config["endpoints"]}
        stored_eps.update({name: msgspec.to_builtins(ep) for name, ep in file_eps.items()})
        config["endpoints"] = list(stored_eps.values())
    speed = {k: getattr(args, k) for k in ("max_concurrency", "reference_latency_s")
             if getattr(args, k) is not None}
    return load_config(None, {**config, **speed}), path


def cmd_run(args: argparse.Namespace) -> int:
    from sweepbench.results.report import build_report, render
    from sweepbench.results.store import RunStore

    if args.resume:
        cfg, out_path = _resume_config(args)
    else:
        cfg, out_path = _config(args), args.out
    outcome = _run_sweep(cfg, out_path, not args.no_progress, retry_errors=args.retry_errors,
                         shard=args.shard)
    resumed = (f" ({outcome.resumed} resumed from their journal, {outcome.replayed_calls} "
               "recorded model calls reused)" if outcome.resumed else "")
    err.print(f"run {outcome.run_id}: {outcome.episodes} episodes run{resumed}, {outcome.skipped} "
              f"already finished in the store, {outcome.errors} ended in error; "
              f"store: {outcome.store_path}")
    with RunStore(outcome.store_path) as store:
        report = build_report(store, outcome.run_id)
        if outcome.errors:
            reasons = Counter(r.error for r in store.episodes(outcome.run_id)
                              if r.termination == "error")
            err.print("[yellow]episodes that ended in error (counted as failures):[/yellow]")
            for why, n in reasons.most_common(5):
                err.print(f"  {n} x {why}")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        out.print(render(report))
    return 0


def _prices(config: str | None) -> dict | None:
    """Per-model prices from a config's endpoints (the report prices tokens with them)."""
    return {ep.name: ep for ep in load_config(config).endpoints} if config else None


def cmd_report(args: argparse.Namespace) -> int:
    from sweepbench.errors import ReportError
    from sweepbench.results.report import build_report, render
    from sweepbench.results.store import RunStore

    path = Path(args.path)
    if not path.is_file():
        err.print(f"[red]no run store at {path}[/red]")
        return 2
    with RunStore(path, create=False) as store:
        try:
            report = build_report(store, args.run, method=args.method, judge=args.judge,
                                  k=args.k, prices=_prices(args.config), seed=args.seed)
        except ReportError as exc:
            err.print(f"[red]error:[/red] {exc}")
            return 2
    if args.html:
        from sweepbench.results.html import write_html

        write_html(report, args.html)
        err.print(f"wrote {args.html}")
    if args.json:
        print(json.dumps(report, indent=2))
    elif not args.html:
        out.print(render(report))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from sweepbench.results.export import export_results_csv, export_trajectories
    from sweepbench.results.store import RunStore

    if not (args.trajectories or args.csv):
        err.print("[red]error:[/red] name an output: --trajectories OUT.jsonl and/or --csv OUT.csv")
        return 2
    with RunStore(args.path, create=False) as store:
        run_id = args.run or store.latest_run_id()
        if args.trajectories:
            n = export_trajectories(store, run_id, args.trajectories)
            err.print(f"{n} trajectories -> {args.trajectories}")
        if args.csv:
            n = export_results_csv(store, run_id, args.csv)
            err.print(f"{n} rows -> {args.csv}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks import registry
    from sweepbench.results.store import RunStore

    benchmark = registry.get(args.benchmark)
    with RunStore(args.store) as store:
        for f in args.files:
            try:
                summary = benchmark.import_results(store, Path(f), run_id=args.run,
                                                   model=args.model, lang=args.lang)
            except (ImportFormatError, OSError) as exc:
                err.print(f"[red]error:[/red] {escape(f)}: {escape(str(exc))}")
                return 2
            err.print(f"{f}: run {summary.run_id}, {summary.episodes} episodes, "
                      f"{summary.judged} judged", markup=False)
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from sweepbench.results.store import RunStore

    cfg = _config(args, models=[args.model], trials=1, user_model="scripted/user")
    with tempfile.TemporaryDirectory() as tmp:
        outcome = _run_sweep(cfg, args.out or Path(tmp) / "replay.sqlite", not args.no_progress)
        with RunStore(outcome.store_path) as store:
            judgments = [j for j in store.judgments(outcome.run_id) if j["method"] == JudgeMethod.STATE]
    failures = []
    for j in sorted(judgments, key=lambda j: j["episode_id"]):
        if not j["passed"]:
            details = j.get("details") or {}
            failure = {"task": EpisodeId.parse(j["episode_id"]).task.id, "why": details.get("why")}
            if details.get("unreachable"):
                failure["unreachable"] = True  # a defect of the task data, not of the harness
            failures.append(failure)
    result = {"tasks": len(judgments), "passed": len(judgments) - len(failures),
              "unreachable": sum("unreachable" in f for f in failures), "failures": failures}
    metrics = _mean_metrics([j.get("details") or {} for j in judgments])
    if metrics:
        result["metrics"] = metrics
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        out.print(f"{result['passed']}/{result['tasks']} tasks passed with {args.model}")
        for f in failures:
            out.print(f"  [red]FAIL[/red] {f['task']}: {f['why']}")
    return 0 if not failures else 1


def cmd_judge(args: argparse.Namespace) -> int:
    """Judge a stored run (again) with other judges; no agent or user model is called."""
    from sweepbench.results.store import RunStore
    from sweepbench.runner.sweep import Sweep, install_uvloop

    args.resume = args.run
    cfg, path = _resume_config(args)
    overrides = {"judge_models": args.judge_model, "judge_methods": args.method,
                 "judge_concurrency": args.judge_concurrency}
    cfg = msgspec.structs.replace(cfg, **{k: v for k, v in overrides.items() if v})
    cfg = load_config(None, msgspec.to_builtins(cfg))  # validates the judge options

    async def judge():
        with RunStore(path) as store:
            return await Sweep(cfg, store).run(episodes=False)

    install_uvloop()
    outcome = asyncio.run(judge())
    err.print(f"run {outcome.run_id}: {outcome.judged} judgments made "
              f"({', '.join(f'{m} / {meth}' for m, meth in cfg.judges())}); store: {path}")
    with RunStore(path) as store:
        rows = [j for j in store.judgments(outcome.run_id)]
    by_episode: dict[str, dict[tuple[str, str], bool | None]] = {}
    for j in rows:
        by_episode.setdefault(j["episode_id"], {})[(j["judge"], j["method"])] = j["passed"]
    for model, meth in cfg.judges()[1:]:
        state = (STATE_JUDGE, JudgeMethod.STATE)
        pairs = [(v[state], v[(model, meth)]) for v in by_episode.values()
                 if v.get(state) is not None and v.get((model, meth)) is not None]
        if pairs:
            agree = sum(a == b for a, b in pairs) / len(pairs)
            err.print(f"agreement of {model} / {meth} with the state check on task pass: "
                      f"{agree:.1%} over {len(pairs)} episodes")
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from sweepbench.errors import StoreError
    from sweepbench.results.merge import merge_stores

    try:
        counts = merge_stores(args.out, args.inputs)
    except StoreError as exc:
        err.print(f"[red]error:[/red] {exc}")
        return 2
    err.print(f"merged {len(args.inputs)} stores into {args.out}: " +
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
    from sweepbench.benchmarks.doubles import scripted_models
    from sweepbench.runner.refserver import ReferenceServer
    from sweepbench.runner.sweep import tune_gc
    from sweepbench.simulator.scripted.models import SCRIPTED_MODELS

    tune_gc()
    server = ReferenceServer(scripted_models(), host=args.host, port=args.port,
                             models=SCRIPTED_MODELS, latency=args.latency, faults=args.faults,
                             seed=args.seed, rpm_limit=args.rpm, tpm_limit=args.tpm,
                             outage=args.outage)
    server.run_forever()
    return 0


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
            out.print(f"{r['domain']:<10} {r['type']:<8} {r['name']}", markup=False)
        extra = (f"; dependency graph: {graph['edges']} edges, density {graph['density']:.3f}"
                 if graph else "")
        out.print(f"{len(rows)} tools{extra}")
    return 0


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
            out.print(f"{t.id:<16} {t.domain:<10} {t.instructions[:90]}", markup=False)
        out.print(f"{len(tasks)} tasks")
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


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sweepbench",
        description="Run interactive tool-use agent benchmarks (VitaBench, T1-Bench) at scale.")
    parser.add_argument("--version", action="version", version=f"sweepbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("run", help="run a sweep (no arguments: the embedded offline default)")
    _add_sweep_options(p)
    p.add_argument("--resume", metavar="RUN", help="continue a stored run (a store path or a run "
                   "id under runs/) with the config it was started with")
    p.add_argument("--judge-model", action="append", metavar="NAME",
                   help="LLM judge while the sweep runs, e.g. scripted/judge (repeatable; the "
                        "state check always runs)")
    p.add_argument("--judge-method", action="append", dest="judge_methods",
                   choices=LLM_JUDGE_METHODS,
                   help="LLM judge method (repeatable; default: sliding for VitaBench, likert "
                        "for T1)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("report", help="leaderboard of a run store (table, JSON or HTML)")
    p.add_argument("path", help="run store (SQLite file)")
    p.add_argument("--run", metavar="RUN_ID", help="run id (default: the latest in the store)")
    p.add_argument("--judge", help="judge to score by (default: the one with most verdicts)")
    p.add_argument("--method", help="judge method to score by (default: the most common)")
    p.add_argument("--k", type=int, help="k for Avg@k / Pass@k / Pass^k (default: trials per task)")
    p.add_argument("--config", metavar="FILE", help="config whose endpoint prices cost the tokens")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report with plots")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("export", help="trajectories as JSONL, results as CSV")
    p.add_argument("path", help="run store (SQLite file)")
    p.add_argument("--run", metavar="RUN_ID", help="run id (default: the latest in the store)")
    p.add_argument("--trajectories", metavar="OUT.jsonl", help="one episode record per line")
    p.add_argument("--csv", metavar="OUT.csv", help="one row per episode with judgment columns")
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

    p = sub.add_parser("judge", help="judge a stored run again with other judges or methods "
                                     "(no agent or user model calls)")
    p.add_argument("run", metavar="RUN", help="a run store path, or a run id under runs/")
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
    p.set_defaults(func=cmd_judge)

    p = sub.add_parser("merge", help="combine run stores (e.g. the shards of one sweep)")
    p.add_argument("out", help="output store (created if missing)")
    p.add_argument("inputs", nargs="+", help="input stores")
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser("serve", help="the OpenAI-compatible reference server of scripted models")
    p.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--latency", type=_checked(LatencySpec.parse), metavar="SPEC",
                   help="answer latency: seconds, or fixed:S, uniform:LO,HI, "
                        "lognormal:median=M,sigma=S[,max=X] (seeded)")
    p.add_argument("--faults", type=_checked(FaultSpec.parse), metavar="SPEC",
                   help="faults per request, e.g. 429=0.1,500=0.05,timeout=0.02,reset=0.01,"
                        "garbage=0.01 (kinds: 429 500 502 503 timeout reset garbage overflow "
                        "length)")
    p.add_argument("--seed", type=int, default=0, help="seed of fault and latency draws (default 0)")
    p.add_argument("--rpm", type=_positive_int, metavar="N",
                   help="enforce N requests per minute per model (429 with Retry-After beyond)")
    p.add_argument("--tpm", type=_positive_int, metavar="N",
                   help="enforce N estimated tokens per minute per model")
    p.add_argument("--outage", type=_checked(parse_outage, result=True), metavar="START,DURATION",
                   help="answer 503 for DURATION seconds from START seconds after starting")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("tools", help="list a benchmark's tools")
    p.add_argument("--benchmark", default="vitabench:delivery,instore,ota", metavar="SPEC",
                   help="benchmark spec (default: all 66 VitaBench tools)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tools)

    p = sub.add_parser("tasks", help="list a benchmark's tasks")
    p.add_argument("--benchmark", default="vitabench:delivery", metavar="SPEC")
    p.add_argument("--data-dir", metavar="DIR")
    p.add_argument("--lang", choices=["en", "zh"], default="en")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tasks)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = ["run"]
    args = build_parser().parse_args(argv)
    if not getattr(args, "func", None):
        build_parser().print_help()
        return 2
    try:
        return args.func(args)
    except SweepbenchError as exc:  # every deliberate error: one line, no traceback
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        return 2
    except KeyboardInterrupt:
        err.print("interrupted; re-run the same command to continue where it stopped")
        return 130


if __name__ == "__main__":
    sys.exit(main())
