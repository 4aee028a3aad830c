"""Pass metrics: Avg@k, the unbiased Pass@k and Pass^k estimators, per model and domain.

For a task run n times with c passes, and k <= n:

- ``pass_at_k(n, c, k) = 1 - C(n-c, k) / C(n, k)``: the chance that at least one of k trials
  drawn without replacement from the n passes.
- ``pass_hat_k(n, c, k) = C(c, k) / C(n, k)``: the chance that all k drawn trials pass.

Both are exact averages over all k-subsets of the n trials (hence unbiased), computed with
integer binomials.

``summarize`` policy, stated so nothing is dropped silently:

- Every episode counts. An episode that ended in error is a failure (``error=True`` overrides
  ``passed``) and is counted in ``errors``.
- ``avg`` (Avg@k) is the mean pass over all episodes, whatever their task's trial count.
- ``k`` defaults to the fewest trials any task of that model has, so every task counts. With
  an explicit ``k``, tasks with fewer than k trials are left out of ``pass_at_k`` and
  ``pass_hat_k`` only, and counted in ``incomplete_tasks``; when no task has k trials both are
  None.
- Per-domain stats use the model's k.
"""

from __future__ import annotations

from collections import defaultdict
from math import comb
from typing import Any, Iterable, Mapping, NamedTuple

from msgspec import Struct, field

__all__ = ["ModelStats", "Outcome", "Stats", "pass_at_k", "pass_hat_k", "summarize"]


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


class Outcome(NamedTuple):
    """One episode's outcome. ``task_key`` identifies the task across models."""

    model: str
    domain: str
    task_key: str
    trial: int
    passed: bool
    error: bool = False


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


class ModelStats(Stats, kw_only=True):
    domains: dict[str, Stats] = field(default_factory=dict)


def _coerce(row: Any) -> Outcome:
    if isinstance(row, Outcome):
        return row
    if isinstance(row, Mapping):
        return Outcome(**row)
    return Outcome(*row)


class _Task:
    __slots__ = ("domain", "n", "c", "errors", "trials")

    def __init__(self, domain: str) -> None:
        self.domain = domain
        self.n = self.c = self.errors = 0
        self.trials: set[int] = set()


def _stats(tasks: list[_Task], k: int) -> Stats:
    episodes = sum(t.n for t in tasks)
    passed = sum(t.c for t in tasks)
    complete = [t for t in tasks if t.n >= k]
    at = hat = None
    if complete:
        at = sum(pass_at_k(t.n, t.c, k) for t in complete) / len(complete)
        hat = sum(pass_hat_k(t.n, t.c, k) for t in complete) / len(complete)
    return Stats(
        k=k,
        tasks=len(tasks),
        incomplete_tasks=len(tasks) - len(complete),
        episodes=episodes,
        passed=passed,
        errors=sum(t.errors for t in tasks),
        avg=passed / episodes if episodes else 0.0,
        pass_at_k=at,
        pass_hat_k=hat,
    )


def summarize(outcomes: Iterable[Any], k: int | None = None) -> dict[str, ModelStats]:
    """Per-model (and per-domain) pass metrics; see the module docstring for the policy.

    Rows are ``Outcome``s, tuples in its field order, or mappings with its field names.
    Raises ValueError on a duplicate (model, task_key, trial), on a task seen under two
    domains, or on k < 1.
    """
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or k < 1):
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    by_model: dict[str, dict[str, _Task]] = defaultdict(dict)
    for raw in outcomes:
        o = _coerce(raw)
        tasks = by_model[o.model]
        t = tasks.get(o.task_key)
        if t is None:
            t = tasks[o.task_key] = _Task(o.domain)
        elif t.domain != o.domain:
            raise ValueError(
                f"task {o.task_key!r} of model {o.model!r} appears under domains "
                f"{t.domain!r} and {o.domain!r}"
            )
        if o.trial in t.trials:
            raise ValueError(f"duplicate outcome: model {o.model!r}, task {o.task_key!r}, "
                             f"trial {o.trial}")
        t.trials.add(o.trial)
        t.n += 1
        t.errors += bool(o.error)
        t.c += bool(o.passed) and not o.error

    out: dict[str, ModelStats] = {}
    for model in sorted(by_model):
        tasks = list(by_model[model].values())
        mk = k if k is not None else min(t.n for t in tasks)
        overall = _stats(tasks, mk)
        domains: dict[str, list[_Task]] = defaultdict(list)
        for t in tasks:
            domains[t.domain].append(t)
        out[model] = ModelStats(
            **{f: getattr(overall, f) for f in Stats.__struct_fields__},
            domains={d: _stats(ts, mk) for d, ts in sorted(domains.items())},
        )
    return out
