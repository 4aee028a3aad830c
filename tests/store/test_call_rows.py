"""The chunks reads ask for keys in (store/call_rows.py): at most 900 a chunk, under SQLite's
parameter limit, every key once and in order; and a call row's optional fields."""

from __future__ import annotations

import msgspec

from sweepbench.store.call_rows import ModelCallRow, chunks


def test_chunks_default_to_900_keys_each_the_last_holding_the_rest():
    keys = [f"k{i}" for i in range(1801)]
    got = list(chunks(keys))
    assert [len(c) for c in got] == [900, 900, 1]
    assert [k for c in got for k in c] == keys


def test_exactly_900_keys_are_one_chunk():
    assert [len(c) for c in chunks(str(i) for i in range(900))] == [900]


def test_chunks_take_their_size_and_read_a_one_pass_iterator_once():
    assert list(chunks(iter("abcde"), 2)) == [["a", "b"], ["c", "d"], ["e"]]
    assert list(chunks(iter("ab"), 1)) == [["a"], ["b"]]


def test_no_keys_give_no_chunk():
    assert list(chunks([])) == []


def test_a_call_row_without_stalls_replica_or_failures_holds_none_and_travels_as_an_array():
    row = ModelCallRow("e", "j", "r", "ep", "agent", 10, 2, 1, 0.5, 1, "[200]")
    assert (row.stalls, row.replica, row.failures) == (None, None, None)
    assert msgspec.json.decode(msgspec.json.encode(row)) == [
        "e", "j", "r", "ep", "agent", 10, 2, 1, 0.5, 1, "[200]", None, None, None]
