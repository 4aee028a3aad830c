"""The run store: one SQLite file per store, WAL mode, one writer thread with batched commits.

Writes are enqueue-only and never block the event loop: ``event()``, ``episode_started()``
and the other write methods validate and encode their arguments on the caller's thread (so a
bad argument raises right there, and a dict mutated after the call is not what gets stored),
then put one tuple on a queue. The writer thread drains the queue and commits everything it
finds in one transaction (up to ``max_batch`` rows). Woken by a write, it gathers what
arrives for ``commit_every_s`` (``COMMIT_EVERY_S``) before it commits, so under load many
rows share a commit, and whoever writes never waits for one. ``await flush()`` /
``flush_sync()`` (and ``close()``) cut the gathering short and return once everything
enqueued before the call is committed; reads use their own connection and see committed data
only, so flush first to read your own writes.

A writer failure (disk full, a locked or corrupt file) is sticky: the failed batch is rolled
back, and every later flush, close and write raises ``StoreError`` chained to the cause.
Nothing is dropped silently.

Episodes, not runs, are the unit: an episode is keyed by its ``EpisodeKey`` (the hash of what
determines its outcome, see :mod:`sweepbench.ids`), so a store accumulates episodes across
invocations and a second sweep that selects a stored episode reuses it. Tables (schema
version in ``PRAGMA user_version``; an older store is migrated on open, see
:mod:`sweepbench.store.migrate`):

- ``runs``: one row per invocation (``run``, ``judge``, an import): run_id, created_at,
  finished_at, status, config (canonical JSON), config_hash, prices (endpoint -> input /
  cached_input / output dollars per million tokens, as configured when it ran), info (JSON:
  the benchmarks' headline methods, the command, a spend cap reached).
- ``run_episodes``: (run_id, episode_key) -> spec: the episodes a run selected, stored or not.
- ``episodes``: episode_key -> label (``model|task key|trial``), model, benchmark, spec,
  domain, task_id, lang, trial, user_model, user_mode, identity (JSON), unreachable (why no
  agent can pass the task, or NULL), status ('running' | 'done' | 'error'), termination,
  record (msgspec JSON of ``EpisodeRecord``), run_id (the run that last started or finished
  it), started_at, finished_at.
- ``events``: (episode_key, journal, seq) -> kind, payload (JSON text), ts, run_id (the run
  that wrote it), endpoint (the endpoint a ``model_call`` went to). The journal is ``""`` for
  the episode's own calls and ``judge|<judge>|<method>`` for a judge's. Append-only: writing
  an existing seq again is a no-op, so a replay may re-send safely. A view (read it, insert
  into it, delete from it like a table) over ``event_keys`` (ep -> episode_key: each key
  numbered in the order the store first saw it, which is the order episodes start) and
  ``event_rows`` (keyed by (ep, journal, seq)), so that the rows of the episodes in flight
  are written side by side in the key's index (version 3).
- ``judgments``: (episode_key, judge, method) -> passed, score, details (JSON), created_at,
  run_id, judge_key (what the judge was: its endpoint identity). Re-judging with the same
  judge and method replaces; other pairs sit side by side; starting an episode again (a
  retry) deletes its judgments, which judged the record it replaces.

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
from typing import Any, Callable, Iterable

import msgspec
from msgspec import Struct, field

from sweepbench.errors import ConfigMismatchError, StoreError
from sweepbench.ids import EPISODE_JOURNAL, EpisodeId, EpisodeKey, TaskKey
from sweepbench.wire import EpisodeRecord

__all__ = ["ConfigMismatchError", "EpisodeMeta", "ModelCallRow", "RunStore", "StoreError",
           "canonical_json", "config_hash"]

SCHEMA_VERSION = 3
APPLICATION_ID = 0x53574250  # "SWBP": marks the file as a sweepbench run store

EPISODE_STATUSES = ("running", "done", "error")


class EpisodeMeta(Struct, kw_only=True, frozen=True):
    """An episode's descriptive columns: what reports group and filter by."""

    key: str
    label: str
    model: str
    benchmark: str
    domain: str
    task_id: str
    trial: int
    lang: str | None = None
    spec: str | None = None
    user_model: str | None = None
    user_mode: str | None = None
    identity: dict[str, Any] = field(default_factory=dict)
    unreachable: str | None = None


class ModelCallRow(Struct, array_like=True):
    """One journaled model call, as cost and profile read it (usage from its payload)."""

    episode_key: str
    journal: str
    run_id: str | None
    endpoint: str | None
    role: str | None
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int
    latency_s: float | None
    attempts: int | None
    statuses: str | None  # JSON text of the HTTP statuses of its attempts, when recorded
    stalls: str | None = None  # JSON text of its hung and hedged requests, when it had any


# ---- schema ------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE runs (
    run_id      TEXT PRIMARY KEY,
    created_at  REAL NOT NULL,
    finished_at REAL,
    status      TEXT NOT NULL,
    config      TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    prices      TEXT NOT NULL DEFAULT '{}',
    info        TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE run_episodes (
    run_id      TEXT NOT NULL,
    episode_key TEXT NOT NULL,
    spec        TEXT,
    PRIMARY KEY (run_id, episode_key)
);
CREATE TABLE episodes (
    episode_key TEXT PRIMARY KEY,
    label       TEXT NOT NULL,
    model       TEXT NOT NULL,
    benchmark   TEXT NOT NULL,
    spec        TEXT,
    domain      TEXT NOT NULL,
    task_id     TEXT NOT NULL,
    lang        TEXT,
    trial       INTEGER NOT NULL,
    user_model  TEXT,
    user_mode   TEXT,
    identity    TEXT NOT NULL DEFAULT '{}',
    unreachable TEXT,
    status      TEXT NOT NULL CHECK (status IN ('running', 'done', 'error')),
    termination TEXT,
    record      BLOB,
    run_id      TEXT,
    started_at  REAL NOT NULL,
    finished_at REAL
);
CREATE INDEX episodes_by_model ON episodes (model, benchmark, domain, task_id, trial);
CREATE INDEX episodes_by_label ON episodes (label);
CREATE TABLE judgments (
    episode_key TEXT NOT NULL,
    judge       TEXT NOT NULL,
    method      TEXT NOT NULL,
    passed      INTEGER CHECK (passed IN (0, 1)),
    score       REAL,
    details     TEXT NOT NULL,
    created_at  REAL NOT NULL,
    run_id      TEXT,
    judge_key   TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (episode_key, judge, method)
)
"""

# The journal (see the module docstring): an episode's key is numbered the first time the
# store sees it, and its events are keyed by that number, so the episodes in flight sit side
# by side in the key's index (a content hash leading the key put each row on a page of its
# own). ``events`` is a view with the columns of schema 2's table; writing through it
# (INSERT [OR IGNORE], DELETE) goes through its triggers, which number a new key. The
# writer's insert does not: it names the number's row, which the store writes first.
_EVENT_TABLES = """
CREATE TABLE event_keys (
    ep          INTEGER PRIMARY KEY,
    episode_key TEXT NOT NULL UNIQUE
);
CREATE TABLE event_rows (
    ep          INTEGER NOT NULL,
    journal     TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    payload     TEXT NOT NULL,
    ts          REAL NOT NULL,
    run_id      TEXT,
    endpoint    TEXT,
    PRIMARY KEY (ep, journal, seq)
)
"""
# Statements with statements inside: a tuple, not split on ";". The insert trigger numbers
# a key with NOT EXISTS rather than OR IGNORE, which an INSERT OR REPLACE through the view
# would override (and renumber the key, orphaning its rows); a key keeps its number when its
# rows are deleted.
_EVENTS_VIEW = (
    """CREATE VIEW events AS
       SELECT k.episode_key AS episode_key, r.journal AS journal, r.seq AS seq, r.kind AS kind,
              r.payload AS payload, r.ts AS ts, r.run_id AS run_id, r.endpoint AS endpoint
       FROM event_keys k JOIN event_rows r ON r.ep = k.ep""",
    """CREATE TRIGGER events_insert INSTEAD OF INSERT ON events BEGIN
           INSERT INTO event_keys (episode_key) SELECT NEW.episode_key
           WHERE NOT EXISTS (SELECT 1 FROM event_keys WHERE episode_key = NEW.episode_key);
           INSERT INTO event_rows (ep, journal, seq, kind, payload, ts, run_id, endpoint)
           VALUES ((SELECT ep FROM event_keys WHERE episode_key = NEW.episode_key),
                   NEW.journal, NEW.seq, NEW.kind, NEW.payload, NEW.ts, NEW.run_id,
                   NEW.endpoint);
       END""",
    """CREATE TRIGGER events_delete INSTEAD OF DELETE ON events BEGIN
           DELETE FROM event_rows
           WHERE ep = (SELECT ep FROM event_keys WHERE episode_key = OLD.episode_key)
             AND journal = OLD.journal AND seq = OLD.seq;
       END""",
)

# What readers filter, group and page by without touching the record blobs (which sit
# before started_at in a row, so reading past them means reading their overflow pages): the
# viewer's episode lists, in their order, and its leaderboards (covering; the columns after
# episode_key also decide which identity of a (model, task, trial) is the newest), each
# episode's verdicts by judge and method (covering: what lists and leaderboards join), and
# the runs that selected an episode.
VIEW_INDEXES = (
    ("episodes_view", "episodes (model, benchmark, domain, task_id, trial, episode_key, status, "
                      "termination, lang, user_model, user_mode, started_at, unreachable)"),
    ("judgments_by_episode", "judgments (episode_key, judge, method, passed, score)"),
    ("run_episodes_by_episode", "run_episodes (episode_key, run_id)"),
)

_EPISODE_COLUMNS = ("episode_key", "label", "model", "benchmark", "spec", "domain", "task_id",
                    "lang", "trial", "user_model", "user_mode", "unreachable", "status",
                    "termination", "run_id", "started_at", "finished_at")

# Write statements, keyed by the op name carried on the queue.
_SQL: dict[str, str] = {
    # Re-beginning an existing run marks it running again; created_at and config stay.
    "begin_run": """
        INSERT INTO runs (run_id, created_at, finished_at, status, config, config_hash, prices,
                          info)
        VALUES (?, ?, NULL, 'running', ?, ?, ?, ?)
        ON CONFLICT (run_id) DO UPDATE SET status = 'running', finished_at = NULL,
            prices = excluded.prices, info = excluded.info
    """,
    "finish_run": "UPDATE runs SET status = ?, finished_at = ?, info = json_patch(info, ?) "
                  "WHERE run_id = ?",
    "select": """
        INSERT INTO run_episodes (run_id, episode_key, spec) VALUES (?, ?, ?)
        ON CONFLICT (run_id, episode_key) DO NOTHING
    """,
    # A stored episode selected under another name (a renamed endpoint with the same identity)
    # takes the name it is selected by now; its unreachability is what the code says now.
    "relabel": """
        UPDATE episodes SET model = ?, label = ?, spec = coalesce(spec, ?), unreachable = ?
        WHERE episode_key = ?
    """,
    # Starting an episode again (resume, retry) resets its outcome; its journal is kept and its
    # judgments, which judged the record being replaced, are deleted (see "clear_judgments").
    "episode_started": """
        INSERT INTO episodes (episode_key, label, model, benchmark, spec, domain, task_id, lang,
                              trial, user_model, user_mode, identity, unreachable, status,
                              run_id, started_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)
        ON CONFLICT (episode_key) DO UPDATE SET
            label = excluded.label, model = excluded.model, spec = coalesce(episodes.spec,
            excluded.spec), unreachable = excluded.unreachable, status = 'running',
            termination = NULL, record = NULL, run_id = excluded.run_id,
            started_at = excluded.started_at, finished_at = NULL
    """,
    "clear_judgments": "DELETE FROM judgments WHERE episode_key = ?",
    # Upsert, so a finish without a start is not lost (its columns then come from the record).
    "episode_finished": """
        INSERT INTO episodes (episode_key, label, model, benchmark, domain, task_id, lang,
                              trial, status, termination, record, run_id, started_at,
                              finished_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (episode_key) DO UPDATE SET
            status = excluded.status, termination = excluded.termination,
            record = excluded.record, run_id = excluded.run_id,
            finished_at = excluded.finished_at
    """,
    # A key's number, given the first time this store's process sees the key (it keeps the
    # number it has); written before the key's first event (see "event").
    "event_key": "INSERT OR IGNORE INTO event_keys (episode_key) VALUES (?)",
    # Straight into the rows, not through the view's trigger: the key is numbered already.
    "event": """
        INSERT INTO event_rows (ep, journal, seq, kind, payload, ts, run_id, endpoint)
        VALUES ((SELECT ep FROM event_keys WHERE episode_key = ?), ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (ep, journal, seq) DO NOTHING
    """,
    "judgment": """
        INSERT INTO judgments (episode_key, judge, method, passed, score, details, created_at,
                               run_id, judge_key)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (episode_key, judge, method) DO UPDATE SET
            passed = excluded.passed, score = excluded.score, details = excluded.details,
            created_at = excluded.created_at, run_id = excluded.run_id,
            judge_key = excluded.judge_key
    """,
}

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
    """sha256 (hex) of the canonical JSON of a run config."""
    return hashlib.sha256(canonical_json(config)).hexdigest()


def _meta(value: Any) -> EpisodeMeta:
    """An EpisodeMeta, or a mapping of its fields (what callers outside results/ pass)."""
    if isinstance(value, EpisodeMeta):
        return value
    if not isinstance(value, dict):
        raise TypeError(f"expected an EpisodeMeta or a dict of its fields, got "
                        f"{type(value).__name__}")
    try:
        return msgspec.convert(value, EpisodeMeta)
    except msgspec.ValidationError as e:
        raise TypeError(f"episode columns: {e}") from None


def _check_str(name: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name} must be a non-empty str, got {value!r}")


def _check_opt_str(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, got {value!r}")


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


_READ_ONLY_HINT = " (the store's file and folder must be writable: copy it to a writable place)"


def _read_only(e: sqlite3.Error) -> bool:
    return getattr(e, "sqlite_errorname", "") in ("SQLITE_READONLY", "SQLITE_CANTOPEN",
                                                  "SQLITE_PERM") or "readonly" in str(e)


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


def _in(column: str, values: list[str]) -> tuple[str, tuple]:
    """``column IN (?, ?, ...)`` for a bounded number of values (SQLite's parameter limit)."""
    return f"{column} IN ({','.join('?' * len(values))})", tuple(values)


def _chunks(values: Iterable[str], n: int = 900) -> Iterable[list[str]]:
    it = iter(values)
    while chunk := list(itertools.islice(it, n)):
        yield chunk


def create_schema(c: sqlite3.Connection) -> None:
    """The current schema's tables, in the connection's open transaction."""
    for stmt in filter(str.strip, _SCHEMA.split(";")):  # executescript() would commit
        c.execute(stmt)
    create_events(c)
    c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def create_events(c: sqlite3.Connection) -> None:
    """The journal's tables, its ``events`` view and the view's triggers."""
    for stmt in (*filter(str.strip, _EVENT_TABLES.split(";")), *_EVENTS_VIEW):
        c.execute(stmt)


class RunStore:
    """One run store file. Thread-safe; write methods may be called from the event loop.

    ``create``: make the file (and its directory) when missing, else raise ``StoreError``.
    ``synchronous``: SQLite's durability level. ``max_batch``: most rows per transaction.
    ``busy_timeout``: seconds to wait for a lock held by another connection before failing.
    ``commit_every_s``: how long the writer gathers writes into one commit after a write woke
    it, when nobody waits on a flush (see ``COMMIT_EVERY_S``); 0: commit what is queued at once.
    ``checkpoint_every_s``, ``wal_restart_pages``: see ``CHECKPOINT_EVERY_S`` and
    ``WAL_RESTART_PAGES``.
    ``migrated``: set when opening converted an older schema (a one-line note for the user).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        create: bool = True,
        synchronous: str = "NORMAL",
        max_batch: int = 20_000,
        busy_timeout: float = 60.0,
        commit_every_s: float = COMMIT_EVERY_S,
        checkpoint_every_s: float = CHECKPOINT_EVERY_S,
        wal_restart_pages: int = WAL_RESTART_PAGES,
    ) -> None:
        self.path = Path(path)
        self.migrated: str | None = None
        if not commit_every_s >= 0:
            raise ValueError(f"commit_every_s must be >= 0, got {commit_every_s!r}")
        self._commit_every_s = commit_every_s
        if synchronous.upper() not in _SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {_SYNCHRONOUS}, got {synchronous!r}")
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if not checkpoint_every_s > 0 or wal_restart_pages < 1:
            raise ValueError(f"checkpoint_every_s must be > 0 and wal_restart_pages >= 1, got "
                             f"{checkpoint_every_s!r} and {wal_restart_pages!r}")
        if not self.path.exists():
            if not create:
                raise StoreError(f"run store {self.path} does not exist")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(f"cannot create run store {self.path}: "
                                 f"{e.strerror or e}") from e
        elif not self.path.is_file():
            raise StoreError(f"run store {self.path} is not a file")
        self._max_batch = max_batch
        conns: list[sqlite3.Connection] = []
        try:
            conns.append(_connect(self.path, busy_timeout))
            self._wconn = conns[0]
            self._init_schema(synchronous.upper())
            conns.append(_connect(self.path, busy_timeout))
            self._rconn = conns[1]
            self._rconn.execute("PRAGMA query_only = ON")
            conns.append(_connect(self.path, busy_timeout))
            self._cconn = conns[2]
            self._cconn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        except BaseException as e:
            for conn in conns:
                conn.close()
            if isinstance(e, sqlite3.Error):
                raise StoreError(f"cannot open run store {self.path}: {e}"
                                 f"{_READ_ONLY_HINT if _read_only(e) else ''}") from e
            raise
        self._rlock = threading.Lock()
        self._read_closed = False
        self._qlock = threading.Lock()  # makes "closed?" + put atomic, so nothing lands after STOP
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._urgent = threading.Event()  # a flush or close is queued: commit now
        self._closed = False
        self._error: StoreError | None = None
        self._run_hashes: dict[str, str] = {}
        self._numbered: set[str] = set()  # episode keys whose "event_key" is queued
        self._transactions = 0
        self._rows = 0
        self._checkpoint_every_s = checkpoint_every_s
        self._wal_restart_pages = wal_restart_pages
        self._restart_wal = False  # set by the checkpointer, done by the writer
        self._checkpoints = 0  # counted by the checkpointer and the writer: under its lock
        self._checkpoints_lock = threading.Lock()
        self._stopped = threading.Event()  # the writer has ended: so does the checkpointer
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

    def _init_schema(self, synchronous: str) -> None:
        c = self._wconn
        try:
            mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.OperationalError:
            raise  # cannot open, read-only, locked: said by __init__
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path} is not a sweepbench run store: {e}") from e
        if mode.lower() != "wal":
            raise StoreError(f"run store {self.path}: cannot enable WAL mode (got {mode!r})")
        c.execute(f"PRAGMA synchronous = {synchronous}")
        c.execute("PRAGMA wal_autocheckpoint = 0")  # the checkpointer's job, off the writer's
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
        if 0 < version < SCHEMA_VERSION:
            from sweepbench.store.migrate import migrate

            self.migrated = migrate(c, self.path, version)
        elif version == 0:
            c.execute("BEGIN IMMEDIATE")
            try:
                if c.execute("PRAGMA user_version").fetchone()[0] == 0:  # not made meanwhile
                    create_schema(c)
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
        # Indexes for readers (the viewer): added whenever a store opens, older stores too.
        for name, on in VIEW_INDEXES:
            c.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {on}")
        # A store on a read-only path opens and reads; say so now, not at the first write.
        c.execute("BEGIN IMMEDIATE")
        try:
            c.execute(f"PRAGMA user_version = {c.execute('PRAGMA user_version').fetchone()[0]}")
        finally:
            c.execute("ROLLBACK")

    # ---- writer thread -------------------------------------------------------------------

    def _writer(self) -> None:
        q = self._queue
        stopping = False
        try:
            while not stopping:
                batch = [q.get()]
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
                waiting: dict[asyncio.AbstractEventLoop, list[asyncio.Future]] = {}
                for item in batch:
                    op = item[0]
                    if op == _FLUSH:
                        callbacks.append(item[1])
                    elif op == _AFLUSH:
                        waiting.setdefault(item[1], []).append(item[2])
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
                            f"not committed ({type(e).__name__}: {e}); what was committed before "
                            "is kept: fix the cause and run the same command again to continue"
                        )
                        err.__cause__ = e
                        self._error = err
                for cb in callbacks:
                    try:
                        cb(self._error)
                    except Exception:  # noqa: BLE001 - e.g. the waiting event loop is closed
                        pass
                # one wake-up per event loop and batch, however many coroutines wait in it
                for loop, futures in waiting.items():
                    try:
                        loop.call_soon_threadsafe(_resolve, futures, self._error)
                    except RuntimeError:  # that event loop is closed: nobody is waiting
                        pass
                if self._restart_wal:  # after the waiters are woken: only the next batch waits
                    self._restart_wal = False
                    self._checkpoint(self._wconn)
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

    def _put(self, op: str, *params: Any) -> None:
        with self._qlock:
            if self._closed:
                raise StoreError(f"run store {self.path} is closed")
            if self._error is not None:
                raise self._error
            self._queue.put((op, *params))

    def _number(self, episode_key: str) -> None:
        """Queue the numbering of an episode key (its row in event_keys) the first time this
        store sees it. Marked as queued under the queue's lock, after the put: a thread that
        sees the mark puts its event behind the numbering."""
        with self._qlock:
            if episode_key in self._numbered:
                return
            if self._closed:
                raise StoreError(f"run store {self.path} is closed")
            if self._error is not None:
                raise self._error
            self._queue.put(("event_key", (episode_key,)))
            self._numbered.add(episode_key)

    # ---- writes (enqueue-only) -----------------------------------------------------------

    def begin_run(self, run_id: str, config: dict, *, prices: dict | None = None,
                  info: dict | None = None) -> None:
        """Record a run (an invocation) with its config and the prices of its endpoints
        (name -> input / cached_input / output dollars per million tokens).

        Raises ``ConfigMismatchError`` when the run exists with a different config.
        """
        _check_str("run_id", run_id)
        for name, value in (("config", config), ("prices", prices or {}), ("info", info or {})):
            if not isinstance(value, dict):
                raise TypeError(f"{name} must be a dict, got {type(value).__name__}")
        text = canonical_json(config)
        digest = hashlib.sha256(text).hexdigest()
        existing = self._run_hashes.get(run_id)
        if existing is None:
            row = self._read("SELECT config_hash FROM runs WHERE run_id = ?", (run_id,))
            existing = row[0][0] if row else None
        if existing is not None and existing != digest:
            raise ConfigMismatchError(
                f"run {run_id!r} in {self.path} was started with a different config "
                f"(stored sha256 {existing[:12]}, given {digest[:12]}); start a new run"
            )
        self._run_hashes[run_id] = digest
        self._put("begin_run", (run_id, time.time(), text.decode("utf-8"), digest,
                                canonical_json(prices or {}).decode(),
                                canonical_json(info or {}).decode()))

    def finish_run(self, run_id: str, status: str, *, info: dict | None = None) -> None:
        """Set a run's final status (e.g. 'done', 'interrupted', 'budget'); ``info`` is merged
        into the run's info."""
        _check_str("run_id", run_id)
        _check_str("status", status)
        self._put("finish_run", (status, time.time(), canonical_json(info or {}).decode(),
                                 run_id))

    def select(self, run_id: str, metas: Iterable[EpisodeMeta | dict]) -> None:
        """Link ``run_id`` to the episodes it selected (stored already or not); a stored
        episode takes the label it is selected by now."""
        _check_str("run_id", run_id)
        for m in map(_meta, metas):
            self._put("select", (run_id, m.key, m.spec))
            self._put("relabel", (m.model, m.label, m.spec, m.unreachable, m.key))

    def episode_started(self, meta: EpisodeMeta | dict, *, run_id: str) -> None:
        """An episode starts (first time, resumed, or retried after an error)."""
        meta = _meta(meta)
        for name in ("key", "label", "model", "benchmark", "domain", "task_id"):
            _check_str(name, getattr(meta, name))
        _check_str("run_id", run_id)
        _check_int("trial", meta.trial)
        for name in ("lang", "spec", "user_model", "user_mode", "unreachable"):
            _check_opt_str(name, getattr(meta, name))
        if meta.key not in self._numbered:  # numbered in the order episodes start
            self._number(meta.key)
        self._put("clear_judgments", (meta.key,))
        self._put("episode_started", (
            meta.key, meta.label, meta.model, meta.benchmark, meta.spec, meta.domain,
            meta.task_id, meta.lang, meta.trial, meta.user_model, meta.user_mode,
            canonical_json(meta.identity).decode(), meta.unreachable, run_id, time.time()))

    def event(self, episode_key: str, seq: int, kind: str, payload: dict | bytes, *,
              journal: str = EPISODE_JOURNAL, run_id: str | None = None,
              endpoint: str | None = None) -> None:
        """Journal one step: kind is e.g. 'model_call', 'tool_call', 'message'.

        ``payload`` is a dict (encoded now) or bytes holding one JSON value (checked now).
        ``run_id``: the run making the step; ``endpoint``: where a model call went (its cost
        is its usage at that run's prices for that endpoint).
        """
        # every journaled step passes here: the usual arguments pass in one expression, and
        # anything else goes through the checks one by one (which raise, or pass subclasses)
        if not (type(episode_key) is str and episode_key and type(seq) is int and seq >= 0
                and type(kind) is str and kind and type(journal) is str
                and (run_id is None or type(run_id) is str)
                and (endpoint is None or type(endpoint) is str)):
            _check_str("episode_key", episode_key)
            _check_int("seq", seq)
            _check_str("kind", kind)
            if not isinstance(journal, str):
                raise TypeError(f"journal must be a str, got {journal!r}")
            _check_opt_str("run_id", run_id)
            _check_opt_str("endpoint", endpoint)
        if type(payload) is dict:  # what the journal passes: no error text made up front
            try:
                text = _encode(payload).decode("utf-8")
            except (TypeError, msgspec.EncodeError):
                text = _json_payload(f"event payload ({episode_key} {journal} #{seq})", payload)
        else:
            text = _json_payload(f"event payload ({episode_key} {journal} #{seq})", payload)
        if episode_key not in self._numbered:  # a judge's journal, an orphan, a first event
            self._number(episode_key)
        self._put("event", (episode_key, journal, seq, kind, text, time.time(), run_id,
                            endpoint))

    def episode_finished(self, episode_key: str, record: EpisodeRecord, *,
                         run_id: str | None = None) -> None:
        """Store the record; status 'error' when ``record.termination == 'error'``."""
        _check_str("episode_key", episode_key)
        if not isinstance(record, EpisodeRecord):
            raise TypeError(f"record must be an EpisodeRecord, got {type(record).__name__}")
        _check_str("record.run_id", record.run_id)
        blob = _encode(record)
        termination = str(record.termination)
        status = "error" if termination == "error" else "done"
        label = str(EpisodeId(record.model, TaskKey(record.benchmark, record.domain,
                                                    record.lang, record.task_id), record.trial))
        now = time.time()
        self._put(
            "episode_finished",
            (episode_key, label, record.model, record.benchmark, record.domain, record.task_id,
             record.lang, record.trial, status, termination, blob, run_id or record.run_id,
             now, now),
        )

    def judgment(
        self,
        episode_key: str,
        *,
        judge: str,
        method: str,
        passed: bool | None,
        score: float | None,
        details: dict,
        run_id: str | None = None,
        judge_key: str = "",
    ) -> None:
        for name, value in (("episode_key", episode_key), ("judge", judge), ("method", method)):
            _check_str(name, value)
        _check_opt_str("run_id", run_id)
        if not isinstance(judge_key, str):
            raise TypeError(f"judge_key must be a str, got {judge_key!r}")
        if passed is not None and not isinstance(passed, bool):
            raise TypeError(f"passed must be a bool or None, got {passed!r}")
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise TypeError(f"score must be a number or None, got {score!r}")
            if not math.isfinite(score):
                raise ValueError(f"score must be finite, got {score!r}")
            score = float(score)
        text = _json_payload(f"judgment details ({episode_key}, {judge}/{method})", details)
        self._put(
            "judgment",
            (episode_key, judge, method, None if passed is None else int(passed), score, text,
             time.time(), run_id, judge_key),
        )

    # ---- flush / close -------------------------------------------------------------------

    async def flush(self) -> None:
        """Resolve once everything enqueued before this call is committed."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._put(_AFLUSH, loop, fut)
        self._urgent.set()
        await fut

    def flush_sync(self, timeout: float | None = None) -> None:
        """Block until everything enqueued before this call is committed."""
        done = threading.Event()
        box: list[BaseException | None] = [None]

        def wake(err: BaseException | None) -> None:
            box[0] = err
            done.set()

        self._put(_FLUSH, wake)
        self._urgent.set()
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
                self._urgent.set()
        if not already:
            self._thread.join()
            self._cthread.join()
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
        """Committed transactions and rows so far (rows / transactions = the batching; an
        episode key's number is a row), and the checkpoints done (the checkpointer's and the
        writer's)."""
        return {"transactions": self._transactions, "rows": self._rows,
                "checkpoints": self._checkpoints}

    # ---- reads (own connection, committed data only) -------------------------------------

    def _read(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._rlock:
            if self._read_closed:
                raise StoreError(f"run store {self.path} is closed")
            try:
                return self._rconn.execute(sql, params).fetchall()
            except sqlite3.Error as e:
                raise StoreError(f"run store {self.path}: read failed: {e}") from e

    def _read_keys(self, sql: str, column: str, keys: Iterable[str] | None,
                   params: tuple = (), order: str = "") -> list[tuple]:
        """``sql`` (ending in a WHERE clause or ``WHERE true``) for all rows, or only for rows
        whose ``column`` is one of ``keys``, in chunks."""
        if keys is None:
            return self._read(sql + order, params)
        if isinstance(keys, str):
            raise TypeError(f"keys must be an iterable of episode keys, not one str {keys!r}")
        out: list[tuple] = []
        for chunk in _chunks(keys):
            cond, values = _in(column, chunk)
            out += self._read(f"{sql} AND {cond}{order}", params + values)
        return out

    def runs(self) -> list[dict]:
        """All runs, oldest first, config, prices and info decoded."""
        rows = self._read(
            "SELECT run_id, created_at, finished_at, status, config, config_hash, prices, info "
            "FROM runs ORDER BY created_at, rowid"
        )
        return [
            {"run_id": r[0], "created_at": r[1], "finished_at": r[2], "status": r[3],
             "config": msgspec.json.decode(r[4]), "config_hash": r[5],
             "prices": msgspec.json.decode(r[6]), "info": msgspec.json.decode(r[7])}
            for r in rows
        ]

    def run(self, run_id: str) -> dict | None:
        """One run (as in ``runs()``) or None."""
        return next((r for r in self.runs() if r["run_id"] == run_id), None)

    def latest_run_id(self) -> str | None:
        rows = self._read("SELECT run_id FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1")
        return rows[0][0] if rows else None

    def run_selection(self, run_id: str) -> dict[str, str | None]:
        """episode_key -> spec of every episode ``run_id`` selected."""
        return dict(self._read("SELECT episode_key, spec FROM run_episodes WHERE run_id = ?",
                               (run_id,)))

    def specs(self) -> dict[str, set[str]]:
        """episode_key -> every spec some run selected it under (what ``--split`` matches)."""
        out: dict[str, set[str]] = {}
        for key, spec in self._read("SELECT episode_key, spec FROM run_episodes "
                                    "WHERE spec IS NOT NULL"):
            out.setdefault(key, set()).add(spec)
        return out

    def episode_status(self, keys: Iterable[str] | None = None) -> dict[str, str]:
        """episode_key -> 'running' | 'done' | 'error' (what a sweep skips or continues)."""
        return dict(self._read_keys("SELECT episode_key, status FROM episodes WHERE true",
                                    "episode_key", keys))

    def episode_rows(self, run_id: str | None = None) -> list[dict]:
        """Every episode's columns without the record blob (cheap; what reports group by);
        with ``run_id``, only the episodes that run selected."""
        cols = ", ".join(f"e.{c}" for c in _EPISODE_COLUMNS)
        order = " ORDER BY e.model, e.benchmark, e.domain, e.task_id, e.trial, e.episode_key"
        if run_id is None:
            rows = self._read(f"SELECT {cols} FROM episodes e" + order)
        else:
            rows = self._read(f"SELECT {cols} FROM episodes e JOIN run_episodes r ON "
                              "r.episode_key = e.episode_key WHERE r.run_id = ?" + order,
                              (run_id,))
        return [dict(zip(_EPISODE_COLUMNS, r)) for r in rows]

    def call_counts(self) -> list[tuple[str, str, str, str, str, int]]:
        """(model, benchmark, domain, lang, task_id, its own model calls) of every finished
        episode: how long episodes of a task run, counted by the index (the scheduler's
        history, read at every sweep's start)."""
        return self._read(
            "SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, count(*) FROM episodes e "
            "JOIN events v ON v.episode_key = e.episode_key AND v.journal = '' "
            "AND v.kind = 'model_call' WHERE e.status = 'done' GROUP BY e.episode_key")

    def journaled_calls(self, keys: Iterable[str]) -> dict[str, int]:
        """episode_key -> its own model calls already journaled, for those of ``keys`` that
        have any: the calls a continued episode replays instead of asking again."""
        return dict(self._read_keys(
            "SELECT episode_key, count(*) FROM events WHERE journal = '' "
            "AND kind = 'model_call'", "episode_key", keys, order=" GROUP BY episode_key"))

    def episode_rows_by_label(self, labels: Iterable[str]) -> list[dict]:
        """episode_key, label and identity (decoded) of every episode with one of ``labels``:
        the stored versions of an episode whose identity has changed."""
        rows = self._read_keys("SELECT episode_key, label, identity FROM episodes WHERE true",
                               "label", labels)
        return [{"episode_key": k, "label": lb, "identity": msgspec.json.decode(i)}
                for k, lb, i in rows]

    def identities(self, keys: Iterable[str] | None = None) -> dict[str, dict]:
        """episode_key -> identity (what the key is the hash of)."""
        rows = self._read_keys("SELECT episode_key, identity FROM episodes WHERE true",
                               "episode_key", keys)
        return {k: msgspec.json.decode(v) for k, v in rows}

    def records(self, keys: Iterable[str] | None = None) -> dict[str, EpisodeRecord]:
        """episode_key -> record of finished episodes (all, or those among ``keys``)."""
        rows = self._read_keys(
            "SELECT episode_key, record FROM episodes WHERE record IS NOT NULL",
            "episode_key", keys)
        out = {}
        for key, blob in rows:
            try:
                out[key] = _record_decoder.decode(blob)
            except msgspec.DecodeError as e:
                raise StoreError(f"run store {self.path}: record of episode {key!r} does not "
                                 f"decode: {e}") from e
        return out

    def episodes(self, run_id: str | None = None) -> list[EpisodeRecord]:
        """Records of finished episodes (of ``run_id``'s selection, or all), in report order."""
        keys = [r["episode_key"] for r in self.episode_rows(run_id)]
        records = self.records(keys)
        return [records[k] for k in keys if k in records]

    def events(self, episode_key: str, *, journal: str = EPISODE_JOURNAL,
               kind: str | None = None, raw: bool = False) -> list[dict]:
        """One journal of an episode in seq order: dicts with seq, kind, payload, ts, run_id,
        endpoint. ``raw=True`` leaves payloads as JSON bytes."""
        sql = ("SELECT seq, kind, payload, ts, run_id, endpoint FROM events "
               "WHERE episode_key = ? AND journal = ?")
        params: tuple = (episode_key, journal)
        if kind is not None:
            sql += " AND kind = ?"
            params += (kind,)
        rows = self._read(sql + " ORDER BY seq", params)
        decode = (lambda t: t.encode("utf-8")) if raw else msgspec.json.decode
        return [{"seq": s, "kind": k, "payload": decode(p), "ts": ts, "run_id": r,
                 "endpoint": e} for s, k, p, ts, r, e in rows]

    def journals(self, episode_key: str) -> list[str]:
        """The journals an episode has (``""`` and its judges')."""
        return [j for (j,) in self._read("SELECT DISTINCT journal FROM events WHERE "
                                         "episode_key = ? ORDER BY journal", (episode_key,))]

    def model_calls(self, keys: Iterable[str] | None = None) -> list[ModelCallRow]:
        """Every journaled model call (of ``keys``' episodes, or all), judges' included, with
        its usage: what cost and profiles sum. Calls replayed from a journal are stored once."""
        rows = self._read_keys(
            "SELECT episode_key, journal, run_id, endpoint, json_extract(payload, '$.role'), "
            "coalesce(json_extract(payload, '$.usage.prompt_tokens'), 0), "
            "coalesce(json_extract(payload, '$.usage.completion_tokens'), 0), "
            "coalesce(json_extract(payload, '$.usage.cached_prompt_tokens'), 0), "
            "json_extract(payload, '$.latency_s'), json_extract(payload, '$.attempts'), "
            "json_extract(payload, '$.statuses'), json_extract(payload, '$.stalls') "
            "FROM events WHERE kind = 'model_call'",
            "episode_key", keys, order=" ORDER BY episode_key, journal, seq")
        return [ModelCallRow(*_sane_call(r)) for r in rows]

    def model_call_times(self, keys: Iterable[str] | None = None) -> list[tuple[int, float]]:
        """(seq, ts) of every call ``model_calls(keys)`` returns, in the same order (exports
        place each call in its journal and in time)."""
        return self._read_keys("SELECT seq, ts FROM events WHERE kind = 'model_call'",
                               "episode_key", keys, order=" ORDER BY episode_key, journal, seq")

    def call_spans(self) -> dict[str, tuple[int, float, float]]:
        """run_id -> (model calls it journaled, first and last of their timestamps): how fast
        a run went, for plans."""
        rows = self._read("SELECT run_id, count(*), min(ts), max(ts) FROM event_rows "  # no key
                          "WHERE kind = 'model_call' AND run_id IS NOT NULL GROUP BY run_id")
        return {r: (n, lo, hi) for r, n, lo, hi in rows}

    def judgments(self, keys: Iterable[str] | None = None) -> list[dict]:
        """Judgments (all, or of ``keys``' episodes): episode_key, judge, method, passed,
        score, details, created_at, run_id, judge_key."""
        rows = self._read_keys(
            "SELECT episode_key, judge, method, passed, score, details, created_at, run_id, "
            "judge_key FROM judgments WHERE true", "episode_key", keys,
            order=" ORDER BY episode_key, judge, method")
        return [
            {"episode_key": e, "judge": j, "method": m,
             "passed": None if p is None else bool(p), "score": s,
             "details": msgspec.json.decode(d), "created_at": t, "run_id": r, "judge_key": jk}
            for e, j, m, p, s, d, t, r, jk in rows
        ]


def _num(value: Any, kind: type) -> Any:
    """A number read from a payload, or None when it is not one (payloads are JSON text)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return kind(value)


def _sane_call(row: tuple) -> tuple:
    key, journal, run_id, endpoint, role, p, c, cached, latency, attempts, statuses, stalls = row
    p, c, cached = (max(0, _num(x, int) or 0) for x in (p, c, cached))
    return (key, journal, run_id, endpoint, role if isinstance(role, str) else None, p, c,
            min(cached, p), _num(latency, float), _num(attempts, int),
            statuses if isinstance(statuses, str) else None,
            stalls if isinstance(stalls, str) else None)


def legacy_key(*parts: str) -> str:
    """See ``EpisodeKey.legacy``."""
    return str(EpisodeKey.legacy(*parts))
