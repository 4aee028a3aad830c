"""``results/orders.py``: the linear-time orders are numpy's own, whatever the codes."""

from __future__ import annotations

import numpy as np
import pytest

from sweepbench.results.orders import first_places, stable_order


@pytest.mark.parametrize("low, high", [(0, 3), (0, 1 << 16), (0, (1 << 16) + 5), (-4, 9),
                                       (70_000, 70_003)])
def test_a_stable_order_is_numpys_stable_argsort(low, high):
    rng = np.random.default_rng(high)
    for dtype in (np.int32, np.int64):
        keys = rng.integers(low, high, size=5_000).astype(dtype)
        assert np.array_equal(stable_order(keys), np.argsort(keys, kind="stable"))
    assert stable_order(np.zeros(0, dtype=np.int64)).tolist() == []
    ties = np.array([2, 0, 2, 1, 0, 2])
    assert stable_order(ties).tolist() == [1, 4, 3, 0, 2, 5]  # ties kept in their order


@pytest.mark.parametrize("values", [1, 3, 50, 4_000])
def test_first_places_are_numpys_unique_with_index(values):
    rng = np.random.default_rng(values)
    codes = rng.integers(0, values, size=20_000)
    want = np.unique(codes, return_index=True)
    for size in (None, values + 7):
        got = first_places(codes, size)
        assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert [g.tolist() for g in first_places(np.array([5, 1, 5, 1, 0]))] == [[0, 1, 5], [4, 1, 0]]
    assert [g.tolist() for g in first_places(np.zeros(0, dtype=np.int64))] == [[], []]


def test_a_stable_order_at_the_edges_of_16_bits():
    # 65 536 does not fit 16 bits (it would wrap to 0), 65 535 does; -1 does not (65 535)
    assert stable_order(np.array([65_536, 0, 65_535, 0])).tolist() == [1, 3, 2, 0]
    assert stable_order(np.array([65_535, 0, 65_535, 1])).tolist() == [1, 3, 0, 2]
    assert stable_order(np.array([3, -1, 0, -1])).tolist() == [1, 3, 2, 0]
    assert stable_order(np.array([7])).tolist() == [0]


def test_no_codes_give_empty_integer_arrays_that_index():
    present, first = first_places(np.zeros(0, dtype=np.int64))
    assert present.dtype == first.dtype == np.int64
    assert np.arange(3)[present].tolist() == np.arange(3)[first].tolist() == []
