"""A store written by schema 1 is migrated honestly: kept for reports, never reused."""

from __future__ import annotations

import json
import sqlite3

import msgspec
import pytest

from sweepbench.config import load_config
from sweepbench.errors import StoreError
from sweepbench.ids import EpisodeKey
from sweepbench.results.merge import merge_stores
from sweepbench.results.report import build_report
from sweepbench.results.store import SCHEMA_VERSION, RunStore
from sweepbench.runner.sweep import Sweep
from sweepbench.wire import EpisodeRecord

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


def test_a_store_that_cannot_be_migrated_is_refused_with_what_to_do(tmp_path):
    v1_store(tmp_path / "old.sqlite")
    (tmp_path / "old.sqlite.schema1.bak").mkdir()  # no room for the backup
    with pytest.raises(StoreError, match="schema version 1.*no backup.*copy the store"):
        RunStore(tmp_path / "old.sqlite", create=False)
    with sqlite3.connect(tmp_path / "old.sqlite") as db:  # left as it was
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
