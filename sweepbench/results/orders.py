"""Orders of code arrays (episodes, rows, benchmarks) in linear time, for columns of millions
of calls: numpy's ``unique`` and default stable sort compare-sort every element, seconds at
17 million calls, where the codes are small integers that need no comparison."""

from __future__ import annotations

import numpy as np

__all__ = ["first_places", "stable_order"]


def stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")``: a radix sort when the keys fit 16 bits (a stable
    order is one order, whatever sorts it)."""
    if len(keys) and int(keys.min()) >= 0 and int(keys.max()) < 1 << 16:
        keys = keys.astype(np.uint16)
    return np.argsort(keys, kind="stable")


def first_places(codes: np.ndarray, size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_index=True)`` for non-negative integer codes (below ``size``,
    default their maximum + 1): the codes present, in order, and the place each first comes."""
    n = len(codes)
    if not n:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    first = np.full(int(codes.max()) + 1 if size is None else size, n, dtype=np.int64)
    np.minimum.at(first, codes, np.arange(n))
    present = np.flatnonzero(first < n)
    return present, first[present]
