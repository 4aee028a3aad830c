"""The run store: one SQLite file per store (its tables: :mod:`sweepbench.store.schema`),
opened here, written through the methods here, read through :mod:`sweepbench.store.reads`.

Writes are enqueue-only and never block the event loop: ``event()``, ``episode_started()``
and the other write methods validate and encode their arguments on the caller's thread (so a
bad argument raises right there, and a dict mutated after the call is not what gets stored),
then put one tuple on the queue of the store's writer thread, which commits them in batches
(:mod:`sweepbench.store.writer`: the gathering, flushes, checkpoints, a sticky failure).
``await flush()`` / ``flush_sync()`` (and ``close()``) return once everything enqueued before
the call is committed; reads see committed data only, so flush first to read your own writes.

Opening checks that the WAL file beside the store is its own (:mod:`sweepbench.store.identity`)
and that the file is a run store of a version this code reads, migrates an older one
(:mod:`sweepbench.store.migrate`) and creates a new one. Durability: ``synchronous=NORMAL``
(the default) survives a killed process; a power loss may lose the last commits. Pass
``synchronous="FULL"`` to fsync every commit.
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Struct, field

from sweepbench.errors import ConfigMismatchError, StoreError
from sweepbench.ids import EPISODE_JOURNAL, EpisodeId, EpisodeKey, TaskKey
from sweepbench.store.call_facts import CallFacts, source
from sweepbench.store.codec import TRAIN_AFTER, Packer, register
from sweepbench.store.damage import open_error, read_only_error
from sweepbench.store.facts import facts_row
from sweepbench.store.identity import TOUCH, check_wal
from sweepbench.store.migrate import migrate
from sweepbench.store.reads import StoreReads
from sweepbench.store.schema import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    VIEW_INDEXES,
    WRITE_STATEMENTS,
    canonical_json,
    create_schema,
)
from sweepbench.store.writer import (
    CHECKPOINT_EVERY_S,
    COMMIT_EVERY_S,
    WAL_RESTART_PAGES,
    StoreWriter,
)
from sweepbench.wire import EpisodeRecord

__all__ = ["ConfigMismatchError", "EpisodeMeta", "RunStore", "StoreError"]


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


_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
_encode = msgspec.json.Encoder().encode


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


_EVENT = """
    INSERT INTO event_rows (ep, journal, seq, kind, payload, ts, run_id, endpoint)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (ep, journal, seq) DO NOTHING
"""
"""The writer's ``event``: schema's, with the episode's number looked up once per episode
(:func:`_prepare`) instead of once per row and again for its facts."""
_EPS_KEPT = 100_000
"""Episode numbers the writer keeps looked up (a key never changes its number)."""


def _prepare(conn: sqlite3.Connection, train_after: int) -> dict[str, Callable]:
    """The writer's ``prepare`` (its thread, in the transaction, :mod:`.writer`): journal
    rows get their episode's number, are compressed and their model calls' facts written
    first (so the facts' trigger has nothing to do); records are compressed against their
    journal (:mod:`.codec`)."""
    packer = Packer(conn, train_after=train_after)
    row, record = packer.row, packer.record
    facts = CallFacts(conn)
    fact, insert = facts.row, facts.insert
    eps: dict[str, int] = {}

    def number(key: str) -> int | None:
        found = conn.execute("SELECT ep FROM event_keys WHERE episode_key = ?",
                             (key,)).fetchone()  # None: the insert fails, as it should
        if found is None:
            return None
        if len(eps) >= _EPS_KEPT:
            eps.clear()
        eps[key] = found[0]
        return found[0]

    def events(rows: list[tuple]) -> list[tuple]:
        out, calls = [], []
        for k, j, s, kind, data, ts, run, endpoint, grp, src in rows:
            ep = eps.get(k) or number(k)
            if kind == "model_call":
                f = fact(ep, j, s, ts, run, endpoint, src, data)
                if f is not None:  # else the trigger computes it
                    calls.append(f)
            out.append((ep, j, s, kind, row(k, ep, j, s, grp, data), ts, run, endpoint))
        if calls:
            insert(calls)
        return out

    def finished(rows: list[tuple]) -> list[tuple]:
        return [(*r[:10], record(r[0], r[3], r[10]), *r[11:]) for r in rows]

    return {"event": events, "episode_finished": finished}


def _connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    # isolation_level=None: no implicit transactions; the writer says BEGIN/COMMIT itself.
    # check_same_thread=False: each connection is still used by one thread at a time.
    return sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, timeout=busy_timeout
    )


_READ_ONLY_HINT = (" (the store's file and folder must be writable: copy it to a writable "
                   "place; report, export and view read it where it is)")


class RunStore(StoreReads):
    """One run store file. Thread-safe; write methods may be called from the event loop;
the reads are those of :class:`~sweepbench.store.reads.StoreReads`.

    ``create``: make the file (and its directory) when missing, else raise ``StoreError``.
    ``synchronous``: SQLite's durability level. ``max_batch``: most rows per transaction.
    ``busy_timeout``: seconds to wait for a lock held by another connection before failing.
    ``commit_every_s``: how long the writer gathers writes into one commit after a write woke
    it, when nobody waits on a flush (see ``COMMIT_EVERY_S``); 0: commit what is queued at once.
    ``checkpoint_every_s``, ``wal_restart_pages``: see ``CHECKPOINT_EVERY_S`` and
    ``WAL_RESTART_PAGES``.
    ``train_after``: journal payloads of a benchmark stored as text before the store trains
    its compression dictionary for them (:mod:`sweepbench.store.codec`).
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
        train_after: int = TRAIN_AFTER,
    ) -> None:
        path = Path(path)
        self.path = path
        self.migrated: str | None = None
        if not commit_every_s >= 0:
            raise ValueError(f"commit_every_s must be >= 0, got {commit_every_s!r}")
        if synchronous.upper() not in _SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {_SYNCHRONOUS}, got {synchronous!r}")
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if not checkpoint_every_s > 0 or wal_restart_pages < 1:
            raise ValueError(f"checkpoint_every_s must be > 0 and wal_restart_pages >= 1, got "
                             f"{checkpoint_every_s!r} and {wal_restart_pages!r}")
        if not path.exists():
            if not create:
                raise StoreError(f"run store {path} does not exist")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(f"cannot create run store {path}: {e.strerror or e}") from e
        elif not path.is_file():
            raise StoreError(f"run store {path} is not a file")
        else:
            check_wal(path)  # before SQLite applies a WAL file beside it
        conns: list[sqlite3.Connection] = []
        try:
            conns.append(_connect(path, busy_timeout))
            self._wconn = conns[0]
            # sb_json: the facts' trigger decodes each model call's payload with it, on every
            # connection that writes the journal (migrations included; see store.schema)
            register(self._wconn)
            self._init_schema(synchronous.upper())
            conns.append(_connect(path, busy_timeout))
            rconn = conns[1]
            rconn.execute("PRAGMA query_only = ON")
            conns.append(_connect(path, busy_timeout))
            cconn = conns[2]
            cconn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        except BaseException as e:
            for conn in conns:
                conn.close()
            if isinstance(e, sqlite3.Error):
                if read_only_error(e):
                    raise StoreError(f"cannot open run store {path}: {e}{_READ_ONLY_HINT}") from e
                raise open_error(path, e) from e
            raise
        super().__init__(path, rconn)
        self._run_hashes: dict[str, str] = {}
        self._groups: dict[str, str] = {}  # episode key -> its benchmark, while it runs
        self._writer = StoreWriter(
            path, self._wconn, cconn, {**WRITE_STATEMENTS, "event": _EVENT},
            every_commit=TOUCH, max_batch=max_batch,
            commit_every_s=commit_every_s, checkpoint_every_s=checkpoint_every_s,
            wal_restart_pages=wal_restart_pages,
            prepare=_prepare(self._wconn, train_after))
        # what every write calls, bound once (an event is the hot path)
        self._put = self._writer.put
        self._numbered = self._writer.queued_once  # episode keys whose "event_key" is queued

    def _init_schema(self, synchronous: str) -> None:
        c = self._wconn
        mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]  # errors: said by __init__
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
        # Indexes for readers (the viewer): added whenever a store opens, older stores too. A
        # store on a read-only path opens and reads; the transaction says so now, not at the
        # first write.
        have = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        c.execute("BEGIN IMMEDIATE")
        try:
            c.execute(f"PRAGMA user_version = {c.execute('PRAGMA user_version').fetchone()[0]}")
            missing = [(name, on) for name, on in VIEW_INDEXES if name not in have]
            for name, on in missing:
                c.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {on}")
            if missing:
                c.execute(TOUCH)  # every transaction writes the store's id (store.identity)
            c.execute("COMMIT" if missing else "ROLLBACK")
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise
        # Made or migrated now: the main file gets the store's id (store.identity reads it
        # there). A new store's WAL starts over empty, as if the store had been closed.
        if version < SCHEMA_VERSION:
            c.execute(f"PRAGMA wal_checkpoint({'TRUNCATE' if version == 0 else 'PASSIVE'})")

    def _number(self, episode_key: str) -> None:
        """Queue the numbering of an episode key (its row in event_keys) the first time this
        store sees it, before any event of the key."""
        self._writer.put_once(episode_key, "event_key", (episode_key,))

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
        self._groups[meta.key] = meta.benchmark  # its journal's compression dictionary
        self._put("clear_judgments", (meta.key,))
        self._put("clear_facts", (meta.key,))
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
                text: str | bytes = _encode(payload)  # compressed (or decoded) by the writer
            except (TypeError, msgspec.EncodeError):
                text = _json_payload(f"event payload ({episode_key} {journal} #{seq})", payload)
        else:
            text = _json_payload(f"event payload ({episode_key} {journal} #{seq})", payload)
        if episode_key not in self._numbered:  # a judge's journal, an orphan, a first event
            self._number(episode_key)
        # a model call's facts read from its dict, not decoded again by the writer
        facts = source(payload) if kind == "model_call" and type(payload) is dict else None
        self._put("event", (episode_key, journal, seq, kind, text, time.time(), run_id,
                            endpoint, self._groups.get(episode_key, ""), facts))

    def episode_finished(self, episode_key: str, record: EpisodeRecord, *,
                         run_id: str | None = None) -> None:
        """Store the record; status 'error' when ``record.termination == 'error'``."""
        _check_str("episode_key", episode_key)
        if not isinstance(record, EpisodeRecord):
            raise TypeError(f"record must be an EpisodeRecord, got {type(record).__name__}")
        _check_str("record.run_id", record.run_id)
        blob = _encode(record)  # compressed by the writer, with the episode's journal
        self._groups.pop(episode_key, None)
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
        self._put("episode_facts", facts_row(episode_key, record))

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
        await self._writer.flush()

    def flush_sync(self, timeout: float | None = None) -> None:
        """Block until everything enqueued before this call is committed."""
        self._writer.flush_sync(timeout)

    def close(self) -> None:
        """Commit what is queued, stop the writer and close; raises a writer failure. Idempotent."""
        if self._writer.close():
            self.close_reads()
        if self._writer.error is not None:
            raise self._writer.error

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def writer_stats(self) -> dict[str, int]:
        """Committed transactions and rows so far (rows / transactions = the batching; an
        episode key's number is a row), and the checkpoints done (the checkpointer's and the
        writer's)."""
        return self._writer.stats


def legacy_key(*parts: str) -> str:
    """See ``EpisodeKey.legacy``."""
    return str(EpisodeKey.legacy(*parts))
