"""Paired comparisons of a leaderboard's models, corrected for how many are made.

Each pair is compared on its common tasks by the per-task pass rates (a task's passes over its
scored trials: the values whose mean is the headline Avg@k), with ``stats.paired_bootstrap``
(difference, 95% interval, raw p-value). Testing every pair at 0.05 finds a "significant"
pair on many boards of identical models (21% of boards with 6 models, 55% with 12, 1.6 false
pairs a board: ``benchmarks/stats_coverage.py``), so the p-values are adjusted over the
*family*: every pair the leaderboard compares (all pairs up to
``ALL_PAIRS_UP_TO`` models, else neighbours in leaderboard order). ``holm`` (the default)
bounds the chance of any false "significant" pair by ``ALPHA``; ``bh`` (Benjamini-Hochberg)
bounds the expected share of false ones among those called significant, finding more
at the price of that weaker promise. ``significant`` is ``p_adjusted <= ALPHA``.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from typing import Any, Iterable, Mapping, Sequence

import msgspec
import numpy as np

from sweepbench.results.outcome_columns import OutcomeColumns
from sweepbench.results.stats import Outcome, paired_bootstrap

__all__ = ["ALPHA", "ALL_PAIRS_UP_TO", "CORRECTIONS", "adjust", "column_task_rates", "compare",
           "leaderboard_order", "task_rates"]

ALPHA = 0.05
ALL_PAIRS_UP_TO = 12
CORRECTIONS = ("holm", "bh")


def adjust(p: Sequence[float], method: str = "holm") -> list[float]:
    """Adjusted p-values of one family, in the input order: Holm's step-down (``holm``) or
    Benjamini-Hochberg's step-up (``bh``); each at most 1 and at least its raw p."""
    if method not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    else:
        adj = np.minimum.accumulate((m / np.arange(1, m + 1) * ranked)[::-1])[::-1]
        adj = np.minimum(1.0, adj)
    out = np.empty(m)
    out[order] = adj
    return out.tolist()


def task_rates(outcomes: Iterable[Outcome]) -> dict[str, dict[str, float]]:
    """model -> task -> passes / scored trials (an error is a failed trial)."""
    cells: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for o in outcomes:
        cell = cells[o.model][o.task_key]
        cell[0] += bool(o.passed) and not o.error
        cell[1] += 1
    return {m: {t: c / n for t, (c, n) in ts.items()} for m, ts in cells.items()}


def column_task_rates(oc: OutcomeColumns) -> dict[str, dict[str, float]]:
    """``task_rates`` of outcomes given as columns: the same rates, tasks in the order their
    first outcome comes."""
    size = max(1, len(oc.tasks))
    cells, first, inverse = np.unique(oc.model * size + oc.task, return_index=True,
                                      return_inverse=True)
    n = np.bincount(inverse.ravel(), minlength=len(cells))
    c = np.bincount(inverse.ravel(), weights=oc.passed & ~oc.error, minlength=len(cells))
    out: dict[str, dict[str, float]] = {}
    for i in np.argsort(first, kind="stable").tolist():
        m, t = divmod(int(cells[i]), size)
        out.setdefault(oc.models[m], {})[oc.tasks[t]] = int(c[i]) / int(n[i])
    return out


def leaderboard_order(models: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Best Avg@k first, names breaking ties."""
    return sorted(models, key=lambda m: (-(models[m].get("avg") or 0.0), m))


def compare(rates: Mapping[str, Mapping[str, float]], order: Sequence[str], *,
            n_boot: int, seed: int, correction: str = "holm") -> dict:
    """The family of comparisons of the models in ``order`` (leaderboard order) that have
    rates: ``{"family": {...}, "pairs": [...]}``, each pair with its raw and adjusted
    p-value."""
    names = [m for m in order if m in rates]
    all_pairs = len(names) <= ALL_PAIRS_UP_TO
    pairs = list(combinations(names, 2)) if all_pairs else list(zip(names, names[1:]))
    out = []
    for a, b in pairs:
        common = sorted(set(rates[a]) & set(rates[b]))
        if not common:
            continue
        cmp = paired_bootstrap([rates[a][t] for t in common], [rates[b][t] for t in common],
                               n_boot=n_boot, seed=seed)
        out.append({"a": a, "b": b, **msgspec.to_builtins(cmp)})
    for row, p in zip(out, adjust([r["p_value"] for r in out], correction)):
        row["p_adjusted"] = p
        row["significant"] = p <= ALPHA
    scope = ("every pair of models" if all_pairs else
             f"each model against the next in leaderboard order (more than "
             f"{ALL_PAIRS_UP_TO} models)")
    return {"family": {"pairs": len(out), "models": len(names), "scope": scope,
                       "correction": correction, "alpha": ALPHA,
                       "what": "per-task pass rates on common tasks; sign-flip p-value, "
                               "bootstrap interval of the difference"},
            "pairs": out}
