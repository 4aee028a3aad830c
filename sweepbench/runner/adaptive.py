"""Adaptive sweeps: when to stop adding trials, and where the next ones go.

Pure, deterministic functions over per-(model, task) pass counts ``{model: {task: (n, c)}}``
(n scored trials, c passes) of **one** benchmark's leaderboard; the sweep calls them between
batches. Nothing here runs an episode or reads the store.

Stopping rules
--------------

- ``--target-ci W`` (:func:`ci_status`): every model's headline Avg@k has a 95% interval
  of half-width <= W. The interval is the report's **over these tasks**
  (``intervals.fixed_set``), not the one over the task population: adding trials narrows
  only the former; the population interval has a floor set by how much tasks differ
  (s^2 / T), which no number of trials moves, so a W below it would never stop. Half-width
  is half the (Wilson, hence asymmetric) interval's width. The interval is the one the
  report must show for an adaptive sweep (``adaptive=True``: a variance floor per task,
  see Allocation), so that the W the sweep stops at is the W the reader sees.
- ``--until-ranked [--margin M]`` (:func:`ranking_status`): each pair of neighbours in
  leaderboard order is *separated* (the report's paired sign-flip test on the shared
  tasks, its p-value adjusted over the report's family with the report's correction, at
  the report's alpha: ``comparisons.compare``) or *within the margin*: the difference over
  these tasks is shown to be less than M in size (two one-sided tests, each at alpha over
  the number of neighbour pairs, Bonferroni, on a normal approximation of the difference
  of the two fixed-set means). A pair that is neither is *open*; the sweep stops when none
  is.

Allocation
----------

The interval's variance is the sum over tasks of each task's variance (over T^2). The next
batch goes, one trial at a time, to the cells whose next trial is expected to shrink their
task's variance most (:func:`gain`, :func:`allocate`): tasks far from 0 and 1 with few
trials. The per-task variance is the one the interval uses for an adaptive sweep
(``intervals.task_variance(..., adaptive=True)``): the unbiased estimate, but at least that
of a rate shrunk towards 1/2, so a task seen 0 of 4 times (its true rate may be 0.05) keeps
a share and a say. A rule that trusts 0/4 puts no more trials there and stops early: it
spent 0.39 of the fixed-k sweep's calls and its intervals held the truth 0.78 of the time
(``benchmarks/adaptive.py``), which is why the floor is there (and costs calls).
For a target CI each model still wider than W gets ``batch`` trials; for a ranking each
open pair gets ``batch`` trials over both models' cells (the variance of their difference
is the sum of theirs), and is charged with them (:func:`next_batch`'s ``by_pair``).
``batch`` is per model (per endpoint): about what keeps that endpoint's slots busy.

Resume
------

A batch is a function of the outcomes of the batches before it. :func:`replay` rebuilds the
rounds from per-trial outcomes (trial i of a cell is the same episode whichever run paid for
it), using only trials below each round's targets, so a sweep interrupted mid-batch and
run again recomputes the same batches, runs only the trials not on record and reaches the
same decision.
"""

from __future__ import annotations

import heapq
import math
from statistics import NormalDist
from typing import Any, Iterable, Mapping, Sequence

from sweepbench.results import intervals
from sweepbench.results.comparisons import ALPHA, compare

__all__ = ["CI", "Counts", "RANKED", "allocate", "ci_status", "counts_from", "gain",
           "half_width", "next_batch", "ranking_status", "replay"]

Counts = Mapping[str, Mapping[str, tuple[int, int]]]
"""model -> task -> (scored trials n, passes c)."""

CI, RANKED = "target-ci", "until-ranked"
N_BOOT = 2000  # the report's replicates (stats.DEFAULT_BOOT) for the sign-flip p-value


def counts_from(trials: Mapping[str, Mapping[str, Sequence[Any]]]) -> dict:
    """``{model: {task: [passed, ...]}}`` (trial order; None = not on record, which ends
    the usable prefix) -> :data:`Counts` of each cell's leading trials on record."""
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for m, tasks in trials.items():
        row = out.setdefault(m, {})
        for t, seq in tasks.items():
            n = c = 0
            for v in seq:
                if v is None:
                    break
                n, c = n + 1, c + bool(v)
            row[t] = (n, c)
    return out


def half_width(cells: Mapping[str, tuple[int, int]], *, floor: bool = True) -> float:
    """Half the width of the report's 95% interval over these tasks of one model's Avg@k,
    as the report shows it for an adaptive sweep (``fixed_set(..., adaptive=True)``: with a
    variance floor per task, without which stopping on the interval broke its coverage;
    ``floor=False``: as for a fixed-k sweep); inf for a model with no task of >= 1 trial."""
    have = [(n, c) for n, c in cells.values() if n > 0]
    if not have:
        return math.inf
    lo, hi = intervals.fixed_set([n for n, _ in have], [c for _, c in have],
                                 adaptive=floor)
    return (hi - lo) / 2.0


def ci_status(counts: Counts, target: float, *, floor: bool = True) -> dict[str, dict]:
    """model -> {"half_width", "done"}: done when the half-width (:func:`half_width`) is
    <= ``target``."""
    if not target > 0:
        raise ValueError(f"the target half-width must be > 0, got {target}")
    out = {}
    for m in sorted(counts):
        w = half_width(counts[m], floor=floor)
        out[m] = {"half_width": w, "done": w <= target}
    return out


def _rates(cells: Mapping[str, tuple[int, int]]) -> dict[str, float]:
    return {t: c / n for t, (n, c) in cells.items() if n > 0}


def _var(n: int, c: int) -> float:
    """The variance of one task's pass rate as the adaptive interval takes it; the binomial
    bound 1/(4n) below 2 trials."""
    if n < 2:
        return 0.25 / max(n, 1)
    return float(intervals.task_variance(n, c, adaptive=True))


def ranking_status(counts: Counts, *, margin: float | None = None, correction: str = "holm",
                   seed: int = 0, n_boot: int = N_BOOT) -> list[dict]:
    """Neighbour pairs in leaderboard order (best Avg@k first, names breaking ties, as the
    report orders), each ``{"a", "b", "diff", "p_adjusted", "separated", "within_margin",
    "open"}``. ``separated``: the report's comparison (same family, correction and alpha)
    calls the pair significant. ``within_margin``: ``|diff| + z * se < margin`` with z the
    normal quantile at 1 - alpha / pairs and se the fixed-set standard error of the
    difference over the shared tasks (trial noise only: the question is these tasks)."""
    rates = {m: _rates(counts[m]) for m in counts}
    avg = {m: (sum(r.values()) / len(r) if r else 0.0) for m, r in rates.items()}
    order = sorted((m for m in rates if rates[m]), key=lambda m: (-avg[m], m))
    fam = compare(rates, order, n_boot=n_boot, seed=seed, correction=correction)
    adjusted = {(r["a"], r["b"]): r for r in fam["pairs"]}
    neighbours = list(zip(order, order[1:]))
    z = NormalDist().inv_cdf(1 - ALPHA / max(1, len(neighbours)))
    out = []
    for a, b in neighbours:
        common = sorted(set(rates[a]) & set(rates[b]))
        row = adjusted.get((a, b))
        diff = (sum(rates[a][t] - rates[b][t] for t in common) / len(common)) if common else 0.0
        se = (math.sqrt(sum(_var(*counts[a][t]) + _var(*counts[b][t]) for t in common))
              / len(common)) if common else math.inf
        separated = bool(row and row["significant"])
        within = margin is not None and abs(diff) + z * se < margin
        out.append({"a": a, "b": b, "diff": diff, "se": se,
                    "p_adjusted": row["p_adjusted"] if row else 1.0,
                    "separated": separated, "within_margin": within,
                    "open": not (separated or within)})
    return out


def gain(n: int, c: float, *, floor: bool = True) -> float:
    """How much one more trial is expected to shrink a task's share of the variance of the
    mean: the per-task variance the interval uses (``intervals.task_variance``) now, minus
    its expectation after one more trial, which passes with the chance ``(c + a) / (n +
    2a)`` (a = ``intervals.ADAPTIVE_PRIOR``, the floor's own shrinkage, so that the two
    agree and a task seen 0 of n times still has a positive gain). Largest for tasks far
    from 0 and 1 with few trials; a task with fewer than 2 trials comes first (inf): its
    variance is not estimated yet. ``c`` may be fractional (see :func:`allocate`)."""
    if n < 2:
        return math.inf
    a = intervals.ADAPTIVE_PRIOR
    p = (c + a) / (n + 2 * a)
    now, passed, failed = intervals.task_variance([n, n + 1, n + 1], [c, c + 1, c],
                                                  adaptive=floor).tolist()
    return now - (p * passed + (1 - p) * failed)


def allocate(cells: Iterable[tuple[str, str]], counts: Counts, trials: int, *,
             max_trials: int | None = None, pending: Mapping[tuple[str, str], int] | None = None,
             floor: bool = True) -> dict[tuple[str, str], int]:
    """``trials`` more trials over ``cells`` ((model, task) pairs), one at a time to the cell
    of largest :func:`gain` given what it has and what is already ``pending`` for it (the
    pass rate stays that of the trials on record: nothing new is known until they run).
    A cell never goes past ``max_trials`` in all. Ties go by task, then model, so equally
    uncertain models of a pair share a batch (both endpoints busy).
    Returns {cell: added} (cells given none left out); fewer than ``trials`` when every cell
    is at the cap."""
    pending = dict(pending or {})
    heap = []
    for model, task in set(cells):
        n, c = counts.get(model, {}).get(task, (0, 0))
        have = n + pending.get((model, task), 0)
        if max_trials is None or have < max_trials:  # (task, model): ties by task first
            heap.append((-_gain_at(n, c, have, floor), (task, model)))
    heapq.heapify(heap)
    added: dict[tuple[str, str], int] = {}
    for _ in range(max(0, trials)):
        if not heap:
            break
        _, (task, model) = heapq.heappop(heap)
        cell = (model, task)
        added[cell] = added.get(cell, 0) + 1
        n, c = counts.get(model, {}).get(task, (0, 0))
        have = n + pending.get(cell, 0) + added[cell]
        if max_trials is None or have < max_trials:
            heapq.heappush(heap, (-_gain_at(n, c, have, floor), (task, model)))
    return added


def _gain_at(n: int, c: int, have: int, floor: bool = True) -> float:
    """gain() at ``have`` trials (n on record + pending) and the pass rate on record:
    trials not yet run are taken to pass as often as those that ran."""
    if n <= 0:
        return math.inf
    return gain(have, c * have / n, floor=floor)


def next_batch(counts: Counts, rule: str, *, batch: int, target: float | None = None,
               margin: float | None = None, max_trials: int | None = None,
               budget: int | None = None, correction: str = "holm", seed: int = 0,
               n_boot: int = N_BOOT, floor: bool = True) -> dict:
    """The next batch of one benchmark's adaptive sweep under ``rule`` (:data:`CI` with
    ``target``, or :data:`RANKED` with an optional ``margin``): ``{"done", "why", "add":
    {(model, task): trials}, "by_pair": {"a|b": trials}, "status": ...}``. ``batch``: trials
    per model still wide (CI) or per open pair (ranking). ``budget``: model calls left (the
    batch is cut to it, whole cells first by gain). ``done`` with ``why`` in "target",
    "ranked", "max_trials" (nothing left to add under the cap), "budget". ``floor``: see
    :func:`half_width` (False only to measure what the floor buys)."""
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    add: dict[tuple[str, str], int] = {}
    by_pair: dict[str, int] = {}
    if rule == CI:
        if target is None:
            raise ValueError("the target-ci rule needs a target half-width")
        status: Any = ci_status(counts, target, floor=floor)
        if all(s["done"] for s in status.values()):
            return {"done": True, "why": "target", "add": {}, "by_pair": {}, "status": status}
        for m in (m for m, s in status.items() if not s["done"]):
            add.update(allocate([(m, t) for t in counts[m]], counts, batch,
                                max_trials=max_trials, floor=floor))
    elif rule == RANKED:
        status = ranking_status(counts, margin=margin, correction=correction, seed=seed,
                                n_boot=n_boot)
        if not any(p["open"] for p in status):
            return {"done": True, "why": "ranked", "add": {}, "by_pair": {}, "status": status}
        for p in (p for p in status if p["open"]):
            common = set(counts[p["a"]]) & set(counts[p["b"]])
            got = allocate([(m, t) for m in (p["a"], p["b"]) for t in common], counts, batch,
                           max_trials=max_trials, pending=add, floor=floor)
            by_pair[f"{p['a']}|{p['b']}"] = sum(got.values())
            for cell, k in got.items():
                add[cell] = add.get(cell, 0) + k
    else:
        raise ValueError(f"rule must be {CI!r} or {RANKED!r}, got {rule!r}")
    if not add:
        return {"done": True, "why": "max_trials", "add": {}, "by_pair": {}, "status": status}
    if budget is not None and sum(add.values()) > budget:
        if budget <= 0:
            return {"done": True, "why": "budget", "add": {}, "by_pair": {}, "status": status}
        add = _cut(add, counts, budget, floor)
        by_pair = {}  # charged by cell no longer: the batch was cut
    return {"done": False, "why": None, "add": add, "by_pair": by_pair, "status": status}


def _cut(add: dict[tuple[str, str], int], counts: Counts, budget: int, floor: bool
         ) -> dict[tuple[str, str], int]:
    """The first ``budget`` trials of ``add``, in the order of gain allocate() gives them."""
    heap = []
    for cell in sorted(add):
        n, c = counts.get(cell[0], {}).get(cell[1], (0, 0))
        heap.append((-_gain_at(n, c, n, floor), cell, 0))
    heapq.heapify(heap)
    out: dict[tuple[str, str], int] = {}
    while heap and budget > 0:
        _, cell, k = heapq.heappop(heap)
        out[cell] = k + 1
        budget -= 1
        if k + 1 < add[cell]:
            n, c = counts.get(cell[0], {}).get(cell[1], (0, 0))
            heapq.heappush(heap, (-_gain_at(n, c, n + k + 1, floor), cell, k + 1))
    return out


def replay(trials: Mapping[str, Mapping[str, Sequence[Any]]], rule: str, *, start: int,
           batch: int, max_calls: int | None = None, **rule_args: Any) -> dict:
    """Where an adaptive sweep stands, rebuilt from per-trial outcomes ``{model: {task:
    [passed or None, ...]}}`` (index = trial number; every cell of the sweep listed, an empty
    list for one with nothing on record). Round 0 asks ``start`` trials of every cell; round
    r+1 is :func:`next_batch` on the trials below round r's targets only, so trials on record
    beyond them (a partial batch of an interrupted run) change nothing until a round asks
    for them, and then are reused, not paid again. ``max_calls``: trials in all (every
    round's targets summed), the cost cap. ``rule_args`` go to :func:`next_batch`.

    Returns ``{"done", "why", "rounds", "targets": {cell: trials}, "run": {cell: [trial
    numbers to run now]}, "by_pair": {"a|b": trials charged}, "status"}``: ``run`` is empty
    exactly when ``done``."""
    if start < 1:
        raise ValueError(f"start must be >= 1, got {start}")
    cells = [(m, t) for m in sorted(trials) for t in sorted(trials[m])]
    targets = {cell: start for cell in cells}
    by_pair: dict[str, int] = {}
    rounds = 0
    while True:
        run = {}
        for m, t in cells:
            seq = list(trials[m][t])
            gaps = [i for i in range(targets[(m, t)]) if i >= len(seq) or seq[i] is None]
            if gaps:
                run[(m, t)] = gaps
        if run:
            return {"done": False, "why": None, "rounds": rounds, "targets": targets,
                    "run": run, "by_pair": by_pair, "status": None}
        counts = {m: {t: (targets[(m, t)], sum(bool(v) for v in
                                                list(trials[m][t])[:targets[(m, t)]]))
                      for t in trials[m]} for m in trials}
        budget = None if max_calls is None else max_calls - sum(targets.values())
        nb = next_batch(counts, rule, batch=batch, budget=budget, **rule_args)
        if nb["done"]:
            return {"done": True, "why": nb["why"], "rounds": rounds, "targets": targets,
                    "run": {}, "by_pair": by_pair, "status": nb["status"]}
        rounds += 1
        for cell, k in nb["add"].items():
            targets[cell] += k
        for pair, k in nb["by_pair"].items():
            by_pair[pair] = by_pair.get(pair, 0) + k
