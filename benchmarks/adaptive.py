"""Adaptive sweeps against fixed-k sweeps, on scripted models with known pass probabilities.

Each simulated leaderboard: 5 models on T tasks; a task's pass probability for a model is
``sigmoid(3 (theta_m - d_t))`` with task difficulties ``d_t ~ N(0, 1.5)`` (most tasks nearly
always or nearly never solved, as on real agent benchmarks), each model's theta set so its
mean over these tasks is 0.40, 0.41, 0.45, 0.53, 0.68 (gaps of 1, 4, 8 and 15 points).
Trial i of a cell is the same episode for every sweep (one uniform draw per (model, task,
trial)), as it is in the store. Every decision goes through
:mod:`sweepbench.runner.adaptive`; every reported number through the report's
``stats.summarize``. Measured (medians and shares over the boards):

1. ``call_ratio``: model calls of the adaptive ``--target-ci W`` sweep over those of the
   smallest fixed k whose every model's interval over these tasks has half-width <= W.
2. ``until-ranked``: the share of boards whose final order is the true one, adaptive vs
   the fixed-k sweep of equal cost (k = adaptive calls / (models x tasks), rounded), and
   the trials charged to each neighbour pair.
3. ``coverage``: the share of the report's 95% intervals (Avg@k, over these tasks, as
   ``summarize(adaptive=True)`` computes them) at the adaptive sweep's stop that hold the
   true mean over these tasks; also per board (all five hold it), the fixed-k sweep's, the
   bias of the estimate, and ``coverage_no_floor`` / ``call_ratio_no_floor``: the same
   sweep without the adaptive variance floor (stopping on, and reporting, the plain
   interval), which is what the floor corrects.
4. ``resume``: a sweep interrupted after a partial batch and resumed with ``replay``
   reaches the same targets and decision; repeated paid calls counted.
5. ``call_ratio_by_width``: point 1 (and coverage) at other half-widths; ``oracle``: the
   same ratio for an allocation that *knows* every cell's true pass probability (trials
   proportional to its standard deviation, Neyman, at least 2, per model just enough for
   the width: no pilot, no estimate, the plain interval), i.e. the most any allocation
   could save on these boards; against the fixed k reaching the target width, and the one
   reaching the width the oracle's own interval ends at.

    python benchmarks/adaptive.py [--quick] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from sweepbench.runner.adaptive import CI, RANKED, ci_status, next_batch, replay
from sweepbench.results.comparisons import leaderboard_order
from sweepbench.results.intervals import t_quantile
from sweepbench.results.stats import Outcome, summarize

MEANS = (0.40, 0.41, 0.45, 0.53, 0.68)
MODELS = tuple(f"m{i}" for i in range(len(MEANS)))
START, CAP = 4, 64  # first trials of every cell; the cap per cell
WIDTHS = (0.01, 0.015, 0.025)  # target half-widths measured (0.015: ``call_ratio``)


def _board(rng: np.random.Generator, tasks: int) -> np.ndarray:
    """(models, tasks) true pass probabilities, each row's mean exactly MEANS[m]."""
    d = rng.normal(0.0, 1.5, tasks)
    rows = []
    for target in MEANS:
        lo, hi = -10.0, 10.0
        for _ in range(80):
            mid = (lo + hi) / 2
            if np.mean(1 / (1 + np.exp(-3 * (mid - d)))) < target:
                lo = mid
            else:
                hi = mid
        rows.append(1 / (1 + np.exp(-3 * ((lo + hi) / 2 - d))))
    return np.array(rows)


def _counts(passed: np.ndarray, n: np.ndarray) -> dict:
    """{model: {task: (n, c)}} of the first n[m, t] trials."""
    out = {}
    for m, name in enumerate(MODELS):
        out[name] = {f"t{t:03d}": (int(n[m, t]), int(passed[m, t, :n[m, t]].sum()))
                     for t in range(n.shape[1])}
    return out


def _report(passed: np.ndarray, n: np.ndarray, adaptive: bool = False) -> dict:
    """What the report shows for trials [0, n) of every cell."""
    outcomes = [Outcome(name, "d", f"t{t:03d}", i, bool(passed[m, t, i]))
                for m, name in enumerate(MODELS) for t in range(n.shape[1])
                for i in range(int(n[m, t]))]
    return summarize(outcomes, adaptive=adaptive)


def _adaptive(passed: np.ndarray, rule: str, batch: int, **args) -> tuple[np.ndarray, dict]:
    n = np.full(passed.shape[:2], START, dtype=np.int64)
    index = {name: m for m, name in enumerate(MODELS)}
    by_pair: dict[str, int] = {}
    rounds = 0
    while True:
        nb = next_batch(_counts(passed, n), rule, batch=batch, max_trials=CAP, **args)
        if nb["done"]:
            return n, {"why": nb["why"], "rounds": rounds, "by_pair": by_pair,
                       "status": nb["status"]}
        rounds += 1
        for (m, t), k in nb["add"].items():
            n[index[m], int(t[1:])] += k
        for pair, k in nb["by_pair"].items():
            by_pair[pair] = by_pair.get(pair, 0) + k


def target_ci(boards: int, tasks: int, width: float, batch: int, seed: int) -> dict:
    """Points 1 and 3: the adaptive sweep as built (stopping on, and reporting, the interval
    with the adaptive variance floor) and, to show what the floor buys, without it."""
    rng = np.random.default_rng(seed)
    ratios, ratios_raw, ks, bias = [], [], [], []
    hits = {"adaptive": 0, "no_floor": 0, "fixed_k": 0}
    all_hit = {"adaptive": 0, "no_floor": 0, "fixed_k": 0}
    for _ in range(boards):
        p = _board(rng, tasks)
        passed = rng.random((len(MODELS), tasks, CAP)) < p[:, :, None]
        n, _info = _adaptive(passed, CI, batch, target=width)
        raw, _info = _adaptive(passed, CI, batch, target=width, floor=False)
        k = _fixed_k(passed, width)
        ks.append(k)
        ratios.append(float(n.sum()) / (k * n.size))
        ratios_raw.append(float(raw.sum()) / (k * n.size))
        truth = p.mean(axis=1)
        shown = {"adaptive": _report(passed, n, adaptive=True),
                 "no_floor": _report(passed, raw), "fixed_k": _report(passed, np.full(n.shape, k))}
        for name, st in shown.items():
            board_ok = True
            for m, model in enumerate(MODELS):
                lo, hi = st[model].intervals["avg"]["fixed_set"]
                hits[name] += lo <= truth[m] <= hi
                board_ok &= lo <= truth[m] <= hi
            all_hit[name] += board_ok
        bias += [shown["adaptive"][model].avg - truth[m] for m, model in enumerate(MODELS)]
    total = boards * len(MODELS)
    return {"call_ratio": statistics.median(ratios),
            "call_ratio_range": [min(ratios), max(ratios)],
            "call_ratio_no_floor": statistics.median(ratios_raw),
            "fixed_k_median": statistics.median(ks), "width": width,
            "coverage": hits["adaptive"] / total,
            "coverage_no_floor": hits["no_floor"] / total,
            "coverage_fixed_k": hits["fixed_k"] / total,
            "coverage_boards_all_models": {k: v / boards for k, v in all_hit.items()},
            "bias_mean": float(np.mean(bias)), "bias_se": float(np.std(bias) / np.sqrt(len(bias)))}


def _fixed_k(passed: np.ndarray, width: float) -> int:
    """The smallest fixed k whose every model's plain interval over these tasks is within
    ``width`` (the cap when none is)."""
    return next((k for k in range(1, CAP + 1) if all(s["done"] for s in ci_status(
        _counts(passed, np.full(passed.shape[:2], k)), width, floor=False).values())), CAP)


def oracle(boards: int, tasks: int, width: float, seed: int) -> dict:
    """Point 5: trials from the true pass probabilities (see the module docstring)."""
    rng = np.random.default_rng(seed)
    t = t_quantile(0.975, tasks - 1)
    at_target, at_final, hits = [], [], 0
    for _ in range(boards):
        p = _board(rng, tasks)
        passed = rng.random((len(MODELS), tasks, CAP)) < p[:, :, None]
        var = p * (1 - p)
        n = np.zeros(p.shape, dtype=np.int64)
        for m in range(len(MODELS)):
            lo, hi = 0.0, 1e6  # the least scale whose planned interval is within width
            for _ in range(60):
                mid = (lo + hi) / 2
                trials = np.clip(np.ceil(mid * np.sqrt(var[m])), 2, CAP)
                if t * np.sqrt((var[m] / trials).sum()) / tasks <= width:
                    hi = mid
                else:
                    lo = mid
            n[m] = np.clip(np.ceil(hi * np.sqrt(var[m])), 2, CAP)
        shown = _report(passed, n)
        final = 0.0
        for m, model in enumerate(MODELS):
            lo_m, hi_m = shown[model].intervals["avg"]["fixed_set"]
            hits += lo_m <= p[m].mean() <= hi_m
            final = max(final, (hi_m - lo_m) / 2)
        at_target.append(float(n.sum()) / (_fixed_k(passed, width) * n.size))
        at_final.append(float(n.sum()) / (_fixed_k(passed, final) * n.size))
    return {"width": width, "call_ratio": statistics.median(at_target),
            "call_ratio_at_own_width": statistics.median(at_final),
            "coverage": hits / (boards * len(MODELS))}


def until_ranked(boards: int, tasks: int, margin: float, batch: int, seed: int) -> dict:
    """Point 2."""
    rng = np.random.default_rng(seed)
    right, right_fixed, decided, calls, why = 0, 0, 0, [], {}
    pair_trials: dict[str, list[int]] = {}
    for b in range(boards):
        p = _board(rng, tasks)
        passed = rng.random((len(MODELS), tasks, CAP)) < p[:, :, None]
        truth = list(reversed(MODELS))  # MEANS ascend
        n, info = _adaptive(passed, RANKED, batch, margin=margin, seed=b)
        why[info["why"]] = why.get(info["why"], 0) + 1
        decided += info["why"] == "ranked"
        st = _report(passed, n)
        right += leaderboard_order({m: {"avg": s.avg} for m, s in st.items()}) == truth
        k = max(1, round(float(n.sum()) / n.size))
        fixed = _report(passed, np.full(n.shape, k))
        right_fixed += leaderboard_order({m: {"avg": s.avg} for m, s in fixed.items()}) == truth
        calls.append(int(n.sum()))
        gaps = {f"m{i + 1}|m{i}": round(100 * (MEANS[i + 1] - MEANS[i]))
                for i in range(len(MEANS) - 1)}
        for pair, gap in gaps.items():  # charged trials by true gap, 0 when never open
            pair_trials.setdefault(f"{gap} points ({pair})", []).append(
                info["by_pair"].get(pair, 0))
    return {"order_correct_adaptive": right / boards, "order_correct_fixed_k": right_fixed / boards,
            "decided_share": decided / boards, "stopped_by": why, "margin": margin,
            "calls_median": statistics.median(calls),
            "fixed_k_equal_cost_median": statistics.median(
                max(1, round(c / (len(MODELS) * tasks))) for c in calls),
            "trials_per_pair_median": {k: statistics.median(v) for k, v in pair_trials.items()},
            "trials_per_pair_mean": {k: float(np.mean(v)) for k, v in pair_trials.items()}}


def resume(boards: int, tasks: int, width: float, batch: int, seed: int) -> dict:
    """Point 4: run with replay to the end; again, interrupted after half of a batch."""
    rng = np.random.default_rng(seed)
    same, repeated = 0, 0
    for _ in range(boards):
        p = _board(rng, tasks)
        passed = rng.random((len(MODELS), tasks, CAP)) < p[:, :, None]

        def sweep(stop_after: int | None) -> tuple[dict, dict, int]:
            record = {m: {f"t{t:03d}": [] for t in range(tasks)} for m in MODELS}
            paid = 0
            calls_seen: set = set()
            dup = 0
            step = 0
            while True:
                r = replay(record, CI, start=START, batch=batch, target=width, max_trials=CAP)
                if r["done"]:
                    return r, record, dup
                todo = [(cell, i) for cell, idx in sorted(r["run"].items()) for i in idx]
                if stop_after is not None and step == stop_after:
                    todo = todo[: len(todo) // 2]  # interrupted mid-batch
                    stop_after = None
                for (m, t), i in todo:
                    dup += (m, t, i) in calls_seen
                    calls_seen.add((m, t, i))
                    seq = record[m][t]
                    seq.extend([None] * (i + 1 - len(seq)))
                    seq[i] = bool(passed[MODELS.index(m), int(t[1:]), i])
                    paid += 1
                step += 1

        whole, _, _ = sweep(None)
        cut, _, dup = sweep(2)
        same += whole["targets"] == cut["targets"] and whole["why"] == cut["why"]
        repeated += dup
    return {"boards": boards, "same_decision": same / boards, "repeated_calls": repeated}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="50 boards a measure (a few minutes)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    boards, tasks = (50, 100) if args.quick else (200, 120)
    t0 = time.perf_counter()
    ci = target_ci(boards, tasks, 0.015, 50, args.seed)
    print(f"target-ci: {json.dumps(ci)}", flush=True)
    ranked = until_ranked(boards, tasks, 0.03, 100, args.seed + 1)
    print(f"until-ranked: {json.dumps(ranked)}", flush=True)
    res = resume(5 if args.quick else 20, tasks, 0.03, 50, args.seed + 2)
    by_width = {}
    for w in WIDTHS:
        other = ci if w == 0.015 else target_ci(boards, tasks, w, 50, args.seed)
        by_width[str(w)] = {k: other[k] for k in ("call_ratio", "coverage", "fixed_k_median",
                                                  "call_ratio_no_floor", "coverage_no_floor")}
        by_width[str(w)]["oracle"] = oracle(boards, tasks, w, args.seed)
        print(f"width {w}: {json.dumps(by_width[str(w)])}", flush=True)
    out = {"quick": args.quick, "seed": args.seed, "boards": boards, "tasks": tasks,
           "models": len(MEANS), "true_means": MEANS, "start_trials": START,
           "cap_per_cell": CAP, "call_ratio": ci["call_ratio"], "coverage": ci["coverage"],
           "target_ci": ci, "until_ranked": ranked, "resume": res,
           "call_ratio_by_width": by_width, "oracle": by_width["0.015"]["oracle"],
           "seconds": round(time.perf_counter() - t0, 1)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
