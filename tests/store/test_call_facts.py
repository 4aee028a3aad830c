"""The writer's call facts (store.call_facts) are the trigger's (store.schema), row for row:
on odd payloads written through the store, the facts SQL computes again from the same rows
(an update of each payload fires the trigger) equal what the writer inserted."""

from __future__ import annotations

import enum
import sqlite3

import msgspec
import pytest

from sweepbench.store.codec import register
from sweepbench.store.runstore import RunStore
from tests.support import call_facts

ODD = [
    {"role": "agent", "usage": {"prompt_tokens": 100, "completion_tokens": 7,
                                "cached_prompt_tokens": 400}, "latency_s": 1, "attempts": 2.9},
    {"role": "user", "usage": {"prompt_tokens": -5.5, "completion_tokens": "x",
                               "cached_prompt_tokens": True}, "latency_s": True,
     "statuses": [500, True, 200.0, 1e5, "é\u00e9"], "attempts": False},
    {"role": ["a", {"b": None}], "usage": None, "stalls": {"hung": 1, "hedge_won": True},
     "replica": "http://a/v1", "failures": []},
    {"role": 3, "usage": {}, "latency_s": "slow", "statuses": "not a list",
     "failures": [{"replica": "b"}], "replica": {"x": [1, 2.50]}},
    {"role": None, "stalls": None, "attempts": 1e300, "latency_s": -0.0},
    {"usage": {"prompt_tokens": 2 ** 70}},  # beyond 64 bits: left to the trigger
    {"usage": [1, 2]},  # not an object: left to the trigger
    ["not", "an", "object"],
    "a string",
]
SPACED = b'{"role" : "agent", "statuses" : [ 200 , 429 ], "stalls": { "hung" : 1 } }'


def test_the_writers_facts_are_the_triggers(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path, train_after=5) as store:  # most rows compressed
        for n in range(3):
            for i, payload in enumerate(ODD):
                store.event(f"e{n}", i, "model_call", msgspec.json.encode(payload),
                            run_id="r", endpoint="A" if i % 2 else None)
            store.event(f"e{n}", len(ODD), "model_call", SPACED, journal="judge|J|likert",
                        run_id="r", endpoint="J")
            store.event(f"e{n}", len(ODD) + 1, "message", {"n": n})
    db = sqlite3.connect(path, isolation_level=None)
    register(db)
    written = call_facts(db)
    assert len(written) == 3 * (len(ODD) + 1)
    assert db.execute("SELECT count(*) FROM event_rows WHERE typeof(payload) = 'blob' "
                      "AND kind = 'model_call'").fetchone()[0] > 10
    db.execute("UPDATE event_rows SET payload = payload")  # the trigger computes them again
    assert call_facts(db) == written
    db.close()


def _journaled() -> list[dict]:
    """Model-call payloads as the journal makes them (runner.journal): live calls with the
    client's structs in them (usage, failures, stalls, a replica), and calls that failed."""
    from sweepbench.client.results import AttemptFailure, CallResult
    from sweepbench.errors import RateLimitError
    from sweepbench.runner.journal import call_payload, error_payload
    from sweepbench.wire import AssistantMessage, Usage

    def result(**kw) -> CallResult:
        return CallResult(**{"message": AssistantMessage(content="ok"), "latency_s": 0.25,
                             "usage": Usage(900, 12, 640), "attempts": 1, "statuses": [200],
                             **kw})

    failed = RateLimitError("slow down", status=429)
    failed.attempts, failed.statuses = 3, [429, 429, 0]
    failed.failures = [AttemptFailure(error="RateLimitError", status=429, message="é")]
    return [
        call_payload("agent", "h0", result()),
        call_payload("user", "h1", result(usage=Usage(), latency_s=1e-7, statuses=[])),
        call_payload("agent", "h1", result(usage=Usage(10, 3, 99), statuses=[429, 200],
                                           attempts=2, latency_s=3.0)),
        call_payload("agent", "h2", result(
            attempts=2, statuses=[500, 200], hung=1, hedged=1, hedge_won=True,
            hedge_usage=Usage(5, 1), replica="http://r2/v1",
            failures=[AttemptFailure(error="ServerError", status=500, message="x\ny")])),
        call_payload("agent", "h3", result(usage=Usage(10, 3, 99, 2), latency_s=float("nan"))),
        call_payload("agent", "h4", result(usage=Usage(-4, 2 ** 64, 1))),  # left to the trigger
        error_payload("agent", "h5", failed),
        {"role": "judge", "usage": Usage(7, 8, 9), "latency_s": 2, "attempts": True,
         "statuses": None, "failures": [], "stalls": {}, "replica": ""},
    ]


def test_facts_read_from_the_payload_dict_are_the_decoded_ones():
    """``source`` (the dict the store is given) and the writer's decoding of what the store
    encodes from it agree; the live calls' payloads take the dict's way."""
    from sweepbench.store.call_facts import CallFacts, source

    payloads = _journaled() + [p for p in ODD if isinstance(p, dict)]
    taken = 0
    for payload in payloads:
        facts = source(payload)
        if facts is not None:
            taken += 1
            assert facts == CallFacts.decoded(msgspec.json.encode(payload)), payload
    assert all(source(p) is not None for p in _journaled()[:4])
    assert taken >= len(_journaled()) - 1


def test_facts_of_payload_dicts_are_the_triggers(tmp_path):
    """Given as dicts (the journal's way), model calls get the facts the trigger computes
    again from their stored rows, compressed or not."""
    path = tmp_path / "s.sqlite"
    payloads = _journaled() + [p for p in ODD if isinstance(p, dict)]
    with RunStore(path, train_after=5) as store:
        for n in range(3):
            for i, payload in enumerate(payloads):
                store.event(f"e{n}", i, "model_call", payload, run_id="r",
                            endpoint="A" if i % 2 else None)
    db = sqlite3.connect(path, isolation_level=None)
    register(db)
    written = call_facts(db)
    assert len(written) == 3 * len(payloads)
    assert db.execute("SELECT count(*) FROM event_rows WHERE typeof(payload) = 'blob'"
                      ).fetchone()[0] > 10
    db.execute("UPDATE event_rows SET payload = payload")  # the trigger computes them again
    assert call_facts(db) == written
    db.close()


# ---- the module's parts, value by value (exact values at the edges) ------------------------

INT64 = 1 << 63
JOURNAL_KEYS = {"role", "request_hash", "message", "usage", "finish_reason", "latency_s",
                "queue_wait_s", "backoff_s", "wall_s", "attempts", "statuses", "failures",
                "stalls", "replica", "error", "status", "error_message"}


def test_text_reads_strings_arrays_and_objects_only():
    from sweepbench.store.call_facts import _text

    raw = msgspec.Raw
    assert _text(raw(b'"a\\u00e9"')) == "aé"
    assert _text(raw(b'[ 1, {"b" : 2} ]')) == '[1,{"b":2}]'
    assert _text(raw(b'{ "x": [ ] }')) == '{"x":[]}'
    for other in (b"1", b"true", b"null", b"-2.5"):
        assert _text(raw(other)) is None
    assert _text(raw()) is None  # the field is missing


def test_num_is_a_number_within_64_bits_or_none():
    from sweepbench.store.call_facts import _num, _Unsure

    assert _num(True) == 1 and type(_num(True)) is int
    assert _num(False) == 0 and type(_num(False)) is int
    assert _num(INT64 - 1) == INT64 - 1
    assert _num(-INT64) == -INT64
    assert _num(0) == 0
    assert _num(-0.5) == -0.5
    assert _num(2.0 ** 63 - 1024) == 2.0 ** 63 - 1024  # the last float below 2**63
    assert _num(-(2.0 ** 63 - 1024)) == -(2.0 ** 63 - 1024)
    for unsure in (INT64, -INT64 - 1, 2.0 ** 63, -(2.0 ** 63), float("inf"), float("nan"),
                   float("-inf")):
        with pytest.raises(_Unsure):
            _num(unsure)
    for not_a_number in ("1", None, [1], {"a": 1}):
        assert _num(not_a_number) is None


def test_tokens_are_whole_and_not_negative():
    from sweepbench.store.call_facts import _tokens, _tokens_of

    assert _tokens(7) == 7 and _tokens(7.9) == 7 and _tokens(-3) == 0 and _tokens(-0.5) == 0
    assert _tokens(True) == 1 and _tokens(None) == 0 and _tokens("9") == 0
    assert _tokens(0) == 0 and _tokens(1) == 1
    assert _tokens_of(5) == 5 and _tokens_of(float("nan")) == 0 and _tokens_of(-1) == 0
    assert _tokens_of(2.5) == 2 and _tokens_of(None) == 0 and _tokens_of(1) == 1


def test_text_of_and_num_of_read_values_as_the_encoder_writes_them():
    from sweepbench.store.call_facts import _num_of, _text_of
    from sweepbench.wire import Usage

    assert _text_of(None) is None
    assert _text_of("é") == "é"
    for plain in (1, 2.5, True, False):
        assert _text_of(plain) is None
    assert _text_of([1, "a", None]) == '[1,"a",null]'
    assert _text_of({"k": [True]}) == '{"k":[true]}'
    assert _text_of(Usage(1, 2)) == msgspec.json.encode(Usage(1, 2)).decode()
    assert _text_of(b"ab") == "YWI="  # bytes: the encoder's base64 string
    assert _num_of(float("nan")) is None and _num_of(float("inf")) is None
    assert _num_of(2.5) == 2.5 and _num_of(3) == 3 and _num_of(True) == 1
    assert _num_of("3") is None

    class Level(enum.IntEnum):
        LOW = 1

    assert _text_of(Level.LOW) is None  # written as the number 1: no text


LIVE = {"role": "agent", "request_hash": "h", "usage": None, "latency_s": 0.25, "attempts": 2,
        "statuses": [429, 200], "failures": [], "stalls": None, "replica": None}


def _live(**kw) -> dict:
    from sweepbench.wire import Usage

    return {**LIVE, "usage": Usage(900, 12, 640), **kw}


def test_source_of_a_live_call_and_of_each_departure_from_one():
    from sweepbench.store.call_facts import source
    from sweepbench.wire import Usage

    assert source(_live()) == ("agent", 900, 12, 640, 0.25, 2, "[429,200]", None, None, None)
    assert source(_live(statuses=None))[6] is None
    assert source(_live(usage=Usage(10, 3, 99))) == ("agent", 10, 3, 10, 0.25, 2, "[429,200]",
                                                      None, None, None)  # cached <= prompt
    # the slower reading gives the same where the fast one does not apply
    assert source(_live(usage=Usage(-4, 2, 1))) == ("agent", 0, 2, 0, 0.25, 2, "[429,200]",
                                                     None, None, None)
    assert source(_live(usage=Usage(INT64, 2, 1))) is None  # beyond 64 bits: the trigger's
    assert source(_live(usage=Usage(INT64 - 1, INT64 - 1, INT64 - 1)))[1:4] == (
        INT64 - 1, INT64 - 1, INT64 - 1)
    assert source(_live(latency_s=float("nan")))[4] is None
    assert source(_live(latency_s=1)) == ("agent", 900, 12, 640, 1.0, 2, "[429,200]",
                                          None, None, None)
    assert type(source(_live(latency_s=1))[4]) is float
    assert source(_live(attempts=INT64 - 1))[5] == INT64 - 1
    assert source(_live(attempts=-INT64))[5] == -INT64
    assert source(_live(attempts=INT64)) is None
    assert source(_live(attempts=2.9))[5] == 2 and type(source(_live(attempts=True))[5]) is int
    assert source(_live(failures=[{"error": "x"}]))[9] == '[{"error":"x"}]'
    assert source(_live(failures=None))[9] is None
    assert source(_live(stalls={"hung": 1}, replica="http://r/v1"))[7:9] == ('{"hung":1}',
                                                                            "http://r/v1")
    assert source(_live(role=["a"]))[0] == '["a"]'
    assert source(_live(role=3))[0] is None
    assert source(_live(statuses="x"))[6] == "x"
    assert source(_live(usage=None))[1:4] == (0, 0, 0)
    assert source(_live(usage={"prompt_tokens": 1})) is None  # not a Usage: decoded instead
    assert source({**_live(), 3: "x"}) is None  # a key that is not a str
    assert source({**_live(), "extra": 1}) == source(_live())  # other str keys: read the same
    assert source(_live(latency_s=float("inf"), attempts=None))[4:6] == (None, None)
    assert source(_live(latency_s=2.0 ** 63))[4] == 2.0 ** 63  # a REAL to SQLite too
    assert source(_live(usage=Usage(1, INT64, 0))) is None
    assert source(_live(usage=Usage(1, 0, INT64))) is None
    assert source(_live(replica="http://r/v1"))[7:] == (None, "http://r/v1", None)
    assert source(_live(failures={}))[9] == "{}" and source(_live(failures=""))[9] == ""
    assert source(_live(failures="[]"))[9] is None  # as the trigger's '[]' text
    # zero counts and the lowest attempts are a live call's too: read the fast way, which
    # takes a latency the general reading would leave to the trigger
    huge = 2.0 ** 63
    assert source(_live(usage=Usage(0, 5, 0), latency_s=huge)) == (
        "agent", 0, 5, 0, huge, 2, "[429,200]", None, None, None)
    assert source(_live(usage=Usage(5, 0, 3), latency_s=huge))[1:5] == (5, 0, 3, huge)
    assert source(_live(usage=Usage(5, 1, 0), latency_s=huge))[1:5] == (5, 1, 0, huge)
    assert source(_live(attempts=-INT64, latency_s=huge))[4:6] == (huge, -INT64)

    class Key(enum.StrEnum):
        role = "role"

    every = {**{k: None for k in JOURNAL_KEYS}, **_live()}
    every[Key.role] = every.pop("role")  # a key equal to a str, as msgspec writes it
    assert every.keys() == JOURNAL_KEYS and source(every) == source(_live())
    assert source(_live(attempts=2.0 ** 63)) is None  # an INTEGER SQLite would clamp


def test_source_fast_and_slow_readings_agree():
    """Each departure from a live call's shape takes the slower reading, which must give what
    the fast one would (the writer's facts are the trigger's either way)."""
    from sweepbench.store.call_facts import CallFacts, source
    from sweepbench.wire import Usage

    for payload in (_live(), _live(statuses=None), _live(usage=Usage(3, 4, 5)),
                    _live(latency_s=0.0), _live(attempts=0), _live(statuses=[])):
        assert source(payload) == CallFacts.decoded(msgspec.json.encode(payload)), payload


def _facts_db() -> sqlite3.Connection:
    from sweepbench.store.schema import FACT_TABLES

    db = sqlite3.connect(":memory:", isolation_level=None)
    for stmt in filter(str.strip, FACT_TABLES.split(";")):
        db.execute(stmt)
    return db


def test_call_facts_rows_number_their_texts_once_and_insert_in_order():
    from sweepbench.store.call_facts import CallFacts, source

    db = _facts_db()
    facts = CallFacts(db)
    plain = facts.row(1, "", 0, 10.5, "run", "ep-a", source(_live()), b"")
    assert plain == (1, "", 0, 1, 2, 10.5, 3, 900, 12, 640, 0.25, 2, 4)
    again = facts.row(1, "", 1, 11.0, "run", "ep-a", source(_live()), b"")
    assert again[3:7] == (1, 2, 11.0, 3) and again[12] == 4
    assert db.execute("SELECT id, text FROM fact_texts ORDER BY id").fetchall() == [
        (1, "run"), (2, "ep-a"), (3, "agent"), (4, "[429,200]")]
    none = facts.row(2, "j", 0, 1.0, None, None, source(_live(statuses=None)), b"")
    assert none[3:5] == (None, None) and none[12] is None
    facts.insert([plain, again, none])
    assert db.execute("SELECT count(*) FROM call_facts WHERE valid = 1 AND stalls IS NULL "
                      "AND replica IS NULL AND failures IS NULL").fetchone()[0] == 3
    odd = facts.row(3, "", 0, 2.0, "run", "ep-a", source(_live(stalls={"hung": 1})), b"")
    assert odd[13:] == ('{"hung":1}', None, None)
    first = facts.row(3, "", 1, 2.0, "run", "ep-a", source(_live()), b"")
    dup = facts.row(3, "", 1, 3.0, "run", "ep-a", source(_live(replica="r")), b"")
    facts.insert([first, odd, dup])  # the first of two rows of one call stays
    rows = db.execute("SELECT ep, seq, ts, stalls, replica FROM call_facts WHERE ep = 3 "
                      "ORDER BY seq").fetchall()
    assert rows == [(3, 0, 2.0, '{"hung":1}', None), (3, 1, 2.0, None, None)]
    # the odd rows' statement is used once: the next plain run binds three values fewer
    facts.insert([facts.row(4, "", 0, 5.0, "run", "ep-a", source(_live()), b"")])
    assert db.execute("SELECT count(*) FROM call_facts").fetchone()[0] == 6
    db.close()


def test_call_facts_decode_a_payload_given_as_bytes_or_leave_it_to_the_trigger():
    from sweepbench.store.call_facts import CallFacts

    db = _facts_db()
    facts = CallFacts(db)
    data = msgspec.json.encode(_live())
    assert facts.row(1, "", 0, 1.0, "r", None, None, data) == (
        1, "", 0, 1, None, 1.0, 2, 900, 12, 640, 0.25, 2, 3)
    assert facts.row(1, "", 1, 1.0, "r", None, None, data.decode()) is not None
    assert facts.row(1, "", 2, 1.0, "r", None, None, b"[1, 2]") is None
    assert facts.row(1, "", 3, 1.0, "r", None, None, b'{"usage": [1]}') is None
    assert facts.row(1, "", 4, 1.0, "r", None, None, b"\xff") is None
    assert facts.row(1, "", 5, 1.0, "r", None, None, b'{"attempts": 9223372036854775808}'
                     ) is None
    assert CallFacts.decoded(b'{"failures": []}')[9] is None
    assert CallFacts.decoded(b'{"failures": [1]}')[9] == "[1]"
    assert CallFacts.decoded(b'{"usage": null, "latency_s": 2}') == (
        None, 0, 0, 0, 2.0, None, None, None, None, None)
    assert type(CallFacts.decoded(b'{"latency_s": 2}')[4]) is float
    assert CallFacts.decoded(b'{"attempts": 2.5}')[5] == 2
    assert CallFacts.decoded(b'{"usage": {"prompt_tokens": 5, "cached_prompt_tokens": 9, '
                             b'"completion_tokens": 1}}')[1:4] == (5, 1, 5)
    db.close()
