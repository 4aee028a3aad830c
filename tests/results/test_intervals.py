"""The two intervals of a leaderboard number, by hand: Student's t quantile, Wilson, the
effective size, the one-trial bound, and the never-zero-width guard."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from sweepbench.results import intervals as iv
from sweepbench.results.intervals import (fixed_set, fixed_set_bound, population, t_quantile,
                                          wilson)

Z = 1.959963984540054  # the normal 0.975 quantile


@pytest.mark.parametrize("df,q", [(1, 12.706204736174698), (2, 4.302652729749464),
                                  (19, 2.093024054408263), (1000, 1.962339081)])
def test_t_quantile_matches_the_tables(df, q):
    assert t_quantile(0.975, df) == pytest.approx(q, abs=1e-9)
    assert t_quantile(0.025, df) == pytest.approx(-q, abs=1e-9)
    assert t_quantile(0.5, df) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError):
        t_quantile(1.0, df)


def test_wilson_at_zero_is_z2_over_n_plus_z2_never_zero_width():
    assert wilson(0.0, 10) == [0.0, pytest.approx(Z * Z / (10 + Z * Z))]  # 0.2775
    assert wilson(1.0, 10) == [pytest.approx(10 / (10 + Z * Z)), 1.0]
    lo, hi = wilson(0.3, 50)
    assert lo < 0.3 < hi and wilson(0.3, 50, z=3.0)[1] > hi
    with pytest.raises(ValueError):
        wilson(0.5, 0)


def test_wilson_takes_the_exact_bound_within_three_of_the_edge():
    # one success in 19: Wilson's own lower bound (0.9%) would miss a true 0.6% one time in
    # nine; the Clopper-Pearson bound 1 - 0.975^(1/19) = 0.13% replaces it
    assert wilson(1 / 19, 19)[0] == pytest.approx(1 - 0.975 ** (1 / 19), rel=1e-9)
    assert wilson(18 / 19, 19)[1] == pytest.approx(0.975 ** (1 / 19), rel=1e-9)
    z = Z
    n, x = 40, 20  # far from the edges: Wilson's own formula
    lo = (x / n + z * z / (2 * n) - z * np.sqrt(0.25 / n + z * z / (4 * n * n))) / (1 + z * z / n)
    assert wilson(0.5, 40)[0] == pytest.approx(lo)


def test_wilson_with_the_t_quantile_of_two_tasks_reaches_the_edges_without_error():
    # t with 1 degree of freedom: 12.7, a tail of 1e-37; the exact bounds are 0 and 1 to
    # double precision (their search must not step onto 0 or 1 and take its logarithm)
    lo, hi = wilson(0.5, 2.0, z=t_quantile(0.975, 1))
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(1.0, abs=1e-9)
    assert fixed_set([1, 1], [1, 0]) == [lo, hi]


def test_population_of_pass_fail_tasks_has_t_minus_1_effective_tasks():
    y = [1.0] * 5 + [0.0] * 15  # one trial each: mean .25, s^2 = 20/19 * .25 * .75
    assert population(y) == pytest.approx(wilson(0.25, 19, z=t_quantile(0.975, 19)))
    # all tasks failed: no spread to estimate; Wilson over the 20 tasks, not [0, 0]
    assert population([0.0] * 20) == wilson(0.0, 20) and population([0.0] * 20)[1] > 0.15
    assert population([]) is None


def test_fixed_set_by_hand():
    # rates .5, 1, .5 over 4, 4, 2 trials: variances .25/3, 0, .25/1; var of the mean = 1/27
    # mean 2/3: n_eff = (2/9) / (1/27) = 6; t with 2 degrees of freedom
    got = fixed_set([4, 4, 2], [2, 4, 1])
    assert got == pytest.approx(wilson(2 / 3, 6.0, z=t_quantile(0.975, 2)))
    # one trial a task: no task can estimate its own variance; each takes q(1-q), q = .25,
    # so n_eff = T: the Wilson interval over the 4 tasks
    assert fixed_set([1] * 4, [1, 0, 0, 0]) == pytest.approx(
        wilson(0.25, 4, z=t_quantile(0.975, 3)))
    # every trial failed: the Wilson interval over the 8 trials
    assert fixed_set([4, 4], [0, 0]) == wilson(0.0, 8)
    assert fixed_set([], []) is None
    with pytest.raises(ValueError):
        fixed_set([0], [0])


def test_fixed_set_narrows_with_trials_where_the_population_one_does_not():
    rates = np.array([0, 0.25, 0.5, 0.75, 1.0] * 4)  # 20 tasks, the same rates at k = 4 and 8
    pop4, pop8 = population(rates), population(rates)
    fix4 = fixed_set(np.full(20, 4), rates * 4)
    fix8 = fixed_set(np.full(20, 8), rates * 8)
    assert pop4 == pop8  # the population interval sees the tasks' spread, not the trials
    width = lambda iv: iv[1] - iv[0]  # noqa: E731
    # per-task variance p(1-p)/(n-1): 1/3 -> 1/7, so the width shrinks by about sqrt(3/7)
    assert width(fix8) / width(fix4) == pytest.approx(np.sqrt(3 / 7), abs=0.02)
    assert width(fix4) < width(pop4)


def test_no_interval_is_zero_width_and_each_holds_its_estimate():
    rng = np.random.default_rng(3)
    for _ in range(300):
        tasks = int(rng.integers(1, 12))
        n = rng.integers(1, 9, tasks)
        c = rng.binomial(n, rng.choice([0.0, 0.2, 1.0], tasks))
        mean = float(np.mean(c / n))
        for lo, hi in (population(c / n), fixed_set(n, c), fixed_set_bound(c >= 1)):
            assert 0.0 <= lo < hi <= 1.0
        for lo, hi in (population(c / n), fixed_set(n, c)):
            assert lo <= mean <= hi


def test_task_variance_unbiased_and_with_the_adaptive_floor():
    from sweepbench.results.intervals import ADAPTIVE_PRIOR as a
    from sweepbench.results.intervals import task_variance
    plain = task_variance([4, 4, 1], [2, 0, 1])
    assert plain[0] == pytest.approx(0.5 * 0.5 / 3)  # p(1-p)/(n-1)
    assert plain[1] == 0.0 and np.isnan(plain[2])  # 0 of 4: no spread seen; 1 trial: none
    floored = task_variance([4, 4, 4], [2, 0, 4], adaptive=True)
    q = a / (4 + 2 * a)  # 0 of 4, shrunk
    assert floored[0] == pytest.approx(1 / 12)  # above the floor 0.25/5: unchanged
    assert floored[1] == pytest.approx(q * (1 - q) / 5)
    assert floored[2] == pytest.approx(floored[1])  # 4 of 4 mirrors 0 of 4


def test_fixed_set_adaptive_is_wider_only_through_the_floor():
    n, c = [4, 4, 8, 8], [2, 0, 4, 8]
    lo, hi = fixed_set(n, c)
    alo, ahi = fixed_set(n, c, adaptive=True)
    assert alo < lo and ahi > hi  # the all-fail and all-pass tasks now count
    assert fixed_set([4, 8], [2, 4], adaptive=True) == fixed_set([4, 8], [2, 4])


# ---- the numerics at their edges, against closed forms --------------------------------------

def _t1(p):  # Student's t with 1 degree of freedom (Cauchy)
    return math.tan(math.pi * (p - 0.5))


def _t2(p):
    return (2 * p - 1) / math.sqrt(2 * p * (1 - p))


def _binom_tail(n, k, x):
    """P(Bin(n, x) >= k): the regularized incomplete beta I_x(k, n - k + 1)."""
    return sum(math.comb(n, j) * x ** j * (1 - x) ** (n - j) for j in range(k, n + 1))


@pytest.mark.parametrize("p", [0.5001, 0.6, 0.75, 0.9, 0.975, 0.995, 0.9999, 0.999999])
def test_t_quantile_of_one_and_two_degrees_of_freedom_in_closed_form(p):
    # the CDF is computed as 1 - a beta tail: about 1e-10 relative far out (t = 3e5)
    iv.t_quantile.cache_clear()
    assert iv.t_quantile(p, 1) == pytest.approx(_t1(p), rel=1e-10)
    assert iv.t_quantile(p, 2) == pytest.approx(_t2(p), rel=1e-10)
    assert iv.t_quantile(1 - p, 1) == pytest.approx(-_t1(p), rel=1e-10)
    assert iv.t_quantile(p, 0.5) > iv.t_quantile(p, 1)  # a fractional df is taken as given


def test_t_quantile_refuses_what_has_no_quantile():
    for p, df in ((0.0, 5), (1.0, 5), (-0.1, 5), (1.5, 5), (0.5, 0), (0.5, -1),
                  (0.5, float("nan"))):
        with pytest.raises(ValueError, match=f"need 0 < p < 1 and df > 0, got p={p}, df={df}"):
            iv.t_quantile(p, df)
    assert iv.t_quantile(1e-9, 3) < 0 < iv.t_quantile(1 - 1e-9, 3)


@pytest.mark.parametrize("t", [-50.0, -3.0, -0.3, 0.0, 1e-3, 0.3, 1.0, 3.0, 50.0])
def test_t_cdf_in_closed_form(t):
    assert iv._t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, rel=1e-12, abs=1e-15)
    assert iv._t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)), rel=1e-12,
                                            abs=1e-15)
    assert iv._t_cdf(t, 4) == pytest.approx(  # df = 4 has one too
        0.5 + 3 / 8 * (t / math.sqrt(1 + t * t / 4)) * (1 - t * t / (12 * (1 + t * t / 4))),
        rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("a,b", [(1, 1), (1, 5), (5, 1), (2, 3), (3, 2), (7, 19), (19, 7),
                                 (40, 60), (200, 180)])
def test_betainc_of_integer_parameters_is_a_binomial_tail(a, b):
    for x in (1e-6, 0.01, 0.1, 0.3, 0.45, 0.5, 0.55, 0.7, 0.9, 0.99, 1 - 1e-6):
        want = _binom_tail(a + b - 1, a, x)
        assert iv._betainc(a, b, x) == pytest.approx(want, rel=1e-10, abs=1e-14), x
    assert iv._betainc(a, b, 0.0) == 0.0 and iv._betainc(a, b, -0.5) == 0.0
    assert iv._betainc(a, b, 1.0) == 1.0 and iv._betainc(a, b, 1.5) == 1.0


def test_betainc_of_half_integer_parameters():
    # I_x(1/2, 1/2) = (2 / pi) asin(sqrt x); I_x(a, 1) = x^a for any a
    for x in (0.001, 0.2, 0.5, 0.8, 0.999):
        assert iv._betainc(0.5, 0.5, x) == pytest.approx(2 / math.pi * math.asin(math.sqrt(x)),
                                                         rel=1e-11)
        assert iv._betainc(2.5, 1.0, x) == pytest.approx(x ** 2.5, rel=1e-11)
        assert iv._betainc(1.0, 2.5, x) == pytest.approx(1 - (1 - x) ** 2.5, rel=1e-11)


@pytest.mark.parametrize("q", [1e-12, 1e-6, 0.025, 0.3, 0.5, 0.8, 0.975, 1 - 1e-5])
def test_beta_quantile_against_the_closed_forms_of_one_parameter_one(q):
    for k in (1.0, 2.0, 3.0, 7.5, 19.0, 400.0):
        # Beta(k, 1): x^k; Beta(1, k): 1 - (1 - x)^k
        assert iv._beta_quantile(q, k, 1.0) == pytest.approx(q ** (1 / k), rel=1e-10)
        assert iv._beta_quantile(q, 1.0, k) == pytest.approx(-math.expm1(math.log1p(-q) / k),
                                                             rel=1e-9)


@pytest.mark.parametrize("a,b", [(0.5, 0.5), (2, 3), (3, 17), (17, 3), (0.3, 40), (60, 0.7)])
def test_beta_quantile_inverts_betainc(a, b):
    for q in (1e-8, 0.025, 0.5, 0.975, 1 - 1e-5):
        x = iv._beta_quantile(q, a, b)
        assert 0.0 < x < 1.0
        assert iv._betainc(a, b, x) == pytest.approx(q, rel=1e-9, abs=1e-15)


def test_z_of_a_level_and_its_refusals():
    assert iv._z(0.95) == pytest.approx(Z, rel=1e-15)
    assert iv._z(0.5) == pytest.approx(NormalDist().inv_cdf(0.75), rel=1e-15)
    for level in (0.0, 1.0, -0.5, 1.2):
        with pytest.raises(ValueError, match=f"level must be in \\(0, 1\\), got {level}"):
            iv._z(level)
    assert iv.LEVEL == 0.95 and iv.ADAPTIVE_PRIOR == 0.25


def _wilson_by_hand(mean, n, z):
    centre = (mean + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n))
    return [max(0.0, centre - half), min(1.0, centre + half)]


@pytest.mark.parametrize("mean,n", [(0.5, 40), (0.3, 17.5), (0.2, 25), (0.8, 25), (0.11, 100)])
def test_wilson_is_the_score_interval_away_from_the_edges(mean, n):
    assert wilson(mean, n) == pytest.approx(_wilson_by_hand(mean, n, Z), rel=1e-12)
    assert wilson(mean, n, 0.8) == pytest.approx(
        _wilson_by_hand(mean, n, NormalDist().inv_cdf(0.9)), rel=1e-12)
    assert wilson(mean, n, z=2.5) == pytest.approx(_wilson_by_hand(mean, n, 2.5), rel=1e-12)


def _clopper_pearson(x, n, tail):
    lo = iv._beta_quantile(tail, x, n - x + 1) if x > 0 else 0.0
    hi = iv._beta_quantile(1 - tail, x + 1, n - x) if x < n else 1.0
    return lo, hi


def test_wilson_takes_the_exact_bound_up_to_three_successes_and_not_beyond():
    n, tail = 30, 0.025
    for x in (1, 2, 3):  # within three of 0: the exact lower bound reaches further
        lo, hi = wilson(x / n, n)
        wlo, whi = _wilson_by_hand(x / n, n, Z)
        assert lo == pytest.approx(_clopper_pearson(x, n, tail)[0], rel=1e-9) and lo < wlo
        assert hi == pytest.approx(whi, rel=1e-12)  # the upper one is Wilson's
        lo, hi = wilson(1 - x / n, n)  # and mirrored at the top
        assert hi == pytest.approx(_clopper_pearson(n - x, n, tail)[1], rel=1e-9) and hi > whi
        assert lo == pytest.approx(_wilson_by_hand(1 - x / n, n, Z)[0], rel=1e-12)
    for x in (3.5, 4):  # beyond three: Wilson's own bounds
        assert wilson(x / n, n) == pytest.approx(_wilson_by_hand(x / n, n, Z), rel=1e-12)
        assert wilson(1 - x / n, n) == pytest.approx(_wilson_by_hand(1 - x / n, n, Z), rel=1e-12)
    # a fractional success count (weighted tasks) takes the exact bound too
    assert wilson(2.5 / 30, 30)[0] == pytest.approx(
        iv._beta_quantile(tail, 2.5, 28.5), rel=1e-9)
    # the tail follows the z given, not the level
    z = 2.5
    t = 1 - NormalDist().cdf(z)
    assert wilson(1 / 19, 19, z=z)[0] == pytest.approx(1 - (1 - t) ** (1 / 19), rel=1e-9)
    assert wilson(1 / 19, 19, 0.8)[0] == pytest.approx(1 - 0.9 ** (1 / 19), rel=1e-9)


def test_wilson_at_the_edges_and_its_refusals():
    for n in (4, 5.5, 1000):  # more than three trials: Wilson's own
        z2 = Z * Z
        assert wilson(0.0, n) == [0.0, pytest.approx(z2 / (n + z2), rel=1e-12)]
        assert wilson(1.0, n) == [pytest.approx(n / (n + z2), rel=1e-12), 1.0]
    for n in (0, -1, float("nan")):
        with pytest.raises(ValueError, match=f"n must be > 0, got {n}"):
            wilson(0.5, n)
    # at 3 trials of which 1 passed, both ends are within three: both exact
    lo, hi = wilson(1 / 3, 3)
    assert lo == pytest.approx(1 - 0.975 ** (1 / 3), rel=1e-9)
    assert hi == pytest.approx(iv._beta_quantile(0.975, 2, 2), rel=1e-9)


def test_population_by_hand():
    y = [0.2, 0.4, 0.9, 0.5]
    m, s2 = 0.5, np.var(y, ddof=1)
    assert population(y) == pytest.approx(
        wilson(m, m * (1 - m) * 4 / s2, z=t_quantile(0.975, 3)), rel=1e-12)
    assert population(y, 0.8) == pytest.approx(
        wilson(m, m * (1 - m) * 4 / s2, 0.8, z=t_quantile(0.9, 3)), rel=1e-12)
    assert population(np.array([y])) == population(y)  # any shape: the values
    assert population([0.3]) == wilson(0.3, 1)  # one task: no spread to estimate
    assert population([0.3, 0.3, 0.3]) == wilson(0.3, 3)  # no spread
    assert population([0.3, 0.3 + 1e-11]) != wilson(0.3 + 5e-12, 2)  # a spread, if tiny
    assert population([1.0, 1.0]) == wilson(1.0, 2)
    assert population([0.0, 0.0], 0.8) == wilson(0.0, 2, 0.8)


def test_task_variance_exact_at_two_trials_and_with_the_floor():
    from sweepbench.results.intervals import task_variance

    got = task_variance([2, 2, 3, 1], [1, 2, 1.5, 0])
    assert got[:3].tolist() == [0.25, 0.0, 0.125] and np.isnan(got[3])
    a = iv.ADAPTIVE_PRIOR
    got = task_variance([2, 1, 6], [2, 1, 3], adaptive=True)
    q = (2 + a) / (2 + 2 * a)
    assert got[0] == pytest.approx(q * (1 - q) / 3, rel=1e-15) and np.isnan(got[1])
    assert got[2] == pytest.approx(0.25 / 5, rel=1e-15)  # unbiased above the floor 0.25/7
    assert task_variance(4, 1).shape == ()


def test_fixed_set_with_some_single_trial_tasks_by_hand():
    # tasks of 1, 1 and 4 trials: 1, 0 and 2 passes; the single-trial ones take q(1-q), q = .5
    n, c = [1, 1, 4], [1, 0, 2]
    mean = (1 + 0 + 0.5) / 3
    var = (0.25 + 0.25 + 0.25 / 3) / 9
    assert fixed_set(n, c) == pytest.approx(
        wilson(mean, mean * (1 - mean) / var, z=t_quantile(0.975, 2)), rel=1e-12)
    assert fixed_set(n, c, 0.9) == pytest.approx(
        wilson(mean, mean * (1 - mean) / var, 0.9, z=t_quantile(0.95, 2)), rel=1e-12)
    # all-fail over 2 and 4 trials: Wilson over the harmonic size 4 / (1/2 + 1/4)
    assert fixed_set([2, 4], [0, 0]) == wilson(0.0, 4 / 0.75)
    assert fixed_set([2, 4], [2, 4], 0.8) == wilson(1.0, 4 / 0.75, 0.8)
    assert fixed_set([3, 3], [1, 1]) != wilson(1 / 3, 4 / (2 / 3))  # equal rates still vary
    assert fixed_set([[2, 2]], [[1, 2]]) == fixed_set([2, 2], [1, 2])
    for n, c in (([2, 0], [1, 0]), ([2, 2], [1]), ([0.5], [0])):
        with pytest.raises(ValueError) as info:
            fixed_set(n, c)
        assert str(info.value) == "need one n >= 1 and one c per task"


def test_fixed_set_bound_is_wilson_over_the_tasks():
    assert fixed_set_bound([1.0, 0.5, 0.0, 0.25]) == wilson(0.4375, 4)
    assert fixed_set_bound([[0.5, 0.5]], 0.8) == wilson(0.5, 2, 0.8)
    assert fixed_set_bound([]) is None


def test_the_zero_spread_guards_hold_at_their_thresholds_exactly():
    # the float pairs whose spread is exactly the guard's threshold: still "no spread"
    y = [0.0, 1.4142135623730952e-12]  # sample standard deviation exactly 1e-12
    assert float(np.std(y, ddof=1)) == 1e-12
    assert population(y) == wilson(float(np.mean(y)), 2)
    c = 2.000000000000002e-15  # one task of 2 trials whose variance is exactly 1e-15
    assert float(iv.task_variance(2, c)) == 1e-15
    assert fixed_set([2], [c]) == wilson(c / 2, 2)


def test_fixed_set_with_the_floor_at_zero_and_one_is_wilson_over_the_trials():
    # with the adaptive floor the variance is never 0, but a mean of 0 or 1 has no spread
    # to scale: Wilson over the 8 trials, not an effective size of 0 (which would raise)
    assert fixed_set([4, 4], [0, 0], adaptive=True) == wilson(0.0, 8)
    assert fixed_set([4, 4], [4, 4], adaptive=True) == wilson(1.0, 8)
    assert fixed_set([4, 4], [4, 4], 0.8, adaptive=True) == wilson(1.0, 8, 0.8)


def test_fixed_set_estimates_a_task_of_two_trials_from_its_own():
    # rates .5, 1, .25 over 2, 2, 4 trials: variances .25, 0, .0625; none takes q(1-q)
    n, c = [2, 2, 4], [1, 2, 1]
    mean = (0.5 + 1 + 0.25) / 3
    var = (0.25 + 0 + 0.25 * 0.75 / 3) / 9
    assert fixed_set(n, c) == pytest.approx(
        wilson(mean, mean * (1 - mean) / var, z=t_quantile(0.975, 2)), rel=1e-12)
    # all-fail over 2, 4 and 4 trials: the harmonic size 3^2 / (1/2 + 1/4 + 1/4) = 9
    assert fixed_set([2, 4, 4], [0, 0, 0]) == wilson(0.0, 9.0)


def test_task_variance_divides_by_zero_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0/0 and x/0 of one-trial and no-trial tasks
        got = iv.task_variance([1, 1, 0, 2], [0, 0.5, 0, 1])
        floored = iv.task_variance([1, 1, 0], [0, 0.5, 0], adaptive=True)
    assert np.isnan(got[:3]).all() and got[3] == 0.25 and np.isnan(floored).all()
