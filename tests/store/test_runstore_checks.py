"""The run store's checks at their edges (store/runstore.py): each option and argument it
refuses, with the message it says, and the edge values it takes; what opening does to a new,
an empty, a foreign and a newer file; the writer's episode numbers kept and let go."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sweepbench.errors import ConfigMismatchError, StoreError
from sweepbench.ids import EpisodeKey
from sweepbench.store import runstore
from sweepbench.store.runstore import EpisodeMeta, RunStore, legacy_key
from sweepbench.store.schema import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    VIEW_INDEXES,
    config_hash,
)
from sweepbench.wire import EpisodeRecord


def meta(key: str = "ep-1", **kw) -> EpisodeMeta:
    fields = {"key": key, "label": "m|vitabench:delivery:en:t1|0", "model": "m",
              "benchmark": "vitabench", "domain": "delivery", "task_id": "t1", "trial": 0,
              "lang": "en", **kw}
    return EpisodeMeta(**fields)


def rec(**kw) -> EpisodeRecord:
    fields = {"run_id": "r", "model": "m", "benchmark": "vitabench", "domain": "delivery",
              "task_id": "t1", "trial": 0, "lang": "en", "termination": "user_stop", **kw}
    return EpisodeRecord(**fields)


def raises(exc, message: str, fn, *a, **kw) -> None:
    with pytest.raises(exc) as e:
        fn(*a, **kw)
    assert str(e.value) == message


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {})
        yield s


# ---- options ------------------------------------------------------------------------------

@pytest.mark.parametrize(("kw", "message"), [
    ({"commit_every_s": -0.5}, "commit_every_s must be >= 0, got -0.5"),
    ({"commit_every_s": float("nan")}, "commit_every_s must be >= 0, got nan"),
    ({"synchronous": "fast"},
     "synchronous must be one of ('OFF', 'NORMAL', 'FULL', 'EXTRA'), got 'fast'"),
    ({"max_batch": 0}, "max_batch must be >= 1, got 0"),
    ({"checkpoint_every_s": 0.0},
     "checkpoint_every_s must be > 0 and wal_restart_pages >= 1, got 0.0 and 1000"),
    ({"checkpoint_every_s": float("nan")},
     "checkpoint_every_s must be > 0 and wal_restart_pages >= 1, got nan and 1000"),
    ({"wal_restart_pages": 0},
     "checkpoint_every_s must be > 0 and wal_restart_pages >= 1, got 5.0 and 0"),
])
def test_options_refused_with_what_they_must_be(tmp_path, kw, message):
    defaults = {"checkpoint_every_s": runstore.CHECKPOINT_EVERY_S,
                "wal_restart_pages": runstore.WAL_RESTART_PAGES}
    message = message.replace("5.0", repr(defaults["checkpoint_every_s"])).replace(
        "1000", repr(defaults["wal_restart_pages"]))
    raises(ValueError, message, RunStore, tmp_path / "s.sqlite", **kw)
    assert not (tmp_path / "s.sqlite").exists()


def test_the_smallest_options_it_takes_and_synchronous_in_any_case(tmp_path):
    with RunStore(tmp_path / "s.sqlite", commit_every_s=0, max_batch=1, wal_restart_pages=1,
                  synchronous="full") as s:
        assert s._wconn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        s.begin_run("r", {})
        s.event("ep-1", 0, "message", {"a": 1})
        s.event("ep-1", 1, "message", {"a": 2})
        s.flush_sync()
        assert s.writer_stats["transactions"] >= 3  # one row a transaction: max_batch 1
    with RunStore(tmp_path / "s.sqlite", synchronous="off") as s:
        assert s._wconn.execute("PRAGMA synchronous").fetchone()[0] == 0


def test_a_missing_store_a_folder_and_an_uncreatable_one(tmp_path):
    raises(StoreError, f"run store {tmp_path / 'no.sqlite'} does not exist", RunStore,
           tmp_path / "no.sqlite", create=False)
    raises(StoreError, f"run store {tmp_path} is not a file", RunStore, tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError) as e:
        RunStore(tmp_path / "file" / "sub" / "s.sqlite")
    assert str(e.value).startswith(f"cannot create run store {tmp_path / 'file' / 'sub' / 's.sqlite'}: ")
    with RunStore(tmp_path / "a" / "b" / "s.sqlite") as s:  # its folders are made
        assert s.runs() == []


# ---- opening ------------------------------------------------------------------------------

def version_and_id(path: Path) -> tuple[int, int]:
    c = sqlite3.connect(path)
    try:
        return (c.execute("PRAGMA user_version").fetchone()[0],
                c.execute("PRAGMA application_id").fetchone()[0])
    finally:
        c.close()


def test_a_new_store_is_made_with_its_indexes_and_an_empty_wal(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path) as s:
        assert (tmp_path / "s.sqlite-wal").stat().st_size == 0  # truncated once made
        names = {r[0] for r in s._wconn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {name for name, _ in VIEW_INDEXES} <= names
        assert s.migrated is None
    assert version_and_id(path) == (SCHEMA_VERSION, APPLICATION_ID)


def test_an_empty_sqlite_file_becomes_a_store(tmp_path):
    path = tmp_path / "s.sqlite"
    sqlite3.connect(path).close()
    path.touch()
    with RunStore(path, create=False) as s:
        s.begin_run("r", {})
    assert version_and_id(path) == (SCHEMA_VERSION, APPLICATION_ID)


def test_an_index_dropped_is_made_again_when_the_store_opens(tmp_path):
    path = tmp_path / "s.sqlite"
    RunStore(path).close()
    name = VIEW_INDEXES[0][0]
    c = sqlite3.connect(path)
    c.execute(f"DROP INDEX {name}")
    c.commit()
    c.close()
    with RunStore(path) as s:
        assert s._wconn.execute("SELECT count(*) FROM sqlite_master WHERE name = ?",
                                (name,)).fetchone()[0] == 1


@pytest.mark.parametrize("app_id", [12345, 0])
def test_another_sqlite_file_is_refused_untouched(tmp_path, app_id):
    path = tmp_path / "other.sqlite"
    c = sqlite3.connect(path)
    c.execute("CREATE TABLE t (x)")
    c.execute(f"PRAGMA application_id = {app_id}")
    c.commit()
    c.close()
    raises(StoreError, f"{path} is an SQLite file but not a sweepbench run store", RunStore,
           path)
    assert version_and_id(path) == (0, app_id)


def test_a_store_of_an_application_id_but_no_tables_is_made(tmp_path):
    path = tmp_path / "s.sqlite"
    c = sqlite3.connect(path)
    c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    c.close()
    RunStore(path).close()
    assert version_and_id(path) == (SCHEMA_VERSION, APPLICATION_ID)


def test_a_newer_store_is_refused_with_the_versions(tmp_path):
    path = tmp_path / "s.sqlite"
    RunStore(path).close()
    c = sqlite3.connect(path)
    c.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    c.close()
    raises(StoreError, f"run store {path} has schema version {SCHEMA_VERSION + 1}; this "
           f"sweepbench reads version {SCHEMA_VERSION} (upgrade sweepbench)", RunStore, path)


def test_a_store_of_this_version_reopens_without_a_migration(tmp_path):
    path = tmp_path / "s.sqlite"
    RunStore(path).close()
    with RunStore(path, create=False) as s:
        assert s.migrated is None


# ---- the write methods' arguments ---------------------------------------------------------

@pytest.mark.parametrize(("args", "kw", "exc", "message"), [
    (("", 0, "message", {}), {}, TypeError, "episode_key must be a non-empty str, got ''"),
    ((5, 0, "message", {}), {}, TypeError, "episode_key must be a non-empty str, got 5"),
    (("e", True, "message", {}), {}, TypeError, "seq must be an int >= 0, got True"),
    (("e", -1, "message", {}), {}, TypeError, "seq must be an int >= 0, got -1"),
    (("e", "1", "message", {}), {}, TypeError, "seq must be an int >= 0, got '1'"),
    (("e", 0, "", {}), {}, TypeError, "kind must be a non-empty str, got ''"),
    (("e", 0, "message", {}), {"journal": 5}, TypeError, "journal must be a str, got 5"),
    (("e", 0, "message", {}), {"run_id": 5}, TypeError, "run_id must be a str or None, got 5"),
    (("e", 0, "message", {}), {"endpoint": b"x"}, TypeError,
     "endpoint must be a str or None, got b'x'"),
    (("e", 3, "message", [1]), {"journal": "j"}, TypeError,
     "event payload (e j #3) must be a dict or JSON bytes, got list"),
])
def test_an_event_refused_says_which_argument(store, args, kw, exc, message):
    raises(exc, message, store.event, *args, **kw)


def test_an_events_payload_bytes_must_be_one_json_value(store):
    with pytest.raises(ValueError) as e:
        store.event("e", 0, "message", b'{"a": 1} x')
    assert str(e.value).startswith("event payload (e  #0): bytes are not valid JSON: ")
    with pytest.raises(ValueError, match="not valid JSON"):
        store.event("e", 0, "message", b'"\xff"')  # not UTF-8
    with pytest.raises(TypeError) as e:
        store.event("e", 0, "message", {"x": object()})
    assert str(e.value).startswith("event payload (e  #0) is not JSON-serialisable: ")


class Text(str):
    pass


def test_events_at_the_edges_are_taken(store):
    """seq 0, a str subclass, bytes, a bytearray, a memoryview, a dict subclass."""
    store.event(Text("ep-1"), 0, Text("message"), b'{"a": 0}', journal=Text(""),
                run_id=Text("r"), endpoint=Text("x"))
    store.event("ep-1", 1, "message", bytearray(b'{"a": 1}'))
    store.event("ep-1", 2, "message", memoryview(b'{"a": 2}'))
    store.event("ep-1", 3, "message", type("D", (dict,), {})(a=3))
    store.event("ep-1", 4, "model_call", {"role": "agent", "usage": {"prompt_tokens": 9}},
                journal="judge|j|m", run_id=None, endpoint=None)
    store.flush_sync()
    got = [(e["seq"], e["payload"]) for e in store.events("ep-1")]
    assert got == [(0, {"a": 0}), (1, {"a": 1}), (2, {"a": 2}), (3, {"a": 3})]
    assert [(e["seq"], e["run_id"], e["endpoint"]) for e in store.events("ep-1", journal="judge|j|m")
            ] == [(4, None, None)]
    [call] = store.model_calls()
    assert (call.journal, call.prompt_tokens) == ("judge|j|m", 9)


@pytest.mark.parametrize(("kw", "exc", "message"), [
    ({"judge": ""}, TypeError, "judge must be a non-empty str, got ''"),
    ({"method": None}, TypeError, "method must be a non-empty str, got None"),
    ({"run_id": 1}, TypeError, "run_id must be a str or None, got 1"),
    ({"judge_key": None}, TypeError, "judge_key must be a str, got None"),
    ({"passed": 1}, TypeError, "passed must be a bool or None, got 1"),
    ({"score": True}, TypeError, "score must be a number or None, got True"),
    ({"score": "1"}, TypeError, "score must be a number or None, got '1'"),
    ({"score": float("inf")}, ValueError, "score must be finite, got inf"),
    ({"details": []}, TypeError,
     "judgment details (e, j/m) must be a dict or JSON bytes, got list"),
])
def test_a_judgment_refused_says_which_argument(store, kw, exc, message):
    args = {"judge": "j", "method": "m", "passed": None, "score": None, "details": {}, **kw}
    raises(exc, message, store.judgment, "e", **args)


def test_a_judgment_of_no_episode_is_refused(store):
    raises(TypeError, "episode_key must be a non-empty str, got ''", store.judgment, "",
           judge="j", method="m", passed=None, score=None, details={})


def test_judgments_at_the_edges_are_taken(store):
    store.judgment("ep-1", judge="j", method="m", passed=True, score=1, details={"a": 1},
                   run_id="r", judge_key="k")
    store.judgment("ep-1", judge="j", method="n", passed=False, score=None, details={})
    store.judgment("ep-1", judge="j", method="o", passed=None, score=0.25,
                   details=b'{"b": 2}')
    store.flush_sync()
    got = {j["method"]: (j["passed"], j["score"], j["details"], j["run_id"], j["judge_key"])
           for j in store.judgments()}
    assert got == {"m": (True, 1.0, {"a": 1}, "r", "k"), "n": (False, None, {}, None, ""),
                   "o": (None, 0.25, {"b": 2}, None, "")}
    assert type(got["m"][1]) is float


@pytest.mark.parametrize(("name", "value", "message"), [
    ("config", [], "config must be a dict, got list"),
    ("prices", "x", "prices must be a dict, got str"),
    ("info", 1, "info must be a dict, got int"),
])
def test_a_run_refused_says_which_argument(store, name, value, message):
    kw = {"config": {}, name: value}
    raises(TypeError, message, store.begin_run, "r2", **kw)


def test_a_run_begun_again_with_another_config_is_refused_with_both_digests(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path) as s:
        s.begin_run("r", {"a": 1})
    with RunStore(path) as s:  # the stored digest, read from the store
        s.begin_run("r", {"a": 1}, prices={"m": {"input": 1.0}}, info={"command": "run"})
        stored, given = config_hash({"a": 1}), config_hash({"a": 2})
        raises(ConfigMismatchError,
               f"run 'r' in {path} was started with a different config (stored sha256 "
               f"{stored[:12]}, given {given[:12]}); start a new run", s.begin_run, "r",
               {"a": 2})
        raises(TypeError, "run_id must be a non-empty str, got ''", s.begin_run, "", {})
        raises(TypeError, "status must be a non-empty str, got ''", s.finish_run, "r", "")
        raises(TypeError, "run_id must be a non-empty str, got ''", s.finish_run, "", "done")
        s.finish_run("r", "done", info={"n": 1})
        s.flush_sync()
        [run] = s.runs()
        assert (run["status"], run["prices"], run["info"]) == (
            "done", {"m": {"input": 1.0}}, {"command": "run", "n": 1})


def test_episode_columns_refused_say_what(store):
    raises(TypeError, "expected an EpisodeMeta or a dict of its fields, got list",
           store.episode_started, [], run_id="r")
    raises(TypeError, "key must be a non-empty str, got ''", store.episode_started,
           meta(key=""), run_id="r")
    raises(TypeError, "trial must be an int >= 0, got -1", store.episode_started,
           meta(trial=-1), run_id="r")
    raises(TypeError, "lang must be a str or None, got 5", store.episode_started,
           meta(lang=5), run_id="r")
    raises(TypeError, "run_id must be a non-empty str, got None", store.episode_started,
           meta(), run_id=None)
    raises(TypeError, "run_id must be a non-empty str, got ''", store.select, "", [meta()])
    raises(TypeError, "episode_key must be a non-empty str, got ''", store.episode_finished,
           "", rec())
    raises(TypeError, "record.run_id must be a non-empty str, got ''", store.episode_finished,
           "ep-1", rec(run_id=""))
    raises(TypeError, "record must be an EpisodeRecord, got dict", store.episode_finished,
           "ep-1", {})


def test_an_episode_from_a_dict_finished_by_another_run(store):
    store.episode_started({"key": "ep-1", "label": "L", "model": "m", "benchmark": "vitabench",
                           "domain": "delivery", "task_id": "t1", "trial": 0}, run_id="r")
    store.episode_finished("ep-1", rec(termination="error", error="x"), run_id="r2")
    store.episode_finished("ep-2", rec(trial=1))
    store.flush_sync()
    rows = {r["episode_key"]: r for r in store.episode_rows()}
    assert (rows["ep-1"]["status"], rows["ep-1"]["termination"], rows["ep-1"]["run_id"]) == (
        "error", "error", "r2")
    assert (rows["ep-2"]["status"], rows["ep-2"]["run_id"], rows["ep-2"]["label"]) == (
        "done", "r", "m|vitabench:delivery:en:t1|1")
    assert rows["ep-1"]["finished_at"] >= rows["ep-1"]["started_at"]


def test_the_writer_lets_go_of_episode_numbers_past_its_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(runstore, "_EPS_KEPT", 2)
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {})
        for round_ in range(2):
            for i in range(5):
                s.event(f"ep-{i}", round_, "model_call", {"n": i * 10 + round_},
                        run_id="r")
            s.flush_sync()
        assert {k: [e["payload"]["n"] for e in s.events(k)] for k in
                (f"ep-{i}" for i in range(5))} == {
            f"ep-{i}": [i * 10, i * 10 + 1] for i in range(5)}
        assert len(s.model_calls()) == 10


def test_close_raises_the_writers_failure_and_stats_count(tmp_path):
    s = RunStore(tmp_path / "s.sqlite")
    s.begin_run("r", {})
    s.flush_sync()
    assert s.writer_stats["rows"] == 1 and set(s.writer_stats) == {
        "transactions", "rows", "checkpoints"}
    s._writer.error = StoreError("the disk went away")
    with pytest.raises(StoreError, match="the disk went away"):
        s.close()


def test_a_legacy_key_is_the_ids_legacy_key():
    assert legacy_key("schema1", "r", "e") == str(EpisodeKey.legacy("schema1", "r", "e"))
    assert EpisodeKey(legacy_key("a")).is_legacy


# ---- what the writer stores beside the rows -----------------------------------------------

def test_a_runs_config_is_checked_against_the_one_queued_before_any_commit(tmp_path):
    with RunStore(tmp_path / "s.sqlite", commit_every_s=60.0) as s:
        s.begin_run("r", {"a": 1})
        with pytest.raises(ConfigMismatchError):  # the first is not committed yet
            s.begin_run("r", {"a": 2})
        s.begin_run("r", {"a": 1})
    with RunStore(tmp_path / "s.sqlite") as s:  # a new store object: the stored digest
        with pytest.raises(ConfigMismatchError):
            s.begin_run("r", {"a": 2})
        s.begin_run("r2", {"a": 2})


def test_episodes_are_numbered_in_the_order_they_start(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {})
        for key in ("ep-b", "ep-a"):
            s.episode_started(meta(key), run_id="r")
        s.event("ep-a", 0, "message", {})
        s.event("ep-c", 0, "message", {})  # never started: numbered at its first event
        s.event("ep-b", 0, "message", {})
        s.flush_sync()
        assert s._read("SELECT ep, episode_key FROM event_keys ORDER BY ep") == [
            (1, "ep-b"), (2, "ep-a"), (3, "ep-c")]


def test_the_writers_call_facts_are_the_triggers(tmp_path):
    """The facts the writer computes from each call it journals are the ones the journal's
    trigger computes from the stored row (a merge copies the rows: the trigger's)."""
    import sys

    from sweepbench.store.merge import merge_stores

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from support import call_facts

    with RunStore(tmp_path / "a.sqlite") as s:
        s.begin_run("r", {})
        s.episode_started(meta("ep-1"), run_id="r")
        s.event("ep-1", 0, "model_call", {"role": "agent", "latency_s": 0.5, "attempts": 2,
                                          "usage": {"prompt_tokens": 7, "completion_tokens": 3,
                                                    "cached_prompt_tokens": 1},
                                          "statuses": [429, 200]}, run_id="r", endpoint="m")
        s.event("ep-1", 1, "model_call", b'{"role": "user", "usage": {"prompt_tokens": 2}}',
                run_id="r", endpoint="u")
        s.event("ep-1", 0, "model_call", {"role": "judge", "latency_s": 1.5},
                journal="judge|j|likert", run_id="r", endpoint="j")
        s.event("ep-1", 2, "message", {"role": "agent"})
    merge_stores(tmp_path / "b.sqlite", [tmp_path / "a.sqlite"])
    rows = {}
    for name in ("a", "b"):
        db = sqlite3.connect(tmp_path / f"{name}.sqlite")
        rows[name] = call_facts(db)
        db.close()
    assert rows["a"] == rows["b"] and len(rows["a"]) == 3
    assert [(r[1], r[2], r[4], r[5], r[7], r[8]) for r in rows["a"]] == [
        ("", 0, "r", "m", "agent", 7), ("", 1, "r", "u", "user", 2),
        ("judge|j|likert", 0, "r", "j", "judge", 0)]
    assert all(isinstance(r[6], float) and r[6] > 0 for r in rows["a"])  # the journal's ts


def test_a_records_journal_and_its_benchmarks_dictionary(tmp_path, monkeypatch):
    """A record is compressed against its episode's journal (its head counts the rows) and
    samples its own benchmark's record dictionary; the store's train_after reaches the
    journal's dictionary."""
    from sweepbench.store import codec

    monkeypatch.setattr(codec, "RECORDS_AFTER", 3)
    with RunStore(tmp_path / "s.sqlite", train_after=4) as s:
        s.begin_run("r", {})
        for i in range(8):
            key = f"ep-{i}"
            s.episode_started(meta(key, trial=i), run_id="r")
            for seq in range(2):
                s.event(key, seq, "model_call", {"role": "agent", "text": f"hello {i} {seq} " * 20},
                        run_id="r")
            s.episode_finished(key, rec(trial=i, wall_s=float(i)))
        s.flush_sync()
        groups = {g for (g,) in s._read("SELECT grp FROM codec_dicts")}
        assert groups == {"vitabench", "record:vitabench"}
        blobs = s._read("SELECT payload FROM event_rows ORDER BY rowid")
        assert isinstance(blobs[-1][0], bytes)  # compressed once the dictionary is trained
        for (record,) in s._read("SELECT record FROM episodes"):
            assert codec._RECORD_HEAD.unpack_from(record)[2] == 2  # its two journal rows



@pytest.mark.parametrize("version", [1, 4])
def test_an_older_store_is_migrated_once_when_it_opens(tmp_path, version):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "hostile_cases"))
    from _stores import as_schema_4, small_store

    from tests.store.test_migrate import v1_store

    path = tmp_path / "s.sqlite"
    if version == 1:
        v1_store(path)
    else:
        as_schema_4(small_store(path))
    with RunStore(path, create=False) as s:
        assert s.migrated.startswith(
            f"migrated run store {path} from schema {version} to {SCHEMA_VERSION} (backup: "
            f"s.sqlite.schema{version}.bak)")
        assert len(s.episode_rows()) in (2, 3)
    assert version_and_id(path) == (SCHEMA_VERSION, APPLICATION_ID)
    with RunStore(path, create=False) as s:
        assert s.migrated is None
