"""Designs tried for issue 40's bar (adaptive calls <= 0.60 of fixed k at equal half-width,
coverage >= 0.93), on ``benchmarks/adaptive.py``'s boards; none is what the sweep ships.

- ``sequential equal-only a``: the shipped sequential sweep, but the variance floor only on
  tasks whose outcomes are all equal, with ``a`` pseudo-passes (the shipped floor: every
  task, a = 0.25). Swapped in by replacing ``intervals.task_variance`` for the run (the
  sweep's decisions and the reported interval both read it), restored after.
- ``two-stage k0 a``: a pilot of k0 trials of every cell, then one planned batch and no
  further look: trials per task proportional to the standard deviation of its pilot rate
  shrunk by ``a`` pseudo-counts (Neyman), scaled per model so the planned interval is
  within the width; reported with the plain interval (no optional stopping to correct) or
  the equal-only floor.

For each: the median over boards of adaptive calls / fixed-k calls, the fixed k being the
smallest whose plain interval reaches the target width (``at_target``) or the width the
design's reported interval actually ended at (``at_final``), and the coverage of the
reported intervals.

    python benchmarks/adaptive_variants.py [--boards 50] [--width 0.015] [--seed 0]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics

import numpy as np
from adaptive import CAP, CI, MODELS, _adaptive, _board, _counts, _fixed_k, _report

from sweepbench.results import intervals
from sweepbench.runner.adaptive import half_width

PLAIN = intervals.task_variance


@contextlib.contextmanager
def equal_only_floor(a: float):
    """``task_variance(adaptive=True)`` floored only where a task's outcomes are all equal."""
    def variance(n, c, *, adaptive=False):  # noqa: ANN001, ANN202 - task_variance's own
        var = PLAIN(n, c)
        if not adaptive:
            return var
        n, c = np.asarray(n, dtype=np.float64), np.asarray(c, dtype=np.float64)
        q = (c + a) / (n + 2 * a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where((c == 0) | (c == n), q * (1 - q) / (n + 1), var)

    old = intervals.ADAPTIVE_PRIOR
    intervals.task_variance, intervals.ADAPTIVE_PRIOR = variance, a
    try:
        yield
    finally:
        intervals.task_variance, intervals.ADAPTIVE_PRIOR = PLAIN, old


def two_stage(passed: np.ndarray, k0: int, a: float, width: float) -> np.ndarray:
    """Trials per cell of the two-stage design (see the module docstring)."""
    tasks = passed.shape[1]
    t = intervals.t_quantile(0.975, tasks - 1)
    n = np.zeros(passed.shape[:2], dtype=np.int64)
    for m in range(passed.shape[0]):
        q = (passed[m, :, :k0].sum(axis=1) + a) / (k0 + 2 * a)
        var = q * (1 - q)
        lo, hi = 0.0, 1e6
        for _ in range(60):
            mid = (lo + hi) / 2
            trials = np.clip(np.ceil(mid * np.sqrt(var)), k0, CAP)
            if t * np.sqrt((var / trials).sum()) / tasks <= width:
                hi = mid
            else:
                lo = mid
        n[m] = np.clip(np.ceil(hi * np.sqrt(var)), k0, CAP)
    return n


def measure(design: str, boards: int, tasks: int, width: float, seed: int, *, k0: int = 4,
            a: float = 0.25, floor: bool = True) -> dict:
    rng = np.random.default_rng(seed)
    at_target, at_final, hits = [], [], 0
    for _ in range(boards):
        p = _board(rng, tasks)
        passed = rng.random((len(MODELS), tasks, CAP)) < p[:, :, None]
        n = (_adaptive(passed, CI, 50, target=width)[0] if design == "sequential"
             else two_stage(passed, k0, a, width))
        shown = _report(passed, n, adaptive=floor)
        counts = _counts(passed, n)
        final = max(half_width(counts[m], floor=floor) for m in MODELS)
        for m, model in enumerate(MODELS):
            lo, hi = shown[model].intervals["avg"]["fixed_set"]
            hits += lo <= p[m].mean() <= hi
        at_target.append(float(n.sum()) / (_fixed_k(passed, width) * n.size))
        at_final.append(float(n.sum()) / (_fixed_k(passed, final) * n.size))
    return {"at_target": statistics.median(at_target), "at_final": statistics.median(at_final),
            "coverage": hits / (boards * len(MODELS))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=50)
    ap.add_argument("--width", type=float, default=0.015)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    b, w, s, tasks = args.boards, args.width, args.seed, 100
    rows = {"sequential, floor on every task, a=0.25 (shipped)":
            measure("sequential", b, tasks, w, s)}
    for a in (0.1, 0.25):
        with equal_only_floor(a):
            rows[f"sequential, floor on all-equal tasks only, a={a}"] = measure(
                "sequential", b, tasks, w, s)
    for k0, a in ((4, 0.1), (8, 0.1), (4, 0.25)):
        rows[f"two-stage k0={k0} a={a}, plain interval"] = measure(
            "two-stage", b, tasks, w, s, k0=k0, a=a, floor=False)
    with equal_only_floor(0.1):
        rows["two-stage k0=4 a=0.1, floor on all-equal tasks a=0.1"] = measure(
            "two-stage", b, tasks, w, s, k0=4, a=0.1)
    for name, r in rows.items():
        print(f"{name}: {json.dumps(r)}", flush=True)
    print(json.dumps({"boards": b, "width": w, "seed": s, "tasks": tasks, "designs": rows}))


if __name__ == "__main__":
    main()
