"""One self-contained HTML page of a report: tables and plots, nothing fetched.

A pure function of the report JSON (``report.build_report``): the same report gives the same
page. Plots come from :mod:`sweepbench.results.render.figures` as PNGs embedded in base64; a plot
whose data the report lacks (one trial only, no prices, no latency events) is left out with
a one-line note, never drawn empty. Numbers are written one way (:mod:`sweepbench.results.fmt`:
rates as percentages, metric keys by human names). The page fits a 1,400 px screen: tables
are split rather than widened (``tests/results/test_html.py`` checks it in headless
Chromium). Every string from the store (models, domains, task ids, errors, judge names,
configuration) is HTML-escaped. ``write_html`` writes a temporary file and renames it, so a
failed write never leaves a truncated page.
"""

from __future__ import annotations

import base64
import io
from html import escape
from pathlib import Path
from typing import Any

from sweepbench.results import fmt
from sweepbench.results.files import replace_text
from sweepbench.results.render.figures import figure_specs, figures

__all__ = ["plots", "render_html", "write_html"]

_MAX_COLUMNS = 11  # numeric columns per table before it is split in two
_MODELS_PER_TABLE = 4


class _Raw(str):
    """Already-escaped HTML for a table cell."""


def plots(report: dict) -> dict[str, str | None]:
    """name -> base64 PNG (None when the report has no data for it)."""
    out: dict[str, str | None] = {}
    for name, fig in figures(report).items():
        if fig is None:
            out[name] = None
            continue
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        out[name] = base64.b64encode(buf.getvalue()).decode("ascii")
    return out


# ---- building blocks ------------------------------------------------------------------------


def _cell(c: Any, numeric: bool) -> str:
    text = c if isinstance(c, _Raw) else escape(str(c))
    return f'<td class="n">{text}</td>' if numeric else f"<td>{text}</td>"


def _table(head: list[str], rows: list[list[Any]], *, text_cols: int = 1,
           caption: str | None = None) -> str:
    """A table whose first ``text_cols`` columns are text (left, wrapping) and the rest
    numbers (right, not wrapping)."""
    th = "".join(f'<th{"" if i < text_cols else " class=n"}>{escape(h)}</th>'
                 for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(_cell(c, i >= text_cols) for i, c in enumerate(r))
                   + "</tr>" for r in rows)
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _grouped_table(lead: list[str], groups: list[str], sub: list[str],
                   rows: list[list[Any]]) -> str:
    """A table whose numeric columns come in groups (a model's Avg@k, CI, Pass^k): each
    group's name spans its columns on a header row of its own, so a long model name is not
    repeated in, and does not widen, every column it heads (it may break anywhere). The
    first lead column is text, the others numbers."""
    top = "".join(f'<th rowspan=2{"" if i == 0 else " class=n"}>{escape(h)}</th>'
                  for i, h in enumerate(lead))
    top += "".join(f'<th colspan={len(sub)} class=g>{escape(g)}</th>' for g in groups)
    second = "".join(f"<th class=n>{escape(h)}</th>" for h in sub) * len(groups)
    body = "".join("<tr>" + "".join(_cell(c, i >= 1) for i, c in enumerate(r)) + "</tr>"
                   for r in rows)
    return (f"<table><thead><tr>{top}</tr><tr>{second}</tr></thead><tbody>{body}</tbody>"
            "</table>")


def _split_table(head: list[str], rows: list[list[Any]], *, text_cols: int = 1) -> str:
    """A wide table as several, each repeating the text columns."""
    n = len(head) - text_cols
    if n <= _MAX_COLUMNS:
        return _table(head, rows, text_cols=text_cols)
    parts = []
    for lo in range(text_cols, len(head), _MAX_COLUMNS):
        cols = list(range(text_cols)) + list(range(lo, min(len(head), lo + _MAX_COLUMNS)))
        parts.append(_table([head[i] for i in cols], [[r[i] for i in cols] for r in rows],
                            text_cols=text_cols))
    return "".join(parts)


def _domain(d: str) -> _Raw:
    """A domain composition that may break after its commas."""
    return _Raw(",<wbr>".join(escape(p) for p in d.split(",")))


def _p(text: str, cls: str | None = None) -> str:
    return f'<p{f" class={cls}" if cls else ""}>{escape(text)}</p>'


def _note(text: str) -> str:
    return _p(text, "note")


def _k(models: dict) -> str:
    ks = {s["k"] for s in models.values() if s.get("k")}
    return str(ks.pop()) if len(ks) == 1 else "k"


# ---- sections -------------------------------------------------------------------------------

_GAPS = [("errors", "Errors"), ("unjudged", "Unjudged"), ("unfinished", "Unfinished"),
         ("not_applicable", "Not applicable")]


def _board(models: dict, *, state: bool) -> str:
    k = _k(models)
    has_state = state and any(s.get("state") is not None for s in models.values())
    has_reach = any(s.get("without_unreachable") for s in models.values())
    has_cost = any((s.get("cost") or {}).get("total") for s in models.values())
    gaps = [(key, name) for key, name in _GAPS if any(s.get(key) for s in models.values())]
    has_bounds = any(s.get("errors") or s.get("unjudged") for s in models.values())
    head = ["Model", "Tasks", f"Avg@{k}", "95% CI, task population", "95% CI, these tasks",
            f"Pass@{k}", f"Pass^{k}",
            *(["State check"] if has_state else []),
            *([f"Avg@{k} reachable tasks"] if has_reach else []),
            *(name for _, name in gaps),
            *([f"Avg@{k} if unjudged / errored all failed – all passed"] if has_bounds else []),
            *(["$ total", "$ / pass"] if has_cost else [])]
    rows = []
    for m in fmt.by_score(models):
        s = models[m]
        reach = s.get("without_unreachable") or {}
        cost = s.get("cost") or {}
        name = m if not s.get("undefined") else f"{m} (undefined: {s['undefined']})"
        name += " (incomplete)" if s.get("incomplete_tasks") else ""
        incomplete = "incomplete" if s.get("incomplete_tasks") else None
        rows.append([name, fmt.count(s["tasks"]), fmt.pct(s["avg"]),
                     fmt.ci(s.get("ci95")), fmt.ci(fmt.interval(s, "avg", "fixed_set")),
                     incomplete or fmt.pct(s["pass_at_k"]),
                     incomplete or fmt.pct(s["pass_hat_k"]),
                     *([fmt.pct(s.get("state"))] if has_state else []),
                     *([fmt.pct(reach.get("avg", s["avg"]))] if has_reach else []),
                     *(fmt.count(s.get(key, 0)) for key, _ in gaps),
                     *([fmt.ci(s.get("bounds"))] if has_bounds else []),
                     *([fmt.usd(cost.get("total")), fmt.usd(cost.get("per_pass"))]
                       if has_cost else [])])
    return _table(head, rows)


def _k_note(k: dict) -> str:
    how = "asked for" if k.get("requested") else "the fewest scored trials of any task"
    return (f"One k for every row: k = {k.get('value')} ({how}). Avg@k is the mean over tasks "
            "of per-task pass rates.")


def _source(src: dict) -> str:
    if not src.get("applicable", True):
        return (f"{src['method']} does not apply to this benchmark: its episodes are not "
                "applicable (excluded, not failed).")
    where = ("the state check" if src["method"] == "state" else
             f"{src.get('judge') or 'no judge yet'} / {src['method']}")
    return f"Pass from {src['label']} ({where}){', chosen explicitly' if src.get('explicit') else ''}."


def _leaderboard(report: dict, figs: dict[str, str]) -> str:
    benches = report.get("benchmarks") or {}
    parts = [figs.get("leaderboard", "")]
    for name, b in benches.items():
        parts.append(f"<h3>{escape(name)}</h3>{_p(_source(b['source']))}")
        parts.append(_board(b["models"], state=b["source"]["method"] != "state"))
        parts.append(_note(_k_note(b.get("k") or {})))
        for m, s in b["models"].items():
            if s.get("incomplete_tasks"):
                parts.append(_note(f"{m}: incomplete, {s['incomplete_tasks']} tasks with fewer "
                                   "than k scored trials: no Pass@k or Pass^k; its Avg@k is "
                                   "the mean of per-task rates over the trials it has."))
    if len(benches) > 1:
        parts.append(f"<h3>Overall</h3>{_p(report['overall']['label'] + '.')}")
        parts.append(_board(report["models"], state=False))
    if not benches:
        parts.append(_note("No episodes in this selection."))
    return "".join(parts)


def _adaptive(report: dict) -> str:
    """An adaptive sweep (``report["adaptive"]``, "" for none): per run its stopping rule,
    why each benchmark stopped and after how many rounds (and what was still lacking); the
    scored trials per (model, task) as fewest / median / most per model, the trials charged
    to each neighbour pair, the k of Pass@k / Pass^k, and which interval is shown."""
    a = report.get("adaptive")
    if not a:
        return ""
    parts = ["<h3 id=adaptive>Adaptive sweep</h3>"]
    for r in a.get("runs") or []:
        parts.append(_p(f"Run {r['run_id']}: {r.get('stopping_rule') or r.get('rule')}."))
        for bench, b in (r.get("benchmarks") or {}).items():
            unmet = b.get("unmet") or {}
            still = "; ".join(
                [f"{m} at ±{w:.3g}" if w is not None else f"{m}: nothing scored"
                 for m, w in (unmet.get("wide") or {}).items()]
                + [p.replace("|", " vs ") for p in unmet.get("open_pairs") or []])
            parts.append(_p(f"{bench}: stopped after {b.get('rounds')} rounds (batches after "
                            f"the first trials), {b.get('trials')} trials over {b.get('cells')} "
                            f"(model, task) cells: {b.get('stopped') or b.get('why')}."
                            + (f" Still open: {still}." if still else "")))
    benches = a.get("benchmarks") or {}
    cells = [[bench, model, fmt.count(n["min"]), fmt.count(n["median"]), fmt.count(n["max"]),
              fmt.count(n["total"])]
             for bench, b in benches.items() for model, n in b["trials_per_cell"].items()]
    if cells:
        parts.append(_table(["Benchmark", "Model", "Fewest trials of a task", "Median",
                             "Most", "Scored trials"], cells, text_cols=2,
                            caption="Scored trials per (model, task)"))
    pairs = [[bench, pair.replace("|", " vs "), fmt.count(n)]
             for bench, b in benches.items() for pair, n in (b.get("trials_per_pair")
                                                               or {}).items()]
    if pairs:
        parts.append(_table(["Benchmark", "Neighbours", "Trials charged"], pairs, text_cols=2,
                            caption="Trials added to tell neighbours apart"))
    parts += [_note(f"{bench}: {b['pass_k']}.") for bench, b in benches.items()
              if b.get("pass_k")]
    if a.get("interval"):
        parts.append(_note(a["interval"][0].upper() + a["interval"][1:] + "."))
    return "".join(parts)


def _metrics(report: dict) -> str:
    """Per benchmark: the headline judgment's detail rates (T1's tool / parameter / output
    metrics) and every other judge's mean score, as percentages under human names."""
    parts = []
    for b, bs in (report.get("benchmarks") or {}).items():
        models = bs["models"]
        src = bs["source"]
        keys = fmt.metric_order({k for s in models.values() for k in (s.get("metrics") or {})})
        own = f"{src.get('judge')}/{src['method']}"
        judges = sorted({n for s in models.values() for n in (s.get("method_scores") or {})
                         if n not in (own, "state/state")})
        if not keys and not judges:
            continue
        head = ["Model", *(fmt.metric_name(k) for k in keys), *(fmt.judge_label(j) for j in judges)]
        rows = [[m, *(fmt.pct((models[m].get("metrics") or {}).get(k)) for k in keys),
                 *(fmt.pct((models[m].get("method_scores") or {}).get(j)) for j in judges)]
                for m in fmt.by_score(models)]
        parts.append(f"<h3>{escape(b)}</h3>")
        parts.append(_split_table(head, rows))
    if not parts:
        return _note("No judgment metrics or other judges in this selection.")
    return (_p("Means over the episodes that have them; metrics come from the headline "
               "judgment's details, judges' scores from each judge.") + "".join(parts))


def _domains(report: dict, figs: dict[str, str]) -> str:
    parts = []
    for b, bs in (report.get("benchmarks") or {}).items():
        models = bs["models"]
        domains = sorted({d for s in models.values() for d in s.get("domains") or {}},
                         key=lambda d: (d.count(","), d))
        if not domains:
            continue
        parts.append(f"<h3>{escape(b)}</h3>")
        parts.append(figs.get(f"domains:{b}") or _note(
            f"{b} per domain: no tokens or turns recorded, no plot."))
        names = fmt.by_score(models)
        k = _k(models)
        hat = k != "1"  # with one trial Pass^1 is Avg@1
        sub = [f"Avg@{k}", "95% CI (task population)", *([f"Pass^{k}"] if hat else [])]
        for lo in range(0, len(names), _MODELS_PER_TABLE):
            chunk = names[lo:lo + _MODELS_PER_TABLE]
            rows = []
            for d in domains:
                cells = [(models[m].get("domains") or {}).get(d) for m in chunk]
                tasks = max((c["tasks"] for c in cells if c), default=0)
                row: list[Any] = [_domain(d), fmt.count(tasks)]
                for c in cells:
                    row += ([fmt.pct(c["avg"]), fmt.ci(c.get("ci95")),
                             *([fmt.pct(c["pass_hat_k"])] if hat else [])]
                            if c else [fmt.DASH] * (2 + hat))
                rows.append(row)
            parts.append(_grouped_table(["Domain", "Tasks"], chunk, sub, rows))
    return "".join(parts) or _note("No per-domain results in this selection.")


def _cost(report: dict, figs: dict[str, str]) -> str:
    cost = report.get("cost") or {}
    rows = fmt.cost_rows(report)
    head = _p(f"Total {fmt.usd(cost.get('total'))}: agent {fmt.usd(cost.get('agent'))}, user "
              f"simulator {fmt.usd(cost.get('user'))}, judge {fmt.usd(cost.get('judge'))}; "
              f"{cost.get('unpriced_calls', 0):,} of {cost.get('calls', 0):,} model calls "
              "without a stored price (not in the cost).")
    fig = figs.get("cost_vs_score") or _note("Cost against score: no priced calls in this "
                                             "selection.")
    return head + _table(["Model", "Benchmark", "Agent", "User simulator", "Judge", "Total",
                          "$ / episode", "$ / pass"], rows, text_cols=2) + fig


def _profiles(report: dict, figs: dict[str, str]) -> str:
    tok_head = ["Model", "Episodes", "Turns", "Tool calls", "Agent prompt tokens",
                "of them cached", "Agent completion tokens", "User prompt tokens",
                "User completion tokens"]
    time_head = ["Model", "Agent call p50", "p95", "p99", "User call p50", "p95", "p99",
                 "Retries", "HTTP 429", "Hung", "Hedged", "Wall time / episode"]
    tok_rows, time_rows = [], []
    for m in fmt.by_score(report["models"]):
        p = report["models"][m].get("profile")
        if not p:
            continue
        at, ut = p.get("agent_tokens") or {}, p.get("user_tokens") or {}
        lat = p.get("latency_s") or {}
        tok_rows.append([m, fmt.count(p["episodes"]),
                         fmt.num((p.get("turns") or {}).get("mean")),
                         fmt.num((p.get("tool_calls") or {}).get("mean")),
                         fmt.tokens(at.get("prompt")), fmt.tokens(at.get("cached_prompt")),
                         fmt.tokens(at.get("completion")), fmt.tokens(ut.get("prompt")),
                         fmt.tokens(ut.get("completion"))])
        time_rows.append([m, *(fmt.seconds((lat.get(role) or {}).get(q))
                               for role in ("agent", "user") for q in ("p50", "p95", "p99")),
                          fmt.count(p.get("retries")), fmt.count(p.get("rate_limited")),
                          *(fmt.count((p.get("stalls") or {}).get(k)) for k in ("hung", "hedged")),
                          fmt.seconds((p.get("wall_s") or {}).get("mean"))])
    if not tok_rows:
        return _note("No profile in this report.")
    lat_fig = figs.get("latency") or _note("Latency distribution: no latency recorded.")
    return (_p("Per episode (means over the model's episodes); latency of one model call.")
            + _table(tok_head, tok_rows) + _table(time_head, time_rows) + _stalls(report)
            + lat_fig)


def _stalls(report: dict) -> str:
    """Hung (abandoned) and hedged requests per endpoint, judges included."""
    by = report.get("stalls_by_endpoint") or {}
    if not by:
        return ""
    rows = [[name, fmt.count(e["calls"]), fmt.count(e["hung"]), fmt.count(e["hedged"]),
             fmt.count(e["hedge_wins"])] for name, e in by.items()]
    return (_p("Requests abandoned for want of a first byte (hung) and hedge copies sent, "
               "per endpoint:")
            + _table(["Endpoint", "Calls", "Hung (abandoned)", "Hedged", "Won by a copy"],
                     rows))


def _errors(report: dict) -> str:
    reasons = report.get("error_reasons") or []
    parts = []
    if reasons:
        parts.append(_p("Episodes that ended in error count as failures. Grouped by reason "
                        "(numbers and ids masked); one example each."))
        parts.append(_table(
            ["Benchmark", "Reason", "By model", "Example episode", "Episodes"],
            [[r["benchmark"], r["reason"],
              "; ".join(f"{m}: {n}" for m, n in r["models"].items()), r["example_episode"],
              fmt.count(r["episodes"])] for r in reasons], text_cols=4))
    else:
        parts.append(_note("No episode ended in error."))
    ends = report.get("terminations") or {}
    for b, models in ends.items():
        reasons_seen = sorted({why for c in models.values() for why in c})
        parts.append(f"<h3>How {escape(b)} episodes ended</h3>")
        parts.append(_split_table(["Model", *reasons_seen],
                                  [[m, *(fmt.count(c.get(w, 0)) for w in reasons_seen)]
                                   for m, c in models.items()]))
    return "".join(parts)


def _unreachable(report: dict) -> str:
    rows = [[u["benchmark"], u["domain"], u["task_id"], u["reason"], fmt.count(u["episodes"])]
            for u in report.get("unreachable") or []]
    if not rows:
        return _note("No unreachable tasks in this selection.")
    return (_p("No agent can pass these tasks (a defect of their data); the 'reachable tasks' "
               "columns leave them out.")
            + _table(["Benchmark", "Domain", "Task", "Reason", "Episodes"], rows, text_cols=4))


def _comparisons(report: dict) -> str:
    rows = [[c["a"], c["b"], fmt.count(c["tasks"]), fmt.pct(c["mean_a"]), fmt.pct(c["mean_b"]),
             f"{100 * c['diff']:+.1f} pts", fmt.ci(c["ci95"]), f"{c['p_value']:.3g}",
             f"{c['p_adjusted']:.3g}", "yes" if c["significant"] else "no"]
            for c in report.get("comparisons") or []]
    if not rows:
        return _note("Fewer than two models with common tasks.")
    fam = report.get("comparisons_family") or {}
    name = {"holm": "Holm", "bh": "Benjamini-Hochberg"}.get(fam.get("correction"),
                                                           str(fam.get("correction")))
    return _p(f"Pooled leaderboard. Family: {fam.get('scope')}, {fam.get('pairs')} pairs of "
              f"{fam.get('models')} models; p adjusted over the family ({name}); significant "
              f"at adjusted p ≤ {fam.get('alpha')}. Per-task pass rates on common tasks.") + \
        _table(["Model A", "Model B", "Common tasks", "A pass rate", "B pass rate", "A − B",
                "95% CI (pts)", "p (raw)", f"p ({name})", "Significant"], rows, text_cols=2)


def _agreement(report: dict) -> str:
    rows = [[fmt.judge_label(a["a"]), fmt.judge_label(a["b"]), fmt.count(a["episodes"]),
             fmt.pct(a["pass_agreement"]), fmt.num(a["pass_kappa"]), fmt.count(a["rubric_items"]),
             fmt.pct(a["rubric_agreement"]), fmt.num(a["rubric_kappa"])]
            for a in report.get("judge_agreement") or []]
    if not rows:
        return _note("One judge only: no agreement to measure.")
    return _table(["Judge A", "Judge B", "Episodes", "Pass agreement", "Pass κ", "Rubric items",
                   "Rubric agreement", "Rubric κ"], rows, text_cols=2)


def _value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return ", ".join(_value(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={_value(x)}" for k, x in v.items())
    return str(v)


_ENDPOINT_COLUMNS = [("name", "Endpoint"), ("base_url", "Base URL"), ("model", "Model sent"),
                     ("api_key_env", "Key variable"), ("temperature", "Temperature"),
                     ("max_tokens", "Max tokens"), ("extra_body", "Extra body"),
                     ("max_concurrency", "Concurrency"), ("rpm", "RPM"), ("tpm", "TPM"),
                     ("max_retries", "Retries")]


def _configuration(report: dict) -> str:
    conf = report.get("configuration") or {}
    parts = [_p(f"Report made by sweepbench {conf.get('report_sweepbench', 'unknown')}. Keys "
                "are never stored: endpoints name the variable that holds theirs.")]
    for run in conf.get("runs") or []:
        parts.append(f"<h3>Run {escape(run['run_id'])}</h3>")
        facts = [("Status", run.get("status")), ("Command", run.get("command")),
                 ("Started", run.get("created_at")), ("Finished", run.get("finished_at")),
                 ("sweepbench", run.get("sweepbench") or "not recorded (older run)"),
                 *((f"Headline of {b}", h) for b, h in (run.get("headlines") or {}).items()),
                 *((k, v) for k, v in (run.get("settings") or {}).items())]
        parts.append(_table(["Setting", "Value"],
                            [[k, _value(v)] for k, v in facts if v is not None], text_cols=2))
        eps = run.get("endpoints") or []
        if eps:
            cols = [(k, h) for k, h in _ENDPOINT_COLUMNS if any(k in e for e in eps)]
            parts.append(_table([h for _, h in cols],
                                [[_value(e.get(k, fmt.DASH)) for k, _ in cols] for e in eps],
                                text_cols=len(cols), caption="Endpoints"))
        prices = run.get("prices") or {}
        if prices:
            parts.append(_table(
                ["Endpoint", "Input $/Mtok", "Cached input $/Mtok", "Output $/Mtok"],
                [[n, *(fmt.price(p.get(x)) for x in ("input", "cached_input", "output"))]
                 for n, p in sorted(prices.items()) if isinstance(p, dict)],
                caption="Prices stored with the run"))
    return "".join(parts)


_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; background: #fff;
       max-width: 1352px; }
h2 { margin-top: 36px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0 20px; max-width: 100%; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; }
th { background: #f3f3f3; font-weight: 600; overflow-wrap: normal; }
td:first-child { min-width: 9em; }
.n { text-align: right; white-space: nowrap; overflow-wrap: normal; }
th.n { white-space: normal; overflow-wrap: normal; }
th.g { text-align: center; overflow-wrap: anywhere; }
figure { margin: 8px 0 20px; }
img.plot { display: block; max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #555; font-size: 13px; }
.note { color: #777; }
nav a { margin-right: 12px; }
"""

_SECTIONS = [("leaderboard", "Leaderboard"), ("metrics", "Metrics and other judges"),
             ("curves", "Pass@k and Pass^k"), ("domains", "Per domain"), ("cost", "Cost"),
             ("profile", "Tokens, turns, latency"), ("errors", "Errors and terminations"),
             ("unreachable", "Unreachable tasks"), ("comparisons", "Paired comparisons"),
             ("agreement", "Judge agreement"), ("configuration", "Configuration")]


def _figures(report: dict) -> dict[str, str]:
    out = {}
    captions = dict(figure_specs(report))
    for name, b64 in plots(report).items():
        if b64 is None:
            continue
        w, h = _png_size(base64.b64decode(b64[:64]))
        out[name] = (f'<figure><img class="plot" id="plot-{escape(name.replace(":", "-"))}" '
                     f'alt="{escape(captions[name])}" width="{w}" height="{h}" '
                     f'src="data:image/png;base64,{b64}"><figcaption>'
                     f"{escape(captions[name])}</figcaption></figure>")
    return out


def _png_size(head: bytes) -> tuple[int, int]:
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def render_html(report: dict, *, title: str | None = None) -> str:
    """The page as a string."""
    title = title or f"sweepbench report ({', '.join(report.get('stores') or []) or report['run_id']})"
    figs = _figures(report)
    curves = "".join(figs.get(n, "") for n in ("pass_curves", "mse_vs_k")) or _note(
        "Pass@k and Pass^k curves need more than one trial per task.")
    body = {
        "leaderboard": _leaderboard(report, figs) + _adaptive(report),
        "metrics": _metrics(report),
        "curves": curves, "domains": _domains(report, figs), "cost": _cost(report, figs),
        "profile": _profiles(report, figs), "errors": _errors(report),
        "unreachable": _unreachable(report), "comparisons": _comparisons(report),
        "agreement": _agreement(report), "configuration": _configuration(report),
    }
    nav = "".join(f'<a href="#{k}">{escape(v)}</a>' for k, v in _SECTIONS)
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<nav>{nav}</nav>",
        _p(f"Status: {report.get('status')}. Each benchmark is scored by its headline (its "
           "paper's metric). Errors count as failures; unjudged and unfinished episodes are "
           "not scored (counted). Avg@k is the mean over tasks of per-task pass rates; one k per "
           "leaderboard. 95% CIs: over the task population (other tasks like these) and "
           "over trials on these tasks. Rates are percentages."),
        *(f'<h2 id="{k}">{escape(v)}</h2>{body[k]}' for k, v in _SECTIONS),
        "</body></html>",
    ])


def write_html(report: dict, path: str | Path, *, title: str | None = None) -> Path:
    """Write the page to ``path`` (directories created) through a temporary file renamed into
    place; returns the path."""
    path = Path(path)
    page = render_html(report, title=title)
    replace_text(path, lambda f: f.write(page))
    return path
