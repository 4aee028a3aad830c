"""The export's calls as arrays (``results.export.calls``), on a small store whose every call
has a price worked out by hand: each call's row and dollars, each episode's sums, the facts
and the journals read alike, a call that does not decode left out and said, and the text ids
an export can pack refused past their width."""

from __future__ import annotations

import math
import sqlite3

import numpy as np
import pytest

from sweepbench.errors import StoreError
from sweepbench.results.cost import prices_by_run
from sweepbench.results.export import calls as calls_mod
from sweepbench.results.export.calls import SOURCES, CallChunk, EpisodeSums, read_calls
from sweepbench.results.export.columns import as_list
from sweepbench.store.codec import register
from sweepbench.store.reads import StoreReads
from sweepbench.store.runstore import EpisodeMeta, RunStore

PRICES = {"A": {"input": 2.0, "cached_input": 0.5, "output": 10.0},
          "J": {"input": 1.0, "output": 4.0}}
HEDGED = {"hung": 1, "hedged": 1, "hedge_usage": {"prompt_tokens": 100, "completion_tokens": 1}}

# (episode, journal, endpoint, payload); seq is the position within (episode, journal)
CALLS = [
    ("e1", "", "A", {"role": "agent", "usage": {"prompt_tokens": 1000, "completion_tokens": 100,
                                                "cached_prompt_tokens": 200},
                     "latency_s": 0.5, "attempts": 2, "statuses": [429, 200]}),
    ("e1", "", "free", {"role": "user", "usage": {"prompt_tokens": 10, "completion_tokens": 1},
                        "latency_s": 0.25}),
    ("e1", "", "A", {"role": "agent", "usage": {"prompt_tokens": 500}, "latency_s": 0.125,
                     "attempts": 0}),
    ("e1", "", "A", {"role": "agent", "usage": {"prompt_tokens": 300}, "latency_s": 2.0,
                     "attempts": 3, "stalls": HEDGED}),
    ("e1", "judge|J|sliding", "J", {"role": "judge", "usage": {"prompt_tokens": 40,
                                                               "completion_tokens": 4},
                                    "latency_s": 9.0, "attempts": 4}),
    ("e1", "judge|J2|full", "J", {"role": "judge", "usage": {"prompt_tokens": 7}}),
    ("e2", "", "A", {"role": "user", "usage": {"prompt_tokens": 100}, "attempts": 1}),
    ("e2", "", "A", {"role": "agent", "usage": {"completion_tokens": 3}}),
]
# dollars of each call above, by hand: ((prompt - cached) * input + cached * cached_input
# + completion * output) / 1e6, and the hedged copy's usage priced the same way
COST = [(800 * 2.0 + 200 * 0.5 + 100 * 10.0) / 1e6, None, 0.0,
        (300 * 2.0) / 1e6 + (100 * 2.0 + 1 * 10.0) / 1e6, (40 * 1.0 + 4 * 4.0) / 1e6,
        (7 * 1.0) / 1e6, (100 * 2.0) / 1e6, (3 * 10.0) / 1e6]


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {}, prices=PRICES)
        seqs: dict[tuple[str, str], int] = {}
        for ep in ("e1", "e2"):
            meta = EpisodeMeta(key=ep, label=f"m|t1:hotel:en:{ep}|0", model="m",
                               benchmark="t1", domain="hotel", task_id=ep, lang="en", trial=0)
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
        for ep, journal, endpoint, payload in CALLS:
            seq = seqs[(ep, journal)] = seqs.get((ep, journal), -1) + 1
            s.event(ep, seq, "model_call", payload, journal=journal, run_id="r",
                    endpoint=endpoint)
        s.flush_sync()
    db = sqlite3.connect(tmp_path / "s.sqlite")  # a call that does not decode
    register(db)
    db.execute("INSERT INTO events VALUES ('e2', '', 7, 'model_call', 'not json', 1.0, 'r', 'A')")
    db.commit()
    db.close()
    with RunStore(tmp_path / "s.sqlite") as s:
        yield s


@pytest.fixture(params=["facts", "journals"])
def chunk(request, store, monkeypatch) -> tuple[StoreReads, CallChunk]:
    if request.param == "journals":
        monkeypatch.setattr(StoreReads, "has_facts", property(lambda self: False))
    else:
        assert store.has_facts
    return store, read_calls(store, ["e2", "e1"], prices_by_run(store.runs()))


def _columns(chunk: CallChunk) -> dict[str, list]:
    return {name: as_list(col) for name, col in chunk.columns(["label2", "label1"]).items()}


def test_each_call_is_a_row_in_key_journal_seq_order_with_its_texts(chunk):
    store, c = chunk
    cols = _columns(c)
    # by episode key, then journal ("" first), then seq
    order = [0, 1, 2, 3, 4, 5, 6, 7]
    assert cols["episode_key"] == [CALLS[i][0] for i in order]
    assert cols["episode_label"] == ["label1"] * 6 + ["label2"] * 2
    assert cols["source"] == ["agent", "user", "agent", "agent", "judge", "judge", "user",
                              "agent"]
    assert cols["judge"] == [None] * 4 + ["J2", "J"] + [None] * 2
    assert cols["judge_method"] == [None] * 4 + ["full", "sliding"] + [None] * 2
    assert cols["seq"] == [0, 1, 2, 3, 0, 0, 0, 1]
    assert cols["run_id"] == ["r"] * 8
    assert cols["endpoint"] == ["A", "free", "A", "A", "J", "J", "A", "A"]
    assert cols["role"] == ["agent", "user", "agent", "agent", "judge", "judge", "user", "agent"]
    assert cols["prompt_tokens"] == [1000, 10, 500, 300, 7, 40, 100, 0]
    assert cols["cached_prompt_tokens"] == [200, 0, 0, 0, 0, 0, 0, 0]
    assert cols["completion_tokens"] == [100, 1, 0, 0, 0, 4, 0, 3]
    assert cols["latency_s"] == [0.5, 0.25, 0.125, 2.0, None, 9.0, None, None]
    assert cols["attempts"] == [2, None, 0, 3, None, 4, 1, None]
    assert cols["http_statuses"] == ["[429,200]", None, None, None, None, None, None, None]
    times = store.model_call_times(["e2", "e1"])
    assert cols["ts"] == [ts for _, ts in times] and all(t > 1e9 for t in cols["ts"])
    assert [s for s, _ in times] == cols["seq"]
    assert c.keys == ["e2", "e1"] and c.ep.tolist() == [1] * 6 + [0] * 2 and c.n == 8
    assert SOURCES == ["agent", "user", "judge"]


def test_each_call_costs_its_hand_worked_dollars(chunk):
    _, c = chunk
    want = [COST[i] for i in (0, 1, 2, 3, 5, 4, 6, 7)]  # the rows' order
    got = _columns(c)["cost_usd"]
    assert [None if w is None else pytest.approx(w, rel=1e-12) for w in want] == got
    assert np.isnan(c.cost[1]) and c.cost[2] == 0.0


def test_a_call_that_does_not_decode_is_left_out_and_said(chunk):
    store, c = chunk
    assert c.n == 8
    assert store.damaged == [("episode e2: journal '' row #7 (a model call) does not decode: "
                              "left out")]


def test_a_row_is_the_stores_call_back(chunk):
    store, c = chunk
    rows = [c.row(i, stalls) for i, stalls in enumerate(
        [None, None, None, ('{"hung":1,"hedged":1,"hedge_usage":{"prompt_tokens":100,'
                            '"completion_tokens":1}}'), None, None, None, None])]
    want = store.model_calls(["e2", "e1"])
    assert [r.episode_key for r in rows] == [w.episode_key for w in want]
    for r, w in zip(rows, want):
        assert (r.journal, r.run_id, r.endpoint, r.role, r.prompt_tokens, r.completion_tokens,
                r.cached_prompt_tokens, r.latency_s, r.attempts, r.statuses) == (
            w.journal, w.run_id, w.endpoint, w.role, w.prompt_tokens, w.completion_tokens,
            w.cached_prompt_tokens, w.latency_s, w.attempts, w.statuses)
    assert want[3].stalls is not None and rows[3].stalls == want[3].stalls.replace(" ", "")


def test_an_episodes_sums_by_hand(chunk):
    _, c = chunk
    s = EpisodeSums(c, 2)  # e2, e1
    e1_agent = COST[0] + COST[2] + COST[3]
    assert s.cost["agent"].tolist() == [pytest.approx(COST[7], rel=1e-12),
                                        pytest.approx(e1_agent, rel=1e-12)]
    assert s.cost["user"].tolist() == [pytest.approx(COST[6], rel=1e-12), 0.0]
    assert s.cost["judge"].tolist() == [0.0, pytest.approx(COST[4] + COST[5], rel=1e-12)]
    assert s.priced.tolist() == [2, 5] and s.unpriced.tolist() == [0, 1]
    assert s.judge_prompt.tolist() == [0, 47] and s.judge_completion.tolist() == [0, 4]
    assert s.judge_prompt.dtype == np.int64 and s.retries.dtype == np.int64
    # own calls only (not the judges' 4 attempts): 2 -> 1, none -> 0, cache 0 -> 0, 3 -> 2
    assert s.retries.tolist() == [0, 3]
    assert s.lat_n.tolist() == [0, 3]  # the agent's timed calls, not the user's or judge's
    assert s.lat_sum.tolist() == [0.0, 2.625] and s.lat_max.tolist() == [0.0, 2.0]


def test_sums_add_each_callers_own_calls_at_the_edges():
    """A hand-made chunk: a user call's latency is not the agent's, a judge's attempts are
    no retry, an episode with no call sums to zeros."""
    texts = [None, "r", "A", "agent", "user"]
    rows = np.array([
        # flags, seq, ts, run, endpoint, role, statuses, prompt, completion, cached, latency,
        # attempts
        [0, 0, 5.0, 1, 2, 3, 0, 10, 1, 0, 0.75, 5],
        [0, 1, 6.0, 1, 2, 4, 0, 20, 2, 0, 3.0, 2],
        [1, 0, 7.0, 1, 2, 4, 0, 30, 3, 0, 4.0, 7],
        [4, 2, -np.inf, 1, 2, 3, 0, 40, 4, 0, -np.inf, 0],
    ], dtype=np.float64)
    c = CallChunk(["x", "y", "z", "w"], np.array([2, 2, 2, 0]), rows, [("judge|J|m", None)],
                  texts, {"r": {}})
    assert c.source.tolist() == [0, 1, 2, 0]
    assert c.journals == ["", "judge|J|m"] and c.journal.tolist() == [0, 0, 1, 0]
    assert c.attempts_null.tolist() == [False, False, False, True]
    s = EpisodeSums(c, 4)  # "w" made no call: zeros, as long as the others
    assert s.retries.tolist() == [0, 0, 4 + 1, 0]
    assert s.lat_n.tolist() == [0, 0, 1, 0] and s.lat_sum.tolist() == [0.0, 0.0, 0.75, 0.0]
    assert s.lat_max.tolist() == [0.0, 0.0, 0.75, 0.0]
    assert s.judge_prompt.tolist() == [0, 0, 30, 0]
    assert s.judge_completion.tolist() == [0, 0, 3, 0] and s.judge_completion.dtype == np.int64
    assert s.priced.tolist() == [0, 0, 0, 0] and s.unpriced.tolist() == [1, 0, 3, 0]
    assert all(len(x) == 4 for x in s.cost.values())
    assert as_list(c.columns(["lx", "ly", "lz", "lw"])["ts"]) == [5.0, 6.0, 7.0, None]
    assert all(math.isnan(x) for x in c.cost.tolist())  # no price for A in run r
    assert c.row(3, None).latency_s is None and c.row(3, None).attempts is None
    assert c.row(0, None).attempts == 5 and c.row(0, None).latency_s == 0.75


def test_a_chunk_without_calls(store):
    c = read_calls(store, ["nothing"], prices_by_run(store.runs()))
    assert c.n == 0 and c.keys == ["nothing"]
    s = EpisodeSums(c, 1)
    assert s.priced.tolist() == [0] and s.lat_max.tolist() == [0.0]
    assert all(as_list(col) == [] for col in c.columns(["l"]).values())


def test_more_texts_than_an_export_packs_are_refused(store, monkeypatch):
    monkeypatch.setattr(calls_mod, "_PACK", 4)  # 16 text ids fit: 0..15
    real = store.fact_texts()
    assert max(real) < 15
    prices = prices_by_run(store.runs())
    monkeypatch.setattr(store, "fact_texts", lambda: {**real, 15: "padding"})
    with pytest.raises(StoreError) as err:
        read_calls(store, ["e1"], prices)
    assert str(err.value) == (f"run store {store.path}: 16 call texts, more than an export "
                              "reads")
    monkeypatch.setattr(store, "fact_texts", lambda: {**real, 14: "padding"})
    c = read_calls(store, ["e2", "e1"], prices)  # 15 texts: still packed two to a number
    assert _columns(c)["endpoint"] == ["A", "free", "A", "A", "J", "J", "A", "A"]


def test_a_chunk_of_some_episodes_reads_theirs_alone(chunk):
    store, _ = chunk
    c = read_calls(store, ["e1"], prices_by_run(store.runs()))
    assert c.n == 6 and set(c.ep.tolist()) == {0}
    assert _columns(c)["seq"] == [0, 1, 2, 3, 0, 0]
    c = read_calls(store, ["e2"], prices_by_run(store.runs()))
    assert _columns(c)["ts"] == [ts for _, ts in store.model_call_times(["e2"])]
    assert _columns(c)["ts"] != [ts for _, ts in store.model_call_times(["e1"])][:2]


@pytest.mark.parametrize("facts", [True, False])
def test_a_store_without_calls(tmp_path, monkeypatch, facts):
    with RunStore(tmp_path / "empty.sqlite") as s:
        s.begin_run("r", {})
        s.flush_sync()
        assert s.has_facts and s.fact_texts() == {}
        if not facts:
            monkeypatch.setattr(StoreReads, "has_facts", property(lambda self: False))
        c = read_calls(s, ["k"], prices_by_run(s.runs()))
    assert c.n == 0 and c.cost.tolist() == [] and c.ep.dtype == np.int64
    assert EpisodeSums(c, 1).retries.tolist() == [0]


@pytest.mark.parametrize("facts", [True, False])
def test_journals_of_any_shape_and_an_unpriced_hedged_call(tmp_path, monkeypatch, facts):
    """A judge's journal is ``judge|<judge>|<method>``; the method keeps any further '|', a
    part missing is null. A hedged call without a price is unpriced, not free."""
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {}, prices=PRICES)
        meta = EpisodeMeta(key="e", label="m|t1:hotel:en:e|0", model="m", benchmark="t1",
                           domain="hotel", task_id="e", lang="en", trial=0)
        s.select("r", [meta])
        s.episode_started(meta, run_id="r")
        s.event("e", 0, "model_call", {"role": "agent", "usage": {"prompt_tokens": 5},
                                        "stalls": HEDGED}, run_id="r", endpoint="free")
        for journal in ("judge|J|m|x", "judge|J", "judge"):
            s.event("e", 0, "model_call", {"role": "judge", "usage": {"prompt_tokens": 1}},
                    journal=journal, run_id="r", endpoint="J")
        s.flush_sync()
        if not facts:
            monkeypatch.setattr(StoreReads, "has_facts", property(lambda self: False))
        cols = _columns(read_calls(s, ["e"], prices_by_run(s.runs())))
    assert cols["judge"] == [None, None, "J", "J"]
    assert cols["judge_method"] == [None, None, None, "m|x"]
    assert cols["source"] == ["agent", "judge", "judge", "judge"]
    assert cols["cost_usd"] == [None, 1e-6, 1e-6, 1e-6]
