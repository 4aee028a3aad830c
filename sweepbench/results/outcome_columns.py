"""A leaderboard's outcomes as columns (one array entry per episode, texts as codes into small
tables), so that ``stats.summarize`` and the report count a large store with numpy instead
of one Python object per episode. ``OutcomeColumns.of`` makes them of ``Outcome``s (the
public form); the report builds them from its episode rows directly."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["OutcomeColumns", "Texts"]


class Texts:
    """Codes for texts, numbered in the order they first come."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self.index: dict[str, int] = {}

    def code(self, value: str) -> int:
        i = self.index.get(value)
        if i is None:
            i = self.index[value] = len(self.values)
            self.values.append(value)
        return i

    def codes(self, values: Iterable[str]) -> np.ndarray:
        code = self.code
        return np.fromiter((code(v) for v in values), dtype=np.int64)


class OutcomeColumns:
    """Outcomes as arrays, in their order: ``model``, ``task``, ``domain``, ``benchmark``
    (codes into ``models``, ``tasks``, ``domains``, ``benchmarks``; a benchmark "" means the
    task key's), ``trial``, ``passed``, ``error``, ``unjudged``, ``score`` (float; meaningful
    where ``has_score``)."""

    __slots__ = ("models", "tasks", "domains", "benchmarks", "model", "task", "domain",
                 "benchmark", "trial", "passed", "error", "unjudged", "score", "has_score")

    def __init__(self, tables: Sequence[list[str]], columns: Sequence[np.ndarray]) -> None:
        self.models, self.tasks, self.domains, self.benchmarks = tables
        (self.model, self.task, self.domain, self.benchmark, self.trial, self.passed,
         self.error, self.unjudged, self.score, self.has_score) = columns

    def __len__(self) -> int:
        return len(self.model)

    def columns(self) -> tuple[np.ndarray, ...]:
        return (self.model, self.task, self.domain, self.benchmark, self.trial, self.passed,
                self.error, self.unjudged, self.score, self.has_score)

    def take(self, which: np.ndarray) -> OutcomeColumns:
        """The outcomes ``which`` (a mask or indices) selects, in order; same tables."""
        return OutcomeColumns((self.models, self.tasks, self.domains, self.benchmarks),
                              [c[which] for c in self.columns()])

    @classmethod
    def of(cls, outcomes: Iterable[Any]) -> OutcomeColumns:
        """Columns of ``Outcome``s (anything with their fields as attributes)."""
        rows = list(outcomes)
        models, tasks, domains, benches = Texts(), Texts(), Texts(), Texts()
        scores = [o.score for o in rows]
        return cls((models.values, tasks.values, domains.values, benches.values), [
            models.codes(o.model for o in rows), tasks.codes(o.task_key for o in rows),
            domains.codes(o.domain for o in rows), benches.codes(o.benchmark for o in rows),
            np.fromiter((o.trial for o in rows), dtype=np.int64, count=len(rows)),
            np.fromiter((bool(o.passed) for o in rows), dtype=bool, count=len(rows)),
            np.fromiter((bool(o.error) for o in rows), dtype=bool, count=len(rows)),
            np.fromiter((bool(o.unjudged) for o in rows), dtype=bool, count=len(rows)),
            np.fromiter((0.0 if s is None else float(s) for s in scores), dtype=np.float64,
                        count=len(rows)),
            np.fromiter((s is not None for s in scores), dtype=bool, count=len(rows))])
