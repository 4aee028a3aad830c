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

from collections import Counter, defaultdict
from itertools import combinations
from typing import Any, Mapping, Sequence

import msgspec
import numpy as np

from sweepbench.errors import ReportError
from sweepbench.ids import STATE_JUDGE, JudgeMethod, TaskKey
from sweepbench.results.cost import Spend
from sweepbench.results.calls import CallColumns
from sweepbench.results.profile import (as_prices, build_profiles, call_event, endpoint_stalls,
                                        stall_table)
from sweepbench.results.profile_columns import row_profiles
from sweepbench.results.runinfo import (adaptive_section, configuration, error_reasons,
                                        terminations, unjudged_by_judge)
from sweepbench.results.details import numeric_details, report_details
from sweepbench.results.comparisons import compare, leaderboard_order, task_rates
from sweepbench.results.stats import DEFAULT_BOOT, Outcome, judge_agreement, summarize
from sweepbench.store.facts import EpisodeFacts
from sweepbench.store.reads import StoreReads
from sweepbench.results.selection import EpisodeView, Selection, load_view
from sweepbench.results.sources import Source, sources_of

__all__ = ["ReportError", "build_report", "numeric_details", "render"]

_STATE = (STATE_JUDGE, str(JudgeMethod.STATE))


def _judge_methods(judgments: list[dict]) -> list[dict]:
    pairs: dict[tuple[str, str], dict] = {}
    for j in judgments:
        p = pairs.setdefault((j["judge"], j["method"]), {
            "judge": j["judge"], "method": j["method"], "episodes": 0, "verdicts": 0})
        p["episodes"] += 1
        p["verdicts"] += j["passed"] is not None
    return sorted(pairs.values(), key=lambda p: (-p["verdicts"], p["judge"], p["method"]))


class _Means:
    """Running means keyed by (scope..., name)."""

    def __init__(self) -> None:
        self.sum: defaultdict[tuple, float] = defaultdict(float)
        self.n: Counter[tuple] = Counter()

    def add(self, key: tuple, value: float) -> None:
        self.sum[key] += value
        self.n[key] += 1

    def of(self, scope: tuple, names: list[str]) -> dict[str, float]:
        return {name: self.sum[(*scope, name)] / self.n[(*scope, name)]
                for name in names if self.n[(*scope, name)]}


def _empty_entry() -> dict:
    return {
        "k": None, "tasks": 0, "incomplete_tasks": 0, "episodes": 0, "passed": 0,
        "errors": 0, "avg": None, "pass_at_k": None, "pass_hat_k": None, "ci95": None,
        "intervals": {}, "unjudged": 0, "bounds": None, "score": None, "scored": 0, "pass_at_k_curve": None, "pass_hat_k_curve": None,
        "mse_vs_k": None, "domains": {}, "benchmarks": {},
    }


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
    view = load_view(stores, selection)
    info = {**view.info("benchmarks"), **(benchmarks or {})}
    # the facts path keeps only what it reads of the details
    judgments = view.judgments(None if from_transcripts else report_details)
    available = _judge_methods(judgments)
    if method is not None or judge is not None:
        if not any((method is None or p["method"] == method) and
                   (judge is None or p["judge"] == judge) for p in available):
            have = ", ".join(f"{p['judge']}/{p['method']}" for p in available) or "none"
            raise ReportError(f"no judgments with method={method!r} judge={judge!r} in this "
                              f"selection (judge/method pairs present: {have})")
    by_pair: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for j in judgments:
        by_pair[j["judge"], j["method"]][j["episode_key"]] = j
    names = sorted({r["benchmark"] for r in view.rows})
    sources = sources_of(view, names, by_pair, info, method, judge)
    adaptive_runs = [r for r in view.runs if isinstance((r["info"] or {}).get("adaptive"), dict)
                     and selection.run_id in (None, r["run_id"])]
    board = _Board(view, by_pair, sources, k=k, n_boot=n_boot, seed=seed,
                   correction=correction, adaptive=bool(adaptive_runs))
    override = None if prices is None else {n: as_prices(p) for n, p in prices.items()}
    if from_transcripts or not view.has_facts:
        calls = view.calls()
        spend = Spend.of(calls, view.prices(), override)
        board.add_cost(spend)
        if profile:
            board.add_profiles(calls)
        stalls = endpoint_stalls(calls)
        errors = _error_texts(view)
        del calls
    else:
        cols = view.call_columns()
        facts = view.facts()
        spend = Spend.of_columns(cols, view.prices(), override)
        board.add_cost(spend)
        if profile:
            board.add_profiles_columns(cols, facts)
        counts = np.bincount(cols.endpoint, minlength=len(cols.endpoints))
        stalls = stall_table(cols.rare.values(), {
            e: int(n) for e, n in zip(cols.endpoints, counts.tolist()) if e})
        errors = {r["episode_key"]: facts[r["episode_key"]].error for r in view.rows
                  if r["status"] == "error" and r["episode_key"] in facts}
        del cols, facts
    run = stores[0].run(selection.run_id) if selection.run_id and len(stores) == 1 else None
    single = {(s.judge, s.method) for s in sources.values()}
    jm = next(iter(single)) if len(single) == 1 else None
    models = board.overall()
    comparisons = board.compare([o for o in board.outcomes
                                 if "undefined" not in models[o.model]], models)
    leaderboards = board.benchmarks()
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
        "adaptive": adaptive_section(adaptive_runs, board.outcomes, leaderboards),
        "k": _k_of(models, k),
        "overall": {"label": ("pooled over " + ", ".join(names) + "; each episode scored by "
                              "its own benchmark's source") if len(names) > 1 else
                    (f"= {names[0]}" if names else "no episodes"),
                    "benchmarks": names},
        "superseded": view.superseded,
        "unreachable": board.unreachable(),
        "cost": board.cost_summary(spend),
        "comparisons": comparisons["pairs"],
        "comparisons_family": comparisons["family"],
        "judge_agreement": _agreements(by_pair, set(view.keys)),
        "error_reasons": error_reasons(view.rows, errors),
        "unjudged_by_judge": unjudged_by_judge(judgments),
        "terminations": terminations(view.rows),
        "stalls_by_endpoint": stalls,
        "configuration": configuration(view.runs),
        "damaged": [f"run store {s.path}: {d}" for s in stores for d in s.damaged],
    }


def _error_texts(view: EpisodeView) -> dict[str, str | None]:
    """episode_key -> its record's error, for the episodes that ended in error."""
    keys: dict[int, list[str]] = defaultdict(list)
    for r in view.rows:
        if r["status"] == "error":
            keys[r["store"]].append(r["episode_key"])
    return {k: rec.error for i, ks in keys.items()
            for k, rec in view.stores[i].records(ks).items()}


def _status(view: EpisodeView) -> str:
    statuses = Counter(r["status"] for r in view.rows)
    return "running" if statuses.get("running") else ("done" if view.rows else "empty")


class _Board:
    """Outcomes and extra columns of every selected episode, grouped for the leaderboards."""

    def __init__(self, view: EpisodeView, by_pair: dict, sources: dict[str, Source], *,
                 k: int | None, n_boot: int, seed: int, correction: str,
                 adaptive: bool = False) -> None:
        self.view, self.sources, self.adaptive = view, sources, adaptive
        self.k, self.n_boot, self.seed, self.correction = k, n_boot, seed, correction
        self.outcomes: list[Outcome] = []
        self.counts: dict[tuple, Counter] = defaultdict(Counter)  # scope -> gap counts
        self.metrics, self.scores, self.state = _Means(), _Means(), _Means()
        self.unreach: dict[str, dict] = {}
        self.row_of: dict[str, dict] = {}
        metric_keys: set[str] = set()
        not_rates: set[str] = set()
        state = by_pair.get(_STATE, {})
        for r in view.rows:
            key, name, bench = r["episode_key"], r["name"], r["benchmark"]
            self.row_of[key] = r
            src = sources[bench]
            scopes = [(name,), (name, bench), (name, "d", r["domain"]),
                      (name, bench, "d", r["domain"])]
            why = r["unreachable"] or ((state.get(key) or {}).get("details") or {}).get(
                "unreachable")
            if why:
                r["unreachable"] = why
                u = self.unreach.setdefault(f"{bench}:{r['domain']}:{r['lang']}:{r['task_id']}", {
                    "benchmark": bench, "domain": r["domain"], "lang": r["lang"],
                    "task_id": r["task_id"], "reason": why, "episodes": 0})
                u["episodes"] += 1
            if r["status"] == "running":
                self._count(scopes, "unfinished")
                continue
            error = r["status"] == "error"
            s = state.get(key)
            if s is not None or error:  # the state check: a column whatever the headline
                for sc in scopes:
                    self.state.add((*sc, "state"), float(bool(s and s["passed"]) and not error))
            if not src.applicable:
                self._count(scopes, "not_applicable")
                continue
            j = by_pair.get((src.judge, src.method), {}).get(key) if src.judge else None
            verdict = None if j is None else j["passed"]
            task_key = str(TaskKey(bench, r["domain"], r["lang"] or "", r["task_id"]))
            if verdict is None and not error:
                self._count(scopes, "unjudged")
                self.outcomes.append(Outcome(
                    model=name, domain=r["domain"], task_key=task_key, trial=r["trial"],
                    passed=False, benchmark=bench, unjudged=True))
                continue
            score = None
            if j is not None:
                score = j["score"] if j["score"] is not None else float(bool(verdict))
                for mname, v in numeric_details(j["details"]).items():
                    metric_keys.add(mname)
                    if (isinstance(v, int) and not isinstance(v, bool)) or not 0.0 <= v <= 1.0:
                        not_rates.add(mname)
                    for sc in scopes:
                        self.metrics.add((*sc, mname), float(v))
            self.outcomes.append(Outcome(
                model=name, domain=r["domain"], task_key=task_key,
                trial=r["trial"], passed=bool(verdict), error=error, score=score,
                benchmark=bench))
        pair_names = set()
        for pair, judged in by_pair.items():
            pname = f"{pair[0]}/{pair[1]}"
            for key, j in judged.items():
                r = self.row_of.get(key)
                if j["score"] is not None and r is not None and r["status"] != "running":
                    pair_names.add(pname)
                    for sc in ((r["name"],), (r["name"], r["benchmark"]),
                               (r["name"], "d", r["domain"]),
                               (r["name"], r["benchmark"], "d", r["domain"])):
                        self.scores.add((*sc, pname), j["score"])
        self.pair_names = sorted(pair_names)
        self.metric_keys = sorted(metric_keys - not_rates)
        self._cost: dict[tuple, dict] = {}
        self._profiles: dict[tuple, dict] = {}

    def _count(self, scopes: list[tuple], what: str) -> None:
        for sc in scopes:
            self.counts[sc][what] += 1

    def _extras(self, entry: dict, scope: tuple) -> None:
        for gap in ("unjudged", "unfinished", "not_applicable"):
            entry[gap] = self.counts[scope][gap]
        entry["metrics"] = self.metrics.of(scope, self.metric_keys)
        entry["method_scores"] = self.scores.of(scope, self.pair_names)
        entry["state"] = self.state.of(scope, ["state"]).get("state")

    def _leaderboard(self, outcomes: list[Outcome], scope: tuple[str, ...]) -> dict[str, dict]:
        models: dict[str, dict] = {}
        for name, stats in summarize(outcomes, k=self.k, adaptive=self.adaptive).items():
            entry = msgspec.to_builtins(stats)
            self._extras(entry, (name, *scope))
            for domain, d in entry["domains"].items():
                self._extras(d, (name, *scope, "d", domain))
            mine = [o for o in outcomes if o.model == name]
            reachable = [o for o in mine if o.task_key not in self.unreach]
            if len(reachable) != len(mine):
                entry["without_unreachable"] = _short(reachable, entry["k"], self.adaptive)
            models[name] = entry
        for sc, counts in self.counts.items():  # rows with nothing scored: listed, empty
            if len(sc) == 1 + len(scope) and sc[1:] == scope and sc[0] not in models:
                entry = _empty_entry()
                self._extras(entry, sc)
                models[sc[0]] = entry
        return dict(sorted(models.items()))

    def benchmarks(self) -> dict[str, dict]:
        out = {}
        for b, src in sorted(self.sources.items()):
            outcomes = [o for o in self.outcomes if o.benchmark == b]
            models = self._leaderboard(outcomes, (b,))
            for name, entry in models.items():
                entry.pop("benchmarks", None)
                entry["cost"] = self._cost.get((name, b))
                _attach(entry, self._profiles.get((name, b)))
            out[b] = {
                "source": msgspec.to_builtins(src),
                "models": models,
                "not_applicable": sum(e["not_applicable"] for e in models.values()),
                "unreachable": [u for u in self.unreachable() if u["benchmark"] == b],
                "k": _k_of(models, self.k),
            }
            cmp = self.compare(outcomes, models)
            out[b]["comparisons"], out[b]["comparisons_family"] = cmp["pairs"], cmp["family"]
        return out

    def overall(self) -> dict[str, dict]:
        """Every benchmark pooled, each episode scored by its own benchmark's source; a row
        is *undefined* (no numbers, ``undefined`` says why) when one of its benchmarks has
        nothing scored."""
        scored = {(o.model, o.benchmark) for o in self.outcomes if not o.unjudged}
        has = {(r["name"], r["benchmark"]) for r in self.view.rows}
        missing = {name: sorted(b for n, b in has - scored if n == name) for name, _ in has}
        models = self._leaderboard(
            [o for o in self.outcomes if not missing.get(o.model)], ())
        for name, benches in missing.items():
            if benches:
                entry = _empty_entry()
                self._extras(entry, (name,))
                entry["undefined"] = ("nothing scored by the headline of " + ", ".join(benches))
                models[name] = entry
        models = dict(sorted(models.items()))
        for name, entry in models.items():
            entry["cost"] = self._cost.get((name,))
            _attach(entry, self._profiles.get((name,)))
            for b, bstats in (entry.get("benchmarks") or {}).items():
                self._extras(bstats, (name, b))
                for domain, d in bstats["domains"].items():
                    self._extras(d, (name, b, "d", domain))
        return models

    def compare(self, outcomes: list[Outcome], models: dict[str, dict]) -> dict:
        """The leaderboard's family of paired comparisons (scored outcomes only)."""
        return compare(task_rates(o for o in outcomes if not o.unjudged),
                       leaderboard_order(models), n_boot=self.n_boot, seed=self.seed,
                       correction=self.correction)

    def add_profiles(self, calls: list) -> None:
        """Tokens, turns, latency and retries per row, per row x benchmark, per domain (cost
        is not here: it comes from the calls, see ``add_cost``)."""
        recs: dict[str, list] = defaultdict(list)  # benchmark -> records, named by row
        for key, rec in self.view.records().items():
            r = self.row_of.get(key)
            if r is not None:
                recs[r["benchmark"]].append(msgspec.structs.replace(rec, model=r["name"]))
        events: dict[str, list] = defaultdict(list)  # benchmark -> (row, domain, call)
        for c in calls:
            r = self.row_of.get(c.episode_key)
            if r is not None and not c.journal:  # the episode's own calls, not its judges'
                events[r["benchmark"]].append((r["name"], r["domain"], call_event(c)))
        pooled = build_profiles([x for v in recs.values() for x in v],
                                [x for v in events.values() for x in v])
        for name, p in pooled.items():
            self._profiles[(name,)] = _no_cost(p)
        for b in recs:
            for name, p in build_profiles(recs[b], events[b]).items():
                self._profiles[(name, b)] = _no_cost(p)

    def add_profiles_columns(self, cols: CallColumns, facts: Mapping[str, EpisodeFacts]
                             ) -> None:
        """``add_profiles`` from the stores' facts (:mod:`sweepbench.results.profile_columns`):
        the same profiles."""
        for scope, p in row_profiles(cols, facts, self.row_of).items():
            self._profiles[scope] = _no_cost(p)

    def add_cost(self, spend: Spend) -> None:
        """Per row (and row x benchmark): agent, user, judge and total dollars, per episode
        and per passed episode."""
        passed: Counter[tuple] = Counter()
        episodes: Counter[tuple] = Counter()
        for o in self.outcomes:
            for sc in ((o.model,), (o.model, o.benchmark)):
                passed[sc] += o.passed and not o.error
        sums: dict[tuple, dict[str, float | None]] = defaultdict(
            lambda: {"agent": 0.0, "user": 0.0, "judge": 0.0})
        for key, r in self.row_of.items():
            for sc in ((r["name"],), (r["name"], r["benchmark"])):
                episodes[sc] += 1
                for role, v in spend.by_episode.get(key, {}).items():
                    if sums[sc][role] is not None:
                        sums[sc][role] += v
                for role in spend.unpriced_roles.get(key, ()):
                    sums[sc][role] = None  # unpriced, never a partial sum shown as its cost
        for sc, roles in sums.items():
            total = None if None in roles.values() else sum(roles.values())
            if total is None:
                self._cost[sc] = {**roles, "total": None, "per_episode": None, "per_pass": None}
                continue
            self._cost[sc] = {**roles, "total": total,
                              "per_episode": total / episodes[sc] if episodes[sc] else None,
                              "per_pass": total / passed[sc] if passed[sc] else None}

    def cost_summary(self, spend: Spend) -> dict:
        by_task: dict[str, float | None] = defaultdict(float)
        by_bench: dict[str, float | None] = defaultdict(float)
        by_model: dict[str, float | None] = defaultdict(float)
        for key in {**spend.by_episode, **spend.unpriced_roles}:  # in order: the same sums
            r = self.row_of.get(key)
            if r is None:
                continue
            total = None if key in spend.unpriced_roles else sum(spend.by_episode[key].values())
            for table, name in ((by_task, f"{r['benchmark']}:{r['domain']}:{r['lang']}:"
                                          f"{r['task_id']}"),
                                (by_bench, r["benchmark"]), (by_model, r["name"])):
                table[name] = None if total is None or table[name] is None else table[name] + total
        by_endpoint: dict[str, float | None] = {**spend.by_endpoint,
                                                **dict.fromkeys(spend.unpriced_endpoints)}
        return {"total": spend.total, "agent": spend.by_role["agent"],
                "user": spend.by_role["user"], "judge": spend.by_role["judge"],
                "by_endpoint": dict(sorted(by_endpoint.items())),
                "by_model": dict(sorted(by_model.items())),
                "by_benchmark": dict(sorted(by_bench.items())),
                "by_task": dict(sorted(by_task.items())),
                "calls": spend.calls, "unpriced_calls": spend.unpriced}

    def unreachable(self) -> list[dict]:
        return sorted(self.unreach.values(),
                      key=lambda u: (u["benchmark"], u["domain"], u["task_id"]))


def _attach(entry: dict, profile: dict | None) -> None:
    """A row's profile on its entry, each domain's on the entry's domain."""
    if profile is None:
        return
    profile = dict(profile)
    for domain, p in profile.pop("domains", {}).items():
        if domain in entry["domains"]:
            entry["domains"][domain]["profile"] = p
    entry["profile"] = profile


def _no_cost(profile: dict) -> dict:
    profile.pop("cost", None)
    for d in (profile.get("domains") or {}).values():
        d.pop("cost", None)
    return profile


def _short(outcomes: list[Outcome], k: int | None, adaptive: bool = False) -> dict | None:
    """Avg@k, Pass@k, Pass^k and CI of one row's outcomes at its leaderboard's k (None when
    there are none)."""
    if not outcomes:
        return None
    [stats] = summarize(outcomes, k=k, adaptive=adaptive).values()
    return {f: getattr(stats, f) for f in ("k", "tasks", "incomplete_tasks", "episodes",
                                           "passed", "avg", "pass_at_k", "pass_hat_k", "ci95")}


def _k_of(models: Mapping[str, dict], asked: int | None) -> dict:
    """The leaderboard's one k: its value, whether it was asked for, and the rows that
    cannot support it (incomplete: no Pass@k / Pass^k)."""
    ks = {e["k"] for e in models.values() if e.get("k") is not None}
    return {"value": ks.pop() if len(ks) == 1 else None, "requested": asked is not None,
            "incomplete": sorted(m for m, e in models.items() if e.get("incomplete_tasks"))}


def _agreements(by_pair: Mapping[tuple[str, str], dict[str, dict]], keys: set[str]) -> list[dict]:
    out = []
    pairs = {p: {k: j for k, j in judged.items() if k in keys} for p, judged in by_pair.items()}
    for pa, pb in combinations(sorted(pairs), 2):
        if not set(pairs[pa]) & set(pairs[pb]):
            continue
        agree = judge_agreement(pairs[pa], pairs[pb])
        if agree.episodes or agree.rubric_episodes:
            out.append({"a": f"{pa[0]}/{pa[1]}", "b": f"{pb[0]}/{pb[1]}",
                        **msgspec.to_builtins(agree)})
    return out


def render(report: dict) -> Any:
    """The terminal tables of a report (see :mod:`sweepbench.results.render.terminal`)."""
    from sweepbench.results.render.terminal import render as render_tables

    return render_tables(report)

