"""One pass over the call facts (``FactScans.call_fact_arrays``) against the reads by chunks of
keys (``call_fact_chunks``): the same calls, in the same order, with the same numbers, the same
odd calls whole and the same calls left out and said; and exact columns of a small store."""

from __future__ import annotations

import numpy as np
import pytest

from sweepbench.store import call_rows, fact_scan, reads
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import EpisodeRecord, Usage
from tests.results.test_report_facts import odd_store

_COLUMNS = ("prompt", "completion", "cached", "latency", "has_attempts", "attempts", "odd")
_DTYPES = {"episode": np.int32, "judge": np.bool_, "prompt": np.int32, "completion": np.int32,
           "cached": np.int32, "latency": np.float64, "has_attempts": np.bool_,
           "attempts": np.int32, "odd": np.bool_}  # integers that fit held as int32


def by_chunks(store, keys) -> dict:
    """What ``call_fact_arrays`` must return, made of ``call_fact_chunks``' rows."""
    out = {"keys": [], "episode": [], "texts": [[], [], [], []], "judge": [], "rare": [],
           **{c: [] for c in _COLUMNS}}
    for chunk in store.call_fact_chunks(keys):
        for row in chunk.rows:
            key = chunk.keys[row[0]]
            if not out["keys"] or out["keys"][-1] != key:
                out["keys"].append(key)
            out["episode"].append(len(out["keys"]) - 1)
            out["judge"].append(bool(row[1]))
            for j in range(4):
                out["texts"][j].append(row[2 + j])
            for c, v in zip(_COLUMNS, row[6:], strict=True):
                out[c].append(v)
        out["rare"] += chunk.rare
    return out


def assert_same(got: fact_scan.CallFactArrays, want: dict) -> None:
    assert got.keys == want["keys"]
    assert got.rare == want["rare"]
    assert [t.tolist() for t in got.texts] == want["texts"]
    assert [t.dtype for t in got.texts] == [np.int32] * 4
    for name, dtype in _DTYPES.items():
        col = getattr(got, name)
        assert col.dtype == dtype, name
        assert col.tolist() == [dtype(v).item() for v in want[name]], name


@pytest.fixture(scope="module")
def odd(tmp_path_factory):
    path = tmp_path_factory.mktemp("scan") / "odd.sqlite"
    odd_store(path)
    return path


@pytest.mark.parametrize("chunk,span", [(900, 16_384), (3, 4), (5, 1), (2, 7)])
def test_one_pass_returns_what_the_reads_by_keys_return(odd, monkeypatch, chunk, span):
    small = lambda values, n=chunk: call_rows.chunks(values, n)
    monkeypatch.setattr(reads, "_chunks", small)
    monkeypatch.setattr(fact_scan, "chunks", small)
    monkeypatch.setattr(fact_scan, "_RANGE", span)
    with ReadOnlyStore(odd) as s:
        keys = [r["episode_key"] for r in s.episode_rows()]
    said = []
    for pick in (keys, keys[::-1], keys[1::2] + ["no such episode"], keys[3:4], []):
        with ReadOnlyStore(odd) as s:
            got = s.call_fact_arrays(iter(pick))
            said.append(s.damaged)
        with ReadOnlyStore(odd) as s:
            want = by_chunks(s, pick)
            assert s.damaged == said[-1]  # the same calls left out, in the same order
        assert_same(got, want)
    assert len(keys) == 13 and said[0] == [
        f"episode ep-{m}|vitabench:delivery:en:t1|0: journal '' row #99 (a model call) does "
        "not decode: left out" for m in "AB"]
    assert sorted(said[1]) == said[0] and said[3] == said[4] == []


def test_a_read_of_every_episode_holds_every_call_and_the_odd_ones_whole(odd):
    with ReadOnlyStore(odd) as s:
        keys = [r["episode_key"] for r in s.episode_rows()]
        got = s.call_fact_arrays(keys)
    assert len(got.episode) == 12 * 9 + 3 and len(got.keys) == 13
    assert got.odd.sum() == len(got.rare) == 12 * 3 + 0  # stalls/replica/failures: 3 per episode
    assert got.judge.sum() == 12
    assert sorted(np.unique(got.episode).tolist()) == list(range(13))


def _small(path) -> list[str]:
    """Two episodes: one with an agent, a user and a judge call, one with a single odd call;
    a third that made no call."""
    calls = {
        "e1": [({"role": "agent", "usage": {"prompt_tokens": 12, "completion_tokens": 3,
                                            "cached_prompt_tokens": 5},
                 "latency_s": 0.25, "attempts": 2, "statuses": [429, 200]}, "", "A"),
               ({"role": "user", "usage": {"prompt_tokens": 7}}, "", "U"),
               ({"role": "judge", "usage": {"prompt_tokens": 40, "completion_tokens": 4},
                 "latency_s": 1.5, "attempts": 1}, "judge|J|m", "J")],
        "e0": [({"role": "agent", "latency_s": 0.5, "replica": "http://b/v1",
                 "usage": {"completion_tokens": 9}}, "", "A")],
        "e2": []}
    with RunStore(path) as s:
        s.begin_run("r", {})
        for key, made in calls.items():
            meta = EpisodeMeta(key=key, label=f"A|t1:d:en:{key}|0", model="A", benchmark="t1",
                               domain="d", task_id=key, lang="en", trial=0)
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
            for seq, (payload, journal, endpoint) in enumerate(made):
                s.event(key, seq, "model_call", payload, journal=journal, run_id="r",
                        endpoint=endpoint)
            s.episode_finished(key, EpisodeRecord(
                run_id="r", model="A", benchmark="t1", domain="d", task_id=key, trial=0,
                termination="user_stop", turns=1, agent_usage=Usage(1, 1)))
        s.finish_run("r", "done")
    return list(calls)


def test_the_columns_of_a_small_store_exactly(tmp_path):
    _small(tmp_path / "s.sqlite")
    with ReadOnlyStore(tmp_path / "s.sqlite") as s:
        ids = {t: i for i, t in s.fact_texts().items()}
        got = s.call_fact_arrays(["e2", "e1", "e0"])  # one chunk, read in key order
        assert s.damaged == []
    assert got.keys == ["e0", "e1"]
    assert got.episode.tolist() == [0, 1, 1, 1]
    run, endpoint, role, statuses = (t.tolist() for t in got.texts)
    assert run == [ids["r"]] * 4
    assert endpoint == [ids["A"], ids["A"], ids["U"], ids["J"]]
    assert role == [ids["agent"], ids["agent"], ids["user"], ids["judge"]]
    assert statuses == [0, ids["[429,200]"], 0, 0]
    assert got.judge.tolist() == [False, False, False, True]
    assert got.prompt.tolist() == [0, 12, 7, 40]
    assert got.completion.tolist() == [9, 3, 0, 4]
    assert got.cached.tolist() == [0, 5, 0, 0]
    assert got.latency.tolist() == [0.5, 0.25, float("-inf"), 1.5]
    assert got.has_attempts.tolist() == [False, True, False, True]
    assert got.attempts.tolist() == [0, 2, 0, 1]
    assert got.odd.tolist() == [True, False, False, False]
    assert [(c.episode_key, c.journal, c.run_id, c.endpoint, c.role, c.replica)
            for c in got.rare] == [("e0", "", "r", "A", "agent", "http://b/v1")]


def test_episodes_without_calls_give_empty_columns_of_their_types(tmp_path):
    _small(tmp_path / "s.sqlite")
    with ReadOnlyStore(tmp_path / "s.sqlite") as s:
        for keys in (["e2"], [], ["unknown"]):
            got = s.call_fact_arrays(keys)
            assert got.keys == [] and got.rare == []
            assert [t.tolist() for t in got.texts] == [[], [], [], []]
            for name, dtype in _DTYPES.items():
                col = getattr(got, name)
                assert (col.dtype, col.shape) == (np.dtype(dtype), (0,)), name


def test_odd_calls_come_whole_in_journal_then_seq_order(tmp_path):
    """Odd calls journaled out of order, in two journals, with runs whose text ids do not
    follow their seq: the episode's own journal first, each by seq; statuses read back."""
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {})
        meta = EpisodeMeta(key="e", label="A|t1:d:en:e|0", model="A", benchmark="t1",
                           domain="d", task_id="e", lang="en", trial=0)
        s.select("r", [meta])
        s.episode_started(meta, run_id="r")
        for seq, journal, run, extra in (
                (1, "", "x", {"replica": "a", "statuses": [429, 200]}),
                (0, "judge|J|m", "x", {"stalls": {"hung": 1}}),
                (0, "", "y", {"replica": "b"}),
                (2, "", "y", {"latency_s": 0.5})):
            s.event("e", seq, "model_call", {"role": "agent", **extra}, journal=journal,
                    run_id=run, endpoint="A")
        s.episode_finished("e", EpisodeRecord(run_id="r", model="A", benchmark="t1", domain="d",
                                              task_id="e", trial=0, termination="user_stop"))
        s.finish_run("r", "done")
    with ReadOnlyStore(tmp_path / "s.sqlite") as s:
        got = s.call_fact_arrays(["e"])
        assert_same(got, by_chunks(s, ["e"]))
    assert [(c.journal, c.run_id, c.replica, c.statuses, c.stalls) for c in got.rare] == [
        ("", "y", "b", None, None), ("", "x", "a", "[429,200]", None),
        ("judge|J|m", "x", None, None, '{"hung":1}')]
    assert got.odd.tolist() == [True, True, False, True]


@pytest.mark.parametrize("events", [False, True])
def test_a_store_without_calls_gives_empty_columns(tmp_path, events):
    """No episode at all, or episodes whose journals hold no model call."""
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {})
        if events:
            meta = EpisodeMeta(key="e", label="A|t1:d:en:e|0", model="A", benchmark="t1",
                               domain="d", task_id="e", lang="en", trial=0)
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
            s.event("e", 0, "tool_call", {"name": "x"})
        s.finish_run("r", "done")
    with ReadOnlyStore(tmp_path / "s.sqlite") as s:
        for keys in ([], ["e"]):
            got = s.call_fact_arrays(keys)
            assert got.keys == [] and got.rare == []
            assert [(t.dtype, t.tolist()) for t in got.texts] == [(np.int32, [])] * 4
            for name, dtype in _DTYPES.items():
                col = getattr(got, name)
                assert (col.dtype, col.shape) == (np.dtype(dtype), (0,)), name


def test_integers_are_held_as_int32_only_when_every_one_fits():
    from sweepbench.store.fact_scan import small_ints

    fits = small_ints(np.array([0, -(1 << 31), (1 << 31) - 1], dtype=np.int64))
    assert fits.dtype == np.int32 and fits.tolist() == [0, -(1 << 31), (1 << 31) - 1]
    for big in ([1 << 31], [-(1 << 31) - 1], [5, 1 << 40]):  # a usage a server made up
        kept = small_ints(np.array(big, dtype=np.int64))
        assert kept.dtype == np.int64 and kept.tolist() == big
    assert small_ints(np.zeros(0, dtype=np.int64)).dtype == np.int32
    floats = np.array([1.5])
    assert small_ints(floats) is floats
