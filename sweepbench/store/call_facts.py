"""A model call's facts (schema 6, ``call_facts``) computed by the store from the call it
journals, so that the hot path never decodes what it just encoded.

``source(payload)`` reads them from the payload dict the store encodes (the caller's thread,
when ``RunStore.event`` is called: a dict changed later is not what is stored), about a
microsecond; the writer then puts the texts' ids in (``CallFacts``). Decoding the encoded
payload in the writer instead took 4-5 µs a call (``benchmarks/LOG.md``, 2026-11-28), and is
what the writer still does for a payload given as bytes, or a dict with values whose JSON
this cannot foresee cheaply.

The journal's trigger (:mod:`sweepbench.store.schema`) computes the same row in SQL for every
other way a row is written (merge, migrations, a program of its own); it skips a row whose
facts are there already. In SQL the trigger costs about 15 µs per call on this project's
machines (decompressing through ``sb_json`` and some twenty JSON functions); here it is a
``msgspec`` decode of the few fields it reads and one insert (``benchmarks/LOG.md``,
2026-11-28). Each field is what ``json_extract`` gives the trigger: a number only when the
payload holds one (``true`` is 1), a text only when it is a string or JSON (an array or
object, without whitespace, as SQLite renders it). A payload this cannot read exactly as
SQLite would (not an object, a ``usage`` that is not one, a number beyond 64 bits) is left
to the trigger. From a dict, each value is what the store's encoder makes of it: the JSON of
a list or struct is its own encoding (msgspec writes no whitespace), a float that is not
finite is ``null``.
"""

from __future__ import annotations

import math
import sqlite3

import msgspec

from sweepbench.wire import Usage

__all__ = ["CallFacts", "source"]

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
_encode = msgspec.json.Encoder().encode  # the store's: what a payload dict is stored as
_INSERT = ("INSERT OR IGNORE INTO call_facts VALUES "
           "(?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
_INSERT_PLAIN = ("INSERT OR IGNORE INTO call_facts VALUES "
                 "(?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)")
"""A call without stalls, replica or failures (nearly every call): their NULLs written in the
statement, not bound. Python's ``sqlite3`` binds a None through its adapter lookup, about
0.35 µs a value against 0.05 for a number (``benchmarks/LOG.md``, 2026-11-28)."""
_PLAIN_LEN = 13
_PLAIN = (int, float, bool)
_JOURNAL_KEYS = frozenset((
    "role", "request_hash", "message", "usage", "finish_reason", "latency_s", "queue_wait_s",
    "backoff_s", "wall_s", "attempts", "statuses", "failures", "stalls", "replica", "error",
    "status", "error_message"))
"""What :mod:`sweepbench.runner.journal` writes in a model call's payload."""


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


def _text_of(value: object) -> str | None:
    """``_text`` of ``value`` as the store's encoder writes it."""
    if value is None:
        return None
    if type(value) is str:
        return value
    if type(value) in _PLAIN:
        return None
    data = _encode(value)
    head = data[:1]
    if head == b'"':
        return msgspec.json.decode(data)
    return data.decode("utf-8") if head in (b"[", b"{") else None


def _num_of(value: object) -> int | float | None:
    """``_num`` of ``value`` as the store's encoder writes it (not finite: ``null``)."""
    if type(value) is float and not math.isfinite(value):
        return None
    return _num(value)


def _tokens_of(value: object) -> int:
    n = _num_of(value)
    return 0 if n is None else max(0, int(n))


def source(payload: dict) -> tuple | None:
    """The facts of a model call's payload dict, texts as texts: (role, prompt, completion,
    cached, latency_s, attempts, statuses, stalls, replica, failures); None when the writer
    should decode the payload instead (a key that is not a str, a ``usage`` that is not a
    ``Usage`` or None, a value the store's encoder would not write as this reads it)."""
    if not payload.keys() <= _JOURNAL_KEYS:  # each key equal to a str: a str, or one
        for k in payload:                      # msgspec encodes as that str (a StrEnum)
            if type(k) is not str:
                return None
    get = payload.get
    role, usage, latency, attempts = (get("role"), get("usage"), get("latency_s"),
                                      get("attempts"))
    statuses, failures = get("statuses"), get("failures")
    # a live call's payload (runner.journal), read without a function call per field
    if (type(usage) is Usage and type(role) is str and type(latency) is float
            and type(attempts) is int and type(failures) is list and not failures
            and get("stalls") is None and get("replica") is None
            and (statuses is None or type(statuses) is list)):
        prompt, completion, cached = (usage.prompt_tokens, usage.completion_tokens,
                                      usage.cached_prompt_tokens)
        if (type(prompt) is int and type(completion) is int and type(cached) is int
                and 0 <= prompt < _INT64 and 0 <= completion < _INT64 and 0 <= cached < _INT64
                and -_INT64 <= attempts < _INT64 and math.isfinite(latency)):
            return (role, prompt, completion, min(cached, prompt), latency, attempts,
                    None if statuses is None else _encode(statuses).decode("utf-8"),
                    None, None, None)
    try:
        if usage is None:
            prompt = completion = cached = 0
        elif type(usage) is Usage:
            prompt = _tokens_of(usage.prompt_tokens)
            completion = _tokens_of(usage.completion_tokens)
            cached = min(_tokens_of(usage.cached_prompt_tokens), prompt)
        else:
            return None
        latency, attempts = _num_of(latency), _num_of(attempts)
        failures = (None if type(failures) is list and not failures else _text_of(failures))
        return (_text_of(role), prompt, completion, cached,
                None if latency is None else float(latency),
                None if attempts is None else int(attempts), _text_of(statuses),
                _text_of(get("stalls")), _text_of(get("replica")),
                None if failures == "[]" else failures)
    except (_Unsure, TypeError, msgspec.EncodeError):
        return None


class CallFacts:
    """The writer's side, on its connection ``conn`` (its thread, inside the transaction
    that writes the rows): ``row`` gives the ``call_facts`` row of a model call about to be
    written, ``insert`` inserts a run of them (before the calls' own rows). Keeps the ids of
    ``fact_texts``."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._ids: dict[str, int] = {}
        self._odd = False  # a row given since the last insert has stalls, replica or failures

    def insert(self, rows: list[tuple]) -> None:
        """Insert ``row``'s rows in their order (of two for one call, the first stays)."""
        if not self._odd:
            self._conn.executemany(_INSERT_PLAIN, rows)
            return
        self._odd = False
        self._conn.executemany(_INSERT, [r if len(r) > _PLAIN_LEN else (*r, None, None, None)
                                         for r in rows])

    def _id(self, text: str | None) -> int | None:
        if text is None:
            return None
        found = self._ids.get(text)
        if found is None:
            self._conn.execute("INSERT OR IGNORE INTO fact_texts (text) VALUES (?)", (text,))
            found = self._ids[text] = self._conn.execute(
                "SELECT id FROM fact_texts WHERE text = ?", (text,)).fetchone()[0]
        return found

    def row(self, ep: int, journal: str, seq: int, ts: float, run_id: str | None,
            endpoint: str | None, facts: tuple | None, data: bytes | str) -> tuple | None:
        """The ``call_facts`` row of one model call of episode number ``ep`` (without its
        stalls, replica and failures when all three are None), for ``insert``: from ``facts``
        (what :func:`source` gave) or else by decoding its payload ``data``; None when the
        trigger should compute it."""
        if facts is None:
            facts = self.decoded(data)
            if facts is None:
                return None
        ids, text_id = self._ids, self._id
        role, prompt, completion, cached, latency, attempts, statuses, stalls, replica, \
            failures = facts
        row = (ep, journal, seq, ids.get(run_id) or text_id(run_id),
               ids.get(endpoint) or text_id(endpoint), ts, ids.get(role) or text_id(role),
               prompt, completion, cached, latency, attempts,
               ids.get(statuses) or text_id(statuses))
        if stalls is None and replica is None and failures is None:
            return row
        self._odd = True
        return (*row, stalls, replica, failures)

    @staticmethod
    def decoded(data: bytes | str) -> tuple | None:
        """What :func:`source` gives, read from the payload's JSON; None when the trigger
        should compute the row."""
        try:
            call = _decode(data)
            usage = call.usage or _Usage()
            prompt = _tokens(usage.prompt_tokens)
            latency, attempts = _num(call.latency_s), _num(call.attempts)
            failures = _text(call.failures)
            return (_text(call.role), prompt, _tokens(usage.completion_tokens),
                    min(_tokens(usage.cached_prompt_tokens), prompt),
                    None if latency is None else float(latency),
                    None if attempts is None else int(attempts), _text(call.statuses),
                    _text(call.stalls), _text(call.replica),
                    None if failures == "[]" else failures)
        except (msgspec.DecodeError, _Unsure, UnicodeDecodeError):
            return None
