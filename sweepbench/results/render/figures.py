"""The report's plots as matplotlib figures, laid out so that labels never collide.

A pure function of the report JSON (``report.build_report``). Each figure is a
``matplotlib.figure.Figure`` on the Agg canvas (no pyplot, no global state) with constrained
layout: legends sit outside the axes, category axes are horizontal with one row per
category, and a figure grows with its number of categories (T1's 25 splits, long model
names wrapped) instead of squeezing them. ``tests/results/test_html.py`` draws every figure
of a full T1 report and checks that no two tick labels, titles or legends overlap and none
leaves the figure.

Figures (a name -> ``Figure | None``; None when the report has no data for it):
``leaderboard`` (Avg@k with its 95% CI per benchmark, Pass@k / Pass^k marks when k > 1),
``pass_curves`` (Pass@k and Pass^k over k), ``mse_vs_k``, ``cost_vs_score`` ($ per episode
against Avg@k), ``domains:<benchmark>`` (Avg@k, agent prompt and completion tokens and turns
per episode, per domain), ``latency`` (agent model-call latency distribution).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

from sweepbench.results.fmt import domain_short, seconds, tokens, wrap_label
from sweepbench.results.text import visible

__all__ = ["DPI", "WIDTH_PX", "figure_specs", "figures"]

WIDTH_PX = 1100
DPI = 100
_W = WIDTH_PX / DPI
_FONT = 9
_LINE_IN = 1.25 * _FONT / 72  # one line of tick-label text, inches


def _mpl():
    try:
        import matplotlib
    except ImportError as e:  # a clear hint rather than a bare ImportError deep in a report
        raise RuntimeError("the HTML report needs matplotlib: pip install matplotlib") from e
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    matplotlib.rcParams.update({"font.size": _FONT, "axes.titlesize": _FONT + 1,
                                "figure.titlesize": _FONT + 2, "legend.fontsize": _FONT})
    return Figure, FigureCanvasAgg


def _new(height_in: float, *, width_in: float = _W) -> Any:
    Figure, Canvas = _mpl()
    fig = Figure(figsize=(width_in, max(2.2, height_in)), dpi=DPI, layout="constrained")
    Canvas(fig)
    return fig


def _t(text: Any) -> str:
    """Store text, literal in a plot: "$" would start math, a leading "_" hides a legend
    entry."""
    s = visible(text).replace("$", r"\$")  # control characters shown, not drawn as boxes
    return " " + s if s.startswith("_") else s


def _color(i: int) -> str:
    return f"C{i % 10}"


def _entries(report: dict, bench: str | None) -> dict[str, dict]:
    models = report["models"] if bench is None else report["benchmarks"][bench]["models"]
    return {m: s for m, s in models.items() if s.get("episodes")}


def _model_colors(report: dict) -> dict[str, str]:
    names = sorted({m for b in (report.get("benchmarks") or {}).values() for m in b["models"]}
                   | set(report.get("models") or {}))
    return {m: _color(i) for i, m in enumerate(names)}


def _legend(fig: Any, handles: list, labels: list[str]) -> None:
    """A legend below the axes, as many columns as fit the width."""
    if not handles:
        return
    longest = max(len(lb) for lb in labels)
    ncol = max(1, min(len(labels), int(_W * 72 / (_FONT * 0.62 * longest + 40))))
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, frameon=False)


def _pct_axis(axis: Any) -> None:
    from matplotlib.ticker import PercentFormatter

    axis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))


def _style(ax: Any) -> None:
    ax.grid(True, alpha=0.3)
    ax.set_axisbelow(True)


# ---- leaderboard ----------------------------------------------------------------------------


def _leaderboard(report: dict, colors: dict[str, str]) -> Any | None:
    benches = [b for b in report.get("benchmarks") or {} if _entries(report, b)]
    if not benches:
        return None
    rows = {b: sorted(_entries(report, b).items(),
                      key=lambda kv: (kv[1]["avg"] is None, -(kv[1]["avg"] or 0.0), kv[0]))
            for b in benches}
    heights = [max(1.0, sum(_lines(m, 34) for m, _ in rows[b]) * _LINE_IN + 0.25 * len(rows[b]))
               for b in benches]
    fig = _new(sum(heights) + 0.9 * len(benches) + 0.6)
    axes = fig.subplots(len(benches), 1, squeeze=False,
                        gridspec_kw={"height_ratios": heights})[:, 0]
    marks = False
    for ax, b in zip(axes, benches):
        src = report["benchmarks"][b]["source"]
        k = {s["k"] for _, s in rows[b] if s["k"]}
        ys = list(range(len(rows[b])))[::-1]
        for y, (m, s) in zip(ys, rows[b]):
            if s["avg"] is None:
                continue
            lo, hi = s.get("ci95") or (s["avg"], s["avg"])
            ax.barh(y, s["avg"], height=0.6, color=colors[m], alpha=0.85)
            ax.errorbar(s["avg"], y, xerr=[[s["avg"] - lo], [hi - s["avg"]]], fmt="none",
                        ecolor="black", capsize=3, lw=1)
            if (s["k"] or 1) > 1 and s["pass_at_k"] is not None:  # incomplete rows: none
                marks = True
                ax.plot(s["pass_at_k"], y, marker="^", color="black", ms=5, ls="none")
                ax.plot(s["pass_hat_k"], y, marker="v", color="dimgray", ms=5, ls="none")
        ax.set_yticks(ys, [wrap_label(_t(m), 34) for m, _ in rows[b]])
        ax.set_xlim(0, 1.02)
        _pct_axis(ax.xaxis)
        k_text = f"Avg@{k.pop()}" if len(k) == 1 else "Avg@k"
        ax.set_title(_t(f"{b}: {k_text} with 95% CI (pass from {src['label']})"), loc="left",
                     wrap=True)
        _style(ax)
    if marks:
        from matplotlib.lines import Line2D

        _legend(fig, [Line2D([], [], marker="^", color="black", ls="none"),
                      Line2D([], [], marker="v", color="dimgray", ls="none")],
                ["Pass@k", "Pass^k"])
    return fig


def _lines(text: str, width: int) -> int:
    return wrap_label(text, width).count("\n") + 1


# ---- curves over k --------------------------------------------------------------------------


def _grid(n: int, row_h: float) -> tuple[Any, list]:
    cols = min(2, n)
    rows = math.ceil(n / cols)
    fig = _new(rows * row_h + 0.9)
    axes = fig.subplots(rows, cols, squeeze=False).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def _integer_x(ax: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _curves(report: dict, colors: dict[str, str], field: str, title: str, ylabel: str,
            draw: Callable[[Any, list, str, str, str], None]) -> Any | None:
    benches = [b for b in report.get("benchmarks") or {}
               if any(len(s.get(field) or []) > 1 for s in _entries(report, b).values())]
    if not benches:
        return None
    fig, axes = _grid(len(benches), 3.0)
    seen: dict[str, Any] = {}
    for ax, b in zip(axes, benches):
        for m, s in _entries(report, b).items():
            if len(s.get(field) or []) > 1:
                draw(ax, s, m, colors[m], field)
                seen[m] = colors[m]
        ax.set(xlabel="k", ylabel=ylabel)
        ax.set_title(_t(f"{b}: {title}"), loc="left")
        _integer_x(ax)
        _style(ax)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=c, lw=2) for c in seen.values()]
    labels = [_t(m) for m in seen]
    if field == "pass_at_k_curve":
        handles += [Line2D([], [], color="gray", ls="-"), Line2D([], [], color="gray", ls="--")]
        labels += ["Pass@k (solid)", "Pass^k (dashed)"]
    _legend(fig, handles, labels)
    return fig


def _draw_pass(ax: Any, s: dict, m: str, color: str, field: str) -> None:
    ks = range(1, len(s["pass_at_k_curve"]) + 1)
    ax.plot(ks, s["pass_at_k_curve"], "-o", color=color, ms=3)
    ax.plot(ks, s["pass_hat_k_curve"], "--s", color=color, ms=3)
    ax.set_ylim(-0.02, 1.02)
    _pct_axis(ax.yaxis)


def _draw_mse(ax: Any, s: dict, m: str, color: str, field: str) -> None:
    ax.plot(range(1, len(s[field]) + 1), s[field], "-o", color=color, ms=3)


# ---- cost vs score --------------------------------------------------------------------------


def _cost_vs_score(report: dict, colors: dict[str, str]) -> Any | None:
    points = [(b, m, s) for b in report.get("benchmarks") or {}
              for m, s in _entries(report, b).items()
              if s["avg"] is not None and ((s.get("cost") or {}).get("per_episode") or 0) > 0]
    if not points:
        return None
    fig = _new(4.2)
    ax = fig.subplots()
    shapes = {b: "osD^vP*X"[i % 8] for i, b in enumerate(sorted({b for b, _, _ in points}))}
    for b, m, s in points:
        lo, hi = s.get("ci95") or (s["avg"], s["avg"])
        ax.errorbar(s["cost"]["per_episode"], s["avg"], yerr=[[s["avg"] - lo], [hi - s["avg"]]],
                    fmt=shapes[b], color=colors[m], ms=7, capsize=3)
    xs = [s["cost"]["per_episode"] for _, _, s in points]
    if max(xs) / min(xs) > 30:
        ax.set_xscale("log")
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"${v:.3g}"))
    ax.margins(x=0.1)
    ax.set(xlabel="dollars per episode (agent + user simulator + judge, stored prices)",
           ylabel="Avg@k", ylim=(-0.03, 1.05))
    _pct_axis(ax.yaxis)
    ax.set_title("Cost against score (bars: 95% CI)", loc="left")
    _style(ax)
    from matplotlib.lines import Line2D

    models = sorted({m for _, m, _ in points})
    handles = [Line2D([], [], color=colors[m], marker="o", ls="none") for m in models]
    labels = [_t(m) for m in models]
    if len(shapes) > 1:
        handles += [Line2D([], [], color="gray", marker=mk, ls="none") for mk in shapes.values()]
        labels += [_t(b) for b in shapes]
    _legend(fig, handles, labels)
    return fig


# ---- per domain -----------------------------------------------------------------------------

_PANELS = [("Avg@k", lambda d: d.get("avg")),
           ("agent prompt tokens / episode", lambda d: _tok(d, "prompt")),
           ("agent completion tokens / episode", lambda d: _tok(d, "completion")),
           ("turns / episode", lambda d: ((d.get("profile") or {}).get("turns") or {}).get("mean"))]


def _tok(d: dict, kind: str) -> float | None:
    return ((d.get("profile") or {}).get("agent_tokens") or {}).get(kind)


def _domain_labels(domains: list[str]) -> list[str]:
    """Short, wrapped labels; a composition shortened to the same text as another keeps its
    full name (wrapped)."""
    short = [domain_short(d) for d in domains]
    clash = {s for s in short if short.count(s) > 1}
    return [wrap_label(_t(d if s in clash else s), 26) for d, s in zip(domains, short)]


def _domains(report: dict, bench: str, colors: dict[str, str]) -> Any | None:
    models = {m: s for m, s in _entries(report, bench).items() if s.get("domains")}
    domains = sorted({d for s in models.values() for d in s["domains"]},
                     key=lambda d: (d.count(","), d))  # single domains first
    if not domains or not any((s["domains"].get(d) or {}).get("profile")
                              for s in models.values() for d in domains):
        return None
    labels = _domain_labels(domains)
    n = len(models)
    band = [max(lb.count("\n") + 1, 1) * _LINE_IN + 0.06 for lb in labels]
    band = [max(h, 0.16 * n + 0.08) for h in band]
    fig = _new(sum(band) + 1.3 + 0.25 * math.ceil(n / 4))
    axes = fig.subplots(1, len(_PANELS), sharey=True)
    centers, y = [], 0.0
    for h in reversed(band):  # the first domain on top
        centers.append(y + h / 2)
        y += h
    centers = centers[::-1]
    bar = min(b for b in band) * 0.8 / n
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    for ax, (title, value) in zip(axes, _PANELS):
        for i, (m, s) in enumerate(models.items()):
            offset = (i - (n - 1) / 2) * bar
            vals = [value(s["domains"].get(d) or {}) for d in domains]
            ys = [c - offset for c, v in zip(centers, vals) if v is not None]
            ax.barh(ys, [v for v in vals if v is not None], height=bar * 0.95,
                    color=colors[m])
            if "prompt" in title:  # the cached part of the prompt, hatched over it
                cached = [_tok(s["domains"].get(d) or {}, "cached_prompt") for d in domains]
                ax.barh([c - offset for c, v in zip(centers, cached) if v is not None],
                        [v for v in cached if v is not None], height=bar * 0.95,
                        color="white", alpha=0.45, hatch="////", edgecolor=colors[m], lw=0)
        ax.set_title(wrap_label(title, 22), loc="left")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
        if title == "Avg@k":
            from matplotlib.ticker import MultipleLocator

            ax.set_xlim(0, 1.02)
            ax.xaxis.set_major_locator(MultipleLocator(0.25))
            _pct_axis(ax.xaxis)
        else:
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: tokens(v)))
        ax.set_ylim(0, sum(band))
        _style(ax)
    axes[0].set_yticks(centers, labels)
    fig.suptitle(_t(f"{bench}: per domain (means over its episodes; hatched: cached prompt "
                    "tokens)"), x=0.01, ha="left")
    from matplotlib.patches import Patch

    _legend(fig, [Patch(color=colors[m]) for m in models], [_t(m) for m in models])
    return fig


# ---- latency --------------------------------------------------------------------------------


def _latency(report: dict, colors: dict[str, str]) -> Any | None:
    hists = {m: s["profile"]["agent_latency_hist"] for m, s in _entries(report, None).items()
             if (s.get("profile") or {}).get("agent_latency_hist")}
    if not hists:
        return None
    fig = _new(3.6)
    ax = fig.subplots()
    for m, h in hists.items():
        ax.stairs(h["counts"], h["edges"], color=colors[m], lw=1.5)
    lo = min(h["edges"][0] for h in hists.values())
    hi = max(h["edges"][-1] for h in hists.values())
    _log_seconds(ax, lo, hi)
    ax.set_xlim(lo, hi)
    ax.set(xlabel="latency of one agent model call", ylabel="calls")
    ax.set_title("Agent model-call latency", loc="left")
    _style(ax)
    from matplotlib.lines import Line2D

    _legend(fig, [Line2D([], [], color=colors[m], lw=2) for m in hists], [_t(m) for m in hists])
    return fig


def _log_seconds(ax: Any, lo: float, hi: float) -> None:
    """A log axis in seconds with few, readable labels (``20 ms``, ``1 s``): 1-2-5 ticks over
    short spans, 1-3 or decades over long ones; minor ticks unlabelled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    axis = ax.xaxis
    decades = math.log10(hi / lo) if lo > 0 else 6
    subs = (1.0, 2.0, 5.0) if decades <= 2.5 else (1.0, 3.0) if decades <= 5 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda v, _: seconds(v)))
    axis.set_minor_formatter(NullFormatter())


# ---- all of them ----------------------------------------------------------------------------


def figure_specs(report: dict) -> list[tuple[str, str]]:
    """(name, caption) of every figure this report can have, in page order."""
    specs = [("leaderboard", "Leaderboard: Avg@k with its 95% CI over the task population"),
             ("pass_curves", "Pass@k and Pass^k over k"),
             ("mse_vs_k", "Estimated MSE of the k-trial Avg against the true Avg (s²/k), vs k"),
             ("cost_vs_score", "Cost against score")]
    specs += [(f"domains:{b}", f"{b} per domain: score, tokens, turns")
              for b in report.get("benchmarks") or {}]
    specs.append(("latency", "Agent model-call latency"))
    return specs


def figures(report: dict, names: Iterable[str] | None = None) -> dict[str, Any | None]:
    """name -> Figure (None: no data for it). The caller owns the figures."""
    colors = _model_colors(report)
    makers: dict[str, Callable[[], Any | None]] = {
        "leaderboard": lambda: _leaderboard(report, colors),
        "pass_curves": lambda: _curves(report, colors, "pass_at_k_curve",
                                       "Pass@k and Pass^k over k", "rate", _draw_pass),
        "mse_vs_k": lambda: _curves(report, colors, "mse_vs_k", "MSE of the k-trial Avg",
                                    "MSE vs true Avg (s²/k)", _draw_mse),
        "cost_vs_score": lambda: _cost_vs_score(report, colors),
        "latency": lambda: _latency(report, colors),
    }
    for b in report.get("benchmarks") or {}:
        makers[f"domains:{b}"] = lambda b=b: _domains(report, b, colors)
    wanted = list(names) if names is not None else [n for n, _ in figure_specs(report)]
    return {n: makers[n]() for n in wanted}
