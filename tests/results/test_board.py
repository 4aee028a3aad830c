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


def _board():
    """Four episode rows judged by the state check: A passes t1 and x, fails t2; B's episode
    ended in error (no judgment)."""
    from types import SimpleNamespace

    import numpy as np

    from sweepbench.ids import STATE_JUDGE
    from sweepbench.results.board import Board
    from sweepbench.results.judged import Judged
    from sweepbench.results.sources import Source

    def row(key, name, bench, task, status="done"):
        return {"episode_key": key, "name": name, "benchmark": bench, "domain": "d",
                "lang": "en", "task_id": task, "trial": 0, "status": status,
                "unreachable": None}

    rows = [row("k0", "A", "vb", "t1"), row("k1", "A", "vb", "t2"),
            row("k2", "B", "vb", "t1", "error"), row("k3", "A", "t1b", "x")]
    judged = Judged(len(rows), np.arange(len(rows)))
    for i, passed, score in ((0, True, None), (1, False, 0.25), (3, True, 0.75)):
        judged.add(i, STATE_JUDGE, "state", passed, score, {})
    judged.flush()
    source = Source(judge=STATE_JUDGE, method="state", label="the state check")
    return Board(SimpleNamespace(rows=rows), judged, {"vb": source, "t1b": source}, k=None,
                 n_boot=10, seed=0, correction="holm")


def test_the_outcomes_one_by_one_are_the_columns_exactly():
    got = _board().outcome_list()
    assert got == [
        Outcome(model="A", domain="d", task_key="vb:d:en:t1", trial=0, passed=True,
                error=False, score=1.0, benchmark="vb", unjudged=False),
        Outcome(model="A", domain="d", task_key="vb:d:en:t2", trial=0, passed=False,
                error=False, score=0.25, benchmark="vb", unjudged=False),
        Outcome(model="B", domain="d", task_key="vb:d:en:t1", trial=0, passed=False,
                error=True, score=None, benchmark="vb", unjudged=False),
        Outcome(model="A", domain="d", task_key="t1b:d:en:x", trial=0, passed=True,
                error=False, score=0.75, benchmark="t1b", unjudged=False)]
    assert [type(o.trial) for o in got] == [int] * 4 and type(got[0].passed) is bool


def test_cost_per_row_and_benchmark_per_episode_and_per_pass_and_unpriced_roles():
    import numpy as np

    from sweepbench.results.call_side import CallSide

    board = _board()
    costs = np.array([[1.0, 0.5, 0.25], [2.0, 0.0, 0.0], [4.0, 0.0, 0.0], [0.125, 0.0, 0.0]])
    unpriced = np.zeros((4, 3), dtype=bool)
    unpriced[2, 2] = True  # B's judge made an unpriced call
    profiles = {("A",): {"turns": 3, "domains": {"d": {"turns": 2}, "gone": {"turns": 9}}},
                ("A", "vb"): {"turns": 4}}
    board.add_call_side(CallSide(costs, unpriced, np.ones(4, dtype=bool), {}, profiles, {},
                                 {}, []))
    assert board._cost == {
        ("A",): {"agent": 3.125, "user": 0.5, "judge": 0.25, "total": 3.875,
                 "per_episode": 3.875 / 3, "per_pass": 3.875 / 2},
        ("A", "t1b"): {"agent": 0.125, "user": 0.0, "judge": 0.0, "total": 0.125,
                       "per_episode": 0.125, "per_pass": 0.125},
        ("A", "vb"): {"agent": 3.0, "user": 0.5, "judge": 0.25, "total": 3.75,
                      "per_episode": 3.75 / 2, "per_pass": 3.75},
        ("B",): {"agent": 4.0, "user": 0.0, "judge": None, "total": None,
                 "per_episode": None, "per_pass": None},
        ("B", "vb"): {"agent": 4.0, "user": 0.0, "judge": None, "total": None,
                      "per_episode": None, "per_pass": None}}
    models = board.overall()
    assert models["A"]["cost"] == board._cost[("A",)] and models["B"]["cost"] == \
        board._cost[("B",)]
    assert models["A"]["profile"] == {"turns": 3}
    assert models["A"]["domains"]["d"]["profile"] == {"turns": 2}
    assert "gone" not in models["A"]["domains"] and "profile" not in models["B"]
    assert board.benchmarks()["vb"]["models"]["A"]["profile"] == {"turns": 4}
    assert board.benchmarks()["t1b"]["models"]["A"]["cost"] == board._cost[("A", "t1b")]
    untouched = _board()  # a row that made no call: counted as an episode, no cost scope
    untouched.add_call_side(CallSide(costs * [[1], [1], [1], [0]], unpriced,
                                     np.array([True, True, True, False]), {}, None, {}, {}, []))
    assert ("A", "t1b") not in untouched._cost and untouched._cost[("A",)]["per_episode"] == \
        3.75 / 3
    assert "profile" not in untouched.overall()["A"]
    early = _board()  # entries made first (as a report does while the calls are read)
    models, leaderboards = early.overall(), early.benchmarks()
    assert models["A"]["cost"] is None and "profile" not in models["A"]
    early.add_call_side(CallSide(costs, unpriced, np.ones(4, dtype=bool), {}, profiles, {},
                                 {}, []))
    early.fill_call_side(models, leaderboards)
    # the same entries, keys in the same order, as when the call side came first
    assert repr(models) == repr(board.overall())
    assert repr(leaderboards) == repr(board.benchmarks())
