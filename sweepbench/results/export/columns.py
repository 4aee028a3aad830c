"""A chunk of an export table as columns, so that the table's largest part (a row per model
call) goes to Arrow in bulk instead of a Python dict per row.

A column is one of:

- a list of Python values (None: null), for the tables of a row per episode or judgment;
- ``Coded``: codes into a short list of texts (episode keys of a chunk, endpoints, roles);
- ``Numbers``: a numpy array and where it is null.

Timestamp columns hold Unix seconds; the writers turn them into timestamps. ``tolist``
gives the Python values a text writer (CSV, JSONL) writes, the same as the list would hold.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["Coded", "Column", "Numbers", "as_list", "coded", "length"]


class Coded(NamedTuple):
    """``texts[codes[i]]`` is row i's value (a text or None)."""

    codes: np.ndarray
    texts: list[str | None]

    def tolist(self) -> list[str | None]:
        texts = self.texts
        return [texts[c] for c in self.codes.tolist()]


class Numbers(NamedTuple):
    """``values[i]`` is row i's value unless ``null[i]`` (``null`` None: none is null)."""

    values: np.ndarray
    null: np.ndarray | None = None

    def tolist(self) -> list[Any]:
        values = self.values.tolist()
        if self.null is None:
            return values
        return [None if n else v for v, n in zip(values, self.null.tolist())]


Column = list | Coded | Numbers


def length(col: Column) -> int:
    return len(col) if isinstance(col, list) else len(col[0])


def as_list(col: Column) -> list:
    return col if isinstance(col, list) else col.tolist()


def coded(values: list[str | None]) -> Coded:
    """A list of texts with few distinct values, as codes."""
    index: dict[str | None, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64,
                        count=len(values))
    return Coded(codes, list(index))
