"""One self-contained HTML page of a report: the tables and plots, nothing fetched.

A pure function of the report JSON (``report.build_report``): the same report gives the same
page. Plots are drawn with matplotlib's Agg backend and embedded as base64 PNGs of a fixed
pixel size (``FIG_PX``); a plot whose data the report lacks (no trials > 1, no profile, no
latency events) is left out with a one-line note, never drawn empty. Every string from the
store (model, domain, judge names) is HTML-escaped.

Plots: Pass@k and Pass^k over k; MSE of the k-run Avg vs k; performance vs average turns;
agent tokens per episode by domain; the latency distribution of agent model calls.
"""

from __future__ import annotations

import base64
import io
from html import escape
from pathlib import Path
from typing import Any, Callable

__all__ = ["FIG_PX", "plots", "render_html", "write_html"]

FIG_PX = (720, 400)
_DPI = 100


def _pyplot():
    try:
        import matplotlib
    except ImportError as e:  # a clear hint rather than a bare ImportError deep in a report
        raise RuntimeError("the HTML report needs matplotlib: pip install matplotlib") from e
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(draw: Callable[[Any], None]) -> str:
    plt = _pyplot()
    fig = plt.figure(figsize=(FIG_PX[0] / _DPI, FIG_PX[1] / _DPI), dpi=_DPI)
    try:
        ax = fig.add_subplot()
        draw(ax)
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=_DPI)  # no bbox_inches: the size stays FIG_PX
    finally:
        plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _integer_x(ax: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _t(text: str) -> str:
    """Plot text from the store, literal: matplotlib would read "$...$" as math."""
    return text.replace("$", r"\$")


def _scored(report: dict) -> dict[str, dict]:
    return {m: s for m, s in report["models"].items() if s.get("episodes")}


def _plot_pass_curves(report: dict) -> Callable | None:
    models = {m: s for m, s in _scored(report).items() if s.get("pass_at_k_curve")}
    if not models:
        return None

    def draw(ax):
        for i, (m, s) in enumerate(models.items()):
            ks = range(1, len(s["pass_at_k_curve"]) + 1)
            color = f"C{i % 10}"
            ax.plot(ks, s["pass_at_k_curve"], "-o", color=color, ms=3, label=_t(f"{m} Pass@k"))
            ax.plot(ks, s["pass_hat_k_curve"], "--s", color=color, ms=3, label=_t(f"{m} Pass^k"))
        ax.set(xlabel="k", ylabel="rate", ylim=(-0.02, 1.02), title="Pass@k and Pass^k over k")
        _integer_x(ax)
        ax.legend(fontsize=7, ncol=2)

    return draw


def _plot_mse(report: dict) -> Callable | None:
    models = {m: s for m, s in _scored(report).items() if s.get("mse_vs_k")}
    if not models:
        return None

    def draw(ax):
        for i, (m, s) in enumerate(models.items()):
            ks = range(1, len(s["mse_vs_k"]) + 1)
            ax.plot(ks, s["mse_vs_k"], "-o", color=f"C{i % 10}", ms=3, label=_t(m))
        ax.set(xlabel="k (runs averaged)", ylabel="MSE vs all-trial Avg",
               title="MSE of the k-run Avg vs k")
        _integer_x(ax)
        ax.legend(fontsize=8)

    return draw


def _mean_turns(s: dict) -> float | None:
    turns = (s.get("profile") or {}).get("turns")
    return None if not turns else turns["mean"]


def _plot_turns(report: dict) -> Callable | None:
    models = {m: s for m, s in _scored(report).items() if _mean_turns(s) is not None}
    if not models:
        return None

    def draw(ax):
        for i, (m, s) in enumerate(models.items()):
            color = f"C{i % 10}"
            ax.scatter([_mean_turns(s)], [s["avg"]], s=60, color=color, label=_t(m), zorder=3)
            for d, ds in s.get("domains", {}).items():
                t = _mean_turns(ds)
                if t is not None:
                    ax.scatter([t], [ds["avg"]], s=18, color=color, marker="x")
                    ax.annotate(_t(d), (t, ds["avg"]), fontsize=7, xytext=(3, 3),
                                textcoords="offset points")
        ax.set(xlabel="average turns per episode", ylabel="Avg@k", ylim=(-0.02, 1.02),
               title="Performance vs average turns (x: per domain)")
        ax.legend(fontsize=8)

    return draw


def _plot_tokens(report: dict) -> Callable | None:
    models = _scored(report)
    domains = sorted({d for s in models.values() for d, ds in s.get("domains", {}).items()
                      if (ds.get("profile") or {}).get("agent_tokens")})
    if not domains:
        return None

    def draw(ax):
        width = 0.8 / max(1, len(models))
        for i, (m, s) in enumerate(models.items()):
            prompt, completion = [], []
            for d in domains:
                tok = ((s.get("domains", {}).get(d) or {}).get("profile") or {}).get(
                    "agent_tokens") or {}
                prompt.append(tok.get("prompt", 0.0))
                completion.append(tok.get("completion", 0.0))
            xs = [j + i * width for j in range(len(domains))]
            ax.bar(xs, prompt, width, color=f"C{i % 10}", label=_t(f"{m} prompt"))
            ax.bar(xs, completion, width, bottom=prompt, color=f"C{i % 10}", alpha=0.5,
                   hatch="//", label=_t(f"{m} completion"))
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(domains))], [_t(d) for d in domains])
        ax.set(ylabel="agent tokens per episode", title="Agent tokens per domain")
        ax.set_ylim(top=ax.get_ylim()[1] * 1.25)  # headroom for the legend
        ax.legend(fontsize=7, ncol=2, loc="upper center")

    return draw


def _plot_latency(report: dict) -> Callable | None:
    models = {m: s["profile"]["agent_latency_hist"] for m, s in _scored(report).items()
              if (s.get("profile") or {}).get("agent_latency_hist")}
    if not models:
        return None

    def draw(ax):
        for i, (m, h) in enumerate(models.items()):
            ax.stairs(h["counts"], h["edges"], color=f"C{i % 10}", label=_t(m), linewidth=1.5)
        ax.set_xscale("log")
        ax.set(xlabel="latency of one agent model call (s)", ylabel="calls",
               title="Agent model-call latency")
        ax.legend(fontsize=8)

    return draw


_PLOTS: list[tuple[str, str, Callable[[dict], Callable | None]]] = [
    ("pass_curves", "Pass@k vs Pass^k", _plot_pass_curves),
    ("mse_vs_k", "MSE vs k", _plot_mse),
    ("turns", "Performance vs turns", _plot_turns),
    ("tokens", "Tokens per domain", _plot_tokens),
    ("latency", "Latency distribution", _plot_latency),
]


def plots(report: dict) -> dict[str, str | None]:
    """name -> base64 PNG (None when the report has no data for it)."""
    out: dict[str, str | None] = {}
    for name, _, make in _PLOTS:
        draw = make(report)
        out[name] = None if draw is None else _png(draw)
    return out


# ---- tables -------------------------------------------------------------------------------


def _pct(x: Any) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _ci(ci: Any) -> str:
    return "—" if not ci else f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f}"


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "—"
    if isinstance(x, int) or abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _order(report: dict) -> list[str]:
    models = report["models"]
    return sorted(models, key=lambda m: (-(models[m]["avg"] or 0.0), m))


def _usd(x: Any) -> str:
    return "—" if x is None else f"${x:,.4f}"


def _board(models: dict, keys: list[str], scores: list[str]) -> str:
    head = ["Model", "Tasks", "k", "Avg@k", "95% CI", "Pass@k", "Pass^k", "Score", "State",
            "Avg@k reachable", "Errors", "Unjudged", "Unfinished", "Not applicable", "$ total",
            "$/pass", *keys, *scores]
    rows = []
    for m in sorted(models, key=lambda m: (-(models[m]["avg"] or 0.0), m)):
        s = models[m]
        reach = s.get("without_unreachable") or {}
        cost = s.get("cost") or {}
        rows.append([m, str(s["tasks"]), _num(s["k"]), _pct(s["avg"]), _ci(s.get("ci95")),
                     _pct(s["pass_at_k"]), _pct(s["pass_hat_k"]), _pct(s.get("score")),
                     _pct(s.get("state")), _pct(reach.get("avg", s["avg"])),
                     str(s["errors"]), str(s.get("unjudged", 0)), str(s.get("unfinished", 0)),
                     str(s.get("not_applicable", 0)), _usd(cost.get("total")),
                     _usd(cost.get("per_pass")),
                     *(_num((s.get("metrics") or {}).get(key)) for key in keys),
                     *(_num((s.get("method_scores") or {}).get(key)) for key in scores)])
    return _table(head, rows)


def _leaderboard(report: dict) -> str:
    """One leaderboard per benchmark, titled with its source; the pooled one when several."""
    keys = report.get("metric_keys") or []
    scores = report.get("method_score_keys") or []
    benches = report.get("benchmarks") or {}
    parts = []
    for name, b in benches.items():
        src = b["source"]
        where = ("the state check" if src["method"] == "state" else
                 f"{src.get('judge') or 'no judge yet'} / {src['method']}")
        note = "" if src.get("applicable", True) else (
            f" {src['method']} does not apply: its episodes are not applicable (excluded).")
        parts.append(f"<h3>{escape(name)}</h3><p>Pass from {escape(src['label'])} "
                     f"({escape(where)}).{escape(note)}</p>")
        parts.append(_board(b["models"], keys, scores))
    if len(benches) > 1:
        parts.append(f"<h3>Overall</h3><p>{escape(report['overall']['label'])}.</p>")
        parts.append(_board(report["models"], keys, scores))
    return "".join(parts) if parts else _board(report["models"], keys, scores)


def _cost(report: dict) -> str:
    cost = report.get("cost") or {}
    rows = []
    for b, bs in (report.get("benchmarks") or {}).items():
        for m, s in bs["models"].items():
            c = s.get("cost")
            if c:
                rows.append([m, b, *(_usd(c.get(x)) for x in ("agent", "user", "judge", "total",
                                                              "per_episode", "per_pass"))])
    head = (f"<p>Total {_usd(cost.get('total'))}: agent {_usd(cost.get('agent'))}, user "
            f"simulator {_usd(cost.get('user'))}, judge {_usd(cost.get('judge'))}; "
            f"{cost.get('unpriced_calls', 0)} of {cost.get('calls', 0)} calls unpriced "
            "(prices stored with each run).</p>")
    return head + _table(["Model", "Benchmark", "Agent", "User", "Judge", "Total", "$/episode",
                          "$/pass"], rows)


def _unreachable(report: dict) -> str:
    rows = [[u["benchmark"], u["domain"], u["task_id"], str(u["episodes"]), u["reason"]]
            for u in report.get("unreachable") or []]
    if not rows:
        return "<p class=note>No unreachable tasks in this selection.</p>"
    return ("<p>No agent can pass these tasks (a defect of their data); the 'reachable' "
            "column leaves them out.</p>"
            + _table(["Benchmark", "Domain", "Task", "Episodes", "Reason"], rows))


def _domains(report: dict) -> str:
    head = ["Model", "Benchmark", "Domain", "Tasks", "Avg@k", "95% CI", "Pass@k", "Pass^k",
            "Score", "Errors"]
    rows = []
    for m in _order(report):
        for bench, b in report["models"][m].get("benchmarks", {}).items():
            for d, s in b.get("domains", {}).items():
                rows.append([m, bench, d, str(s["tasks"]), _pct(s["avg"]), _ci(s.get("ci95")),
                             _pct(s["pass_at_k"]), _pct(s["pass_hat_k"]), _pct(s.get("score")),
                             str(s["errors"])])
    return _table(head, rows)


def _profile_rows(name: str, domain: str, p: dict) -> list[str]:
    at, ut = p.get("agent_tokens") or {}, p.get("user_tokens") or {}
    lat = (p.get("latency_s") or {}).get("agent") or {}
    cost = p.get("cost") or {}
    return [name, domain, str(p["episodes"]), _num((p.get("turns") or {}).get("mean")),
            _num(at.get("prompt")), _num(at.get("cached_prompt")), _num(at.get("completion")),
            _num(ut.get("prompt")), _num(ut.get("completion")),
            "—" if not cost or cost.get("per_episode") is None else f"{cost['per_episode']:.4f}",
            _num(lat.get("p50")), _num(lat.get("p95")), _num(lat.get("p99")),
            _num(p.get("retries")), _num(p.get("rate_limited")),
            _num((p.get("wall_s") or {}).get("mean"))]


def _profiles(report: dict) -> str:
    head = ["Model", "Domain", "Episodes", "Turns", "Agent prompt", "Agent cached",
            "Agent completion", "User prompt", "User completion", "$/episode", "Latency p50 s",
            "p95 s", "p99 s", "Retries", "429s", "Wall s"]
    rows = []
    for m in _order(report):
        s = report["models"][m]
        if s.get("profile"):
            rows.append(_profile_rows(m, "all", {**s["profile"], "cost": s.get("cost")}))
        for d, ds in s.get("domains", {}).items():
            if ds.get("profile"):
                rows.append(_profile_rows(m, d, ds["profile"]))
    return _table(head, rows) if rows else "<p class=note>No profile in this report.</p>"


def _comparisons(report: dict) -> str:
    rows = [[c["a"], c["b"], str(c["tasks"]), _pct(c["mean_a"]), _pct(c["mean_b"]),
             f"{100 * c['diff']:+.1f} pts", _ci(c["ci95"]), f"{c['p_value']:.3g}"]
            for c in report.get("comparisons") or []]
    if not rows:
        return "<p class=note>Fewer than two models with common tasks.</p>"
    return _table(["Model A", "Model B", "Common tasks", "A pass rate", "B pass rate", "A − B",
                   "95% CI (pts)", "p"], rows)


def _agreement(report: dict) -> str:
    rows = [[a["a"], a["b"], str(a["episodes"]), _pct(a["pass_agreement"]),
             _num(a["pass_kappa"]), str(a["rubric_items"]), _pct(a["rubric_agreement"]),
             _num(a["rubric_kappa"])] for a in report.get("judge_agreement") or []]
    if not rows:
        return "<p class=note>One judge run only: no agreement to measure.</p>"
    return _table(["Judge A", "Judge B", "Episodes", "Pass agree", "Pass κ", "Rubric items",
                   "Rubric agree", "Rubric κ"], rows)


_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
table { border-collapse: collapse; margin: 8px 0 20px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
figure { display: inline-block; margin: 8px 16px 16px 0; }
img.plot { display: block; border: 1px solid #ddd; }
.note { color: #777; }
"""


def render_html(report: dict, *, title: str | None = None) -> str:
    """The page as a string."""
    title = title or f"sweepbench report ({', '.join(report.get('stores') or []) or report['run_id']})"
    figs = []
    for (name, label, _), png in zip(_PLOTS, plots(report).values()):
        if png is None:
            figs.append(f"<p class=note>{escape(label)}: no data in this report.</p>")
        else:
            figs.append(
                f'<figure><img class="plot" id="plot-{name}" alt="{escape(label)}" '
                f'width="{FIG_PX[0]}" height="{FIG_PX[1]}" src="data:image/png;base64,{png}">'
                f"<figcaption>{escape(label)}</figcaption></figure>")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>Status: {escape(str(report.get('status')))}. Each benchmark is scored by its "
        "headline (its paper's metric). Errors count as failures; unjudged and unfinished "
        "episodes are not scored (counted). CI: 95% bootstrap over tasks.</p>",
        "<h2>Leaderboard</h2>", _leaderboard(report),
        "<h2>Unreachable tasks</h2>", _unreachable(report),
        "<h2>Cost</h2>", _cost(report),
        "<h2>Plots</h2>", *figs,
        "<h2>Per benchmark and domain</h2>", _domains(report),
        "<h2>Tokens, cost, latency</h2>", _profiles(report),
        "<h2>Paired comparisons (bootstrap over common tasks)</h2>", _comparisons(report),
        "<h2>Judge agreement (Cohen's κ)</h2>", _agreement(report),
        "</body></html>",
    ])


def write_html(report: dict, path: str | Path, *, title: str | None = None) -> Path:
    """Write the page to ``path`` (directories created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(report, title=title), encoding="utf-8")
    return path
