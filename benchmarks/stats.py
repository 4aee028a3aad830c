"""Statistics at leaderboard scale: 100 tasks x 32 trials, k = 1..20, every statistic.

Two models on the same 100 tasks (per-task difficulty, 32 trials each, seeded): ``summarize``
(Avg@k with its two intervals, Pass@k and Pass^k, the curves over k, the rubric score,
MSE-vs-k for k = 1..20, per benchmark and domain), then the paired bootstrap of the two models
and Cohen's κ between two judge runs over every rubric decision and task pass. Reports the
median wall time of several repeats (the target is <= 2 s). Prints one JSON object last.

    python benchmarks/stats.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from sweepbench.results.stats import (
    Outcome,
    judge_agreement,
    paired_bootstrap,
    summarize,
)

TASKS, TRIALS, K_MAX = 100, 32, 20
DOMAINS = ("delivery", "instore", "ota", "cross_domain")


def make_data(seed: int = 0) -> tuple[list[Outcome], dict, dict]:
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2, 2, TASKS)
    outcomes = []
    judge_a, judge_b = {}, {}
    for model, skill in (("strong", 0.7), ("weak", 0.45)):
        p = np.clip(skill * (1.4 - difficulty), 0, 1)
        passed = rng.random((TASKS, TRIALS)) < p[:, None]
        score = np.where(passed, 1.0, rng.random((TASKS, TRIALS)) * 0.9)
        for t in range(TASKS):
            domain = DOMAINS[t % len(DOMAINS)]
            for i in range(TRIALS):
                ok = bool(passed[t, i])
                outcomes.append(Outcome(model, domain, f"vitabench:{domain}:en:t{t}", i, ok,
                                        score=float(score[t, i])))
                eid = f"{model}|{t}|{i}"
                rubric = [ok, *(rng.random(5) < 0.8)]
                flip = rng.random(6) < 0.1
                judge_a[eid] = {"passed": ok, "details": {"rubric": [bool(x) for x in rubric]}}
                judge_b[eid] = {"passed": ok != bool(flip[0]),
                                "details": {"rubric": [bool(x != f) for x, f in
                                                       zip(rubric, flip)]}}
    return outcomes, judge_a, judge_b


def compute(outcomes: list[Outcome], judge_a: dict, judge_b: dict) -> dict:
    stats = summarize(outcomes, mse_k_max=K_MAX)
    rates = {}
    for o in outcomes:
        rates.setdefault(o.model, {}).setdefault(o.task_key, []).append(o.passed)
    tasks = sorted(rates["strong"])
    a = [np.mean(rates["strong"][t]) for t in tasks]
    b = [np.mean(rates["weak"][t]) for t in tasks]
    return {"stats": stats, "paired": paired_bootstrap(a, b),
            "agreement": judge_agreement(judge_a, judge_b)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    data = make_data()
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        out = compute(*data)
        times.append(time.perf_counter() - t0)
    s = out["stats"]["strong"]
    assert len(s.mse_vs_k) == K_MAX and len(s.pass_at_k_curve) == TRIALS
    print(f"strong: Avg@{s.k} {s.avg:.3f} CI {s.ci95[0]:.3f}-{s.ci95[1]:.3f}, "
          f"MSE k=1 {s.mse_vs_k[0]:.2e}, k=4 {s.mse_vs_k[3]:.2e} "
          f"({100 * (1 - s.mse_vs_k[3] / s.mse_vs_k[0]):.1f}% lower)")
    print(f"paired strong-weak: diff {out['paired'].diff:+.3f}, p {out['paired'].p_value:.2g}; "
          f"judge kappa pass {out['agreement'].pass_kappa:.3f}, "
          f"rubric {out['agreement'].rubric_kappa:.3f}")
    print(f"runs (s): {', '.join(f'{t:.3f}' for t in times)}")
    print(json.dumps({"seconds": round(statistics.median(times), 4), "tasks": TASKS,
                      "trials": TRIALS, "k_max": K_MAX}))


if __name__ == "__main__":
    main()
