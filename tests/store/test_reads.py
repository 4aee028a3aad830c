"""The store's reads: what the queries return from committed rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec
import pytest

from sweepbench.errors import StoreError
from sweepbench.store import call_rows, reads
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.reads import ModelCallRow
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.store.schema import config_hash
from sweepbench.wire import EpisodeRecord, UserMessage


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


def test_model_calls_take_usage_from_payloads_and_what_is_not_a_number_as_none(tmp_path):
    """Payloads are JSON text from whatever wrote them: usage that is negative or not a
    number counts 0, cached tokens never exceed the prompt, and a field of the wrong type
    reads as None."""
    with RunStore(tmp_path / "s.db") as store:
        store.event("e", 0, "model_call", {
            "role": "agent", "latency_s": 2, "attempts": 3.0, "statuses": [500, 200],
            "stalls": [{"hung_s": 1.5}], "replica": "http://a/v1",
            "failures": [{"error": "ServerError", "replica": "http://b/v1"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 7, "cached_prompt_tokens": 150},
        }, run_id="r", endpoint="m")
        store.event("e", 1, "model_call", {
            "role": 3, "latency_s": "slow", "attempts": "2", "statuses": 500, "stalls": "x",
            "replica": 2, "failures": [],
            "usage": {"prompt_tokens": -5, "completion_tokens": "7", "cached_prompt_tokens": 2.5},
        })
        store.event("e", 2, "tool_call", {"usage": {"prompt_tokens": 9}})  # not a call
        store.flush_sync()
        first, second = store.model_calls()
    assert [getattr(first, f) for f in ModelCallRow.__struct_fields__] == [
        "e", "", "r", "m", "agent", 100, 7, 100, 2.0, 3, "[500,200]", '[{"hung_s":1.5}]',
        "http://a/v1", '[{"error":"ServerError","replica":"http://b/v1"}]']
    assert [getattr(second, f) for f in ModelCallRow.__struct_fields__] == [
        "e", "", None, None, None, 0, 0, 0, None, None, None, "x", None, None]
    assert isinstance(first.latency_s, float) and isinstance(first.attempts, int)


def test_reads_for_many_keys_ask_in_chunks_and_answer_for_all(tmp_path):
    """Keys are asked in chunks (under SQLite's cap on a statement's parameters): all of
    2,000 keys are answered, in order across the chunks, a generator of keys is read once,
    and keys the store does not hold are left out."""
    keys = [f"e{i:04}" for i in range(2000)]
    with RunStore(tmp_path / "s.db") as store:
        for i, key in enumerate(keys):
            for seq in range(i % 3 + 1):
                store.event(key, seq, "model_call", {"usage": {"prompt_tokens": 1}})
        store.event("e0000", 9, "model_call", {}, journal="judge|j|m")  # a judge's: not its own
        store.flush_sync()
        counts = store.journaled_calls(k for k in [*keys, "missing"])
        assert store.journaled_calls(["e0001", "e0000", "missing"]) == {"e0001": 2, "e0000": 1}
        assert store.journaled_calls([]) == {}
        calls = store.model_calls(keys[1500:])
        times = store.model_call_times(keys[1500:])
    assert counts == {key: i % 3 + 1 for i, key in enumerate(keys)}
    assert len(calls) == len(times) == sum(i % 3 + 1 for i in range(1500, 2000))
    assert [(c.episode_key, s) for c, (s, _) in zip(calls, times)][:4] == [
        ("e1500", 0), ("e1501", 0), ("e1501", 1), ("e1502", 0)]


def test_specs_and_call_counts(tmp_path):
    """specs: every spec some run selected an episode under; call_counts: a finished
    episode's own model calls (not its judges', not an unfinished episode's)."""
    def meta(key: str, spec: str | None) -> EpisodeMeta:
        return EpisodeMeta(key=key, label=key, model="m", benchmark="b", domain="d",
                           task_id=key, trial=0, lang="en", spec=spec)

    def record(task_id: str) -> EpisodeRecord:
        return EpisodeRecord(run_id="r1", model="m", benchmark="b", domain="d",
                             task_id=task_id, trial=0, termination="user_stop")

    with RunStore(tmp_path / "s.db") as store:
        store.select("r1", [meta("a", "b:d"), meta("b", None), meta("c", "b:d")])
        store.select("r2", [meta("a", "b:all")])
        for key in ("a", "b", "c"):
            store.episode_started(meta(key, None), run_id="r1")
            store.event(key, 0, "model_call", {})
        store.event("a", 1, "model_call", {})
        store.event("a", 2, "tool_call", {})
        store.event("a", 0, "model_call", {}, journal="judge|j|m")
        store.episode_finished("a", record("a"))
        store.episode_finished("b", record("b"))  # c is still running
        store.flush_sync()
        assert store.specs() == {"a": {"b:d", "b:all"}, "c": {"b:d"}}
        assert sorted(store.call_counts()) == [("m", "b", "d", "en", "a", 2),
                                               ("m", "b", "d", "en", "b", 1)]
        store._has_facts = False  # an older store: counted in the journal, the same
        assert sorted(store.call_counts()) == [("m", "b", "d", "en", "a", 2),
                                               ("m", "b", "d", "en", "b", 1)]


# ---- runs, episodes, records, journals and judgments of one small store, every field ----

def _meta(key: str, model: str, task: str, trial: int, **kw) -> EpisodeMeta:
    return EpisodeMeta(key=key, label=f"{model}|t1:d:en:{task}|{trial}", model=model,
                       benchmark="t1", domain="d", task_id=task, trial=trial, lang="en", **kw)


def _record(meta: EpisodeMeta, termination: str = "user_stop", turns: int = 1) -> EpisodeRecord:
    return EpisodeRecord(run_id="r1", model=meta.model, benchmark="t1", domain="d",
                         task_id=meta.task_id, trial=meta.trial, termination=termination,
                         turns=turns)


METAS = [  # started in this order (rowids 1-5)
    _meta("e1", "B", "t2", 0, spec="t1:d", user_model="u", user_mode="sim",
          identity={"model": "B", "n": 1}),
    _meta("e2", "A", "t1", 1, identity={"model": "A", "n": 2}),
    _meta("e4", "A", "t1", 0, unreachable="no route"),
    _meta("e0", "A", "t1", 0, spec="t1:all"),  # same columns as e4: by key
    _meta("e3", "A", "t0", 0),
]


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """Runs r2 (oldest), r1 and r3 (created at the same time, r3 after): r1 selected e1, e2,
    e4, r2 e4 and e0; e1 done, e2 an error, e3 done with a record that does not decode, e0
    and e4 running; journals and judgments of e1 and e2; timestamps set."""
    path = tmp_path_factory.mktemp("small") / "s.db"
    with RunStore(path) as s:
        s.begin_run("r1", {"models": ["A", "B"]}, prices={"A": {"input": 1.0}},
                    info={"command": "run"})
        s.begin_run("r2", {"models": ["A"]})
        s.begin_run("r3", {"models": []})
        s.finish_run("r1", "done", info={"episodes": 3})
        s.select("r1", METAS[:3])
        s.select("r2", [METAS[2], METAS[3]])
        for m in METAS:
            s.episode_started(m, run_id="r2" if m.key == "e0" else "r1")
        s.episode_finished("e1", _record(METAS[0], turns=2))
        s.episode_finished("e2", _record(METAS[1], "error"), run_id="r9")
        s.episode_finished("e3", _record(METAS[4]))
        s.event("e1", 0, "message", {"role": "user", "text": "hi"}, run_id="r1")
        s.event("e1", 2, "model_call", {"role": "agent"}, run_id="r1", endpoint="A")
        s.event("e1", 1, "tool_call", {"name": "t"}, run_id="r1")
        s.event("e1", 0, "model_call", {"role": "judge"}, journal="judge|x|likert")
        s.event("e1", 0, "verdict", {"ok": True}, journal="judge|b|rubric")
        for key, judge, method, passed, score, details, run, jk in (
                ("e2", "state", "state", None, None, {"error": "boom"}, None, ""),
                ("e1", "state", "state", True, 1.0, {"why": "ok"}, "r1", ""),
                ("e1", "b-judge", "likert", False, 0.25, b"[1, 2]", "r1", "k1"),
                ("e1", "b-judge", "binary", True, 1, {"error": None}, "r2", "k2"),
                ("e1", "a-judge", "likert", False, 0.0, {"x": 1}, "r1", "")):
            s.judgment(key, judge=judge, method=method, passed=passed, score=score,
                       details=details, run_id=run, judge_key=jk)
        s.judgment("e1", judge="bad", method="text", passed=True, score=1.0, details={})
        s.judgment("e2", judge="bad", method="blob", passed=True, score=1.0, details={})
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE runs SET created_at = CASE run_id WHEN 'r2' THEN 5.0 ELSE 7.0 END, "
                   "finished_at = CASE run_id WHEN 'r1' THEN 9.0 END")
        db.execute("UPDATE episodes SET started_at = 100.0 + rowid, finished_at = "
                   "CASE WHEN finished_at IS NOT NULL THEN 200.0 + rowid END")
        db.execute("UPDATE episodes SET record = '{\"run_id\": \"r' WHERE episode_key = 'e3'")
        db.execute("UPDATE judgments SET details = '{\"why\": ' WHERE method = 'text'")
        db.execute("UPDATE judgments SET details = X'FF00' WHERE method = 'blob'")
        db.execute("UPDATE judgments SET created_at = 50.0 + rowid")
    db.close()
    return path


RUN1 = {"run_id": "r1", "created_at": 7.0, "finished_at": 9.0, "status": "done",
        "config": {"models": ["A", "B"]}, "config_hash": config_hash({"models": ["A", "B"]}),
        "prices": {"A": {"input": 1.0}}, "info": {"command": "run", "episodes": 3}}
RUN2 = {"run_id": "r2", "created_at": 5.0, "finished_at": None, "status": "running",
        "config": {"models": ["A"]}, "config_hash": config_hash({"models": ["A"]}),
        "prices": {}, "info": {}}
RUN3 = {**RUN2, "run_id": "r3", "created_at": 7.0, "config": {"models": []},
        "config_hash": config_hash({"models": []})}


def test_runs_oldest_first_each_decoded_and_one_by_id(small):
    with ReadOnlyStore(small) as s:
        assert s.runs() == [RUN2, RUN1, RUN3]
        assert s.run("r1") == RUN1 and s.run("r3") == RUN3 and s.run("r0") is None
        assert s.latest_run_id() == "r3"  # created with r1: the later row


def test_an_empty_store_has_no_runs_nor_episodes(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        assert s.runs() == [] and s.run("r") is None and s.latest_run_id() is None
        assert s.episode_count() == 0 and s.episode_rows() == [] and s.episodes() == []
        assert s.episode_status() == {} and s.records() == {} and s.identities() == {}
        assert s.specs() == {} and s.run_selection("r") == {} and s.judgments() == []
        assert s.judgment_keys() == [] and s.events("e") == [] and s.journals("e") == []
        assert s.damaged == []


def test_run_selection_and_specs(small):
    with ReadOnlyStore(small) as s:
        assert s.run_selection("r1") == {"e1": "t1:d", "e2": None, "e4": None}
        assert s.run_selection("r2") == {"e4": None, "e0": "t1:all"}
        assert s.run_selection("r3") == {}
        assert s.specs() == {"e1": {"t1:d"}, "e0": {"t1:all"}}


ROWS = {  # every column of each episode, as started, finished and timed above
    "e1": {"episode_key": "e1", "label": "B|t1:d:en:t2|0", "model": "B", "benchmark": "t1",
           "spec": "t1:d", "domain": "d", "task_id": "t2", "lang": "en", "trial": 0,
           "user_model": "u", "user_mode": "sim", "unreachable": None, "status": "done",
           "termination": "user_stop", "run_id": "r1", "started_at": 101.0,
           "finished_at": 201.0},
    "e2": {"episode_key": "e2", "label": "A|t1:d:en:t1|1", "model": "A", "benchmark": "t1",
           "spec": None, "domain": "d", "task_id": "t1", "lang": "en", "trial": 1,
           "user_model": None, "user_mode": None, "unreachable": None, "status": "error",
           "termination": "error", "run_id": "r9", "started_at": 102.0, "finished_at": 202.0},
    "e4": {"episode_key": "e4", "label": "A|t1:d:en:t1|0", "model": "A", "benchmark": "t1",
           "spec": None, "domain": "d", "task_id": "t1", "lang": "en", "trial": 0,
           "user_model": None, "user_mode": None, "unreachable": "no route",
           "status": "running", "termination": None, "run_id": "r1", "started_at": 103.0,
           "finished_at": None},
    "e0": {"episode_key": "e0", "label": "A|t1:d:en:t1|0", "model": "A", "benchmark": "t1",
           "spec": "t1:all", "domain": "d", "task_id": "t1", "lang": "en", "trial": 0,
           "user_model": None, "user_mode": None, "unreachable": None, "status": "running",
           "termination": None, "run_id": "r2", "started_at": 104.0, "finished_at": None},
    "e3": {"episode_key": "e3", "label": "A|t1:d:en:t0|0", "model": "A", "benchmark": "t1",
           "spec": None, "domain": "d", "task_id": "t0", "lang": "en", "trial": 0,
           "user_model": None, "user_mode": None, "unreachable": None, "status": "done",
           "termination": "user_stop", "run_id": "r1", "started_at": 105.0,
           "finished_at": 205.0},
}


@pytest.mark.parametrize("rows", [65_536, 2])  # one part of rows; several
def test_episode_rows_every_column_in_report_order_and_of_a_run(small, monkeypatch, rows):
    """By model, benchmark, domain, task, trial, then key; with a run, that run's selection;
    the texts that repeat across rows held once."""
    monkeypatch.setattr(reads, "_ROWS", rows)
    with ReadOnlyStore(small) as s:
        got = s.episode_rows()
        assert got == [ROWS[k] for k in ("e3", "e0", "e4", "e2", "e1")]
        assert s.episode_rows("r1") == [ROWS[k] for k in ("e4", "e2", "e1")]
        assert s.episode_rows("r2") == [ROWS[k] for k in ("e0", "e4")]
        assert s.episode_rows("r0") == []
        assert s.episode_count() == 5
    for c in ("model", "benchmark", "domain", "task_id", "lang", "status"):
        assert got[1][c] is got[2][c]
    assert got[0]["run_id"] is got[4]["run_id"] and got[0]["termination"] is got[4]["termination"]


def test_episode_status_of_all_some_or_no_keys(small, monkeypatch):
    monkeypatch.setattr(reads, "_chunks", lambda values, n=2: call_rows.chunks(values, n))
    every = {"e1": "done", "e2": "error", "e4": "running", "e0": "running", "e3": "done"}
    with ReadOnlyStore(small) as s:
        assert s.episode_status() == every
        assert s.episode_status(iter(["e3", "zz", "e0", "e2", "e1"])) == {
            k: every[k] for k in ("e3", "e0", "e2", "e1")}
        assert s.episode_status([]) == {}
        with pytest.raises(TypeError, match="not one str 'e1'"):
            s.episode_status("e1")


def test_identities_and_rows_by_label(small, monkeypatch):
    monkeypatch.setattr(reads, "_chunks", lambda values, n=1: call_rows.chunks(values, n))
    with ReadOnlyStore(small) as s:
        assert s.identities() == {"e1": {"model": "B", "n": 1}, "e2": {"model": "A", "n": 2},
                                  "e4": {}, "e0": {}, "e3": {}}
        assert s.identities(["e2", "zz"]) == {"e2": {"model": "A", "n": 2}}
        assert s.episode_rows_by_label(["A|t1:d:en:t1|0", "B|t1:d:en:t2|0", "none"]) == [
            {"episode_key": "e4", "label": "A|t1:d:en:t1|0", "identity": {}},
            {"episode_key": "e0", "label": "A|t1:d:en:t1|0", "identity": {}},
            {"episode_key": "e1", "label": "B|t1:d:en:t2|0", "identity": {"model": "B", "n": 1}}]
        assert s.episode_rows_by_label([]) == []


E3_BAD = "episode e3: its record does not decode (Input data was truncated): left out"
E3_NOT_TEXT = ("episode e3: its record does not decode (a bytes-like object is required, not 'int'): "
               "left out")


def test_records_and_episodes_leave_out_what_does_not_decode(small, tmp_path):
    e1, e2 = _record(METAS[0], turns=2), _record(METAS[1], "error")
    with ReadOnlyStore(small) as s:
        assert s.records() == {"e1": e1, "e2": e2}
        assert s.damaged == [E3_BAD]
        assert s.records(["e2", "e4", "zz"]) == {"e2": e2}  # e4 is running: no record
        assert s.episodes() == [e2, e1] and s.episodes("r1") == [e2, e1]
        assert s.episodes("r2") == []
        assert s.damaged == [E3_BAD]
    copy = tmp_path / "s.db"
    copy.write_bytes(small.read_bytes())
    db = sqlite3.connect(copy)
    with db:  # a record that is no text nor bytes
        db.execute("UPDATE episodes SET record = 7 WHERE episode_key = 'e3'")
    db.close()
    with ReadOnlyStore(copy) as s:
        assert s.records(["e3", "e1"]) == {"e1": e1}
        assert s.damaged == [E3_NOT_TEXT]


def test_events_of_a_journal_in_seq_order_by_kind_or_raw(small):
    with ReadOnlyStore(small) as s:
        evs = s.events("e1")
        assert [(e["seq"], e["kind"], e["payload"], e["run_id"], e["endpoint"])
                for e in evs] == [
            (0, "message", {"role": "user", "text": "hi"}, "r1", None),
            (1, "tool_call", {"name": "t"}, "r1", None),
            (2, "model_call", {"role": "agent"}, "r1", "A")]
        assert [sorted(e) for e in evs] == [
            ["endpoint", "kind", "payload", "run_id", "seq", "ts"]] * 3
        assert all(type(e["ts"]) is float for e in evs)
        assert s.events("e1", kind="model_call") == evs[2:]
        assert s.events("e1", kind="nothing") == []
        raw = s.events("e1", raw=True)
        assert [bytes(e["payload"]) for e in raw] == [
            b'{"role":"user","text":"hi"}', b'{"name":"t"}', b'{"role":"agent"}']
        assert [{**e, "payload": None} for e in raw] == [{**e, "payload": None} for e in evs]
        judge = s.events("e1", journal="judge|x|likert")
        assert [(e["seq"], e["kind"], e["payload"], e["run_id"]) for e in judge] == [
            (0, "model_call", {"role": "judge"}, None)]
        assert s.events("e2") == [] and s.events("e1", journal="judge|none") == []
        assert s.journals("e1") == ["", "judge|b|rubric", "judge|x|likert"]
        assert s.journals("e2") == []


J = {  # every judgment that decodes, as judgments() returns it
    ("e1", "a-judge", "likert"): {"passed": False, "score": 0.0, "details": {"x": 1},
                                  "created_at": 55.0, "run_id": "r1", "judge_key": ""},
    ("e1", "b-judge", "binary"): {"passed": True, "score": 1.0, "details": {"error": None},
                                  "created_at": 54.0, "run_id": "r2", "judge_key": "k2"},
    ("e1", "b-judge", "likert"): {"passed": False, "score": 0.25, "details": [1, 2],
                                  "created_at": 53.0, "run_id": "r1", "judge_key": "k1"},
    ("e1", "state", "state"): {"passed": True, "score": 1.0, "details": {"why": "ok"},
                               "created_at": 52.0, "run_id": "r1", "judge_key": ""},
    ("e2", "state", "state"): {"passed": None, "score": None, "details": {"error": "boom"},
                               "created_at": 51.0, "run_id": None, "judge_key": ""},
}
JUDGED = [{"episode_key": e, "judge": j, "method": m, **v} for (e, j, m), v in J.items()]
BAD_BLOB = ("episode e2: its judgment by bad/blob does not decode (JSON is malformed: invalid "
            "character (byte 0)): left out")
BAD_TEXT = ("episode e1: its judgment by bad/text does not decode (Input data was truncated): "
            "left out")


@pytest.mark.parametrize("share", [2.0, 0.0])  # by keys; one pass over the table
def test_judgments_every_field_in_key_judge_method_order(small, monkeypatch, share):
    monkeypatch.setattr(reads, "SCAN_SHARE", share)
    monkeypatch.setattr(reads, "_ROWS", 3)
    with ReadOnlyStore(small) as s:
        judged = s.judgments()
        assert judged == JUDGED
        assert s.damaged == [BAD_TEXT, BAD_BLOB]
        assert s.judgments(["e1", "e2", "zz", "e0", "e3"]) == JUDGED
        assert s.judgments(iter(["e2"])) == JUDGED[4:]
        assert s.judgments(["e2", "e1", "e4", "e0", "e3"], keep=lambda d: type(d).__name__) == [
            {**j, "details": type(j["details"]).__name__} for j in JUDGED]
        assert s.judgments([]) == []
        with pytest.raises(TypeError, match="not one str 'e1'"):
            s.judgments("e1")
    assert all(type(j["passed"]) is bool for j in judged if j["passed"] is not None)
    # texts that repeat held once: judges, methods, runs
    assert judged[1]["judge"] is judged[2]["judge"] and judged[0]["method"] is judged[2]["method"]
    assert judged[0]["run_id"] is judged[2]["run_id"] is judged[3]["run_id"]
    monkeypatch.setattr(reads, "_chunks", lambda values, n=2: call_rows.chunks(values, n))
    with ReadOnlyStore(small) as s:  # chunk by chunk, each in key order; said in that order
        assert s.judgments(["e2", "e4", "e1", "e0", "e3"]) == JUDGED[4:] + JUDGED[:4]
        assert s.damaged == [BAD_BLOB, BAD_TEXT]


def test_judgment_keys_say_which_details_hold_an_error(small, monkeypatch):
    """Those whose details are JSON text, in key, judge, method order: an "error" that is
    there (even null) counts, details that are not an object hold none."""
    monkeypatch.setattr(reads, "_chunks", lambda values, n=1: call_rows.chunks(values, n))
    every = [("e1", "a-judge", "likert", "", 0), ("e1", "b-judge", "binary", "k2", 1),
             ("e1", "b-judge", "likert", "k1", 0), ("e1", "state", "state", "", 0),
             ("e2", "state", "state", "", 1)]
    with ReadOnlyStore(small) as s:
        assert s.judgment_keys() == every
        assert s.judgment_keys(["e2", "zz", "e1"]) == every[4:] + every[:4]
        assert s.judgment_keys([]) == []
        assert s.damaged == []


E1 = [("e1", "a-judge", "likert"), ("e1", "b-judge", "binary"), ("e1", "b-judge", "likert"),
      ("e1", "bad", "text"), ("e1", "state", "state")]
E2 = [("e2", "bad", "blob"), ("e2", "state", "state")]
BY_ROWID = [("e2", "state", "state"), ("e1", "state", "state"), ("e1", "b-judge", "likert"),
            ("e1", "b-judge", "binary"), ("e1", "a-judge", "likert"), ("e1", "bad", "text"),
            ("e2", "bad", "blob")]  # as written


@pytest.mark.parametrize(("share", "rows", "parts"), [
    (2.0, 3, [E1, E2, []]),  # by chunks of 2 keys, each in key order
    (0.0, 3, [BY_ROWID[:3], BY_ROWID[3:6], BY_ROWID[6:]]),  # the table, 3 rows at a time
    (0.0, 7, [BY_ROWID]),
])
def test_judgment_chunks_hold_the_rows_as_stored(small, monkeypatch, share, rows, parts):
    monkeypatch.setattr(reads, "SCAN_SHARE", share)
    monkeypatch.setattr(reads, "_ROWS", rows)
    monkeypatch.setattr(reads, "_chunks", lambda values, n=2: call_rows.chunks(values, n))
    stored = {(e, j, m): (e, j, m, None if v["passed"] is None else int(v["passed"]),
                          v["score"], None, v["created_at"], v["run_id"], v["judge_key"])
              for (e, j, m), v in J.items()}
    with ReadOnlyStore(small) as s:
        got = [list(p) for p in s.judgment_chunks(iter(["e1", "e4", "e2", "e0", "e3"]))]
        with pytest.raises(TypeError, match="not one str 'e1'"):
            s.judgment_chunks("e1")
    assert [[r[:3] for r in p] for p in got] == parts
    for r in (r for p in got for r in p):
        if r[1] != "bad":
            assert r[:5] + (None,) + r[6:] == stored[r[:3]]
            assert msgspec.json.decode(r[5]) == J[r[:3]]["details"]
    assert [r[5] for p in got for r in p if r[1] == "bad"] == ['{"why": ', b"\xff\x00"]


def test_judgment_chunks_read_the_table_once_for_enough_distinct_keys(small, tmp_path,
                                                                      monkeypatch):
    """At least SCAN_SHARE of the store's episodes (with at least one, for a store without
    episodes), each key once: one pass over the table, rows in table order; else by keys."""
    monkeypatch.setattr(reads, "SCAN_SHARE", 0.4)
    with ReadOnlyStore(small) as s:  # 2 keys of 5 episodes: one pass
        assert [r[:3] for p in s.judgment_chunks(["e1", "e2"]) for r in p] == BY_ROWID
        assert [r[:3] for p in s.judgment_chunks(["e2"]) for r in p] == E2  # 1 of 5: by keys
    with RunStore(tmp_path / "s.db") as s:  # no episodes, judgments written z then a
        for judge in ("z", "a"):
            s.judgment("x", judge=judge, method="m", passed=True, score=1.0, details={})
        s.flush_sync()
        monkeypatch.setattr(reads, "SCAN_SHARE", 0.75)
        assert [r[1] for p in s.judgment_chunks(["x"]) for r in p] == ["z", "a"]
        monkeypatch.setattr(reads, "SCAN_SHARE", 0.0)
        assert [r[1] for p in s.judgment_chunks(["x", "x"]) for r in p] == ["a", "z"]
        assert [r[1] for p in s.judgment_chunks(["x"]) for r in p] == ["z", "a"]


def test_reads_of_a_closed_store_or_a_missing_table_say_so(tmp_path):
    path = tmp_path / "s.db"
    s = RunStore(path)
    s.close()
    for read in (s.runs, s.episode_rows):  # one query; its rows in parts
        with pytest.raises(StoreError) as info:
            read()
        assert str(info.value) == f"run store {path} is closed"
    db = sqlite3.connect(path)
    db.execute("DROP TABLE judgments")
    db.execute("DROP TABLE episodes")
    db.close()
    with ReadOnlyStore(path) as s:
        for read, table in ((s.judgments, "judgments"), (s.episode_rows, "episodes")):
            with pytest.raises(StoreError) as info:
                read()
            assert str(info.value) == f"run store {path}: read failed: no such table: {table}"


def test_a_record_stored_against_its_journal_reads_back_whole(tmp_path):
    """A record compressed as the difference from its episode's journal is read with that
    journal; a journal SQLite cannot read is a StoreError, not a record left out."""
    path = tmp_path / "s.db"
    meta = METAS[1]
    said = [{"role": "user", "text": "hello there " * 5, "i": i} for i in range(2)]
    record = EpisodeRecord(run_id="r1", model="A", benchmark="t1", domain="d", task_id="t1",
                           trial=1, termination="user_stop",
                           messages=[UserMessage("hello there " * 5), UserMessage("again " * 9)])
    with RunStore(path, train_after=1) as s:
        s.episode_started(meta, run_id="r1")
        for i, payload in enumerate(said):
            s.event(meta.key, i, "message", payload)
        s.episode_finished(meta.key, record)
    db = sqlite3.connect(path)
    assert db.execute("SELECT typeof(record) FROM episodes").fetchall() == [("blob",)]
    db.close()
    with ReadOnlyStore(path) as s:
        assert s.records() == {"e2": record} and s.damaged == []
        assert [e["payload"] for e in s.events("e2")] == said
    db = sqlite3.connect(path)
    db.execute("DROP TABLE event_rows")
    db.close()
    with ReadOnlyStore(path) as s:
        with pytest.raises(StoreError) as info:
            s.records(["e2"])
    assert str(info.value) == f"run store {path}: read failed: no such table: main.event_rows"


def _garble_table(path: Path, table: str) -> None:
    """Overwrite the first page of ``table``'s B-tree (a bit rot, a torn write there)."""
    db = sqlite3.connect(path)
    root, size = db.execute("SELECT rootpage, (SELECT page_size FROM pragma_page_size) "
                            "FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    db.close()
    with path.open("r+b") as f:
        f.seek((root - 1) * size)
        f.write(b"\xff" * size)


@pytest.mark.parametrize(("table", "read"), [("judgments", "judgments"),
                                             ("episodes", "episode_rows")])
def test_a_read_of_a_damaged_table_says_the_store_is_damaged(small, tmp_path, table, read):
    path = tmp_path / "s.db"
    path.write_bytes(small.read_bytes())
    _garble_table(path, table)
    with ReadOnlyStore(path) as s:
        assert s.runs()[0]["run_id"] == "r2"  # the other tables read
        with pytest.raises(StoreError) as info:
            getattr(s, read)()
    assert str(info.value) == (
        f"run store {path} is damaged (SQLite: database disk image is malformed); restore it "
        "from a backup, or copy what SQLite can still read into a new file (sqlite3 STORE "
        ".recover | sqlite3 NEW) and use that")


def test_episodes_read_only_the_records_of_their_selection(small):
    e1, e2 = _record(METAS[0], turns=2), _record(METAS[1], "error")
    with ReadOnlyStore(small) as s:
        assert s.episodes("r1") == [e2, e1] and s.damaged == []  # e3's record not read
        assert s.records(["e1", "e4"]) == {"e1": e1} and s.damaged == []
