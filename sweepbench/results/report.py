"""The leaderboards of a store (or several): JSON for ``sweepbench report --json``, and the
data behind the terminal tables (:mod:`sweepbench.results.render.terminal`) and the HTML page.

**What is scored.** Every episode of the stores that the selection keeps (see
:mod:`sweepbench.results.selection`: filters by model, benchmark, split, trial range or one run).

**One headline per benchmark, fixed.** Each benchmark is scored by its paper's metric, its
*headline* method (``Benchmark.headline``; the runner records it with each run, the CLI passes
the registry's): VitaBench by the sliding-window rubric judge (``sliding``), T1 by its Pass
from the tool / parameter / output criteria (the state check, ``state``). Which judge model
gave the verdicts: ``judge`` when given, else the one with the most verdicts of that method on
the benchmark. An episode without a verdict of the headline is *unjudged*: counted apart,
never rescored by another method; the state check, the other methods and the Likert judge
are extra columns (``state``, ``method_scores``). ``method`` / ``judge`` pick another source
explicitly; a benchmark that method does not apply to is *not applicable*: its episodes are
excluded and counted in ``not_applicable``, never counted as failures.

**Counting.** An episode that ended in error is a failure (``errors``); an unjudged one and an
unfinished one (still 'running') are not scored (``unjudged``, ``unfinished``); ``bounds`` is
how far the unjudged and errored ones could move Avg@k. Avg@k (the mean over tasks of
per-task pass rates), Pass@k, Pass^k, ``score``, ``intervals`` (over the task population and
over trials on these tasks), curves and ``mse_vs_k`` follow ``stats.summarize``.
``"benchmarks"`` holds one leaderboard per benchmark; ``"models"`` pools every benchmark (each
episode scored by its own benchmark's source), labelled in ``"overall"``. Each leaderboard has
one k (its ``"k"``: ``k`` when given, else the fewest scored trials of any task of any row),
and a row that cannot support it is incomplete (listed in ``"k"``, no Pass@k / Pass^k).

**Unreachable tasks** (``unreachable``: why no agent can pass them, a defect of the data) are
listed apart with their reason, and every leaderboard entry also has its numbers without
them (``without_unreachable``).

**Cost** (:mod:`sweepbench.results.cost`): every journaled call (agent, user simulator,
judge) at its run's stored prices; per model and benchmark ``cost`` (agent, user, judge,
total, per episode, per passed episode), and ``"cost"`` at the top (total, by role, by
endpoint, by model, benchmark and task). ``prices`` (endpoint -> prices) replaces the stored
prices, e.g. with a config's.

Also per entry: ``"metrics"`` (the mean of every rate in the headline judgment's details,
nested objects flattened with "_": T1's ``tool_f1``, ``param_recall``, ``output_em``...; a
key is a rate when all its values are floats or booleans in [0, 1]), ``"method_scores"``
("judge/method" -> mean score), ``"profile"`` (tokens, turns, latency, retries); at the top
``"comparisons"`` (paired comparisons of per-task pass rates, p-values adjusted over the
family that ``"comparisons_family"`` states: :mod:`sweepbench.results.comparisons`; each
benchmark has its own), ``"judge_agreement"``, and
(:mod:`sweepbench.results.runinfo`) ``"error_reasons"`` (errors grouped by reason),
``"unjudged_by_judge"`` (judgments a judge could not make, by judge and method),
``"terminations"`` (how episodes ended) and ``"configuration"`` (each run's settings,
endpoints without secrets and prices).

**Adaptive sweeps** (a run with ``"adaptive"`` in its info, :mod:`sweepbench.runner.rounds`)
in the selection: intervals over these tasks are ``summarize(adaptive=True)``'s, and
``"adaptive"`` says how the sweep went (``runinfo.adaptive_section``).
"""

from __future__ import annotations

import gc
from collections import Counter
from itertools import combinations
from typing import Any, Mapping, Sequence

import msgspec
import numpy as np

from sweepbench.errors import ReportError
from sweepbench.results import call_side
from sweepbench.results.board import Board, k_of
from sweepbench.results.profile import as_prices
from sweepbench.results.runinfo import (adaptive_section, configuration, error_reasons,
                                        terminations, unjudged_by_judge)
from sweepbench.results.details import numeric_details
from sweepbench.results.judged import Judged, load_judged
from sweepbench.results.row_codes import RowCodes
from sweepbench.results.stats import DEFAULT_BOOT
from sweepbench.store.reads import StoreReads
from sweepbench.results.selection import EpisodeView, Selection, load_view
from sweepbench.results.sources import sources_from

__all__ = ["ReportError", "build_report", "numeric_details", "render"]

def build_report(
    store: StoreReads | Sequence[StoreReads],
    run_id: str | None = None,
    *,
    method: str | None = None,
    judge: str | None = None,
    k: int | None = None,
    prices: Mapping[str, Any] | None = None,
    selection: Selection | None = None,
    benchmarks: Mapping[str, Mapping[str, Any]] | None = None,
    n_boot: int = DEFAULT_BOOT,
    seed: int = 0,
    correction: str = "holm",
    profile: bool = True,
    from_transcripts: bool = False,
) -> dict:
    """The leaderboards of the episodes in ``store`` (one store or several) that
    ``selection`` keeps; ``run_id`` restricts to that run's selection.

    ``benchmarks``: name -> {"headline", "headline_label", "judge_methods"} (the registry's;
    default: what the stores' runs recorded, else the state check). ``method`` / ``judge``:
    score by that source instead of each benchmark's headline. ``k``: one k for every
    leaderboard (rows with tasks of fewer scored trials are incomplete). ``prices``: endpoint
    -> prices replacing the stored ones. ``n_boot``, ``seed``: the comparisons' bootstrap
    and sign flips (same seed, same JSON); ``correction``: over each family of comparisons,
    ``holm`` or ``bh``. ``profile=False`` skips the token / latency profile.

    Cost, profiles, stalls and error reasons come from the stores' facts (schema 6: a few
    numbers per call and per episode, see :mod:`sweepbench.results.calls`);
    ``from_transcripts=True``, or a store of an older schema read as it is, computes them
    from the journals' payloads and the records instead: the same report, at the cost of
    decoding every transcript (the tests' oracle).
    """
    stores = [store] if isinstance(store, StoreReads) else list(store)
    selection = selection or Selection()
    if run_id is not None:
        selection = msgspec.structs.replace(selection, run_id=run_id)
    # The rows and judgments read are a few hundred thousand small objects without cycles:
    # the cyclic collector, run every 700 of them, would go over all of them again and again
    # (a tenth of the report's time). It is paused while they are read, then they are set
    # apart from its passes (freeze), in this process and in the one forked for the calls.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build(stores, selection, method, judge, k, prices, benchmarks, n_boot, seed,
                      correction, profile, from_transcripts, collecting)
    finally:
        gc.unfreeze()
        if collecting:
            gc.enable()


def _build(stores: list[StoreReads], selection: Selection, method: str | None,
           judge: str | None, k: int | None, prices: Mapping[str, Any] | None,
           benchmarks: Mapping[str, Mapping[str, Any]] | None, n_boot: int, seed: int,
           correction: str, profile: bool, from_transcripts: bool, collecting: bool) -> dict:
    view = load_view(stores, selection)
    gc.freeze()
    override = None if prices is None else {n: as_prices(p) for n, p in prices.items()}
    # the calls' side needs the rows only: begun now, in a second process for a large
    # selection, while this one reads and counts the judgments
    codes = RowCodes.of(view.rows)  # per row, once: for the calls' side and the board
    calls = call_side.start(view, override, profile=profile, transcripts=from_transcripts,
                            codes=codes)
    try:
        info = {**view.info("benchmarks"), **(benchmarks or {})}
        judged = load_judged(view)
        gc.collect()  # what was garbage among them, once
        gc.freeze()
        if collecting:
            gc.enable()
        available = judged.methods()
        if method is not None or judge is not None:
            if not any((method is None or p["method"] == method) and
                       (judge is None or p["judge"] == judge) for p in available):
                have = ", ".join(f"{p['judge']}/{p['method']}" for p in available) or "none"
                raise ReportError(f"no judgments with method={method!r} judge={judge!r} in "
                                  f"this selection (judge/method pairs present: {have})")
        names = sorted({r["benchmark"] for r in view.rows})
        sources = sources_from(names, judged.verdict_counts(_bench_codes(codes, names), names),
                               info, method, judge)
        adaptive_runs = [r for r in view.runs
                         if isinstance((r["info"] or {}).get("adaptive"), dict)
                         and selection.run_id in (None, r["run_id"])]
        board = Board(view, judged, sources, k=k, n_boot=n_boot, seed=seed,
                      correction=correction, adaptive=bool(adaptive_runs), codes=codes)
        # the leaderboards' numbers need no call: made while the call side is
        models = board.overall()
        comparisons = board.compare(board.defined(models), models)
        leaderboards = board.benchmarks()
    except BaseException:
        calls.cancel()
        raise
    side = calls.result()
    board.add_call_side(side)
    board.fill_call_side(models, leaderboards)
    run = stores[0].run(selection.run_id) if selection.run_id and len(stores) == 1 else None
    single = {(s.judge, s.method) for s in sources.values()}
    jm = next(iter(single)) if len(single) == 1 else None
    return {
        "stores": [str(s.path) for s in stores],
        "run_id": selection.run_id or (view.runs[-1]["run_id"] if view.runs else None),
        "runs": [r["run_id"] for r in view.runs],
        "status": run["status"] if run else _status(view),
        "selection": selection.describe(),
        "judge_method": None if jm is None or jm[0] is None else {"judge": jm[0],
                                                                 "method": jm[1]},
        "judge_methods": available,
        "metric_keys": board.metric_keys,
        "method_score_keys": board.pair_names,
        "benchmarks": leaderboards,
        "models": models,
        "adaptive": adaptive_section(adaptive_runs, board.outcome_list() if adaptive_runs else [],
                                     leaderboards),
        "k": k_of(models, k),
        "overall": {"label": ("pooled over " + ", ".join(names) + "; each episode scored by "
                              "its own benchmark's source") if len(names) > 1 else
                    (f"= {names[0]}" if names else "no episodes"),
                    "benchmarks": names},
        "superseded": view.superseded,
        "unreachable": board.unreachable(),
        "cost": side.summary,
        "comparisons": comparisons["pairs"],
        "comparisons_family": comparisons["family"],
        "judge_agreement": _agreements(judged),
        "error_reasons": error_reasons(view.rows, side.errors),
        "unjudged_by_judge": unjudged_by_judge(judged.unjudged()),
        "terminations": terminations(view.rows),
        "stalls_by_endpoint": side.stalls,
        "configuration": configuration(view.runs),
        "damaged": [f"run store {s.path}: {d}" for s in stores for d in s.damaged],
    }


def _status(view: EpisodeView) -> str:
    statuses = Counter(r["status"] for r in view.rows)
    return "running" if statuses.get("running") else ("done" if view.rows else "empty")


def _agreements(judged: Judged) -> list[dict]:
    out = []
    order = sorted(range(len(judged.pairs)), key=judged.pairs.__getitem__)
    for a, b in combinations(order, 2):
        agree = judged.agreement(a, b)
        if agree.episodes or agree.rubric_episodes:
            (ja, ma), (jb, mb) = judged.pairs[a], judged.pairs[b]
            out.append({"a": f"{ja}/{ma}", "b": f"{jb}/{mb}", **msgspec.to_builtins(agree)})
    return out


def _bench_codes(codes: RowCodes, names: list[str]) -> np.ndarray:
    """Each row's benchmark as its place in ``names``."""
    place = np.array([names.index(b) for b in codes.benches], dtype=np.int64)
    return place[codes.bench]


def render(report: dict) -> Any:
    """The terminal tables of a report (see :mod:`sweepbench.results.render.terminal`)."""
    from sweepbench.results.render.terminal import render as render_tables

    return render_tables(report)

