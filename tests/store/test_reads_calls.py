"""The store's reads of journaled model calls, at their edges, with exact values: the calls
(``model_calls``, from the call facts and from the payloads), their times, the call facts by
chunks of episodes (``call_fact_chunks``), their sums (``call_sums``), and the calls that do not
decode, left out and said in ``damaged``."""

from __future__ import annotations

import math
import sqlite3
import sys
from pathlib import Path

import pytest

from sweepbench.store import call_rows, reads
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.reads import ModelCallRow, _num, _sane_call
from sweepbench.store.runstore import RunStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "hostile_cases"))
from _stores import as_schema_4, garble_event

JUDGE = "judge|j|likert"
LEFT_OUT = "episode {}: journal {!r} row #{} (a model call) does not decode: left out"


def _calls_store(path: Path) -> Path:
    """Episodes ``a`` (three own calls, one odd with a replica, a tool call, and a judge's odd
    call), ``b`` (a bare call and one that does not decode), ``c`` (no call) and ``d`` (one
    own call of role 'user' and one that does not decode, its replica an odd field)."""
    with RunStore(path) as s:
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
            "role": "judge", "latency_s": 4.0, "stalls": [{"hung_s": 1.5}],
            "failures": [{"error": "ServerError"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5, "cached_prompt_tokens": 5},
        }, journal=JUDGE, run_id="r1", endpoint="J")
        s.event("b", 0, "model_call", {})
        s.event("b", 1, "model_call", {"role": "agent", "replica": "x"})
        s.event("c", 0, "message", {"text": "hi"})
        s.event("d", 0, "model_call", {"role": "agent", "replica": "y"})
        s.event("d", 1, "model_call", {"role": "user", "usage": {"prompt_tokens": 4}})
    garble_event(path, "b", 1)  # an odd call (replica) that no longer decodes
    garble_event(path, "d", 0)
    return path


@pytest.fixture(scope="module")
def calls_path(tmp_path_factory) -> Path:
    return _calls_store(tmp_path_factory.mktemp("calls") / "s.db")


A0 = ModelCallRow("a", "", "r1", "m1", "agent", 100, 7, 40, 1.5, 2, "[429,200]")
A1 = ModelCallRow("a", "", "r1", "u1", "user", 10, 3, 0, 0.5, None, None, None, "http://b/v1")
A3 = ModelCallRow("a", "", "r2", None, "agent", 20, 1, 0, 2.0, None, None)
AJ = ModelCallRow("a", JUDGE, "r1", "J", "judge", 50, 5, 5, 4.0, None, None,
                  '[{"hung_s":1.5}]', None, '[{"error":"ServerError"}]')
B0 = ModelCallRow("b", "", None, None, None, 0, 0, 0, None, None, None)
D1 = ModelCallRow("d", "", None, None, "user", 4, 0, 0, None, None, None)
B_BAD, D_BAD = LEFT_OUT.format("b", "", 1), LEFT_OUT.format("d", "", 0)


@pytest.mark.parametrize("transcripts", [False, True])
def test_model_calls_every_field_in_key_journal_seq_order_bad_ones_said(calls_path, transcripts):
    """From the call facts or from the payloads: the same rows, every field, the episode's
    own journal before its judges', tool calls not counted, a call that does not decode left
    out and said once however often it is read."""
    with RunStore(calls_path, create=False) as s:
        assert s.has_facts is True
        assert s.model_calls(transcripts=transcripts) == [A0, A1, A3, AJ, B0, D1]
        assert s.damaged == [B_BAD, D_BAD]
        assert s.model_calls(["d", "a", "zz"], transcripts=transcripts) == [A0, A1, A3, AJ, D1]
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
                                                 ("a", JUDGE, 0), ("b", "", 0), ("d", "", 1))]
    with RunStore(calls_path, create=False) as s:
        assert s.model_call_times() == expected
        assert s.model_call_times(["d", "zz"]) == expected[-1:]
        assert s.model_call_times([]) == []
        s._has_facts = False  # the payloads' read: the same
        assert s.model_call_times() == expected
        assert s.model_call_times(["d", "zz"]) == expected[-1:]
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
        assert s.model_calls() == [A0, A1, A3, AJ, B0, D1]
        assert s.damaged == [B_BAD, D_BAD]
        assert s.model_call_times(["d"]) == [(1, ts["d", "", 1])]


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
        (eps["a"], 1, t("r1"), t("J"), t("judge"), 0, 50, 5, 5, 4.0, 0, 0, 1),
        (eps["d"], 0, 0, 0, t("user"), 0, 4, 0, 0, inf, 0, 0, 0)]
    assert chunks[1].rows == [(eps["b"], 0, 0, 0, 0, 0, 0, 0, 0, inf, 0, 0, 0)]
    assert chunks[2].rows == [] and chunks[2].rare == []
    assert chunks[0].rare == [A1, AJ] and chunks[1].rare == []
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
    assert sorted(sums[:4]) == [  # the first chunk's sums, then its latencies
        ("a", "", 0, 1, 10, 0, 3), ("a", "", 1, 2, 120, 40, 8), ("a", JUDGE, 0, 1, 50, 5, 5),
        ("d", "", 0, 1, 4, 0, 0)]
    assert sorted(sums[4:6]) == [("a", None, None, 4.0), ("d", None, None, 0.0)]
    assert sums[6:] == [("b", "", 0, 1, 0, 0, 0), ("b", None, None, 0.0)]


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
