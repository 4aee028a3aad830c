"""The run store: queue -> writer thread -> SQLite, read back through the read connection."""

from __future__ import annotations

import asyncio
import math
import sqlite3
import sys
import threading
import time

import msgspec
import pytest

from sweepbench.errors import ConfigMismatchError, StoreError
from sweepbench.store.runstore import (
    SCHEMA_VERSION,
    EpisodeMeta,
    RunStore,
    config_hash,
)
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


def count(path, sql: str) -> int:
    with sqlite3.connect(path) as c:
        return c.execute(sql).fetchone()[0]


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


def test_config_hash_is_canonical():
    assert config_hash({"a": 1, "b": {"x": 1, "y": 2}}) == config_hash({"b": {"y": 2, "x": 1},
                                                                        "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2})


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


def _wal_frames(path, store):
    page = store._wconn.execute("PRAGMA page_size").fetchone()[0]
    return (path.with_name(path.name + "-wal").stat().st_size - 32) // (page + 24)  # header 32


def _copied_back(path) -> tuple[int, int]:
    """(frames in the WAL, frames copied back into the database), read from the WAL index
    without checkpointing (SQLite's walformat: mxFrame at byte 16, nBackfill at byte 96)."""
    head = path.with_name(path.name + "-shm").read_bytes()[:100]
    return (int.from_bytes(head[16:20], sys.byteorder),
            int.from_bytes(head[96:100], sys.byteorder))


def _write_pages(store, n, start=0):
    blob = "x" * 3000  # about a page per event
    for i in range(start, start + n):
        store.event(f"e{i % 40}", i // 40, "model_call", {"text": blob})
        if i % 20 == 19:
            store.flush_sync()  # many small commits, as in a sweep
    store.flush_sync()


def test_the_writer_never_checkpoints_the_checkpointer_does(tmp_path):
    """A checkpoint ends in fsyncs; the writer commits nothing while it runs one, so it is
    the checkpointer's job. With the checkpointer idle the WAL holds all 2,400 pages (SQLite's
    default, in the writer, would have reset it after 1,000); with it on, the WAL is copied
    back without a write waiting on it."""
    path = tmp_path / "s.db"
    with RunStore(path, checkpoint_every_s=3600) as store:
        _write_pages(store, 2400)
        assert _wal_frames(path, store) > 2400
        assert store.writer_stats["checkpoints"] == 0
    assert not path.with_name("s.db-wal").exists()  # closing checkpoints it all back
    assert count(path, "SELECT count(*) FROM events") == 2400

    path = tmp_path / "t.db"
    with RunStore(path, checkpoint_every_s=0.02) as store:
        _write_pages(store, 600)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            frames, copied = _copied_back(path)
            if store.writer_stats["checkpoints"] and copied == frames:
                break
            time.sleep(0.01)
        assert store.writer_stats["checkpoints"] >= 1
        # all copied back by the checkpointer (the WAL may have started over once, when a
        # checkpoint caught up with the writes, so it need not hold all 600 pages)
        assert frames > 0 and copied == frames
    assert count(path, "SELECT count(*) FROM events") == 600


def test_the_wal_starts_over_while_commits_keep_coming(tmp_path):
    """A passive checkpoint never catches up with a writer that keeps committing, and SQLite
    rewinds the WAL only once all of it is copied back: at ``wal_restart_pages`` the writer
    finishes the copy itself, so the WAL stays bounded instead of growing all sweep long."""
    path = tmp_path / "s.db"
    with RunStore(path, checkpoint_every_s=0.01, wal_restart_pages=200) as store:
        written = 0
        while written < 4000 or store.writer_stats["checkpoints"] < 10:
            _write_pages(store, 200, written)
            written += 200
            assert written < 40_000, "the checkpointer never ran"
        assert _wal_frames(path, store) < 2000  # not the 4,000+ pages written
    assert count(path, "SELECT count(*) FROM events") == written


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


def test_many_events_commit_in_few_transactions(tmp_path):
    """Writes queued while the writer waits on a lock go out in batches, not row by row."""
    path = tmp_path / "s.db"
    n = 5000
    with RunStore(path, max_batch=2000) as store:
        store.begin_run("r", {})
        store.flush_sync()
        before = store.writer_stats
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another connection holds the write lock
        for i in range(n):
            store.event(f"e{i % 50}", i // 50, "model_call", {"i": i})
        time.sleep(0.05)
        blocker.execute("COMMIT")
        blocker.close()
        store.flush_sync()
        after = store.writer_stats
        assert after["rows"] - before["rows"] == n + 50  # and the 50 keys' numbers
        # at most: the few rows the writer held while blocked, then ceil(5000 / 2000) batches
        assert after["transactions"] - before["transactions"] <= 1 + math.ceil(n / 2000)
        assert len(store.events("e7")) == n // 50
    assert count(path, "SELECT count(*) FROM events") == n


def test_writes_arriving_one_by_one_share_a_commit_within_the_interval(tmp_path):
    """A sweep's writes come one at a time, each episode's after its model call: the writer,
    woken by the first, gathers the rest for ``commit_every_s`` and commits them together,
    and commits them without anybody flushing."""
    path = tmp_path / "s.db"
    with RunStore(path, commit_every_s=0.5) as store:
        store.begin_run("r", {})
        store.flush_sync()
        before = store.writer_stats["transactions"]
        for i in range(20):  # 20 writes over about 0.1 s
            store.event("e", i, "model_call", {"i": i})
            time.sleep(0.005)
        deadline = time.monotonic() + 10
        while count(path, "SELECT count(*) FROM events") < 20:  # nobody flushes
            assert time.monotonic() < deadline, "queued writes were never committed"
            time.sleep(0.02)
        assert store.writer_stats["transactions"] - before == 1


def test_a_flush_or_close_does_not_wait_for_the_interval(tmp_path):
    """Whoever waits on a commit gets it at once, however long the writer would gather."""
    path = tmp_path / "s.db"
    store = RunStore(path, commit_every_s=30.0)
    store.begin_run("r", {})
    t0 = time.monotonic()
    store.flush_sync()
    assert time.monotonic() - t0 < 5
    store.event("e", 0, "model_call", {"i": 0})

    async def flush() -> None:
        await store.flush()

    t0 = time.monotonic()
    asyncio.run(flush())
    assert time.monotonic() - t0 < 5
    store.event("e", 1, "model_call", {"i": 1})
    t0 = time.monotonic()
    store.close()
    assert time.monotonic() - t0 < 5
    assert count(path, "SELECT count(*) FROM events") == 2
    with pytest.raises(ValueError, match="commit_every_s"):
        RunStore(tmp_path / "t.db", commit_every_s=-1)


async def test_sustained_event_rate_sanity(tmp_path):
    """50k events from the event loop all land; the rate is printed, not asserted."""
    n = 50_000
    payload = {"usage": {"prompt_tokens": 1200, "completion_tokens": 80}, "latency_s": 0.4,
               "response": {"content": "x" * 200}}
    with RunStore(tmp_path / "s.db") as store:
        store.begin_run("r", {})
        t0 = time.perf_counter()
        for i in range(n):
            store.event(f"ep{i % 500}", i // 500, "model_call", payload)
        await store.flush()
        dt = time.perf_counter() - t0
        stats = store.writer_stats
        print(f"\n{n / dt:,.0f} events/s, {stats['rows'] / stats['transactions']:.0f} rows/txn")
        assert stats["rows"] == n + 1 + 500  # and the 500 keys' numbers
        assert stats["transactions"] < n / 2  # batched (exact bounds: the test above)
        assert len(store.events("ep499")) == n // 500


async def test_writer_error_surfaces_on_flush_writes_and_close(tmp_path):
    path = tmp_path / "s.db"
    store = RunStore(path, busy_timeout=0.05)
    store.begin_run("r", {})
    await store.flush()
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        store.event("e", 0, "message", {"x": 1})
        with pytest.raises(StoreError, match="writer failed") as info:
            await store.flush()
        assert isinstance(info.value.__cause__, sqlite3.OperationalError)  # "database is locked"
        with pytest.raises(StoreError):  # sticky: later writes are refused, not dropped
            store.event("e", 1, "message", {"x": 2})
        with pytest.raises(StoreError):
            store.flush_sync()
    finally:
        blocker.execute("COMMIT")
        blocker.close()
    with pytest.raises(StoreError, match="writer failed"):
        store.close()
    assert count(path, "SELECT count(*) FROM events") == 0  # the failed batch rolled back
    assert not store._thread.is_alive()


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
    with sqlite3.connect(newer) as c:
        c.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="schema version"):
        RunStore(newer)


async def test_concurrent_producers_and_flush_from_two_loops(tmp_path):
    """Writers on several tasks and a second thread; each flush covers its own writes."""
    with RunStore(tmp_path / "s.db") as store:
        store.begin_run("r", {})

        async def episode(i: int) -> None:
            for seq in range(20):
                store.event(f"a{i}", seq, "message", {"seq": seq})
                await asyncio.sleep(0)
            await store.flush()
            assert len(store.events(f"a{i}")) == 20  # own writes visible after flush

        def other_thread() -> None:
            async def go() -> None:
                for seq in range(100):
                    store.event("b", seq, "message", {})
                await store.flush()
            asyncio.run(go())

        t = threading.Thread(target=other_thread)
        t.start()
        await asyncio.gather(*(episode(i) for i in range(30)))
        t.join()
        assert len(store.events("b")) == 100


def test_records_use_wire_encoding(tmp_path):
    path = tmp_path / "s.db"
    rec = record("r", "m", "t1", 3)
    with RunStore(path) as store:
        store.begin_run("r", {})
        store.episode_finished("ep-k", rec)
    with sqlite3.connect(path) as c:
        blob = c.execute("SELECT record FROM episodes").fetchone()[0]
    assert msgspec.json.decode(blob, type=EpisodeRecord) == rec
    assert msgspec.json.decode(blob)["messages"][0] == {"role": "user",
                                                       "content": "order noodles"}


def test_call_spans_count_each_runs_model_calls_and_their_first_and_last_time(tmp_path):
    with RunStore(tmp_path / "s.db") as store:
        store.event("e1", 0, "model_call", {"role": "agent"}, run_id="r1")
        store.event("e1", 1, "tool_call", {}, run_id="r1")  # not a call
        store.event("e2", 0, "model_call", {"role": "agent"}, run_id="r1")
        store.event("e2", 1, "model_call", {"role": "user"}, run_id="r2")
        store.event("e3", 0, "model_call", {"role": "agent"})  # no run: not counted
        store.flush_sync()
        spans = store.call_spans()
        ts = {(e["run_id"], e["seq"], k): e["ts"] for k in ("e1", "e2", "e3")
              for e in store.events(k) if e["kind"] == "model_call"}
    r1 = [t for (r, _, _), t in ts.items() if r == "r1"]
    assert spans == {"r1": (2, min(r1), max(r1)), "r2": (1, ts["r2", 1, "e2"], ts["r2", 1, "e2"])}
