"""A plan's history from the store's facts (schema 6, SQL aggregates) is the history the
journals and the records give: the same sums per task, endpoint latencies and overheads."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sweepbench.runner.plan_history import History
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.reads import StoreReads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "results"))
from test_report_facts import odd_store  # noqa: E402


def _history(path: Path, facts: bool, monkeypatch) -> History:
    with monkeypatch.context() as m:
        if not facts:
            m.setattr(StoreReads, "has_facts", property(lambda self: False))
        with ReadOnlyStore(path) as store:
            return History(store), sorted(store.call_counts())


def test_a_plans_history_from_facts_is_the_journals(tmp_path, monkeypatch):
    odd_store(tmp_path / "odd.sqlite")
    (facts, counts_f), (journals, counts_j) = (
        _history(tmp_path / "odd.sqlite", f, monkeypatch) for f in (True, False))
    assert counts_f == counts_j and counts_f
    assert set(facts.by_task) == set(journals.by_task) and facts.by_task
    for k, cell in journals.by_task.items():  # calls and tokens: integers, summed exactly
        assert (facts.by_task[k].n, facts.by_task[k].roles, facts.by_task[k].judges) == \
            (cell.n, cell.roles, cell.judges)
        assert facts.by_task[k].overhead_s == pytest.approx(cell.overhead_s, rel=1e-12)
    assert any(c.judges for c in facts.by_task.values())
    assert {k: (c.n, t) for k, (c, t) in facts.by_bench.items()} == \
        {k: (c.n, t) for k, (c, t) in journals.by_bench.items()}
    assert facts.latency == pytest.approx(journals.latency, rel=1e-12) and facts.latency
    assert facts.overhead == pytest.approx(journals.overhead, rel=1e-12)


def test_an_episode_without_facts_is_read_from_its_record(tmp_path, monkeypatch):
    """A finished episode whose facts row is missing (a record written outside the store)
    still counts, its time outside its calls read from its record."""
    import sqlite3

    odd_store(tmp_path / "odd.sqlite")
    db = sqlite3.connect(tmp_path / "odd.sqlite")
    with db:
        (key,) = db.execute("SELECT episode_key FROM episode_facts ORDER BY episode_key "
                            "LIMIT 1").fetchone()
        db.execute("DELETE FROM episode_facts WHERE episode_key = ?", (key,))
    db.close()
    (facts, _), (journals, _) = (_history(tmp_path / "odd.sqlite", f, monkeypatch)
                                 for f in (True, False))
    assert {k: c.n for k, c in facts.by_task.items()} == \
        {k: c.n for k, c in journals.by_task.items()}
    for k, cell in journals.by_task.items():
        assert facts.by_task[k].overhead_s == pytest.approx(cell.overhead_s, rel=1e-12)
