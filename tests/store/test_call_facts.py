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
