"""One episode's state: the shared read-only knowledge base plus a small overlay of changes.

The overlay holds only what this episode did: cached result sets (row ids, never copies of
rows), the reservations and orders it made, the inventory they consume and the log of
bookings, modifications and cancellations. A fresh overlay is a handful of empty dicts, so
thousands of concurrent episodes cost next to nothing. Every id an episode creates is a
function of this state (a per-prefix counter), never of the clock or a random draw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

import numpy as np

from sweepbench.benchmarks.t1.data.kb import KnowledgeBase

PAGE = 10  # results shown per search, filter or cache page


@dataclass
class Cached:
    """A cache entry: a result set of ``table`` rows, or a value the agent saved."""

    summary: str
    table: str = ""
    rows: np.ndarray | None = None
    render: Callable[["Episode", int], dict] | None = None
    value: Any = None


@dataclass
class Episode:
    kb: KnowledgeBase
    now: datetime
    cache: dict[str, Cached] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    records: dict[str, dict] = field(default_factory=dict)
    used: dict[tuple, int] = field(default_factory=dict)  # inventory taken: (table, row, part) -> n
    holds: dict[tuple, list] = field(default_factory=dict)  # (table, row) -> [(start, end, id)]
    log: list[dict] = field(default_factory=list)

    def remember(self, tool: str, table: str, rows: np.ndarray, summary: str,
                 render: Callable[["Episode", int], dict]) -> str:
        """Cache a result set as ``<tool>_results_<n>`` and return the key."""
        n = self.counters.get(tool, 0)
        self.counters[tool] = n + 1
        key = f"{tool}_results_{n}"
        self.cache[key] = Cached(summary, table, rows.astype(np.int32, copy=False), render)
        return key

    def page(self, key: str, rows: np.ndarray, render: Callable[["Episode", int], dict],
             offset: int = 0) -> dict:
        shown = rows[offset:offset + PAGE]
        out = {"cache_key": key, "total": int(len(rows)), "results": [render(self, int(r)) for r in shown]}
        if offset:
            out["offset"] = offset
        if len(rows) > offset + PAGE:
            out["more"] = f"{len(rows) - offset - PAGE} more; use get_results_from_cache with an offset"
        return out

    def next_id(self, prefix: str) -> str:
        n = self.counters.get(f"id:{prefix}", 0) + 1
        self.counters[f"id:{prefix}"] = n
        return f"{prefix}-{n:04d}"

    def summary(self) -> dict[str, str]:
        """Cache key -> what it holds, for the agent prompt's cache summary."""
        return {k: v.summary for k, v in self.cache.items()}

    def final(self) -> dict[str, Any]:
        return {
            "bookings": self.records,
            "modifications": [e for e in self.log if e["action"] == "modify"],
            "cancellations": [e for e in self.log if e["action"] == "cancel"],
            "cache_keys": sorted(self.cache),
        }
