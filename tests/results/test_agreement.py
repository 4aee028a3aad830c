"""Agreement of two judge runs (results/agreement.py): Cohen's κ from a confusion matrix and
from labels, the rubric decisions read from a judgment's details, and what is compared."""

from __future__ import annotations

import math
import warnings
from types import MappingProxyType

import pytest

from sweepbench.results.agreement import (
    Agreement,
    cohen_kappa,
    judge_agreement,
    kappa_from_confusion,
    rubric_decisions,
)


@pytest.mark.parametrize(("matrix", "kappa"), [
    ([[2, 0], [0, 2]], 1.0),
    ([[1, 1], [1, 1]], 0.0),
    ([[0, 2], [2, 0]], -1.0),
    ([[20, 5], [10, 15]], 0.4),  # po 0.7, pe 0.5
    ([[3, 1, 0], [0, 3, 1], [1, 0, 3]], 0.625),  # po 0.75, pe 1/3
])
def test_kappa_of_a_confusion_matrix(matrix, kappa) -> None:
    assert kappa_from_confusion(matrix) == pytest.approx(kappa, abs=1e-12)


@pytest.mark.parametrize("matrix", [[[5]], [[5, 0], [0, 0]], [[0, 0], [0, 7]]])
def test_one_label_throughout_has_no_kappa_and_no_warning(matrix) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not a 0/0 that numpy warns about
        assert math.isnan(kappa_from_confusion(matrix))


@pytest.mark.parametrize("matrix", [[1, 2], [[1, 2, 3], [4, 5, 6]], [[0, 0], [0, 0]], []])
def test_a_confusion_matrix_must_be_square_and_not_empty(matrix) -> None:
    with pytest.raises(ValueError, match="^need a non-empty square confusion matrix, got shape"):
        kappa_from_confusion(matrix)


def test_kappa_of_labels_counts_every_pair_whatever_the_labels() -> None:
    # pairs (T,T), (T,F), (F,F), (F,F): po 3/4; A 2 T 2 F, B 1 T 3 F: pe 1/2
    assert cohen_kappa([True, True, False, False], [True, False, False, False]) == 0.5
    assert cohen_kappa(["x", 1, None, "x"], ["x", 1, None, "x"]) == 1.0  # mixed labels
    assert math.isnan(cohen_kappa(["a", "a"], ["a", "a"]))
    # a label only one rater used: (a,a), (a,c), (b,b): po 2/3, pe 1/3
    assert cohen_kappa(["a", "a", "b"], ["a", "c", "b"]) == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize(("a", "b"), [([], []), ([1], [1, 2]), ([1, 2], [1])])
def test_kappa_of_labels_needs_two_lists_of_one_length(a, b) -> None:
    with pytest.raises(ValueError) as info:
        cohen_kappa(a, b)
    assert str(info.value) == (f"need two equal-length, non-empty label lists, got "
                               f"{len(a)}, {len(b)}")


@pytest.mark.parametrize(("details", "decisions"), [
    (None, None),
    ("rubric", None),
    ({}, None),
    ({"rubric": [True, False, 1, 0, 1.0, 0.0]}, [True, False, True, False, True, False]),
    ({"rubrics": [True]}, [True]),
    ({"nl_rubrics": [False]}, [False]),
    ({"rubric": [True], "rubrics": [False], "nl_rubrics": [False]}, [True]),  # in that order
    ({"rubrics": [True], "nl_rubrics": [False]}, [True]),
    ({"rubric": {"b": True, "a": False, "c": 1}}, [False, True, True]),  # in name order
    ({"rubric": [{"met": True}, {"satisfied": False}, {"passed": 1}, {"pass": 0},
                 {"value": True}]}, [True, False, True, False, True]),
    ({"rubric": [{"met": False, "satisfied": True, "passed": True, "pass": True,
                  "value": True}]}, [False]),  # "met" first
    ({"rubric": [{"satisfied": False, "passed": True, "pass": True, "value": True}]}, [False]),
    ({"rubric": [{"passed": False, "pass": True, "value": True}]}, [False]),
    ({"rubric": [{"pass": False, "value": True}]}, [False]),
    ({"rubric": [True, 2]}, None),  # not a decision: no rubric rather than a guess
    ({"rubric": [True, 0.5]}, None),
    ({"rubric": [True, "yes"]}, None),
    ({"rubric": [{"score": 1}]}, None),
    ({"rubric": "all met"}, None),
    ({"rubric": []}, []),
])
def test_rubric_decisions_are_read_from_the_details_or_not_at_all(details, decisions) -> None:
    assert rubric_decisions(details) == decisions


def j(passed, rubric=None) -> dict:
    return {"passed": passed, "details": None if rubric is None else {"rubric": rubric}}


def test_judge_agreement_compares_what_both_runs_judged() -> None:
    a = {"e1": j(True, [True, True]), "e2": j(True, [True, False]), "e3": j(False, [False]),
         "e4": j(None, [True]), "e5": j(True, [True, True, True]), "only-a": j(True, [True]),
         "e6": j(None, [True]), "e7": j(None), "e8": j(None, [True, False])}
    b = {"e1": j(True, [True, False]), "e2": j(False, [True, False]), "e3": j(False, [False]),
         "e4": j(True, [True]), "e5": j(False, [True]), "only-b": j(False, [False]),
         "e6": j(None), "e7": j(None, [False]), "e8": j(None, [True])}
    got = judge_agreement(a, b)
    # pass: e1 (T,T), e2 (T,F), e3 (F,F), e5 (T,F): po 1/2; A 3 T 1 F, B 1 T 3 F: pe 6/16
    # rubric: e1, e2, e3, e4 (e5's and e8's lengths differ; e6, e7 one side only): items (T,T) (T,F) (T,T) (F,F) (F,F) (T,T)
    assert got == Agreement(episodes=4, pass_agreement=0.5, pass_kappa=pytest.approx(0.2),
                            rubric_episodes=4, rubric_items=6, rubric_mismatched=2,
                            rubric_agreement=pytest.approx(5 / 6),
                            rubric_kappa=pytest.approx(2 / 3))


def test_nothing_to_compare_or_one_label_throughout_is_none() -> None:
    assert judge_agreement({"e": j(True)}, {"f": j(True)}) == Agreement(
        episodes=0, pass_agreement=None, pass_kappa=None, rubric_episodes=0, rubric_items=0,
        rubric_mismatched=0, rubric_agreement=None, rubric_kappa=None)
    same = judge_agreement({"e": j(True, [True])}, {"e": j(True, [True])})
    assert (same.episodes, same.pass_agreement, same.pass_kappa) == (1, 1.0, None)
    assert (same.rubric_items, same.rubric_agreement, same.rubric_kappa) == (1, 1.0, None)


def test_rubric_decisions_read_any_mapping_not_only_a_dict() -> None:
    # details, a rubric given as an object, and items, each a read-only mapping
    frozen = MappingProxyType
    assert rubric_decisions(frozen({"rubric": [True, 0]})) == [True, False]
    assert rubric_decisions({"rubric": frozen({"b": False, "a": True})}) == [True, False]
    assert rubric_decisions({"rubrics": [frozen({"met": False}), frozen({"pass": 1})]}) == \
        [False, True]
