"""Reports from the stores' facts (schema 6) against reports from the transcripts (today's
computation, kept as ``from_transcripts=True``): the same JSON, byte for byte, on real runs
and on a store of odd calls; and the facts path decodes no transcript."""

from __future__ import annotations

import json
import sqlite3

import pytest

from sweepbench.results.report import build_report
from sweepbench.runner.build import benchmark_info
from sweepbench.store.codec import PAYLOAD, register
from sweepbench.store.merge import merge_stores
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.reads import StoreReads
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import EpisodeRecord, Usage
from tests.support import call_facts


def both(path, **kw) -> tuple[str, str]:
    """The report's JSON from the facts and from the transcripts."""
    with ReadOnlyStore(path) as s:
        assert s.has_facts
        facts = build_report(s, benchmarks=benchmark_info(), **kw)
        damaged_facts = s.damaged
    with ReadOnlyStore(path) as s:
        oracle = build_report(s, benchmarks=benchmark_info(), from_transcripts=True, **kw)
        assert s.damaged == damaged_facts
    return json.dumps(facts, indent=1), json.dumps(oracle, indent=1)


@pytest.mark.parametrize("kw", [{}, {"k": 1}, {"prices": {"scripted/user": {"input": 3.0}}}])
def test_a_t1_run_reports_the_same_from_facts(t1_store, kw):
    assert compressed_calls(t1_store) > 1000  # past the first rows, kept as text
    facts, oracle = both(t1_store, **kw)
    report = json.loads(facts)
    # every part is there: errors, cost, profiles, comparisons, terminations
    assert report["error_reasons"] and report["cost"]["total"] > 0
    assert report["comparisons"] and report["terminations"]
    assert all(e["profile"]["latency_s"] for e in report["models"].values())
    assert facts == oracle


def test_a_vitabench_run_reports_the_same_from_facts(vita_samples_store):
    facts, oracle = both(vita_samples_store)
    report = json.loads(facts)
    assert any(e.get("pass_at_k_curve") for b in report["benchmarks"].values()
               for e in b["models"].values())
    assert facts == oracle
    run = json.loads(facts)["runs"][0]
    assert both(vita_samples_store, run_id=run)[0] == both(vita_samples_store, run_id=run)[1]


def _episode(store: RunStore, model: str, task: str, trial: int, calls: list, *,
             benchmark: str = "vitabench", error: str | None = None) -> str:
    label = f"{model}|{benchmark}:delivery:en:{task}|{trial}"
    meta = EpisodeMeta(key=f"ep-{label}", label=label, model=model, benchmark=benchmark,
                       domain="delivery", task_id=task, lang="en", trial=trial,
                       user_model="U", user_mode="default")
    store.select("r", [meta])
    store.episode_started(meta, run_id="r")
    for seq, (payload, journal, endpoint) in enumerate(calls):
        store.event(meta.key, seq, "model_call", payload, journal=journal, run_id="r",
                    endpoint=endpoint)
    store.episode_finished(meta.key, EpisodeRecord(
        run_id="r", model=model, benchmark=benchmark, domain="delivery", task_id=task,
        trial=trial, termination="error" if error else "user_stop", error=error,
        turns=3 + trial, tool_calls=trial, wall_s=0.1 * (trial + 1) + 1e-9 * len(task),
        agent_usage=Usage(100 + trial, 7, 3), user_usage=Usage(50, 5, 1, 2)))
    store.judgment(meta.key, judge="state", method="state", passed=trial % 2 == 0,
                   score=None, details={"tool_f1": 0.5 + trial / 10, **(
                       {"unreachable": "no such dish"} if task == "t3" else {})})
    # two rubric judges on every episode (their agreement), one that could not judge
    store.judgment(meta.key, judge="J", method="sliding", passed=trial % 2 == 1,
                   score=0.5, details={
                       "rubrics": [{"rubric": "paid", "met": True, "reasoning": "long " * 50},
                                   {"rubric": "sent", "met": trial == 0, "window": 1}],
                       "windows": 2, "reasoning": "why " * 40,
                       "window_log": [{"index": 0, "error": None}],
                       "usage": {"prompt_tokens": 10, "deep": {"x": 1}}})
    store.judgment(meta.key, judge="J2", method="full", passed=task != "t2", score=None,
                   details={"rubric": {"b": True, "a": trial % 2}, "note": "text",
                            "nested": {"x": 0.25, "deep": {"y": 1}}} if model == "A" else
                   {"rubric": [True, "yes"], "recall": 0.5})
    store.judgment(meta.key, judge="J3", method="likert", passed=None, score=None,
                   details={"error": f"timeout after {trial}2345 s", "reasoning": "x"})
    return meta.key


ODD_CALLS = [
    ({"role": "agent", "usage": {"prompt_tokens": 120, "completion_tokens": 9,
                                 "cached_prompt_tokens": 200}, "latency_s": 0.1234567,
      "attempts": 3, "statuses": [429, 429, 200]}, "", "A"),
    ({"role": "user", "usage": {"prompt_tokens": -5, "completion_tokens": "x"},
      "latency_s": -1.0, "statuses": [500, True, 200.0, 200]}, "", "U"),
    ({"role": "agent", "usage": {"prompt_tokens": 80}, "attempts": 0}, "", "A"),
    ({"role": "agent", "usage": {"prompt_tokens": 90, "completion_tokens": 3},
      "latency_s": 2.5, "attempts": 2, "stalls": {"hung": 1, "hedged": 1, "hedge_won": True,
                                                  "hedge_usage": {"prompt_tokens": 90}},
      "replica": "http://a/v1", "failures": [{"replica": "http://b/v1"}]}, "", "A"),
    ({"role": "agent", "latency_s": 0.5, "stalls": {"hung": "many"}}, "", "A"),
    ({"role": "agent", "latency_s": 0.7, "replica": "http://b/v1", "failures": []}, "", "A"),
    ({"role": {"odd": 1}, "latency_s": 1e-4, "statuses": "not a list"}, "", None),
    ({"role": "judge", "usage": {"prompt_tokens": 40, "completion_tokens": 4},
      "latency_s": 0.3}, "judge|J|likert", "J"),
    ({"role": "agent", "usage": {"prompt_tokens": 10}, "latency_s": 0.2}, "", "unpriced"),
]


def odd_store(path) -> None:
    with RunStore(path, train_after=10) as s:  # most rows compressed (schema 5)
        s.begin_run("r", {}, prices={"A": {"input": 0.3, "cached_input": 0.07, "output": 1.1},
                                     "U": {"input": 0.13, "output": 0.71},
                                     "J": {"input": 2.0, "output": 8.0}})
        for t, task in enumerate(["t1", "t2", "t3"]):
            for trial in range(2):
                for model in ("A", "B"):
                    calls = ODD_CALLS[(t + trial):] + ODD_CALLS[:(t + trial)]
                    _episode(s, model, task, trial, calls,
                             error="boom 12345" if (t, trial, model) == (2, 1, "B") else None)
        _episode(s, "A", "t9", 0, ODD_CALLS[:3], benchmark="t1")
        s.finish_run("r", "done")
    db = sqlite3.connect(path)  # a payload that does not decode (written outside the store)
    register(db)  # what the journal's triggers decode payloads with
    db.execute("INSERT INTO events VALUES ('ep-A|vitabench:delivery:en:t1|0', '', 99, "
               "'model_call', 'not json', 1.0, 'r', 'A')")
    # and one compressed that does not decompress (a flipped bit)
    db.execute("INSERT INTO events VALUES ('ep-B|vitabench:delivery:en:t1|0', '', 99, "
               "'model_call', ?, 1.0, 'r', 'A')",
               (bytes((PAYLOAD,)) + bytes(8) + b"\x28\xb5\x2f\xfd garbled",))
    db.commit()
    db.close()


def compressed_calls(path) -> int:
    """How many journaled model calls are stored compressed (BLOBs, store.codec)."""
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT count(*) FROM event_rows WHERE kind = 'model_call' "
                          "AND typeof(payload) = 'blob'").fetchone()[0]
    finally:
        db.close()


def test_odd_calls_report_the_same_from_facts(tmp_path):
    odd_store(tmp_path / "odd.sqlite")
    assert compressed_calls(tmp_path / "odd.sqlite") > 50  # facts of compressed payloads
    facts, oracle = both(tmp_path / "odd.sqlite")
    report = json.loads(facts)
    assert sum("does not decode" in d for d in report["damaged"]) == 2  # text and compressed
    assert report["stalls_by_endpoint"]["A"]["hung"] > 0
    assert report["models"]["A"]["profile"]["replicas"]
    assert report["models"]["A"]["profile"]["rate_limited"] > 0
    assert report["cost"]["unpriced_calls"] > 0 and report["error_reasons"]
    assert any("does not decode" in d for d in report["damaged"])
    assert report["judge_agreement"] and report["unjudged_by_judge"] and report["unreachable"]
    assert any(a["rubric_episodes"] for a in report["judge_agreement"])
    assert facts == oracle
    sliding = both(tmp_path / "odd.sqlite", method="sliding")
    assert sliding[0] == sliding[1]
    full = both(tmp_path / "odd.sqlite", method="full", judge="J2")
    assert json.loads(full[0])["metric_keys"] == ["nested_x", "recall", "rubric_b"]
    assert full[0] == full[1]


def test_the_facts_path_decodes_no_transcript(tmp_path, monkeypatch):
    odd_store(tmp_path / "odd.sqlite")
    oracle = both(tmp_path / "odd.sqlite")[1]

    def refuse(*a, **kw):
        raise AssertionError("a transcript was decoded")

    for name in ("records", "model_calls", "events", "episodes"):
        monkeypatch.setattr(StoreReads, name, refuse)
    with ReadOnlyStore(tmp_path / "odd.sqlite") as s:
        assert json.dumps(build_report(s, benchmarks=benchmark_info()), indent=1) == oracle


def test_a_schema_5_store_gets_its_facts_once_with_a_backup(tmp_path):
    path = tmp_path / "odd.sqlite"
    odd_store(path)
    written = _facts(path)
    db = sqlite3.connect(path)
    for stmt in ("DROP TRIGGER call_facts_insert", "DROP TRIGGER call_facts_update",
                 "DROP TRIGGER call_facts_delete", "DROP TRIGGER episode_facts_update",
                 "DROP TABLE call_facts", "DROP TABLE episode_facts", "DROP TABLE fact_texts",
                 "PRAGMA user_version = 5"):
        db.execute(stmt)
    db.commit()
    db.close()
    with ReadOnlyStore(path) as s:  # read as it is: the report computes from transcripts
        assert not s.has_facts
        assert json.dumps(build_report(s, benchmarks=benchmark_info()), indent=1) == \
            both_oracle(path)
    with RunStore(path, create=False) as s:
        assert s.migrated and "from schema 5 to 6" in s.migrated
    assert (tmp_path / "odd.sqlite.schema5.bak").exists()
    assert _facts(path) == written
    facts, oracle = both(path)
    assert facts == oracle


def both_oracle(path) -> str:
    with ReadOnlyStore(path) as s:
        return json.dumps(build_report(s, benchmarks=benchmark_info(), from_transcripts=True),
                          indent=1)


def _facts(path) -> tuple[list, list]:
    db = sqlite3.connect(path)
    try:
        return (call_facts(db),
                db.execute("SELECT * FROM episode_facts ORDER BY episode_key").fetchall())
    finally:
        db.close()


def test_a_restarted_episode_loses_its_facts_until_it_finishes_again(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path) as s:
        s.begin_run("r", {})
        key = _episode(s, "A", "t1", 0, ODD_CALLS[:2])
        s.flush_sync()
        assert key in s.episode_facts([key])
        label = "A|vitabench:delivery:en:t1|0"
        s.episode_started(EpisodeMeta(key=key, label=label, model="A", benchmark="vitabench",
                                      domain="delivery", task_id="t1", trial=0), run_id="r")
        s.flush_sync()
        assert s.episode_facts([key]) == {}
    facts, oracle = both(path)
    assert facts == oracle


def test_merged_stores_keep_their_facts(tmp_path):
    odd_store(tmp_path / "a.sqlite")
    with RunStore(tmp_path / "b.sqlite") as s:
        s.begin_run("r2", {}, prices={"A": {"input": 1.0}})
        _episode(s, "C", "t1", 0, ODD_CALLS)
        s.finish_run("r2", "done")
    merge_stores(tmp_path / "m.sqlite", [tmp_path / "a.sqlite", tmp_path / "b.sqlite"])
    facts, oracle = both(tmp_path / "m.sqlite")
    assert "C" in json.loads(facts)["models"]
    assert facts == oracle


def test_one_pass_over_the_call_facts_reads_what_the_keys_read(tmp_path, monkeypatch):
    """A report over most of a store reads its call facts in one pass (store.fact_scan), a
    small selection by its keys: the same calls, in the same order, the same left out."""
    import numpy as np

    from sweepbench.results.selection import load_view
    from sweepbench.store import call_rows, fact_scan, reads

    odd_store(tmp_path / "odd.sqlite")
    small = lambda values, n=3: call_rows.chunks(values, n)
    monkeypatch.setattr(reads, "_chunks", small)
    monkeypatch.setattr(fact_scan, "chunks", small)
    monkeypatch.setattr(fact_scan, "_RANGE", 4)  # many ranges of episodes
    read = {}
    for share in (0.0, 2.0):  # one pass; by keys
        monkeypatch.setattr(fact_scan, "SCAN_SHARE", share)
        with ReadOnlyStore(tmp_path / "odd.sqlite") as s:
            read[share] = load_view([s]).call_columns(), s.damaged
    (a, damaged_a), (b, damaged_b) = read[0.0], read[2.0]
    assert len(a) > 100 and a.rare and len(damaged_a) == 2
    assert a.keys == b.keys and a.texts == b.texts and damaged_a == damaged_b
    for name in ("episode", "judge", "run", "endpoint", "role", "statuses", "prompt",
                 "completion", "cached", "latency", "has_attempts", "attempts"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.rare == b.rare


def test_metric_means_add_in_the_episodes_order_whatever_their_details_hold(tmp_path):
    """Judgments whose details hold different sets of numbers, interleaved: each metric's
    mean is its values summed one at a time in the episodes' order (as a running sum)."""
    path = tmp_path / "m.sqlite"
    values = [0.375, 0.439, 0.508, 0.778, 0.521, 0.393, 0.49, 0.03]  # order shows in the sum
    with RunStore(path) as s:
        s.begin_run("r", {})
        for trial, v in enumerate(values):
            label = f"A|t1:d:en:t|{trial}"
            meta = EpisodeMeta(key=f"ep-{trial}", label=label, model="A", benchmark="t1",
                               domain="d", task_id="t", lang="en", trial=trial)
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
            s.episode_finished(meta.key, EpisodeRecord(
                run_id="r", model="A", benchmark="t1", domain="d", task_id="t", trial=trial,
                termination="user_stop"))
            details = {"x": v, "y": 0.5} if trial % 3 else {"x": v}  # two sets of names
            s.judgment(meta.key, judge="state", method="state", passed=True, score=None,
                       details=details)
        s.finish_run("r", "done")
    with ReadOnlyStore(path) as s:
        report = build_report(s, benchmarks={"t1": {"headline": "state"}})
    running = 0.0
    for v in values:
        running += v
    assert report["models"]["A"]["metrics"]["x"] == running / len(values)
