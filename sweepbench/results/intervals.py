"""Confidence intervals of a leaderboard number, each named for what it covers.

A leaderboard number is a mean over T tasks of per-task values ``y_t`` in [0, 1] (a task's
pass rate, its Pass@k or Pass^k estimate, its mean score). Two questions, two intervals:

- **Task population** (``population``): what the model would score on *other tasks drawn
  like these*. The variance of the mean is estimated from the spread of the ``y_t``
  (s^2 / T).
- **This task set** (``fixed_set``): what the model would score on *these tasks* with
  infinitely many trials (the mean of their true pass rates). Only trial-to-trial noise
  counts, so it narrows as trials are added. A task's variance is estimated unbiasedly from
  its own trials (``p(1-p) / (n-1)`` for a pass rate p over n trials); a task with one trial
  cannot estimate its own and takes the bound ``q(1-q)`` (q: the mean over such tasks; by
  concavity the sum of ``q_t(1-q_t)`` is at most ``T q(1-q)``). Pass@k and Pass^k use that
  bound for every task (``fixed_set_bound``).

Both are Wilson score intervals with an *effective size* ``n_eff = m(1-m) / var`` (m the
mean, var its estimated variance) and, since var is estimated from T tasks, Student's t
quantile with T-1 degrees of freedom (``t_quantile``) instead of the normal one. Unlike the
symmetric ``m +- t sqrt(var)``, a Wilson interval stays inside [0, 1] and is skewed away from
the boundary, which is what keeps its coverage near 0 and 1 at 20 tasks; within three
successes of 0 (or failures of the top) the exact Clopper-Pearson bound replaces Wilson's
where it reaches further (``wilson``). An interval is never
zero-width: a variance estimate of 0 (every task all-pass or all-fail, or all equal) gives the
Wilson interval over the T tasks (population) or over the trials (fixed set), the width of
the variance bound above. Why these and not a percentile bootstrap or a plain t:
``benchmarks/stats_coverage.py`` measures each one's coverage on simulated leaderboards
(docs: statistics page).
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist
from typing import Any

import numpy as np

__all__ = ["ADAPTIVE_PRIOR", "LEVEL", "fixed_set", "fixed_set_bound", "population",
           "t_quantile", "task_variance", "wilson"]

LEVEL = 0.95
ADAPTIVE_PRIOR = 0.25
"""Pseudo-passes (and pseudo-failures) of the shrunk rate behind ``task_variance``'s floor."""


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
          + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln) * _betacf(b, a, 1.0 - x) / b


def _t_cdf(t: float, df: float) -> float:
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@functools.lru_cache(maxsize=1024)  # a report asks for the same few (level, T) pairs often
def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom (bisection on its CDF;
    1e-12 accurate). E.g. ``t_quantile(0.975, 19) = 2.0930...``."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError(f"need 0 < p < 1 and df > 0, got p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def _beta_quantile(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b): Newton on the incomplete beta, kept inside a bracket
    that bisection narrows whenever a step would leave it."""
    ln_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    lo, hi = 0.0, 1.0
    x = min(max(a / (a + b), 1e-6), 1 - 1e-6)
    for _ in range(200):
        f = _betainc(a, b, x) - q
        if f < 0:
            lo = x
        else:
            hi = x
        pdf = (math.exp((a - 1) * math.log(x) + (b - 1) * math.log1p(-x) - ln_beta)
               if 0.0 < x < 1.0 else 0.0)
        step = x - f / pdf if pdf > 0 else -1.0  # no slope: bisect
        new = step if lo < step < hi else 0.5 * (lo + hi)
        if abs(new - x) <= 1e-12 * x:
            return new
        x = new
    return x


_FEW = 3.0  # successes (or failures) near which Wilson's bound is replaced by the exact one


def wilson(mean: float, n: float, level: float = LEVEL, *, z: float | None = None
           ) -> list[float]:
    """Wilson score interval of a rate ``mean`` observed over ``n`` units (n may be
    fractional; ``z``: the quantile, default the normal one of ``level``). Never zero-width
    for n > 0, also at 0 and 1. Within ``_FEW`` successes of 0 (or failures of n) Wilson's
    bound there is known to fall short (Brown, Cai & DasGupta 2001: one success in 19
    gives a lower bound of 0.9%, above a true 0.6% one time in nine); the exact
    (Clopper-Pearson) bound at the same level replaces it when it reaches further."""
    if not n > 0:
        raise ValueError(f"n must be > 0, got {n}")
    z = _z(level) if z is None else z
    z2 = z * z
    centre = (mean + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(max(mean * (1 - mean), 0.0) / n + z2 / (4 * n * n))
    # the score interval contains the estimate; min / max keep rounding from saying otherwise
    lo, hi = max(0.0, min(mean, centre - half)), min(1.0, max(mean, centre + half))
    tail = 1.0 - NormalDist().cdf(z)  # each side's share outside, for the z used
    x = mean * n
    if 0.0 < x <= _FEW:
        lo = min(lo, _beta_quantile(tail, x, n - x + 1.0))
    if 0.0 < n - x <= _FEW:
        hi = max(hi, _beta_quantile(1.0 - tail, x + 1.0, n - x))
    return [lo, hi]


def _t(level: float, df: int) -> float | None:
    return t_quantile(0.5 + level / 2.0, df) if df >= 1 else None


def population(y: Any, level: float = LEVEL) -> list[float] | None:
    """Interval over the task population of the mean of per-task values ``y`` (in [0, 1]).
    None for no task."""
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.size == 0:
        return None
    mean = float(y.mean())
    sd = float(y.std(ddof=1)) if y.size > 1 else 0.0
    if sd <= 1e-12 or not 0.0 < mean < 1.0:
        return wilson(mean, y.size, level)
    return wilson(mean, mean * (1 - mean) * y.size / sd ** 2, level, z=_t(level, y.size - 1))


def task_variance(n: Any, c: Any, *, adaptive: bool = False) -> np.ndarray:
    """Per task, the estimated variance of its pass rate ``c / n`` (n >= 2 trials; NaN
    where n < 2): the unbiased ``p(1-p) / (n-1)``. ``adaptive`` (the trials per task were
    chosen from the outcomes): at least ``q(1-q) / (n+1)`` with the shrunk ``q = (c + a) /
    (n + 2a)``, a = ``ADAPTIVE_PRIOR``. An adaptive sweep leaves tasks that *look* all-pass
    or all-fail at few trials, where the unbiased estimate is 0 though the true rate may be
    0.05, and stops when the estimates happen to be low: without the floor its intervals
    held the truth 0.79 of the time at a 95% level, with it 0.956 (``benchmarks/adaptive.py
    --quick``; a fixed-k sweep's plain interval 0.944). The floor costs calls: the sweep
    spends 0.78 of the fixed-k sweep's at the same width, not 0.39."""
    n = np.asarray(n, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # NaN, not a warning, below 2
        rate = c / n
        var = np.where(n >= 2, rate * (1 - rate) / (n - 1), np.nan)
        if adaptive:
            q = (c + ADAPTIVE_PRIOR) / (n + 2 * ADAPTIVE_PRIOR)
            var = np.where(n >= 2, np.maximum(var, q * (1 - q) / (n + 1)), np.nan)
    return var


def fixed_set(n: Any, c: Any, level: float = LEVEL, *, adaptive: bool = False
              ) -> list[float] | None:
    """Interval over trials of the mean over these tasks of their true pass rates, from
    per-task trials ``n`` and passes ``c`` (c may be fractional: summed scores in [0, 1],
    for which the variance estimate is an upper bound). None for no task. ``adaptive``:
    the trials per task were chosen from the outcomes (``task_variance``)."""
    n = np.asarray(n, dtype=np.float64).ravel()
    c = np.asarray(c, dtype=np.float64).ravel()
    if n.size == 0:
        return None
    if np.any(n < 1) or n.shape != c.shape:
        raise ValueError("need one n >= 1 and one c per task")
    rate = c / n
    mean = float(rate.mean())
    var_t = task_variance(n, c, adaptive=adaptive)
    many = n >= 2
    if not many.all():
        q = float(rate[~many].mean())
        var_t[~many] = q * (1 - q)
    var = float(var_t.sum()) / n.size ** 2
    if var <= 1e-15 or not 0.0 < mean < 1.0:
        # every task all-pass or all-fail: the binomial bound over the trials, weighted as
        # the mean weights them
        return wilson(mean, n.size ** 2 / float((1.0 / n).sum()), level)
    return wilson(mean, mean * (1 - mean) / var, level, z=_t(level, n.size - 1))


def fixed_set_bound(u: Any, level: float = LEVEL) -> list[float] | None:
    """Interval over trials of the mean over these tasks of per-task estimates ``u`` in
    [0, 1] (Pass@k, Pass^k) whose own variance is not estimated: Wilson over the tasks,
    valid because a [0, 1] estimate with mean q varies at most q(1-q). Conservative when a
    task has more than k trials. None for no task."""
    u = np.asarray(u, dtype=np.float64).ravel()
    return wilson(float(u.mean()), u.size, level) if u.size else None
