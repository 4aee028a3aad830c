"""The store's reads: what the queries return from committed rows."""

from __future__ import annotations

from sweepbench.store.reads import ModelCallRow
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import EpisodeRecord


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


def test_a_read_over_most_of_a_store_in_one_pass_returns_what_reads_by_keys_return(
        tmp_path, monkeypatch):
    """Judgments and episode facts of most of a store are read in one pass over the table,
    of a few episodes by their keys: the same rows, in the same order (chunk by chunk of the
    keys given, each in key order), the same left out and said, and the facts of a record
    that has none in the table computed from the record in both."""
    import sqlite3

    from sweepbench.store import call_rows, reads

    path = tmp_path / "s.db"
    keys = [f"ep-{i:02}" for i in range(12)]
    with RunStore(path) as s:
        s.begin_run("r", {})
        for i, key in enumerate(keys):
            meta = EpisodeMeta(key=key, label=f"A|t1:d:en:t{i}|0", model="A", benchmark="t1",
                               domain="d", task_id=f"t{i}", lang="en", trial=0)
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
            if i == 7:
                continue  # still running: no record, no facts
            s.episode_finished(key, EpisodeRecord(
                run_id="r", model="A", benchmark="t1", domain="d", task_id=f"t{i}", trial=0,
                termination="user_stop", turns=i))
            for judge in ("state", "b-judge", "a-judge"):
                s.judgment(key, judge=judge, method="m", passed=i % 2 == 0, score=i / 10,
                           details={"x": i, "why": "text", "rubric": [{"met": True}]})
        s.finish_run("r", "done")
    db = sqlite3.connect(path)  # one details text that does not decode; facts lost
    with db:
        db.execute("UPDATE judgments SET details = '{bad' WHERE episode_key = 'ep-03' "
                   "AND judge = 'b-judge'")
        db.execute("DELETE FROM episode_facts WHERE episode_key = 'ep-05'")
    db.close()
    monkeypatch.setattr(reads, "_chunks", lambda values, n=4: call_rows.chunks(values, n))
    monkeypatch.setattr(reads, "_ROWS", 5)  # several ranges of rows
    order = keys[6:] + keys[:6]  # chunks of 4 keys, each read in key order
    got = {}
    for share in (0.0, 2.0):  # one pass; by keys
        monkeypatch.setattr(reads, "SCAN_SHARE", share)
        with RunStore(path) as s:
            got[share] = (s.judgments(order), s.episode_fact_rows(order), s.damaged)
    (judged, facts, damaged), by_keys = got[0.0], got[2.0]
    assert (judged, facts, damaged) == by_keys
    assert [(j["episode_key"], j["judge"]) for j in judged][:4] == [
        ("ep-06", "a-judge"), ("ep-06", "b-judge"), ("ep-06", "state"), ("ep-08", "a-judge")]
    assert len(judged) == 11 * 3 - 1 and damaged == [
        "episode ep-03: its judgment by b-judge/m does not decode (JSON is malformed: "
        "object keys must be strings (byte 1)): left out"]
    assert [r[0] for r in facts] == ["ep-06", "ep-08", "ep-09", "ep-00", "ep-01", "ep-10",
                                     "ep-11", "ep-02", "ep-03", "ep-04", "ep-05"]
    assert [r[1] for r in facts] == [6, 8, 9, 0, 1, 10, 11, 2, 3, 4, 5]  # ep-05's from its record
