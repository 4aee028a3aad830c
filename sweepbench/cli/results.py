"""The commands over stored results: ``report`` (leaderboards), ``export`` (tables,
trajectories, inspect_ai logs), ``import`` (another harness's result files) and ``merge``
(run stores combined)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sweepbench.cli.common import (
    endpoint_prices,
    err,
    open_store,
    out,
    say,
    say_error,
    warn_damaged,
)
from sweepbench.errors import ConfigError, ImportFormatError


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

    from sweepbench.benchmarks.registry import benchmark_info
    from sweepbench.errors import ReportError
    from sweepbench.results.report import build_report, render

    for p in args.paths:
        if not Path(p).is_file():
            say_error(f"no run store at {p}")
            return 2
    with ExitStack() as stack:
        stores = [stack.enter_context(open_store(p, read_only=True)) for p in args.paths]
        try:
            report = build_report(stores, method=args.method, judge=args.judge, k=args.k,
                                  prices=endpoint_prices(args.config), seed=args.seed,
                                  correction=args.correction,
                                  selection=_selection(args), benchmarks=benchmark_info())
        except ReportError as exc:
            say_error(str(exc))
            return 2
    warn_damaged(report["damaged"])
    if args.html:
        from sweepbench.results.render.html import write_html

        write_html(report, args.html)
        say(err, f"wrote {args.html}")
    if args.json:
        print(json.dumps(report, indent=2))
    elif not args.html:
        out.print(render(report))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks.registry import benchmark_info
    from sweepbench.results.export.writers import (
        columns_doc,
        export_results_csv,
        export_tables,
        export_trajectories,
    )

    if args.columns:
        print(columns_doc())
        return 0
    if args.path is None:
        say_error("name the run store to export")
        return 2
    if not (args.trajectories or args.csv or args.tables or args.inspect):
        say_error("name an output: --tables DIR, --inspect DIR, "
              "--trajectories OUT.jsonl and/or --csv OUT.csv")
        return 2
    with open_store(args.path, read_only=True) as store:
        if args.tables:
            formats = tuple(args.format or ["parquet", "csv", "jsonl"])
            for path, n in export_tables(store, args.run, args.tables, formats,
                                         benchmarks=benchmark_info()).items():
                say(err, f"{n} rows -> {path}")
        if args.trajectories:
            n = export_trajectories(store, args.run, args.trajectories)
            say(err, f"{n} trajectories -> {args.trajectories}")
        if args.csv:
            n = export_results_csv(store, args.run, args.csv, benchmarks=benchmark_info())
            say(err, f"{n} rows -> {args.csv}")
        if args.inspect:
            from sweepbench.results.export.inspect_log import export_inspect
            from sweepbench.results.selection import Selection, load_view

            paths = export_inspect(store, load_view([store], Selection(run_id=args.run)),
                                   args.inspect, benchmarks=benchmark_info())
            say(err, f"{len(paths)} inspect_ai logs -> {args.inspect} (inspect view "
                     f"--log-dir {args.inspect})")
        warn_damaged([f"run store {store.path}: {d}" for d in store.damaged])
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks import registry

    benchmark = registry.get(args.benchmark)
    with open_store(args.store, create=True) as store:
        for f in args.files:
            try:
                summary = benchmark.import_results(store, Path(f), run_id=args.run,
                                                   model=args.model, lang=args.lang)
            except (ImportFormatError, OSError) as exc:
                say_error(f"{f}: {exc}")
                return 2
            say(err, f"{f}: run {summary.run_id}, {summary.episodes} episodes, "
                     f"{summary.judged} judged")
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from sweepbench.errors import StoreError
    from sweepbench.store.merge import merge_stores

    try:
        counts = merge_stores(args.out, args.inputs)
    except StoreError as exc:
        say_error(str(exc))
        return 2
    records = counts.pop("records_left_out", 0)
    rows = counts.pop("journal_rows_left_out", 0)
    say(err, f"merged {len(args.inputs)} stores into {args.out}: " +
        ", ".join(f"{n} {t}" for t, n in counts.items()))
    if records or rows:
        warn_damaged([f"left out what does not decode: {records} episode records (their "
                      f"episodes are copied unfinished: a run continues them from their "
                      f"journals) and {rows} journal rows (each journal is kept up to its first "
                      "such row)"])
    return 0
