"""A plan's history from the store's facts (schema 6) is the history the journals and the
records give: the same shapes per episode, endpoint latencies and overheads."""

from __future__ import annotations

import sys
from pathlib import Path
from statistics import fmean

from sweepbench.runner.plan import _History
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.reads import StoreReads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "results"))
from test_report_facts import odd_store  # noqa: E402


def _history(path: Path, facts: bool, monkeypatch) -> _History:
    with monkeypatch.context() as m:
        if not facts:
            m.setattr(StoreReads, "has_facts", property(lambda self: False))
        with ReadOnlyStore(path) as store:
            return _History(store), sorted(store.call_counts())


def test_a_plans_history_from_facts_is_the_journals(tmp_path, monkeypatch):
    odd_store(tmp_path / "odd.sqlite")
    (facts, counts_f), (journals, counts_j) = (
        _history(tmp_path / "odd.sqlite", f, monkeypatch) for f in (True, False))
    assert counts_f == counts_j and counts_f
    assert set(facts.by_task) == set(journals.by_task) and facts.by_task
    for k, shapes in journals.by_task.items():
        assert [(s.roles, s.judges, s.overhead_s) for s in facts.by_task[k]] == \
            [(s.roles, s.judges, s.overhead_s) for s in shapes]
    assert any(s.judges for v in facts.by_task.values() for s in v)
    assert {e: fmean(v) for e, v in facts.latency.items()} == \
        {e: fmean(v) for e, v in journals.latency.items()}
    assert {e: sorted(v) for e, v in facts.overhead.items()} == \
        {e: sorted(v) for e, v in journals.overhead.items()}
