"""Helpers the command-line tests share: the leaderboard's numbers, one model's entry, a
command's JSON output, and the exit status of a command that may end in a usage error."""

from __future__ import annotations

import json

from sweepbench.cli import main

METRICS = ("k", "tasks", "episodes", "errors", "avg", "pass_at_k", "pass_hat_k", "state",
           "unjudged", "metrics")


def metrics(report: dict) -> dict:
    """Every benchmark's leaderboard numbers (not timings, which differ run to run)."""
    return {b: {m: {k: v.get(k) for k in METRICS} for m, v in bs["models"].items()}
            for b, bs in report["benchmarks"].items()}


def entry(report: dict, benchmark: str, model: str) -> dict:
    return report["benchmarks"][benchmark]["models"][model]


def run_json(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out)


def call(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse usage errors
        return int(exc.code)
