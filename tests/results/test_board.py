"""``results/board.py``'s parts of its own: the entry of a row with nothing scored, and a row's
short summary (its outcomes without the unreachable tasks). The leaderboards themselves are
checked through whole reports (tests/results/test_report.py, test_report_facts.py)."""

from __future__ import annotations

import msgspec

from sweepbench.results.board import _short, empty_entry
from sweepbench.results.outcome_columns import OutcomeColumns
from sweepbench.results.stats import ModelStats, Outcome, summarize


def test_an_empty_entry_has_every_field_of_a_scored_row_and_nothing_counted():
    entry = empty_entry()
    assert list(entry) == [f.name for f in msgspec.structs.fields(ModelStats)]
    counts = ("tasks", "incomplete_tasks", "episodes", "passed", "errors", "unjudged", "scored")
    assert {f: entry[f] for f in counts} == dict.fromkeys(counts, 0)
    assert all(type(entry[f]) is int for f in counts)
    tables = ("intervals", "domains", "benchmarks")
    assert [entry[f] for f in tables] == [{}, {}, {}]
    assert all(entry[f] is None for f in entry if f not in counts + tables)
    assert empty_entry() is not entry and empty_entry()["domains"] is not entry["domains"]


def _outcomes(n_tasks: int, trials: int) -> OutcomeColumns:
    return OutcomeColumns.of(
        Outcome(model="m", domain="d", task_key=f"vitabench:d:en:t{t}", trial=i,
                passed=(t + i) % 3 == 0, benchmark="vitabench")
        for t in range(n_tasks) for i in range(trials))


def test_a_short_summary_is_the_rows_stats_at_the_leaderboards_k():
    outcomes = _outcomes(4, 3)
    got = _short(outcomes, 2)
    [stats] = summarize(outcomes, k=2).values()
    assert got == {f: getattr(stats, f) for f in (
        "k", "tasks", "incomplete_tasks", "episodes", "passed", "avg", "pass_at_k",
        "pass_hat_k", "ci95")}
    assert (got["k"], got["tasks"], got["episodes"], got["passed"]) == (2, 4, 12, 4)
    assert got["avg"] == 4 / 12 and got["pass_at_k"] is not None
    assert _short(outcomes, 3)["k"] == 3


def test_a_short_summary_of_no_outcomes_is_none():
    assert _short(_outcomes(0, 0), 2) is None
