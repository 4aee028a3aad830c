"""A store written by schema 1 is migrated honestly: kept for reports, never reused. A store
written by schema 2 has its journal renumbered, and goes on as if nothing happened."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import msgspec
import pytest

from sweepbench.config import load_config
from sweepbench.errors import StoreError
from sweepbench.ids import EpisodeKey, judge_journal
from sweepbench.store.merge import merge_stores
from sweepbench.store.migrate import SCHEMA2_EVENTS
from sweepbench.results.report import build_report
from sweepbench.store.runstore import RunStore
from sweepbench.store.schema import SCHEMA_VERSION
from sweepbench.runner.sweep import Sweep
from sweepbench.wire import EpisodeRecord
from tests.support import interrupt_and_continue

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "hostile_cases"))
from _stores import as_schema_4

# the tables of schema 1, as sweepbench wrote them
V1 = """
CREATE TABLE runs (run_id TEXT PRIMARY KEY, created_at REAL NOT NULL, finished_at REAL,
    status TEXT NOT NULL, config TEXT NOT NULL, config_hash TEXT NOT NULL);
CREATE TABLE episodes (run_id TEXT NOT NULL, episode_id TEXT NOT NULL, model TEXT NOT NULL,
    benchmark TEXT NOT NULL, domain TEXT NOT NULL, task_id TEXT NOT NULL, lang TEXT,
    trial INTEGER NOT NULL, status TEXT NOT NULL CHECK (status IN ('running', 'done', 'error')),
    termination TEXT, record BLOB, started_at REAL NOT NULL, finished_at REAL,
    PRIMARY KEY (run_id, episode_id));
CREATE TABLE events (run_id TEXT NOT NULL, episode_id TEXT NOT NULL, seq INTEGER NOT NULL,
    kind TEXT NOT NULL, payload TEXT NOT NULL, ts REAL NOT NULL,
    PRIMARY KEY (run_id, episode_id, seq));
CREATE TABLE judgments (run_id TEXT NOT NULL, episode_id TEXT NOT NULL, judge TEXT NOT NULL,
    method TEXT NOT NULL, passed INTEGER CHECK (passed IN (0, 1)), score REAL,
    details TEXT NOT NULL, created_at REAL NOT NULL,
    PRIMARY KEY (run_id, episode_id, judge, method));
PRAGMA application_id = 1398227536;
PRAGMA user_version = 1;
"""
CONFIG = {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle"],
          "user_model": "scripted/user", "user_mode": "default", "trials": 1}


def v1_store(path) -> None:
    db = sqlite3.connect(path)
    db.executescript(V1)
    t = 1.0
    for run, passed in (("run-a", False), ("run-b", True)):  # two sweeps, one episode id
        db.execute("INSERT INTO runs VALUES (?, ?, ?, 'done', ?, 'h')",
                   (run, t, t + 1, json.dumps(CONFIG)))
        eid = "scripted/oracle|vitabench:delivery:en:SB-D-001|0"
        record = EpisodeRecord(run_id=run, model="scripted/oracle", benchmark="vitabench",
                               domain="delivery", task_id="SB-D-001", trial=0,
                               termination="user_stop")
        db.execute("INSERT INTO episodes VALUES (?, ?, 'scripted/oracle', 'vitabench', "
                   "'delivery', 'SB-D-001', 'en', 0, 'done', 'user_stop', ?, ?, ?)",
                   (run, eid, msgspec.json.encode(record), t, t + 1))
        for seq, role in enumerate(("user", "agent")):
            db.execute("INSERT INTO events VALUES (?, ?, ?, 'model_call', ?, ?)",
                       (run, eid, seq, json.dumps({"role": role, "usage": {"prompt_tokens": 10}}),
                        t))
        db.execute("INSERT INTO events VALUES (?, ?, 0, 'model_call', ?, ?)",
                   (run, f"judge|scripted/judge|sliding|{eid}",
                    json.dumps({"role": "judge", "usage": {"completion_tokens": 5}}), t))
        for judge, method in (("state", "state"), ("scripted/judge", "sliding")):
            db.execute("INSERT INTO judgments VALUES (?, ?, ?, ?, ?, 1.0, '{}', ?)",
                       (run, eid, judge, method, int(passed), t))
        t += 10
    db.commit()
    db.close()


def test_a_schema_1_store_is_migrated_kept_and_never_reused(tmp_path):
    path = tmp_path / "old.sqlite"
    v1_store(path)
    with RunStore(path, create=False) as store:
        assert store.migrated and "from schema 1 to" in store.migrated
        assert "never reused" in store.migrated
        assert [r["run_id"] for r in store.runs()] == ["run-a", "run-b"]
        assert all(r["prices"] == {} for r in store.runs())
        rows = store.episode_rows()
        assert len(rows) == 2 and all(EpisodeKey(r["episode_key"]).is_legacy for r in rows)
        assert {r["label"] for r in rows} == {"scripted/oracle|vitabench:delivery:en:SB-D-001|0"}
        calls = store.model_calls()
        assert sorted((c.journal, c.endpoint) for c in calls) == sorted(
            [("", "scripted/user"), ("", "scripted/oracle"),
             ("judge|scripted/judge|sliding", "scripted/judge")] * 2)
        assert len(store.judgments()) == 4
        report = build_report(store, benchmarks={"vitabench": {"headline": "sliding"}})
        # one (model, task, trial): the newer run's counts, the older is superseded
        assert report["superseded"] == 1 and report["models"]["scripted/oracle"]["avg"] == 1.0
        assert report["cost"]["unpriced_calls"] == 3  # schema 1 kept no prices
        # a sweep of the same config does not reuse them: no identity was recorded
        todo, stored = Sweep(load_config(None, CONFIG), store).work()
        assert stored == [] and len(todo) == 7
    assert (tmp_path / "old.sqlite.schema1.bak").is_file()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with RunStore(path, create=False) as again:
        assert again.migrated is None  # once


def test_merge_migrates_its_inputs(tmp_path):
    v1_store(tmp_path / "a.sqlite")
    counts = merge_stores(tmp_path / "out.sqlite", [tmp_path / "a.sqlite"])
    assert counts["episodes"] == 2 and counts["runs"] == 2 and counts["judgments"] == 4


@pytest.mark.parametrize("version", [1, 2])
def test_a_store_that_cannot_be_migrated_is_refused_with_what_to_do(tmp_path, version):
    (v1_store if version == 1 else v2_store)(tmp_path / "old.sqlite")
    (tmp_path / f"old.sqlite.schema{version}.bak").mkdir()  # no room for the backup
    with pytest.raises(StoreError, match=f"schema version {version}.*no backup.*copy the store"):
        RunStore(tmp_path / "old.sqlite", create=False)
    with sqlite3.connect(tmp_path / "old.sqlite") as db:  # left as it was
        assert db.execute("PRAGMA user_version").fetchone()[0] == version


# ---- schema 2: one events table keyed by the episode key ---------------------------------

def to_schema_2(path) -> None:
    """Rewrite a store of this schema as schema 2 had it: its other tables are the same, its
    events one table (written in the order of their keys' numbers)."""
    as_schema_4(path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    rows = db.execute("SELECT e.* FROM events e JOIN event_keys k USING (episode_key) "
                      "ORDER BY k.ep, e.journal, e.seq").fetchall()
    for stmt in ("DROP VIEW events", "DROP TABLE event_rows", "DROP TABLE event_keys",
                 "DROP TABLE store_identity", SCHEMA2_EVENTS, "PRAGMA user_version = 2"):
        db.execute(stmt)
    db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.execute("COMMIT")
    db.close()


# sorted: the orphan, A, B; written first: B, A, the orphan
KEY_A, KEY_B, ORPHAN = "ep-" + "a" * 32, "ep-" + "b" * 32, "ep-" + "0" * 32
JUDGE = judge_journal("scripted/judge", "sliding")


def _meta(key: str, task: str) -> dict:
    return {"key": key, "label": f"scripted/oracle|vitabench:delivery:en:{task}|0",
            "model": "scripted/oracle", "benchmark": "vitabench", "domain": "delivery",
            "task_id": task, "lang": "en", "trial": 0}


def v2_store(path) -> None:
    """Two started episodes with interleaved journals, a judge's among them, and the judge
    journal of a key with no episode (what a merge copies)."""
    with RunStore(path) as store:
        store.begin_run("r", CONFIG)
        store.episode_started(_meta(KEY_A, "SB-D-001"), run_id="r")
        store.episode_started(_meta(KEY_B, "SB-D-002"), run_id="r")
    to_schema_2(path)
    rows = [(KEY_B, "", 0), (KEY_A, "", 0), (KEY_B, "", 1), (ORPHAN, JUDGE, 0), (KEY_A, JUDGE, 0),
            (KEY_A, "", 1), (ORPHAN, JUDGE, 1), (KEY_B, "", 2)]
    with sqlite3.connect(path) as db:
        db.executemany("INSERT INTO events VALUES (?, ?, ?, 'model_call', ?, ?, 'r', 'x')",
                       [(k, j, s, json.dumps({"n": i}), float(i)) for i, (k, j, s) in
                        enumerate(rows)])
    db.close()


def all_events(path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT * FROM events ORDER BY episode_key, journal, seq").fetchall()
    db.close()
    return rows


def test_a_schema_2_store_is_renumbered_in_first_event_order_and_keeps_every_event(tmp_path):
    path = tmp_path / "v2.sqlite"
    v2_store(path)
    before = all_events(path)
    with RunStore(path, create=False) as store:
        assert store.migrated and f"from schema 2 to {SCHEMA_VERSION}" in store.migrated
        assert "3 episode keys (8 events)" in store.migrated
        assert all_events(path) == before
        assert [e["payload"]["n"] for e in store.events(KEY_B)] == [0, 2, 7]
        assert store.journals(KEY_A) == ["", JUDGE] and store.journals(ORPHAN) == [JUDGE]
        assert len(store.model_calls()) == 8
        store.event(KEY_A, 2, "model_call", {"n": 8})  # writes go on, new keys too
        store.event("ep-new", 0, "model_call", {"n": 9})
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("SELECT type FROM sqlite_master WHERE name = 'events'").fetchall() == [
            ("view",)]
        assert db.execute("SELECT ep, episode_key FROM event_keys ORDER BY ep").fetchall() == [
            (1, KEY_B), (2, KEY_A), (3, ORPHAN), (4, "ep-new")]
    db.close()
    assert len(all_events(path)) == 10
    backup = tmp_path / "v2.sqlite.schema2.bak"
    assert all_events(backup) == before
    with sqlite3.connect(backup) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    db.close()
    with RunStore(path, create=False) as again:
        assert again.migrated is None  # once


def test_merge_of_a_schema_2_and_a_schema_3_store(tmp_path):
    v2_store(tmp_path / "old.sqlite")  # A and B running, the orphan's journal
    with RunStore(tmp_path / "new.sqlite") as new:  # B done, with a journal of its own; C
        new.begin_run("n", CONFIG)
        for key, task in ((KEY_B, "SB-D-002"), ("ep-c", "SB-D-003")):
            new.episode_started(_meta(key, task), run_id="n")
            new.event(key, 0, "model_call", {"n": 100}, run_id="n")
        new.episode_finished(KEY_B, EpisodeRecord(
            run_id="n", model="scripted/oracle", benchmark="vitabench", domain="delivery",
            task_id="SB-D-002", trial=0, termination="user_stop"))
    out = tmp_path / "out.sqlite"
    # the old store first: its B lands, then the new store's finished B replaces it whole
    counts = merge_stores(out, [tmp_path / "old.sqlite", tmp_path / "new.sqlite"])
    old, new = all_events(tmp_path / "old.sqlite"), all_events(tmp_path / "new.sqlite")
    expected = sorted([r for r in old if r[0] != KEY_B] + new)
    assert all_events(out) == expected and counts["events"] == len(expected) == 7
    assert counts["episodes"] == 3
    with RunStore(out, create=False) as store:
        assert store.episode_status() == {KEY_A: "running", KEY_B: "done", "ep-c": "running"}
        assert store.journals(ORPHAN) == [JUDGE]
    with sqlite3.connect(out) as db:  # numbered in the output; the inputs' numbers untouched
        assert db.execute("SELECT episode_key FROM event_keys ORDER BY ep").fetchall() == [
            (KEY_B,), (KEY_A,), (ORPHAN,), ("ep-c",)]
    db.close()
    with sqlite3.connect(tmp_path / "new.sqlite") as db:
        assert db.execute("SELECT count(*) FROM event_keys").fetchone()[0] == 2
    db.close()


async def test_an_interrupted_sweep_continues_from_its_migrated_journal(tmp_path, interrupt):
    migrated = await interrupt_and_continue(tmp_path, interrupt, to_schema_2)
    assert migrated and "from schema 2" in migrated


def test_a_schema_1_stores_rows_by_hand(tmp_path):
    """Each migrated row as schema 1 had it: the legacy key and identity, the user model and
    mode from the run's config when they are text, each call's endpoint by its role."""
    path = tmp_path / "old.sqlite"
    v1_store(path)
    db = sqlite3.connect(path)
    eid = "scripted/oracle|vitabench:delivery:en:SB-D-001|0"
    # a run whose config is not an object, and one whose user fields are not text
    for run, config in (("run-c", "[1, 2]"), ("run-d", json.dumps({"user_model": 5,
                                                                    "user_mode": None}))):
        db.execute("INSERT INTO runs VALUES (?, 1.0, 2.0, 'done', ?, 'h')", (run, config))
        db.execute("INSERT INTO episodes VALUES (?, ?, 'scripted/oracle', 'vitabench', "
                   "'delivery', 'SB-D-001', 'en', 0, 'done', 'user_stop', NULL, 1.0, 2.0)",
                   (run, eid))
        db.execute("INSERT INTO events VALUES (?, ?, 0, 'model_call', ?, 1.0)",
                   (run, eid, json.dumps({"role": "user"})))
    # a call of a run schema 1 never recorded, and one of neither role
    db.execute("INSERT INTO events VALUES ('run-x', ?, 0, 'model_call', ?, 1.0)",
               (eid, json.dumps({"role": "user"})))
    db.execute("INSERT INTO events VALUES ('run-a', ?, 5, 'model_call', ?, 1.0)",
               (eid, json.dumps({"role": "tool"})))
    db.commit()
    db.close()
    with RunStore(path, create=False) as store:
        assert "4 episodes of 4 runs" in store.migrated
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT run_id, episode_key, label, user_model, user_mode, identity "
                          "FROM episodes ORDER BY run_id").fetchall()
        calls = {(r, k, s): e for r, k, s, e in db.execute(
            "SELECT run_id, episode_key, seq, endpoint FROM events WHERE kind = 'model_call' "
            "AND journal = ''")}
        info = db.execute("SELECT DISTINCT info FROM runs").fetchall()
        judge_keys = db.execute("SELECT DISTINCT judge_key FROM judgments").fetchall()
    key = {r: str(EpisodeKey.legacy("schema1", r, eid)) for r in ("run-a", "run-b", "run-c",
                                                                  "run-d", "run-x")}
    user = {"run-a": ("scripted/user", "default"), "run-b": ("scripted/user", "default"),
            "run-c": (None, None), "run-d": (None, None)}
    assert rows == [(r, key[r], eid, *user[r], json.dumps(
        {"legacy": {"schema": 1, "run_id": r, "episode_id": eid}}, separators=(",", ":")))
        for r in ("run-a", "run-b", "run-c", "run-d")]
    assert calls == {("run-a", key["run-a"], 0): "scripted/user",
                     ("run-a", key["run-a"], 1): "scripted/oracle",
                     ("run-a", key["run-a"], 5): None,
                     ("run-b", key["run-b"], 0): "scripted/user",
                     ("run-b", key["run-b"], 1): "scripted/oracle",
                     ("run-c", key["run-c"], 0): None,
                     ("run-d", key["run-d"], 0): "5",  # the config's user model, as it was
                     ("run-x", key["run-x"], 0): None}
    assert info == [('{"migrated_from_schema": 1}',)] and judge_keys == [("",)]


def test_advice_by_the_cause_of_a_failed_backup_or_migration(tmp_path, monkeypatch):
    import errno
    import shutil
    from collections import namedtuple

    from sweepbench.store import migrate as mg

    store = tmp_path / "s.sqlite"
    store.write_bytes(b"x" * 50_000)  # 0.05 MB: shown as 0.1 (in MB of 10^6 bytes)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage",
                        lambda p: usage(0, 0, 50_000 if p == tmp_path else 1 << 40))
    full = ("the backup needs about 0.1 MB beside the store and its disk has 0.1 MB free: free "
            "some space there and run the command again, or copy the store to a disk with "
            "room and open the copy")
    assert mg._advice(OSError(errno.ENOSPC, "No space left on device"), store,
                      "the backup") == full
    assert mg._advice(sqlite3.OperationalError("database or disk is full"), store,
                      "the migration") == full.replace("the backup", "the migration")
    assert mg._advice(OSError(errno.ENOSPC, "no room"), tmp_path / "gone.sqlite", "x") == (
        "free some space on its disk and run the command again")
    other = ("copy the store to a writable directory and open the copy, or use the sweepbench "
             "that wrote it")
    assert mg._advice(OSError(errno.EACCES, "Permission denied"), store, "x") == other
    assert mg._advice(sqlite3.OperationalError("attempt to write a readonly database"), store,
                      "x") == other
    hint = mg._advice(sqlite3.OperationalError("no such function: sb_json"), store, "x")
    assert "sweepbench.store.codec.register(conn)" in hint


def test_a_migration_fills_the_episode_facts_in_batches_and_says_how_many(tmp_path):
    from sweepbench.store import migrate as mg
    from sweepbench.store.codec import register

    path = tmp_path / "old.sqlite"
    v1_store(path)
    with RunStore(path, create=False) as store:
        assert store.migrated.endswith(
            "; the facts reports sum (6 model calls, 2 finished episodes) filled in once")
    db = sqlite3.connect(path, isolation_level=None)
    register(db)
    keys = [r[0] for r in db.execute("SELECT episode_key FROM episode_facts ORDER BY 1")]
    assert len(keys) == 2
    db.execute("DELETE FROM episode_facts")
    assert mg._fill_episode_facts(db, batch=1) == 2  # one episode a batch, both found
    assert [r[0] for r in db.execute("SELECT episode_key FROM episode_facts ORDER BY 1")] == keys
    db.close()


def test_a_schema_4_store_is_migrated_and_says_what_changed(tmp_path):
    path = tmp_path / "s.sqlite"
    RunStore(path).close()
    as_schema_4(path)
    with RunStore(path, create=False) as store:
        assert store.migrated.startswith(
            f"migrated run store {path} from schema 4 to {SCHEMA_VERSION} (backup: "
            "s.sqlite.schema4.bak): each conversation is stored once, compressed; its 0 "
            "journal rows and 0 records compressed")
