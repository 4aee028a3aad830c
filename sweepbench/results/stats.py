"""Statistics of a leaderboard: pass metrics, MSE-vs-k, intervals, paired tests, judge κ.

Pass metrics. For a task run n times with c passes, and k <= n:

- ``pass_at_k(n, c, k) = 1 - C(n-c, k) / C(n, k)``: the chance that at least one of k trials
  drawn without replacement from the n passes.
- ``pass_hat_k(n, c, k) = C(c, k) / C(n, k)``: the chance that all k drawn trials pass.

Both are exact averages over all k-subsets of the n trials (hence unbiased), computed with
integer binomials; ``pass_curves`` computes them for every k at once in floating point.

MSE-vs-k (VitaBench §5.1). Trial i of every task is "run i" of the benchmark; a k-run estimate
averages k of the n runs. Against the n-run mean (the paper's resampling, ``against=
"all_runs"``), with σ² the population variance of the run scores, ``MSE(k) = σ²/k ·
(n-k)/(n-1)``: MSE(n) = 0 by construction and MSE(4)/MSE(1) = 28/124 at n = 32 (the paper's
77.5% reduction, rounded from sampling). The leaderboard shows the MSE against the true mean
(``against="true_mean"``): that plus the n-run mean's own variance, s²/k with s² the unbiased
variance of the run scores, so MSE(n) = s²/n, not 0.

Uncertainty. Intervals over the task population and over trials on these tasks:
:mod:`sweepbench.results.intervals`. ``paired_bootstrap`` compares two models on their common
tasks (the corrections over a leaderboard's pairs: :mod:`sweepbench.results.comparisons`).
Judge agreement (κ): :mod:`sweepbench.results.agreement`, re-exported here.

``summarize`` policy, stated so nothing is dropped silently:

- An episode that ended in error is a failure (``error=True`` overrides ``passed``, and its
  score is 0) and is counted in ``errors``. An unjudged one (``unjudged=True``) is not
  scored: counted in ``unjudged`` and in ``bounds`` (the headline with every unjudged
  episode failed, and with every unjudged and errored one passed).
- ``avg`` (Avg@k, as the papers define it) is the mean over tasks of each task's pass rate
  (passes / scored trials): every task weighs the same whatever its trial count. ``score``
  likewise (an episode in error or without a score counting 0; None when no episode has
  one). Comparisons and exports use the same per-task rates.
- One ``k`` for every row of a call (a leaderboard): the one asked for, else the fewest
  scored trials of any task of any model. A task with fewer than k scored trials makes its
  row *incomplete* (``incomplete_tasks``): no ``pass_at_k`` / ``pass_hat_k`` rather than
  one computed on fewer tasks or trials. Domains and benchmarks use the same k.
- Intervals (``intervals``; ``ci95`` = Avg@k's over the task population) come from
  :mod:`sweepbench.results.intervals`.
- Curves (``pass_at_k_curve``, ``pass_hat_k_curve``, ``mse_vs_k``, indexed by k-1) use the
  first m scored trials (by trial number) of every task, m the fewest of any task of that
  row, so they cover every task; ``mse_vs_k`` is None when m < 2.
"""

from __future__ import annotations

import functools
import math
from itertools import combinations
from math import comb
from typing import Any, Iterable, Mapping, NamedTuple

import numpy as np
from msgspec import Struct, field

from sweepbench.ids import TaskKey
from sweepbench.results import intervals
from sweepbench.results.outcome_columns import OutcomeColumns
from sweepbench.results.agreement import (Agreement, cohen_kappa, judge_agreement,
                                          kappa_from_confusion, rubric_decisions)

__all__ = [
    "Agreement", "BenchmarkStats", "ModelStats", "Outcome", "PairedComparison", "Stats",
    "cohen_kappa", "judge_agreement", "kappa_from_confusion", "mse_vs_k",
    "paired_bootstrap", "pass_at_k", "pass_curves", "pass_hat_k", "rubric_decisions",
    "summarize",
]

DEFAULT_BOOT = 2000
_ENUMERATE_LIMIT = 2_000_000  # k-combinations over all k that "enumerate" agrees to walk


# ---- pass metrics -------------------------------------------------------------------------


def _check(n: int, c: int, k: int) -> None:
    for name, v in (("n", n), ("c", c), ("k", k)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{name} must be an int, got {v!r}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"c must be in [0, n], got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, n], got k={k}, n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased Pass@k: 1 - C(n-c, k) / C(n, k). Raises ValueError unless 1 <= k <= n."""
    _check(n, c, k)
    total = comb(n, k)
    return (total - comb(n - c, k)) / total  # one correctly rounded division


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased Pass^k: C(c, k) / C(n, k). Raises ValueError unless 1 <= k <= n."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def pass_curves(n: Any, c: Any, k_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Pass@k and Pass^k for k = 1..k_max of many tasks at once: two (tasks, k_max) arrays.

    ``n``, ``c``: per-task trials and passes (arrays or scalars). Entries with k > n are NaN.
    Uses C(a, k)/C(n, k) = prod_{i<k} (a-i)/(n-i), so it agrees with ``pass_at_k`` to a few ulp.
    """
    n = np.atleast_1d(np.asarray(n, dtype=np.float64))
    c = np.atleast_1d(np.asarray(c, dtype=np.float64))
    if k_max < 1:
        raise ValueError(f"k_max must be >= 1, got {k_max}")
    if np.any(n < 1) or np.any(c < 0) or np.any(c > n):
        raise ValueError("need n >= 1 and 0 <= c <= n for every task")
    i = np.arange(k_max, dtype=np.float64)
    denom = n[:, None] - i  # n - i, <= 0 where k > n (masked below)
    valid = denom > 0
    safe = np.where(valid, denom, 1.0)
    fail = np.cumprod(np.clip(n[:, None] - c[:, None] - i, 0, None) / safe, axis=1)
    allp = np.cumprod(np.clip(c[:, None] - i, 0, None) / safe, axis=1)
    at = np.where(valid, 1.0 - fail, np.nan)
    hat = np.where(valid, allp, np.nan)
    return at, hat


# ---- MSE vs k -----------------------------------------------------------------------------


def mse_vs_k(
    x: Any,
    k_max: int | None = None,
    *,
    against: str = "all_runs",
    method: str = "exact",
    samples: int = 4000,
    seed: int = 0,
) -> np.ndarray:
    """MSE of the k-run mean for k = 1..k_max (index k-1), against ``against``:

    - ``"all_runs"``: the n-run mean (the paper's resampling; MSE(n) = 0 by construction);
    - ``"true_mean"``: the true (infinite-run) mean, estimated as the all-runs MSE plus the
      n-run mean's own variance s^2/n (s^2: the unbiased variance of the run scores), which
      is s^2/k exactly; the last point is s^2/n, not 0. None of it for n = 1.

    ``x``: (tasks, n) array of per-trial results (0/1 passes or fractional scores), column i
    being run i. ``method``: "exact" (closed form), "enumerate" (every k-combination of runs;
    refuses beyond a few million combinations) or "sample" (``samples`` random
    k-combinations per k, seeded). Units: squared fractions (x in [0, 1]).
    """
    if against not in ("all_runs", "true_mean"):
        raise ValueError(f"against must be 'all_runs' or 'true_mean', got {against!r}")
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] < 1 or x.shape[0] < 1:
        raise ValueError(f"x must be a non-empty (tasks, trials) array, got shape {x.shape}")
    n = x.shape[1]
    k_max = n if k_max is None else k_max
    if not 1 <= k_max <= n:
        raise ValueError(f"k_max must be in [1, {n}] (the trials per task), got {k_max}")
    runs = x.mean(axis=0)  # the score of each run over all tasks
    mu = runs.mean()
    ks = np.arange(1, k_max + 1)
    if against == "true_mean" and n == 1:
        raise ValueError("the MSE against the true mean needs >= 2 runs to estimate it")
    # what the n-run mean itself is off by, on average: s^2 / n
    offset = float(np.var(runs, ddof=1)) / n if against == "true_mean" else 0.0
    if method == "exact":
        if n == 1:
            return np.zeros(1)
        var = np.mean((runs - mu) ** 2)
        return var / ks * (n - ks) / (n - 1) + offset
    if method == "enumerate":
        total = sum(comb(n, int(k)) for k in ks)
        if total > _ENUMERATE_LIMIT:
            raise ValueError(f"enumerating {total:,} combinations is too many; use 'exact'")
        out = np.empty(k_max)
        for k in ks:
            idx = np.array(list(combinations(range(n), int(k))), dtype=np.intp)
            out[k - 1] = np.mean((runs[idx].mean(axis=1) - mu) ** 2)
        return out + offset
    if method == "sample":
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        rng = np.random.default_rng(seed)
        # The first k runs of a uniform random permutation are a uniform random k-subset.
        perms = np.argsort(rng.random((samples, n)), axis=1)
        est = np.cumsum(runs[perms], axis=1)[:, :k_max] / ks
        return np.mean((est - mu) ** 2, axis=0) + offset
    raise ValueError(f"method must be 'exact', 'enumerate' or 'sample', got {method!r}")


# ---- bootstrap ----------------------------------------------------------------------------


_BLOCK = 1 << 22  # draws counted at once (32 MB of indices)


def _resample_weights(rng: np.random.Generator, tasks: int, n_boot: int) -> np.ndarray:
    """(n_boot, tasks) counts: how often each task is drawn in each bootstrap replicate of
    ``tasks`` draws with replacement, as the smallest unsigned integers that hold ``tasks``
    (a twentieth of float64's memory at 20,000 tasks). The draws are made and counted
    (``bincount``), a block of replicates at a time: a multinomial drawn category by category
    costs a binomial per task and replicate, seconds at 20,000 tasks."""
    out = np.empty((n_boot, tasks), dtype=np.uint16 if tasks < 1 << 16 else np.uint32)
    step = max(1, _BLOCK // max(tasks, 1))
    for lo in range(0, n_boot, step):
        rows = min(step, n_boot - lo)
        draws = rng.integers(0, tasks, size=(rows, tasks))
        draws += (np.arange(rows) * tasks)[:, None]
        out[lo:lo + rows] = np.bincount(draws.ravel(), minlength=rows * tasks).reshape(
            rows, tasks)
    return out


@functools.lru_cache(maxsize=2)
def _paired_draws(seed: int, tasks: int, n_boot: int) -> tuple[np.ndarray, np.ndarray]:
    """The bootstrap weights and the sign flips (int8) of a paired comparison: they depend on
    the seed and the sizes only, so a family of comparisons on the same number of tasks (a
    leaderboard's) draws them once (read-only arrays)."""
    rng = np.random.default_rng(seed)
    w = _resample_weights(rng, tasks, n_boot)
    signs = (rng.integers(0, 2, size=(n_boot, tasks)) * 2 - 1).astype(np.int8)
    w.flags.writeable = signs.flags.writeable = False
    return w, signs


def _times(m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``m @ d`` for an integer matrix ``m``: a block of its rows at a time made float64
    (16 MB), never the whole matrix."""
    out = np.empty(len(m))
    step = max(1, (_BLOCK >> 1) // max(m.shape[1], 1))
    for lo in range(0, len(m), step):
        out[lo:lo + step] = m[lo:lo + step].astype(np.float64) @ d
    return out


class PairedComparison(Struct, kw_only=True):
    """Model a minus model b on their common tasks (per-task mean scores)."""

    tasks: int
    mean_a: float
    mean_b: float
    diff: float
    ci95: list[float]
    p_value: float
    """Two-sided sign-flip randomization p-value of "the two models are exchangeable on
    every task"; 1.0 when the two agree on every task."""


def paired_bootstrap(
    a: Any, b: Any, *, n_boot: int = 10_000, seed: int = 0
) -> PairedComparison:
    """Paired comparison over tasks: ``a[t]``, ``b[t]`` are the two models' scores on task t.

    ``ci95``: percentile bootstrap interval of the mean difference (tasks resampled). The
    p-value is a sign-flip randomization test: under "no difference" the two models'
    scores on a task are exchangeable, so each per-task difference is as likely negated;
    p is the share of ``n_boot`` random sign patterns whose mean difference is at least as
    far from 0 as the observed one, counted with the usual +1 so it is never 0. Unlike the
    shifted bootstrap, whose p-values run small at 20 tasks (8% false pairs at 0.05 after
    a Holm correction over 6 identical models), it holds its level at any number of tasks.
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape or a.size == 0:
        raise ValueError(f"need two equal-length, non-empty score lists, got {a.size}, {b.size}")
    d = a - b
    observed = float(d.mean())
    w, signs = _paired_draws(seed, d.size, n_boot)
    boot = _times(w, d) / d.size
    flipped = np.abs(_times(signs, d)) / d.size
    tol = 1e-12 * max(1.0, abs(observed))
    extreme = int(np.count_nonzero(flipped >= abs(observed) - tol))
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return PairedComparison(
        tasks=int(d.size), mean_a=float(a.mean()), mean_b=float(b.mean()), diff=observed,
        ci95=[float(lo), float(hi)], p_value=min(1.0, (extreme + 1) / (n_boot + 1)),
    )


# ---- summarize ----------------------------------------------------------------------------


class Outcome(NamedTuple):
    """One episode's outcome. ``task_key`` identifies the task across models.

    ``score``: the judgment's fractional score in [0, 1], None when it has none.
    ``benchmark``: empty means the benchmark part of ``task_key`` ("-" when it is not a
    ``benchmark:domain:lang:id`` key). ``unjudged``: finished, but without a verdict of the
    source that scores it: not scored, only counted and in ``bounds``.
    """

    model: str
    domain: str
    task_key: str
    trial: int
    passed: bool
    error: bool = False
    score: float | None = None
    benchmark: str = ""
    unjudged: bool = False


class Stats(Struct, kw_only=True):
    k: int
    tasks: int
    """Tasks with at least one scored episode."""
    incomplete_tasks: int
    """Tasks with fewer than k scored trials; when > 0 the row is *incomplete*: no
    ``pass_at_k`` / ``pass_hat_k`` (never computed on fewer tasks or trials)."""
    episodes: int
    """Scored episodes (unjudged ones are not)."""
    passed: int
    errors: int
    avg: float | None
    """Avg@k: the mean over tasks of each task's pass rate (passes / scored trials)."""
    pass_at_k: float | None
    """Mean over tasks of the unbiased Pass@k; None when the row is incomplete."""
    pass_hat_k: float | None
    ci95: list[float] | None = None
    """95% interval of ``avg`` over the task population (= ``intervals["avg"]["population"]``)."""
    intervals: dict[str, dict[str, list[float] | None]] = field(default_factory=dict)
    """metric (avg, pass_at_k, pass_hat_k, score) -> {"population": 95% interval over the
    task population, "fixed_set": 95% interval over trials on these tasks}
    (:mod:`sweepbench.results.intervals`)."""
    unjudged: int = 0
    """Finished episodes without a verdict: not scored."""
    bounds: list[float] | None = None
    """[low, high]: ``avg`` if every unjudged episode had failed, and if every unjudged and
    every errored one had passed; how far the gaps could move the headline."""
    score: float | None = None
    """Mean over tasks of each task's mean fractional score (errors and missing scores count
    0); None when no episode has a score."""
    scored: int = 0
    """Episodes (not in error) with a score."""
    pass_at_k_curve: list[float] | None = None
    """Pass@k for k = 1..m (index k-1), m the fewest trials of any task."""
    pass_hat_k_curve: list[float] | None = None
    mse_vs_k: list[float] | None = None
    """Estimated MSE of the k-run Avg against the true (infinite-run) Avg, k = 1..m (index
    k-1): s^2 / k, s^2 the unbiased variance of the m run scores; None when m < 2."""


class BenchmarkStats(Stats, kw_only=True):
    domains: dict[str, Stats] = field(default_factory=dict)


class ModelStats(Stats, kw_only=True):
    domains: dict[str, Stats] = field(default_factory=dict)
    benchmarks: dict[str, BenchmarkStats] = field(default_factory=dict)


def _coerce(row: Any) -> Outcome:
    if isinstance(row, Outcome):
        return row
    if isinstance(row, Mapping):
        return Outcome(**row)
    return Outcome(*row)


class _Options(NamedTuple):
    mse_k_max: int | None
    adaptive: bool = False


class _Cells:
    """Per (model, task) cell, numbered in the order its first outcome comes: trials scored
    (``n``), passed (``c``), errors, unjudged, scored and summed scores (in the outcomes'
    order), and ``trials``: each cell's scored results by trial number (row i: cell i's,
    first ``n[i]`` entries)."""

    def __init__(self, oc: OutcomeColumns, cell: np.ndarray, count: int) -> None:
        scored = ~(oc.unjudged & ~oc.error)
        ok = oc.passed & ~oc.error

        def count_of(mask: np.ndarray) -> np.ndarray:
            return np.bincount(cell[mask], minlength=count).astype(np.int64)

        self.n, self.c = count_of(scored), count_of(scored & ok)
        self.errors, self.unjudged = count_of(oc.error), count_of(~scored)
        has = oc.has_score & ~oc.error
        self.scored = count_of(has)
        self.scores = np.bincount(cell[has], weights=oc.score[has], minlength=count)
        at = np.flatnonzero(scored)
        order = at[np.lexsort((oc.trial[at], cell[at]))]
        starts = np.concatenate(([0], np.cumsum(self.n)[:-1]))
        pos = np.arange(len(order)) - starts[cell[order]]
        self.trials = np.zeros((count, int(self.n.max(initial=0))), dtype=bool)
        self.trials[cell[order], pos] = ok[order]


def _bounds(cells: _Cells, g: np.ndarray) -> list[float] | None:
    """Avg with every unjudged episode failed, and with every unjudged and errored one
    passed."""
    total = cells.n[g] + cells.unjudged[g]
    w = g[total > 0]
    if not len(w):
        return None
    total = cells.n[w] + cells.unjudged[w]
    low = (cells.c[w] / total).tolist()
    high = ((cells.c[w] + cells.errors[w] + cells.unjudged[w]) / total).tolist()
    return [sum(low) / len(low), sum(high) / len(high)]


def _both(values: np.ndarray, fixed: list[float] | None) -> dict[str, list[float] | None]:
    return {"population": intervals.population(values), "fixed_set": fixed}


@functools.lru_cache(maxsize=65_536)
def _pass_k(n: int, c: int, k: int) -> tuple[float, float]:
    return pass_at_k(n, c, k), pass_hat_k(n, c, k)


def _stats(cells: _Cells, g: np.ndarray, k: int, opt: _Options) -> Stats:
    """The statistics of the cells ``g`` (indices, in the tasks' order)."""
    bounds = _bounds(cells, g)
    unjudged = int(cells.unjudged[g].sum())
    tasks = g[cells.n[g] > 0]
    if not len(tasks):
        return Stats(k=k, tasks=0, incomplete_tasks=0, episodes=0, passed=0, errors=0,
                     avg=None, pass_at_k=None, pass_hat_k=None, unjudged=unjudged,
                     bounds=bounds)
    n, c = cells.n[tasks], cells.c[tasks]
    rate = c / n
    complete = n >= k
    at = hat = None
    ivals = {"avg": _both(rate, intervals.fixed_set(n, c, adaptive=opt.adaptive))}
    if complete.all():
        # exact integer estimators for the headline numbers
        both = np.array([_pass_k(a, b, k) for a, b in zip(n.tolist(), c.tolist())])
        at_t, hat_t = both[:, 0].copy(), both[:, 1].copy()
        at, hat = float(math.fsum(at_t) / len(tasks)), float(math.fsum(hat_t) / len(tasks))
        ivals["pass_at_k"] = _both(at_t, intervals.fixed_set_bound(at_t))
        ivals["pass_hat_k"] = _both(hat_t, intervals.fixed_set_bound(hat_t))
    scored = int(cells.scored[tasks].sum())
    score = None
    if scored:
        sums = cells.scores[tasks]
        per_task = sums / n
        score = float(per_task.mean())
        ivals["score"] = _both(per_task, intervals.fixed_set(n, sums, adaptive=opt.adaptive))

    # Curves over the first m trials of every task: a (tasks, m) 0/1 matrix.
    m = int(n.min())
    x = np.ascontiguousarray(cells.trials[tasks, :m], dtype=np.float64)
    cm = x.sum(axis=1)
    at_curve, hat_curve = pass_curves(np.full(len(tasks), m), cm, m)
    mse = None
    if m >= 2:
        k_max = m if opt.mse_k_max is None else min(opt.mse_k_max, m)
        mse = mse_vs_k(x, k_max, against="true_mean").tolist()
    return Stats(
        k=k,
        tasks=len(tasks),
        incomplete_tasks=int((~complete).sum()),
        episodes=int(n.sum()),
        passed=int(c.sum()),
        errors=int(cells.errors[tasks].sum()),
        avg=float(rate.mean()),
        pass_at_k=at,
        pass_hat_k=hat,
        ci95=ivals["avg"]["population"],
        intervals=ivals,
        unjudged=unjudged,
        bounds=bounds,
        score=score,
        scored=scored,
        pass_at_k_curve=at_curve.mean(axis=0).tolist(),
        pass_hat_k_curve=hat_curve.mean(axis=0).tolist(),
        mse_vs_k=mse,
    )


def _with(cls: type, base: Stats, **extra: Any) -> Any:
    return cls(**{f: getattr(base, f) for f in Stats.__struct_fields__}, **extra)


def summarize(
    outcomes: Iterable[Any] | OutcomeColumns,
    k: int | None = None,
    *,
    mse_k_max: int | None = None,
    adaptive: bool = False,
) -> dict[str, ModelStats]:
    """Per-model (and per-benchmark, per-domain) statistics of one leaderboard; the module
    docstring has the policy.

    Rows are ``Outcome``s, tuples in its field order, or mappings with its field names; or
    all of them as ``OutcomeColumns`` (what a report passes: no object per episode).
    ``k``: the leaderboard's k (default: the fewest scored trials of any task of any model,
    so every row supports it). ``mse_k_max``: cap on the k of ``mse_vs_k``. ``adaptive``:
    the trials per task were chosen from the outcomes (an adaptive sweep): the intervals
    over these tasks take a variance floor per task (``intervals.fixed_set``). Raises
    ValueError on a duplicate (model, task_key, trial), on a task seen under two domains, or
    on k or mse_k_max < 1.
    """
    for name, v in (("k", k), ("mse_k_max", mse_k_max)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise ValueError(f"{name} must be an int >= 1, got {v!r}")
    opt = _Options(mse_k_max, adaptive)
    oc = outcomes if isinstance(outcomes, OutcomeColumns) else OutcomeColumns.of(
        _coerce(o) for o in outcomes)
    if not len(oc):
        return {}
    # cells (model, task), numbered in the order their first outcome comes
    key = oc.model * max(1, len(oc.tasks)) + oc.task
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    cell, first = rank[inverse.ravel()], first[order]
    _check_outcomes(oc, cell, first)
    cells = _Cells(oc, cell, len(first))
    scored_n = cells.n[cells.n > 0]
    mk = k if k is not None else int(scored_n.min()) if len(scored_n) else 1
    cmodel, cdomain = oc.model[first], oc.domain[first]
    cbench = [oc.benchmarks[b] or _benchmark_of(oc.tasks[t])
              for b, t in zip(oc.benchmark[first].tolist(), oc.task[first].tolist())]
    bench_names = sorted(set(cbench))
    bench_code = {b: i for i, b in enumerate(bench_names)}
    cbench_i = np.array([bench_code[b] for b in cbench], dtype=np.int64)
    domain_order = sorted(range(len(oc.domains)), key=oc.domains.__getitem__)

    def per_domain(g: np.ndarray) -> dict[str, Stats]:
        return {oc.domains[d]: _stats(cells, g[cdomain[g] == d], mk, opt)
                for d in domain_order if (cdomain[g] == d).any()}

    out: dict[str, ModelStats] = {}
    by_model = np.argsort(cmodel, kind="stable")
    bounds = np.searchsorted(cmodel[by_model], np.arange(len(oc.models) + 1))
    for m in sorted(range(len(oc.models)), key=oc.models.__getitem__):
        g = by_model[bounds[m]:bounds[m + 1]]  # the model's cells, in order
        if not len(g):
            continue
        out[oc.models[m]] = _with(
            ModelStats, _stats(cells, g, mk, opt), domains=per_domain(g),
            benchmarks={bench_names[b]: _with(BenchmarkStats, _stats(cells, gb, mk, opt),
                                              domains=per_domain(gb))
                        for b in range(len(bench_names))
                        if len(gb := g[cbench_i[g] == b])})
    return out


def _check_outcomes(oc: OutcomeColumns, cell: np.ndarray, first: np.ndarray) -> None:
    """ValueError at the first outcome whose task has another domain in that model, or
    whose trial that model's task already has."""
    other = np.flatnonzero(oc.domain != oc.domain[first][cell])
    order = np.lexsort((np.arange(len(cell)), oc.trial, cell))
    same = (cell[order][1:] == cell[order][:-1]) & (oc.trial[order][1:] == oc.trial[order][:-1])
    dup = order[1:][same]
    bad = [int(other.min())] if len(other) else []
    if len(dup):
        bad.append(int(dup.min()))
    if not bad:
        return
    i = min(bad)
    model, task = oc.models[oc.model[i]], oc.tasks[oc.task[i]]
    if len(other) and i == other.min():
        raise ValueError(f"task {task!r} of model {model!r} appears under domains "
                         f"{oc.domains[oc.domain[first[cell[i]]]]!r} and "
                         f"{oc.domains[oc.domain[i]]!r}")
    raise ValueError(f"duplicate outcome: model {model!r}, task {task!r}, "
                     f"trial {int(oc.trial[i])}")


def _benchmark_of(task_key: str) -> str:
    try:
        return TaskKey.parse(task_key).benchmark
    except ValueError:
        return "-"
