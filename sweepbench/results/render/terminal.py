"""The terminal tables of a report (:func:`sweepbench.results.report.build_report`).

One leaderboard per benchmark (best Avg@k first), each titled with where its pass comes from;
with several benchmarks, the pooled overall table, labelled; then per benchmark its domains
(one row per domain, one column per model, like VitaBench's Table 3), its metrics and other
judges (like T1's Table 2), cost, errors grouped by reason, and the unreachable tasks with
their reasons.

Tables fit the console: a table too wide for the terminal is drawn without borders (two
spaces between columns), and one still too wide is split into several, each repeating its
first column, so numbers are never cut (no "Avg…", no "12.…"); headers wrap on spaces,
model names and reasons wrap. Titles are lines of their own above a table, as wide as the
console (a title centred over a narrow table would wrap to its width, over several lines). Numbers are written as in the HTML report
(:mod:`sweepbench.results.fmt`). Every string from a store is printed literally (rich markup
is never parsed from it: every cell, header and title is a ``Text``; control characters
are shown escaped, :mod:`sweepbench.results.text`).
"""

from __future__ import annotations

from typing import Any, Iterator

from rich import box
from rich.console import Console, ConsoleOptions, Group
from rich.table import Table
from rich.text import Text

from sweepbench.results import fmt
from sweepbench.results.text import literal

__all__ = ["FitTable", "render"]

_KEY_MIN = 30  # the first column (model, domain) may wrap down to this width, no less
_BOXED = (3, 1)  # a column's cells beyond its width (padding, rule), and the table's edges
_BARE = (2, -2)  # no borders: two spaces between columns, none at the edges
_TIGHT = (1, -1)  # no borders, one space between columns: before splitting a table in parts


def _t(text: Any) -> Text:
    return literal(text)


def _width(text: Any) -> int:
    return _t(text).cell_len


class FitTable:
    """A table whose columns are packed into as many rich Tables as the width needs; the
    first ``keep`` columns (text, may wrap) start every one of them. Other columns are
    numbers: right-aligned and as wide as their longest cell, never wrapped or cut (their
    header may wrap on spaces). Room left in a table widens wrapped columns back."""

    def __init__(self, title: str, head: list[str], rows: list[list[Any]], *, keep: int = 1,
                 caption: str | None = None, wrap: tuple[int, ...] = (),
                 key_min: int = _KEY_MIN) -> None:
        self.title, self.head, self.rows = title, head, rows
        self.keep, self.caption, self.key_min = keep, caption, key_min
        self.wrap = set(wrap) | set(range(keep))  # text columns (may wrap)

    def _natural(self, i: int) -> int:
        return max([_width(r[i]) for r in self.rows] + [_width(self.head[i])])

    def _need(self, i: int) -> int:
        """Narrowest width of column ``i`` that cuts no number and no header word."""
        words = max((_width(w) for w in self.head[i].split()), default=1)
        cells = max((_width(r[i]) for r in self.rows), default=1)
        if i in self.wrap:
            return max(words, min(cells, self.key_min))
        return max(words, cells)

    def layout(self, width: int, style: tuple[int, int] = _BOXED) -> list[dict[int, int]]:
        """Each table's columns (index -> width) for a console ``width`` wide, drawn in
        ``style`` (``_BOXED`` or ``_BARE``)."""
        per, edges = style
        keep = list(range(self.keep))
        base = edges + sum(self._need(i) + per for i in keep)
        groups: list[list[int]] = [[]]
        used = base
        for i in range(self.keep, len(self.head)):
            w = self._need(i) + per
            if groups[-1] and used + w > width:
                groups.append([])
                used = base
            groups[-1].append(i)
            used += w
        out = []
        for g in groups:
            cols = {i: self._need(i) for i in keep + g}
            room = width - edges - sum(w + per for w in cols.values())
            for i in cols:  # text first, then headers that wrapped, back to natural width
                grow = max(0, min(room, self._natural(i) - cols[i]))
                cols[i] += grow
                room -= grow
            out.append(cols)
        return out

    def fit(self, width: int) -> tuple[list[dict[int, int]], tuple[int, int]]:
        """The layout for ``width`` and its style: boxed if one table fits, else bare
        (narrower), else tight (one space between columns), split only if even that does not
        fit (then bare)."""
        for style in (_BOXED, _BARE, _TIGHT):
            tables = self.layout(width, style)
            if len(tables) == 1:
                return tables, style
        return self.layout(width, _BARE), _BARE

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Any]:
        tables, style = self.fit(options.max_width)
        for n, cols in enumerate(tables):
            title = self.title if len(tables) == 1 else f"{self.title} ({n + 1}/{len(tables)})"
            yield literal(title, "bold")
            table = (Table() if style == _BOXED else
                     Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                           collapse_padding=True, padding=(0, 1 if style == _BARE else 0)))
            for i, w in cols.items():
                table.add_column(_t(self.head[i]), width=w, overflow="fold",
                                 justify="left" if i in self.wrap else "right")
            for r in self.rows:
                table.add_row(*(_t(r[i]) for i in cols))
            yield table
        if self.caption:
            yield _t(self.caption)


def _k_label(models: dict) -> str:
    ks = {s["k"] for s in models.values() if s.get("k") is not None}
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
    if report.get("adaptive"):
        parts.append(_adaptive_table(report["adaptive"]))
    for name, b in benches.items():
        parts += [t for t in (_domain_table(name, b), _metrics_table(name, b)) if t is not None]
    parts += [t for t in (_cost_table(report), _stalls_table(report), _error_table(report),
                          _unjudged_table(report), _unreachable_table(report))
              if t is not None]
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


def _adaptive_table(a: dict) -> FitTable:
    """An adaptive sweep: trials per cell (and per neighbour pair), its rule and why it
    stopped, and what that changes in the leaderboards above."""
    rows = []
    for bench, b in a["benchmarks"].items():
        for model, n in b["trials_per_cell"].items():
            rows.append([bench, model, f"{n['min']}-{n['max']} (median {n['median']})",
                         fmt.count(n["total"])])
    notes = [f"adaptive sweep {r['run_id']}: {r.get('stopping_rule') or r.get('rule')}; "
             f"stopped: {r.get('why')} after {r.get('rounds')} rounds" for r in a["runs"]]
    notes += [f"{r['run_id']} on {bench}: {b['stopped']}{_still_open(b.get('unmet'))}"
              for r in a["runs"] for bench, b in (r.get("benchmarks") or {}).items()
              if b.get("stopped")]
    for bench, b in a["benchmarks"].items():
        if b.get("trials_per_pair"):
            notes.append(f"{bench}: trials charged per neighbour pair: " + ", ".join(
                f"{p.replace('|', ' vs ')} {t}" for p, t in b["trials_per_pair"].items()))
        if b.get("pass_k"):
            notes.append(f"{bench}: {b['pass_k']}")
    notes.append(a["interval"])
    return FitTable("adaptive sweep: scored trials per (model, task)",
                    ["Benchmark", "Model", "Trials per task", "Trials"], rows,
                    caption="\n".join(notes))


def _still_open(unmet: dict | None) -> str:
    """What an adaptive sweep that stopped short still lacked: models wider than its target
    (their half-width), or neighbour pairs not told apart."""
    wide = [f"{m} ±{w:.3g}" if w is not None else f"{m} (nothing scored)"
            for m, w in ((unmet or {}).get("wide") or {}).items()]
    pairs = [p.replace("|", " vs ") for p in (unmet or {}).get("open_pairs") or []]
    return f"; still open: {', '.join(wide + pairs)}" if wide or pairs else ""


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


_GAPS = [("errors", "Errors"), ("unjudged", "Unjudged"), ("unfinished", "Unfinished"),
         ("not_applicable", "Not applicable")]


def _leaderboard(title: str, models: dict, *, state_column: bool) -> FitTable:
    k = _k_label(models)
    gaps = [(g, name) for g, name in _GAPS if any(s.get(g) for s in models.values())]
    has_score = any(s.get("score") is not None and abs(s["score"] - (s["avg"] or 0.0)) > 1e-9
                    for s in models.values())
    has_state = state_column and any(s.get("state") is not None for s in models.values())
    has_reach = any(s.get("without_unreachable") for s in models.values())
    has_cost = any((s.get("cost") or {}).get("total") for s in models.values())
    has_bounds = any(s.get("errors") or s.get("unjudged") for s in models.values())
    head = ["Model", "Tasks", f"Avg@{k}", "95% CI task population", "95% CI these tasks",
            f"Pass@{k}", f"Pass^{k}",
            *(["Score"] if has_score else []), *(["State"] if has_state else []),
            *([f"Avg@{k} reachable"] if has_reach else []),
            *(["$ total", "$/pass"] if has_cost else []), *(name for _, name in gaps),
            *([f"Avg@{k} if gaps failed–passed"] if has_bounds else [])]
    rows, notes = [], []
    for m in fmt.by_score(models):
        s = models[m]
        cost = s.get("cost") or {}
        reach = s.get("without_unreachable") or {}
        incomplete = "incomplete" if s.get("incomplete_tasks") else None
        rows.append([
            f"{m} (incomplete)" if incomplete else m, fmt.count(s["tasks"]), fmt.pct(s["avg"]),
            fmt.ci(s.get("ci95")),
            fmt.ci(fmt.interval(s, "avg", "fixed_set")),
            incomplete or fmt.pct(s["pass_at_k"]), incomplete or fmt.pct(s["pass_hat_k"]),
            *([fmt.pct(s.get("score"))] if has_score else []),
            *([fmt.pct(s.get("state"))] if has_state else []),
            *([fmt.pct(reach.get("avg", s["avg"]))] if has_reach else []),
            *([fmt.usd(cost.get("total")), fmt.usd(cost.get("per_pass"))] if has_cost else []),
            *(fmt.count(s.get(g, 0)) for g, _ in gaps),
            *([fmt.ci(s.get("bounds"))] if has_bounds else [])])
        if s.get("undefined"):
            notes.append(f"{m}: undefined ({s['undefined']})")
        if s.get("incomplete_tasks"):
            notes.append(f"{m}: incomplete, {s['incomplete_tasks']} tasks with fewer than {k} "
                         f"scored trials (no Pass@{k} / Pass^{k}; its Avg@{k} is the mean of "
                         "per-task rates over the trials it has; --k sets k)")
    caption = (f"one k for every row (k = {k}); Avg@{k}: mean over tasks of per-task pass "
               "rates; errors count as failures; unjudged and unfinished episodes are not "
               "scored (counts shown); 95% CI over the task population (other tasks like "
               "these) and over trials on these tasks")
    return FitTable(title, head, rows, caption="\n".join([caption, *notes]))


def _domain_table(bench: str, b: dict) -> FitTable | None:
    """Avg@k (and Pass^k when k > 1) per domain, a column per model; None with one domain."""
    models = b["models"]
    domains = sorted({d for s in models.values() for d in s.get("domains") or {}},
                     key=lambda d: (d.count(","), d))
    if len(domains) < 2:
        return None
    k = _k_label(models)
    names = fmt.by_score(models)
    rows = []
    for d in domains:
        cells = [(models[m].get("domains") or {}).get(d) for m in names]
        tasks = max((c["tasks"] for c in cells if c), default=0)
        rows.append([d.replace(",", ", "), fmt.count(tasks),
                     *(fmt.DASH if not c else fmt.pct(c["avg"]) if k == "1" else
                       f"{fmt.pct(c['avg'])} / {fmt.pct(c['pass_hat_k'])}" for c in cells)])
    what = f"Avg@{k}" if k == "1" else f"Avg@{k} / Pass^{k}"
    return FitTable(f"{bench} by domain: {what}", ["Domain", "Tasks", *names], rows,
                    key_min=24)


def _metrics_table(bench: str, b: dict) -> FitTable | None:
    """The headline judgment's detail rates (T1's tool / parameter / output metrics) and the
    other judges' mean scores, as percentages."""
    src, models = b["source"], b["models"]
    keys = fmt.metric_order({k for s in models.values() for k in (s.get("metrics") or {})})
    own = f"{src.get('judge')}/{src['method']}"
    judges = sorted({n for s in models.values() for n in (s.get("method_scores") or {})
                     if n not in (own, "state/state")})  # the State column has it
    if not keys and not judges:
        return None
    head = ["Model", *(fmt.metric_name(k) for k in keys), *(fmt.judge_label(j) for j in judges)]
    rows = [[m, *(fmt.pct((models[m].get("metrics") or {}).get(k)) for k in keys),
             *(fmt.pct((models[m].get("method_scores") or {}).get(j)) for j in judges)]
            for m in fmt.by_score(models)]
    return FitTable(f"{bench}: metrics and other judges (means over the episodes that have "
                    "them)", head, rows)


def _cost_table(report: dict) -> FitTable | None:
    """Dollars per model and benchmark: agent, user simulator, judge, total, $/pass."""
    cost = report.get("cost") or {}
    if not cost.get("total"):
        return None
    rows = fmt.cost_rows(report)
    return FitTable(f"cost (stored prices): total {fmt.usd(cost['total'])} = agent "
                    f"{fmt.usd(cost['agent'])} + user {fmt.usd(cost['user'])} + judge "
                    f"{fmt.usd(cost['judge'])}",
                    ["Model", "Benchmark", "Agent", "User", "Judge", "Total", "$/episode",
                     "$/pass"], rows, keep=2)


def _stalls_table(report: dict) -> FitTable | None:
    by = report.get("stalls_by_endpoint") or {}
    if not by:
        return None
    return FitTable("requests abandoned for want of a first byte (hung) and hedged, per endpoint",
                    ["Endpoint", "Calls", "Hung", "Hedged", "Won by a copy"],
                    [[name, fmt.count(e["calls"]), fmt.count(e["hung"]), fmt.count(e["hedged"]),
                      fmt.count(e["hedge_wins"])] for name, e in by.items()])


def _error_table(report: dict) -> FitTable | None:
    reasons = report.get("error_reasons") or []
    if not reasons:
        return None
    return FitTable("episodes that ended in error (failures), by reason",
                    ["Benchmark", "Reason", "Episodes"],
                    [[r["benchmark"], r["reason"], fmt.count(r["episodes"])] for r in reasons],
                    keep=2)


def _unjudged_table(report: dict) -> FitTable | None:
    rows = report.get("unjudged_by_judge") or []
    if not rows:
        return None
    return FitTable("episodes a judge left unjudged (no verdict: not scored; run again to retry)",
                    ["Judge", "Method", "Reason", "Episodes"],
                    [[r["judge"], r["method"], r["reason"], fmt.count(r["episodes"])]
                     for r in rows], keep=2)


def _unreachable_table(report: dict) -> FitTable | None:
    rows = report.get("unreachable") or []
    if not rows:
        return None
    return FitTable("unreachable tasks (a defect of the task data: no agent can pass them; "
                    "'reachable' columns leave them out)",
                    ["Benchmark", "Domain", "Task", "Reason", "Episodes"],
                    [[u["benchmark"], u["domain"], u["task_id"], u["reason"],
                      fmt.count(u["episodes"])] for u in rows], keep=3, wrap=(3,))
