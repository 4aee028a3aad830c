"""The call side of a report (cost, profiles, stalls, error texts) made in a second process
for a large selection: the same report as made in one, the same left out and said, and a
second process that fails or dies does not fail the report."""

from __future__ import annotations

import json
import os
import signal

import pytest

from sweepbench.errors import StoreError
from sweepbench.results import call_side
from sweepbench.results.report import build_report
from sweepbench.benchmarks.registry import benchmark_info
from sweepbench.store.readonly import ReadOnlyStore
from tests.results.test_report_facts import odd_store


def _report(path, **kw) -> tuple[str, list[str]]:
    with ReadOnlyStore(path) as s:
        report = build_report(s, benchmarks=benchmark_info(), **kw)
        return json.dumps(report, indent=1), s.damaged


@pytest.fixture
def odd(tmp_path):
    odd_store(tmp_path / "odd.sqlite")
    return tmp_path / "odd.sqlite"


@pytest.mark.parametrize("kw", [{}, {"from_transcripts": True}, {"profile": False},
                                {"prices": {"A": {"input": 1.5}}}])
def test_a_report_made_in_two_processes_is_the_report_made_in_one(odd, monkeypatch, kw):
    children = []
    real = call_side._Apart.__init__

    def counted(self, *args):
        real(self, *args)
        children.append(self._proc.pid)

    monkeypatch.setattr(call_side._Apart, "__init__", counted)
    monkeypatch.setattr(call_side, "APART_FROM", 10**9)
    one, damaged_one = _report(odd, **kw)
    assert children == []
    monkeypatch.setattr(call_side, "APART_FROM", 0)
    two, damaged_two = _report(odd, **kw)
    assert len(children) == 1 and children[0] != os.getpid()
    assert two == one and damaged_two == damaged_one
    assert sum("does not decode" in d for d in damaged_two) == 2  # said by the child's reads
    report = json.loads(two)
    assert report["cost"]["calls"] > 0 and report["stalls_by_endpoint"]
    assert report["error_reasons"]


def test_a_second_process_that_dies_leaves_the_work_to_the_first(odd, monkeypatch):
    monkeypatch.setattr(call_side, "APART_FROM", 10**9)
    one, damaged_one = _report(odd)
    monkeypatch.setattr(call_side, "APART_FROM", 0)

    def killed(*args):
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(call_side, "_child", killed)
    assert _report(odd) == (one, damaged_one)


def test_an_error_in_the_second_process_is_the_reports_error(odd, monkeypatch):
    monkeypatch.setattr(call_side, "APART_FROM", 0)

    def failing(view, *args, **kw):
        raise StoreError(f"run store {view.stores[0].path}: read failed: disk I/O error")

    monkeypatch.setattr(call_side, "call_side", failing)
    with pytest.raises(StoreError, match="read failed: disk I/O error"):
        _report(odd)


def test_a_report_that_fails_first_ends_the_second_process(odd, monkeypatch):
    from sweepbench.errors import ReportError

    procs = []
    real = call_side._Apart.__init__

    def kept(self, *args):
        real(self, *args)
        procs.append(self._proc)

    monkeypatch.setattr(call_side._Apart, "__init__", kept)
    monkeypatch.setattr(call_side, "APART_FROM", 0)
    with pytest.raises(ReportError, match="no judgments with method='nope'"):
        _report(odd, method="nope")
    assert len(procs) == 1 and not procs[0].is_alive()
