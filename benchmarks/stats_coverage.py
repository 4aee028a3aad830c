"""What a leaderboard reader is shown, checked on simulated leaderboards with known answers.

Per-task pass probabilities are drawn from a Beta (four shapes: U-shaped, centred, hard, very
hard), trials from them; every number goes through the code the report runs:
``stats.summarize`` (Avg@k, Pass@k, Pass^k, their intervals, the bounds) and
``comparisons.compare`` on ``comparisons.task_rates`` in ``leaderboard_order`` (the report's
``_Board.compare``). Measured:

- **Family-wise false positives**: boards of 6 and 12 *identical* models (one set of task
  probabilities, independent trials); the share of boards with at least one significant
  pair, uncorrected (raw p <= 0.05) and corrected (Holm; and Benjamini-Hochberg).
- **Coverage**: for T in {10, 20, 50} tasks and k in {1, 4, 8} trials, the share of
  simulations whose interval holds its target: over the task population, the Beta's mean
  (E[p], E[1-(1-p)^k], E[p^k]); over the task set, the mean over the drawn tasks of their
  true p, 1-(1-p)^k, p^k. Minimum over shapes for T >= 20 and, shown apart, T = 10.
- **Zero-width intervals** (there should be none), the fixed-set width from k = 4 to 8.
- **Unjudged episodes**: 10% of failures left unjudged at a true 0.30: the headline, and
  whether the bounds hold the truth.
- **Baselines** (full run only, 300 simulations a cell): the same coverage for the
  intervals not chosen, the percentile bootstrap over tasks (the report's before) and a
  plain t interval, with their widths and zero-width counts.
- **MSE-vs-k**: the paper's resampling against the n-run mean (k = 4 of 32: 1 - 28/124)
  and the leaderboard's, against the true mean (s^2/k: the last point is not 0).

Prints a table per measure, then one JSON object last.

    python benchmarks/stats_coverage.py [--quick] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict

import numpy as np

from sweepbench.results.comparisons import ALPHA, adjust, compare, leaderboard_order, task_rates
from sweepbench.results.intervals import t_quantile
from sweepbench.results.stats import Outcome, mse_vs_k, summarize

SHAPES = ((0.5, 0.5), (2.0, 2.0), (1.0, 3.0), (0.3, 1.2))
TASKS = (10, 20, 50)
KS = (1, 4, 8)
METRICS = ("avg", "pass_at_k", "pass_hat_k")
DEFAULT_BOOT = 2000  # the report's bootstrap (stats.DEFAULT_BOOT)


def _outcomes(model: str, passed: np.ndarray) -> list[Outcome]:
    return [Outcome(model, "d", f"t{t:03d}", i, bool(passed[t, i]))
            for t in range(passed.shape[0]) for i in range(passed.shape[1])]


def _targets(a: float, b: float, k: int, p: np.ndarray) -> dict[str, tuple[float, float]]:
    """metric -> (population target, this task set's target)."""
    i = np.arange(k)
    return {"avg": (a / (a + b), float(p.mean())),
            "pass_at_k": (1 - float(np.prod((b + i) / (a + b + i))),
                          float(np.mean(1 - (1 - p) ** k))),
            "pass_hat_k": (float(np.prod((a + i) / (a + b + i))), float(np.mean(p ** k)))}


def coverage(sims: int, seed: int) -> list[dict]:
    """One row per (shape, T, k): coverage of both intervals of each metric, zero widths,
    mean width of the fixed-set interval of Avg@k."""
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in SHAPES:
        for tasks in TASKS:
            for k in KS:
                ps = rng.beta(a, b, (sims, tasks))
                passed = rng.random((sims, tasks, k)) < ps[:, :, None]
                outcomes = [o for s in range(sims) for o in _outcomes(f"s{s:04d}", passed[s])]
                stats = summarize(outcomes, k=k)
                hits: dict[str, int] = defaultdict(int)
                zero = 0
                width = 0.0
                for s in range(sims):
                    st = stats[f"s{s:04d}"]
                    for metric, (pop, fixed) in _targets(a, b, k, ps[s]).items():
                        for target, truth in (("population", pop), ("fixed_set", fixed)):
                            lo, hi = st.intervals[metric][target]
                            hits[f"{metric}:{target}"] += lo <= truth <= hi
                            zero += hi <= lo
                    lo, hi = st.intervals["avg"]["fixed_set"]
                    width += (hi - lo) / sims
                rows.append({"beta": [a, b], "tasks": tasks, "k": k, "sims": sims,
                             **{key: n / sims for key, n in sorted(hits.items())},
                             "zero_width": zero, "fixed_width_avg": width})
    return rows


def _percentile_bootstrap(y: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """The interval the report showed before: percentile bootstrap over tasks."""
    w = rng.multinomial(y.size, np.full(y.size, 1.0 / y.size), size=DEFAULT_BOOT)
    lo, hi = np.quantile(w @ y / y.size, [0.025, 0.975])
    return float(lo), float(hi)


def _plain_t(y: np.ndarray) -> tuple[float, float]:
    half = t_quantile(0.975, y.size - 1) * float(y.std(ddof=1)) / np.sqrt(y.size)
    return max(0.0, y.mean() - half), min(1.0, y.mean() + half)


def baselines(sims: int, seed: int) -> list[dict]:
    """Avg@k's coverage of both targets by the intervals not chosen: the percentile
    bootstrap over tasks (the report's before) and a plain t interval."""
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in SHAPES:
        for tasks in TASKS:
            for k in KS:
                hits: dict[str, int] = defaultdict(int)
                widths: dict[str, float] = defaultdict(float)
                for _ in range(sims):
                    p = rng.beta(a, b, tasks)
                    y = rng.binomial(k, p) / k
                    for name, (lo, hi) in (("bootstrap", _percentile_bootstrap(y, rng)),
                                           ("plain_t", _plain_t(y))):
                        hits[f"{name}:population"] += bool(lo <= a / (a + b) <= hi)
                        hits[f"{name}:fixed_set"] += bool(lo <= p.mean() <= hi)
                        hits[f"{name}:zero_width"] += bool(hi <= lo)
                        widths[name] += float(hi - lo) / sims
                rows.append({"beta": [a, b], "tasks": tasks, "k": k,
                             **{key: n / sims for key, n in hits.items()
                                if not key.endswith("zero_width")},
                             **{key: n for key, n in hits.items() if key.endswith("zero_width")},
                             **{f"{name}:width": w for name, w in widths.items()}})
    return rows


def _baseline_summary(rows: list[dict]) -> dict:
    out = {}
    for name in ("bootstrap", "plain_t"):
        out[name] = {
            "coverage_population_min": _min(rows, f"{name}:population", True),
            "coverage_population_min_T10": _min(rows, f"{name}:population", False),
            "coverage_fixed_range": [min(r[f"{name}:fixed_set"] for r in rows),
                                     max(r[f"{name}:fixed_set"] for r in rows)],
            "zero_width_intervals": sum(r[f"{name}:zero_width"] for r in rows),
            "width_T20": {str(k): float(np.mean([r[f"{name}:width"] for r in rows
                                                 if r["k"] == k and r["tasks"] == 20]))
                          for k in KS}}
    return out


def fwer(models: int, boards: int, tasks: int, k: int, seed: int) -> dict:
    """Boards of identical models: the share with any significant pair, and false pairs per
    board, uncorrected, after Holm and after Benjamini-Hochberg."""
    rng = np.random.default_rng(seed)
    anyhit = defaultdict(int)
    pairs = defaultdict(int)
    for board in range(boards):
        p = rng.beta(0.5, 0.5, tasks)
        outcomes = [o for m in range(models)
                    for o in _outcomes(f"m{m:02d}", rng.random((tasks, k)) < p[:, None])]
        entries = {m: {"avg": s.avg} for m, s in summarize(outcomes).items()}
        res = compare(task_rates(outcomes), leaderboard_order(entries), n_boot=DEFAULT_BOOT,
                      seed=board)["pairs"]
        raw = [r["p_value"] for r in res]
        found = {"raw": sum(p <= ALPHA for p in raw),
                 "holm": sum(r["significant"] for r in res),  # the report's default
                 "bh": sum(p <= ALPHA for p in adjust(raw, "bh"))}
        for name, n in found.items():
            anyhit[name] += n > 0
            pairs[name] += n
    return {"models": models, "boards": boards, "tasks": tasks, "k": k,
            **{f"any_{n}": anyhit[n] / boards for n in ("raw", "holm", "bh")},
            **{f"pairs_per_board_{n}": pairs[n] / boards for n in ("raw", "holm", "bh")}}


def unjudged_bias(seed: int) -> dict:
    """A true 0.30 on 500 tasks x 4 trials; 10% of the failures left unjudged. The bounds
    should hold what the board would read had every episode been judged."""
    rng = np.random.default_rng(seed)
    passed = rng.random((500, 4)) < 0.30
    unjudged = ~passed & (rng.random((500, 4)) < 0.10)
    outcomes = [Outcome("m", "d", f"t{t:03d}", i, bool(passed[t, i]),
                        unjudged=bool(unjudged[t, i])) for t in range(500) for i in range(4)]
    st = summarize(outcomes)["m"]
    judged_all = float(passed.mean())  # every task has 4 trials: the mean of per-task means
    return {"true": 0.30, "avg_all_judged": judged_all, "avg_shown": st.avg,
            "unjudged": st.unjudged, "bounds": st.bounds,
            "bounds_hold_all_judged": st.bounds[0] <= judged_all <= st.bounds[1]}


def mse_points(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    runs32 = rng.random((100, 32)) < rng.beta(2, 2, 100)[:, None]
    paper = mse_vs_k(runs32, 4, against="all_runs")
    ours = mse_vs_k(runs32, against="true_mean")
    four = mse_vs_k(runs32[:, :4], against="true_mean")
    return {"reduction_k4_of_32_all_runs": float(1 - paper[3] / paper[0]),
            "reduction_k4_of_32_true_mean": float(1 - ours[3] / ours[0]),
            "four_trials_true_mean_over_mse1": (four / four[0]).tolist(),
            "four_trials_all_runs_over_mse1": (mse_vs_k(runs32[:, :4]) /
                                               mse_vs_k(runs32[:, :4])[0]).tolist()}


def _min(rows: list[dict], key: str, big: bool) -> float:
    return min(r[key] for r in rows if (r["tasks"] >= 20) == big)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer simulations (~1 minute)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sims, boards6, boards12 = (450, 100, 50) if args.quick else (1000, 1000, 600)
    t0 = time.perf_counter()
    cov = coverage(sims, args.seed)
    print(f"{'beta':>10} {'T':>3} {'k':>2}  avg pop/fixed  pass@k pop/fixed  pass^k pop/fixed"
          "  fixed width")
    for r in cov:
        print(f"{str(tuple(r['beta'])):>10} {r['tasks']:>3} {r['k']:>2}  "
              + "  ".join(f"{r[f'{m}:population']:.3f}/{r[f'{m}:fixed_set']:.3f}"
                          for m in METRICS) + f"  {r['fixed_width_avg']:.3f}")
    f6 = fwer(6, boards6, 20, 4, args.seed + 1)
    f12 = fwer(12, boards12, 20, 4, args.seed + 2)
    for f in (f6, f12):
        print(f"{f['models']} identical models, {f['boards']} boards: any significant pair "
              f"raw {f['any_raw']:.3f} ({f['pairs_per_board_raw']:.2f}/board), Holm "
              f"{f['any_holm']:.3f}, BH {f['any_bh']:.3f}")
    bias = unjudged_bias(args.seed + 3)
    mse = mse_points(args.seed + 4)
    widths = {k: float(np.mean([r["fixed_width_avg"] for r in cov
                                if r["k"] == k and r["tasks"] == 20])) for k in KS}
    out = {
        "quick": args.quick, "seed": args.seed, "sims_per_cell": sims,
        "fwer_6_models": f6["any_holm"], "fwer_12_models": f12["any_holm"],
        "fwer_6_models_bh": f6["any_bh"], "fwer_12_models_bh": f12["any_bh"],
        "fwer_6_models_uncorrected": f6["any_raw"], "fwer_12_models_uncorrected": f12["any_raw"],
        "false_pairs_per_board_uncorrected": {"6": f6["pairs_per_board_raw"],
                                              "12": f12["pairs_per_board_raw"]},
        "coverage_population_min": _min(cov, "avg:population", True),
        "coverage_fixed_min": _min(cov, "avg:fixed_set", True),
        "coverage_population_min_T10": _min(cov, "avg:population", False),
        "coverage_fixed_min_T10": _min(cov, "avg:fixed_set", False),
        "coverage_pass_metrics_min": {f"{m}:{t}": _min(cov, f"{m}:{t}", True)
                                      for m in METRICS[1:] for t in ("population", "fixed_set")},
        "coverage_pass_metrics_min_T10": {f"{m}:{t}": _min(cov, f"{m}:{t}", False)
                                          for m in METRICS[1:]
                                          for t in ("population", "fixed_set")},
        "zero_width_intervals": sum(r["zero_width"] for r in cov),
        "fixed_width_avg_T20": {str(k): w for k, w in widths.items()},
        "baselines": _baseline_summary(baselines(300, args.seed + 5)) if not args.quick
        else None,
        "unjudged": bias,
        "mse_vs_k": mse,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
