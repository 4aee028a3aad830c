"""``sweepbench plan --target-ci W`` / ``--until-ranked``: what an adaptive sweep is likely
to cost, from the store's history of the same cells.

How many trials an adaptive sweep spends depends on outcomes not yet seen, so the forecast
simulates it: each (model, task) passes with the rate its stored trials show, shrunk
towards 1/2 (``(c + 1/2) / (n + 1)``, so a task seen 0 of 2 times is not taken as
certain), and the sweep's own decisions (:func:`sweepbench.runner.adaptive.next_batch`, the
same rule, start, batch and cap) run on simulated outcomes, ``SIMULATIONS`` times with the
sweep's seed. The trials it ends with, less those already stored, times the plan's cost of
one episode of these cells (the plan of every trial up to the cap, its dollars and requests
per episode to run) is the forecast: the median and a high (90th percentile) figure.

It cannot forecast without history: a cell with fewer than 2 scored trials on record has no
rate to simulate from. Then it says so, and gives the cap's bound (every cell at
``max_trials``). The simulation is a model of the sweep, not the sweep: real pass rates
vary more than a shrunk rate from 2 trials suggests, so it is a guide (the plan says so).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

import msgspec
import numpy as np

from sweepbench.config import SweepConfig
from sweepbench.datasets.data_dir import resolve_data_dir
from sweepbench.runner import adaptive
from sweepbench.benchmarks.registry import benchmark_info
from sweepbench.runner.rounds import AdaptiveSpec, default_batch, outcomes_on_record
from sweepbench.runner.work import build_work
from sweepbench.store.runstore import RunStore

__all__ = ["SIMULATIONS", "forecast", "per_episode", "simulate"]

SIMULATIONS = 20
N_BOOT = 200  # the ranking rule's sign flips in a simulation (the sweep uses 2000)
MIN_HISTORY = 2  # scored trials on record a cell needs for a rate to simulate from


def simulate(rates: dict[str, dict[str, float]], spec: AdaptiveSpec, batch: int,
             rng: np.random.Generator, *, n_boot: int = N_BOOT) -> dict[str, dict[str, int]]:
    """One simulated adaptive sweep of one benchmark whose cells pass with ``rates``
    ({model: {task: p}}): the trials it ends with, {model: {task: n}}."""
    cap = spec.max_trials
    draws = {m: {t: rng.random(cap) < p for t, p in tasks.items()} for m, tasks in
             rates.items()}
    n = {m: dict.fromkeys(tasks, spec.start) for m, tasks in rates.items()}
    args: dict[str, Any] = ({"target": spec.target} if spec.rule == adaptive.CI
                            else {"margin": spec.margin, "n_boot": n_boot})
    while True:
        counts = {m: {t: (k, int(draws[m][t][:k].sum())) for t, k in tasks.items()}
                  for m, tasks in n.items()}
        nb = adaptive.next_batch(counts, spec.rule, batch=batch, max_trials=cap, **args)
        if nb["done"]:
            return n
        for (m, t), k in nb["add"].items():
            n[m][t] += k


def forecast(cfg: SweepConfig, store: RunStore | None, spec: AdaptiveSpec,
             per_episode: dict[str, float | None]) -> dict[str, Any]:
    """The forecast (see the module docstring). ``per_episode``: the plan's dollars and
    requests per episode to run of these cells (``{"dollars", "requests"}``, dollars None
    when unpriced)."""
    capped = msgspec.structs.replace(cfg, trials=spec.max_trials)
    items = build_work(capped, resolve_data_dir(cfg.data_dir))
    cells = {(i.task.benchmark, i.model, i.task.key) for i in items}
    bound = {"episodes": len(items),
             "dollars": _times(per_episode.get("dollars"), len(items))}
    out: dict[str, Any] = {"rule": spec.describe(), "cap": bound}
    passed = outcomes_on_record(store, items, benchmark_info(cfg.benchmarks)) if store else {}
    seen: dict[tuple[str, str, str], list[bool]] = defaultdict(list)
    for i in items:
        if passed.get(i.key) is not None:
            seen[i.task.benchmark, i.model, i.task.key].append(bool(passed[i.key]))
    short = sorted(c for c in cells if len(seen[c]) < MIN_HISTORY)
    if short:
        out["cannot"] = (f"{len(short)} of {len(cells)} (model, task) cells have fewer than "
                         f"{MIN_HISTORY} scored trials in the store (e.g. {short[0][1]} on "
                         f"{short[0][2]}): no history to forecast from. Run a fixed sweep "
                         f"of --trials {MIN_HISTORY} first (an adaptive sweep reuses it), "
                         "or cap the adaptive one with --max-cost")
        return out
    rates: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for (b, m, t), v in seen.items():
        rates[b][m][t] = (sum(v) + 0.5) / (len(v) + 1)
    stored = sum(min(len(v), spec.max_trials) for v in seen.values())
    batch = spec.batch or default_batch(cfg)
    rng = np.random.default_rng(cfg.seed)
    totals = []
    for _ in range(SIMULATIONS):
        total = 0
        for b in sorted(rates):
            for m, tasks in simulate(rates[b], spec, batch, rng).items():
                # stored trials beyond the simulated need are still stored, never run
                total += sum(max(k, len(seen[b, m, t])) for t, k in tasks.items())
        totals.append(total)
    totals.sort()
    median = statistics.median(totals)
    high = totals[min(len(totals) - 1, int(0.9 * len(totals)))]
    out.update({
        "simulations": SIMULATIONS, "stored": stored,
        "episodes": {"median": median, "high": high},
        "to_run": {"median": max(0.0, median - stored), "high": max(0, high - stored)},
        "dollars": {"median": _times(per_episode.get("dollars"), max(0.0, median - stored)),
                    "high": _times(per_episode.get("dollars"), max(0, high - stored))},
        "requests": {"median": _times(per_episode.get("requests"), max(0.0, median - stored)),
                     "high": _times(per_episode.get("requests"), max(0, high - stored))}})
    return out


def per_episode(plan: dict[str, Any]) -> dict[str, float | None]:
    """Dollars (None when every endpoint is unpriced) and requests per episode to run, from
    a plan (``make_plan``) of the cells up to the cap."""
    ep = plan["episodes"]
    n = ep["to_run"] + ep["to_continue"]
    if not n:
        return {"dollars": 0.0, "requests": 0.0}
    priced = len(plan["unpriced"]) < len(plan["endpoints"])
    return {"dollars": plan["dollars"] / n if priced else None,
            "requests": plan["requests"] / n}


def _times(per: float | None, n: float) -> float | None:
    return None if per is None else per * n
