"""What the call side of a report reads of each episode row, as codes into small tables: a
second process reads these few arrays instead of the rows themselves, whose pages it would
otherwise copy one by one (every read of a Python object writes its reference count)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sweepbench.results.outcome_columns import Texts

__all__ = ["ERROR", "RUNNING", "RowCodes"]

ERROR, RUNNING = 1, 2
"""``RowCodes.status`` codes besides 0 (done)."""

_STATUS = {"done": 0, "error": ERROR, "running": RUNNING}


class RowCodes(NamedTuple):
    """Per episode row, in the rows' order: ``keys``, ``status`` (0 done, ``ERROR``,
    ``RUNNING``), and ``name``, ``bench``, ``domain``, ``task`` as codes into ``names``,
    ``benches``, ``domains`` and ``tasks`` ("benchmark:domain:lang:task_id"), each table in
    the order its values first come."""

    keys: list[str]
    status: np.ndarray
    name: np.ndarray
    names: list[str]
    bench: np.ndarray
    benches: list[str]
    domain: np.ndarray
    domains: list[str]
    task: np.ndarray
    tasks: list[str]

    @classmethod
    def of(cls, rows: list[dict]) -> RowCodes:
        names, benches, domains, tasks = Texts(), Texts(), Texts(), Texts()
        n = len(rows)
        return cls(
            [r["episode_key"] for r in rows],
            np.fromiter((_STATUS[r["status"]] for r in rows), dtype=np.int8, count=n),
            names.codes(r["name"] for r in rows), names.values,
            benches.codes(r["benchmark"] for r in rows), benches.values,
            domains.codes(r["domain"] for r in rows), domains.values,
            tasks.codes(f"{r['benchmark']}:{r['domain']}:{r['lang']}:{r['task_id']}"
                        for r in rows), tasks.values)

    def index(self) -> dict[str, int]:
        """episode_key -> its row."""
        return {k: i for i, k in enumerate(self.keys)}
