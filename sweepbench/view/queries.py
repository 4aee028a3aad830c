"""Every read the viewer makes of a run store, in one place, over a read-only connection.

The viewer never writes: the file is opened with SQLite's ``mode=ro`` URI and
``query_only``, so a viewer left running beside a sweep cannot lock or change it. Every query
is bounded: the leaderboard and the facets are index-only aggregates, episode lists are
pages (LIMIT/OFFSET over the ``episodes_view`` index, in its order), an episode is a handful of
primary-key lookups, and text search scans a bounded number of episodes per request and
hands back a cursor to continue from. Nothing reads every record blob of a store.

The store's schema is ``sweepbench.results.store``'s; this module is the only part of the
viewer that knows it. Values come back as plain dicts and lists, ready for JSON.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import quote

import msgspec

from sweepbench.errors import StoreError
from sweepbench.ids import STATE_JUDGE, JudgeMethod, judge_journal_id
from sweepbench.results.store import VIEW_INDEXES, RunStore

__all__ = ["OUTCOMES", "Filters", "StoreReader"]

OUTCOMES = ("passed", "failed", "error", "unjudged", "unreachable", "running")
"""What an episode's list filter can ask for, under the chosen judge/method pair."""

PAGE_MAX = 200
_SEARCH_CHUNK = 500


class Filters(msgspec.Struct, kw_only=True, frozen=True):
    """An episode list's filters (None: any); ``judge``/``method`` pick the verdict."""

    model: str | None = None
    benchmark: str | None = None
    domain: str | None = None
    task: str | None = None
    """A substring of the task id."""
    trial: int | None = None
    outcome: str | None = None
    termination: str | None = None
    judge: str | None = None
    method: str | None = None


# An episode's outcome under the pair bound as (judge, method): what its row shows and what
# the outcome filter and the leaderboard count. Errors first: an episode that ended in error
# counts as an error whatever a judge said of it.
_OUTCOME_SQL = """CASE WHEN e.status = 'running' THEN 'running'
    WHEN e.status = 'error' THEN 'error'
    WHEN j.passed = 1 THEN 'passed' WHEN j.passed = 0 THEN 'failed'
    ELSE 'unjudged' END"""

_JOIN_PAIR = ("LEFT JOIN judgments j ON j.run_id = e.run_id AND j.episode_id = e.episode_id "
              "AND j.judge = ? AND j.method = ?")

_UNREACHABLE_SQL = (
    "EXISTS (SELECT 1 FROM judgments s WHERE s.run_id = e.run_id "
    "AND s.episode_id = e.episode_id AND s.judge = ? AND s.method = ? "
    "AND json_extract(s.details, '$.unreachable') = 1)")

_ROW_COLUMNS = ("episode_id", "model", "benchmark", "domain", "task_id", "trial", "status",
                "termination", "passed", "score", "outcome")
_ORDER = "e.model, e.benchmark, e.domain, e.task_id, e.trial, e.episode_id"


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


class StoreReader:
    """Reads one store file; thread-safe (one connection behind a lock, queries are short)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise StoreError(f"no run store at {self.path}")
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._conn.execute("PRAGMA query_only = ON")
            self._conn.execute("PRAGMA cache_size = -65536")  # 64 MiB of pages, per store
            tables = {r[0] for r in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.Error as e:
            raise StoreError(f"cannot open run store {self.path} read-only: {e}") from e
        if not {"runs", "episodes", "judgments", "events"} <= tables:
            self._conn.close()
            raise StoreError(f"{self.path} is not a sweepbench run store")
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _q(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as e:
                raise StoreError(f"run store {self.path}: read failed: {e}") from e

    # ---- indexes ---------------------------------------------------------------------------

    def missing_indexes(self) -> list[str]:
        """Names of the store's viewer indexes this file lacks (an older store)."""
        have = {r[0] for r in self._q("SELECT name FROM sqlite_master WHERE type = 'index'")}
        return [name for name, _ in VIEW_INDEXES if name not in have]

    @staticmethod
    def add_indexes(path: str | Path) -> None:
        """Let the store add what it indexes for readers (it does so whenever it opens)."""
        RunStore(path, create=False).close()

    # ---- runs and the leaderboard ----------------------------------------------------------

    def runs(self) -> list[dict]:
        rows = self._q("SELECT run_id, created_at, finished_at, status, config FROM runs "
                       "ORDER BY created_at DESC, rowid DESC")
        return [{"run_id": r[0], "created_at": r[1], "finished_at": r[2], "status": r[3],
                 "config": _decode(r[4])} for r in rows]

    def data_version(self) -> int:
        """Changes whenever another connection (a sweep) commits to the store."""
        return self._q("PRAGMA data_version")[0][0]

    def has_run(self, run_id: str) -> bool:
        return bool(self._q("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)))

    def run_config(self, run_id: str) -> dict:
        rows = self._q("SELECT config FROM runs WHERE run_id = ?", (run_id,))
        cfg = _decode(rows[0][0]) if rows else None
        return cfg if isinstance(cfg, dict) else {}

    def judge_pairs(self, run_id: str) -> list[dict]:
        """(judge, method) pairs with how many episodes each judged and gave a verdict;
        the pair with the most verdicts first (as the report picks its default)."""
        rows = self._q(
            "SELECT judge, method, count(*), count(passed) FROM judgments WHERE run_id = ? "
            "GROUP BY judge, method", (run_id,))
        pairs = [{"judge": j, "method": m, "episodes": n, "verdicts": v} for j, m, n, v in rows]
        # among equals the deterministic state check first, then by name
        pairs.sort(key=lambda p: (-p["verdicts"], p["method"] != JudgeMethod.STATE,
                                  p["judge"], p["method"]))
        return pairs

    def leaderboard(self, run_id: str, judge: str | None, method: str | None) -> list[dict]:
        """Per (model, benchmark, domain): episodes and their outcomes under the pair."""
        rows = self._q(
            f"SELECT e.model, e.benchmark, e.domain, count(*), "
            f"total(e.status = 'running'), total(e.status = 'error'), "
            f"total(e.status = 'done' AND j.passed = 1), total(e.status = 'done' AND j.passed = 0), "
            f"count(DISTINCT e.task_id) "
            f"FROM episodes e {_JOIN_PAIR} WHERE e.run_id = ? "
            f"GROUP BY e.model, e.benchmark, e.domain",
            (judge or "", method or "", run_id))
        out = []
        for model, bench, domain, n, *counts, tasks in rows:
            running, errors, passed, failed = map(int, counts)  # total(): floats, never NULL
            out.append({"model": model, "benchmark": bench, "domain": domain, "episodes": n,
                        "tasks": tasks, "running": running, "error": errors, "passed": passed,
                        "failed": failed,
                        "unjudged": n - running - errors - passed - failed})
        return out

    def facets(self, run_id: str) -> dict[str, list]:
        """Distinct values the list's filters offer (index-only)."""
        terminations = [r[0] for r in self._q(
            "SELECT DISTINCT termination FROM episodes INDEXED BY episodes_view "
            "WHERE run_id = ? AND termination IS NOT NULL ORDER BY 1", (run_id,))]
        trials = [r[0] for r in self._q(
            "SELECT DISTINCT trial FROM episodes INDEXED BY episodes_view WHERE run_id = ? "
            "ORDER BY 1", (run_id,))]
        return {"terminations": terminations, "trials": trials}

    # ---- episode lists ---------------------------------------------------------------------

    def _where(self, run_id: str, f: Filters) -> tuple[str, list[Any]]:
        sql = ["e.run_id = ?"]
        params: list[Any] = [run_id]
        for column, value in (("model", f.model), ("benchmark", f.benchmark),
                              ("domain", f.domain), ("trial", f.trial),
                              ("termination", f.termination)):
            if value is not None:
                sql.append(f"e.{column} = ?")
                params.append(value)
        if f.task:
            sql.append("instr(e.task_id, ?) > 0")
            params.append(f.task)
        if f.outcome == "unreachable":
            sql.append(_UNREACHABLE_SQL)
            params += [STATE_JUDGE, JudgeMethod.STATE.value]
        elif f.outcome is not None:
            sql.append(f"({_OUTCOME_SQL}) = ?")
            params.append(f.outcome)
        return " AND ".join(sql), params

    def episodes(self, run_id: str, f: Filters, *, page: int = 0, per_page: int = 50,
                 count: bool = True) -> dict:
        """One page of the episodes matching ``f``, in (model, benchmark, domain, task,
        trial) order, with the total count."""
        per_page = max(1, min(per_page, PAGE_MAX))
        where, params = self._where(run_id, f)
        pair = [f.judge or "", f.method or ""]
        rows = self._q(
            f"SELECT e.episode_id, e.model, e.benchmark, e.domain, e.task_id, e.trial, "
            f"e.status, e.termination, j.passed, j.score, {_OUTCOME_SQL} "
            f"FROM episodes e {_JOIN_PAIR} WHERE {where} ORDER BY {_ORDER} LIMIT ? OFFSET ?",
            [*pair, *params, per_page, max(0, page) * per_page])
        total = None
        if count:
            total = self._q(f"SELECT count(*) FROM episodes e {_JOIN_PAIR} WHERE {where}",
                            [*pair, *params])[0][0]
        return {"rows": [self._row(r) for r in rows], "total": total, "page": page,
                "per_page": per_page}

    @staticmethod
    def _row(r: tuple) -> dict:
        d = dict(zip(_ROW_COLUMNS, r))
        d["passed"] = None if d["passed"] is None else bool(d["passed"])
        return d

    def search(self, run_id: str, f: Filters, text: str, *, cursor: int = 0,
               want: int = 50, budget_s: float = 0.15) -> dict:
        """Episodes matching ``f`` whose messages contain ``text`` (case-insensitive), scanning
        from ``cursor`` (a position in the filtered list) until ``want`` matches, the end, or
        ``budget_s`` seconds; ``next_cursor`` continues (None: the list was scanned to its end).
        """
        where, params = self._where(run_id, f)
        pair = [f.judge or "", f.method or ""]
        needle = text.lower()
        blob = _needle(text)
        found: list[dict] = []
        started = time.perf_counter()
        pos = max(0, cursor)
        while True:
            rows = self._q(
                f"SELECT e.episode_id, e.model, e.benchmark, e.domain, e.task_id, e.trial, "
                f"e.status, e.termination, j.passed, j.score, {_OUTCOME_SQL} "
                f"FROM episodes e {_JOIN_PAIR} WHERE {where} ORDER BY {_ORDER} LIMIT ? OFFSET ?",
                [*pair, *params, _SEARCH_CHUNK, pos])
            if not rows:
                return {"rows": found, "next_cursor": None, "scanned_to": pos}
            hits = self._records_containing(run_id, [r[0] for r in rows], blob)
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

    def _records_containing(self, run_id: str, ids: list[str], blob: bytes) -> dict[str, dict]:
        """Decoded records of those ``ids`` whose (lower-cased) JSON contains ``blob``."""
        marks = ",".join("?" * len(ids))
        rows = self._q(
            f"SELECT episode_id, record FROM episodes WHERE run_id = ? AND episode_id IN "
            f"({marks}) AND record IS NOT NULL AND instr(lower(record), ?) > 0",
            [run_id, *ids, blob])
        out = {}
        for eid, rec in rows:
            d = _decode(rec)
            if isinstance(d, dict):
                out[eid] = d
        return out

    # ---- one episode -----------------------------------------------------------------------

    def episode(self, run_id: str, episode_id: str) -> dict | None:
        """The episode's row, its record (decoded, or None while running), its journal and
        its judgments; None when the store has no such episode."""
        rows = self._q(
            "SELECT episode_id, model, benchmark, domain, task_id, lang, trial, status, "
            "termination, record, started_at, finished_at FROM episodes "
            "WHERE run_id = ? AND episode_id = ?", (run_id, episode_id))
        if not rows:
            return None
        keys = ("episode_id", "model", "benchmark", "domain", "task_id", "lang", "trial",
                "status", "termination", "record", "started_at", "finished_at")
        row = dict(zip(keys, rows[0]))
        row["record"] = _decode(row["record"])
        row["events"] = self._events(run_id, episode_id)
        judgments = self._q(
            "SELECT judge, method, passed, score, details, created_at FROM judgments "
            "WHERE run_id = ? AND episode_id = ? ORDER BY judge, method",
            (run_id, episode_id))
        row["judgments"] = [
            {"judge": j, "method": m, "passed": None if p is None else bool(p), "score": s,
             "details": _decode(d), "created_at": t,
             "journal": self._events(run_id, judge_journal_id(j, m, episode_id),
                                     kind="model_call")}
            for j, m, p, s, d, t in judgments]
        return row

    def _events(self, run_id: str, journal_id: str, kind: str | None = None) -> list[dict]:
        sql = "SELECT seq, kind, payload, ts FROM events WHERE run_id = ? AND episode_id = ?"
        params: list[Any] = [run_id, journal_id]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        return [{"seq": s, "kind": k, "payload": _decode(p), "ts": ts}
                for s, k, p, ts in self._q(sql + " ORDER BY seq", params)]

    def same_task(self, run_id: str, benchmark: str, domain: str, task_id: str,
                  judge: str | None, method: str | None, models: list[str]) -> list[dict]:
        """Every episode of one task by ``models`` (all trials): what side by side picks
        from. Naming the models lets the index seek each one's rows of the task."""
        f = Filters(benchmark=benchmark, domain=domain, judge=judge, method=method)
        where, params = self._where(run_id, f)
        marks = ",".join("?" * len(models))
        rows = self._q(
            f"SELECT e.episode_id, e.model, e.benchmark, e.domain, e.task_id, e.trial, "
            f"e.status, e.termination, j.passed, j.score, {_OUTCOME_SQL} "
            f"FROM episodes e {_JOIN_PAIR} WHERE {where} AND e.model IN ({marks}) "
            f"AND e.task_id = ? ORDER BY {_ORDER} LIMIT 500",
            [judge or "", method or "", *params, *models, task_id])
        return [self._row(r) for r in rows]
