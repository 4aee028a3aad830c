"""Every read the viewer makes of a run store, in one place, over a read-only connection.

The viewer never writes: the file is opened for reading only (``query_only``; ``mode=ro`` or
``immutable=1`` on a read-only folder, see :mod:`sweepbench.store.readonly`), so a viewer left
running beside a sweep cannot lock or change it, and a store on a read-only mount is viewed.
Every query is bounded: leaderboard cells, judge pairs and facets are aggregates over the
``episodes_view`` and ``judgments_by_episode`` indexes (never the record blobs), episode lists are
pages (LIMIT/OFFSET over ``episodes_view``, in its order), an episode is a handful of
primary-key lookups, and text search scans a bounded number of episodes per request and
hands back a cursor to continue from.

**What is looked at** is what ``sweepbench report`` looks at (:mod:`sweepbench.results.selection`):
every episode of the store, or one run's selection (``run_episodes``), and of one (model,
user model, user mode, task, trial) stored under several identities only the most recently
started (the others are *superseded*: listed on request, never counted). An episode's
outcome comes from its benchmark's *source*, a (judge, method) pair per benchmark
(``Sources``): an error is an error whatever a judge said, an episode without a verdict of
its source is unjudged.

The store's schema is ``sweepbench.store.schema``'s; this module is the only part of the
viewer that knows it. Values come back as plain dicts and lists, ready for JSON.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

import msgspec

from sweepbench.errors import OlderStoreError, StoreError
from sweepbench.ids import EPISODE_JOURNAL, judge_journal
from sweepbench.store.codec import Damaged, journal_prefix, register
from sweepbench.store.damage import is_damaged, open_error
from sweepbench.store.readonly import check_readable, connect_read_only
from sweepbench.store.runstore import RunStore
from sweepbench.store.schema import VIEW_INDEXES

__all__ = ["OUTCOMES", "Filters", "Sources", "StoreReader"]

OUTCOMES = ("passed", "failed", "error", "unjudged", "running", "unreachable", "superseded")
"""What an episode list's outcome filter can ask for."""

PAGE_MAX = 200
_SEARCH_CHUNK = 500

Sources = Mapping[str, tuple[str, str] | None]
"""benchmark -> the (judge, method) pair whose verdicts decide its episodes (None: no
source, every finished episode unjudged)."""


class Filters(msgspec.Struct, kw_only=True, frozen=True):
    """An episode list's filters (None: any)."""

    model: str | None = None
    user_model: str | None = None
    user_mode: str | None = None
    benchmark: str | None = None
    domain: str | None = None
    task: str | None = None
    """A substring of the task id."""
    trial: int | None = None
    outcome: str | None = None
    termination: str | None = None


_OUTCOME_SQL = """CASE WHEN e.status = 'running' THEN 'running'
    WHEN e.status = 'error' THEN 'error'
    WHEN j.passed = 1 THEN 'passed' WHEN j.passed = 0 THEN 'failed'
    ELSE 'unjudged' END"""

# A newer identity of the same (model, user, task, trial) in the same scope: the episode is
# superseded (``results.view``'s rule; its label is a function of the columns compared).
_NEWER_SQL = """EXISTS (SELECT 1 FROM episodes n INDEXED BY episodes_view
    WHERE n.model = e.model AND n.benchmark = e.benchmark AND n.domain = e.domain
    AND n.task_id = e.task_id AND n.trial = e.trial AND n.lang IS e.lang
    AND n.user_model IS e.user_model AND n.user_mode IS e.user_mode
    AND (n.started_at > e.started_at OR (n.started_at = e.started_at
                                         AND n.episode_key > e.episode_key)){scope})"""

_IN_RUN = ("EXISTS (SELECT 1 FROM run_episodes r WHERE r.run_id = ? "
           "AND r.episode_key = {alias}.episode_key)")

_ROW_COLUMNS = ("episode_key", "model", "user_model", "user_mode", "benchmark", "domain",
                "task_id", "trial", "status", "termination", "unreachable", "passed", "score",
                "outcome")
_ROW_SQL = ("e.episode_key, e.model, e.user_model, e.user_mode, e.benchmark, e.domain, "
            "e.task_id, e.trial, e.status, e.termination, e.unreachable, j.passed, j.score, "
            f"{_OUTCOME_SQL}")
_ORDER = "e.model, e.benchmark, e.domain, e.task_id, e.trial, e.episode_key"


def _decode(text: str | bytes | None) -> Any:
    if text is None:
        return None
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        return {"undecodable": text if isinstance(text, str) else text.decode("utf-8", "replace")}


def _needle(text: str) -> bytes:
    """``text`` as it appears inside a JSON string of the record (lower-cased, ASCII-folded
    like SQLite's ``lower``), for the blob pre-filter."""
    return msgspec.json.encode(text.lower())[1:-1]


def message_texts(record: dict) -> Iterable[str]:
    """Every piece of text a search can match in a record: contents, tool calls, results."""
    for m in record.get("messages") or []:
        if isinstance(m.get("content"), str):
            yield m["content"]
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            yield f"{fn.get('name', '')}({fn.get('arguments', '')})"
    if isinstance(record.get("error"), str):
        yield record["error"]


class _Scope:
    """SQL for "episodes of the store, or of run ``run``'s selection"; ``superseded``: whether
    the scope may hold superseded episodes (False, when counted none, skips the test)."""

    def __init__(self, run: str | None, superseded: bool = True) -> None:
        self.run, self.superseded = run, superseded

    def of(self, alias: str = "e") -> tuple[str, list[Any]]:
        if self.run is None:
            return "1", []
        return _IN_RUN.format(alias=alias), [self.run]

    def newer(self) -> tuple[str, list[Any]]:
        """The superseded test for ``e``: a newer identity in the same scope."""
        if not self.superseded:
            return "0", []
        if self.run is None:
            return _NEWER_SQL.format(scope=""), []
        return _NEWER_SQL.format(scope=" AND " + _IN_RUN.format(alias="n")), [self.run]

    def current(self) -> tuple[str, list[Any]]:
        """Of the scope and not superseded."""
        where, params = self.of()
        newer, nparams = self.newer()
        if newer == "0":
            return where, params
        return f"{where} AND NOT {newer}", [*params, *nparams]


def _join(sources: Sources) -> tuple[str, list[Any]]:
    """LEFT JOIN of each episode's verdict from its benchmark's source."""
    terms, params = [], []
    for bench, pair in sorted(sources.items()):
        if pair is not None:
            terms.append("(e.benchmark = ? AND j.judge = ? AND j.method = ?)")
            params += [bench, *pair]
    cond = " OR ".join(terms) or "0"
    return ("LEFT JOIN judgments j INDEXED BY judgments_by_episode "
            f"ON j.episode_key = e.episode_key AND ({cond})", params)


class StoreReader:
    """Reads one store file; thread-safe (one connection behind a lock, queries are short)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise StoreError(f"no run store at {self.path}")
        self._conn = connect_read_only(self.path)
        try:
            self._conn.execute("PRAGMA cache_size = -65536")  # 64 MiB of pages, per store
            tables = {r[0] for r in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
            if not {"runs", "episodes", "judgments", "events"} <= tables:
                raise StoreError(f"{self.path} is not a sweepbench run store")
            check_readable(self.path, self._conn)
        except OlderStoreError as e:
            self._conn.close()
            raise StoreError(f"{e} (`sweepbench view` migrates it when it may write to the "
                             "file)") from None
        except sqlite3.Error as e:
            self._conn.close()
            raise open_error(self.path, e, "cannot read") from e
        except BaseException:
            self._conn.close()
            raise
        self._lock = threading.Lock()
        self._unpacker = register(self._conn)  # compressed rows (and sb_record for searches)

    def _plain(self, value: Any, key: str | None = None) -> Any:
        """A journal payload (or, with ``key``, the episode's record) as JSON, decompressed
        when stored compressed; what does not decode is said so (under the lock)."""
        try:
            with self._lock:
                if key is None:
                    return value if isinstance(value, str) else self._unpacker.payload(value)
                return self._unpacker.record(value, journal_prefix(self._conn, key))
        except Damaged as e:
            return f"compressed, does not decode: {e}"  # not JSON: shown as undecodable
        except sqlite3.Error as e:
            raise StoreError(f"run store {self.path}: read failed: {e}") from e

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _q(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as e:
                if is_damaged(e):
                    raise open_error(self.path, e) from e
                raise StoreError(f"run store {self.path}: read failed: {e}") from e

    # ---- schema and indexes ----------------------------------------------------------------

    @staticmethod
    def schema_version(path: str | Path) -> int:
        c = connect_read_only(Path(path))
        try:
            return c.execute("PRAGMA user_version").fetchone()[0]
        finally:
            c.close()

    def missing_indexes(self) -> list[str]:
        """Names of the store's viewer indexes this file lacks (an older store)."""
        have = {r[0] for r in self._q("SELECT name FROM sqlite_master WHERE type = 'index'")}
        return [name for name, _ in VIEW_INDEXES if name not in have]

    @staticmethod
    def prepare(path: str | Path) -> str | None:
        """Let the store bring the file up to date: migrate an older schema and add what it
        indexes for readers (it does both whenever it opens); its migration note, if any."""
        store = RunStore(path, create=False)
        note = store.migrated
        store.close()
        return note

    # ---- runs ------------------------------------------------------------------------------

    def runs(self) -> list[dict]:
        """Every run, newest first, with its config, stored prices and info decoded."""
        rows = self._q("SELECT run_id, created_at, finished_at, status, config, prices, info "
                       "FROM runs ORDER BY created_at DESC, rowid DESC")
        return [{"run_id": r[0], "created_at": r[1], "finished_at": r[2], "status": r[3],
                 "config": _decode(r[4]), "prices": _decode(r[5]), "info": _decode(r[6])}
                for r in rows]

    def data_version(self) -> int:
        """Changes whenever another connection (a sweep) commits to the store."""
        return self._q("PRAGMA data_version")[0][0]

    def has_run(self, run_id: str) -> bool:
        return bool(self._q("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)))

    # ---- leaderboard aggregates ------------------------------------------------------------

    def judge_pairs(self, run: str | None, *, superseded: bool = True) -> list[dict]:
        """Per benchmark, each (judge, method) pair with how many of its (current) episodes
        it judged and gave a verdict."""
        where, params = _Scope(run, superseded).current()
        rows = self._q(
            f"SELECT e.benchmark, j.judge, j.method, count(*), count(j.passed) "
            f"FROM episodes e INDEXED BY episodes_view "
            f"JOIN judgments j INDEXED BY judgments_by_episode ON j.episode_key = e.episode_key "
            f"WHERE {where} GROUP BY e.benchmark, j.judge, j.method", params)
        return [{"benchmark": b, "judge": j, "method": m, "episodes": n, "verdicts": v}
                for b, j, m, n, v in rows]

    def cells(self, run: str | None, sources: Sources, *,
              superseded: bool = True) -> list[dict]:
        """Per (model, user model, user mode, benchmark, domain): its current episodes and
        their outcomes under their benchmark's source, and what the report's Avg@k is made
        of (``stats.summarize``): ``rate_sum``, the sum over tasks of each task's pass rate
        (passed / scored), over ``rated_tasks``, the tasks with a scored episode."""
        where, params = _Scope(run, superseded).current()
        join, jparams = _join(sources)
        rows = self._q(
            f"SELECT model, user_model, user_mode, benchmark, domain, total(n), "
            f"total(running), total(error), total(passed), total(failed), "
            f"total(unreachable), count(DISTINCT task_id), "
            f"total(CASE WHEN passed + failed + error > 0 "
            f"THEN passed / (passed + failed + error) END), "
            f"total(passed + failed + error > 0) FROM ("
            f"SELECT e.model, e.user_model, e.user_mode, e.benchmark, e.domain, e.task_id, "
            f"count(*) AS n, total(e.status = 'running') AS running, "
            f"total(e.status = 'error') AS error, "
            f"total(e.status = 'done' AND j.passed = 1) AS passed, "
            f"total(e.status = 'done' AND j.passed = 0) AS failed, "
            f"total(e.unreachable IS NOT NULL) AS unreachable "
            f"FROM episodes e INDEXED BY episodes_view {join} "
            f"WHERE {where} "
            f"GROUP BY e.model, e.user_model, e.user_mode, e.benchmark, e.domain, e.lang, "
            f"e.task_id) "
            f"GROUP BY model, user_model, user_mode, benchmark, domain",
            [*jparams, *params])
        out = []
        for model, umodel, umode, bench, domain, *counts, tasks, rate_sum, rated in rows:
            n, running, errors, passed, failed, unreachable = map(int, counts)  # total(): floats
            out.append({"model": model, "user_model": umodel, "user_mode": umode,
                        "benchmark": bench, "domain": domain, "episodes": n, "tasks": tasks,
                        "running": running, "error": errors, "passed": passed,
                        "failed": failed, "unreachable": unreachable,
                        "unjudged": n - running - errors - passed - failed,
                        "rate_sum": rate_sum, "rated_tasks": int(rated)})
        return out

    def superseded(self, run: str | None) -> int:
        """How many episodes of the scope a newer identity supersedes."""
        scope = _Scope(run)
        where, params = scope.of()
        newer, nparams = scope.newer()
        return self._q(f"SELECT count(*) FROM episodes e INDEXED BY episodes_view "
                       f"WHERE {where} AND {newer}", [*params, *nparams])[0][0]

    def facets(self, run: str | None) -> dict[str, list]:
        """Distinct values the list's filters offer (one index-only scan)."""
        where, params = _Scope(run).of()
        rows = self._q(f"SELECT e.benchmark, e.termination, e.trial "
                       f"FROM episodes e INDEXED BY episodes_view WHERE {where} "
                       f"GROUP BY e.benchmark, e.termination, e.trial", params)
        return {"benchmarks": sorted({b for b, _, _ in rows}),
                "terminations": sorted({t for _, t, _ in rows if t is not None}),
                "trials": sorted({n for _, _, n in rows})}

    # ---- episode lists ---------------------------------------------------------------------

    def _where(self, run: str | None, f: Filters, superseded: bool) -> tuple[str, list[Any]]:
        scope = _Scope(run, superseded)
        where, params = scope.of()
        sql = [where]
        for column, value in (("model", f.model), ("user_model", f.user_model),
                              ("user_mode", f.user_mode), ("benchmark", f.benchmark),
                              ("domain", f.domain), ("trial", f.trial),
                              ("termination", f.termination)):
            if value is not None:
                sql.append(f"e.{column} = ?")
                params.append(value)
        if f.task:
            sql.append("instr(e.task_id, ?) > 0")
            params.append(f.task)
        newer, nparams = scope.newer()
        if f.outcome == "superseded":
            sql.append(newer)
            params += nparams
        elif newer != "0":
            sql.append(f"NOT {newer}")
            params += nparams
        if f.outcome == "unreachable":
            sql.append("e.unreachable IS NOT NULL")
        elif f.outcome is not None and f.outcome != "superseded":
            sql.append(f"({_OUTCOME_SQL}) = ?")
            params.append(f.outcome)
        return " AND ".join(sql), params

    def episodes(self, run: str | None, f: Filters, sources: Sources, *, page: int = 0,
                 per_page: int = 50, count: bool = True, superseded: bool = True) -> dict:
        """One page of the episodes matching ``f``, in (model, benchmark, domain, task,
        trial) order, with the total count (when ``count``)."""
        per_page = max(1, min(per_page, PAGE_MAX))
        where, params = self._where(run, f, superseded)
        join, jparams = _join(sources)
        rows = self._q(
            f"SELECT {_ROW_SQL} FROM episodes e INDEXED BY episodes_view {join} "
            f"WHERE {where} ORDER BY {_ORDER} LIMIT ? OFFSET ?",
            [*jparams, *params, per_page, max(0, page) * per_page])
        total = None
        if count:
            total = self._q(f"SELECT count(*) FROM episodes e INDEXED BY episodes_view {join} "
                            f"WHERE {where}", [*jparams, *params])[0][0]
        return {"rows": [self._row(r) for r in rows], "total": total, "page": page,
                "per_page": per_page}

    @staticmethod
    def _row(r: tuple) -> dict:
        d = dict(zip(_ROW_COLUMNS, r))
        d["passed"] = None if d["passed"] is None else bool(d["passed"])
        return d

    def search(self, run: str | None, f: Filters, sources: Sources, text: str, *,
               cursor: int = 0, want: int = 50, budget_s: float = 0.15,
               superseded: bool = True) -> dict:
        """Episodes matching ``f`` whose messages contain ``text`` (case-insensitive), scanning
        from ``cursor`` (a position in the filtered list) until ``want`` matches, the end, or
        ``budget_s`` seconds; ``next_cursor`` continues (None: the list was scanned to its end).
        """
        where, params = self._where(run, f, superseded)
        join, jparams = _join(sources)
        needle = text.lower()
        blob = _needle(text)
        found: list[dict] = []
        started = time.perf_counter()
        pos = max(0, cursor)
        while True:
            rows = self._q(
                f"SELECT {_ROW_SQL} FROM episodes e INDEXED BY episodes_view {join} "
                f"WHERE {where} ORDER BY {_ORDER} LIMIT ? OFFSET ?",
                [*jparams, *params, _SEARCH_CHUNK, pos])
            if not rows:
                return {"rows": found, "next_cursor": None, "scanned_to": pos}
            hits = self._records_containing([r[0] for r in rows], blob)
            for i, r in enumerate(rows):
                record = hits.get(r[0])
                if record is not None and any(needle in t.lower() for t in message_texts(record)):
                    found.append(self._row(r))
                    if len(found) >= want:
                        return {"rows": found, "next_cursor": pos + i + 1,
                                "scanned_to": pos + i + 1}
            pos += len(rows)
            if len(rows) < _SEARCH_CHUNK:
                return {"rows": found, "next_cursor": None, "scanned_to": pos}
            if time.perf_counter() - started > budget_s:
                return {"rows": found, "next_cursor": pos, "scanned_to": pos}

    def _records_containing(self, keys: list[str], blob: bytes) -> dict[str, dict]:
        """Decoded records of those episodes whose (lower-cased) JSON contains ``blob``."""
        marks = ",".join("?" * len(keys))
        rows = self._q(
            f"SELECT episode_key, record FROM episodes WHERE episode_key IN ({marks}) "
            f"AND record IS NOT NULL AND instr(lower(sb_record(episode_key, record)), ?) > 0",
            [*keys, blob])
        out = {}
        for key, rec in rows:
            d = _decode(self._plain(rec, key))
            if isinstance(d, dict):
                out[key] = d
        return out

    # ---- one episode -----------------------------------------------------------------------

    _EPISODE = ("episode_key", "label", "model", "benchmark", "spec", "domain", "task_id",
                "lang", "trial", "user_model", "user_mode", "identity", "unreachable", "status",
                "termination", "record", "run_id", "started_at", "finished_at")

    def episode(self, key: str) -> dict | None:
        """The episode's row (identity and record decoded; the record None while running),
        its journal, its judgments with their journals, and the runs that selected it; None
        when the store has no such episode."""
        rows = self._q(f"SELECT {', '.join(self._EPISODE)} FROM episodes WHERE episode_key = ?",
                       (key,))
        if not rows:
            return None
        row = dict(zip(self._EPISODE, rows[0]))
        if row["record"] is not None:
            row["record"] = _decode(self._plain(row["record"], key))
        row["identity"] = _decode(row["identity"])
        row["events"] = self._events(key, EPISODE_JOURNAL)
        row["runs"] = [r[0] for r in self._q(
            "SELECT run_id FROM run_episodes WHERE episode_key = ? ORDER BY run_id", (key,))]
        judgments = self._q(
            "SELECT judge, method, passed, score, details, created_at, run_id, judge_key "
            "FROM judgments WHERE episode_key = ? ORDER BY judge, method", (key,))
        row["judgments"] = [
            {"judge": j, "method": m, "passed": None if p is None else bool(p), "score": s,
             "details": _decode(d), "created_at": t, "run_id": r, "judge_key": jk,
             "journal": self._events(key, judge_journal(j, m), kind="model_call")}
            for j, m, p, s, d, t, r, jk in judgments]
        return row

    def _events(self, key: str, journal: str, kind: str | None = None) -> list[dict]:
        sql = ("SELECT seq, kind, payload, ts, run_id, endpoint FROM events "
               "WHERE episode_key = ? AND journal = ?")
        params: list[Any] = [key, journal]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        return [{"seq": s, "kind": k, "payload": _decode(self._plain(p)), "ts": ts, "run_id": r,
                 "endpoint": ep}
                for s, k, p, ts, r, ep in self._q(sql + " ORDER BY seq", params)]

    def same_task(self, run: str | None, row: Mapping[str, Any], sources: Sources,
                  models: list[str]) -> list[dict]:
        """Every episode in the scope of ``row``'s task by ``models`` (all trials, superseded
        identities marked): what side by side picks from. Naming the models lets the index
        seek each one's rows of the task."""
        scope = _Scope(run)
        where, params = scope.of()
        newer, nparams = scope.newer()
        join, jparams = _join(sources)
        marks = ",".join("?" * len(models))
        rows = self._q(
            f"SELECT {_ROW_SQL}, {newer} FROM episodes e INDEXED BY episodes_view {join} "
            f"WHERE {where} AND e.model IN ({marks}) AND e.benchmark = ? AND e.domain = ? "
            f"AND e.task_id = ? ORDER BY {_ORDER} LIMIT 500",
            [*nparams, *jparams, *params, *models, row["benchmark"], row["domain"],
             row["task_id"]])
        return [{**self._row(r[:-1]), "superseded": bool(r[-1])} for r in rows]
