"""The run store: opening a file, the write methods (what they store, what they refuse),
read back through the read connection."""

from __future__ import annotations

import sqlite3

import msgspec
import pytest

from sweepbench.errors import ConfigMismatchError, StoreError
from sweepbench.store.codec import RECORD, journal_prefix, register
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.store.schema import SCHEMA_VERSION, config_hash
from sweepbench.wire import (
    AssistantMessage,
    EpisodeRecord,
    FunctionCall,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)

CONFIG = {"models": ["scripted/oracle", "scripted/noisy"], "trials": 4, "seed": 7}


def meta(model: str, task_id: str, trial: int, domain: str = "delivery") -> EpisodeMeta:
    label = f"{model}|vitabench:{domain}:en:{task_id}|{trial}"
    return EpisodeMeta(key=f"ep-{label}", label=label, model=model, benchmark="vitabench",
                       domain=domain, task_id=task_id, lang="en", trial=trial,
                       identity={"model": model, "task": task_id, "trial": trial})


def start(store: RunStore, run_id: str, model: str, task_id: str, trial: int,
          domain: str = "delivery") -> str:
    m = meta(model, task_id, trial, domain)
    store.select(run_id, [m])
    store.episode_started(m, run_id=run_id)
    return m.key


def record(run_id: str, model: str, task_id: str, trial: int, termination: str = "user_stop",
           domain: str = "delivery") -> EpisodeRecord:
    return EpisodeRecord(
        run_id=run_id, model=model, benchmark="vitabench", domain=domain, task_id=task_id,
        trial=trial, termination=termination,
        messages=[
            UserMessage("order noodles"),
            AssistantMessage(tool_calls=[ToolCall("c1", FunctionCall("search", '{"q":"x"}'))]),
            ToolMessage("c1", '{"hits": 1}', name="search"),
            AssistantMessage("done"),
        ],
        agent_usage=Usage(100, 20, 80), user_usage=Usage(50, 5), agent_calls=2, user_calls=1,
        tool_calls=1, turns=2, wall_s=1.5,
        error="boom" if termination == "error" else None,
    )


async def test_round_trip_through_the_queue(tmp_path):
    with RunStore(tmp_path / "runs" / "store.db") as store:  # directory is created
        store.begin_run("r1", CONFIG, prices={"m": {"input": 1.0}}, info={"command": "run"})
        ep = start(store, "r1", "m", "t1", 0)
        store.event(ep, 0, "model_call",
                    {"role": "agent", "usage": {"prompt_tokens": 100}, "latency_s": 0.25},
                    run_id="r1", endpoint="m")
        store.event(ep, 1, "tool_call", b'{"name":"search","result":{"hits":1}}', run_id="r1")
        store.event(ep, 2, "message", {"role": "assistant", "content": "done"})
        store.event(ep, 0, "model_call", {"role": "judge", "usage": {"completion_tokens": 7}},
                    journal="judge|j|window-v1", run_id="r1", endpoint="j")
        rec = record("r1", "m", "t1", 0)
        store.episode_finished(ep, rec)
        store.judgment(ep, judge="j", method="window-v1", passed=True, score=0.9,
                       details={"rubric": [1, 1]}, run_id="r1", judge_key="jk")
        store.judgment(ep, judge="j", method="full-v1", passed=False, score=None,
                       details={})
        store.finish_run("r1", "done", info={"not_started": 0})
        await store.flush()

        [run] = store.runs()
        assert run["run_id"] == "r1" and run["status"] == "done"
        assert run["config"] == CONFIG
        assert run["config_hash"] == config_hash(CONFIG)
        assert run["prices"] == {"m": {"input": 1.0}}
        assert run["info"] == {"command": "run", "not_started": 0}
        assert run["finished_at"] >= run["created_at"]
        assert store.latest_run_id() == "r1"
        assert store.episode_status() == {ep: "done"} == store.episode_status([ep, "ep-other"])
        assert store.episodes("r1") == [rec] == store.episodes()  # the blob decodes equal
        assert store.run_selection("r1") == {ep: None}
        [row] = store.episode_rows()
        assert (row["label"], row["run_id"], row["trial"]) == (
            "m|vitabench:delivery:en:t1|0", "r1", 0)
        assert store.identities() == {ep: {"model": "m", "task": "t1", "trial": 0}}
        assert store.journals(ep) == ["", "judge|j|window-v1"]
        calls = store.model_calls()
        assert [(c.journal, c.endpoint, c.role, c.prompt_tokens, c.completion_tokens)
                for c in calls] == [("", "m", "agent", 100, 0),
                                    ("judge|j|window-v1", "j", "judge", 0, 7)]

        events = store.events(ep)
        assert [e["seq"] for e in events] == [0, 1, 2]
        assert [e["kind"] for e in events] == ["model_call", "tool_call", "message"]
        assert events[0]["payload"] == {"role": "agent", "usage": {"prompt_tokens": 100},
                                        "latency_s": 0.25}
        assert (events[0]["run_id"], events[0]["endpoint"]) == ("r1", "m")
        assert events[1]["payload"] == {"name": "search", "result": {"hits": 1}}
        assert all(isinstance(e["ts"], float) for e in events)
        [raw] = store.events(ep, kind="tool_call", raw=True)
        assert raw["payload"] == b'{"name":"search","result":{"hits":1}}'
        assert [e["seq"] for e in store.events(ep, journal="judge|j|window-v1")] == [0]

        judgments = store.judgments([ep])
        assert [(j["method"], j["passed"], j["score"]) for j in judgments] == [
            ("full-v1", False, None), ("window-v1", True, 0.9)]
        assert judgments[1]["details"] == {"rubric": [1, 1]}
        assert (judgments[1]["run_id"], judgments[1]["judge_key"]) == ("r1", "jk")
        with pytest.raises(TypeError, match="iterable of episode keys"):
            store.judgments("r1")  # a run id is not a list of keys


def test_error_termination_sets_error_status_and_finish_without_start(tmp_path):
    with RunStore(tmp_path / "s.db") as store:
        store.begin_run("r", {})
        ep = start(store, "r", "m", "t1", 0)
        store.episode_finished(ep, record("r", "m", "t1", 0, termination="error"))
        # No episode_started: the finish is still stored (its columns from the record).
        store.episode_finished("ep-x", record("r", "m", "t2", 1))
        store.flush_sync()
        assert store.episode_status() == {ep: "error", "ep-x": "done"}
        rows = {r["episode_key"]: r for r in store.episode_rows()}
        assert rows[ep]["termination"] == "error" and rows[ep]["lang"] == "en"
        assert rows["ep-x"]["task_id"] == "t2"
        assert rows["ep-x"]["label"] == "m|vitabench:delivery:en:t2|1"


def test_reopen_existing_store(tmp_path):
    path = tmp_path / "s.db"
    with RunStore(path) as store:
        store.begin_run("r1", CONFIG)
        ep = start(store, "r1", "m", "t1", 0)
        store.event(ep, 0, "model_call", {"reply": "first"})

    with RunStore(path, create=False) as store:
        assert store.episode_status() == {ep: "running"}
        assert store.runs()[0]["status"] == "running"
        store.finish_run("r1", "interrupted")
        store.flush_sync()
        assert store.runs()[0]["status"] == "interrupted"
        # the same run again: same config is fine and marks the run running again
        store.begin_run("r1", dict(reversed(list(CONFIG.items()))))
        with pytest.raises(ConfigMismatchError, match="different config"):
            store.begin_run("r1", {**CONFIG, "trials": 8})
        # the journal is append-only: re-sending seq 0 keeps the original
        store.event(ep, 0, "model_call", {"reply": "second"})
        store.event(ep, 1, "tool_call", {"ok": True})
        store.episode_finished(ep, record("r1", "m", "t1", 0))
        # a second run selects the stored episode: linked, not copied
        store.begin_run("r2", {"other": True})
        store.select("r2", [meta("m", "t1", 0)])
        store.flush_sync()
        assert store.runs()[0]["status"] == "running"
        assert [e["payload"] for e in store.events(ep)] == [{"reply": "first"}, {"ok": True}]
        assert store.episode_status() == {ep: "done"}
        assert store.latest_run_id() == "r2"
        assert [r["run_id"] for r in store.runs()] == ["r1", "r2"]
        assert list(store.run_selection("r2")) == [ep]
        assert [r["episode_key"] for r in store.episode_rows("r2")] == [ep]


def test_restarting_an_episode_resets_outcome_and_judgments_keeps_journal(tmp_path):
    with RunStore(tmp_path / "s.db") as store:
        store.begin_run("r", {})
        ep = start(store, "r", "m", "t1", 0)
        store.event(ep, 0, "message", {"a": 1})
        store.episode_finished(ep, record("r", "m", "t1", 0, termination="error"))
        store.judgment(ep, judge="state", method="state", passed=False, score=0.0, details={})
        ep2 = start(store, "r", "m", "t1", 0)  # same batch, order kept: restart after finish
        store.flush_sync()
        assert ep2 == ep
        assert store.episode_status() == {ep: "running"}
        assert store.episodes() == []
        assert store.judgments() == []  # they judged the record being replaced
        assert len(store.events(ep)) == 1


def test_a_renamed_selection_relabels_a_stored_episode(tmp_path):
    with RunStore(tmp_path / "s.db") as store:
        store.begin_run("r", {})
        ep = start(store, "r", "old-name", "t1", 0)
        store.episode_finished(ep, record("r", "old-name", "t1", 0))
        renamed = msgspec.structs.replace(meta("new-name", "t1", 0), key=ep)
        store.select("r2", [renamed])
        store.flush_sync()
        [row] = store.episode_rows()
        assert (row["model"], row["label"]) == ("new-name", "new-name|vitabench:delivery:en:t1|0")
        assert [r["episode_key"] for r in store.episode_rows_by_label([row["label"]])] == [ep]


def test_bad_arguments_raise_at_the_call_site(tmp_path):
    with RunStore(tmp_path / "s.db") as store:
        store.begin_run("r", {})
        with pytest.raises(ValueError, match="not valid JSON"):
            store.event("e", 0, "model_call", b'{"truncated":')
        with pytest.raises(TypeError, match="not JSON-serialisable"):
            store.event("e", 0, "model_call", {"x": object()})
        with pytest.raises(TypeError, match="seq"):
            store.event("e", -1, "model_call", {})
        with pytest.raises(TypeError, match="passed"):
            store.judgment("e", judge="j", method="m", passed=1, score=None, details={})
        with pytest.raises(ValueError, match="finite"):
            store.judgment("e", judge="j", method="m", passed=None, score=float("nan"),
                           details={})
        with pytest.raises(TypeError, match="EpisodeRecord"):
            store.episode_finished("e", {"run_id": "r"})  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="episode columns"):
            store.episode_started({"key": "e"}, run_id="r")
        payload = {"n": 1}
        store.event("e", 0, "message", payload)
        payload["n"] = 2  # encoded at the call: later mutation is not stored
        store.flush_sync()
        assert store.events("e")[0]["payload"] == {"n": 1}
        assert store.writer_stats["rows"] == 3  # the run, the key's number, the event


def test_closed_store_refuses_writes_and_reads(tmp_path):
    store = RunStore(tmp_path / "s.db")
    store.begin_run("r", {})
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        store.event("e", 0, "message", {})
    with pytest.raises(StoreError, match="closed"):
        store.runs()
    with RunStore(tmp_path / "s.db") as again:  # close() committed the queued begin_run
        assert again.latest_run_id() == "r"


def test_not_a_store(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        RunStore(tmp_path / "missing.db", create=False)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a sweepbench run store"):
        RunStore(junk)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE t (x)")
    with pytest.raises(StoreError, match="not a sweepbench run store"):
        RunStore(other)
    newer = tmp_path / "newer.db"
    RunStore(newer).close()
    c = sqlite3.connect(newer)
    c.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    c.close()  # checkpointed: no WAL left beside it (see test_identity.py for one left)
    with pytest.raises(StoreError, match="schema version"):
        RunStore(newer)


def test_records_use_wire_encoding(tmp_path):
    path = tmp_path / "s.db"
    rec = record("r", "m", "t1", 3)
    with RunStore(path) as store:
        store.begin_run("r", {})
        store.episode_finished("ep-k", rec)
    with sqlite3.connect(path) as c:  # stored compressed (store.codec): decompressed here
        stored = c.execute("SELECT record FROM episodes").fetchone()[0]
        blob = register(c).record(stored, journal_prefix(c, "ep-k"))
    assert stored[:1] == bytes((RECORD,)) and len(stored) < len(blob)
    assert msgspec.json.decode(blob, type=EpisodeRecord) == rec
    assert msgspec.json.decode(blob)["messages"][0] == {"role": "user",
                                                       "content": "order noodles"}
