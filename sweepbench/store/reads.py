"""The run store's reads: the queries reports, exports, plans and the scheduler ask.

Reads use a connection of their own (``query_only``), one query at a time under a lock, so
they see committed data only: flush the store first to read your own writes. A query for
some episodes takes their keys and asks in chunks under SQLite's parameter limit. A stored
value is decoded on the way out (JSON columns to dicts, records to ``EpisodeRecord``); a
record that does not decode is a ``StoreError`` that names the episode. Journal payloads and
records may be stored compressed (:mod:`sweepbench.store.codec`): they are decompressed here,
and every read returns what it returned for the same rows stored as text.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple

import msgspec

from sweepbench.errors import StoreError
from sweepbench.ids import EPISODE_JOURNAL
from sweepbench.store.call_rows import ModelCallRow
from sweepbench.store.call_rows import chunks as _chunks
from sweepbench.store.codec import Damaged, journal_prefix, register
from sweepbench.store.damage import is_damaged, open_error
from sweepbench.store.fact_scan import SCAN_SHARE, FactScans
from sweepbench.store.facts import EpisodeFacts, facts_of, facts_row
from sweepbench.store.schema import CALL_FACTS_ODD
from sweepbench.wire import EpisodeRecord

__all__ = ["CallFactChunk", "ModelCallRow", "StoreReads"]


class CallFactChunk(NamedTuple):
    """Some episodes' call facts, as ``StoreReads.call_fact_chunks`` reads them."""

    keys: dict[int, str]  # ep -> episode key
    rows: list[tuple]
    rare: list[ModelCallRow]



_EPISODE_COLUMNS = ("episode_key", "label", "model", "benchmark", "spec", "domain", "task_id",
                    "lang", "trial", "user_model", "user_mode", "unreachable", "status",
                    "termination", "run_id", "started_at", "finished_at")

_record_decoder = msgspec.json.Decoder(EpisodeRecord)

_ROWS = 65_536  # rows of a table a one-pass read holds at once

_REPEATED = ("model", "benchmark", "spec", "domain", "task_id", "lang", "user_model",
             "user_mode", "status", "termination", "run_id")
"""The episode columns whose values repeat across a store's rows (each held once)."""


class StoreReads(FactScans):
    """The read queries of the run store at ``path``, on connection ``conn`` (which this
    object closes in ``close_reads``). :class:`~sweepbench.store.runstore.RunStore` is one."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._rconn = conn
        self._rlock = threading.Lock()
        self._read_closed = False
        self._damaged: dict[str, None] = {}
        self._unpacker = register(conn)  # and the SQL functions sb_json, sb_record
        self._has_facts: bool | None = None

    @property
    def damaged(self) -> list[str]:
        """What reads so far left out because it does not decode, one line each."""
        return list(self._damaged)

    def _left_out(self, what: str) -> None:
        self._damaged[f"{what}: left out"] = None

    def close_reads(self) -> None:
        with self._rlock:
            self._rconn.close()
            self._read_closed = True

    def _read(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._rlock:
            if self._read_closed:
                raise StoreError(f"run store {self.path} is closed")
            try:
                return self._rconn.execute(sql, params).fetchall()
            except sqlite3.Error as e:
                if is_damaged(e):
                    raise open_error(self.path, e) from e
                raise StoreError(f"run store {self.path}: read failed: {e}") from e

    def _read_parts(self, sql: str, params: tuple = ()) -> Iterator[list[tuple]]:
        """``_read``'s rows, ``_ROWS`` at a time: a large result is never held whole as
        tuples (nor is the garbage of turning them into something else)."""
        def step(fetch: Callable[[], Any]) -> Any:
            with self._rlock:
                if self._read_closed:
                    raise StoreError(f"run store {self.path} is closed")
                try:
                    return fetch()
                except sqlite3.Error as e:
                    if is_damaged(e):
                        raise open_error(self.path, e) from e
                    raise StoreError(f"run store {self.path}: read failed: {e}") from e

        cur = step(lambda: self._rconn.execute(sql, params))
        while rows := step(lambda: cur.fetchmany(_ROWS)):
            yield rows

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

    def episode_count(self) -> int:
        """How many episodes the store holds."""
        return self._read("SELECT count(*) FROM episodes")[0][0]

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
            parts = self._read_parts(f"SELECT {cols} FROM episodes e" + order)
        else:
            parts = self._read_parts(f"SELECT {cols} FROM episodes e JOIN run_episodes r ON "
                                     "r.episode_key = e.episode_key WHERE r.run_id = ?" + order,
                                     (run_id,))
        share = {}.setdefault  # SQLite returns a new string per row: one object per value
        out = []
        for rows in parts:
            for r in rows:
                row = dict(zip(_EPISODE_COLUMNS, r))
                for c in _REPEATED:
                    v = row[c]
                    if type(v) is str:  # (only texts: 1 and 1.0 and True are equal keys)
                        row[c] = share(v, v)
                out.append(row)
        return out

    def call_counts(self) -> list[tuple[str, str, str, str, str, int]]:
        """(model, benchmark, domain, lang, task_id, its own model calls) of every finished
        episode: how long episodes of a task run, counted by the index (the scheduler's
        history, read at every sweep's start)."""
        if self.has_facts:  # the call facts: one small row per call, not the journal's
            return self._read(
                "SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, count(*) "
                "FROM episodes e JOIN event_keys k ON k.episode_key = e.episode_key "
                "JOIN call_facts f ON f.ep = k.ep AND f.journal = '' "
                "WHERE e.status = 'done' GROUP BY e.episode_key")
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
                with self._rlock:  # a compressed record reads its journal
                    blob = self._unpacker.record(blob, journal_prefix(self._rconn, key))
                out[key] = _record_decoder.decode(blob)
            except (msgspec.DecodeError, TypeError, Damaged) as e:  # TypeError: not text/bytes
                self._left_out(f"episode {key}: its record does not decode ({e})")
            except sqlite3.Error as e:
                raise StoreError(f"run store {self.path}: read failed: {e}") from e
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
        out = []
        for s, k, p, ts, r, e in rows:
            try:
                p = self._unpacker.payload(p)  # text rows encoded, compressed ones decoded
                payload = p if raw else msgspec.json.decode(p)
            except (msgspec.DecodeError, Damaged) as exc:
                raise StoreError(f"run store {self.path}: episode {episode_key}: journal "
                                 f"{journal!r} row #{s} does not decode ({exc}); the journal "
                                 "cannot be replayed past it") from None
            out.append({"seq": s, "kind": k, "payload": payload, "ts": ts, "run_id": r,
                        "endpoint": e})
        return out

    def journals(self, episode_key: str) -> list[str]:
        """The journals an episode has (``""`` and its judges')."""
        return [j for (j,) in self._read("SELECT DISTINCT journal FROM events WHERE "
                                         "episode_key = ? ORDER BY journal", (episode_key,))]

    def model_calls(self, keys: Iterable[str] | None = None, *,
                    transcripts: bool = False) -> list[ModelCallRow]:
        """Every journaled model call (of ``keys``' episodes, or all), judges' included, with
        its usage: what cost and profiles sum. Calls replayed from a journal are stored once.
        Read from the call facts (schema 6) unless ``transcripts`` (or an older store): the
        same rows, extracted from the payloads now."""
        if self.has_facts and not transcripts:
            return [c for c, _ in self._fact_calls(keys)]
        rows = self._read_keys(
            f"SELECT episode_key, journal, run_id, endpoint, {_field('role')}, "
            f"coalesce({_field('usage.prompt_tokens')}, 0), "
            f"coalesce({_field('usage.completion_tokens')}, 0), "
            f"coalesce({_field('usage.cached_prompt_tokens')}, 0), "
            f"{_field('latency_s')}, {_field('attempts')}, {_field('statuses')}, "
            f"{_field('stalls')}, {_field('replica')}, {_field('failures')}, {_VALID}, seq "
            "FROM (SELECT episode_key, journal, run_id, endpoint, seq, sb_json(payload) AS "
            "payload FROM events WHERE kind = 'model_call'",
            # not flattened (OFFSET): each payload decompressed once, in a co-routine
            "episode_key", keys, order=" ORDER BY episode_key, journal, seq LIMIT -1 OFFSET 0)")
        out = []
        for r in rows:
            if not r[-2]:
                self.left_out_call(r[0], r[1], r[-1])
                continue
            out.append(ModelCallRow(*_sane_call(r[:-2])))
        return out

    @property
    def has_facts(self) -> bool:
        """Whether this store holds the facts reports sum (schema 6; an older store read as
        it is does not)."""
        if self._has_facts is None:
            self._has_facts = bool(self._read(
                "SELECT count(*) FROM sqlite_master WHERE name IN ('call_facts', 'fact_texts', "
                "'episode_facts')")[0][0] == 3)
        return self._has_facts

    def episode_facts(self, keys: Iterable[str]) -> dict[str, EpisodeFacts]:
        """episode_key -> its facts (schema 6: what reports read of a record, see
        :mod:`sweepbench.store.facts`), for those of ``keys`` that finished; each chunk of
        keys in key order, as ``records`` returns them."""
        return {row[0]: facts_of(row) for row in self.episode_fact_rows(keys)}

    def _scan_ranks(self, keys: list[str]) -> dict[str, int] | None:
        """For ``keys`` (distinct) that are at least ``SCAN_SHARE`` of the store's episodes:
        key -> its place in the order a read by chunks of keys returns them (chunk by chunk,
        each in key order), so that one pass over a table, sorted by it, returns the same
        rows in the same order without a B-tree search per key. None: read by the keys."""
        if len(keys) < SCAN_SHARE * max(self.episode_count(), 1):
            return None
        rank = {k: i for i, k in enumerate(k for chunk in _chunks(keys) for k in sorted(chunk))}
        return rank if len(rank) == len(keys) else None

    def episode_fact_rows(self, keys: Iterable[str]) -> list[tuple]:
        """``episode_facts`` as the rows ``facts.facts_row`` makes (no object per episode)."""
        keys = list(keys)
        rank = self._scan_ranks(keys)
        if rank is not None:  # most of the store: the table and the unfaceted records once
            found = {r[0]: r for r in self._read("SELECT * FROM episode_facts") if r[0] in rank}
            # the others' records (running episodes have none), asked by their keys in the
            # chunks a read by keys asks: those that do not decode said in the same order
            for chunk in _chunks(keys):
                if missing := [k for k in chunk if k not in found]:
                    for key, rec in self.records(missing).items():
                        found[key] = facts_row(key, rec)
            return sorted(found.values(), key=lambda r: rank[r[0]])
        out: list[tuple] = []
        for chunk in _chunks(keys):
            cond, values = _in("episode_key", chunk)
            rows = self._read(f"SELECT * FROM episode_facts WHERE {cond} ORDER BY episode_key",
                              values)
            # a record without facts (written outside the store, changed since): read itself
            cond, values = _in("e.episode_key", chunk)
            missing = [k for (k,) in self._read(
                "SELECT e.episode_key FROM episodes e LEFT JOIN episode_facts f "
                f"USING (episode_key) WHERE {cond} AND e.record IS NOT NULL "
                "AND f.episode_key IS NULL", values)]
            if missing:
                found = {r[0]: r for r in rows}
                for key, rec in self.records(missing).items():
                    found[key] = facts_row(key, rec)
                rows = sorted(found.values())
            out += rows
        return out

    def fact_texts(self) -> dict[int, str]:
        """id -> text of the texts ``call_facts`` refers to (runs, endpoints, roles,
        statuses)."""
        return dict(self._read("SELECT id, text FROM fact_texts"))

    def call_fact_chunks(self, keys: Iterable[str]) -> Iterator[CallFactChunk]:
        """The facts of every journaled model call of ``keys``' episodes (schema 6's
        ``call_facts``: the fields ``model_calls`` extracts from the payloads, extracted when
        the call was journaled), in chunks of episodes, in ``model_calls``' order; numbers
        only, each row: (ep, whether a judge's journal, the ``fact_texts`` id (0: none) of
        its run_id, endpoint, role and statuses, prompt, completion, cached, latency_s or
        -inf, attempts is not NULL, attempts or 0, odd: whether it has stalls, a replica or
        failures). ``rare``: the odd calls whole, in order. Calls whose payload does not
        decode are left out and said (``damaged``), as ``model_calls`` does."""
        if isinstance(keys, str):
            raise TypeError(f"keys must be an iterable of episode keys, not one str {keys!r}")
        texts = self.fact_texts()
        odd: dict[str, list[tuple]] = {}
        for r in self._read(
                "SELECT k.episode_key, f.valid, f.journal, f.seq, f.run_id, f.endpoint, "
                "f.role, f.prompt, f.completion, f.cached, f.latency_s, f.attempts, "
                "f.statuses, f.stalls, f.replica, f.failures FROM call_facts f "
                "INDEXED BY call_facts_odd JOIN event_keys k ON k.ep = f.ep "
                f"WHERE {CALL_FACTS_ODD.format('f')} ORDER BY k.episode_key, f.journal, f.seq"):
            odd.setdefault(r[0], []).append(r)
        order = " ORDER BY k.episode_key, f.journal, f.seq"
        for chunk in _chunks(keys):
            cond, values = _in("k.episode_key", chunk)
            rows = self._read(
                "SELECT f.ep, f.journal != '', coalesce(f.run_id, 0), coalesce(f.endpoint, 0), "
                "coalesce(f.role, 0), coalesce(f.statuses, 0), f.prompt, f.completion, "
                "f.cached, coalesce(f.latency_s, -9e999), f.attempts IS NOT NULL, "
                f"coalesce(f.attempts, 0), {CALL_FACTS_ODD.format('f')} FROM event_keys k "
                f"JOIN call_facts f ON f.ep = k.ep WHERE {cond} AND f.valid{order}", values)
            rare = []
            for key in sorted(k for k in chunk if k in odd):
                for (_, valid, journal, seq, run, endpoint, role, p, c, cached, latency,
                     attempts, statuses, stalls, replica, failures) in odd[key]:
                    if not valid:
                        self.left_out_call(key, journal, seq)
                        continue
                    rare.append(ModelCallRow(
                        key, journal, texts.get(run), texts.get(endpoint), texts.get(role), p,
                        c, cached, latency, attempts, texts.get(statuses), stalls, replica,
                        failures))
            eps = dict(self._read(f"SELECT k.ep, k.episode_key FROM event_keys k WHERE {cond}",
                                  values))
            yield CallFactChunk(eps, rows, rare)

    def call_sums(self, keys: Iterable[str]) -> Iterator[tuple]:
        """Per episode of ``keys``, journal and whether the calls are the agent's (own journal
        and recorded role 'agent'): (episode_key, journal, agent, calls, prompt, cached,
        completion) of its journaled model calls that decode; then, per episode, (episode_key,
        None, None, the sum of its own calls' latencies, in seq order): what a plan's history
        reads, from the call facts (schema 6)."""
        agent = self._read("SELECT id FROM fact_texts WHERE text = 'agent'")
        agent_id = agent[0][0] if agent else -1
        for chunk in _chunks(keys):
            cond, values = _in("k.episode_key", chunk)
            join = f"FROM event_keys k JOIN call_facts f ON f.ep = k.ep WHERE {cond} AND f.valid"
            yield from self._read(
                f"SELECT k.episode_key, f.journal, f.journal = '' AND f.role IS ?, count(*), "
                f"sum(f.prompt), sum(f.cached), sum(f.completion) {join} "
                "GROUP BY k.episode_key, f.journal, 3", (agent_id, *values))
            yield from self._read(
                f"SELECT k.episode_key, NULL, NULL, sum(coalesce(f.latency_s, 0.0)) {join} "
                "AND f.journal = '' GROUP BY k.episode_key", values)

    def _fact_calls(self, keys: Iterable[str] | None, say: bool = True
                    ) -> list[tuple[ModelCallRow, tuple[int, float]]]:
        """``model_calls`` and ``model_call_times`` from the call facts."""
        texts = self.fact_texts()
        rows = self._read_keys(
            "SELECT k.episode_key, f.journal, f.run_id, f.endpoint, f.role, f.prompt, "
            "f.completion, f.cached, f.latency_s, f.attempts, f.statuses, f.stalls, f.replica, "
            "f.failures, f.valid, f.seq, f.ts FROM event_keys k JOIN call_facts f "
            "ON f.ep = k.ep WHERE true", "k.episode_key", keys,
            order=" ORDER BY k.episode_key, f.journal, f.seq")
        out = []
        for (key, journal, run, endpoint, role, p, c, cached, latency, attempts, statuses,
             stalls, replica, failures, valid, seq, ts) in rows:
            if not valid:
                if say:
                    self.left_out_call(key, journal, seq)
                continue
            out.append((ModelCallRow(key, journal, texts.get(run), texts.get(endpoint),
                                     texts.get(role), p, c, cached, latency, attempts,
                                     texts.get(statuses), stalls, replica, failures),
                        (seq, ts)))
        return out

    def left_out_call(self, episode_key: str, journal: str, seq: int) -> None:
        """Say that a journaled model call was left out because it does not decode."""
        self._left_out(f"episode {episode_key}: journal {journal!r} row #{seq} (a model "
                       "call) does not decode")

    def model_call_times(self, keys: Iterable[str] | None = None) -> list[tuple[int, float]]:
        """(seq, ts) of every call ``model_calls(keys)`` returns, in the same order (exports
        place each call in its journal and in time)."""
        if self.has_facts:
            return [t for _, t in self._fact_calls(keys, say=False)]
        return self._read_keys("SELECT seq, ts FROM events WHERE kind = 'model_call' "
                               "AND coalesce(json_valid(sb_json(payload)), 0)",
                               "episode_key", keys,
                               order=" ORDER BY episode_key, journal, seq")

    def call_spans(self) -> dict[str, tuple[int, float, float]]:
        """run_id -> (model calls it journaled, first and last of their timestamps): how fast
        a run went, for plans."""
        rows = self._read("SELECT run_id, count(*), min(ts), max(ts) FROM event_rows "  # no key
                          "WHERE kind = 'model_call' AND run_id IS NOT NULL GROUP BY run_id")
        return {r: (n, lo, hi) for r, n, lo, hi in rows}

    def judgment_keys(self, keys: Iterable[str] | None = None
                      ) -> list[tuple[str, str, str, str, bool]]:
        """(episode_key, judge, method, judge_key, whether its details hold an "error") of
        the judgments (all, or of ``keys``' episodes) whose details decode: what a judge pool
        skips, without decoding the details."""
        return self._read_keys(
            "SELECT episode_key, judge, method, judge_key, coalesce(json_type(details) = "
            "'object' AND json_type(details, '$.error') IS NOT NULL, 0) FROM judgments "
            "WHERE typeof(details) = 'text' AND json_valid(details)", "episode_key", keys,
            order=" ORDER BY episode_key, judge, method")

    def judgment_chunks(self, keys: Iterable[str]) -> Iterator[list[tuple]]:
        """(episode_key, judge, method, passed, score, details as stored, created_at, run_id,
        judge_key) of the judgments of ``keys``' episodes, a bounded part at a time: by chunks
        of keys, each in (episode_key, judge, method) order, or, for most of the store, one
        pass over the table in ranges of rows, in no set order (:meth:`judgments` puts them
        back in order; a reader that places each by its episode does not need to)."""
        return self._judgment_parts(keys)[1]

    def _judgment_parts(self, keys: Iterable[str]
                        ) -> tuple[dict[str, int] | None, Iterator[list[tuple]]]:
        if isinstance(keys, str):
            raise TypeError(f"keys must be an iterable of episode keys, not one str {keys!r}")
        keys = list(keys)
        sql = ("SELECT episode_key, judge, method, passed, score, details, created_at, run_id, "
               "judge_key FROM judgments WHERE true")
        rank = self._scan_ranks(keys)
        if rank is not None:  # most of the store: the table in ranges of rows, once
            return rank, ([r for r in part if r[0] in rank] for part in self._row_ranges(
                sql.replace("WHERE true", "WHERE rowid >= ? AND rowid < ?"), "judgments"))
        return None, (self._read_keys(sql, "episode_key", chunk,
                                      order=" ORDER BY episode_key, judge, method")
                      for chunk in _chunks(keys))

    def left_out_judgment(self, episode_key: str, judge: str, method: str,
                          why: Exception) -> None:
        """Say that a judgment was left out because its details do not decode."""
        self._left_out(f"episode {episode_key}: its judgment by {judge}/{method} does not "
                       f"decode ({why})")

    def judgments(self, keys: Iterable[str] | None = None, *,
                  keep: Callable[[Any], Any] | None = None) -> list[dict]:
        """Judgments (all, or of ``keys``' episodes): episode_key, judge, method, passed,
        score, details, created_at, run_id, judge_key. ``keep``: what to keep of each
        judgment's details (default: all), applied as each chunk of keys is read, so that
        the whole details of a large store are never held at once."""
        rank = None
        if keys is None:
            chunks: Iterable[list[tuple]] = [self._read(
                "SELECT episode_key, judge, method, passed, score, details, created_at, "
                "run_id, judge_key FROM judgments ORDER BY episode_key, judge, method")]
        else:
            rank, chunks = self._judgment_parts(keys)
        out = []
        notes: list[tuple[tuple, Exception]] = []
        share = {}.setdefault  # judges, methods, runs: one object per value
        for rows in chunks:
            for e, j, m, p, s, d, t, r, jk in rows:
                j, m, jk = share(j, j), share(m, m), share(jk, jk)  # NOT NULL texts
                r = share(r, r) if type(r) is str else r
                try:
                    details = msgspec.json.decode(d)
                except (msgspec.DecodeError, TypeError) as exc:
                    notes.append(((e, j, m), exc))
                    continue
                out.append({"episode_key": e, "judge": j, "method": m,
                            "passed": None if p is None else bool(p), "score": s,
                            "details": details if keep is None else keep(details),
                            "created_at": t, "run_id": r, "judge_key": jk})
        if rank is not None:  # read in rows' order: put back in the chunks' and key order
            place = lambda x: (rank[x[0]], x[1], x[2])  # noqa: E731
            out.sort(key=lambda o: place((o["episode_key"], o["judge"], o["method"])))
            notes.sort(key=lambda n: place(n[0]))
        for (e, j, m), exc in notes:
            self.left_out_judgment(e, j, m, exc)
        return out

    def _row_ranges(self, sql: str, table: str) -> Iterator[list[tuple]]:
        """``sql`` (with ``rowid >= ? AND rowid < ?``) over ``table``'s rowids, ``_ROWS`` at a
        time: one sequential pass, a bounded part of the table held at once."""
        low, top = self._read(f"SELECT coalesce(min(rowid), 0), coalesce(max(rowid), -1) "
                              f"FROM {table}")[0]
        for lo in range(low, top + 1, _ROWS):
            yield self._read(sql, (lo, lo + _ROWS))


_VALID = "(typeof(payload) = 'text' AND json_valid(payload))"
"""A journal row whose payload is JSON text (what decodes); json_extract fails on others."""


def _field(path: str) -> str:
    """A payload's field, NULL where the payload does not decode (CASE: never extracted)."""
    return f"CASE WHEN {_VALID} THEN json_extract(payload, '$.{path}') END"


def _num(value: Any, kind: type) -> Any:
    """A number read from a payload, or None when it is not one (payloads are JSON text)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return kind(value)


def _sane_call(row: tuple) -> tuple:
    (key, journal, run_id, endpoint, role, p, c, cached, latency, attempts, statuses, stalls,
     replica, failures) = row
    p, c, cached = (max(0, _num(x, int) or 0) for x in (p, c, cached))
    text = lambda x: x if isinstance(x, str) else None  # noqa: E731
    return (key, journal, run_id, endpoint, text(role), p, c, min(cached, p),
            _num(latency, float), _num(attempts, int), text(statuses), text(stalls),
            text(replica), text(failures) if failures != "[]" else None)


def _in(column: str, values: list[str]) -> tuple[str, tuple]:
    """``column IN (?, ?, ...)`` for a bounded number of values (SQLite's parameter limit)."""
    return f"{column} IN ({','.join('?' * len(values))})", tuple(values)
