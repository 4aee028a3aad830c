"""A model call's facts (schema 6, ``call_facts``) computed by the store's writer from the
payload it is about to compress, so that the hot path never decodes what it just encoded.

The journal's trigger (:mod:`sweepbench.store.schema`) computes the same row in SQL for every
other way a row is written (merge, migrations, a program of its own); it skips a row whose
facts are there already. In SQL the trigger costs about 15 µs per call on this project's
machines (decompressing through ``sb_json`` and some twenty JSON functions); here it is a
``msgspec`` decode of the few fields it reads and one insert (``benchmarks/LOG.md``,
2026-11-28). Each field is what ``json_extract`` gives the trigger: a number only when the
payload holds one (``true`` is 1), a text only when it is a string or JSON (an array or
object, without whitespace, as SQLite renders it). A payload this cannot read exactly as
SQLite would (not an object, a ``usage`` that is not one, a number beyond 64 bits) is left
to the trigger.
"""

from __future__ import annotations

import math
import sqlite3

import msgspec

__all__ = ["CallFacts"]

_INT64 = 1 << 63


class _Usage(msgspec.Struct):
    prompt_tokens: object = None
    completion_tokens: object = None
    cached_prompt_tokens: object = None


class _Call(msgspec.Struct):
    role: msgspec.Raw = msgspec.Raw()
    usage: _Usage | None = None
    latency_s: object = None
    attempts: object = None
    statuses: msgspec.Raw = msgspec.Raw()
    stalls: msgspec.Raw = msgspec.Raw()
    replica: msgspec.Raw = msgspec.Raw()
    failures: msgspec.Raw = msgspec.Raw()


_decode = msgspec.json.Decoder(_Call).decode
_INSERT = ("INSERT OR IGNORE INTO call_facts VALUES ((SELECT ep FROM event_keys WHERE "
           "episode_key = ?), ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


class _Unsure(Exception):
    """A value SQLite might read otherwise: the trigger computes this row."""


def _text(raw: msgspec.Raw) -> str | None:
    """``text(path)`` of the trigger: a string's value, an array's or object's JSON."""
    head = memoryview(raw)[:1].tobytes()
    if head == b'"':
        return msgspec.json.decode(raw)
    if head in (b"[", b"{"):
        return msgspec.json.format(raw, indent=-1).decode("utf-8")
    return None


def _num(value: object) -> int | float | None:
    """A JSON number (or boolean, which SQLite's JSON reads as 1 or 0), else None."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if not -_INT64 <= value < _INT64:
            raise _Unsure
        return value
    if isinstance(value, float):
        if not math.isfinite(value) or abs(value) >= 2.0 ** 63:
            raise _Unsure
        return value
    return None


def _tokens(value: object) -> int:
    n = _num(value)
    return 0 if n is None else max(0, int(n))


class CallFacts:
    """The writer's side, on its connection ``conn`` (its thread, inside the transaction
    that writes the rows): ``write(rows)`` inserts the facts of the model calls among the
    ``event`` rows about to be written, before them. Keeps the ids of ``fact_texts``."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._ids: dict[str, int] = {}

    def _id(self, text: str | None) -> int | None:
        if text is None:
            return None
        found = self._ids.get(text)
        if found is None:
            self._conn.execute("INSERT OR IGNORE INTO fact_texts (text) VALUES (?)", (text,))
            found = self._ids[text] = self._conn.execute(
                "SELECT id FROM fact_texts WHERE text = ?", (text,)).fetchone()[0]
        return found

    def row(self, key: str, journal: str, seq: int, data: bytes | str, ts: float,
            run_id: str | None, endpoint: str | None) -> tuple | None:
        """The ``call_facts`` row of one model call (its ``ep`` looked up by ``key``), or
        None when the trigger should compute it."""
        try:
            call = _decode(data)
            usage = call.usage or _Usage()
            prompt = _tokens(usage.prompt_tokens)
            latency, attempts = _num(call.latency_s), _num(call.attempts)
            failures = _text(call.failures)
            return (key, journal, seq, self._id(run_id), self._id(endpoint), ts,
                    self._id(_text(call.role)), prompt, _tokens(usage.completion_tokens),
                    min(_tokens(usage.cached_prompt_tokens), prompt),
                    None if latency is None else float(latency),
                    None if attempts is None else int(attempts),
                    self._id(_text(call.statuses)), _text(call.stalls), _text(call.replica),
                    None if failures == "[]" else failures)
        except (msgspec.DecodeError, _Unsure, UnicodeDecodeError):
            return None

    def write(self, rows: list[tuple]) -> None:
        """Insert the facts of the model calls among ``rows`` (the store's ``event``
        parameters before compression: key, journal, seq, kind, data, ts, run_id, endpoint,
        group)."""
        facts = [self.row(k, j, s, data, ts, run, endpoint)
                 for k, j, s, kind, data, ts, run, endpoint, _ in rows if kind == "model_call"]
        if facts:
            self._conn.executemany(_INSERT, [f for f in facts if f is not None])
