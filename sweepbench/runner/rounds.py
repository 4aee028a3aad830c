"""An adaptive sweep run: rounds of the ordinary sweep until a stopping rule holds.

``sweepbench run --target-ci W`` / ``--until-ranked [--margin M]``. The decisions are
:mod:`sweepbench.runner.adaptive`'s (what is known, where the next trials go); this module
only feeds them the store's outcomes and runs what they ask through :class:`Sweep`, one
round at a time, all rounds under one run id (its selection grows round by round, so the
run's report is the adaptive sweep's).

Each round: every cell's outcomes on record (the headline verdict of each benchmark, as the
report scores it: an episode that ended in error is a failure, one without a verdict is not
on record) go to :func:`~sweepbench.runner.adaptive.replay`, which rebuilds every round
before this one from them and says which trials the current round still lacks. The sweep is
given every trial below the round's targets: what the store finished is skipped (whichever
invocation paid for it), an episode left running continues from its journal. So an
interrupted adaptive sweep run again recomputes the same rounds and pays only for trials not
on record, and reaches the same decision.

Batches: ``batch`` trials per model still wide (or per open pair, over both models), by
default enough to fill the sweep's episode slots for every model at once
(:func:`default_batch`), so each endpoint stays busy through a round. Caps: a cell never
passes ``max_trials``; ``--max-cost`` is the sweep's own spending cap over the selection,
which spans every round.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter, defaultdict
from typing import Any, Callable

import msgspec

from sweepbench.config import SweepConfig
from sweepbench.datasets.data_dir import resolve_data_dir
from sweepbench.ids import EpisodeStatus
from sweepbench.results.sources import choose_source
from sweepbench.runner import adaptive
from sweepbench.benchmarks.registry import benchmark_info
from sweepbench.runner.work import Shard, WorkItem, build_work, new_run_id
from sweepbench.store.runstore import RunStore

__all__ = ["AdaptiveSpec", "AdaptiveSweep", "default_batch", "outcomes_on_record"]

DEFAULT_MAX_TRIALS = 32
"""A cell's trials at most when ``--max-trials`` is not given."""


STOPPED = {
    "target": "the target half-width was reached",
    "ranked": "every pair of neighbours was told apart (or shown within the margin)",
    "max_trials": "--max-trials reached before the rule held",
    "budget": "--max-cost reached before the rule held",
    "failing": "stopped by the error streak before the rule held",
    "stuck": "trials it asked have no verdict, and running again would not give one",
    "running": "still running (or cut short)",
}
"""Why an adaptive sweep stopped (``summary``'s ``why``), in words for the report."""


@dataclasses.dataclass(frozen=True)
class AdaptiveSpec:
    """The stopping rule (``adaptive.CI`` with ``target``, or ``adaptive.RANKED`` with an
    optional ``margin``), the first trials of every cell (``start``: the sweep's
    ``--trials``), the cap per cell and the batch (None: :func:`default_batch`)."""

    rule: str
    start: int
    target: float | None = None
    margin: float | None = None
    max_trials: int = DEFAULT_MAX_TRIALS
    batch: int | None = None

    def __post_init__(self) -> None:
        if self.rule == adaptive.CI and not (self.target or 0) > 0:
            raise ValueError("--target-ci needs a half-width > 0")
        if self.rule not in (adaptive.CI, adaptive.RANKED):
            raise ValueError(f"unknown stopping rule {self.rule!r}")
        if self.start < 2:
            raise ValueError("an adaptive sweep starts every cell with --trials >= 2 (a "
                             f"task's variance needs two trials), got {self.start}")
        if self.max_trials < self.start:
            raise ValueError(f"--max-trials {self.max_trials} is below --trials {self.start}")

    def describe(self) -> str:
        """The stopping rule in words (what the report says)."""
        if self.rule == adaptive.CI:
            rule = (f"target half-width {self.target:g}: every model's 95% interval of Avg@k "
                    "over these tasks at most that wide on each side")
        else:
            rule = ("until ranked: every pair of neighbours on each leaderboard separated "
                    "(paired test, the report's correction)"
                    + (f" or shown within {self.margin:g} of each other"
                       if self.margin is not None else ""))
        return f"{rule}; {self.start} trials of every cell first, at most {self.max_trials}"

    def info(self) -> dict[str, Any]:
        return {"rule": self.rule, "target": self.target, "margin": self.margin,
                "start": self.start, "max_trials": self.max_trials, "batch": self.batch,
                "stopping_rule": self.describe()}

    @classmethod
    def from_info(cls, info: dict[str, Any]) -> "AdaptiveSpec":
        return cls(rule=info["rule"], start=int(info["start"]), target=info.get("target"),
                   margin=info.get("margin"), max_trials=int(info["max_trials"]),
                   batch=info.get("batch"))


def default_batch(cfg: SweepConfig) -> int:
    """Trials per model in a round: the sweep's episode slots shared by its models, so a
    round where every model is still wide fills them all (and each endpoint gets its share)."""
    return max(1, math.ceil(cfg.max_concurrency / max(1, len(cfg.models))))


def outcomes_on_record(store: RunStore, items: list[WorkItem],
                       benchmarks: dict[str, dict[str, Any]]) -> dict[str, bool | None]:
    """episode_key -> passed by its benchmark's headline (as the report chooses its source:
    ``choose_source`` on the verdicts on record), False for an episode that ended in error,
    None where there is no verdict (not run, running, or not judged)."""
    keys = [i.key for i in items]
    status = store.episode_status(keys)
    bench_of = {i.key: i.task.benchmark for i in items}
    judged: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    verdicts: dict[str, Counter] = defaultdict(Counter)
    for j in store.judgments([k for k in keys if k in status]):
        judged[j["judge"], j["method"]][j["episode_key"]] = j["passed"]
        if j["passed"] is not None:
            verdicts[bench_of[j["episode_key"]]][j["judge"], j["method"]] += 1
    source = {b: choose_source(benchmarks.get(b) or {}, verdicts[b])
              for b in set(bench_of.values())}
    out: dict[str, bool | None] = {}
    for key, bench in bench_of.items():
        st = status.get(key)
        src = source[bench]
        if st == EpisodeStatus.ERROR:
            out[key] = False
        elif st != EpisodeStatus.DONE or src.judge is None:
            out[key] = None
        else:
            v = judged[src.judge, src.method].get(key)
            out[key] = None if v is None else bool(v)
    return out


def _round(decision: dict[str, dict]) -> int:
    """The adaptive round a decision is at: batches after the first trials (0: those)."""
    return max((d["rounds"] for d in decision.values()), default=0)


def _by_pair(by_pair: dict[str, int], status: Any, models: set[str]) -> dict[str, int]:
    """Trials charged per pair of models, whichever order the pair was in when charged (two
    close models swap places between rounds: one pair, not two), the better one first and
    the pairs in leaderboard order (as the last ranking had it; by name where unknown)."""
    ranked = isinstance(status, list) and status
    order = [p["a"] for p in status] + [status[-1]["b"]] if ranked else []
    place = {m: i for i, m in enumerate(order)}

    def where(m: str) -> tuple[int, str]:
        return place.get(m, len(place)), m

    out: Counter[tuple[str, ...]] = Counter()
    for key, n in by_pair.items():
        a = next((m for m in sorted(models)
                  if key.startswith(m + "|") and key[len(m) + 1:] in models), None)
        out[(key,) if a is None else tuple(sorted((a, key[len(a) + 1:]), key=where))] += n
    return {"|".join(p): n for p, n in sorted(out.items(),
                                              key=lambda kv: [where(m) for m in kv[0]])}


def _unmet(status: Any) -> dict[str, Any] | None:
    """What a benchmark's stopping rule still lacked when it stopped (None when it held, or
    when no status was computed: a round cut short): for a target CI the models still wider
    than the target and their half-width, until ranked the neighbour pairs still open."""
    if isinstance(status, dict):
        wide = {m: (round(s["half_width"], 4) if math.isfinite(s["half_width"]) else None)
                for m, s in status.items() if not s["done"]}
        return {"wide": wide} if wide else None
    if isinstance(status, list):
        still = [f"{p['a']}|{p['b']}" for p in status if p["open"]]
        return {"open_pairs": still} if still else None
    return None


class AdaptiveSweep:
    """Runs rounds of :class:`~sweepbench.runner.sweep.Sweep` (built by ``make_sweep(items=,
    run_id=, check_endpoints=, info=, retry_errors=)``) until ``spec``'s rule holds on every
    benchmark, a cap is reached, or a round could not add what it asked (episodes without a
    verdict).

    ``retry_errors``: the episodes that ended in error before this run are run again, once,
    when a round asks for them (until then they count as not on record); one that ends in
    error in this run is a failure, never retried by a later round (which would pay for it
    once per round). ``progress`` (the live display's ``update``) is told ``"round"``
    (``round``: batches after the first trials, ``more=True``) before each round's sweep and
    once at the end (``more=False``, ``why``), so the display counts on across rounds."""

    def __init__(self, cfg: SweepConfig, store: RunStore, spec: AdaptiveSpec,
                 make_sweep: Callable[..., Any], *, shard: Shard | None = None,
                 run_id: str | None = None, say: Callable[[str], None] | None = None,
                 progress: Callable[..., None] | None = None,
                 retry_errors: bool = False) -> None:
        self.cfg, self.store, self.spec = cfg, store, spec
        self.make_sweep = make_sweep
        self.run_id = run_id or new_run_id()
        self.say = say or (lambda text: None)
        self.progress = progress or (lambda kind, **info: None)
        self.retry_errors = retry_errors
        self.retry: set[str] = set()  # ended in error before this run, not retried yet
        capped = msgspec.structs.replace(cfg, trials=spec.max_trials)
        self.all_items = build_work(capped, resolve_data_dir(cfg.data_dir), shard)
        self.benchmarks = benchmark_info(cfg.benchmarks)
        self.batch = spec.batch or default_batch(cfg)

    def decide(self) -> dict[str, dict]:
        """benchmark -> :func:`adaptive.replay`'s answer on the outcomes on record."""
        passed = outcomes_on_record(self.store, self.all_items, self.benchmarks)
        passed.update(dict.fromkeys(self.retry))  # to be run again: not on record yet
        trials: dict[str, dict[str, dict[str, list]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list)))
        for item in self.all_items:
            seq = trials[item.task.benchmark][item.model][item.task.key]
            seq.extend([None] * (item.trial + 1 - len(seq)))
            seq[item.trial] = passed[item.key]
        args: dict[str, Any] = {"max_trials": self.spec.max_trials}
        if self.spec.rule == adaptive.CI:
            args["target"] = self.spec.target
        else:
            args["margin"] = self.spec.margin
        return {b: adaptive.replay(t, self.spec.rule, start=self.spec.start, batch=self.batch,
                                   **args)
                for b, t in sorted(trials.items())}

    def _items(self, decision: dict[str, dict]) -> list[WorkItem]:
        targets = {(b, m, t): n for b, d in decision.items()
                   for (m, t), n in d["targets"].items()}
        return [i for i in self.all_items
                if i.trial < targets[i.task.benchmark, i.model, i.task.key]]

    def summary(self, decision: dict[str, dict], why: str, sweeps: int) -> dict[str, Any]:
        """What the run's info keeps: the rule, why it stopped, rounds (batches after the
        first trials), ``sweeps`` run by this invocation, per benchmark the trials per cell
        and (until ranked) the trials charged to each neighbour pair."""
        per: dict[str, Any] = {}
        for b, d in decision.items():
            n = sorted(d["targets"].values())
            per[b] = {"why": d["why"] or why, "stopped": STOPPED.get(d["why"] or why, why),
                      "rounds": d["rounds"],
                      "trials": sum(n), "cells": len(n), "trials_per_cell": {
                          "min": n[0], "median": n[len(n) // 2], "max": n[-1]},
                      "by_pair": _by_pair(d["by_pair"], d["status"],
                                          {m for m, _ in d["targets"]})}
            unmet = _unmet(d["status"])
            if unmet:
                per[b]["unmet"] = unmet
        return {**self.spec.info(), "batch": self.batch, "why": why, "rounds": _round(decision),
                "sweeps": sweeps, "benchmarks": per}

    async def run(self) -> tuple[Any, dict[str, Any]]:
        """(the last round's SweepOutcome with counts summed over the rounds, the summary)."""
        total: Counter[str] = Counter()
        outcome = None
        sweeps = 0
        before: dict[str, list[int]] | None = None
        if self.retry_errors:
            status = self.store.episode_status([i.key for i in self.all_items])
            self.retry = {k for k, st in status.items() if st == EpisodeStatus.ERROR}
        while True:
            decision = self.decide()
            done = all(d["done"] for d in decision.values())
            if done and outcome is not None:
                why = "/".join(sorted({d["why"] for d in decision.values()}))
                break
            lacking = {f"{b}|{m}|{t}": idx for b, d in decision.items()
                       for (m, t), idx in d["run"].items()}
            if outcome is not None and lacking == before:
                why = "stuck"  # the trials the round asked have no verdict, and cannot get one
                self.say(f"adaptive sweep stopped: {len(lacking)} (model, task) cells have "
                         "trials without a verdict of their benchmark's headline that running "
                         "again does not give (no judge of that method: add --judge-model, "
                         "or judge the store with `sweepbench judge`; or the judge's calls "
                         "failed for them: `sweepbench judge` again), then run again")
                break
            before = lacking
            self.progress("round", round=_round(decision), more=True)
            info = {"adaptive": self.summary(decision, "running", sweeps)}
            items = self._items(decision)
            again = self.retry & {i.key for i in items}
            sweep = self.make_sweep(items=lambda items=items: items, run_id=self.run_id,
                                    check_endpoints=outcome is None, info=info,
                                    retry_errors=again)
            self.retry -= again  # retried once: an error now is this run's, a failure
            outcome = await sweep.run()
            sweeps += 1
            for f in ("episodes", "errors", "resumed", "replayed_calls", "judged"):
                total[f] += getattr(outcome, f)
            self.say(f"adaptive sweep, pass {sweeps}: {outcome.episodes} episodes run, "
                     f"{len(items)} selected")
            if outcome.budget_stop or outcome.error_stop:
                decision = self.decide()
                why = "budget" if outcome.budget_stop else "failing"
                break
        summary = self.summary(decision, why, sweeps)
        self.progress("round", round=summary["rounds"], more=False, why=STOPPED.get(why, why))
        self.store.finish_run(self.run_id, outcome.budget_stop and "budget" or
                              (outcome.error_stop and "failing") or "done",
                              info={"adaptive": summary})
        await self.store.flush()
        earlier = total["errors"] - outcome.errors  # this run's, stored for the last round
        outcome = dataclasses.replace(
            outcome, skipped=outcome.selected - total["episodes"] - outcome.not_started,
            stored_errors=max(0, outcome.stored_errors - earlier),
            **{f: total[f] for f in ("episodes", "errors", "resumed", "replayed_calls",
                                     "judged")})
        return outcome, summary
