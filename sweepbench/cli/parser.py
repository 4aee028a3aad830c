"""The ``sweepbench`` argument parser: every command's options, their help texts and the
argument types that check values where they enter (a bad one is a usage error, exit 2, before
anything runs). Each command's function lives in its group's module; the parser only points
at it."""

from __future__ import annotations

import argparse
import math
import sys
from typing import NoReturn

from sweepbench import __version__
from sweepbench.cli import data, results, run, serve, tools
from sweepbench.cli.common import (BUDGET_EXIT, FAILING_EXIT, STUCK_EXIT, UNDECIDED_EXIT,
                                   say_error)
from sweepbench.config import INT64
from sweepbench.devserver.faults import FaultSpec, LatencySpec, parse_outage
from sweepbench.ids import JudgeMethod, UserMode, WorkOrder
from sweepbench.runner.work import DEFAULT_STORE

LLM_JUDGE_METHODS = [m.value for m in JudgeMethod if m != JudgeMethod.STATE]


def checked(parse, *, result: bool = False):  # noqa: ANN001, ANN201
    """An argparse type that validates with ``parse`` (ValueError -> a usage error)."""
    def check(text: str):  # noqa: ANN202
        try:
            parsed = parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return parsed if result else text
    return check


def _number(text: str, *, strict: bool) -> float:
    """A finite number >= 0 (> 0 when ``strict``); NaN and infinity are refused."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (value > 0 if strict else value >= 0):
        raise argparse.ArgumentTypeError(f"must be {'>' if strict else '>='} 0, got {text}")
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number >= 0 (a money cap, a latency)."""
    return _number(text, strict=False)


def positive_float(text: str) -> float:
    """A finite number > 0 (a time limit)."""
    return _number(text, strict=True)


def _integer(text: str, low: int) -> int:
    """An integer from ``low`` to the largest 64-bit one (what the store can hold)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
    if value > INT64[1]:
        raise argparse.ArgumentTypeError(f"must be <= {INT64[1]}, got {value}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    return _integer(text, 1)


def non_negative_int(text: str) -> int:
    """An integer >= 0 (a count that may be none, a seed)."""
    return _integer(text, 0)


def port_number(text: str) -> int:
    """A TCP port, 0..65535 (0: any free port)."""
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
        say_error(f"{self.prog}: {message} (see {self.prog} --help)")
        sys.exit(2)


def _add_sweep_options(p: argparse.ArgumentParser, *, models: bool = True) -> None:
    p.add_argument("--benchmark", action="append", metavar="SPEC",
                   help="benchmark spec, e.g. vitabench:delivery (repeatable; default from config)")
    if models:
        p.add_argument("--model", action="append", metavar="NAME",
                       help="agent model: an endpoint name from the config, provider/model "
                            "(openai/gpt-4.1-mini, anthropic/..., gemini/..., deepseek/..., "
                            "openrouter/..., together/..., vllm/..., ollama/..., "
                            "openai-api/SERVICE/MODEL; key from PROVIDER_API_KEY, base URL "
                            "overridden by PROVIDER_BASE_URL) or scripted/oracle, "
                            "scripted/noisy:P, scripted/chaos (repeatable)")
        p.add_argument("--user-model", metavar="NAME", help="user-simulator model, named as "
                       "--model (default scripted/user)")
        p.add_argument("--user-mode", choices=[m.value for m in UserMode],
                       help="VitaBench user mode: persona user (default), neutral user (persona "
                            "removed) or solo agent (a relay user says the whole instruction once)")
        p.add_argument("--trials", "--epochs", dest="trials", type=positive_int, metavar="K",
                       help="trials per (model, task) (default 4); --epochs is inspect's name "
                            "for the same")
    p.add_argument("--max-concurrency", type=positive_int, metavar="N",
                   help="episodes making requests at once (default 64; while one sleeps before "
                        "a retry its slot may run another: lend_slots in the config)")
    p.add_argument("--data-dir", metavar="DIR",
                   help="benchmark data dir (default $SWEEPBENCH_DATA, else the built-in samples)")
    p.add_argument("--lang", choices=["en", "zh"], help="task language (default en)")
    p.add_argument("--task", action="append", dest="task_ids", metavar="ID", help="only this task id (repeatable)")
    p.add_argument("--limit", type=positive_int, metavar="N",
                   help="only the first N tasks of each benchmark, each run --trials times "
                        "(unlike inspect's --limit, which counts samples over the whole eval "
                        "and takes a range)")
    p.add_argument("--seed", type=non_negative_int, help="seed of the scripted models (default 0)")
    p.add_argument("--latency", type=non_negative_float, dest="reference_latency_s", metavar="S",
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
    _add_release_options(p)


def _add_release_options(p: argparse.ArgumentParser) -> None:
    """Which upstream release of a benchmark with several (VitaBench), and its prompts."""
    p.add_argument("--release", metavar="NAME",
                   help="upstream release of every benchmark that has releases: VitaBench "
                        "2025-12 (the current one, upstream 742e240; the default) or 2025-11 "
                        "(the November 2025 release, upstream 96f3b85); also spelled "
                        "vitabench@2025-11 in a spec")
    p.add_argument("--prompts", choices=["upstream", "own"], default="upstream",
                   help="upstream: the data dir's upstream prompt templates and tool "
                        "descriptions, required with real task files (default); own: "
                        "sweepbench's own, marked in every report as not comparable with "
                        "published numbers")


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
    p.add_argument("--max-cost", type=non_negative_float, dest="max_cost_usd", metavar="USD",
                   help="spending cap over the sweep's episodes (stored calls included): no "
                        "episode starts once the spend plus what is in flight would pass it; "
                        f"exit status {BUDGET_EXIT}; a rerun with a higher cap continues")


def _add_adaptive_options(p: argparse.ArgumentParser) -> None:
    """`run` and `plan`: an adaptive sweep (docs/sweeps/adaptive.md), --trials its first trials."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--target-ci", type=positive_float, metavar="W",
                   help="adaptive: after --trials trials of every (model, task), add trials "
                        "where they narrow most until every model's 95%% interval of Avg@k "
                        "over these tasks has half-width <= W (e.g. 0.02), or a cap is hit; "
                        "exit status 0 only if the rule held (see --max-trials)")
    g.add_argument("--until-ranked", action="store_true",
                   help="adaptive: add trials to the models whose order is in doubt until "
                        "every pair of neighbours on each leaderboard is separated (paired "
                        "test, the report's correction) or, with --margin, shown closer than "
                        "M; exit status 0 only if the rule held (see --max-trials)")
    p.add_argument("--margin", type=positive_float, metavar="M",
                   help="with --until-ranked: neighbours shown to differ by less than M "
                        "(e.g. 0.02) count as ranked")
    p.add_argument("--max-trials", type=positive_int, metavar="N",
                   help="adaptive: trials of one (model, task) at most (default 32); the "
                        f"rule not held when nothing more can be added: exit status "
                        f"{UNDECIDED_EXIT}; trials that get no verdict however often they "
                        f"run (no judge for the headline): {STUCK_EXIT}")


def _add_inspect_options(p: argparse.ArgumentParser) -> None:
    """`run` and `plan`: options named as inspect names them, where the meaning is the same,
    and the prices of provider models."""
    p.add_argument("--max-connections", type=positive_int, metavar="N",
                   help="requests in flight per endpoint at most, replacing every endpoint's "
                        "max_concurrency (as inspect's; --max-concurrency counts episodes)")
    p.add_argument("--token-limit", type=positive_int, metavar="N",
                   help="tokens the agent may use in one episode (prompt + completion over its "
                        "calls; the user simulator's and judge's not counted); past it the "
                        "episode ends as token_limit and fails")
    p.add_argument("--time-limit", type=positive_float, dest="time_limit_s", metavar="S",
                   help="wall-clock seconds one episode may run; past it the episode ends as "
                        "time_limit and fails")
    p.add_argument("--prices", metavar="FILE",
                   help="prices of provider/model names ([models.\"openai/gpt-4.1\"] input, "
                        "cached_input, output dollars per million tokens) over the shipped "
                        "table")


def _add_fail_fast_options(p: argparse.ArgumentParser) -> None:
    """`run` only: the checks that stop a broken setup early."""
    p.add_argument("--no-preflight", action="store_true",
                   help="do not send the one request per endpoint that checks, before any "
                        "episode starts, that it is up and takes the key (key variables and "
                        "URLs are still checked)")
    p.add_argument("--error-streak", type=non_negative_int, metavar="N",
                   help="stop starting episodes when the last N finished episodes all ended in "
                        f"error (default 20; 0: never); exit status {FAILING_EXIT}")


def _add_scaleout_options(p: argparse.ArgumentParser) -> None:
    """The sweep on a Ray cluster (the ``ray`` extra): docs/sweeps/scaleout.md."""
    p.add_argument("--workers", type=positive_int, metavar="N",
                   help="run the episodes on N worker processes of a Ray cluster (a local one "
                        "of this machine's cores, or --ray's); the store, the work list and "
                        "the endpoints' limits stay with this process (needs the ray extra)")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="join the Ray cluster at ADDRESS (auto, host:port, ray://...; default "
                        "$RAY_ADDRESS with --workers) instead of starting a local one")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="sweepbench",
        description="Run interactive tool-use agent benchmarks (VitaBench, T1-Bench) at scale.")
    parser.add_argument("--version", action="version", version=f"sweepbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for name, about, func in (
            ("run", "run a sweep (no arguments: the embedded offline default)", run.cmd_run),
            ("plan", "what `run` with the same options would do: episodes, requests, tokens, "
                     "dollars and wall time, before spending", run.cmd_plan)):
        p = sub.add_parser(name, help=about)
        _add_sweep_options(p)
        _add_run_options(p)
        _add_adaptive_options(p)
        _add_inspect_options(p)
        _add_scaleout_options(p)
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
    p.add_argument("--k", type=positive_int, help="one k for Avg@k / Pass@k / Pass^k on every "
                   "leaderboard; rows with tasks of fewer scored trials are marked incomplete "
                   "(default: the fewest scored trials of any task of any row)")
    p.add_argument("--correction", choices=("holm", "bh"), default="holm",
                   help="adjust the paired comparisons' p-values over each leaderboard's "
                        "family of pairs: holm (family-wise error, default) or bh "
                        "(Benjamini-Hochberg, false discovery rate)")
    p.add_argument("--config", metavar="FILE", help="price calls with this config's endpoint "
                                                     "prices instead of the stored ones")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of the comparisons' bootstrap and sign flips (default 0)")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report with plots")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=results.cmd_report)

    p = sub.add_parser(
        "export", help="episodes, calls and judgments as Parquet / CSV / JSONL; trajectories; "
                       "inspect_ai logs",
        epilog="Columns: `sweepbench export --columns` prints them with their types and "
               "meanings (also in docs/results/exports.md).")
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
    p.set_defaults(func=results.cmd_export)

    p = sub.add_parser("import", help="import another harness's result files (upstream "
                                      "VitaBench's) into a store")
    p.add_argument("store", help="run store to import into (created if missing)")
    p.add_argument("files", nargs="+", help="result files, e.g. upstream VitaBench simulation JSON")
    p.add_argument("--benchmark", default="vitabench",
                   help="benchmark whose importer reads the files (default vitabench)")
    p.add_argument("--run", metavar="RUN_ID", help="run id to import into (default: derived)")
    p.add_argument("--model", help="model name (default: from the file)")
    p.add_argument("--lang", choices=["en", "zh"], help="task language (default: detected)")
    p.set_defaults(func=results.cmd_import)

    p = sub.add_parser("replay", help="run every task with scripted/oracle through the full path "
                                      "and the state check")
    _add_sweep_options(p, models=False)
    p.add_argument("--model", default="scripted/oracle", help="agent model (default scripted/oracle)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run.cmd_replay)

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
    p.add_argument("--judge-concurrency", type=positive_int, metavar="N", help="episodes judged at once")
    p.add_argument("--config", metavar="FILE", help="config with the judge endpoints' definitions")
    p.add_argument("--max-concurrency", type=positive_int, help=argparse.SUPPRESS)
    p.add_argument("--latency", type=non_negative_float, dest="reference_latency_s", metavar="S",
                   help="latency of the built-in reference server's models, seconds")
    p.set_defaults(func=run.cmd_judge, benchmark=None)

    p = sub.add_parser("merge", help="combine run stores (shards of one sweep, or stores "
                                     "grown apart): every episode, run and price is kept")
    p.add_argument("out", help="output store (created if missing)")
    p.add_argument("inputs", nargs="+", help="input stores")
    p.set_defaults(func=results.cmd_merge)

    p = sub.add_parser("serve", help="the OpenAI-compatible reference server of scripted models",
                       description="The OpenAI-compatible reference server of scripted models "
                       "(test doubles, not model results). The default benchmark set's tasks "
                       "are loaded before it listens; other tasks on their first request.")
    p.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=port_number, default=8000,
                   help="port (default 8000; 0: any free)")
    p.add_argument("--latency", type=checked(LatencySpec.parse), metavar="SPEC",
                   help="answer latency: seconds, or fixed:S, uniform:LO,HI, "
                        "lognormal:median=M,sigma=S[,max=X] (seeded)")
    p.add_argument("--faults", type=checked(FaultSpec.parse), metavar="SPEC",
                   help="faults per request, e.g. 429=0.1,500=0.05,timeout=0.02,reset=0.01,"
                        "garbage=0.01 (kinds: 429 500 502 503 timeout hang reset garbage overflow "
                        "length)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of fault and latency draws (default 0)")
    p.add_argument("--rpm", type=positive_int, metavar="N",
                   help="enforce N requests per minute per model and key (429 with "
                        "Retry-After beyond)")
    p.add_argument("--tpm", type=positive_int, metavar="N",
                   help="enforce N estimated tokens per minute per model and key")
    p.add_argument("--cache-entries", type=non_negative_int, default=200_000, metavar="N",
                   help="prefixes the simulated prompt cache holds (LRU; default 200000, "
                        "0: no cache)")
    p.add_argument("--outage", type=checked(parse_outage, result=True), metavar="START,DURATION",
                   help="answer 503 for DURATION seconds from START seconds after starting")
    p.set_defaults(func=serve.cmd_serve)

    p = sub.add_parser("view", help="browse run stores in a local web viewer (leaderboard, "
                                    "episode lists, conversations, judge windows)")
    p.add_argument("stores", nargs="+", metavar="STORE", help="run stores (SQLite files)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1; others need --allow-remote)")
    p.add_argument("--port", type=port_number, default=8765,
                   help="port (default 8765; 0: any free)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a non-loopback --host and answer requests for any host name")
    p.add_argument("--config", metavar="FILE",
                   help="config whose endpoint prices replace the prices the runs stored")
    p.set_defaults(func=serve.cmd_view)

    p = sub.add_parser("tools", help="list a benchmark's tools; `tools call` runs tool calls")
    p.add_argument("--benchmark", default="vitabench:delivery,instore,ota", metavar="SPEC",
                   help="benchmark spec (default: all 66 VitaBench tools)")
    p.add_argument("--json", action="store_true",
                   help="print JSON: the tools and the dependency graph's edges and density")
    _add_release_options(p)
    p.set_defaults(func=tools.cmd_tools)
    calls = p.add_subparsers(dest="tools_command", metavar="{call}")
    c = calls.add_parser(
        "call", help="run tool-call sequences, each from a fresh state of its task",
        description="Reads call sequences, one JSON object per line: {key, domain (one domain "
                    "or a comma composition), lang, task_id, calls: [{tool, args}]}; an "
                    "argument {\"$ref_step\": i} is the id of the record call i created. Prints "
                    "one JSON line per sequence: {key, results: [{content, error, created}], "
                    "final_state}; error is upstream's flag of a failed call (it counts "
                    "toward the episode's error limit where the release counts them).")
    c.add_argument("sequences", metavar="SEQUENCES.jsonl", help="the sequences ('-': stdin)")
    c.add_argument("--data-dir", metavar="DIR",
                   help="benchmark data dir (default $SWEEPBENCH_DATA, else the built-in samples)")
    c.add_argument("--benchmark", dest="call_benchmark", default="vitabench", metavar="NAME",
                   help="the benchmark whose tools run (default vitabench)")
    _add_release_options(c)
    c.set_defaults(func=tools.cmd_tools_call)

    p = sub.add_parser(
        "data", help="build a benchmark's data dir from its upstream's own files",
        description="Builds a data dir from an upstream checkout (a git clone of the "
                    "benchmark's repository at any commit) or its dataset release "
                    "(<domain>/tasks*.json): task files as they are, prompt templates "
                    "verbatim, tool descriptions parsed from upstream's schema files (never "
                    "run), the license, and manifest.json (upstream commit, the release the "
                    "files match, a sha256 per file). Refuses files of mixed releases; lists "
                    "task files the source lacks.")
    p.add_argument("data_benchmark", metavar="BENCHMARK", help="e.g. vitabench")
    p.add_argument("source", metavar="SOURCE", help="upstream checkout or dataset folder")
    p.add_argument("--out", metavar="DIR",
                   help="the benchmark's folder to create (default $SWEEPBENCH_DATA/BENCHMARK, "
                        "else ./data/BENCHMARK); must not exist or be empty")
    p.add_argument("--release", metavar="NAME",
                   help="the upstream release the files must be (default: told from them)")
    p.set_defaults(func=data.cmd_data)

    p = sub.add_parser("tasks", help="list a benchmark's tasks")
    p.add_argument("--benchmark", default="vitabench:delivery", metavar="SPEC",
                   help="benchmark spec, e.g. t1:single (default vitabench:delivery)")
    p.add_argument("--data-dir", metavar="DIR",
                   help="benchmark data dir (default $SWEEPBENCH_DATA, else the built-in samples)")
    p.add_argument("--lang", choices=["en", "zh"], default="en", help="task language (default en)")
    p.add_argument("--json", action="store_true",
                   help="print JSON: every task (for T1 the catalog: splits, tool counts, "
                        "knowledge-base rows)")
    _add_release_options(p)
    p.set_defaults(func=tools.cmd_tasks)
    return parser
