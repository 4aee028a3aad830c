"""The writer's call facts (store.call_facts) are the trigger's (store.schema), row for row:
on odd payloads written through the store, the facts SQL computes again from the same rows
(an update of each payload fires the trigger) equal what the writer inserted."""

from __future__ import annotations

import sqlite3

import msgspec

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
