"""The run store: one SQLite file per store, WAL mode, one writer thread with batched commits.

Writes are enqueue-only and never block the event loop: ``event()``, ``episode_started()``
and the other write methods validate and encode their arguments on the caller's thread (so a
bad argument raises right there, and a dict mutated after the call is not what gets stored),
then put one tuple on a queue. The writer thread drains the queue and commits everything it
finds in one transaction (up to ``max_batch`` rows), so under load many rows share a commit.
``await flush()`` / ``flush_sync()`` return once everything enqueued before the call is
committed; reads use their own connection and see committed data only, so flush first to read
your own writes.

A writer failure (disk full, a locked or corrupt file) is sticky: the failed batch is rolled
back, and every later flush, close and write raises ``StoreError`` chained to the cause.
Nothing is dropped silently.

Tables (schema version in ``PRAGMA user_version``):

- ``runs``: run_id, created_at, finished_at, status, config (canonical JSON), config_hash
  (sha256 of that JSON).
- ``episodes``: (run_id, episode_id) -> model, benchmark, domain, task_id, lang, trial,
  status ('running' | 'done' | 'error'), termination, record (msgspec JSON of
  ``EpisodeRecord``), started_at, finished_at.
- ``events``: (run_id, episode_id, seq) -> kind, payload (JSON text), ts. An append-only
  journal: writing an existing seq again is a no-op, so a replay may re-send safely.
- ``judgments``: (run_id, episode_id, judge, method) -> passed, score, details (JSON),
  created_at. Re-judging with the same judge and method replaces; other pairs sit side by side.

Timestamps are Unix seconds (float), taken when the write is enqueued. Durability:
``synchronous=NORMAL`` (the default) survives a killed process; a power loss may lose the last
commits. Pass ``synchronous="FULL"`` to fsync every commit.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import math
import queue
import sqlite3
import threading
import time
import weakref
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable

import msgspec

from sweepbench.errors import ConfigMismatchError, StoreError
from sweepbench.wire import EpisodeRecord

__all__ = ["ConfigMismatchError", "RunStore", "StoreError", "canonical_json", "config_hash"]

SCHEMA_VERSION = 1
APPLICATION_ID = 0x53574250  # "SWBP": marks the file as a sweepbench run store

EPISODE_STATUSES = ("running", "done", "error")


# ---- schema ------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE runs (
    run_id      TEXT PRIMARY KEY,
    created_at  REAL NOT NULL,
    finished_at REAL,
    status      TEXT NOT NULL,
    config      TEXT NOT NULL,
    config_hash TEXT NOT NULL
);
CREATE TABLE episodes (
    run_id      TEXT NOT NULL,
    episode_id  TEXT NOT NULL,
    model       TEXT NOT NULL,
    benchmark   TEXT NOT NULL,
    domain      TEXT NOT NULL,
    task_id     TEXT NOT NULL,
    lang        TEXT,
    trial       INTEGER NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('running', 'done', 'error')),
    termination TEXT,
    record      BLOB,
    started_at  REAL NOT NULL,
    finished_at REAL,
    PRIMARY KEY (run_id, episode_id)
);
CREATE TABLE events (
    run_id     TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    ts         REAL NOT NULL,
    PRIMARY KEY (run_id, episode_id, seq)
);
CREATE TABLE judgments (
    run_id     TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    judge      TEXT NOT NULL,
    method     TEXT NOT NULL,
    passed     INTEGER CHECK (passed IN (0, 1)),
    score      REAL,
    details    TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (run_id, episode_id, judge, method)
);
"""

# What readers filter, group and page by without touching the record blobs: the viewer's
# leaderboard and episode lists (covering), and a run's judge/method pairs.
VIEW_INDEXES = (
    ("episodes_view", "episodes (run_id, model, benchmark, domain, task_id, trial, status, "
                      "termination, episode_id)"),
    ("judgments_pair", "judgments (run_id, judge, method, passed)"),
)

# Write statements, keyed by the op name carried on the queue.
_SQL: dict[str, str] = {
    # Re-beginning an existing run (resume) marks it running again; created_at and config stay.
    "begin_run": """
        INSERT INTO runs (run_id, created_at, finished_at, status, config, config_hash)
        VALUES (?, ?, NULL, 'running', ?, ?)
        ON CONFLICT (run_id) DO UPDATE SET status = 'running', finished_at = NULL
    """,
    "finish_run": "UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ?",
    # Starting an episode again (resume, retry) resets its outcome; its journal is kept.
    "episode_started": """
        INSERT INTO episodes (run_id, episode_id, model, benchmark, domain, task_id, lang, trial,
                              status, started_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)
        ON CONFLICT (run_id, episode_id) DO UPDATE SET
            model = excluded.model, benchmark = excluded.benchmark, domain = excluded.domain,
            task_id = excluded.task_id, lang = excluded.lang, trial = excluded.trial,
            status = 'running', termination = NULL, record = NULL,
            started_at = excluded.started_at, finished_at = NULL
    """,
    # Upsert, so a finish without a start is not lost (lang is then unknown: NULL).
    "episode_finished": """
        INSERT INTO episodes (run_id, episode_id, model, benchmark, domain, task_id, lang, trial,
                              status, termination, record, started_at, finished_at)
        VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (run_id, episode_id) DO UPDATE SET
            status = excluded.status, termination = excluded.termination,
            record = excluded.record, finished_at = excluded.finished_at
    """,
    "event": """
        INSERT INTO events (run_id, episode_id, seq, kind, payload, ts) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (run_id, episode_id, seq) DO NOTHING
    """,
    "judgment": """
        INSERT INTO judgments (run_id, episode_id, judge, method, passed, score, details,
                               created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (run_id, episode_id, judge, method) DO UPDATE SET
            passed = excluded.passed, score = excluded.score, details = excluded.details,
            created_at = excluded.created_at
    """,
}

_FLUSH = "flush"
_STOP = "stop"
_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")

_record_decoder = msgspec.json.Decoder(EpisodeRecord)
_encode = msgspec.json.Encoder().encode


def canonical_json(obj: Any) -> bytes:
    """Compact JSON with sorted keys: the same value always gives the same bytes."""
    try:
        return msgspec.json.encode(obj, order="sorted")
    except (TypeError, msgspec.EncodeError) as e:
        raise TypeError(f"not JSON-serialisable: {e}") from e


def config_hash(config: Any) -> str:
    """sha256 (hex) of the canonical JSON of a run config; what resume compares."""
    return hashlib.sha256(canonical_json(config)).hexdigest()


def _check_str(name: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name} must be a non-empty str, got {value!r}")


def _check_int(name: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError(f"{name} must be an int >= 0, got {value!r}")


def _json_payload(what: str, payload: Any) -> str:
    """Encode a dict, or check bytes are one JSON value; returns JSON text."""
    if isinstance(payload, (bytes, bytearray, memoryview)):
        data = bytes(payload)
        try:
            msgspec.json.decode(data, type=msgspec.Raw)  # validates without building objects
            return data.decode("utf-8")
        except (msgspec.DecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{what}: bytes are not valid JSON: {e}") from e
    if not isinstance(payload, dict):
        raise TypeError(f"{what} must be a dict or JSON bytes, got {type(payload).__name__}")
    try:
        return _encode(payload).decode("utf-8")
    except (TypeError, msgspec.EncodeError) as e:
        raise TypeError(f"{what} is not JSON-serialisable: {e}") from e


def _connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    # isolation_level=None: no implicit transactions; the writer says BEGIN/COMMIT itself.
    # check_same_thread=False: each connection is still used by one thread at a time.
    return sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, timeout=busy_timeout
    )


def _stop_writer(q: queue.SimpleQueue, thread: threading.Thread) -> None:
    """Finalizer: if a store is dropped or the interpreter exits unclosed, commit what is queued."""
    if thread.is_alive():
        q.put((_STOP, None))
        thread.join()


class RunStore:
    """One run store file. Thread-safe; write methods may be called from the event loop.

    ``create``: make the file (and its directory) when missing, else raise ``StoreError``.
    ``synchronous``: SQLite's durability level. ``max_batch``: most rows per transaction.
    ``busy_timeout``: seconds to wait for a lock held by another connection before failing.
    ``linger_s``: how long the writer gathers writes into one commit after waking.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        create: bool = True,
        synchronous: str = "NORMAL",
        max_batch: int = 20_000,
        busy_timeout: float = 60.0,
        linger_s: float = 0.002,
    ) -> None:
        self.path = Path(path)
        # How long the writer waits after waking for more writes to join the same commit:
        # under load most enqueuers wait on a flush, so fewer, larger commits cost them a
        # couple of milliseconds and save the writer a commit per wake-up.
        self._linger_s = linger_s
        if synchronous.upper() not in _SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {_SYNCHRONOUS}, got {synchronous!r}")
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if not self.path.exists():
            if not create:
                raise StoreError(f"run store {self.path} does not exist")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._max_batch = max_batch
        conns: list[sqlite3.Connection] = []
        try:
            conns.append(_connect(self.path, busy_timeout))
            self._wconn = conns[0]
            self._init_schema(synchronous.upper())
            conns.append(_connect(self.path, busy_timeout))
            self._rconn = conns[1]
            self._rconn.execute("PRAGMA query_only = ON")
        except BaseException as e:
            for conn in conns:
                conn.close()
            if isinstance(e, sqlite3.Error):
                raise StoreError(f"cannot open run store {self.path}: {e}") from e
            raise
        self._rlock = threading.Lock()
        self._read_closed = False
        self._qlock = threading.Lock()  # makes "closed?" + put atomic, so nothing lands after STOP
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        self._error: StoreError | None = None
        self._run_hashes: dict[str, str] = {}
        self._transactions = 0
        self._rows = 0
        self._thread = threading.Thread(
            target=self._writer, name=f"RunStore writer ({self.path.name})", daemon=True
        )
        self._thread.start()
        self._finalizer = weakref.finalize(self, _stop_writer, self._queue, self._thread)

    def _init_schema(self, synchronous: str) -> None:
        c = self._wconn
        try:
            mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path} is not a sweepbench run store: {e}") from e
        if mode.lower() != "wal":
            raise StoreError(f"run store {self.path}: cannot enable WAL mode (got {mode!r})")
        c.execute(f"PRAGMA synchronous = {synchronous}")
        app_id = c.execute("PRAGMA application_id").fetchone()[0]
        version = c.execute("PRAGMA user_version").fetchone()[0]
        tables = c.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id not in (0, APPLICATION_ID) or (app_id == 0 and tables):
            raise StoreError(f"{self.path} is an SQLite file but not a sweepbench run store")
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"run store {self.path} has schema version {version}; this sweepbench reads "
                f"version {SCHEMA_VERSION} (upgrade sweepbench)"
            )
        if version == 0:
            c.execute("BEGIN IMMEDIATE")
            if c.execute("PRAGMA user_version").fetchone()[0] != 0:  # another process made it
                c.execute("COMMIT")
                return
            try:
                # one by one: executescript() would commit on its own
                for stmt in filter(str.strip, _SCHEMA.split(";")):
                    c.execute(stmt)
                c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
        # Indexes for readers (the viewer): added whenever a store opens, older stores too.
        for name, on in VIEW_INDEXES:
            c.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {on}")

    # ---- writer thread -------------------------------------------------------------------

    def _writer(self) -> None:
        q = self._queue
        stopping = False
        while not stopping:
            batch = [q.get()]
            if self._linger_s > 0 and q.qsize() < self._max_batch:
                time.sleep(self._linger_s)
            while len(batch) < self._max_batch:
                try:
                    batch.append(q.get_nowait())
                except queue.Empty:
                    break
            writes: list[tuple[str, tuple]] = []
            callbacks: list[Callable[[BaseException | None], None]] = []
            for item in batch:
                op = item[0]
                if op == _FLUSH:
                    callbacks.append(item[1])
                elif op == _STOP:
                    stopping = True
                else:
                    writes.append(item)
            if writes and self._error is None:
                try:
                    self._commit(writes)
                except BaseException as e:  # noqa: BLE001 - recorded, surfaced on flush/close
                    err = StoreError(
                        f"run store {self.path}: writer failed, {len(writes)} queued writes "
                        f"not committed: {e!r}"
                    )
                    err.__cause__ = e
                    self._error = err
            for cb in callbacks:
                try:
                    cb(self._error)
                except Exception:  # noqa: BLE001 - e.g. the waiting event loop is closed
                    pass
        try:
            self._wconn.close()
        except sqlite3.Error:
            pass

    def _commit(self, writes: list[tuple[str, tuple]]) -> None:
        c = self._wconn
        c.execute("BEGIN IMMEDIATE")
        try:
            # Consecutive writes of one kind go in one executemany; order is kept throughout.
            for op, group in itertools.groupby(writes, key=itemgetter(0)):
                c.executemany(_SQL[op], [w[1] for w in group])
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise
        self._transactions += 1
        self._rows += len(writes)

    def _put(self, op: str, params: Any) -> None:
        with self._qlock:
            if self._closed:
                raise StoreError(f"run store {self.path} is closed")
            if self._error is not None:
                raise self._error
            self._queue.put((op, params))

    # ---- writes (enqueue-only) -----------------------------------------------------------

    def begin_run(self, run_id: str, config: dict) -> None:
        """Record a run; idempotent for an existing run with the same config.

        Raises ``ConfigMismatchError`` when the run exists with a different config.
        """
        _check_str("run_id", run_id)
        if not isinstance(config, dict):
            raise TypeError(f"config must be a dict, got {type(config).__name__}")
        text = canonical_json(config)
        digest = hashlib.sha256(text).hexdigest()
        existing = self._run_hashes.get(run_id)
        if existing is None:
            row = self._read("SELECT config_hash FROM runs WHERE run_id = ?", (run_id,))
            existing = row[0][0] if row else None
        if existing is not None and existing != digest:
            raise ConfigMismatchError(
                f"run {run_id!r} in {self.path} was started with a different config "
                f"(stored sha256 {existing[:12]}, given {digest[:12]}); resume it with its "
                "original config or start a new run"
            )
        self._run_hashes[run_id] = digest
        self._put("begin_run", (run_id, time.time(), text.decode("utf-8"), digest))

    def finish_run(self, run_id: str, status: str) -> None:
        """Set a run's final status (e.g. 'done', 'interrupted', 'error')."""
        _check_str("run_id", run_id)
        _check_str("status", status)
        self._put("finish_run", (status, time.time(), run_id))

    def episode_started(
        self,
        run_id: str,
        episode_id: str,
        *,
        model: str,
        benchmark: str,
        domain: str,
        task_id: str,
        lang: str,
        trial: int,
    ) -> None:
        for name, value in (("run_id", run_id), ("episode_id", episode_id), ("model", model),
                            ("benchmark", benchmark), ("domain", domain), ("task_id", task_id),
                            ("lang", lang)):
            _check_str(name, value)
        _check_int("trial", trial)
        self._put(
            "episode_started",
            (run_id, episode_id, model, benchmark, domain, task_id, lang, trial, time.time()),
        )

    def event(
        self, run_id: str, episode_id: str, seq: int, kind: str, payload: dict | bytes
    ) -> None:
        """Journal one step: kind is e.g. 'model_call', 'tool_call', 'message'.

        ``payload`` is a dict (encoded now) or bytes holding one JSON value (checked now).
        """
        _check_str("run_id", run_id)
        _check_str("episode_id", episode_id)
        _check_int("seq", seq)
        _check_str("kind", kind)
        text = _json_payload(f"event payload ({episode_id} #{seq})", payload)
        self._put("event", (run_id, episode_id, seq, kind, text, time.time()))

    def episode_finished(self, episode_id: str, record: EpisodeRecord) -> None:
        """Store the record; status 'error' when ``record.termination == 'error'``."""
        _check_str("episode_id", episode_id)
        if not isinstance(record, EpisodeRecord):
            raise TypeError(f"record must be an EpisodeRecord, got {type(record).__name__}")
        _check_str("record.run_id", record.run_id)
        blob = _encode(record)
        termination = str(record.termination)
        status = "error" if termination == "error" else "done"
        now = time.time()
        self._put(
            "episode_finished",
            (record.run_id, episode_id, record.model, record.benchmark, record.domain,
             record.task_id, record.trial, status, termination, blob, now, now),
        )

    def judgment(
        self,
        run_id: str,
        episode_id: str,
        *,
        judge: str,
        method: str,
        passed: bool | None,
        score: float | None,
        details: dict,
    ) -> None:
        for name, value in (("run_id", run_id), ("episode_id", episode_id), ("judge", judge),
                            ("method", method)):
            _check_str(name, value)
        if passed is not None and not isinstance(passed, bool):
            raise TypeError(f"passed must be a bool or None, got {passed!r}")
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise TypeError(f"score must be a number or None, got {score!r}")
            if not math.isfinite(score):
                raise ValueError(f"score must be finite, got {score!r}")
            score = float(score)
        text = _json_payload(f"judgment details ({episode_id}, {judge}/{method})", details)
        self._put(
            "judgment",
            (run_id, episode_id, judge, method,
             None if passed is None else int(passed), score, text, time.time()),
        )

    # ---- flush / close -------------------------------------------------------------------

    async def flush(self) -> None:
        """Resolve once everything enqueued before this call is committed."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()

        def resolve(err: BaseException | None) -> None:
            if not fut.done():
                if err is None:
                    fut.set_result(None)
                else:
                    fut.set_exception(err)

        self._put(_FLUSH, lambda err: loop.call_soon_threadsafe(resolve, err))
        await fut

    def flush_sync(self, timeout: float | None = None) -> None:
        """Block until everything enqueued before this call is committed."""
        done = threading.Event()
        box: list[BaseException | None] = [None]

        def wake(err: BaseException | None) -> None:
            box[0] = err
            done.set()

        self._put(_FLUSH, wake)
        if not done.wait(timeout):
            raise StoreError(f"run store {self.path}: flush did not finish within {timeout}s")
        if box[0] is not None:
            raise box[0]

    def close(self) -> None:
        """Commit what is queued, stop the writer and close; raises a writer failure. Idempotent."""
        with self._qlock:
            already = self._closed
            self._closed = True
            if not already:
                self._queue.put((_STOP, None))
        if not already:
            self._thread.join()
            self._finalizer.detach()
            with self._rlock:
                self._rconn.close()
                self._read_closed = True
        if self._error is not None:
            raise self._error

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def writer_stats(self) -> dict[str, int]:
        """Committed transactions and rows so far (rows / transactions = the batching)."""
        return {"transactions": self._transactions, "rows": self._rows}

    # ---- reads (own connection, committed data only) -------------------------------------

    def _read(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._rlock:
            if self._read_closed:
                raise StoreError(f"run store {self.path} is closed")
            try:
                return self._rconn.execute(sql, params).fetchall()
            except sqlite3.Error as e:
                raise StoreError(f"run store {self.path}: read failed: {e}") from e

    def runs(self) -> list[dict]:
        """All runs, oldest first, config decoded."""
        rows = self._read(
            "SELECT run_id, created_at, finished_at, status, config, config_hash FROM runs "
            "ORDER BY created_at, rowid"
        )
        return [
            {"run_id": r[0], "created_at": r[1], "finished_at": r[2], "status": r[3],
             "config": msgspec.json.decode(r[4]), "config_hash": r[5]}
            for r in rows
        ]

    def run(self, run_id: str) -> dict | None:
        """One run (as in ``runs()``) or None."""
        return next((r for r in self.runs() if r["run_id"] == run_id), None)

    def latest_run_id(self) -> str | None:
        rows = self._read("SELECT run_id FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1")
        return rows[0][0] if rows else None

    def episode_status(self, run_id: str) -> dict[str, str]:
        """episode_id -> 'running' | 'done' | 'error' (what resume skips or replays)."""
        rows = self._read("SELECT episode_id, status FROM episodes WHERE run_id = ?", (run_id,))
        return dict(rows)

    def episode_rows(self, run_id: str) -> list[dict]:
        """Every episode's columns without the record blob (cheap; what reports group by)."""
        rows = self._read(
            "SELECT episode_id, model, benchmark, domain, task_id, lang, trial, status, "
            "termination, started_at, finished_at FROM episodes WHERE run_id = ? "
            "ORDER BY model, benchmark, domain, task_id, trial, episode_id",
            (run_id,),
        )
        keys = ("episode_id", "model", "benchmark", "domain", "task_id", "lang", "trial",
                "status", "termination", "started_at", "finished_at")
        return [dict(zip(keys, r)) for r in rows]

    def episodes(self, run_id: str) -> list[EpisodeRecord]:
        """Records of the run's finished episodes (running ones have none yet)."""
        return [record for _, record in self.episode_records(run_id)]

    def episode_records(self, run_id: str) -> list[tuple[str, EpisodeRecord]]:
        """(episode_id, record) of the run's finished episodes, in ``episodes()`` order."""
        rows = self._read(
            "SELECT episode_id, record FROM episodes WHERE run_id = ? AND record IS NOT NULL "
            "ORDER BY model, benchmark, domain, task_id, trial, episode_id",
            (run_id,),
        )
        out = []
        for episode_id, blob in rows:
            try:
                out.append((episode_id, _record_decoder.decode(blob)))
            except msgspec.DecodeError as e:
                raise StoreError(
                    f"run store {self.path}: record of episode {episode_id!r} in run "
                    f"{run_id!r} does not decode: {e}"
                ) from e
        return out

    def events(
        self, run_id: str, episode_id: str, *, kind: str | None = None, raw: bool = False
    ) -> list[dict]:
        """The episode's journal in seq order: dicts with seq, kind, payload, ts.

        ``raw=True`` leaves payloads as JSON bytes (to decode straight into a wire type).
        """
        sql = "SELECT seq, kind, payload, ts FROM events WHERE run_id = ? AND episode_id = ?"
        params: tuple = (run_id, episode_id)
        if kind is not None:
            sql += " AND kind = ?"
            params += (kind,)
        rows = self._read(sql + " ORDER BY seq", params)
        decode = (lambda t: t.encode("utf-8")) if raw else msgspec.json.decode
        return [{"seq": s, "kind": k, "payload": decode(p), "ts": ts} for s, k, p, ts in rows]

    def run_events(self, run_id: str, kind: str) -> list[tuple[str, bytes]]:
        """(episode_id, payload JSON bytes) of every event of one kind in a run, in journal
        order: what profiles scan (decode the bytes into the fields you need)."""
        rows = self._read(
            "SELECT episode_id, payload FROM events WHERE run_id = ? AND kind = ? "
            "ORDER BY episode_id, seq",
            (run_id, kind),
        )
        return [(e, p.encode("utf-8")) for e, p in rows]

    def judgments(self, run_id: str) -> list[dict]:
        """All judgments of a run: episode_id, judge, method, passed, score, details, created_at."""
        rows = self._read(
            "SELECT episode_id, judge, method, passed, score, details, created_at FROM judgments "
            "WHERE run_id = ? ORDER BY episode_id, judge, method",
            (run_id,),
        )
        return [
            {"episode_id": e, "judge": j, "method": m,
             "passed": None if p is None else bool(p), "score": s,
             "details": msgspec.json.decode(d), "created_at": t}
            for e, j, m, p, s, d, t in rows
        ]
