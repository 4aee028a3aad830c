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
