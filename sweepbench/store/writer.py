"""The run store's writer: a thread that commits what the store queues, in batches, and a
thread that copies the WAL back into the file.

Writes are enqueue-only, so whoever writes never waits on SQLite: the store validates and
encodes a write on the caller's thread, then :meth:`StoreWriter.put` puts one tuple (an op,
named in the statements the writer was given, and its parameters) on a queue. The writer
thread drains the queue and commits everything it finds in one transaction (up to
``max_batch`` rows), consecutive writes of one op in one ``executemany``, in order. Woken by a
write, it gathers what arrives for ``commit_every_s`` (``COMMIT_EVERY_S``) before it commits,
so under load many rows share a commit. ``await flush()`` / ``flush_sync()`` (and ``close()``)
cut the gathering short and return once everything enqueued before the call is committed.

A failure (disk full, a locked or corrupt file) is sticky: the failed batch is rolled back,
and every later flush, close and write raises ``StoreError`` chained to the cause. Nothing is
dropped silently.
"""

from __future__ import annotations

import asyncio
import itertools
import queue
import sqlite3
import threading
import weakref
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable, Mapping

from sweepbench.errors import StoreError
from sweepbench.store.codec import unregistered

__all__ = ["CHECKPOINT_EVERY_S", "COMMIT_EVERY_S", "WAL_RESTART_PAGES", "StoreWriter"]

COMMIT_EVERY_S = 0.1
"""How long the writer gathers writes after one woke it, before it commits them together.
Nothing waits on these commits: an episode goes on once its call's event is queued (see
:mod:`sweepbench.runner.journal`), so the interval costs no wall time. It bounds what a hard
kill (SIGKILL, OOM, power) can lose beyond the requests in flight, which are lost to any
journal: the answers of the last interval, at most one call per episode while an interval is
shorter than a model call (the reference server's take 0.2 s, real ones seconds); asked again
when the sweep continues. A full 5-turn ``benchmarks/throughput.py`` sweep (1,280 calls/s)
committed 7,600 times with a 0.5 ms gathering and per-call flushes, about 840 times at 20 ms,
and at most one commit per interval at this one. With the hashed events key (schema 2) 5 and
50 ms cost the same CPU per call within the noise; with the journal numbered in start order
(schema 3) a bigger commit puts more rows of each episode in flight on one page of the key's
index, and 0.1 s cost 12 µs per call less than 20 ms (median of 6 alternating pairs; 9 of 12
pairs over two sessions favoured it; 50 ms fell in between)."""

CHECKPOINT_EVERY_S = 1.0
"""How often a thread of the store's own copies the WAL back into the file (a passive
checkpoint, on a connection of its own), when something was committed since. Not the writer:
a checkpoint ends in two fsyncs, 40-60 ms on this project's machines, and a writer that
checkpoints commits nothing meanwhile while every episode waits on its commit (at 1,280 calls/s
the stalls were 40% of the time episodes spent between calls). A sweep's commits rewrite the
same hot pages (the events index's leaves, the episodes table) again and again, and a
checkpoint copies each page once however often it was rewritten, so a pass a second copies
about what SQLite's own checkpoint every 10,000 pages did at full speed."""

WAL_RESTART_PAGES = 50_000
"""A passive checkpoint never waits for the writer, so while commits keep coming it never
catches up with the WAL's end, and the WAL (which SQLite rewinds only once all of it is copied
back) would grow for as long as a sweep runs. Once it holds this many pages (200 MB of 4 KiB
pages), the writer copies the rest itself after its next commit: a short stall (the frames
written during the last pass, and the fsyncs), after which the WAL starts over."""

_FLUSH = "flush"  # (op, callback(error)): a thread waits
_AFLUSH = "aflush"  # (op, loop, future): a coroutine waits
_STOP = "stop"
_URGENT = (_FLUSH, _AFLUSH, _STOP)  # somebody waits on these: no gathering
_CHECKPOINT = "PRAGMA wal_checkpoint(PASSIVE)"


class StoreWriter:
    """Commits what is ``put`` on its own thread, on connection ``conn`` (autocommit mode),
    with ``statements[op]`` for each op, and ``every_commit`` (when given) once in each
    transaction; checkpoints on ``checkpoint_conn``. Thread-safe.

    ``prepare[op]`` (when given) turns the parameters of a run of ``op`` writes into those of
    its statement, on this thread inside the transaction (the store compresses payloads
    there, :mod:`sweepbench.store.codec`).

    ``max_batch``: most rows per transaction. ``commit_every_s``: how long it gathers writes
    into one commit after a write woke it, when nobody waits on a flush (see
    ``COMMIT_EVERY_S``); 0: commit what is queued at once. ``checkpoint_every_s``,
    ``wal_restart_pages``: see ``CHECKPOINT_EVERY_S`` and ``WAL_RESTART_PAGES``. The caller
    checks them.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection, checkpoint_conn: sqlite3.Connection,
                 statements: Mapping[str, str], *, max_batch: int, commit_every_s: float,
                 checkpoint_every_s: float, wal_restart_pages: int,
                 every_commit: str | None = None,
                 prepare: Mapping[str, Callable[[list[tuple]], list[tuple]]] | None = None
                 ) -> None:
        self.path = path
        self._wconn = conn
        self._cconn = checkpoint_conn
        self._statements = statements
        self._prepare = dict(prepare or {})
        self._every_commit = every_commit
        self._max_batch = max_batch
        self._commit_every_s = commit_every_s
        self._qlock = threading.Lock()  # makes "closed?" + put atomic, so nothing lands after STOP
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._urgent = threading.Event()  # a flush or close is queued: commit now
        self._closed = False
        self.error: StoreError | None = None
        self.queued_once: set[str] = set()  # the keys of put_once's writes queued so far
        self._transactions = 0
        self._rows = 0
        self._checkpoint_every_s = checkpoint_every_s
        self._wal_restart_pages = wal_restart_pages
        self._restart_wal = False  # set by the checkpointer, done by the writer
        self._checkpoints = 0  # counted by the checkpointer and the writer: under its lock
        self._checkpoints_lock = threading.Lock()
        self._stopped = threading.Event()  # the writer has ended: so does the checkpointer
        self._batch: list[tuple] = []  # the writer's batch until its flushes are answered
        self._thread = threading.Thread(
            target=self._writer, name=f"RunStore writer ({self.path.name})", daemon=True
        )
        self._cthread = threading.Thread(
            target=self._checkpointer, name=f"RunStore checkpointer ({self.path.name})",
            daemon=True,
        )
        self._thread.start()
        self._cthread.start()
        self._finalizer = weakref.finalize(self, _stop_writer, self._queue, self._urgent,
                                           self._thread, self._cthread)

    # ---- queueing (any thread) -----------------------------------------------------------

    def put(self, op: str, *params: Any) -> None:
        with self._qlock:
            if self._closed:
                raise StoreError(f"run store {self.path} is closed")
            if self.error is not None:
                raise self.error
            self._queue.put((op, *params))

    def put_once(self, key: str, op: str, *params: Any) -> None:
        """Put ``op`` unless a write was put under ``key`` before (the store numbers an
        episode key this way). Marked as queued under the queue's lock, after the put: a
        thread that sees the mark in ``queued_once`` puts its writes behind this one."""
        with self._qlock:
            if key in self.queued_once:
                return
            if self._closed:
                raise StoreError(f"run store {self.path} is closed")
            if self.error is not None:
                raise self.error
            self._queue.put((op, *params))
            self.queued_once.add(key)

    async def flush(self) -> None:
        """Resolve once everything enqueued before this call is committed."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self.put(_AFLUSH, loop, fut)
        self._urgent.set()
        await fut

    def flush_sync(self, timeout: float | None = None) -> None:
        """Block until everything enqueued before this call is committed."""
        done = threading.Event()
        box: list[BaseException | None] = [None]

        def wake(err: BaseException | None) -> None:
            box[0] = err
            done.set()

        self.put(_FLUSH, wake)
        self._urgent.set()
        if not done.wait(timeout):
            raise StoreError(f"run store {self.path}: flush did not finish within {timeout}s")
        if box[0] is not None:
            raise box[0]

    def close(self) -> bool:
        """Commit what is queued and stop both threads; True when this call stopped them
        (false when closed already). A failure stays in ``error``. Idempotent."""
        with self._qlock:
            already = self._closed
            self._closed = True
            if not already:
                self._queue.put((_STOP, None))
                self._urgent.set()
        if not already:
            self._thread.join()
            self._cthread.join()
            self._finalizer.detach()
        return not already

    @property
    def stats(self) -> dict[str, int]:
        """Committed transactions and rows so far (rows / transactions = the batching), and
        the checkpoints done (the checkpointer's and the writer's)."""
        return {"transactions": self._transactions, "rows": self._rows,
                "checkpoints": self._checkpoints}

    # ---- the threads ---------------------------------------------------------------------

    def _writer(self) -> None:
        try:
            self._write_batches()
        except BaseException as e:  # noqa: BLE001 - a bug of ours, or no memory left
            self._died(e)
        finally:  # however the writer ends, the checkpointer ends with it
            self._stopped.set()
        # Its connection closed first: SQLite copies the WAL back and deletes it when the last
        # connection closes, and two closing at once (one thread each) may each see the other
        # still open, which left the WAL behind (a test caught it under load, 4 runs in 30).
        if self._cthread.is_alive():  # not started when the writer failed at once
            self._cthread.join()
        try:
            self._wconn.close()
        except sqlite3.Error:
            pass

    def _died(self, e: BaseException) -> None:
        """The writer thread ends on an error outside a commit: the error is sticky, as a
        failed commit's, and whoever waits on a flush queued so far is told (they would
        otherwise wait forever); later writes are refused."""
        err = StoreError(f"run store {self.path}: the writer stopped on an unexpected error "
                         f"({type(e).__name__}); what was committed before is kept: run the "
                         "same command again to continue")
        err.__cause__ = e
        with self._qlock:  # after this, put() raises: nothing is queued behind the drain
            self.error = self.error or err
        waiting = [*self._batch]
        while True:
            try:
                waiting.append(self._queue.get_nowait())
            except queue.Empty:
                break
        self._answer([item[1] for item in waiting if item[0] == _FLUSH],
                     [item[1:] for item in waiting if item[0] == _AFLUSH])

    def _answer(self, callbacks: list[Callable[[BaseException | None], None]],
                flushes: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]]) -> None:
        """Tell the flushes of a batch how it went (``self.error``, None when committed)."""
        for cb in callbacks:
            try:
                cb(self.error)
            except Exception:  # noqa: BLE001 - e.g. the waiting event loop is closed
                pass
        waiting: dict[asyncio.AbstractEventLoop, list[asyncio.Future]] = {}
        for loop, fut in flushes:
            waiting.setdefault(loop, []).append(fut)
        # one wake-up per event loop and batch, however many coroutines wait in it
        for loop, futures in waiting.items():
            try:
                loop.call_soon_threadsafe(_resolve, futures, self.error)
            except RuntimeError:  # that event loop is closed: nobody is waiting
                pass

    def _write_batches(self) -> None:
        q = self._queue
        stopping = False
        while not stopping:
            batch = self._batch = [q.get()]
            if batch[0][0] not in _URGENT and self._commit_every_s > 0:
                self._urgent.wait(self._commit_every_s)  # writes alone never wake it
            self._urgent.clear()  # before draining: whatever set it is queued already
            while len(batch) < self._max_batch:
                try:
                    batch.append(q.get_nowait())
                except queue.Empty:
                    break
            writes: list[tuple[str, tuple]] = []
            callbacks: list[Callable[[BaseException | None], None]] = []
            flushes: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []
            for item in batch:
                op = item[0]
                if op == _FLUSH:
                    callbacks.append(item[1])
                elif op == _AFLUSH:
                    flushes.append((item[1], item[2]))
                elif op == _STOP:
                    stopping = True
                else:
                    writes.append(item)
            if writes and self.error is None:
                try:
                    self._commit(writes)
                except BaseException as e:  # noqa: BLE001 - recorded, surfaced on flush/close
                    hint = unregistered(e)
                    err = StoreError(
                        f"run store {self.path}: writer failed, {len(writes)} queued writes "
                        f"not committed ({type(e).__name__}: {e}"
                        f"{'; ' + hint if hint else ''}); what was committed before "
                        "is kept: fix the cause and run the same command again to continue"
                    )
                    err.__cause__ = e
                    self.error = err
            self._answer(callbacks, flushes)
            self._batch = []
            if self._restart_wal:  # after the waiters are woken: only the next batch waits
                self._restart_wal = False
                self._checkpoint(self._wconn)

    def _checkpointer(self) -> None:
        """Every ``checkpoint_every_s`` with new commits, a passive checkpoint on a
        connection of its own (see ``CHECKPOINT_EVERY_S``); asks the writer to finish one
        when the WAL has grown to ``wal_restart_pages``."""
        seen = 0
        try:
            while not self._stopped.wait(self._checkpoint_every_s):
                if self._transactions == seen:
                    continue
                seen = self._transactions
                frames = self._checkpoint(self._cconn)
                if frames >= self._wal_restart_pages:
                    self._restart_wal = True
        finally:
            try:
                self._cconn.close()
            except sqlite3.Error:
                pass

    def _checkpoint(self, conn: sqlite3.Connection) -> int:
        """A passive checkpoint on ``conn``: the WAL's length in pages (0 when it failed:
        what is committed stays in the WAL, and a failing disk shows at the next commit)."""
        try:
            busy, frames, _ = conn.execute(_CHECKPOINT).fetchone()
        except sqlite3.Error:
            return 0
        if not busy:
            with self._checkpoints_lock:
                self._checkpoints += 1
        return frames

    def _commit(self, writes: list[tuple[str, tuple]]) -> None:
        c = self._wconn
        c.execute("BEGIN IMMEDIATE")
        try:
            if self._every_commit:
                c.execute(self._every_commit)
            # Consecutive writes of one kind go in one executemany; order is kept throughout.
            prepare = self._prepare
            for op, group in itertools.groupby(writes, key=itemgetter(0)):
                params = [w[1] for w in group]
                if op in prepare:
                    params = prepare[op](params)
                c.executemany(self._statements[op], params)
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise
        self._transactions += 1
        self._rows += len(writes)


def _resolve(futures: list[asyncio.Future], err: BaseException | None) -> None:
    """In the waiting loop: settle every flush of one committed batch."""
    for fut in futures:
        if not fut.done():
            if err is None:
                fut.set_result(None)
            else:
                fut.set_exception(err)


def _stop_writer(q: queue.SimpleQueue, urgent: threading.Event,
                 *threads: threading.Thread) -> None:
    """Finalizer: if a store is dropped or the interpreter exits unclosed, commit what is
    queued (the writer, first of ``threads``, stops the checkpointer when it ends)."""
    if threads[0].is_alive():
        q.put((_STOP, None))
        urgent.set()
    for thread in threads:
        thread.join()

