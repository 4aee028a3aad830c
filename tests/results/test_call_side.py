"""The call side of a report (cost, profiles, stalls, error texts) made in a second process
for a large selection: the same report as made in one, the same left out and said, and a
second process that fails or dies does not fail the report."""

from __future__ import annotations

import json
import os
import signal
import sqlite3

import numpy as np
import pytest

from sweepbench.benchmarks.registry import benchmark_info
from sweepbench.errors import StoreError
from sweepbench.results import call_side
from sweepbench.results.report import build_report
from sweepbench.results.row_codes import RowCodes
from sweepbench.results.selection import EpisodeView
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


@pytest.mark.parametrize("kw", [{}, {"prices": {"A": {"input": 1.5}}}])
def test_a_second_process_that_dies_leaves_the_work_to_the_first(odd, monkeypatch, kw):
    monkeypatch.setattr(call_side, "APART_FROM", 10**9)
    one, damaged_one = _report(odd, **kw)
    monkeypatch.setattr(call_side, "APART_FROM", 0)

    def killed(*args):
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(call_side, "_child", killed)
    assert _report(odd, **kw) == (one, damaged_one)


def test_an_error_in_the_second_process_is_the_reports_error(odd, monkeypatch):
    monkeypatch.setattr(call_side, "APART_FROM", 0)

    parent = os.getpid()
    real = call_side.call_side

    def failing(view, *args, **kw):  # in the second process only
        if os.getpid() != parent:
            raise StoreError(f"run store {view.stores[0].path}: read failed: disk I/O error")
        return real(view, *args, **kw)

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


def _undecodable_record(path) -> str:
    """One finished episode's facts dropped and its record garbled: the facts read then says
    that record is left out."""
    db = sqlite3.connect(path)
    key = db.execute("SELECT episode_key FROM episode_facts ORDER BY episode_key "
                     "LIMIT 1").fetchone()[0]
    db.execute("DELETE FROM episode_facts WHERE episode_key = ?", (key,))
    db.execute("UPDATE episodes SET record = 'not json' WHERE episode_key = ?", (key,))
    db.commit()
    db.close()
    return key


def test_the_episodes_facts_are_read_once_in_the_first_process_and_said_in_one_order(
        odd, monkeypatch):
    key = _undecodable_record(odd)
    monkeypatch.setattr(call_side, "APART_FROM", 10**9)
    one, damaged_one = _report(odd)
    parent = os.getpid()
    real = EpisodeView.fact_columns
    readers = []

    def first_only(self):
        readers.append(os.getpid())
        if os.getpid() != parent:
            raise AssertionError("the facts read again in the second process")
        return real(self)

    monkeypatch.setattr(EpisodeView, "fact_columns", first_only)
    monkeypatch.setattr(call_side, "APART_FROM", 0)
    two, damaged_two = _report(odd)
    assert readers == [parent]
    assert two == one and damaged_two == damaged_one
    record_note = next(i for i, d in enumerate(damaged_two) if key in d and "record" in d)
    # the calls' notes (the second process's reads) first, as one process says them
    assert max(i for i, d in enumerate(damaged_two) if "journal" in d) < record_note


def test_facts_the_first_process_cannot_read_are_read_by_the_second(odd, monkeypatch):
    _undecodable_record(odd)
    monkeypatch.setattr(call_side, "APART_FROM", 10**9)
    one = _report(odd)
    parent = os.getpid()
    real = EpisodeView.fact_columns

    def failing_first(self):
        if os.getpid() == parent:
            real(self)  # what it says before it fails is not said twice
            raise StoreError("run store: read failed: disk I/O error")
        return real(self)

    monkeypatch.setattr(EpisodeView, "fact_columns", failing_first)
    monkeypatch.setattr(call_side, "APART_FROM", 0)
    assert _report(odd) == one


def test_a_second_process_that_died_leaves_the_facts_to_the_first_too(odd, monkeypatch):
    _undecodable_record(odd)
    monkeypatch.setattr(call_side, "APART_FROM", 10**9)
    one = _report(odd)
    real = EpisodeView.fact_columns
    reads = []

    def counted(self):
        reads.append(os.getpid())
        return real(self)

    def killed(*args):
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(EpisodeView, "fact_columns", counted)
    monkeypatch.setattr(call_side, "_child", killed)
    monkeypatch.setattr(call_side, "APART_FROM", 0)
    # read here, and again for the work made here once sent into the pipe (let go then)
    assert _report(odd) == one and set(reads) == {os.getpid()} and len(reads) in (1, 2)


def test_facts_not_sent_are_kept_for_the_work_made_here_and_read_again_once_sent():
    class View:
        reads = 0

        def fact_columns(self):
            View.reads += 1
            return "read again"

    feed = call_side._FactFeed.__new__(call_side._FactFeed)
    feed.facts = "kept"
    assert feed.kept(View()) == "kept" and View.reads == 0
    feed.facts = None
    assert feed.kept(View()) == "read again" and View.reads == 1


@pytest.mark.parametrize("sent", [True, False])
def test_the_second_process_takes_the_facts_as_they_come(sent):
    import multiprocessing

    recv, send = multiprocessing.Pipe(duplex=False)
    if sent:
        send.send({"facts": 1})
    send.close()
    arriving = call_side._Arriving(recv)
    arriving._thread.join(5)
    assert recv.closed and arriving._thread.name == "sweepbench-report-facts"
    assert arriving._thread.daemon

    class View:
        def fact_columns(self):
            return "read here"

    assert arriving.take(View()) == ({"facts": 1} if sent else "read here")
    assert arriving._facts is None  # not held twice


def _row(key, name, bench="t1", domain="d", lang="en", task="t", status="done"):
    return {"episode_key": key, "name": name, "benchmark": bench, "domain": domain,
            "lang": lang, "task_id": task, "status": status}


def _spend():
    from sweepbench.results.cost import CallCost, Spend

    s = Spend()
    for c in [CallCost("e0", "agent", "A", 4.0),  # e0: not a selected row, first
              CallCost("e1", "agent", "A", 0.5), CallCost("e1", "user", "U", 0.25),
              CallCost("e2", "agent", "A", 1.0), CallCost("e2", "judge", "J", 0.125),
              CallCost("e3", "agent", "B", 2.0), CallCost("e3", "user", None, None)]:
        s.add(c)
    return s


def test_costs_per_row_and_role_in_the_rows_order():
    costs, unpriced, touched = call_side._episode_costs(_spend(), ["e3", "e5", "e1", "e2"])
    assert costs.tolist() == [[2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.5, 0.25, 0.0],
                              [1.0, 0.0, 0.125]]
    assert unpriced.tolist() == [[False, True, False], [False] * 3, [False] * 3, [False] * 3]
    assert touched.tolist() == [True, False, True, True]
    assert (costs.dtype, unpriced.dtype, touched.dtype) == (np.float64, bool, bool)
    from sweepbench.results.cost import CallCost, Spend

    s = Spend()
    s.add(CallCost("e4", "judge", "J", None))  # a row with an unpriced call and nothing else
    costs, unpriced, touched = call_side._episode_costs(s, ["e4"])
    assert costs.tolist() == [[0.0, 0.0, 0.0]] and unpriced.tolist() == [[False, False, True]]
    assert touched.tolist() == [True]


def test_the_cost_section_sums_by_endpoint_row_benchmark_and_task_and_says_unpriced():
    codes = RowCodes.of([_row("e1", "A", task="t1"), _row("e2", "A", bench="vb", task="t2"),
                         _row("e3", "B", task="t1")])
    got = call_side.cost_summary(_spend(), codes, codes.index())
    assert got == {
        "total": 7.875, "agent": 7.5, "user": 0.25, "judge": 0.125,
        "by_endpoint": {"?": None, "A": 5.5, "B": 2.0, "J": 0.125, "U": 0.25},
        "by_model": {"A": 1.875, "B": None},
        "by_benchmark": {"t1": None, "vb": 1.125},
        "by_task": {"t1:d:en:t1": None, "vb:d:en:t2": 1.125},
        "calls": 7, "unpriced_calls": 1}
    assert list(got["by_endpoint"]) == sorted(got["by_endpoint"])


def test_profiles_lose_their_cost_at_every_level():
    p = {"cost": 1.0, "tokens": 3, "domains": {"d": {"cost": 2.0, "turns": 1}, "e": {}}}
    assert call_side._no_cost(p) == {"tokens": 3, "domains": {"d": {"turns": 1}, "e": {}}}
    assert call_side._no_cost({"tokens": 1, "domains": None}) == {"tokens": 1, "domains": None}


def _view(path):
    from sweepbench.results.selection import load_view

    store = ReadOnlyStore(path)
    return store, load_view([store])


def test_the_call_side_of_facts_and_of_transcripts_agree_and_say_what_they_hold(odd):
    store, view = _view(odd)
    with store:
        calls, columns = view.calls, view.call_columns

        def refused(*args):
            raise AssertionError("read the other way")

        view.calls = refused  # the facts path decodes no transcript
        facts = call_side.call_side(view, None, profile=True)
        view.calls, view.call_columns = calls, refused  # and the transcripts' reads no facts
        oracle = call_side.call_side(view, None, profile=True, transcripts=True)
        override = {"A": call_side.Prices(input=1.0)}
        priced_oracle = call_side.call_side(view, override, profile=False, transcripts=True)
        view.call_columns = columns
        priced = call_side.call_side(view, override, profile=False)
    for a, b in zip(facts[:-1], oracle[:-1]):  # damaged: said once, by the first read
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        else:
            assert a == b
    assert facts.costs.shape == (len(view.rows), 3) and facts.touched.all()
    assert facts.unpriced.any() and facts.summary["unpriced_calls"] > 0
    assert facts.profiles and all("cost" not in p for p in facts.profiles.values())
    assert {("A",), ("A", "vitabench"), ("B",)} <= set(facts.profiles)
    assert facts.stalls["A"]["calls"] > 0 and facts.stalls["A"]["hung"] > 0
    errors = {r["episode_key"] for r in view.rows if r["status"] == "error"}
    assert set(facts.errors) == errors and all(facts.errors[k] == "boom 12345" for k in errors)
    assert facts.damaged == [store.damaged] and len(store.damaged) == 2
    assert oracle.damaged == [[]]
    assert priced.profiles is None and priced.summary["by_endpoint"]["A"] > \
        facts.summary["by_endpoint"].get("A", 0.0)  # the override priced A's calls
    assert priced_oracle.profiles is None and priced_oracle.summary == priced.summary
    assert np.array_equal(priced_oracle.costs, priced.costs)


def test_record_profiles_are_filed_under_each_rows_name(odd):
    store, view = _view(odd)
    with store:
        row_of = {r["episode_key"]: {**r, "name": "X " + r["model"]} for r in view.rows}
        got = call_side._record_profiles(view, row_of, view.calls())
    assert {("X A",), ("X B",)} <= set(got) and ("A",) not in got


def test_a_large_selection_goes_apart_only_where_fork_exists(odd, monkeypatch):
    store, view = _view(odd)
    with store:
        monkeypatch.setattr(call_side, "APART_FROM", len(view.rows))
        job = call_side.start(view, None, profile=False)
        assert isinstance(job, call_side._Apart)
        proc = job._proc  # forked (shares the rows), ends with this process, named in ps
        assert type(proc).__name__ == "ForkProcess" and proc.daemon
        assert proc.name == "sweepbench-report-calls"
        job.cancel()
        monkeypatch.setattr(call_side, "APART_FROM", len(view.rows) + 1)
        here = call_side.start(view, None, profile=False)
        assert isinstance(here, call_side._Here)
        view.calls = None  # by default from the facts, not the transcripts
        assert here.result().summary["calls"] > 0
        monkeypatch.setattr(call_side, "APART_FROM", 0)
        monkeypatch.setattr(call_side.sys, "platform", "darwin")
        assert isinstance(call_side.start(view, None, profile=False), call_side._Here)


def test_what_the_second_process_made_is_not_made_again_here(odd, monkeypatch):
    store, view = _view(odd)
    with store:
        monkeypatch.setattr(call_side, "APART_FROM", 0)
        job = call_side.start(view, None, profile=True, transcripts=True)
        assert isinstance(job, call_side._Apart)

        def here(*args, **kw):
            raise AssertionError("made again in the first process")

        monkeypatch.setattr(call_side, "call_side", here)  # the child forked before this
        side = job.result()
    assert side.profiles and side.errors and not job._proc.is_alive()
    assert len(store.damaged) == 2  # said by the child, told to this store


def _same_side(a: call_side.CallSide, b: call_side.CallSide) -> None:
    for field in ("costs", "unpriced", "touched"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert (a.summary, a.profiles, a.stalls, a.errors) == (b.summary, b.profiles, b.stalls,
                                                          b.errors)


@pytest.mark.parametrize("facts_pipe", ["sent", "none sent", "no pipe"])
def test_the_second_processs_work_made_in_this_one_from_the_facts_sent_or_read(odd, facts_pipe):
    import multiprocessing

    from sweepbench.results.profile import as_prices

    override = {"A": as_prices({"input": 1.5})}
    store, view = _view(odd)
    with store:
        expected = call_side.call_side(view, override, profile=True)
        facts = view.fact_columns()
        codes = RowCodes.of(view.rows)
        assert expected.summary != call_side.call_side(view, None, profile=True).summary
    recv, send = multiprocessing.Pipe(duplex=False)
    facts_recv, facts_send = multiprocessing.Pipe(duplex=False)
    if facts_pipe == "sent":
        facts_send.send(facts)
    noted = signal.signal(signal.SIGTERM, lambda *a: None)  # as an event loop's handler
    try:
        # the work's own end of the facts pipe is closed there: a read of none ends, not waits
        call_side._child(view, override, {"profile": True, "transcripts": False,
                                          "codes": codes},
                         send, None if facts_pipe == "no pipe" else (facts_recv, facts_send))
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # a SIGTERM ends it there
    finally:
        signal.signal(signal.SIGTERM, noted)
    status, side = recv.recv()
    assert status == "ok"
    if facts_pipe != "no pipe":
        assert facts_send.closed and facts_recv.closed
    _same_side(side, expected)
    assert side.damaged == [expected.damaged[0]]  # said by its own reads, on its own stores


def test_the_second_processs_error_is_sent_as_a_value(odd, tmp_path):
    import multiprocessing
    import shutil

    store, view = _view(odd)
    store.close()
    gone = tmp_path / "gone.sqlite"
    shutil.copy(odd, gone)
    view.stores[0].path = gone
    gone.unlink()
    recv, send = multiprocessing.Pipe(duplex=False)
    call_side._child(view, None, {"profile": False, "transcripts": True}, send, None)
    status, exc = recv.recv()
    assert status == "error" and isinstance(exc, StoreError) and "gone.sqlite" in str(exc)


def test_a_transcript_report_reads_no_facts_in_the_first_process(odd, monkeypatch):
    store, view = _view(odd)
    with store:
        monkeypatch.setattr(call_side, "APART_FROM", 0)
        parent = os.getpid()
        real = EpisodeView.fact_columns

        def not_here(self):
            if os.getpid() == parent:
                raise AssertionError("facts read for a transcript report")
            return real(self)

        monkeypatch.setattr(EpisodeView, "fact_columns", not_here)
        job = call_side.start(view, None, profile=True, transcripts=True)
        assert job._feed is None
        assert job.result().profiles


def test_the_facts_and_the_rows_codes_are_made_once_and_let_go(odd, monkeypatch):
    store, view = _view(odd)
    with store:
        expected = call_side.call_side(view, None, profile=True)
        monkeypatch.setattr(call_side, "APART_FROM", 0)
        job = call_side.start(view, None, profile=True)
        codes = job._here._args[2]["codes"]  # made before the fork: the rows are not read there
        assert isinstance(codes, RowCodes) and codes.keys == RowCodes.of(view.rows).keys
        feed = job._feed
        assert feed._thread.daemon and feed._thread.name == "sweepbench-report-facts"
        feed.join()
        assert feed.facts is None  # sent: let go here
        _same_side(job.result(), expected)
        assert job._here is None and feed.facts is None
        again = call_side.start(view, None, profile=True)
        again.cancel()
        assert again._feed.facts is None and not again._feed._thread.is_alive()
        assert not again._proc.is_alive()
        rows, view.rows = view.rows, None  # given the codes, the call side reads no row
        _same_side(call_side.call_side(view, None, profile=True, codes=RowCodes.of(rows)),
                   expected)


def test_ctrl_c_while_the_first_process_reads_the_facts_ends_the_second(odd, monkeypatch):
    import multiprocessing

    store, view = _view(odd)
    with store:
        monkeypatch.setattr(call_side, "APART_FROM", 0)

        def interrupted(self):
            raise KeyboardInterrupt

        monkeypatch.setattr(EpisodeView, "fact_columns", interrupted)
        with pytest.raises(KeyboardInterrupt):
            call_side.start(view, None, profile=True)
        assert not [p for p in multiprocessing.active_children()
                    if p.name == "sweepbench-report-calls"]


def test_a_second_process_deaf_to_sigterm_is_killed_when_cancelled(odd, monkeypatch):
    import time

    store, view = _view(odd)
    with store:
        monkeypatch.setattr(call_side, "APART_FROM", 0)
        monkeypatch.setattr(call_side, "_GRACE", 0.2)

        def deaf(view, override, options, send, facts):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            send.send("deaf")
            time.sleep(60)

        monkeypatch.setattr(call_side, "_child", deaf)
        job = call_side.start(view, None, profile=True)
        assert job._recv.recv() == "deaf"
        began = time.monotonic()
        job.cancel()
        assert not job._proc.is_alive() and job._proc.exitcode == -signal.SIGKILL
        assert time.monotonic() - began < 5
