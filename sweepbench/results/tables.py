"""The terminal tables of a report (:func:`sweepbench.results.report.build_report`).

One leaderboard per benchmark (best Avg@k first), each titled with where its pass comes from;
with several benchmarks, the pooled overall table, labelled; then results by benchmark and
domain (like VitaBench's Table 3), metric and judge columns (like T1's Table 2), cost, and
the unreachable tasks with their reasons. Every string from a store is printed literally
(rich markup is never parsed from it).
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

__all__ = ["render"]


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _ci(ci: list[float] | None) -> str:
    return "—" if not ci else f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f}"


def _num(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{100 * x:.1f}%" if 0.0 <= x <= 1.0 else f"{x:.3g}"


def _usd(x: float | None) -> str:
    return "—" if x is None else f"${x:,.4f}" if x < 100 else f"${x:,.2f}"


def _t(text: Any) -> Text:
    return Text(str(text))


def _order(models: dict) -> list[str]:
    return sorted(models, key=lambda m: (-(models[m]["avg"] or 0.0), m))


def _k_label(models: dict) -> str:
    ks = {s["k"] for s in models.values() if s["k"] is not None}
    return str(ks.pop()) if len(ks) == 1 else "k"


def render(report: dict) -> Group:
    parts: list[Any] = []
    benches = report.get("benchmarks") or {}
    for name, b in benches.items():
        parts.append(_leaderboard(f"{name}: pass from {_source(b['source'])}", b["models"],
                                  state_column=b["source"]["method"] != "state"))
    if len(benches) > 1:
        defined = {m: s for m, s in report["models"].items() if not s.get("undefined")}
        if defined:
            parts.append(_leaderboard(f"overall ({report['overall']['label']})",
                                      report["models"], state_column=False))
        else:
            parts.append(Text("overall: undefined (some benchmark has nothing scored by its "
                              "headline)"))
    if not benches:
        parts.append(Text("no episodes in this selection"))
    for extra in (_domain_table(report), _metrics_table(report), _cost_table(report),
                  _unreachable_table(report)):
        if extra is not None:
            parts.append(extra)
    notes = []
    if report.get("superseded"):
        notes.append(f"{report['superseded']} stored episodes superseded by a newer identity "
                     "of the same model, task and trial (not counted)")
    cost = report.get("cost") or {}
    if cost.get("unpriced_calls"):
        notes.append(f"{cost['unpriced_calls']} of {cost['calls']} model calls have no stored "
                     "price (not in the cost)")
    if notes:
        parts.append(Text("\n".join(notes)))
    return Group(*parts)


def _source(src: dict) -> str:
    if not src.get("applicable", True):
        return (f"the {src['method']} judge, chosen explicitly; {src['method']} does not "
                "apply: not applicable (episodes excluded, not failed)")
    if src["method"] == "state":
        where = "state check"
    elif src.get("judge"):
        where = f"{src['judge']} / {src['method']}"
    else:
        where = (f"no {src['method']} judgments yet: sweepbench judge STORE --judge-model M "
                 f"--method {src['method']}")
    text = f"{src['label']} ({where})"
    if src.get("explicit"):
        text += ", chosen explicitly"
    return text


def _leaderboard(title: str, models: dict, *, state_column: bool) -> Table:
    table = Table(title=_t(title), caption=Text(
        "errors count as failures; unjudged and unfinished episodes are not scored (counts "
        "shown); CI: 95% bootstrap over tasks"))
    k = _k_label(models)
    gaps = [c for c in ("errors", "unjudged", "unfinished", "not_applicable")
            if any(s.get(c) for s in models.values())]
    has_score = any(s.get("score") is not None and abs(s["score"] - (s["avg"] or 0.0)) > 1e-9
                    for s in models.values())
    has_state = state_column and any(s.get("state") is not None for s in models.values())
    has_reach = any(s.get("without_unreachable") for s in models.values())
    has_cost = any((s.get("cost") or {}).get("total") for s in models.values())
    table.add_column("Model", no_wrap=True)
    for name in ("Tasks", "k", f"Avg@{k}", "95% CI", f"Pass@{k}", f"Pass^{k}",
                 *(["Score"] if has_score else []), *(["State"] if has_state else []),
                 *([f"Avg@{k} reachable"] if has_reach else []),
                 *(["$ total", "$/pass"] if has_cost else []),
                 *(g.replace("_", " ").capitalize() for g in gaps)):
        table.add_column(name, justify="right", no_wrap=True)
    notes = []
    for m in _order(models):
        s = models[m]
        cost = s.get("cost") or {}
        reach = s.get("without_unreachable") or {}
        table.add_row(
            _t(m), str(s["tasks"]), "—" if s["k"] is None else str(s["k"]),
            _pct(s["avg"]), _ci(s.get("ci95")), _pct(s["pass_at_k"]), _pct(s["pass_hat_k"]),
            *([_pct(s.get("score"))] if has_score else []),
            *([_pct(s.get("state"))] if has_state else []),
            *([_pct(reach.get("avg")) if reach else _pct(s["avg"])] if has_reach else []),
            *([_usd(cost.get("total")), _usd(cost.get("per_pass"))] if has_cost else []),
            *(str(s.get(g, 0)) for g in gaps),
        )
        if s.get("undefined"):
            notes.append(f"{m}: undefined ({s['undefined']})")
        if s.get("incomplete_tasks"):
            notes.append(f"{m}: {s['incomplete_tasks']} tasks with < k scored trials not in "
                         "Pass@k")
    if notes:
        table.caption = Text(f"{table.caption}\n" + "\n".join(notes))
    return table


def _domain_table(report: dict) -> Table | None:
    """Avg@k and Pass^k per benchmark and domain; None when there is only one domain."""
    benches = report.get("benchmarks") or {}
    columns = sorted({(b, d) for b, bs in benches.items() for s in bs["models"].values()
                      for d in s.get("domains", {})})
    if len(columns) < 2:
        return None
    table = Table(title="by benchmark and domain: Avg@k / Pass^k (each benchmark's source)")
    table.add_column("Model", no_wrap=True)
    for b, d in columns:
        table.add_column(_t(f"{b}\n{d}"), justify="right", no_wrap=True)
    names = sorted({m for bs in benches.values() for m in bs["models"]})
    for m in names:
        cells = []
        for b, d in columns:
            ds = ((benches[b]["models"].get(m) or {}).get("domains") or {}).get(d)
            cells.append("—" if not ds else f"{_pct(ds['avg'])} / {_pct(ds['pass_hat_k'])}")
        table.add_row(_t(m), *cells)
    return table


_SHOWN_METRICS = {"tool_f1": "Tool F1", "param_f1": "Param F1", "output_em": "Output EM",
                  "tool_accuracy": "Tool Acc", "param_accuracy": "Param Acc"}


def _metrics_table(report: dict) -> Group | None:
    """Per benchmark: judgment-detail metrics (T1's tool / parameter / output) of its source
    and the other judges' scores."""
    tables = []
    for b, bs in (report.get("benchmarks") or {}).items():
        src = bs["source"]
        models = bs["models"]
        keys = sorted({k for s in models.values() for k in (s.get("metrics") or {})})
        metric_keys = [k for k in _SHOWN_METRICS if k in keys] or keys[:6]
        own = f"{src.get('judge')}/{src['method']}"
        score_keys = sorted({n for s in models.values() for n in (s.get("method_scores") or {})
                             if n not in (own, "state/state")})  # the State column has it
        if not metric_keys and not score_keys:
            continue
        table = Table(title=_t(f"{b}: metrics and other judges (means over the episodes that "
                               "have them)"))
        table.add_column("Model", no_wrap=True)
        for name in metric_keys:
            table.add_column(_SHOWN_METRICS.get(name, name), justify="right")
        for name in score_keys:  # "judge/method": the method on top, the judge under it
            judge, _, method = name.rpartition("/")
            table.add_column(_t(f"{method}\n{judge}"), justify="right")
        for m in _order(models):
            s = models[m]
            table.add_row(_t(m), *(_num((s.get("metrics") or {}).get(key)) for key in metric_keys),
                          *(_num((s.get("method_scores") or {}).get(key)) for key in score_keys))
        tables.append(table)
    return Group(*tables) if tables else None


def _cost_table(report: dict) -> Table | None:
    """Dollars per model and benchmark: agent, user simulator, judge, total, $/pass."""
    cost = report.get("cost") or {}
    if not cost.get("total"):
        return None
    table = Table(title=f"cost (stored prices): total {_usd(cost['total'])} = agent "
                        f"{_usd(cost['agent'])} + user {_usd(cost['user'])} + judge "
                        f"{_usd(cost['judge'])}")
    table.add_column("Model", no_wrap=True)
    table.add_column("Benchmark", no_wrap=True)
    for name in ("Agent", "User", "Judge", "Total", "$/episode", "$/pass"):
        table.add_column(name, justify="right", no_wrap=True)
    for b, bs in (report.get("benchmarks") or {}).items():
        for m in _order(bs["models"]):
            c = bs["models"][m].get("cost")
            if c:
                table.add_row(_t(m), _t(b), *(_usd(c.get(x)) for x in (
                    "agent", "user", "judge", "total", "per_episode", "per_pass")))
    return table


def _unreachable_table(report: dict) -> Table | None:
    rows = report.get("unreachable") or []
    if not rows:
        return None
    table = Table(title="unreachable tasks (a defect of the task data: no agent can pass "
                        "them; 'reachable' columns leave them out)")
    for name in ("Benchmark", "Domain", "Task", "Episodes", "Reason"):
        table.add_column(name)
    for u in rows:
        table.add_row(_t(u["benchmark"]), _t(u["domain"]), _t(u["task_id"]), str(u["episodes"]),
                      _t(u["reason"]))
    return table
