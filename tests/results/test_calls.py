"""The selected episodes' calls as columns: one entry per call in the store's order, texts as
codes into tables shared by every store, episodes numbered in the order of their first call,
the rare calls kept whole; by keys in chunks, or in one pass over a large share of a store."""

from __future__ import annotations

import numpy as np

from sweepbench.results.calls import NO_LATENCY, load_calls
from sweepbench.store.fact_scan import CallFactArrays
from sweepbench.store.reads import CallFactChunk

INF = float("-inf")


class FactStore:
    """Test double of a store's call-fact reads: the texts, the episode count, and the chunks
    or the one-pass arrays it was given; ``asked`` records which read was made, with its keys."""

    def __init__(self, texts, episodes, chunks=(), arrays=None) -> None:
        self.texts, self.episodes, self.chunks, self.arrays = texts, episodes, list(chunks), arrays
        self.asked: list[tuple[str, list[str]]] = []

    def fact_texts(self):
        return dict(self.texts)

    def episode_count(self):
        return self.episodes

    def call_fact_chunks(self, keys):
        self.asked.append(("chunks", keys))
        return iter(self.chunks)

    def call_fact_arrays(self, keys):
        self.asked.append(("arrays", keys))
        return self.arrays


TEXTS = {1: "run-a", 2: "ep-x", 3: "agent", 4: "200", 5: "judge"}
# (ep, judge, run, endpoint, role, statuses, prompt, completion, cached, latency, has attempts,
#  attempts, odd)
ROWS = [(7, 0, 1, 2, 3, 4, 10, 5, 2, 0.5, 1, 2, 0),
        (3, 1, 1, 2, 5, 0, 20, 6, 0, INF, 0, 0, 1),
        (7, 0, 1, 0, 3, 4, 30, 7, 1, 1.5, 1, 1, 0)]


NAMES = ("episode", "judge", "run", "endpoint", "role", "statuses", "prompt", "completion",
         "cached", "latency", "has_attempts", "attempts")


def columns(cols) -> dict:
    return {n: getattr(cols, n).tolist() for n in NAMES}


def dtypes(cols) -> list[str]:
    return [str(getattr(cols, n).dtype) for n in NAMES]


DTYPES = ["int32", "bool", "int32", "int32", "int32", "int32", "int32", "int32", "int32",
          "float64", "bool", "int32"]  # token counts that fit held as int32


def test_a_chunk_s_calls_become_columns_with_episodes_in_the_order_of_their_first_call():
    store = FactStore(TEXTS, 100, [CallFactChunk({7: "k2", 3: "k1"}, ROWS, ["the odd call"])])
    cols = load_calls([(store, ["k1", "k2"])])
    assert store.asked == [("chunks", ["k1", "k2"])]
    assert cols.keys == ["k2", "k1"] and len(cols) == cols.n == 3
    assert columns(cols) == {
        "episode": [0, 1, 0], "judge": [False, True, False], "run": [1, 1, 1],
        "endpoint": [2, 2, 0], "role": [3, 5, 3], "statuses": [4, 0, 4], "prompt": [10, 20, 30],
        "completion": [5, 6, 7], "cached": [2, 0, 1], "latency": [0.5, NO_LATENCY, 1.5],
        "has_attempts": [True, False, True], "attempts": [2, 0, 1]}
    assert dtypes(cols) == DTYPES
    assert cols.rare == {1: "the odd call"}
    texts = [None, "run-a", "ep-x", "agent", "200", "judge"]
    assert cols.runs == cols.endpoints == cols.roles == cols.status_texts == texts
    assert [cols.texts[c] for c in ("run", "endpoint", "role", "statuses")] == [texts] * 4


def test_stores_share_the_text_tables_and_the_episode_numbers():
    first = FactStore(TEXTS, 100, [CallFactChunk({7: "k2", 3: "k1"}, ROWS, ["odd-1"])])
    # another store numbers its texts its own way; a text it shares keeps its code
    second = FactStore({1: "run-b", 2: "ep-x"}, 100, [
        CallFactChunk({}, [], []),  # a chunk without calls
        CallFactChunk({0: "k1", 2: "k9"}, [(2, 0, 1, 2, 0, 0, 1, 1, 0, 2.0, 0, 0, 1),
                                           (0, 0, 2, 1, 0, 0, 3, 2, 1, 4.0, 1, 5, 1)],
                      ["odd-2", "odd-3"])])
    cols = load_calls([(first, ["k1", "k2"]), (second, ["k1", "k9"])])
    assert cols.keys == ["k2", "k1", "k9"] and len(cols) == 5
    assert cols.runs == [None, "run-a", "ep-x", "agent", "200", "judge", "run-b"]
    got = columns(cols)
    assert got["episode"] == [0, 1, 0, 2, 1]
    assert (got["run"][3:], got["endpoint"][3:]) == ([6, 2], [2, 6])
    assert got["prompt"] == [10, 20, 30, 1, 3] and got["attempts"] == [2, 0, 1, 0, 5]
    assert dtypes(cols) == DTYPES
    assert cols.rare == {1: "odd-1", 3: "odd-2", 4: "odd-3"}


def arrays(keys, episode, texts, **numbers) -> CallFactArrays:
    n = len(episode)
    fields = {"judge": np.zeros(n, bool), "prompt": np.zeros(n, np.int64),
              "completion": np.zeros(n, np.int64), "cached": np.zeros(n, np.int64),
              "latency": np.full(n, INF), "has_attempts": np.zeros(n, bool),
              "attempts": np.zeros(n, np.int64), "odd": np.zeros(n, bool), "rare": []}
    fields.update(numbers)
    return CallFactArrays(keys, np.asarray(episode, np.int64),
                          tuple(np.asarray(t, np.int64) for t in texts), **fields)


def test_a_quarter_of_a_store_s_episodes_or_more_is_read_in_one_pass():
    one = arrays(["k1", "k2"], [1, 0, 1], ([1, 1, 0], [2, 0, 2], [3, 5, 3], [4, 4, 0]),
                 judge=np.array([False, True, False]), prompt=np.array([7, 8, 9], np.int32),
                 completion=np.array([1, 2, 3]), cached=np.array([0, 1, 0]),
                 latency=np.array([0.25, INF, 3.0]), has_attempts=np.array([1, 0, 1]),
                 attempts=np.array([1, 0, 4]), odd=np.array([False, False, True]), rare=["odd"])
    store = FactStore(TEXTS, 8, arrays=one)
    cols = load_calls([(store, ["k1", "k2"])])  # 2 of 8: a quarter
    assert store.asked == [("arrays", ["k1", "k2"])]
    assert cols.keys == ["k1", "k2"] and len(cols) == 3
    assert columns(cols) == {
        "episode": [1, 0, 1], "judge": [False, True, False], "run": [1, 1, 0],
        "endpoint": [2, 0, 2], "role": [3, 5, 3], "statuses": [4, 4, 0], "prompt": [7, 8, 9],
        "completion": [1, 2, 3], "cached": [0, 1, 0], "latency": [0.25, NO_LATENCY, 3.0],
        "has_attempts": [True, False, True], "attempts": [1, 0, 4]}
    assert dtypes(cols) == DTYPES
    assert cols.rare == {2: "odd"}
    fewer = FactStore(TEXTS, 9, [CallFactChunk({7: "k1"}, ROWS[:1], [])], arrays=one)
    assert len(load_calls([(fewer, ["k1", "k2"])])) == 1 and fewer.asked[0][0] == "chunks"


def test_one_pass_and_chunks_share_the_tables_and_numbering():
    chunked = FactStore(TEXTS, 100, [CallFactChunk({7: "k2", 3: "k1"}, ROWS, ["odd-1"])])
    whole = FactStore({1: "run-b", 3: "agent"}, 1, arrays=arrays(
        ["k3", "k1"], [0, 1], ([1, 3], [0, 0], [3, 3], [0, 0]), odd=np.array([True, False]),
        rare=["odd-2"]))
    empty = FactStore({}, 1, arrays=arrays([], [], ([], [], [], [])))
    cols = load_calls([(chunked, ["k1", "k2"]), (whole, ["k3", "k1"]), (empty, ["k4"])])
    assert cols.keys == ["k2", "k1", "k3"] and len(cols) == 5
    got = columns(cols)
    assert got["episode"] == [0, 1, 0, 2, 1] and got["run"] == [1, 1, 1, 6, 3]
    assert got["role"] == [3, 5, 3, 3, 3]
    assert cols.rare == {1: "odd-1", 3: "odd-2"}
    assert dtypes(cols) == DTYPES


def test_the_stores_after_one_read_in_one_pass_are_read_too():
    whole = FactStore(TEXTS, 1, arrays=arrays(["k3"], [0], ([1], [2], [3], [4])))
    chunked = FactStore(TEXTS, 100, [CallFactChunk({7: "k2"}, ROWS[:1], [])])
    cols = load_calls([(whole, ["k3"]), (chunked, ["k2"])])
    assert cols.keys == ["k3", "k2"] and columns(cols)["prompt"] == [0, 10]
    assert chunked.asked == [("chunks", ["k2"])]


def test_no_calls_are_empty_columns_of_their_types():
    for parts in ([], [(FactStore({}, 10, [CallFactChunk({}, [], [])]), ["k"])]):
        cols = load_calls(parts)
        assert len(cols) == 0 and cols.keys == [] and cols.rare == {}
        assert all(v == [] for v in columns(cols).values())
        assert dtypes(cols) == DTYPES
