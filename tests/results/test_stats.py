"""Pass metrics, validated against brute-force enumeration of all k-subsets."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import pytest

from sweepbench.results.stats import Outcome, pass_at_k, pass_hat_k, summarize


def brute(n: int, c: int, k: int) -> tuple[Fraction, Fraction]:
    """Over every k-subset of n trials (c of them passing): P(any passes), P(all pass)."""
    trials = [True] * c + [False] * (n - c)
    subsets = list(combinations(trials, k))
    return (Fraction(sum(any(s) for s in subsets), len(subsets)),
            Fraction(sum(all(s) for s in subsets), len(subsets)))


@pytest.mark.parametrize("n", range(1, 9))
def test_estimators_equal_enumeration_over_all_k_subsets(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            at, hat = brute(n, c, k)
            # both sides are the correctly rounded float of the same rational: exactly equal
            assert pass_at_k(n, c, k) == float(at), (n, c, k)
            assert pass_hat_k(n, c, k) == float(hat), (n, c, k)


def test_edge_cases():
    for n in (1, 4, 10):
        for k in range(1, n + 1):
            assert pass_at_k(n, 0, k) == 0.0 and pass_hat_k(n, 0, k) == 0.0  # c = 0
            assert pass_at_k(n, n, k) == 1.0 and pass_hat_k(n, n, k) == 1.0  # c = n
        for c in range(n + 1):
            assert pass_at_k(n, c, n) == (1.0 if c else 0.0)  # k = n: any of all trials
            assert pass_hat_k(n, c, n) == (1.0 if c == n else 0.0)  # k = n: all trials
            assert pass_at_k(n, c, 1) == pass_hat_k(n, c, 1) == c / n  # k = 1: the mean
    assert pass_at_k(5, 2, 2) == 1 - 3 / 10
    assert pass_hat_k(5, 2, 2) == 1 / 10


def test_large_n_stays_exact_and_bounded():
    # 1 - C(900, 50)/C(1000, 50): the binomials are huge ints, the result a plain float
    assert 0.99 < pass_at_k(1000, 100, 50) < 1.0
    assert 0.0 < pass_hat_k(1000, 990, 50) < 1.0


@pytest.mark.parametrize("n,c,k", [(3, 1, 4), (3, 1, 0), (3, 4, 1), (3, -1, 1), (0, 0, 1)])
def test_out_of_range_raises(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_non_int_raises():
    with pytest.raises(TypeError):
        pass_at_k(4.0, 1, 1)  # type: ignore[arg-type]


def rows(model: str, domain: str, task: str, results: str) -> list[Outcome]:
    """results: one char per trial, 'P' pass, 'F' fail, 'E' error."""
    return [Outcome(model, domain, task, i, ch == "P", ch == "E") for i, ch in enumerate(results)]


def test_summarize_by_hand():
    data = (rows("A", "delivery", "t1", "PPFF") + rows("A", "delivery", "t2", "PPPP")
            + rows("A", "ota", "t3", "FFFE") + rows("B", "ota", "t3", "PPF"))
    out = summarize(data)
    assert list(out) == ["A", "B"]

    a = out["A"]
    assert (a.k, a.tasks, a.incomplete_tasks, a.episodes, a.passed, a.errors) == (
        4, 3, 0, 12, 6, 1)
    assert a.avg == 6 / 12
    # pass@4 per task: 1, 1, 0 ; pass^4: 0, 1, 0
    assert a.pass_at_k == pytest.approx(2 / 3)
    assert a.pass_hat_k == pytest.approx(1 / 3)
    d = a.domains["delivery"]
    assert (d.k, d.tasks, d.episodes, d.errors, d.avg, d.pass_at_k, d.pass_hat_k) == (
        4, 2, 8, 0, 6 / 8, 1.0, 0.5)
    o = a.domains["ota"]
    assert (o.tasks, o.episodes, o.errors, o.avg, o.pass_at_k, o.pass_hat_k) == (
        1, 4, 1, 0.0, 0.0, 0.0)

    b = out["B"]  # its own k: 3 trials
    assert (b.k, b.tasks, b.episodes) == (3, 1, 3)
    assert b.pass_at_k == 1.0 and b.pass_hat_k == 0.0 and b.avg == pytest.approx(2 / 3)


def test_default_k_is_min_trials_and_estimators_use_all_n():
    data = rows("A", "d", "t1", "PF") + rows("A", "d", "t2", "PFFF")
    a = summarize(data)["A"]
    assert a.k == 2 and a.incomplete_tasks == 0 and a.episodes == 6
    assert a.pass_at_k == pytest.approx((pass_at_k(2, 1, 2) + pass_at_k(4, 1, 2)) / 2)
    assert a.pass_hat_k == 0.0


def test_explicit_k_reports_incomplete_tasks():
    data = rows("A", "d", "t1", "PP") + rows("A", "d", "t2", "PFPF")
    a = summarize(data, k=3)["A"]
    assert a.k == 3 and a.tasks == 2 and a.incomplete_tasks == 1
    assert a.episodes == 6 and a.avg == 4 / 6  # avg still covers every episode
    assert a.pass_at_k == pass_at_k(4, 2, 3)  # only t2 has 3 trials
    assert a.domains["d"].incomplete_tasks == 1
    none = summarize(data, k=5)["A"]
    assert none.incomplete_tasks == 2 and none.pass_at_k is None and none.pass_hat_k is None


def test_error_is_a_counted_failure_even_if_marked_passed():
    a = summarize([Outcome("A", "d", "t", 0, True, error=True),
                   Outcome("A", "d", "t", 1, True)])["A"]
    assert a.episodes == 2 and a.errors == 1 and a.passed == 1 and a.avg == 0.5


def test_rows_as_tuples_and_mappings():
    out = summarize([("A", "d", "t", 0, True),
                     {"model": "A", "domain": "d", "task_key": "t", "trial": 1, "passed": False}])
    assert out["A"].episodes == 2 and out["A"].avg == 0.5


def test_bad_input_raises():
    with pytest.raises(ValueError, match="duplicate"):
        summarize(rows("A", "d", "t", "PP") + rows("A", "d", "t", "P"))
    with pytest.raises(ValueError, match="domains"):
        summarize([Outcome("A", "d1", "t", 0, True), Outcome("A", "d2", "t", 1, True)])
    with pytest.raises(ValueError, match="k must be"):
        summarize(rows("A", "d", "t", "P"), k=0)
    assert summarize([]) == {}
