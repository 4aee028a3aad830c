"""Statistics of a run: pass metrics, MSE-vs-k, bootstrap intervals, paired tests, judge κ.

Pass metrics. For a task run n times with c passes, and k <= n:

- ``pass_at_k(n, c, k) = 1 - C(n-c, k) / C(n, k)``: the chance that at least one of k trials
  drawn without replacement from the n passes.
- ``pass_hat_k(n, c, k) = C(c, k) / C(n, k)``: the chance that all k drawn trials pass.

Both are exact averages over all k-subsets of the n trials (hence unbiased), computed with
integer binomials; ``pass_curves`` computes them for every k at once in floating point.

MSE-vs-k (VitaBench §5.1). Trial i of every task is "run i" of the benchmark; a k-run estimate
averages k of the n runs. ``mse_vs_k`` gives, for each k, the mean squared error of that
estimate against the n-run mean over all k-combinations of runs. Exactly, with r_i the score
of run i and σ² their population variance: ``MSE(k) = σ²/k · (n-k)/(n-1)`` (sampling without
replacement), so MSE(n) = 0 and MSE(k)/MSE(1) = (n-k)/(k(n-1)), e.g. 22.6% at n=32, k=4: the
77.5% reduction the paper reports. Full enumeration and seeded sampling give the same numbers
(tests check the closed form against both).

Uncertainty. ``bootstrap_ci`` resamples tasks (not episodes: trials of one task are not
independent) with replacement, seeded and vectorised; the interval is the percentile interval.
``paired_bootstrap`` compares two models on their common tasks. ``cohen_kappa`` and
``judge_agreement`` measure agreement between two judge runs.

``summarize`` policy, stated so nothing is dropped silently:

- Every episode counts. An episode that ended in error is a failure (``error=True`` overrides
  ``passed``, and its score is 0) and is counted in ``errors``.
- ``avg`` (Avg@k) is the mean pass over all episodes, whatever their task's trial count;
  ``ci95`` is its 95% bootstrap interval over tasks.
- ``score`` is the mean fractional (rubric-level) score over all episodes, an episode in
  error or without a score counting 0; None when no episode has one. ``scored`` counts the
  episodes (not in error) with a score.
- ``k`` defaults to the fewest trials any task of that model has, so every task counts. With
  an explicit ``k``, tasks with fewer than k trials are left out of ``pass_at_k`` and
  ``pass_hat_k`` only, and counted in ``incomplete_tasks``; when no task has k trials both are
  None.
- Curves (``pass_at_k_curve``, ``pass_hat_k_curve``, ``mse_vs_k``, indexed by k-1) use the
  first m trials (by trial number) of every task, m the fewest trials of any task, so they
  cover every task; ``mse_vs_k`` is None when m < 2.
- Per-benchmark and per-domain stats use the model's k.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations
from math import comb
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np
from msgspec import Struct, field

from sweepbench.ids import TaskKey

__all__ = [
    "Agreement", "BenchmarkStats", "ModelStats", "Outcome", "PairedComparison", "Stats",
    "bootstrap_ci", "cohen_kappa", "judge_agreement", "kappa_from_confusion", "mse_vs_k",
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
    method: str = "exact",
    samples: int = 4000,
    seed: int = 0,
) -> np.ndarray:
    """MSE of the k-run mean against the n-run mean, for k = 1..k_max (index k-1).

    ``x``: (tasks, n) array of per-trial results (0/1 passes or fractional scores), column i
    being run i. ``method``: "exact" (closed form), "enumerate" (every k-combination of runs;
    refuses beyond a few million combinations) or "sample" (``samples`` random
    k-combinations per k, seeded). Units: squared fractions (x in [0, 1]).
    """
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
    if method == "exact":
        if n == 1:
            return np.zeros(1)
        var = np.mean((runs - mu) ** 2)
        return var / ks * (n - ks) / (n - 1)
    if method == "enumerate":
        total = sum(comb(n, int(k)) for k in ks)
        if total > _ENUMERATE_LIMIT:
            raise ValueError(f"enumerating {total:,} combinations is too many; use 'exact'")
        out = np.empty(k_max)
        for k in ks:
            idx = np.array(list(combinations(range(n), int(k))), dtype=np.intp)
            out[k - 1] = np.mean((runs[idx].mean(axis=1) - mu) ** 2)
        return out
    if method == "sample":
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        rng = np.random.default_rng(seed)
        # The first k runs of a uniform random permutation are a uniform random k-subset.
        perms = np.argsort(rng.random((samples, n)), axis=1)
        est = np.cumsum(runs[perms], axis=1)[:, :k_max] / ks
        return np.mean((est - mu) ** 2, axis=0)
    raise ValueError(f"method must be 'exact', 'enumerate' or 'sample', got {method!r}")


# ---- bootstrap ----------------------------------------------------------------------------


def _resample_weights(rng: np.random.Generator, tasks: int, n_boot: int) -> np.ndarray:
    """(n_boot, tasks) counts: how often each task is drawn in each bootstrap replicate."""
    return rng.multinomial(tasks, np.full(tasks, 1.0 / tasks), size=n_boot).astype(np.float64)


def bootstrap_ci(
    num: Any,
    den: Any = None,
    *,
    n_boot: int = DEFAULT_BOOT,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval over tasks of ``sum(num) / sum(den)``.

    ``num``: one value per task (e.g. passes); ``den``: per-task weights (e.g. trials;
    default 1, giving the mean of ``num``). Deterministic for a given seed.
    """
    num = np.asarray(num, dtype=np.float64).ravel()
    den = np.ones_like(num) if den is None else np.asarray(den, dtype=np.float64).ravel()
    if num.size == 0 or num.shape != den.shape:
        raise ValueError("bootstrap_ci needs one num and one den value per task (>= 1 task)")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    w = _resample_weights(np.random.default_rng(seed), num.size, n_boot)
    stat = (w @ num) / (w @ den)
    a = (1 - level) / 2
    lo, hi = np.quantile(stat, [a, 1 - a])
    return float(lo), float(hi)


class PairedComparison(Struct, kw_only=True):
    """Model a minus model b on their common tasks (per-task mean scores)."""

    tasks: int
    mean_a: float
    mean_b: float
    diff: float
    ci95: list[float]
    p_value: float
    """Two-sided paired-bootstrap p-value of "no difference"; 1.0 when the two agree on
    every task."""


def paired_bootstrap(
    a: Any, b: Any, *, n_boot: int = 10_000, seed: int = 0
) -> PairedComparison:
    """Paired bootstrap over tasks: ``a[t]``, ``b[t]`` are the two models' scores on task t.

    The p-value is the share of replicates whose difference lies at least as far from the
    observed one as the observed one lies from 0 (the shifted, null-centred bootstrap),
    counted with the usual +1 so it is never exactly 0.
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape or a.size == 0:
        raise ValueError(f"need two equal-length, non-empty score lists, got {a.size}, {b.size}")
    d = a - b
    observed = float(d.mean())
    w = _resample_weights(np.random.default_rng(seed), d.size, n_boot)
    boot = (w @ d) / d.size
    tol = 1e-12 * max(1.0, abs(observed))
    extreme = int(np.count_nonzero(np.abs(boot - observed) >= abs(observed) - tol))
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return PairedComparison(
        tasks=int(d.size), mean_a=float(a.mean()), mean_b=float(b.mean()), diff=observed,
        ci95=[float(lo), float(hi)], p_value=min(1.0, (extreme + 1) / (n_boot + 1)),
    )


# ---- agreement ----------------------------------------------------------------------------


def kappa_from_confusion(matrix: Any) -> float:
    """Cohen's κ of a square confusion matrix (rows: rater A, columns: rater B).

    NaN when chance agreement is 1 (both raters used one and the same label throughout).
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.sum() <= 0:
        raise ValueError(f"need a non-empty square confusion matrix, got shape {m.shape}")
    total = m.sum()
    po = np.trace(m) / total
    pe = float(m.sum(axis=1) @ m.sum(axis=0)) / total**2
    if pe >= 1.0:
        return math.nan
    return float((po - pe) / (1.0 - pe))


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Cohen's κ of two raters' labels for the same items (any hashable labels)."""
    if len(a) != len(b) or not a:
        raise ValueError(f"need two equal-length, non-empty label lists, got {len(a)}, {len(b)}")
    labels = sorted(set(a) | set(b), key=repr)
    index = {label: i for i, label in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)))
    np.add.at(m, ([index[x] for x in a], [index[y] for y in b]), 1)
    return kappa_from_confusion(m)


_RUBRIC_KEYS = ("rubric", "rubrics", "nl_rubrics")
_DECISION_KEYS = ("met", "satisfied", "passed", "pass", "value")


def rubric_decisions(details: Mapping[str, Any] | None) -> list[bool] | None:
    """The per-rubric-item decisions in a judgment's details, or None when it has none.

    Read from ``details["rubric"]`` (or "rubrics", "nl_rubrics"): a list of booleans / 0-1
    numbers, a list of objects with "met" (or "satisfied", "passed", "pass", "value"), or an
    object mapping item names to booleans (items in name order).
    """
    if not isinstance(details, Mapping):
        return None
    raw = next((details[k] for k in _RUBRIC_KEYS if k in details), None)
    if isinstance(raw, Mapping):
        raw = [raw[name] for name in sorted(raw)]
    if not isinstance(raw, list):
        return None
    out = []
    for item in raw:
        if isinstance(item, Mapping):
            item = next((item[k] for k in _DECISION_KEYS if k in item), None)
        if isinstance(item, bool) or (isinstance(item, (int, float)) and item in (0, 1)):
            out.append(bool(item))
        else:
            return None  # not a decision list we understand: no rubric, rather than a guess
    return out


class Agreement(Struct, kw_only=True):
    episodes: int
    """Episodes with a pass/fail verdict from both judge runs."""
    pass_agreement: float | None
    pass_kappa: float | None
    rubric_episodes: int
    """Episodes with rubric decisions of the same length from both runs."""
    rubric_items: int
    rubric_mismatched: int
    """Episodes with rubric decisions from both runs, but of different lengths (left out)."""
    rubric_agreement: float | None
    rubric_kappa: float | None


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else x


def judge_agreement(a: Mapping[str, Mapping], b: Mapping[str, Mapping]) -> Agreement:
    """Agreement of two judge runs: episode_id -> judgment (with "passed" and "details").

    κ over task pass (episodes judged pass/fail by both) and over rubric decisions (every item
    of episodes where both runs give a decision list of the same length). None where there is
    nothing to compare, or κ is undefined (one label throughout).
    """
    pa, pb, ra, rb = [], [], [], []
    rubric_eps = mismatched = 0
    for eid in sorted(set(a) & set(b)):
        ja, jb = a[eid], b[eid]
        if ja.get("passed") is not None and jb.get("passed") is not None:
            pa.append(bool(ja["passed"]))
            pb.append(bool(jb["passed"]))
        da, db = rubric_decisions(ja.get("details")), rubric_decisions(jb.get("details"))
        if da is not None and db is not None:
            if len(da) == len(db):
                rubric_eps += 1
                ra += da
                rb += db
            else:
                mismatched += 1

    def agree(x: list, y: list) -> tuple[float | None, float | None]:
        if not x:
            return None, None
        return sum(p == q for p, q in zip(x, y)) / len(x), _finite(cohen_kappa(x, y))

    pass_agree, pass_kappa = agree(pa, pb)
    rubric_agree, rubric_kappa = agree(ra, rb)
    return Agreement(
        episodes=len(pa), pass_agreement=pass_agree, pass_kappa=pass_kappa,
        rubric_episodes=rubric_eps, rubric_items=len(ra), rubric_mismatched=mismatched,
        rubric_agreement=rubric_agree, rubric_kappa=rubric_kappa,
    )


# ---- summarize ----------------------------------------------------------------------------


class Outcome(NamedTuple):
    """One episode's outcome. ``task_key`` identifies the task across models.

    ``score``: the judgment's fractional score in [0, 1], None when it has none.
    ``benchmark``: empty means the benchmark part of ``task_key`` ("-" when it is not a
    ``benchmark:domain:lang:id`` key).
    """

    model: str
    domain: str
    task_key: str
    trial: int
    passed: bool
    error: bool = False
    score: float | None = None
    benchmark: str = ""


class Stats(Struct, kw_only=True):
    k: int
    tasks: int
    """Tasks with at least one episode."""
    incomplete_tasks: int
    """Tasks with fewer than k trials: in ``avg``, not in ``pass_at_k`` / ``pass_hat_k``."""
    episodes: int
    passed: int
    errors: int
    avg: float
    """Avg@k: mean pass over all episodes."""
    pass_at_k: float | None
    """Mean over tasks with >= k trials; None when there are none."""
    pass_hat_k: float | None
    ci95: list[float] | None = None
    """95% bootstrap interval (over tasks) of ``avg``."""
    score: float | None = None
    """Mean fractional score over all episodes (errors and missing scores count 0); None when
    no episode has a score."""
    scored: int = 0
    """Episodes (not in error) with a score."""
    pass_at_k_curve: list[float] | None = None
    """Pass@k for k = 1..m (index k-1), m the fewest trials of any task."""
    pass_hat_k_curve: list[float] | None = None
    mse_vs_k: list[float] | None = None
    """MSE of the k-run Avg against the m-run Avg, k = 1..m (index k-1); None when m < 2."""


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


class _Task:
    __slots__ = ("benchmark", "domain", "n", "c", "errors", "trials", "scores", "scored")

    def __init__(self, benchmark: str, domain: str) -> None:
        self.benchmark = benchmark
        self.domain = domain
        self.n = self.c = self.errors = self.scored = 0
        self.trials: dict[int, bool] = {}  # trial -> passed
        self.scores = 0.0


class _Options(NamedTuple):
    n_boot: int
    seed: int
    mse_k_max: int | None


def _stats(tasks: list[_Task], k: int, opt: _Options) -> Stats:
    n = np.fromiter((t.n for t in tasks), np.int64, len(tasks))
    c = np.fromiter((t.c for t in tasks), np.int64, len(tasks))
    episodes, passed = int(n.sum()), int(c.sum())
    complete = n >= k
    at = hat = None
    if complete.any():
        # exact integer estimators for the headline numbers
        nc = [(t.n, t.c) for t in tasks if t.n >= k]
        at = sum(pass_at_k(a, b, k) for a, b in nc) / len(nc)
        hat = sum(pass_hat_k(a, b, k) for a, b in nc) / len(nc)
    scored = sum(t.scored for t in tasks)

    # Curves over the first m trials of every task: a (tasks, m) 0/1 matrix.
    m = int(n.min())
    x = np.array([[v for _, v in sorted(t.trials.items())[:m]] for t in tasks], np.float64)
    cm = x.sum(axis=1)
    at_curve, hat_curve = pass_curves(np.full(len(tasks), m), cm, m)
    mse = None
    if m >= 2:
        k_max = m if opt.mse_k_max is None else min(opt.mse_k_max, m)
        mse = mse_vs_k(x, k_max).tolist()
    return Stats(
        k=k,
        tasks=len(tasks),
        incomplete_tasks=int((~complete).sum()),
        episodes=episodes,
        passed=passed,
        errors=sum(t.errors for t in tasks),
        avg=passed / episodes if episodes else 0.0,
        pass_at_k=at,
        pass_hat_k=hat,
        ci95=list(bootstrap_ci(c, n, n_boot=opt.n_boot, seed=opt.seed)),
        score=(sum(t.scores for t in tasks) / episodes) if scored else None,
        scored=scored,
        pass_at_k_curve=at_curve.mean(axis=0).tolist(),
        pass_hat_k_curve=hat_curve.mean(axis=0).tolist(),
        mse_vs_k=mse,
    )


def _with(cls: type, base: Stats, **extra: Any) -> Any:
    return cls(**{f: getattr(base, f) for f in Stats.__struct_fields__}, **extra)


def summarize(
    outcomes: Iterable[Any],
    k: int | None = None,
    *,
    n_boot: int = DEFAULT_BOOT,
    seed: int = 0,
    mse_k_max: int | None = None,
) -> dict[str, ModelStats]:
    """Per-model (and per-benchmark, per-domain) statistics; the module docstring has the policy.

    Rows are ``Outcome``s, tuples in its field order, or mappings with its field names.
    ``n_boot``, ``seed``: the bootstrap behind ``ci95``. ``mse_k_max``: cap on the k of
    ``mse_vs_k``. Raises ValueError on a duplicate (model, task_key, trial), on a task seen
    under two domains, or on k or mse_k_max < 1.
    """
    for name, v in (("k", k), ("mse_k_max", mse_k_max)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise ValueError(f"{name} must be an int >= 1, got {v!r}")
    opt = _Options(n_boot, seed, mse_k_max)
    by_model: dict[str, dict[str, _Task]] = defaultdict(dict)
    for raw in outcomes:
        o = _coerce(raw)
        tasks = by_model[o.model]
        t = tasks.get(o.task_key)
        if t is None:
            bench = o.benchmark or _benchmark_of(o.task_key)
            t = tasks[o.task_key] = _Task(bench, o.domain)
        elif t.domain != o.domain:
            raise ValueError(
                f"task {o.task_key!r} of model {o.model!r} appears under domains "
                f"{t.domain!r} and {o.domain!r}"
            )
        if o.trial in t.trials:
            raise ValueError(f"duplicate outcome: model {o.model!r}, task {o.task_key!r}, "
                             f"trial {o.trial}")
        ok = bool(o.passed) and not o.error
        t.trials[o.trial] = ok
        t.n += 1
        t.errors += bool(o.error)
        t.c += ok
        if o.score is not None and not o.error:  # an error scores 0 whatever it carries
            t.scored += 1
            t.scores += float(o.score)

    out: dict[str, ModelStats] = {}
    for model in sorted(by_model):
        tasks = list(by_model[model].values())
        mk = k if k is not None else min(t.n for t in tasks)
        domains: dict[str, list[_Task]] = defaultdict(list)
        benches: dict[str, list[_Task]] = defaultdict(list)
        for t in tasks:
            domains[t.domain].append(t)
            benches[t.benchmark].append(t)

        def per_domain(ts: list[_Task]) -> dict[str, Stats]:
            groups: dict[str, list[_Task]] = defaultdict(list)
            for t in ts:
                groups[t.domain].append(t)
            return {d: _stats(g, mk, opt) for d, g in sorted(groups.items())}

        out[model] = _with(
            ModelStats, _stats(tasks, mk, opt),
            domains={d: _stats(ts, mk, opt) for d, ts in sorted(domains.items())},
            benchmarks={b: _with(BenchmarkStats, _stats(ts, mk, opt), domains=per_domain(ts))
                        for b, ts in sorted(benches.items())},
        )
    return out


def _benchmark_of(task_key: str) -> str:
    try:
        return TaskKey.parse(task_key).benchmark
    except ValueError:
        return "-"
