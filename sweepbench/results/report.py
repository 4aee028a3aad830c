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
Pass metrics follow ``stats.summarize`` (k defaults to the fewest finished trials of any task
of the model).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import msgspec
from rich.table import Table

from sweepbench.results.stats import Outcome, summarize
from sweepbench.results.store import RunStore

__all__ = ["ReportError", "build_report", "render"]


class ReportError(ValueError):
    """The store has no such run, or no such judge method; the message lists what there is."""


def task_key(benchmark: str, domain: str, lang: str | None, task_id: str) -> str:
    """The same key as ``datasets.Task.key``, rebuilt from the episode's columns."""
    return f"{benchmark}:{domain}:{lang or ''}:{task_id}"


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


def build_report(
    store: RunStore,
    run_id: str | None = None,
    *,
    method: str | None = None,
    judge: str | None = None,
    k: int | None = None,
) -> dict:
    """The leaderboard JSON of ``run_id`` (default: the latest run).

    ``k``: one k for every model (tasks with fewer finished trials are counted in
    ``incomplete_tasks``); default: per model, its fewest finished trials of any task.
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
    verdicts: dict[str, bool] = {}
    if chosen is not None:
        verdicts = {
            j["episode_id"]: j["passed"] for j in judgments
            if j["judge"] == chosen["judge"] and j["method"] == chosen["method"]
            and j["passed"] is not None
        }

    outcomes: list[Outcome] = []
    unjudged: Counter[tuple[str, str | None]] = Counter()
    unfinished: Counter[tuple[str, str | None]] = Counter()
    for r in store.episode_rows(run_id):
        model, domain = r["model"], r["domain"]
        if r["status"] == "running":
            unfinished[model, None] += 1
            unfinished[model, domain] += 1
            continue
        error = r["status"] == "error"
        verdict = verdicts.get(r["episode_id"])
        if verdict is None and not error:
            unjudged[model, None] += 1
            unjudged[model, domain] += 1
        outcomes.append(Outcome(
            model=model,
            domain=domain,
            task_key=task_key(r["benchmark"], domain, r["lang"], r["task_id"]),
            trial=r["trial"],
            passed=bool(verdict),
            error=error,
        ))

    models: dict[str, Any] = {}
    for model, stats in summarize(outcomes, k=k).items():
        entry = msgspec.to_builtins(stats)
        entry["unjudged"] = unjudged[model, None]
        entry["unfinished"] = unfinished[model, None]
        for domain, d in entry["domains"].items():
            d["unjudged"] = unjudged[model, domain]
            d["unfinished"] = unfinished[model, domain]
        models[model] = entry
    # Models whose every episode is still running: listed, with nothing to score.
    only_running: defaultdict[str, dict] = defaultdict(dict)
    for (model, domain), n in unfinished.items():
        if model not in models and domain is not None:
            only_running[model][domain] = n
    for model, per_domain in only_running.items():
        models[model] = {
            "k": None, "tasks": 0, "incomplete_tasks": 0, "episodes": 0, "passed": 0,
            "errors": 0, "avg": None, "pass_at_k": None, "pass_hat_k": None, "unjudged": 0,
            "unfinished": sum(per_domain.values()), "domains": {},
        }

    return {
        "run_id": run_id,
        "status": run["status"],
        "config_hash": run["config_hash"],
        "judge_method": (
            None if chosen is None else {"judge": chosen["judge"], "method": chosen["method"]}
        ),
        "judge_methods": available,
        "models": dict(sorted(models.items())),
    }


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def render(report: dict) -> Table:
    """A leaderboard table (best Avg@k first); percentages, with errors and gaps spelled out."""
    jm = report.get("judge_method")
    judged_by = f"{jm['judge']} / {jm['method']}" if jm else "no judgments"
    table = Table(
        title=f"run {report['run_id']} ({report.get('status', '?')})",
        caption=f"pass from: {judged_by}; errors and unjudged episodes count as failures",
    )
    models = report["models"]
    ks = {s["k"] for s in models.values()}
    k = str(ks.pop()) if len(ks) == 1 else "k"
    # Gap columns only when some model has gaps: the common case stays narrow.
    gaps = [c for c in ("unjudged", "unfinished") if any(s[c] for s in models.values())]
    table.add_column("Model", no_wrap=True)
    for name in ("Tasks", "k", f"Avg@{k}", f"Pass@{k}", f"Pass^{k}", "Errors",
                 *(g.capitalize() for g in gaps)):
        table.add_column(name, justify="right", no_wrap=True)
    order = sorted(models, key=lambda m: (-(models[m]["avg"] or 0.0), m))
    notes = []
    for m in order:
        s = models[m]
        table.add_row(
            m, str(s["tasks"]), "—" if s["k"] is None else str(s["k"]),
            _pct(s["avg"]), _pct(s["pass_at_k"]), _pct(s["pass_hat_k"]),
            str(s["errors"]), *(str(s[g]) for g in gaps),
        )
        if s.get("incomplete_tasks"):
            notes.append(f"{m}: {s['incomplete_tasks']} tasks with < k trials not in Pass@k")
    if notes:
        table.caption = f"{table.caption}\n" + "\n".join(notes)
    return table
