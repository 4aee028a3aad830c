"""The commands over a benchmark's own material, no model involved: ``tools`` (its tools),
``tools call`` (tool calls run from fresh task states) and ``tasks`` (its tasks)."""

from __future__ import annotations

import argparse
import json
import sys

from sweepbench.cli.common import chosen_spec, out, say, say_error
from sweepbench.errors import ConfigError, SweepbenchError
from sweepbench.results.text import json_text


def cmd_tools(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks import registry
    from sweepbench.benchmarks.catalog import BenchmarkSpec

    spec = BenchmarkSpec.parse(chosen_spec(args, args.benchmark))
    benchmark = registry.get(spec.benchmark)
    toolkit = benchmark.toolkit_for_domains(spec.domains)
    rows = [{"name": t.name, "domain": t.domain, "type": t.kind} for t in toolkit.tools.values()]
    graph = benchmark.tools_summary(toolkit)
    if args.json:
        print(json.dumps({"tools": rows, **graph}, indent=2))
    else:
        for r in rows:
            say(out, f"{r['domain']:<10} {r['type']:<8} {r['name']}")
        extra = (f"; dependency graph: {graph['edges']} edges, density {graph['density']:.3f}"
                 if graph else "")
        say(out, f"{len(rows)} tools{extra}")
    return 0


def cmd_tools_call(args: argparse.Namespace) -> int:
    """Run call sequences (one JSON object per line) from fresh episode states; one JSON line
    out per sequence. A bad line is reported on stderr, naming it, and the run goes on."""
    from sweepbench.benchmarks import registry
    from sweepbench.benchmarks.catalog import load_tasks

    benchmark = registry.get(chosen_spec(args, args.call_benchmark))
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
                say_error(f"{args.sequences} line {number}: {exc}")
                continue
            print(json_text(json.dumps({"key": seq.get("key"), **ran}, ensure_ascii=False)), flush=True)
    return 1 if failed else 0


def cmd_tasks(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks import registry
    from sweepbench.benchmarks.catalog import BenchmarkSpec, load_tasks

    spec = BenchmarkSpec.parse(chosen_spec(args, args.benchmark))
    tasks = load_tasks(spec, data_dir=args.data_dir, lang=args.lang)
    if args.json:
        summary = registry.get(spec.benchmark).tasks_summary(spec.domains, tasks)
        print(json.dumps({"benchmark": spec.benchmark, **(
            summary if summary is not None else {"total": len(tasks), "tasks": [
                {"id": t.id, "domain": t.domain, "lang": t.lang} for t in tasks]})}, indent=2))
    else:
        for t in tasks:
            say(out, f"{t.id:<16} {t.domain:<10} {' '.join(t.instructions.split())[:90]}",
                one_line=True)
        say(out, f"{len(tasks)} tasks of {spec} ({args.lang})")
    return 0
