"""The store's writer: queue -> writer thread -> SQLite, batched commits, flushes, the
checkpointer, a sticky failure (driven through the store's write methods)."""

from __future__ import annotations

import asyncio
import base64
import math
import os
import random
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import sweepbench
from sweepbench.errors import StoreError
from sweepbench.store import writer as writer_module
from sweepbench.store.runstore import RunStore
from sweepbench.store.writer import StoreWriter

# A writer that never answers a flush or never stops hangs its test in a join or a wait, and a
# `with` block's close hangs again after a signal-raised timeout: the thread method ends the
# process instead, so a hung writer fails its test (and a mutation run counts it) in 10 s, not
# at the suite's 120 s or never. No test here takes over 1 s on a quiet machine.
pytestmark = pytest.mark.timeout(10, method="thread")


def count(path, sql: str) -> int:
    with sqlite3.connect(path) as c:
        return c.execute(sql).fetchone()[0]


def _wal_frames(path, store):
    page = store._wconn.execute("PRAGMA page_size").fetchone()[0]
    return (path.with_name(path.name + "-wal").stat().st_size - 32) // (page + 24)  # header 32


def _copied_back(path) -> tuple[int, int]:
    """(frames in the WAL, frames copied back into the database), read from the WAL index
    without checkpointing (SQLite's walformat: mxFrame at byte 16, nBackfill at byte 96)."""
    head = path.with_name(path.name + "-shm").read_bytes()[:100]
    return (int.from_bytes(head[16:20], sys.byteorder),
            int.from_bytes(head[96:100], sys.byteorder))


def _write_pages(store, n, start=0):
    # about a page per event, once compressed (store.codec): random, so that it does not shrink
    for i in range(start, start + n):
        blob = base64.b64encode(random.Random(i).randbytes(3000)).decode()
        store.event(f"e{i % 40}", i // 40, "model_call", {"text": blob})
        if i % 20 == 19:
            store.flush_sync()  # many small commits, as in a sweep
    store.flush_sync()


def test_the_writer_never_checkpoints_the_checkpointer_does(tmp_path):
    """A checkpoint ends in fsyncs; the writer commits nothing while it runs one, so it is
    the checkpointer's job. With the checkpointer idle the WAL holds all 2,400 pages (SQLite's
    default, in the writer, would have reset it after 1,000); with it on, the WAL is copied
    back without a write waiting on it."""
    path = tmp_path / "s.db"
    with RunStore(path, checkpoint_every_s=3600) as store:
        _write_pages(store, 2400)
        assert _wal_frames(path, store) > 2400
        assert store.writer_stats["checkpoints"] == 0
    assert not path.with_name("s.db-wal").exists()  # closing checkpoints it all back
    assert count(path, "SELECT count(*) FROM events") == 2400

    path = tmp_path / "t.db"
    with RunStore(path, checkpoint_every_s=0.02) as store:
        _write_pages(store, 600)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            frames, copied = _copied_back(path)
            if store.writer_stats["checkpoints"] and copied == frames:
                break
            time.sleep(0.01)
        assert store.writer_stats["checkpoints"] >= 1
        # all copied back by the checkpointer (the WAL may have started over once, when a
        # checkpoint caught up with the writes, so it need not hold all 600 pages)
        assert frames > 0 and copied == frames
    assert count(path, "SELECT count(*) FROM events") == 600


def test_the_wal_starts_over_while_commits_keep_coming(tmp_path):
    """A passive checkpoint never catches up with a writer that keeps committing, and SQLite
    rewinds the WAL only once all of it is copied back: at ``wal_restart_pages`` the writer
    finishes the copy itself, so the WAL stays bounded instead of growing all sweep long."""
    path = tmp_path / "s.db"
    with RunStore(path, checkpoint_every_s=0.01, wal_restart_pages=200) as store:
        written = 0
        while written < 4000 or store.writer_stats["checkpoints"] < 10:
            _write_pages(store, 200, written)
            written += 200
            assert written < 40_000, "the checkpointer never ran"
        # the WAL's end since it last started over: never restarted, it would hold every
        # page written (4,000+) and only grow. A checkpointer starved on a loaded machine can
        # lag behind the last writes, so the writes go on, a little at a time, until it has
        # caught up (its file keeps its high-water mark: the WAL index's end is read instead)
        deadline = time.monotonic() + 30
        while (frames := _copied_back(path)[0]) >= 2000:
            assert time.monotonic() < deadline, f"the WAL never started over: {frames} frames"
            _write_pages(store, 20, written)
            written += 20
            time.sleep(0.02)
    assert count(path, "SELECT count(*) FROM events") == written


def test_many_events_commit_in_few_transactions(tmp_path):
    """Writes queued while the writer waits on a lock go out in batches, not row by row."""
    path = tmp_path / "s.db"
    n = 5000
    with RunStore(path, max_batch=2000) as store:
        store.begin_run("r", {})
        store.flush_sync()
        before = store.writer_stats
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another connection holds the write lock
        for i in range(n):
            store.event(f"e{i % 50}", i // 50, "model_call", {"i": i})
        time.sleep(0.05)
        blocker.execute("COMMIT")
        blocker.close()
        store.flush_sync()
        after = store.writer_stats
        assert after["rows"] - before["rows"] == n + 50  # and the 50 keys' numbers
        # at most: the few rows the writer held while blocked, then ceil(5000 / 2000) batches
        assert after["transactions"] - before["transactions"] <= 1 + math.ceil(n / 2000)
        assert len(store.events("e7")) == n // 50
    assert count(path, "SELECT count(*) FROM events") == n


def test_writes_arriving_one_by_one_share_a_commit_within_the_interval(tmp_path):
    """A sweep's writes come one at a time, each episode's after its model call: the writer,
    woken by the first, gathers the rest for ``commit_every_s`` and commits them together,
    and commits them without anybody flushing."""
    path = tmp_path / "s.db"
    # an interval well beyond the writes' 0.1 s (on a loaded machine, a mutation run beside
    # other processes on 2 cores, 20 short sleeps took over 0.5 s), and under a second
    with RunStore(path, commit_every_s=0.9) as store:
        store.begin_run("r", {})
        store.flush_sync()
        before = store.writer_stats["transactions"]
        for i in range(20):  # 20 writes over about 0.1 s
            store.event("e", i, "model_call", {"i": i})
            time.sleep(0.005)
        deadline = time.monotonic() + 10
        while count(path, "SELECT count(*) FROM events") < 20:  # nobody flushes
            assert time.monotonic() < deadline, "queued writes were never committed"
            time.sleep(0.02)
        assert store.writer_stats["transactions"] - before == 1


def test_a_flush_or_close_does_not_wait_for_the_interval(tmp_path):
    """Whoever waits on a commit gets it at once, however long the writer would gather."""
    path = tmp_path / "s.db"
    store = RunStore(path, commit_every_s=30.0)
    store.begin_run("r", {})
    t0 = time.monotonic()
    store.flush_sync()
    assert time.monotonic() - t0 < 5
    store.event("e", 0, "model_call", {"i": 0})

    async def flush() -> None:
        await store.flush()

    t0 = time.monotonic()
    asyncio.run(flush())
    assert time.monotonic() - t0 < 5
    store.event("e", 1, "model_call", {"i": 1})
    t0 = time.monotonic()
    store.close()
    assert time.monotonic() - t0 < 5
    assert count(path, "SELECT count(*) FROM events") == 2
    with pytest.raises(ValueError, match="commit_every_s"):
        RunStore(tmp_path / "t.db", commit_every_s=-1)


async def test_sustained_event_rate_sanity(tmp_path):
    """50k events from the event loop all land; the rate is printed, not asserted."""
    n = 50_000
    payload = {"usage": {"prompt_tokens": 1200, "completion_tokens": 80}, "latency_s": 0.4,
               "response": {"content": "x" * 200}}
    with RunStore(tmp_path / "s.db") as store:
        store.begin_run("r", {})
        t0 = time.perf_counter()
        for i in range(n):
            store.event(f"ep{i % 500}", i // 500, "model_call", payload)
        await store.flush()
        dt = time.perf_counter() - t0
        stats = store.writer_stats
        print(f"\n{n / dt:,.0f} events/s, {stats['rows'] / stats['transactions']:.0f} rows/txn")
        assert stats["rows"] == n + 1 + 500  # and the 500 keys' numbers
        assert stats["transactions"] < n / 2  # batched (exact bounds: the test above)
        assert len(store.events("ep499")) == n // 500


async def test_writer_error_surfaces_on_flush_writes_and_close(tmp_path):
    path = tmp_path / "s.db"
    store = RunStore(path, busy_timeout=0.05)
    store.begin_run("r", {})
    await store.flush()
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        store.event("e", 0, "message", {"x": 1})
        with pytest.raises(StoreError, match="writer failed") as info:
            await store.flush()
        assert isinstance(info.value.__cause__, sqlite3.OperationalError)  # "database is locked"
        with pytest.raises(StoreError):  # sticky: later writes are refused, not dropped
            store.event("e", 1, "message", {"x": 2})
        with pytest.raises(StoreError):
            store.flush_sync()
    finally:
        blocker.execute("COMMIT")
        blocker.close()
    with pytest.raises(StoreError, match="writer failed"):
        store.close()
    assert count(path, "SELECT count(*) FROM events") == 0  # the failed batch rolled back
    assert not store._writer._thread.is_alive()


async def test_concurrent_producers_and_flush_from_two_loops(tmp_path):
    """Writers on several tasks and a second thread; each flush covers its own writes."""
    with RunStore(tmp_path / "s.db") as store:
        store.begin_run("r", {})

        async def episode(i: int) -> None:
            for seq in range(20):
                store.event(f"a{i}", seq, "message", {"seq": seq})
                await asyncio.sleep(0)
            await store.flush()
            assert len(store.events(f"a{i}")) == 20  # own writes visible after flush

        def other_thread() -> None:
            async def go() -> None:
                for seq in range(100):
                    store.event("b", seq, "message", {})
                await store.flush()
            asyncio.run(go())

        t = threading.Thread(target=other_thread)
        t.start()
        await asyncio.gather(*(episode(i) for i in range(30)))
        t.join()
        assert len(store.events("b")) == 100


def test_a_thread_waiting_on_a_flush_gets_the_failure_of_its_batch(tmp_path):
    path = tmp_path / "s.db"
    store = RunStore(path, busy_timeout=0.05)
    store.begin_run("r", {})
    store.flush_sync()
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        store.event("e", 0, "message", {"x": 1})  # queued before the failure: the flush waits
        with pytest.raises(StoreError, match="writer failed, 2 queued writes") as info:
            store.flush_sync()
        assert isinstance(info.value.__cause__, sqlite3.OperationalError)
    finally:
        blocker.execute("COMMIT")
        blocker.close()
    with pytest.raises(StoreError, match="writer failed"):
        store.close()


def test_a_flush_that_outlasts_its_timeout_says_so(tmp_path):
    """The writer waits on a lock another connection holds; a flush with a timeout gives
    up at it, and what it waited for is committed once the lock is released."""
    path = tmp_path / "s.db"
    with RunStore(path, busy_timeout=30) as store:
        store.begin_run("r", {})
        store.flush_sync()
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            store.event("e", 0, "message", {"x": 1})
            t0 = time.monotonic()
            with pytest.raises(StoreError, match=r"flush did not finish within 0\.2s$"):
                store.flush_sync(timeout=0.2)
            assert time.monotonic() - t0 < 5
        finally:
            blocker.execute("COMMIT")
            blocker.close()
        store.flush_sync()
        assert [e["payload"] for e in store.events("e")] == [{"x": 1}]


def test_the_checkpointer_checkpoints_once_after_new_commits_and_not_while_idle(tmp_path):
    path = tmp_path / "s.db"

    def checkpoints_reach(n: int) -> int:
        deadline = time.monotonic() + 10
        while store.writer_stats["checkpoints"] < n and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # ten more periods: nothing new is committed, so no checkpoint
        return store.writer_stats["checkpoints"]

    with RunStore(path, checkpoint_every_s=0.02) as store:
        assert checkpoints_reach(0) == 0  # opened, nothing committed
        store.event("e", 0, "message", {})
        store.flush_sync()  # one commit
        assert checkpoints_reach(1) == 1
        store.event("e", 1, "message", {})
        store.flush_sync()
        assert checkpoints_reach(2) == 2
        assert store.writer_stats["transactions"] == 2


def test_the_writer_commits_any_statements_it_is_given_and_closes_once(tmp_path):
    """StoreWriter on its own: ops named in its statements, one write per key with
    put_once, threads named after the file, and a close that says whether it stopped them."""
    path = tmp_path / "w.db"
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (x)")
    writer = StoreWriter(path, conn, sqlite3.connect(path, check_same_thread=False),
                         {"add": "INSERT INTO t VALUES (?)"}, max_batch=10, commit_every_s=0,
                         checkpoint_every_s=1.0, wal_restart_pages=100)
    assert {"RunStore writer (w.db)", "RunStore checkpointer (w.db)"} <= {
        t.name for t in threading.enumerate()}
    writer.put("add", (1,))
    writer.put_once("k", "add", (2,))
    writer.put_once("k", "add", (3,))  # a write under this key is queued already
    writer.flush_sync()
    assert count(path, "SELECT group_concat(x) FROM t") == "1,2"
    assert writer.queued_once == {"k"}
    assert writer.stats["rows"] == 2
    assert writer.close() is True
    assert writer.close() is False
    with pytest.raises(StoreError, match=rf"^run store {path} is closed$"):
        writer.put("add", (4,))
    with pytest.raises(StoreError, match=rf"^run store {path} is closed$"):
        writer.put_once("j", "add", (4,))
    assert writer.error is None


def test_a_store_closed_once_refuses_reads(tmp_path):
    store = RunStore(tmp_path / "s.db")
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.runs()


def test_a_transaction_holds_at_most_max_batch_rows(tmp_path):
    """With the writer held up by a lock, everything is queued when it goes on: one write
    per transaction at max_batch=1."""
    path = tmp_path / "s.db"
    with RunStore(path, max_batch=1, commit_every_s=0) as store:
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        for i in range(10):
            store.event("e", i, "message", {"i": i})
        time.sleep(0.05)
        blocker.execute("COMMIT")
        blocker.close()
        store.flush_sync()
        assert store.writer_stats["rows"] == store.writer_stats["transactions"] == 11


def test_a_flush_queued_behind_a_full_batch_does_not_wait_for_the_interval(tmp_path):
    """The flush's wake-up was taken by the batch before it (max_batch=1): the writer, finding
    the flush first in its next batch, answers it without gathering."""
    with RunStore(tmp_path / "s.db", max_batch=1, commit_every_s=30) as store:
        t0 = time.monotonic()
        store.begin_run("r", {})
        store.flush_sync()
        assert time.monotonic() - t0 < 5
        assert store.runs()[0]["run_id"] == "r"


def test_a_batch_that_fails_midway_is_rolled_back_and_the_error_names_its_cause(tmp_path):
    path = tmp_path / "s.db"
    store = RunStore(path)
    store.event("e", 0, "message", {})
    store.flush_sync()
    with sqlite3.connect(path) as db:  # a failure inside the transaction, after a good row
        db.execute("CREATE TRIGGER boom BEFORE INSERT ON event_rows WHEN NEW.kind = 'boom' "
                   "BEGIN SELECT RAISE(ABORT, 'no room'); END")
    store.event("e", 1, "message", {})
    store.event("e", 2, "boom", {})
    with pytest.raises(StoreError) as info:
        store.flush_sync()
    assert str(info.value) == (
        f"run store {path}: writer failed, 2 queued writes not committed (IntegrityError: no "
        "room); what was committed before is kept: fix the cause and run the same command "
        "again to continue")
    assert isinstance(info.value.__cause__, sqlite3.IntegrityError)
    with pytest.raises(StoreError, match="writer failed"):
        store.close()
    assert count(path, "SELECT group_concat(seq) FROM events") == "0"


def test_the_writer_finishes_a_checkpoint_once_the_wal_holds_wal_restart_pages(tmp_path):
    """The checkpointer asks; the writer checkpoints after its next batch, once: at exactly
    ``wal_restart_pages`` pages in the WAL, not one page short. A flush with nothing queued
    commits nothing."""
    def run(name: str, pages: int) -> tuple[int, dict[str, int]]:
        path = tmp_path / name
        with RunStore(path, checkpoint_every_s=0.02, wal_restart_pages=pages) as store:
            store.event("e", 0, "message", {"text": "x" * 3000})
            store.flush_sync()
            deadline = time.monotonic() + 10
            while store.writer_stats["checkpoints"] < 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.1)  # the checkpointer asks right after its checkpoint
            frames = _wal_frames(path, store)
            for _ in range(3):
                store.flush_sync()  # batches with nothing to commit
            return frames, store.writer_stats

    frames, stats = run("measure.db", 10**9)
    assert stats == {"transactions": 1, "rows": 2, "checkpoints": 1}
    assert run("short.db", frames + 1) == (frames, stats)
    assert run("at.db", frames) == (frames, {**stats, "checkpoints": 2})


def test_a_process_that_exits_with_its_store_open_commits_what_it_queued(tmp_path):
    """The threads are daemons (the interpreter does not wait for them) and a finalizer,
    run at exit, commits what is queued and stops them."""
    path = tmp_path / "s.db"
    script = ("import sys\nfrom sweepbench.store.runstore import RunStore\n"
              "store = RunStore(sys.argv[1], commit_every_s=30)\n"
              "store.event('e', 0, 'message', {'n': 1})\n")
    package_root = Path(sweepbench.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(package_root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", script, str(path)], env=env, timeout=60,
                          capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")
    with RunStore(path) as store:
        assert [e["payload"] for e in store.events("e")] == [{"n": 1}]


def test_a_checkpoint_that_fails_counts_for_nothing_and_asks_the_writer_for_nothing(tmp_path):
    """What is committed stays in the WAL; a failing disk shows at the next commit."""
    path = tmp_path / "w.db"
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (x)")
    broken = sqlite3.connect(path, check_same_thread=False)
    broken.close()  # every checkpoint on it raises
    writer = StoreWriter(path, conn, broken, {"add": "INSERT INTO t VALUES (?)"},
                         max_batch=10, commit_every_s=0, checkpoint_every_s=0.01,
                         wal_restart_pages=1)
    try:
        for i in range(5):
            writer.put("add", (i,))
            writer.flush_sync()
            time.sleep(0.05)  # five checkpointer periods after each commit
        assert writer.stats == {"transactions": 5, "rows": 5, "checkpoints": 0}
    finally:
        writer.close()
    assert count(path, "SELECT count(*) FROM t") == 5


def test_every_commit_runs_once_in_each_transaction(tmp_path):
    """``every_commit`` (the store's id, store.identity) is written in every transaction the
    writer commits, once."""
    path = tmp_path / "w.db"
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("CREATE TABLE n (commits)")
    conn.execute("INSERT INTO n VALUES (0)")
    writer = StoreWriter(path, conn, sqlite3.connect(path, check_same_thread=False),
                         {"add": "INSERT INTO t VALUES (?)"}, max_batch=10, commit_every_s=0,
                         checkpoint_every_s=1.0, wal_restart_pages=100,
                         every_commit="UPDATE n SET commits = commits + 1")
    try:
        for i in range(3):
            writer.put("add", (i,))
            writer.put("add", (i,))
            writer.flush_sync()
    finally:
        writer.close()
    assert count(path, "SELECT commits FROM n") == writer.stats["transactions"] >= 3


def _writer_on(path, add="INSERT INTO t VALUES (?)", **options):
    """A StoreWriter on a new database with a table ``t (x)`` and one op, ``add``."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
    settings = {"max_batch": 10, "commit_every_s": 0, "checkpoint_every_s": 1.0,
                "wal_restart_pages": 100, **options}
    return StoreWriter(path, conn, sqlite3.connect(path, check_same_thread=False),
                       {"add": add}, **settings)


def test_the_exit_finalizer_commits_what_is_queued_at_once_and_stops_both_threads(tmp_path):
    """The finalizer (run at exit on a writer nobody closed) does not wait out the gathering
    interval; called on a writer closed already, it has nothing to do."""
    path = tmp_path / "w.db"
    writer = _writer_on(path, commit_every_s=30)
    writer.put("add", (1,))
    t0 = time.monotonic()
    writer._finalizer()
    assert time.monotonic() - t0 < 5
    assert not writer._thread.is_alive() and not writer._cthread.is_alive()
    assert count(path, "SELECT group_concat(x) FROM t") == "1"
    assert writer.stats["transactions"] == 1
    closed = _writer_on(tmp_path / "c.db")
    closed.close()
    from sweepbench.store.writer import _stop_writer
    _stop_writer(closed._queue, closed._urgent, closed._thread, closed._cthread)
    assert closed._queue.empty()  # no stop queued for a writer that has ended


def test_a_write_on_a_connection_without_the_stores_functions_says_what_to_do(tmp_path):
    """A statement that calls an ``sb_`` SQL function the writer's connection lacks fails
    with the hint of store.codec.unregistered in the sticky error, after the cause."""
    path = tmp_path / "w.db"
    writer = _writer_on(path, "INSERT INTO t VALUES (sb_json(?))")
    writer.put("add", ("{}",))
    with pytest.raises(StoreError) as info:
        writer.flush_sync()
    writer.close()
    assert str(info.value) == (
        f"run store {path}: writer failed, 1 queued writes not committed (OperationalError: no "
        "such function: sb_json; the store's journal can only be written on a connection with "
        "sweepbench's SQL functions (sweepbench.store.codec.register(conn)), which decode the "
        "compressed payloads the journal's triggers read); what was committed before is kept: "
        "fix the cause and run the same command again to continue")
    assert writer.error is info.value


async def test_a_writer_that_dies_outside_a_commit_answers_every_flush_and_refuses_writes(
        tmp_path, monkeypatch):
    """The writer thread ends on an error of its own (here the error path of a failed
    commit fails too): the flushes it holds and those queued behind it are told, with a
    sticky error naming it, instead of waiting forever; later writes and flushes raise it."""
    def broken(exc):
        raise RuntimeError("a bug in the error path")

    monkeypatch.setattr(writer_module, "unregistered", broken)
    said = (rf"^run store {re.escape(str(tmp_path))}/\w\.db: the writer stopped on an unexpected error "
            r"\(RuntimeError\); what was committed before is kept: run the same command again "
            r"to continue$")
    held = _writer_on(tmp_path / "a.db", "INSERT INTO t VALUES (sb_json(?))", commit_every_s=5)
    held.put("add", ("{}",))
    with pytest.raises(StoreError, match=said) as info:
        await asyncio.wait_for(held.flush(), 5)  # in the batch that failed
    assert str(info.value.__cause__) == "a bug in the error path"
    queued = _writer_on(tmp_path / "b.db", "INSERT INTO t VALUES (sb_json(?))", max_batch=1,
                        commit_every_s=5)
    queued.put("add", ("{}",))
    with pytest.raises(StoreError, match=said):
        queued.flush_sync(timeout=5)  # queued behind the batch that failed
    for writer in (held, queued):
        writer._thread.join(5)
        assert not writer._thread.is_alive() and not writer._cthread.is_alive()
        with pytest.raises(StoreError, match=said):
            writer.put("add", ("{}",))
        with pytest.raises(StoreError, match=said):
            writer.flush_sync(timeout=5)
        assert writer.close() is True
        assert writer.error is not None and writer._queue.qsize() <= 1  # the stop, at most


def test_a_writer_that_dies_after_answering_a_batch_tells_the_flushes_queued_behind(tmp_path):
    """The error comes after the batch's commit and answers (here in the WAL restart the
    checkpointer asked for): a flush queued behind that batch gets it too."""
    writer = _writer_on(tmp_path / "w.db", max_batch=1, commit_every_s=5)

    def broken(conn):
        raise RuntimeError("a bug in the checkpoint")

    writer._checkpoint = broken
    writer._restart_wal = True  # as the checkpointer asks, once the WAL is long
    writer.put("add", (1,))  # the batch; the flush below wakes the writer and waits behind it
    with pytest.raises(StoreError, match="the writer stopped on an unexpected error") as info:
        writer.flush_sync(timeout=5)
    assert str(info.value.__cause__) == "a bug in the checkpoint"
    assert count(tmp_path / "w.db", "SELECT group_concat(x) FROM t") == "1"  # committed
    assert writer.close() is True
