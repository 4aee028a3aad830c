"""The store's format: the tables a new store gets, the journal's view, the config hash."""

from __future__ import annotations

import sqlite3

import pytest

from sweepbench.store.codec import register, unregistered
from sweepbench.store.runstore import RunStore
from sweepbench.store.schema import SCHEMA_VERSION, canonical_json, config_hash


def test_config_hash_is_canonical():
    assert config_hash({"a": 1, "b": {"x": 1, "y": 2}}) == config_hash({"b": {"y": 2, "x": 1},
                                                                        "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2})


def test_canonical_json_is_compact_with_sorted_keys_and_refuses_what_json_cannot_hold():
    assert canonical_json({"b": 1, "a": [2, {"d": 3, "c": None}]}) == \
        b'{"a":[2,{"c":null,"d":3}],"b":1}'
    with pytest.raises(TypeError, match="^not JSON-serialisable: "):
        canonical_json({"x": object()})


def test_wal_mode_and_schema_version(tmp_path):
    path = tmp_path / "s.db"
    RunStore(path).close()
    with sqlite3.connect(path) as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        views = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='view'")}
    assert {"runs", "run_episodes", "episodes", "event_keys", "event_rows", "judgments"} <= tables
    assert views == {"events"}


def test_the_events_view_takes_inserts_and_deletes_like_a_table(tmp_path):
    """What merges, migrations and tests write through the view: a key new to the store is
    numbered; a key keeps its number whatever is inserted or deleted."""
    path = tmp_path / "s.db"
    with RunStore(path) as store:
        store.event("e1", 0, "message", {"n": 1})
        store.event("e2", 0, "message", {"n": 1})
        store.flush_sync()
        db = sqlite3.connect(path, isolation_level=None)
        register(db)  # the journal's triggers decode payloads with sb_json
        insert = "INSERT {} INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        again = ("e1", "", 0, "message", '{"n": 2}', 1.0, None, None)
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            db.execute(insert.format(""), again)
        db.execute(insert.format("OR IGNORE"), again)  # the statement's OR wins the trigger's
        assert store.events("e1")[0]["payload"] == {"n": 1}
        db.execute(insert.format("OR REPLACE"), again)
        assert store.events("e1")[0]["payload"] == {"n": 2}
        db.execute(insert.format(""), ("e3", "j", 0, "message", "{}", 1.0, None, None))
        numbers = [(1, "e1"), (2, "e2"), (3, "e3")]
        assert db.execute("SELECT * FROM event_keys ORDER BY ep").fetchall() == numbers
        db.execute("DELETE FROM events WHERE episode_key = 'e1'")
        assert store.events("e1") == [] and len(store.events("e2")) == 1
        store.event("e1", 1, "message", {"n": 3})  # this store numbered e1 already
        store.flush_sync()
        assert [e["seq"] for e in store.events("e1")] == [1]
        assert db.execute("SELECT * FROM event_keys ORDER BY ep").fetchall() == numbers
        db.close()


def test_reads_of_a_journal_go_through_the_keys(tmp_path):
    path = tmp_path / "s.db"
    RunStore(path).close()
    with sqlite3.connect(path) as db:
        plan = [r[3] for r in db.execute(
            "EXPLAIN QUERY PLAN SELECT seq, kind, payload FROM events WHERE episode_key = ? "
            "AND journal = ? ORDER BY seq", ("e", ""))]
    db.close()
    assert len(plan) == 2 and "event_keys" in plan[0] and "(episode_key=?)" in plan[0]
    assert "event_rows" in plan[1] and "(ep=? AND journal=?)" in plan[1]


def test_the_journal_is_written_only_with_the_codecs_functions_and_says_so(tmp_path):
    """The call facts' trigger decodes a compressed payload with sb_json: a connection
    without it cannot write the journal at all (any kind of row), and the store says why."""
    path = tmp_path / "s.db"
    RunStore(path).close()
    db = sqlite3.connect(path, isolation_level=None)
    row = ("e1", "", 0, "message", '{"n": 1}', 1.0, None, None)
    with pytest.raises(sqlite3.OperationalError, match="no such function: sb_json") as info:
        db.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
    assert "sweepbench.store.codec.register(conn)" in unregistered(info.value)
    assert unregistered(sqlite3.OperationalError("no such table: x")) is None
    register(db)
    db.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
    db.close()


def _facts(db):
    """call_facts with each coded text read back, in row order."""
    return db.execute(
        "SELECT f.ep, f.journal, f.seq, f.valid, r.text, e.text, f.ts, ro.text, f.prompt, "
        "f.completion, f.cached, f.latency_s, f.attempts, s.text, f.stalls, f.replica, "
        "f.failures FROM call_facts f LEFT JOIN fact_texts r ON r.id = f.run_id "
        "LEFT JOIN fact_texts e ON e.id = f.endpoint LEFT JOIN fact_texts ro ON ro.id = f.role "
        "LEFT JOIN fact_texts s ON s.id = f.statuses ORDER BY f.ep, f.journal, f.seq").fetchall()


def test_the_migrations_backfill_writes_the_facts_the_trigger_writes(tmp_path):
    """fill_call_facts (a migration's backfill over every stored call) and the trigger (one
    new row) read a payload alike: the trigger's rows are the oracle, checked by hand too."""
    from sweepbench.store.schema import fill_call_facts

    path = tmp_path / "s.db"
    RunStore(path).close()
    db = sqlite3.connect(path, isolation_level=None)
    register(db)
    full = ('{"role": "agent", "usage": {"prompt_tokens": 100, "completion_tokens": 7, '
            '"cached_prompt_tokens": 40}, "latency_s": 1.5, "attempts": 2, '
            '"statuses": [500, 200], "stalls": {"hung": 1}, "replica": "http://r2/v1", '
            '"failures": ["HTTP 500"]}')
    odd = ('{"role": 3, "usage": {"prompt_tokens": -5, "completion_tokens": "7", '
           '"cached_prompt_tokens": 90}, "latency_s": "slow", "attempts": 1.5, '
           '"statuses": "x", "failures": []}')
    rows = [("e1", "", 0, "model_call", full, 10.0, "run-1", "ep-a"),
            ("e1", "", 1, "message", '{"n": 1}', 11.0, "run-1", None),
            ("e1", "u", 0, "model_call", odd, 12.0, "run-1", "ep-b"),
            ("e2", "", 0, "model_call", "not json", 13.0, None, None),
            ("e2", "", 1, "model_call",
             '{"usage": {"prompt_tokens": 30, "cached_prompt_tokens": 50}}', 14.0, "run-2", "ep-a"),
            ("e2", "", 2, "model_call",  # numbers of the other kind: cast to the column's
             '{"usage": {"prompt_tokens": 12.9}, "latency_s": 2, "attempts": 3.7}', 15.0, None,
             None)]
    for row in rows:
        db.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
    by_trigger = _facts(db)
    assert by_trigger == [
        (1, "", 0, 1, "run-1", "ep-a", 10.0, "agent", 100, 7, 40, 1.5, 2, "[500,200]",
         '{"hung":1}', "http://r2/v1", '["HTTP 500"]'),
        (1, "u", 0, 1, "run-1", "ep-b", 12.0, None, 0, 0, 0, None, 1, "x", None, None, None),
        (2, "", 0, 0, None, None, 13.0, None, 0, 0, 0, None, None, None, None, None, None),
        (2, "", 1, 1, "run-2", "ep-a", 14.0, None, 30, 0, 30, None, None, None, None, None,
         None),
        (2, "", 2, 1, None, None, 15.0, None, 12, 0, 0, 2.0, 3, None, None, None, None)]
    kinds = "SELECT typeof(prompt), typeof(latency_s), typeof(attempts) FROM call_facts"
    assert db.execute(kinds + " WHERE seq = 2 AND ep = 2").fetchone() == ("integer", "real",
                                                                           "integer")
    db.execute("DELETE FROM call_facts")
    db.execute("DELETE FROM fact_texts")
    fill_call_facts(db)
    assert _facts(db) == by_trigger
    assert db.execute(kinds + " WHERE seq = 2 AND ep = 2").fetchone() == ("integer", "real",
                                                                           "integer")
    fill_call_facts(db)  # again: the same rows, no second copy
    assert _facts(db) == by_trigger
    db.close()
