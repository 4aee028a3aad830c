"""The two intervals of a leaderboard number, by hand: Student's t quantile, Wilson, the
effective size, the one-trial bound, and the never-zero-width guard."""

from __future__ import annotations

import numpy as np
import pytest

from sweepbench.results.intervals import (fixed_set, fixed_set_bound, population, t_quantile,
                                          task_variance, wilson)

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


def test_task_variance_divides_by_zero_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0/0 and x/0 of one-trial and no-trial tasks
        got = task_variance([1, 1, 0, 2], [0, 0.5, 0, 1])
        floored = task_variance([1, 1, 0], [0, 0.5, 0], adaptive=True)
    assert np.isnan(got[:3]).all() and got[3] == 0.25 and np.isnan(floored).all()
