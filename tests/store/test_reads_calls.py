"""The store's reads of journaled model calls and episode facts, at their edges, with exact
values: the calls (``model_calls``, from the call facts and from the payloads), their times, the
call facts by chunks of episodes (``call_fact_chunks``), their sums (``call_sums``), the calls
that do not decode, left out and said in ``damaged``, and the episode facts (from the table or
from the record, by keys or in one pass)."""

from __future__ import annotations

import math
import sqlite3
import sys
from pathlib import Path

import pytest

from sweepbench.errors import StoreError
from sweepbench.store import call_rows, reads
from sweepbench.store.facts import facts_of, facts_row
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.reads import ModelCallRow, _num, _sane_call
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import EpisodeRecord

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "hostile_cases"))
from _stores import as_schema_4, garble_event

from tests.store.test_reads import _meta, _record

JUDGE = "judge|j|likert"
LEFT_OUT = "episode {}: journal {!r} row #{} (a model call) does not decode: left out"


def _calls_store(path: Path) -> Path:
    """Episodes ``a`` (three own calls, one odd with a replica, a tool call, and a judge's odd
    call), ``b`` (a bare call and an odd one that does not decode), ``c`` (no call) and ``d``
    (an odd call that does not decode, a call of role 'user', an odd one with stalls), numbered
    d, b, c, a (not in key order)."""
    with RunStore(path) as s:
        s.event("d", 0, "model_call", {"role": "agent", "replica": "y"})
        s.event("d", 1, "model_call", {"role": "user", "usage": {"prompt_tokens": 4}})
        s.event("d", 2, "model_call", {
            "role": "agent", "latency_s": 0.25, "attempts": 1, "statuses": [200],
            "stalls": [{"hung_s": 2}], "usage": {"prompt_tokens": 6, "completion_tokens": 2}})
        s.event("b", 0, "model_call", {})
        s.event("b", 1, "model_call", {"role": "agent", "replica": "x"})
        s.event("c", 0, "message", {"text": "hi"})
        s.event("a", 0, "model_call", {
            "role": "agent", "latency_s": 1.5, "attempts": 2, "statuses": [429, 200],
            "usage": {"prompt_tokens": 100, "completion_tokens": 7, "cached_prompt_tokens": 40},
        }, run_id="r1", endpoint="m1")
        s.event("a", 1, "model_call", {
            "role": "user", "latency_s": 0.5, "replica": "http://b/v1",
            "usage": {"prompt_tokens": 10, "completion_tokens": 3},
        }, run_id="r1", endpoint="u1")
        s.event("a", 2, "tool_call", {"usage": {"prompt_tokens": 9}})  # not a call
        s.event("a", 3, "model_call", {
            "role": "agent", "latency_s": 2.0, "usage": {"prompt_tokens": 20,
                                                         "completion_tokens": 1}}, run_id="r2")
        s.event("a", 0, "model_call", {
            "role": "judge", "latency_s": 4.0, "attempts": 3, "statuses": [500, 200],
            "stalls": [{"hung_s": 1.5}], "failures": [{"error": "ServerError"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5, "cached_prompt_tokens": 5},
        }, journal=JUDGE, run_id="r1", endpoint="J")
    garble_event(path, "b", 1)  # an odd call (replica) that no longer decodes
    garble_event(path, "d", 0)
    return path


@pytest.fixture(scope="module")
def calls_path(tmp_path_factory) -> Path:
    return _calls_store(tmp_path_factory.mktemp("calls") / "s.db")


A0 = ModelCallRow("a", "", "r1", "m1", "agent", 100, 7, 40, 1.5, 2, "[429,200]")
A1 = ModelCallRow("a", "", "r1", "u1", "user", 10, 3, 0, 0.5, None, None, None, "http://b/v1")
A3 = ModelCallRow("a", "", "r2", None, "agent", 20, 1, 0, 2.0, None, None)
AJ = ModelCallRow("a", JUDGE, "r1", "J", "judge", 50, 5, 5, 4.0, 3, "[500,200]",
                  '[{"hung_s":1.5}]', None, '[{"error":"ServerError"}]')
B0 = ModelCallRow("b", "", None, None, None, 0, 0, 0, None, None, None)
D1 = ModelCallRow("d", "", None, None, "user", 4, 0, 0, None, None, None)
D2 = ModelCallRow("d", "", None, None, "agent", 6, 2, 0, 0.25, 1, "[200]", '[{"hung_s":2}]')
B_BAD, D_BAD = LEFT_OUT.format("b", "", 1), LEFT_OUT.format("d", "", 0)


@pytest.mark.parametrize("transcripts", [False, True])
def test_model_calls_every_field_in_key_journal_seq_order_bad_ones_said(calls_path, transcripts):
    """From the call facts or from the payloads: the same rows, every field, the episode's
    own journal before its judges', tool calls not counted, a call that does not decode left
    out and said once however often it is read."""
    with RunStore(calls_path, create=False) as s:
        assert s.has_facts is True
        assert s.model_calls(transcripts=transcripts) == [A0, A1, A3, AJ, B0, D1, D2]
        assert s.damaged == [B_BAD, D_BAD]
        assert s.model_calls(["d", "a", "zz"], transcripts=transcripts) == [A0, A1, A3, AJ, D1, D2]
        assert s.model_calls([], transcripts=transcripts) == []
        assert s.model_calls(["c"], transcripts=transcripts) == []
        assert s.damaged == [B_BAD, D_BAD]
        with pytest.raises(TypeError, match="not one str 'a'"):
            s.model_calls("a", transcripts=transcripts)


def _stamps(path: Path) -> dict[tuple[str, str, int], float]:
    """(episode_key, journal, seq) -> ts of every journal row, read by SQLite."""
    db = sqlite3.connect(path)
    try:
        return {(k, j, q): t for k, j, q, t in db.execute(
            "SELECT k.episode_key, e.journal, e.seq, e.ts FROM event_rows e "
            "JOIN event_keys k USING (ep)")}
    finally:
        db.close()


def test_model_call_times_match_model_calls_and_say_nothing(calls_path):
    """(seq, ts) of each call model_calls returns, in its order, from the facts or the
    payloads; the calls left out are not said again."""
    ts = _stamps(calls_path)
    expected = [(q, ts[k, j, q]) for k, j, q in (("a", "", 0), ("a", "", 1), ("a", "", 3),
                                                 ("a", JUDGE, 0), ("b", "", 0), ("d", "", 1),
                                                 ("d", "", 2))]
    with RunStore(calls_path, create=False) as s:
        assert s.model_call_times() == expected
        assert s.model_call_times(["d", "zz"]) == expected[-2:]
        assert s.model_call_times([]) == []
        s._has_facts = False  # the payloads' read: the same
        assert s.model_call_times() == expected
        assert s.model_call_times(["d", "zz"]) == expected[-2:]
        assert s.damaged == []


def test_an_older_store_reads_its_calls_from_the_payloads(calls_path, tmp_path):
    """A schema-4 store has no call facts: its calls and their times come from the payloads,
    the same as a newer store's."""
    old = tmp_path / "old.db"
    old.write_bytes(calls_path.read_bytes())
    as_schema_4(old)
    ts = _stamps(calls_path)
    with ReadOnlyStore(old) as s:
        assert s.has_facts is False
        assert s.model_calls() == [A0, A1, A3, AJ, B0, D1, D2]
        assert s.damaged == [B_BAD, D_BAD]
        assert s.model_call_times(["d"]) == [(1, ts["d", "", 1]), (2, ts["d", "", 2])]


def test_call_fact_chunks_number_each_call_and_give_the_odd_ones_whole(calls_path, monkeypatch):
    monkeypatch.setattr(reads, "_chunks", lambda values, n=2: call_rows.chunks(values, n))
    with RunStore(calls_path, create=False) as s:
        texts = {t: i for i, t in s.fact_texts().items()}
        eps = dict(s._read("SELECT episode_key, ep FROM event_keys"))
        chunks = list(s.call_fact_chunks(iter(["d", "a", "c", "b", "zz"])))
        said = s.damaged
    t = texts.__getitem__
    inf = -math.inf
    assert [c.keys for c in chunks] == [{eps["a"]: "a", eps["d"]: "d"},
                                        {eps["b"]: "b", eps["c"]: "c"}, {}]
    assert chunks[0].rows == [
        (eps["a"], 0, t("r1"), t("m1"), t("agent"), t("[429,200]"), 100, 7, 40, 1.5, 1, 2, 0),
        (eps["a"], 0, t("r1"), t("u1"), t("user"), 0, 10, 3, 0, 0.5, 0, 0, 1),
        (eps["a"], 0, t("r2"), 0, t("agent"), 0, 20, 1, 0, 2.0, 0, 0, 0),
        (eps["a"], 1, t("r1"), t("J"), t("judge"), t("[500,200]"), 50, 5, 5, 4.0, 1, 3, 1),
        (eps["d"], 0, 0, 0, t("user"), 0, 4, 0, 0, inf, 0, 0, 0),
        (eps["d"], 0, 0, 0, t("agent"), t("[200]"), 6, 2, 0, 0.25, 1, 1, 1)]
    assert chunks[1].rows == [(eps["b"], 0, 0, 0, 0, 0, 0, 0, 0, inf, 0, 0, 0)]
    assert chunks[2].rows == [] and chunks[2].rare == []
    assert chunks[0].rare == [A1, AJ, D2] and chunks[1].rare == []
    assert said == [D_BAD, B_BAD]  # in the order the chunks are read


def test_call_fact_chunks_refuse_one_str_and_read_no_keys(calls_path):
    with RunStore(calls_path, create=False) as s:
        with pytest.raises(TypeError, match="keys must be an iterable of episode keys, not "
                                            "one str 'a'"):
            next(s.call_fact_chunks("a"))
        assert list(s.call_fact_chunks([])) == []


def test_call_sums_per_episode_journal_and_agent_then_own_latencies(calls_path, monkeypatch):
    monkeypatch.setattr(reads, "_chunks", lambda values, n=2: call_rows.chunks(values, n))
    with RunStore(calls_path, create=False) as s:
        sums = list(s.call_sums(["d", "a", "b", "c", "zz"]))
        assert s.damaged == []  # the calls that do not decode are not counted, nor said
    assert sorted(sums[:5]) == [  # the first chunk's sums, then its latencies
        ("a", "", 0, 1, 10, 0, 3), ("a", "", 1, 2, 120, 40, 8), ("a", JUDGE, 0, 1, 50, 5, 5),
        ("d", "", 0, 1, 4, 0, 0), ("d", "", 1, 1, 6, 0, 2)]
    assert sorted(sums[5:7]) == [("a", None, None, 4.0), ("d", None, None, 0.25)]
    assert sums[7:] == [("b", "", 0, 1, 0, 0, 0), ("b", None, None, 0.0)]


def test_call_sums_without_an_agent_role_count_no_agent_calls(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        s.event("e", 0, "model_call", {"role": "user", "usage": {"prompt_tokens": 3}})
        s.event("e", 1, "model_call", {"role": "assistant", "latency_s": 0.25})
        s.flush_sync()
        assert s.fact_texts() == {1: "user", 2: "assistant"}
        assert list(s.call_sums(["e"])) == [("e", "", 0, 2, 3, 0, 0), ("e", None, None, 0.25)]


def test_sane_call_reads_numbers_and_texts_of_whatever_a_payload_held():
    """What the payloads' read makes of each field: tokens below 0 or not numbers count 0,
    cached never above the prompt, booleans are no numbers, a field of the wrong type is
    None, and an empty list of failures is none."""
    row = ("k", "j", "r", "e", "agent", 12, 5.9, 30, 3, 2.9, "[200]", "[1]", "http://x", "[2]")
    assert _sane_call(row) == ("k", "j", "r", "e", "agent", 12, 5, 12, 3.0, 2, "[200]", "[1]",
                               "http://x", "[2]")
    assert type(_sane_call(row)[8]) is float and type(_sane_call(row)[9]) is int
    odd = ("k", "", None, None, 1, -4, True, "7", "1.5", False, 200, 1, 2, "[]")
    assert _sane_call(odd) == ("k", "", None, None, None, 0, 0, 0, None, None, None, None,
                               None, None)
    assert _sane_call(("k", "", None, None, None, 8, 0, 3, None, None, None, None, None,
                       None))[5:8] == (8, 0, 3)
    assert _num(True, int) is None and _num(False, float) is None and _num("2", int) is None
    assert _num(None, float) is None and _num(2.7, int) == 2 and type(_num(2, float)) is float


def test_model_calls_read_the_facts_unless_asked_for_the_payloads(calls_path, tmp_path):
    """A call whose facts row is gone (a program of its own wrote the journal without the
    store's triggers) is missing from the read of the facts, not from that of the payloads."""
    path = tmp_path / "s.db"
    path.write_bytes(calls_path.read_bytes())
    db = sqlite3.connect(path)
    with db:
        db.execute("DELETE FROM call_facts WHERE ep = (SELECT ep FROM event_keys "
                   "WHERE episode_key = 'a') AND journal = '' AND seq = 3")
    db.close()
    with RunStore(path, create=False) as s:
        assert s.model_calls(["a"]) == [A0, A1, AJ]
        assert s.model_calls(["a"], transcripts=True) == [A0, A1, A3, AJ]
        assert [seq for seq, _ in s.model_call_times(["a"])] == [0, 1, 0]  # the facts' too


def test_a_journal_row_that_does_not_decode_stops_a_replay(calls_path):
    with RunStore(calls_path, create=False) as s:
        assert [e["seq"] for e in s.events("a")] == [0, 1, 2, 3]
        with pytest.raises(StoreError) as info:
            s.events("b")
    assert str(info.value) == (
        f"run store {calls_path}: episode b: journal '' row #1 does not decode (Input data was "
        "truncated); the journal cannot be replayed past it")


# ---- episode facts: from the table, or from the record where it has none ----

def test_a_read_over_most_of_a_store_in_one_pass_returns_what_reads_by_keys_return(
        tmp_path, monkeypatch):
    """Judgments and episode facts of most of a store are read in one pass over the table,
    of a few episodes by their keys: the same rows, in the same order (chunk by chunk of the
    keys given, each in key order), the same left out and said, and the facts of a record
    that has none in the table computed from the record in both."""
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


@pytest.mark.parametrize("share", [2.0, 0.0])  # by keys; the table once
def test_episode_facts_of_some_keys_from_the_table_or_else_the_record(tmp_path, monkeypatch,
                                                                      share):
    """The facts row where the table has one (as stored), else the record's facts; a record
    that does not decode left out and said, in the order the keys are read (chunk by chunk,
    each in key order); keys not asked for, or running, not returned."""
    path = tmp_path / "s.db"
    keys = [f"f{i}" for i in range(6)]
    with RunStore(path) as s:
        for i, key in enumerate(keys + ["f6"]):
            meta = _meta(key, "A", f"t{i}", 0)
            s.episode_started(meta, run_id="r1")
            if key != "f6":  # f6 is running
                s.episode_finished(key, _record(meta, turns=i % 2))
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE episode_facts SET steps = 40 WHERE episode_key = 'f0'")
        db.execute("UPDATE episodes SET record = '{\"run_id\": \"r' "
                   "WHERE episode_key IN ('f3', 'f5')")
        db.execute("DELETE FROM episode_facts WHERE episode_key IN ('f1', 'f3', 'f5')")
    db.close()
    f1 = facts_row("f1", _record(_meta("f1", "A", "t1", 0), turns=1))
    f0 = facts_row("f0", _record(_meta("f0", "A", "t0", 0), turns=0))
    f0 = (*f0[:2], 40, *f0[3:])  # steps as the table has them, not as the record
    f2 = facts_row("f2", _record(_meta("f2", "A", "t2", 0), turns=0))
    monkeypatch.setattr(reads, "SCAN_SHARE", share)
    monkeypatch.setattr(reads, "_chunks", lambda values, n=2: call_rows.chunks(values, n))
    bad = "episode {}: its record does not decode (Input data was truncated): left out"
    with ReadOnlyStore(path) as s:
        assert s.episode_fact_rows(["f5", "f1", "f3", "f0", "f6", "f2"]) == [f1, f0, f2]
        assert s.damaged == [bad.format("f5"), bad.format("f3")]
        facts = s.episode_facts(iter(["f2", "f1", "zz"]))
        assert facts == {"f1": facts_of(f1), "f2": facts_of(f2)} and list(facts) == ["f1", "f2"]
        assert s.episode_facts([]) == {}
    with ReadOnlyStore(path) as s:  # f5 then f3 in the keys' chunks, f3 then f5 in key order
        assert s.episode_fact_rows(["f5", "f0", "f3", "f2"]) == [f0, f2]
        assert s.damaged == [bad.format("f5"), bad.format("f3")]
    monkeypatch.setattr(reads, "_chunks", lambda values, n=3: call_rows.chunks(values, n))
    with ReadOnlyStore(path) as s:  # two rows of the table with one record beside them
        assert s.episode_fact_rows(["f5", "f3", "f6", "f0", "f2", "f1"]) == [f0, f1, f2]
        assert s.damaged == [bad.format("f3"), bad.format("f5")]
