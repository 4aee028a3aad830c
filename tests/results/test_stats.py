"""Pass metrics, validated against brute-force enumeration of all k-subsets; summarize's rows
by hand. Over 600 lines: one test file for the module's estimators, bootstrap and rows."""

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
    # one k for the leaderboard: B's task has 3 trials, so every row is at k = 3
    assert (a.k, a.tasks, a.incomplete_tasks, a.episodes, a.passed, a.errors) == (
        3, 3, 0, 12, 6, 1)
    assert a.avg == (2 / 4 + 4 / 4 + 0 / 4) / 3
    # pass@3 per task: 1 - C(2,3)/C(4,3) = 1, 1, 0 ; pass^3: C(2,3)/C(4,3) = 0, 1, 0
    assert a.pass_at_k == pytest.approx(2 / 3)
    assert a.pass_hat_k == pytest.approx(1 / 3)
    d = a.domains["delivery"]
    assert (d.k, d.tasks, d.episodes, d.errors, d.avg, d.pass_at_k, d.pass_hat_k) == (
        3, 2, 8, 0, 6 / 8, 1.0, 0.5)
    o = a.domains["ota"]
    assert (o.tasks, o.episodes, o.errors, o.avg, o.pass_at_k, o.pass_hat_k) == (
        1, 4, 1, 0.0, 0.0, 0.0)

    b = out["B"]
    assert (b.k, b.tasks, b.episodes) == (3, 1, 3)
    assert b.pass_at_k == 1.0 and b.pass_hat_k == 0.0 and b.avg == pytest.approx(2 / 3)


def test_default_k_is_min_trials_and_estimators_use_all_n():
    data = rows("A", "d", "t1", "PF") + rows("A", "d", "t2", "PFFF")
    a = summarize(data)["A"]
    assert a.k == 2 and a.incomplete_tasks == 0 and a.episodes == 6
    assert a.pass_at_k == pytest.approx((pass_at_k(2, 1, 2) + pass_at_k(4, 1, 2)) / 2)
    assert a.pass_hat_k == 0.0


def test_explicit_k_marks_the_row_incomplete_rather_than_dropping_tasks():
    data = rows("A", "d", "t1", "PP") + rows("A", "d", "t2", "PFPF")
    a = summarize(data, k=3)["A"]
    assert a.k == 3 and a.tasks == 2 and a.incomplete_tasks == 1
    assert a.episodes == 6 and a.avg == (1.0 + 0.5) / 2  # Avg@k: every task, equal weight
    # t1 cannot support k = 3: no Pass@3 from t2 alone (it would read 0.833 for the row)
    assert a.pass_at_k is None and a.pass_hat_k is None
    assert "pass_at_k" not in a.intervals and a.intervals["avg"]["population"]
    assert a.domains["d"].incomplete_tasks == 1 and a.domains["d"].pass_at_k is None
    assert summarize(data, k=2)["A"].pass_at_k == (pass_at_k(2, 2, 2) + pass_at_k(4, 2, 2)) / 2


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


# ---- vectorised curves, MSE vs k, bootstrap, paired test, κ -------------------------------

import math  # noqa: E402

import numpy as np  # noqa: E402

from sweepbench.results import intervals  # noqa: E402

from sweepbench.results.stats import (  # noqa: E402
    cohen_kappa,
    judge_agreement,
    kappa_from_confusion,
    mse_vs_k,
    paired_bootstrap,
    pass_curves,
    rubric_decisions,
)


def test_pass_curves_match_the_exact_estimators():
    for n in range(1, 9):
        c = np.arange(n + 1)
        at, hat = pass_curves(np.full(n + 1, n), c, n + 2)
        for ci in range(n + 1):
            for k in range(1, n + 1):
                assert at[ci, k - 1] == pytest.approx(pass_at_k(n, ci, k), abs=1e-15)
                assert hat[ci, k - 1] == pytest.approx(pass_hat_k(n, ci, k), abs=1e-15)
            assert np.isnan(at[ci, n:]).all() and np.isnan(hat[ci, n:]).all()  # k > n
    with pytest.raises(ValueError):
        pass_curves([3], [4], 2)


def brute_mse(x: np.ndarray, k: int) -> Fraction:
    """Over every k-combination of runs (columns), exactly, in rationals."""
    n = x.shape[1]
    runs = [Fraction(int(v)) / x.shape[0] for v in (x * 1).sum(axis=0)]
    mu = sum(runs) / n
    errs = [(sum(runs[i] for i in s) / k - mu) ** 2 for s in combinations(range(n), k)]
    return sum(errs) / len(errs)


@pytest.mark.parametrize("tasks,n", [(1, 2), (3, 4), (5, 6), (7, 8)])
def test_mse_vs_k_equals_enumeration_over_all_k_combinations(tasks, n):
    rng = np.random.default_rng(tasks * 10 + n)
    x = (rng.random((tasks, n)) < 0.5).astype(int)
    exact = mse_vs_k(x, method="exact")
    enum = mse_vs_k(x, method="enumerate")
    for k in range(1, n + 1):
        want = float(brute_mse(x, k))
        assert exact[k - 1] == pytest.approx(want, rel=1e-12, abs=1e-15), k
        assert enum[k - 1] == pytest.approx(want, rel=1e-12, abs=1e-15), k
    assert exact[-1] == pytest.approx(0.0, abs=1e-15)  # all n runs: no error


def test_mse_vs_k_fractional_scores_and_sampling():
    rng = np.random.default_rng(3)
    x = rng.random((20, 10))  # rubric-level scores, not just 0/1
    exact, enum = mse_vs_k(x, 8), mse_vs_k(x, 8, method="enumerate")
    np.testing.assert_allclose(exact, enum, rtol=1e-10)
    sampled = mse_vs_k(x, 8, method="sample", samples=20000, seed=1)
    np.testing.assert_allclose(sampled, exact, rtol=0.1)
    np.testing.assert_array_equal(sampled, mse_vs_k(x, 8, method="sample", samples=20000, seed=1))
    assert not np.array_equal(sampled, mse_vs_k(x, 8, method="sample", samples=20000, seed=2))


def test_mse_ratio_reproduces_vitabench_77_5_percent():
    """VitaBench §5.1: 32 trials, k=4 cuts the MSE of k=1 by 77.5% (closed form: 77.4%)."""
    x = (np.random.default_rng(0).random((100, 32)) < 0.4).astype(float)
    mse = mse_vs_k(x, 20)
    assert len(mse) == 20
    assert 1 - mse[3] / mse[0] == pytest.approx(1 - 28 / (4 * 31))
    assert 0.77 < 1 - mse[3] / mse[0] < 0.78
    assert np.all(np.diff(mse) < 0)  # more runs, less error


def test_mse_against_the_true_mean_is_s2_over_k_and_never_0():
    """Against the n-run mean the last point is 0 by construction ([1, 1/3, 1/9, 0] x MSE(1)
    with 4 runs); against the true mean, estimated, it is s^2/k: s^2/n at k = n."""
    x = (np.random.default_rng(2).random((30, 4)) < 0.5).astype(float)
    runs = x.mean(axis=0)
    s2 = float(np.var(runs, ddof=1))
    paper = mse_vs_k(x)
    assert (paper / paper[0]).tolist() == pytest.approx([1, 1 / 3, 1 / 9, 0])
    for method in ("exact", "enumerate"):
        assert mse_vs_k(x, against="true_mean", method=method).tolist() == pytest.approx(
            [s2 / k for k in (1, 2, 3, 4)])
    sampled = mse_vs_k(x, against="true_mean", method="sample", samples=20000, seed=1)
    assert sampled.tolist() == pytest.approx([s2 / k for k in (1, 2, 3, 4)], rel=0.05)
    # the paper's 77.4% at 32 runs becomes 75% against the true mean
    x32 = (np.random.default_rng(0).random((100, 32)) < 0.4).astype(float)
    ours = mse_vs_k(x32, against="true_mean")
    assert 1 - ours[3] / ours[0] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="against must be"):
        mse_vs_k(x, against="n_runs")
    with pytest.raises(ValueError, match="needs >= 2 runs"):
        mse_vs_k(x[:, :1], against="true_mean")


def test_mse_vs_k_bad_input():
    with pytest.raises(ValueError, match="k_max"):
        mse_vs_k(np.zeros((2, 3)), 4)
    with pytest.raises(ValueError, match="method"):
        mse_vs_k(np.zeros((2, 3)), method="guess")
    with pytest.raises(ValueError, match="too many"):
        mse_vs_k(np.zeros((2, 40)), 20, method="enumerate")
    assert mse_vs_k(np.ones((3, 1))).tolist() == [0.0]


def test_paired_bootstrap_p_values():
    rng = np.random.default_rng(5)
    a = rng.random(50)
    same = paired_bootstrap(a, a, seed=1)
    assert same.p_value == 1.0 and same.diff == 0.0 and same.ci95 == [0.0, 0.0]
    better = np.clip(a + 0.3, 0, 1)
    diff = paired_bootstrap(better, a, seed=1)
    assert diff.p_value < 0.001 and diff.diff > 0.2 and diff.ci95[0] > 0
    assert paired_bootstrap(a, better, seed=1).diff == pytest.approx(-diff.diff)
    # two models drawn from one distribution: p is roughly uniform, rarely small
    ps = np.array([paired_bootstrap(rng.binomial(4, 0.5, 60) / 4, rng.binomial(4, 0.5, 60) / 4,
                                    n_boot=1000, seed=i).p_value for i in range(200)])
    assert np.mean(ps < 0.05) < 0.12 and 0.35 < np.mean(ps > 0.5) < 0.65
    x, y = rng.random(30), rng.random(30)
    assert paired_bootstrap(x, y, seed=2) == paired_bootstrap(x, y, seed=2)
    with pytest.raises(ValueError):
        paired_bootstrap([1, 0], [1])


def test_kappa_by_hand():
    # 50 items: A yes/B yes 20, A yes/B no 5, A no/B yes 10, A no/B no 15
    m = [[20, 5], [10, 15]]
    po = 35 / 50
    pe = (25 / 50) * (30 / 50) + (25 / 50) * (20 / 50)  # = 0.5
    assert kappa_from_confusion(m) == pytest.approx((po - pe) / (1 - pe)) == pytest.approx(0.4)
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    # three categories, hand-computed: po = .7, pe = .33, κ = .37/.67
    m3 = [[10, 2, 3], [1, 8, 4], [2, 3, 7]]
    assert kappa_from_confusion(m3) == pytest.approx(((25 / 40) - (15 * 13 + 13 * 13 + 12 * 14)
                                                      / 1600) / (1 - (15 * 13 + 13 * 13 + 12 * 14)
                                                                 / 1600))
    assert cohen_kappa([1, 0, 1], [1, 0, 1]) == 1.0
    assert cohen_kappa([1, 0], [0, 1]) == -1.0
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))  # one label throughout: undefined


def test_rubric_decisions_formats():
    assert rubric_decisions({"rubric": [1, 0, True]}) == [True, False, True]
    assert rubric_decisions({"nl_rubrics": [{"met": True}, {"met": False}]}) == [True, False]
    # the rubric judge's details: {"rubrics": [{"rubric": text, "met": bool, ...}], ...}
    assert rubric_decisions({"rubrics": [{"rubric": "near", "met": False, "window": 2}],
                             "calls": 3}) == [False]
    assert rubric_decisions({"rubrics": {"b": False, "a": True}}) == [True, False]
    assert rubric_decisions({"rubric": ["yes"]}) is None
    assert rubric_decisions({"other": 1}) is None and rubric_decisions(None) is None


def test_judge_agreement():
    a = {"e1": {"passed": True, "details": {"rubric": [1, 1, 0]}},
         "e2": {"passed": False, "details": {"rubric": [1, 0]}},
         "e3": {"passed": True, "details": {"rubric": [1]}},
         "e4": {"passed": None, "details": {}}}
    b = {"e1": {"passed": True, "details": {"rubric": [1, 0, 0]}},
         "e2": {"passed": True, "details": {"rubric": [1, 0]}},
         "e3": {"passed": True, "details": {"rubric": [1, 1]}},  # different length: left out
         "e4": {"passed": True, "details": {}}, "e5": {"passed": True, "details": {}}}
    g = judge_agreement(a, b)
    assert (g.episodes, g.rubric_episodes, g.rubric_items, g.rubric_mismatched) == (3, 2, 5, 1)
    assert g.pass_agreement == pytest.approx(2 / 3)
    assert g.pass_kappa == pytest.approx(cohen_kappa([1, 0, 1], [1, 1, 1]))
    assert g.rubric_kappa == pytest.approx(cohen_kappa([1, 1, 0, 1, 0], [1, 0, 0, 1, 0]))
    assert judge_agreement({}, b).pass_kappa is None


def test_summarize_scores_ci_curves_and_benchmarks():
    data = [Outcome("A", "delivery", "vitabench:delivery:en:t1", i, p, score=s)
            for i, (p, s) in enumerate([(True, 1.0), (False, 0.5), (True, None), (False, 0.25)])]
    data += [Outcome("A", "hotel", "t1:hotel:en:x", i, True, error=(i == 0), score=0.9,
                     benchmark="t1") for i in range(4)]
    a = summarize(data)["A"]
    assert a.scored == 6  # 3 scored delivery episodes, 3 hotel ones (the error does not count)
    assert a.score == pytest.approx((1.0 + 0.5 + 0.25 + 0.9 * 3) / 8)
    assert a.ci95[0] <= a.avg <= a.ci95[1]
    assert len(a.pass_at_k_curve) == len(a.mse_vs_k) == 4
    assert a.pass_at_k_curve[0] == pytest.approx(a.avg) == pytest.approx(a.pass_hat_k_curve[0])
    assert a.pass_at_k_curve[-1] == pytest.approx(a.pass_at_k)
    assert sorted(a.benchmarks) == ["t1", "vitabench"]
    assert a.benchmarks["t1"].domains["hotel"].avg == 0.75
    assert a.benchmarks["vitabench"].score == pytest.approx(1.75 / 4)
    assert summarize(rows("B", "d", "t", "PF"))["B"].score is None
    single = summarize(rows("B", "d", "t", "P"))["B"]
    assert single.mse_vs_k is None and single.pass_at_k_curve == [1.0]


# ---- what the mutation runs showed untested (scripts/mutate.py) ----------------------------

import warnings  # noqa: E402


@pytest.mark.parametrize("name,args", [("n", (4.0, 1, 1)), ("c", (4, 1.0, 1)), ("k", (4, 1, 1.0)),
                                       ("n", (True, 1, 1)), ("k", (4, 1, True))])
def test_non_int_is_named(name, args):
    with pytest.raises(TypeError, match=rf"^{name} must be an int"):
        pass_at_k(*args)


@pytest.mark.parametrize("n,c,k,match", [(0, 0, 1, r"^n must be >= 1, got n=0"),
                                         (3, 4, 1, r"^c must be in \[0, n\], got c=4, n=3"),
                                         (3, 1, 4, r"^k must be in \[1, n\], got k=4, n=3")])
def test_out_of_range_is_named(n, c, k, match):
    with pytest.raises(ValueError, match=match):
        pass_hat_k(n, c, k)


def test_pass_curves_validate_every_task_and_never_warn():
    for n, c in (([3, 0], [1, 0]), ([3, 3], [1, -1]), ([3, 2], [1, 3])):
        with pytest.raises(ValueError, match="^need n >= 1 and 0 <= c <= n for every task$"):
            pass_curves(n, c, 2)
    with pytest.raises(ValueError, match="k_max must be >= 1, got 0"):
        pass_curves([3], [1], 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # k beyond n is NaN, not a 0/0 with a RuntimeWarning
        at, hat = pass_curves([2, 3], [1, 3], 6)
    assert np.isnan(at[0, 2:]).all() and np.isnan(hat[1, 3:]).all()
    assert at[1, :3].tolist() == [1.0, 1.0, 1.0]
    _, hat = pass_curves([4], [0], 4)  # never passed: +0.0 for every k, never a "-0.0" in a report
    assert hat.tolist() == [[0.0] * 4] and not np.signbit(hat).any()


def test_mse_vs_k_input_shapes():
    x = np.array([1.0, 0.0, 1.0, 1.0])
    np.testing.assert_array_equal(mse_vs_k(x), mse_vs_k(x[None, :]))  # one task, as a row
    for bad in (np.zeros((0, 3)), np.zeros((3, 0)), np.zeros((2, 2, 2))):
        with pytest.raises(ValueError, match="non-empty"):
            mse_vs_k(bad)
    with pytest.raises(ValueError, match="samples must be >= 1, got 0"):
        mse_vs_k(x, method="sample", samples=0)
    assert mse_vs_k(x, method="sample", samples=1).shape == (4,)


def test_sampling_defaults_are_documented_and_deterministic():
    x = np.random.default_rng(4).random((5, 6))
    np.testing.assert_array_equal(mse_vs_k(x, method="sample"),
                                  mse_vs_k(x, method="sample", samples=4000, seed=0))
    a, b = [1.0, 0.0, 0.5, 1.0], [0.0, 0.0, 1.0, 0.5]
    assert paired_bootstrap(a, b) == paired_bootstrap(a, b, n_boot=10_000, seed=0)


def test_paired_bootstrap_p_value_is_never_zero_and_reports_its_inputs():
    a, b = np.ones(40), np.zeros(40)
    assert paired_bootstrap(a, b).p_value == 1 / 10_001  # every replicate is as extreme: (0+1)/(B+1)
    assert paired_bootstrap(a, b, n_boot=99).p_value == 0.01
    # d = [1, 0]: every sign pattern has |mean| = 0.5, as extreme as observed: p = 1; the
    # bootstrap replicates are 0, 0.5 and 1
    two = paired_bootstrap([1, 0], [0, 0], n_boot=4000, seed=3)
    assert two.p_value == 1.0 and two.ci95 == [0.0, 1.0]
    r = paired_bootstrap([True, False, True], [False, False, True])  # booleans are 0/1 scores
    assert (r.tasks, r.mean_a, r.mean_b, r.diff) == (3, 2 / 3, 1 / 3, pytest.approx(1 / 3))
    assert paired_bootstrap([0.7], [0.2]).diff == pytest.approx(0.5)  # one task is allowed
    for x, y in (([], []), ([1, 0], [1])):
        with pytest.raises(ValueError, match="equal-length, non-empty score lists"):
            paired_bootstrap(x, y)


def test_kappa_input_checks_and_degenerate_tables():
    for bad in ([[1, 2, 3], [4, 5, 6]], [1, 2], [[0, 0], [0, 0]], [[]]):
        with pytest.raises(ValueError, match="non-empty square confusion matrix"):
            kappa_from_confusion(bad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one label throughout: NaN, not a 0/0 warning
        assert math.isnan(kappa_from_confusion([[1, 0], [0, 0]]))  # a single item
        assert math.isnan(kappa_from_confusion([[0, 0], [0, 7]]))
    with pytest.raises(ValueError, match="equal-length, non-empty label lists"):
        cohen_kappa([1, 0], [1])
    with pytest.raises(ValueError, match="equal-length, non-empty label lists"):
        cohen_kappa([], [])
    # any hashable labels, of mixed types
    assert cohen_kappa([1, "x", None, 1], [1, "x", None, "x"]) == pytest.approx(
        kappa_from_confusion([[1, 1, 0], [0, 1, 0], [0, 0, 1]]))


def test_rubric_decisions_refuse_what_they_do_not_understand():
    assert rubric_decisions({"rubric": [{"other": True}]}) is None
    assert rubric_decisions({"rubric": [0.5]}) is None
    assert rubric_decisions({"rubric": [1.0, 0]}) == [True, False]


def test_judge_agreement_edges():
    a = {"e1": {"passed": True, "details": {"rubric": [1]}},
         "e2": {"passed": True, "details": {"rubric": [1]}},
         "e3": {"passed": True, "details": {"rubric": [1, 0]}},
         "e4": {"passed": True, "details": {"rubric": [1, 1]}}}
    b = {"e1": {"passed": True, "details": {}},  # rubric on one side only: not compared
         "e2": {"passed": True, "details": {"rubric": [1, 1]}},
         "e3": {"passed": True, "details": {"rubric": [1]}},
         "e4": {"passed": True, "details": {"rubric": [1, 0]}}}
    g = judge_agreement(a, b)
    assert (g.episodes, g.pass_agreement, g.pass_kappa) == (4, 1.0, None)  # κ undefined: None
    assert (g.rubric_episodes, g.rubric_items, g.rubric_mismatched) == (1, 2, 2)
    assert g.rubric_agreement == 0.5


def test_summarize_intervals_are_the_intervals_module_on_per_task_values():
    rng = np.random.default_rng(9)
    trials = rng.integers(1, 9, 30)
    passes = rng.binomial(trials, 0.6)
    data = [row for t, (n, c) in enumerate(zip(trials, passes))
            for row in rows("A", "d", f"t{t:02d}", "P" * c + "F" * (n - c))]
    a = summarize(data)["A"]
    assert a.avg == pytest.approx(np.mean(passes / trials))
    assert a.ci95 == a.intervals["avg"]["population"] == intervals.population(passes / trials)
    assert a.intervals["avg"]["fixed_set"] == intervals.fixed_set(trials, passes)
    k = int(trials.min())
    at = [pass_at_k(int(n), int(c), k) for n, c in zip(trials, passes)]
    assert a.intervals["pass_at_k"] == {"population": intervals.population(at),
                                        "fixed_set": intervals.fixed_set_bound(at)}


def test_summarize_mse_curve_length():
    data = rows("A", "d", "t1", "PPFF") + rows("A", "d", "t2", "PFPP")
    assert len(summarize(data)["A"].mse_vs_k) == 4
    assert len(summarize(data, mse_k_max=2)["A"].mse_vs_k) == 2
    assert len(summarize(data, mse_k_max=9)["A"].mse_vs_k) == 4  # capped at the trials there are
    two = summarize(rows("A", "d", "t1", "PF"))["A"]  # two trials are enough for a curve
    # runs score 1 and 0: s^2 = 0.5 (ddof 1); against the true mean MSE(k) = s^2 / k, and
    # the last point is not 0 (against the 2-run mean it would be [0.25, 0.0])
    assert two.mse_vs_k == [0.5, 0.25]


def test_summarize_k_must_be_a_positive_int():
    data = rows("A", "d", "t1", "PF")
    assert summarize(data, k=1)["A"].pass_at_k == 0.5
    for k in (True, 1.5, 0, -1):
        with pytest.raises(ValueError, match="k must be an int >= 1"):
            summarize(data, k=k)


def test_benchmark_of_an_outcome():
    out = summarize([Outcome("A", "d", "t1:hotel:en:x", 0, True),
                     Outcome("A", "d", "t1:hotel:en:y", 0, True, benchmark="other"),
                     Outcome("A", "d", "plain", 0, False)])["A"]
    assert sorted(out.benchmarks) == ["-", "other", "t1"]


def test_summarize_mse_k_max_must_be_a_positive_int():
    data = rows("A", "d", "t1", "PPFF")
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="mse_k_max must be an int >= 1"):
            summarize(data, mse_k_max=bad)
    assert summarize(data, mse_k_max=1)["A"].mse_vs_k == [pytest.approx(1 / 3)]  # s^2 of 1,1,0,0


# ---- summarize by hand: every field of a row, its domains and benchmarks -------------------

def _row():
    from sweepbench.results.stats import Outcome as O

    return [O("m", "d1", "t1", 0, True, score=1.0, benchmark="b"),
            O("m", "d1", "t1", 1, False, score=0.2, benchmark="b"),
            O("m", "d1", "t1", 2, True, score=0.8, benchmark="b"),
            O("m", "d1", "t2", 0, True, error=True, score=0.9, benchmark="b"),  # an error
            O("m", "d1", "t2", 1, True, score=0.5, benchmark="b"),
            O("m", "d1", "t2", 2, True, unjudged=True, benchmark="b"),  # no verdict
            O("m", "d1", "t2", 3, True, benchmark="b"),
            O("m", "d2", "t3", 0, True, benchmark="b"),
            O("m", "d2", "t3", 1, True, benchmark="b"),
            O("m", "d2", "t3", 2, True, benchmark="b")]


def test_summarize_every_field_by_hand():
    import numpy as np

    from sweepbench.results import intervals
    from sweepbench.results.stats import mse_vs_k

    s = summarize(_row())["m"]
    n, c = np.array([3, 3, 3]), np.array([2, 2, 3])
    rate = c / n
    assert (s.k, s.tasks, s.incomplete_tasks, s.episodes, s.passed, s.errors) == (3, 3, 0, 9, 7, 1)
    assert s.avg == float(rate.mean()) and s.unjudged == 1
    assert (s.pass_at_k, s.pass_hat_k) == (1.0, 1 / 3)
    # bounds: t2's unjudged trial failed / passed, and its error passed
    assert s.bounds == [(2 / 3 + 2 / 4 + 1) / 3, (2 / 3 + 4 / 4 + 1) / 3]
    assert (s.scored, s.score) == (4, float(np.mean([2.0 / 3, 0.5 / 3, 0.0])))
    assert s.intervals["avg"] == {"population": intervals.population(rate),
                                  "fixed_set": intervals.fixed_set(n, c)}
    assert s.ci95 == s.intervals["avg"]["population"]
    at_t, hat_t = np.array([1.0, 1.0, 1.0]), np.array([0.0, 0.0, 1.0])
    assert s.intervals["pass_at_k"] == {"population": intervals.population(at_t),
                                        "fixed_set": intervals.fixed_set_bound(at_t)}
    assert s.intervals["pass_hat_k"] == {"population": intervals.population(hat_t),
                                         "fixed_set": intervals.fixed_set_bound(hat_t)}
    per_task = np.array([2.0 / 3, 0.5 / 3, 0.0])
    assert s.intervals["score"] == {"population": intervals.population(per_task),
                                    "fixed_set": intervals.fixed_set(n, [2.0, 0.5, 0.0])}
    assert s.pass_at_k_curve == pytest.approx([7 / 9, 1.0, 1.0], rel=1e-15)
    assert s.pass_hat_k_curve == pytest.approx([7 / 9, 5 / 9, 1 / 3], rel=1e-15)
    x = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 1]], np.float64)  # t2's trials 0, 1, 3
    assert s.mse_vs_k == mse_vs_k(x, 3, against="true_mean").tolist()
    assert len(summarize(_row(), mse_k_max=2)["m"].mse_vs_k) == 2
    assert summarize(_row(), adaptive=True)["m"].intervals["avg"]["fixed_set"] == (
        intervals.fixed_set(n, c, adaptive=True))
    assert summarize(_row(), adaptive=True)["m"].intervals["score"]["fixed_set"] == (
        intervals.fixed_set(n, [2.0, 0.5, 0.0], adaptive=True))
    # by domain and benchmark: the same rules on their tasks
    d1, d2 = s.domains["d1"], s.domains["d2"]
    assert (d1.tasks, d1.episodes, d1.passed, d1.errors, d1.unjudged) == (2, 6, 4, 1, 1)
    assert (d2.tasks, d2.avg, d2.score, d2.bounds) == (1, 1.0, None, [1.0, 1.0])
    b = s.benchmarks["b"]
    assert b.avg == s.avg and sorted(b.domains) == ["d1", "d2"]
    assert b.domains["d1"].avg == d1.avg == (2 / 3 + 2 / 3) / 2


def test_summarize_incomplete_rows_and_rows_without_a_verdict():
    from sweepbench.results.stats import Outcome as O

    s = summarize(_row(), k=4)["m"]
    assert s.k == 4 and s.incomplete_tasks == 3 and s.pass_at_k is None
    assert s.pass_hat_k is None and "pass_at_k" not in s.intervals
    few = summarize([O("m", "d", "t", 0, True), O("m", "d", "t", 1, False),
                     O("m", "d", "u", 0, True), O("m", "d", "u", 1, True),
                     O("m", "d", "u", 2, False)], k=3)["m"]
    assert few.incomplete_tasks == 1 and few.mse_vs_k is not None and len(few.mse_vs_k) == 2
    one = summarize([O("m", "d", "t", 0, True)])["m"]
    assert one.mse_vs_k is None and one.pass_at_k_curve == [1.0]
    none = summarize([O("m", "d", "t", 0, True, unjudged=True),
                      O("m", "d", "t", 1, False, unjudged=True)])["m"]
    assert (none.tasks, none.episodes, none.avg, none.unjudged, none.bounds) == (
        0, 0, None, 2, [0.0, 1.0])
    from sweepbench.results.stats import Stats

    want = Stats(k=1, tasks=0, incomplete_tasks=0, episodes=0, passed=0, errors=0, avg=None,
                 pass_at_k=None, pass_hat_k=None, unjudged=2, bounds=[0.0, 1.0])
    assert {f: getattr(none, f) for f in Stats.__struct_fields__} == {
        f: getattr(want, f) for f in Stats.__struct_fields__}
    # an errored episode marked unjudged is an error, scored as a failure
    err = summarize([O("m", "d", "t", 0, True, error=True, unjudged=True)])["m"]
    assert (err.episodes, err.errors, err.passed, err.unjudged) == (1, 1, 0, 0)


def test_mse_vs_k_enumerates_up_to_its_limit_and_says_why_not_beyond(monkeypatch):
    import numpy as np

    from sweepbench.results import stats
    from sweepbench.results.stats import mse_vs_k

    x = np.array([[1, 0, 1, 1], [0, 0, 1, 0]], np.float64)  # 4 + 6 + 4 + 1 = 15 combinations
    monkeypatch.setattr(stats, "_ENUMERATE_LIMIT", 15)
    assert mse_vs_k(x, method="enumerate") == pytest.approx(mse_vs_k(x), rel=1e-12)
    monkeypatch.setattr(stats, "_ENUMERATE_LIMIT", 14)
    with pytest.raises(ValueError) as info:
        mse_vs_k(x, method="enumerate")
    assert str(info.value) == "enumerating 15 combinations is too many; use 'exact'"
    with pytest.raises(ValueError) as info:
        mse_vs_k(x[:, :1], against="true_mean")
    assert str(info.value) == "the MSE against the true mean needs >= 2 runs to estimate it"


def test_paired_bootstrap_is_seeded_by_default():
    from sweepbench.results.stats import paired_bootstrap

    a, b = [1.0, 0.5, 0.0, 1.0, 0.25, 0.75], [0.0, 0.5, 0.5, 0.25, 0.0, 1.0]
    assert paired_bootstrap(a, b, n_boot=300) == paired_bootstrap(a, b, n_boot=300, seed=0)
    assert paired_bootstrap(a, b, n_boot=300) != paired_bootstrap(a, b, n_boot=300, seed=1)


def test_bounds_of_a_task_with_as_many_unjudged_episodes_as_scored_ones():
    s = summarize([Outcome("m", "d", "t", 0, True), Outcome("m", "d", "t", 1, False,
                                                           unjudged=True)])["m"]
    assert s.bounds == [0.5, 1.0]


def test_bootstrap_weights_are_draws_with_replacement_counted_whatever_the_block(monkeypatch):
    """Each replicate draws ``tasks`` tasks with replacement: counts summing to the tasks,
    mean 1 and variance 1 - 1/tasks per task (the multinomial's), the same counts however
    many replicates are counted at once."""
    from sweepbench.results import stats

    w = stats._resample_weights(np.random.default_rng(5), 50, 4000)
    assert w.shape == (4000, 50) and w.dtype == np.uint16  # counts, held small
    assert (w.sum(axis=1) == 50).all() and (w >= 0).all() and (w == np.round(w)).all()
    assert w.mean() == pytest.approx(1.0)
    assert w.var() == pytest.approx(1 - 1 / 50, rel=0.05)
    assert w[:, 0].max() >= 4  # a task drawn several times in some replicate
    monkeypatch.setattr(stats, "_BLOCK", 50 * 3 + 7)  # three replicates a block, the last short
    again = stats._resample_weights(np.random.default_rng(5), 50, 4000)
    assert np.array_equal(again, w)
    assert not np.array_equal(stats._resample_weights(np.random.default_rng(6), 50, 4000), w)

# -- summarize's cells and orders, at their edges ------------------------------------------

def _o(model, task, trial, passed=True, domain="d", **kw):
    return Outcome(model, domain, f"vb:{domain}:en:{task}", trial, passed, **kw)


def test_bounds_count_a_task_with_a_single_outcome():
    rows = [_o("A", "t1", 0, True), _o("A", "t2", 0, False), _o("A", "t2", 1, True,
                                                               unjudged=True)]
    s = summarize(rows, k=1)["A"]
    # t1: 1/1 either way; t2: 0/2 with the unjudged failed, 1/2 with it passed
    assert s.bounds == [(1.0 + 0.0) / 2, (1.0 + 0.5) / 2]


@pytest.mark.parametrize("rows, shown", [
    ([_o("A", "t1", 0), _o("A", "t2", 0), _o("A", "t2", 0)], "task 'vb:d:en:t2', trial 0"),
    ([_o("A", "t1", 0), _o("A", "t1", 1), _o("A", "t1", 1)], "task 'vb:d:en:t1', trial 1"),
])
def test_a_duplicate_past_the_first_cell_or_trial_is_refused(rows, shown):
    with pytest.raises(ValueError, match=f"duplicate outcome: model 'A', {shown}"):
        summarize(rows)


def test_models_and_domains_come_sorted_by_name_not_by_first_appearance():
    rows = [_o("B", "t1", 0, domain="z"), _o("B", "t2", 0, domain="a"),
            _o("A", "t3", 0, domain="z")]
    out = summarize(rows)
    assert list(out) == ["A", "B"]
    assert list(out["B"].domains) == ["a", "z"]
    assert list(out["B"].benchmarks["vb"].domains) == ["a", "z"]


def test_columns_with_a_model_left_out_summarize_the_others():
    from sweepbench.results.outcome_columns import OutcomeColumns

    rows = [_o("A", "t1", 0), _o("B", "t1", 0, False), _o("C", "t1", 0)]
    cols = OutcomeColumns.of(rows)
    kept = cols.take(cols.model != 0)  # A's code stays in the table, with no outcome
    out = summarize(kept)
    assert list(out) == ["B", "C"]
    assert (out["B"].avg, out["C"].avg) == (0.0, 1.0)
    assert summarize(cols) == summarize(rows)


def test_more_models_than_tasks_keep_each_cell_apart():
    rows = [_o("A", "t2", 0, False), _o("B", "t1", 0, True), _o("C", "t1", 0, True),
            _o("A", "t1", 0, True), _o("C", "t2", 0, False), _o("B", "t2", 0, True)]
    out = summarize(rows)
    assert {m: (s.tasks, s.episodes, s.passed) for m, s in out.items()} == {
        "A": (2, 2, 1), "B": (2, 2, 2), "C": (2, 2, 1)}


def test_a_model_s_statistics_do_not_depend_on_other_models_interleaved():
    """Each model's cells in the order of their first outcome, whatever other models'
    outcomes come between (the intervals resample in that order)."""
    rows_a = [_o("A", f"t{t:02}", i, (t * 7 + i) % 3 != 0) for t in range(40) for i in range(3)]
    rows_b = [_o("B", f"t{t:02}", i, (t + i) % 2 == 0) for t in range(40) for i in range(3)]
    mixed = [r for pair in zip(rows_b, rows_a) for r in pair]
    assert summarize(mixed)["A"] == summarize(rows_a)["A"]
    assert summarize(mixed)["B"] == summarize(rows_b)["B"]


def test_integer_weights_times_scores_a_block_of_rows_at_a_time(monkeypatch):
    """``_times`` is the float64 product of the integer weights (or int8 signs) and the
    per-task differences, whatever the block: each row's dot product, blocks included."""
    from sweepbench.results import stats

    rng = np.random.default_rng(3)
    d = rng.random(37) - 0.5
    for m in (rng.integers(0, 6, size=(101, 37)).astype(np.uint16),
              (rng.integers(0, 2, size=(101, 37)) * 2 - 1).astype(np.int8)):
        want = m.astype(np.float64) @ d
        assert np.allclose(stats._times(m, d), want, rtol=1e-13, atol=1e-13)
        monkeypatch.setattr(stats, "_BLOCK", 2 * 37 * 4 + 2)  # four rows a block, last short
        assert np.allclose(stats._times(m, d), want, rtol=1e-13, atol=1e-13)
        assert [round(x, 9) for x in stats._times(m[:3], d)] == \
            [round(float(np.dot(r.astype(float), d)), 9) for r in m[:3]]
        monkeypatch.undo()
