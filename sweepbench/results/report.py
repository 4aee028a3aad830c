"""The leaderboard of one run: JSON for ``sweepbench report PATH --json`` and a rich table.

Where an episode's pass comes from: its judgment under one (judge, method) pair. A run may hold
several pairs side by side (judge versions, full-trajectory vs sliding-window, ...):
``method`` (and optionally ``judge``) picks one; by default the pair with a pass/fail verdict
for the most episodes wins (ties: the most recently written, then by name). The JSON names the
pair used in ``"judge_method"`` and lists all pairs in ``"judge_methods"``.

Counting, so nothing disappears: an episode that finished with termination 'error' is a failure
counted in ``errors``; a finished episode without a verdict under the chosen pair (no judgment,
or a score-only judgment with ``passed`` NULL) is a failure counted in ``unjudged``; an
episode still 'running' (an interrupted run) is not scored and counted in ``unfinished``.
Pass metrics, ``score``, ``ci95``, curves and ``mse_vs_k`` follow ``stats.summarize`` (k
defaults to the fewest finished trials of any task of the model).

Beyond pass metrics, per model (and per benchmark and domain where it says so):

- ``"metrics"``: the mean of every rate in the chosen pair's judgment ``details``, over
  episodes whose details carry it; ``"metric_keys"`` at the top lists them. Generic: nested
  objects are flattened with "_" (T1's ``{"tool": {"f1": ..}, "param": {..}, "output_em": ..}``
  gives ``tool_f1``, ``param_recall``, ``output_em``, ...), and a key is a rate when all its
  values are floats or booleans (0/1) in [0, 1]; integers are counts (a judge's ``calls``,
  ``windows``) and are left out, as is a key with any value outside [0, 1].
- ``"method_scores"``: "judge/method" -> mean ``score`` of every pair with scores (e.g. a
  Likert judge next to T1's metrics), over the episodes it scored.
- ``"profile"``: tokens, cost, turns, latency, retries (``profile.py``), per domain too.
- Top level: ``"comparisons"`` (paired bootstrap of per-task pass rates, model pairs in
  leaderboard order: all pairs up to 12 models, neighbours beyond), and ``"judge_agreement"``
  (Cohen's κ over pass and rubric decisions, for every two judge/method pairs that judged
  common episodes).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from itertools import combinations
from typing import Any, Mapping

import msgspec
from rich.console import Group
from rich.table import Table

from sweepbench.errors import ReportError
from sweepbench.ids import TaskKey
from sweepbench.results.profile import profile_run
from sweepbench.results.stats import (
    DEFAULT_BOOT,
    Outcome,
    judge_agreement,
    paired_bootstrap,
    summarize,
)
from sweepbench.results.store import RunStore

__all__ = ["ReportError", "build_report", "numeric_details", "render"]

_ALL_PAIRS_UP_TO = 12


def _judge_methods(judgments: list[dict]) -> list[dict]:
    pairs: dict[tuple[str, str], dict] = {}
    for j in judgments:
        p = pairs.setdefault((j["judge"], j["method"]), {
            "judge": j["judge"], "method": j["method"], "episodes": 0, "verdicts": 0,
            "_latest": 0.0,
        })
        p["episodes"] += 1
        p["verdicts"] += j["passed"] is not None
        p["_latest"] = max(p["_latest"], j["created_at"])
    ranked = sorted(
        pairs.values(),
        key=lambda p: (-p["verdicts"], -p["_latest"], p["judge"], p["method"]),
    )
    for p in ranked:
        del p["_latest"]
    return ranked


def _pick(available: list[dict], method: str | None, judge: str | None) -> dict | None:
    if method is None and judge is None:
        return available[0] if available else None
    matching = [
        p for p in available
        if (method is None or p["method"] == method) and (judge is None or p["judge"] == judge)
    ]
    if not matching:
        have = ", ".join(f"{p['judge']}/{p['method']}" for p in available) or "none"
        raise ReportError(
            f"no judgments with method={method!r} judge={judge!r} in this run "
            f"(judge/method pairs present: {have})"
        )
    return matching[0]  # `available` is ranked, so this is the best match


def numeric_details(details: Any, *, depth: int = 2) -> dict[str, bool | int | float]:
    """The numeric values in a judgment's details, nested objects flattened with "_".

    ``{"tool": {"f1": 0.5}, "output_em": 1.0, "why": "..."}`` -> ``{"tool_f1": 0.5,
    "output_em": 1.0}``, values as written (bool, int or float); lists, text and non-finite
    numbers are skipped; objects deeper than ``depth`` levels are not read.
    """
    out: dict[str, float] = {}

    def walk(obj: Any, prefix: str, level: int) -> None:
        for key, v in obj.items():
            name = f"{prefix}{key}"
            if isinstance(v, (bool, int, float)):
                if math.isfinite(v):
                    out[name] = v
            elif isinstance(v, dict) and level < depth:
                walk(v, f"{name}_", level + 1)

    if isinstance(details, dict):
        walk(details, "", 1)
    return out


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


def _empty_entry(unfinished: int) -> dict:
    return {
        "k": None, "tasks": 0, "incomplete_tasks": 0, "episodes": 0, "passed": 0,
        "errors": 0, "avg": None, "pass_at_k": None, "pass_hat_k": None, "ci95": None,
        "score": None, "scored": 0, "pass_at_k_curve": None, "pass_hat_k_curve": None,
        "mse_vs_k": None, "unjudged": 0, "unfinished": unfinished, "domains": {},
        "benchmarks": {}, "metrics": {}, "method_scores": {},
    }


def build_report(
    store: RunStore,
    run_id: str | None = None,
    *,
    method: str | None = None,
    judge: str | None = None,
    k: int | None = None,
    prices: Mapping[str, Any] | None = None,
    n_boot: int = DEFAULT_BOOT,
    seed: int = 0,
    profile: bool = True,
) -> dict:
    """The leaderboard JSON of ``run_id`` (default: the latest run).

    ``k``: one k for every model (tasks with fewer finished trials are counted in
    ``incomplete_tasks``); default: per model, its fewest finished trials of any task.
    ``prices``: model name -> prices (``profile.as_prices`` accepts Endpoints, mappings).
    ``n_boot``, ``seed``: the bootstraps (intervals, paired comparisons); same seed, same JSON.
    ``profile=False`` skips the cost/latency profile (it reads every record and event).
    """
    if run_id is None:
        run_id = store.latest_run_id()
        if run_id is None:
            raise ReportError(f"run store {store.path} holds no runs")
    run = store.run(run_id)
    if run is None:
        have = ", ".join(r["run_id"] for r in store.runs()) or "none"
        raise ReportError(f"no run {run_id!r} in {store.path} (runs: {have})")

    judgments = store.judgments(run_id)
    available = _judge_methods(judgments)
    chosen = _pick(available, method, judge)
    chosen_pair = None if chosen is None else (chosen["judge"], chosen["method"])
    by_pair: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for j in judgments:
        by_pair[j["judge"], j["method"]][j["episode_id"]] = j
    mine = by_pair.get(chosen_pair, {}) if chosen_pair else {}

    rows = store.episode_rows(run_id)
    outcomes: list[Outcome] = []
    unjudged: Counter[tuple] = Counter()
    unfinished: Counter[tuple] = Counter()
    metrics, method_scores = _Means(), _Means()
    metric_keys: set[str] = set()
    not_rates: set[str] = set()  # ints or values outside [0, 1]: counts, not metrics
    where: dict[str, tuple[str, str, str]] = {}
    for r in rows:
        model, bench, domain = r["model"], r["benchmark"], r["domain"]
        scopes = [(model,), (model, "d", domain), (model, "b", bench),
                  (model, "b", bench, domain)]
        if r["status"] == "running":
            for s in scopes:
                unfinished[s] += 1
            continue
        where[r["episode_id"]] = (model, bench, domain)
        error = r["status"] == "error"
        j = mine.get(r["episode_id"])
        verdict = None if j is None else j["passed"]
        if verdict is None and not error:
            for s in scopes:
                unjudged[s] += 1
        score = None
        if j is not None:
            score = j["score"] if j["score"] is not None else (
                None if verdict is None else float(verdict))
            for name, v in numeric_details(j["details"]).items():
                metric_keys.add(name)
                if (isinstance(v, int) and not isinstance(v, bool)) or not 0.0 <= v <= 1.0:
                    not_rates.add(name)
                for s in scopes:
                    metrics.add((*s, name), float(v))
        outcomes.append(Outcome(
            model=model, domain=domain,
            task_key=str(TaskKey(bench, domain, r["lang"] or "", r["task_id"])),
            trial=r["trial"], passed=bool(verdict), error=error, score=score, benchmark=bench,
        ))
    pair_names = []
    for pair, judged in sorted(by_pair.items()):
        name = f"{pair[0]}/{pair[1]}"
        for eid, j in judged.items():
            if j["score"] is not None and eid in where:
                pair_names.append(name)
                model, bench, domain = where[eid]
                method_scores.add((model, name), j["score"])
                method_scores.add((model, "d", domain, name), j["score"])
    pair_names = sorted(set(pair_names))
    keys = sorted(metric_keys - not_rates)

    def extras(entry: dict, scope: tuple) -> None:
        entry["unjudged"] = unjudged[scope]
        entry["unfinished"] = unfinished[scope]
        entry["metrics"] = metrics.of(scope, keys)

    models: dict[str, Any] = {}
    for model, stats in summarize(outcomes, k=k, n_boot=n_boot, seed=seed).items():
        entry = msgspec.to_builtins(stats)
        extras(entry, (model,))
        entry["method_scores"] = method_scores.of((model,), pair_names)
        for domain, d in entry["domains"].items():
            extras(d, (model, "d", domain))
            d["method_scores"] = method_scores.of((model, "d", domain), pair_names)
        for bench, b in entry["benchmarks"].items():
            extras(b, (model, "b", bench))
            for domain, d in b["domains"].items():
                extras(d, (model, "b", bench, domain))
        models[model] = entry
    # Models whose every episode is still running: listed, with nothing to score.
    for scope, n in unfinished.items():
        if len(scope) == 1 and scope[0] not in models:
            models[scope[0]] = _empty_entry(n)

    if profile:
        profiles = profile_run(store, run_id, prices=prices)
        for model, p in profiles.items():
            if model not in models:
                continue
            per_domain = p.pop("domains")
            models[model]["profile"] = p
            for domain, dp in per_domain.items():
                if domain in models[model]["domains"]:
                    models[model]["domains"][domain]["profile"] = dp

    return {
        "run_id": run_id,
        "status": run["status"],
        "config_hash": run["config_hash"],
        "judge_method": (
            None if chosen is None else {"judge": chosen["judge"], "method": chosen["method"]}
        ),
        "judge_methods": available,
        "metric_keys": keys,
        "method_score_keys": pair_names,
        "models": dict(sorted(models.items())),
        "comparisons": _comparisons(outcomes, models, n_boot=n_boot, seed=seed),
        "judge_agreement": _agreements(by_pair),
    }


def _leaderboard_order(models: Mapping[str, dict]) -> list[str]:
    return sorted(models, key=lambda m: (-(models[m]["avg"] or 0.0), m))


def _comparisons(outcomes: list[Outcome], models: Mapping[str, dict], *, n_boot: int,
                 seed: int) -> list[dict]:
    """Paired bootstrap of per-task pass rates for model pairs, on their common tasks."""
    rate: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for o in outcomes:
        cell = rate[o.model][o.task_key]
        cell[0] += bool(o.passed) and not o.error
        cell[1] += 1
    order = [m for m in _leaderboard_order(models) if m in rate]
    if len(order) <= _ALL_PAIRS_UP_TO:
        pairs = list(combinations(order, 2))
    else:
        pairs = list(zip(order, order[1:]))
    out = []
    for a, b in pairs:
        common = sorted(set(rate[a]) & set(rate[b]))
        if not common:
            continue
        ra = [rate[a][t][0] / rate[a][t][1] for t in common]
        rb = [rate[b][t][0] / rate[b][t][1] for t in common]
        cmp = paired_bootstrap(ra, rb, n_boot=n_boot, seed=seed)
        out.append({"a": a, "b": b, **msgspec.to_builtins(cmp)})
    return out


def _agreements(by_pair: Mapping[tuple[str, str], dict[str, dict]]) -> list[dict]:
    out = []
    for pa, pb in combinations(sorted(by_pair), 2):
        if not set(by_pair[pa]) & set(by_pair[pb]):
            continue
        agree = judge_agreement(by_pair[pa], by_pair[pb])
        if agree.episodes or agree.rubric_episodes:
            out.append({"a": f"{pa[0]}/{pa[1]}", "b": f"{pb[0]}/{pb[1]}",
                        **msgspec.to_builtins(agree)})
    return out


# ---- rich table ---------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _ci(ci: list[float] | None) -> str:
    return "—" if not ci else f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f}"


def _num(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{100 * x:.1f}%" if 0.0 <= x <= 1.0 else f"{x:.3g}"


def render(report: dict) -> Group:
    """The leaderboard (best Avg@k first), then results by benchmark and domain (like
    VitaBench's Table 3), then metric and judge columns when present (like T1's Table 2)."""
    parts: list[Any] = [_main_table(report)]
    domains = _domain_table(report)
    if domains is not None:
        parts.append(domains)
    metrics = _metrics_table(report)
    if metrics is not None:
        parts.append(metrics)
    return Group(*parts)


def _k_label(models: dict) -> str:
    ks = {s["k"] for s in models.values()}
    return str(ks.pop()) if len(ks) == 1 else "k"


def _main_table(report: dict) -> Table:
    jm = report.get("judge_method")
    judged_by = f"{jm['judge']} / {jm['method']}" if jm else "no judgments"
    table = Table(
        title=f"run {report['run_id']} ({report.get('status', '?')})",
        caption=f"pass from: {judged_by}; errors and unjudged episodes count as failures; "
                "CI: 95% bootstrap over tasks",
    )
    models = report["models"]
    k = _k_label(models)
    # Optional columns only when some model has them: the common case stays narrow.
    gaps = [c for c in ("errors", "unjudged", "unfinished") if any(s[c] for s in models.values())]
    # Score only when it says more than Avg (a pass/fail judge scores 1/0: the same number).
    has_score = any(s.get("score") is not None and abs(s["score"] - (s["avg"] or 0.0)) > 1e-9
                    for s in models.values())
    has_cost = any((s.get("profile") or {}).get("cost") for s in models.values())
    table.add_column("Model", no_wrap=True)
    for name in ("Tasks", "k", f"Avg@{k}", "95% CI", f"Pass@{k}", f"Pass^{k}",
                 *(["Score"] if has_score else []), *(["$/episode"] if has_cost else []),
                 *(g.capitalize() for g in gaps)):
        table.add_column(name, justify="right", no_wrap=True)
    notes = []
    for m in _leaderboard_order(models):
        s = models[m]
        cost = (s.get("profile") or {}).get("cost")
        table.add_row(
            m, str(s["tasks"]), "—" if s["k"] is None else str(s["k"]),
            _pct(s["avg"]), _ci(s.get("ci95")), _pct(s["pass_at_k"]), _pct(s["pass_hat_k"]),
            *([_pct(s.get("score"))] if has_score else []),
            *([("—" if not cost else f"{cost['per_episode']:.4f}")] if has_cost else []),
            *(str(s[g]) for g in gaps),
        )
        if s.get("incomplete_tasks"):
            notes.append(f"{m}: {s['incomplete_tasks']} tasks with < k trials not in Pass@k")
    if notes:
        table.caption = f"{table.caption}\n" + "\n".join(notes)
    return table


def _domain_table(report: dict) -> Table | None:
    """Avg@k and Pass^k per benchmark and domain; None when there is only one domain."""
    models = report["models"]
    columns = sorted({(b, d) for s in models.values()
                      for b, bs in (s.get("benchmarks") or {}).items() for d in bs.get("domains", {})})
    if len(columns) < 2:
        return None
    k = _k_label(models)
    table = Table(title=f"by benchmark and domain: Avg@{k} / Pass^{k}")
    table.add_column("Model", no_wrap=True)
    for b, d in columns:
        table.add_column(f"{b}\n{d}", justify="right", no_wrap=True)
    for m in _leaderboard_order(models):
        cells = []
        for b, d in columns:
            ds = (((models[m].get("benchmarks") or {}).get(b) or {}).get("domains") or {}).get(d)
            cells.append("—" if not ds else f"{_pct(ds['avg'])} / {_pct(ds['pass_hat_k'])}")
        table.add_row(m, *cells)
    return table


_SHOWN_METRICS = {"tool_f1": "Tool F1", "param_f1": "Param F1", "output_em": "Output EM",
                  "tool_accuracy": "Tool Acc", "param_accuracy": "Param Acc"}


def _metrics_table(report: dict) -> Table | None:
    """Judgment-detail metrics (T1's tool / parameter / output) and other judges' scores."""
    jm = report.get("judge_method")
    metric_keys = [k for k in _SHOWN_METRICS if k in (report.get("metric_keys") or [])] or \
        list(report.get("metric_keys") or [])[:6]
    score_keys = [n for n in report.get("method_score_keys") or []
                  if jm is None or n != f"{jm['judge']}/{jm['method']}"]
    if not metric_keys and not score_keys:
        return None
    models = report["models"]
    table = Table(title="metrics and other judges (means over the episodes that have them)")
    table.add_column("Model", no_wrap=True)
    for name in metric_keys:
        table.add_column(_SHOWN_METRICS.get(name, name), justify="right")
    for name in score_keys:  # "judge/method": the method on top, the judge under it
        judge, _, method = name.rpartition("/")
        table.add_column(f"{method}\n{judge}", justify="right")
    for m in _leaderboard_order(models):
        s = models[m]
        table.add_row(m, *(_num((s.get("metrics") or {}).get(key)) for key in metric_keys),
                      *(_num((s.get("method_scores") or {}).get(key)) for key in score_keys))
    return table
