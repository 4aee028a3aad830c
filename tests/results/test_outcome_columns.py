"""Outcomes as columns: texts coded in the order they first come, one array entry per
outcome with its exact dtype, and ``take`` keeping the tables."""

from __future__ import annotations

import numpy as np

from sweepbench.results.outcome_columns import OutcomeColumns, Texts
from sweepbench.results.stats import Outcome


def test_texts_number_values_in_the_order_they_first_come():
    t = Texts()
    assert [t.code("b"), t.code("a"), t.code("b"), t.code(""), t.code("a")] == [0, 1, 0, 2, 1]
    assert t.values == ["b", "a", ""]
    assert t.index == {"b": 0, "a": 1, "": 2}


def test_texts_codes_are_int64_and_go_on_from_earlier_codes():
    t = Texts()
    t.code("x")
    got = t.codes(["y", "x", "y", "z"])
    assert got.dtype == np.int64
    assert got.tolist() == [1, 0, 1, 2]
    assert t.values == ["x", "y", "z"]
    assert t.codes([]).tolist() == []


def _outcomes():
    return [Outcome("m1", "retail", "vb:retail:en:1", 0, True, score=0.5),
            Outcome("m2", "retail", "vb:retail:en:1", 1, False, error=True, benchmark="vb"),
            Outcome("m1", "air", "t1:air:en:2", 2, 1, score=0, unjudged=True),
            Outcome("m1", "air", "vb:retail:en:1", 3, 0, error=0, score=1)]


def test_of_codes_texts_and_keeps_every_field():
    cols = OutcomeColumns.of(iter(_outcomes()))
    assert len(cols) == 4
    assert (cols.models, cols.tasks, cols.domains, cols.benchmarks) == (
        ["m1", "m2"], ["vb:retail:en:1", "t1:air:en:2"], ["retail", "air"], ["", "vb"])
    assert cols.model.tolist() == [0, 1, 0, 0]
    assert cols.task.tolist() == [0, 0, 1, 0]
    assert cols.domain.tolist() == [0, 0, 1, 1]
    assert cols.benchmark.tolist() == [0, 1, 0, 0]
    assert cols.trial.tolist() == [0, 1, 2, 3]
    assert cols.passed.tolist() == [True, False, True, False]
    assert cols.error.tolist() == [False, True, False, False]
    assert cols.unjudged.tolist() == [False, False, True, False]
    assert cols.score.tolist() == [0.5, 0.0, 0.0, 1.0]
    assert cols.has_score.tolist() == [True, False, True, True]
    assert [c.dtype for c in cols.columns()] == [
        np.int64, np.int64, np.int64, np.int64, np.int64, np.bool_, np.bool_, np.bool_,
        np.float64, np.bool_]


def test_of_nothing_is_empty_columns_of_their_dtypes():
    cols = OutcomeColumns.of([])
    assert len(cols) == 0
    assert (cols.models, cols.tasks, cols.domains, cols.benchmarks) == ([], [], [], [])
    assert [(c.dtype, c.shape) for c in cols.columns()] == [
        (np.dtype(d), (0,)) for d in (np.int64,) * 5 + (bool,) * 3 + (np.float64, bool)]


def test_columns_are_in_their_documented_order():
    cols = OutcomeColumns.of(_outcomes())
    assert [c is getattr(cols, n) for c, n in zip(cols.columns(), (
        "model", "task", "domain", "benchmark", "trial", "passed", "error", "unjudged",
        "score", "has_score"), strict=True)] == [True] * 10


def test_take_selects_by_mask_or_indices_and_keeps_the_tables():
    cols = OutcomeColumns.of(_outcomes())
    by_mask = cols.take(np.array([False, True, False, True]))
    by_index = cols.take(np.array([3, 1]))
    assert len(by_mask) == 2
    assert [c.tolist() for c in by_mask.columns()] == [
        [1, 0], [0, 0], [0, 1], [1, 0], [1, 3], [False, False], [True, False], [False, False],
        [0.0, 1.0], [False, True]]
    assert [c.tolist() for c in by_index.columns()] == [
        [0, 1], [0, 0], [1, 0], [0, 1], [3, 1], [False, False], [False, True], [False, False],
        [1.0, 0.0], [True, False]]
    for got in (by_mask, by_index):
        assert got.models is cols.models and got.tasks is cols.tasks
        assert got.domains is cols.domains and got.benchmarks is cols.benchmarks
