"""The report's figures (``results.render.figures``) read back from matplotlib's objects, not
from pixels: what each plots (bars, error bars, marks, curves, histograms and where they sit),
its axes' limits, scales and tick labels, titles, legends and the figure's size, from
hand-made reports; and which figures a report has. tests/results/test_html.py draws real
reports and checks that no label overlaps."""

from __future__ import annotations

import math
import warnings

import pytest

pytest.importorskip("matplotlib", reason="the HTML report needs matplotlib")

from matplotlib.colors import to_hex
from matplotlib.container import ErrorbarContainer

from sweepbench.results.fmt import wrap_label
from sweepbench.results.render import figures as F

LINE = 1.25 * 9 / 72


def _style_ok(ax) -> None:
    """The grid every plot has: drawn, faint, below the data."""
    lines = ax.xaxis.get_gridlines() + ax.yaxis.get_gridlines()
    assert lines and all(g.get_visible() and g.get_alpha() == 0.3 for g in lines)
    assert ax.get_axisbelow() is True


def _legend(fig) -> tuple[list[str], int]:
    (leg,) = fig.legends
    return [t.get_text() for t in leg.get_texts()], leg._ncols


def _entry(avg, *, k=2, ci=None, at=None, hat=None, episodes=3, **more) -> dict:
    return {"avg": avg, "k": k, "ci95": ci, "pass_at_k": at, "pass_hat_k": hat,
            "episodes": episodes, **more}


def _report(**benches) -> dict:
    src = {"label": "the paper's Pass"}
    return {"benchmarks": {b: {"source": src, "models": models} for b, models in benches.items()},
            "models": {}}


def test_small_helpers():
    assert F._t("a$b") == r"a\$b" and F._t("_x") == " _x" and F._t("a\x07") == r"a\x07"
    assert [F._color(i) for i in (0, 9, 10, 23)] == ["C0", "C9", "C0", "C3"]
    report = {"benchmarks": {"t1": {"models": {"b": {}, "a": {"episodes": 1}}},
                             "vb": {"models": {"c": {}}}}, "models": {"z": {}, "a": {}}}
    assert F._model_colors(report) == {"a": "C0", "b": "C1", "c": "C2", "z": "C3"}
    assert F._model_colors({}) == {}
    assert F._entries(report, "t1") == {"a": {"episodes": 1}}
    assert F._entries({"models": {"x": {"episodes": 2}, "y": {"episodes": 0}}}, None) == {
        "x": {"episodes": 2}}
    assert F._lines("a" * 10, 34) == 1 and F._lines("word " * 10, 12) == 5
    assert F._tok({"profile": {"agent_tokens": {"prompt": 5}}}, "prompt") == 5
    assert F._tok({}, "prompt") is None and F._tok({"profile": {}}, "prompt") is None


def test_a_new_figure_is_a_constrained_agg_figure_of_a_width_and_at_least_a_height():
    fig = F._new(1.0)
    assert tuple(fig.get_size_inches()) == (11.0, 2.2) and fig.dpi == 100
    assert fig.get_layout_engine().__class__.__name__ == "ConstrainedLayoutEngine"
    assert type(fig.canvas).__name__ == "FigureCanvasAgg"
    assert tuple(F._new(5.5, width_in=3.0).get_size_inches()) == (3.0, 5.5)
    import matplotlib

    assert (matplotlib.rcParams["font.size"], matplotlib.rcParams["axes.titlesize"],
            matplotlib.rcParams["figure.titlesize"], matplotlib.rcParams["legend.fontsize"]) == (
        9, 10, 11, 9)


def test_a_legend_has_as_many_columns_as_fit_and_none_without_entries():
    from matplotlib.lines import Line2D

    fig = F._new(3)
    F._legend(fig, [], [])
    assert fig.legends == []
    h = [Line2D([], []) for _ in range(3)]
    F._legend(fig, h, ["a", "b", "c"])
    assert _legend(fig) == (["a", "b", "c"], 3)
    assert fig.legends[0]._loc_used_default is False
    fig = F._new(3)
    # 11 in * 72 / (9 * 0.62 * 40 + 40) = 3.09: three columns of forty-character labels
    F._legend(fig, h + h, ["x" * 40] * 6)
    assert _legend(fig)[1] == 3
    fig = F._new(3)
    F._legend(fig, h, ["x" * 400] * 3)
    assert _legend(fig)[1] == 1
    fig = F._new(3)
    # 11 in * 72 / (9 * 0.62 * 3 + 40) = 13.96: thirteen columns of three-letter labels
    F._legend(fig, h * 5, ["abc"] * 15)
    assert _legend(fig)[1] == 13 and fig.legends[0].get_frame_on() is False


def test_the_leaderboard_plots_each_rows_avg_ci_and_marks():
    report = _report(
        t1={"b": _entry(0.5, ci=[0.25, 0.625], at=0.75, hat=0.25),
            "a": _entry(0.5, ci=None, at=None, hat=None),  # incomplete: no marks
            "c": _entry(None), "z": _entry(0.9, k=2, ci=[0.8, 1.0], at=1.0, hat=0.5),
            "gone": _entry(0.1, episodes=0)},
        vb={"m": _entry(0.25, k=1, ci=[0.0, 0.5])})
    colors = F._model_colors(report)
    fig = F._leaderboard(report, colors)
    ax, ax2 = fig.axes
    # rows: best first (ties by name), none last; the first row on top
    assert [t.get_text() for t in ax.get_yticklabels()] == ["z", "a", "b", "c"]
    assert list(ax.get_yticks()) == [3, 2, 1, 0]
    bars = ax.patches
    assert [(b.get_width(), b.get_y() + b.get_height() / 2) for b in bars] == [
        (0.9, 3), (0.5, 2), (0.5, 1)]
    assert all(math.isclose(b.get_height(), 0.6) and b.get_alpha() == 0.85 for b in bars)
    assert [to_hex(b.get_facecolor()) for b in bars] == [
        to_hex(colors[m]) for m in ("z", "a", "b")]
    errs = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    segs = [c.lines[2][0].get_segments()[0].tolist() for c in errs]
    assert segs == [[[0.8, 3.0], [1.0, 3.0]], [[0.5, 2.0], [0.5, 2.0]],
                    [[0.25, 1.0], [0.625, 1.0]]]
    assert all(to_hex(c.lines[2][0].get_colors()[0]) == "#000000" for c in errs)
    assert all(c.lines[0] is None and list(c.lines[2][0].get_linewidths()) == [1.0]
               for c in errs)  # bars only: no marker or line at the value
    assert all(len(c.lines[1]) == 2 and c.lines[1][0].get_markersize() == 2 * 3 for c in errs)
    marks = [(ln.get_xdata()[0], ln.get_ydata()[0], ln.get_marker(), to_hex(ln.get_color()))
             for ln in ax.lines if ln.get_marker() in ("^", "v")]
    assert marks == [(1.0, 3, "^", "#000000"), (0.5, 3, "v", "#696969"),
                     (0.75, 1, "^", "#000000"), (0.25, 1, "v", "#696969")]
    assert all(ln.get_markersize() == 5 and ln.get_linestyle() == "None" for ln in ax.lines
               if ln.get_marker() in ("^", "v"))
    assert ax.get_xlim() == (0, 1.02) and ax2.get_xlim() == (0, 1.02)
    assert ax.xaxis.get_major_formatter()(0.5, 0) == "50%"
    assert ax.get_title(loc="left") == "t1: Avg@2 with 95% CI (pass from the paper's Pass)"
    assert ax2.get_title(loc="left") == "vb: Avg@1 with 95% CI (pass from the paper's Pass)"
    assert [m.get_marker() for m in ax2.lines if m.get_marker() in ("^", "v")] == []
    _style_ok(ax)
    assert _legend(fig) == (["Pass@k", "Pass^k"], 2)
    assert [(h.get_marker(), to_hex(h.get_color()), h.get_linestyle())
            for h in fig.legends[0].legend_handles] == [("^", "#000000", "None"),
                                                        ("v", "#696969", "None")]
    assert ax._left_title.get_wrap() is True  # a long benchmark label wraps
    # heights: a line per row (none wraps at 34) plus a quarter inch each, at least an inch
    heights = [max(1.0, 4 * LINE + 0.25 * 4), max(1.0, 1 * LINE + 0.25)]
    assert list(ax.get_subplotspec().get_gridspec().get_height_ratios()) == heights
    assert fig.get_size_inches()[1] == pytest.approx(sum(heights) + 0.9 * 2 + 0.6)


def test_a_leaderboard_of_mixed_k_and_of_one_trial():
    report = _report(t1={"a": _entry(0.5, k=2), "b": _entry(0.5, k=3), "c": _entry(0.2, k=None)})
    fig = F._leaderboard(report, F._model_colors(report))
    assert fig.axes[0].get_title(loc="left").startswith("t1: Avg@k with 95% CI")
    one = _report(t1={"a": _entry(0.5, k=1, at=0.5, hat=0.5), "b": _entry(0.5, k=None, at=0.5,
                                                                          hat=0.5)})
    fig = F._leaderboard(one, F._model_colors(one))
    assert fig.legends == [] and [ln for ln in fig.axes[0].lines if ln.get_marker() == "^"] == []
    assert F._leaderboard(_report(), {}) is None
    assert F._leaderboard({"models": {}}, {}) is None
    assert F._leaderboard(_report(t1={"a": _entry(0.5, episodes=0)}), {"a": "C0"}) is None
    long = _report(t1={"m" * 80: _entry(0.5)})
    fig = F._leaderboard(long, F._model_colors(long))
    assert fig.axes[0].get_yticklabels()[0].get_text() == wrap_label("m" * 80, 34)
    assert list(fig.axes[0].get_subplotspec().get_gridspec().get_height_ratios()) == [1.0]
    many = _report(t1={f"model {i}": _entry(i / 10) for i in range(8)})
    fig = F._leaderboard(many, F._model_colors(many))
    assert list(fig.axes[0].get_subplotspec().get_gridspec().get_height_ratios()) == [
        8 * LINE + 0.25 * 8]


def test_the_grid_of_curves():
    fig, axes = F._grid(3, 3.0)
    assert len(axes) == 3 and len(fig.axes) == 4 and not fig.axes[3].get_visible()
    assert all(ax.get_visible() for ax in axes)
    assert fig.get_size_inches()[1] == pytest.approx(2 * 3.0 + 0.9)
    fig, axes = F._grid(1, 3.0)
    assert len(fig.axes) == 1 and fig.get_size_inches()[1] == pytest.approx(3.9)
    fig, axes = F._grid(2, 2.0)
    assert len(fig.axes) == 2 and fig.get_size_inches()[1] == pytest.approx(2.9)


def test_pass_curves_and_mse():
    report = _report(
        t1={"a": _entry(0.5, pass_at_k_curve=[0.5, 0.75, 0.875],
                        pass_hat_k_curve=[0.5, 0.25, 0.125], mse_vs_k=[0.2, 0.1]),
            "0": _entry(0.4, pass_at_k_curve=[0.4], pass_hat_k_curve=[0.4], mse_vs_k=[0.3])},
        vb={"c": _entry(0.4, pass_at_k_curve=[0.4])})
    colors = F._model_colors(report)
    fig = F.figures(report, ["pass_curves"])["pass_curves"]
    (ax,) = fig.axes
    solid, dashed = ax.lines
    assert list(solid.get_xdata()) == [1, 2, 3] and list(solid.get_ydata()) == [0.5, 0.75, 0.875]
    assert list(dashed.get_xdata()) == [1, 2, 3]
    assert list(dashed.get_ydata()) == [0.5, 0.25, 0.125]
    assert colors["a"] == "C1"  # not the colour matplotlib would give a first line
    assert (solid.get_linestyle(), solid.get_marker(), dashed.get_linestyle(),
            dashed.get_marker()) == ("-", "o", "--", "s")
    assert solid.get_markersize() == dashed.get_markersize() == 3
    assert to_hex(solid.get_color()) == to_hex(colors["a"]) == to_hex(dashed.get_color())
    assert ax.get_ylim() == (-0.02, 1.02) and ax.yaxis.get_major_formatter()(0.25, 0) == "25%"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("k", "rate")
    assert ax.get_title(loc="left") == "t1: Pass@k and Pass^k over k"
    assert ax.xaxis.get_major_locator()._integer is True
    _style_ok(ax)
    assert _legend(fig)[0] == ["a", "Pass@k (solid)", "Pass^k (dashed)"]
    handles = fig.legends[0].legend_handles
    assert [(to_hex(h.get_color()), h.get_linestyle()) for h in handles] == [
        (to_hex("C1"), "-"), ("#808080", "-"), ("#808080", "--")]
    assert handles[0].get_linewidth() == 2
    assert fig.get_size_inches()[1] == pytest.approx(3.0 + 0.9)  # one row of 3 in
    fig = F.figures(report, ["mse_vs_k"])["mse_vs_k"]
    (ax,) = fig.axes
    (line,) = ax.lines
    assert list(line.get_xdata()) == [1, 2] and list(line.get_ydata()) == [0.2, 0.1]
    assert to_hex(line.get_color()) == to_hex("C1")
    assert (line.get_linestyle(), line.get_marker(), line.get_markersize()) == ("-", "o", 3)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("k", "MSE vs true Avg (s²/k)")
    assert ax.get_title(loc="left") == "t1: MSE of the k-trial Avg"
    assert _legend(fig)[0] == ["a"]
    one = _report(t1={"a": _entry(0.5, pass_at_k_curve=[0.5])})
    assert F.figures(one, ["pass_curves", "mse_vs_k"]) == {"pass_curves": None, "mse_vs_k": None}


def test_cost_against_score():
    cost = lambda x: {"per_episode": x}
    report = _report(t1={"a": _entry(0.5, ci=[0.25, 0.75], cost=cost(0.01)),
                         "b": _entry(0.75, cost=cost(0.02)), "c": _entry(None, cost=cost(1)),
                         "d": _entry(0.2, cost=cost(0)), "e": _entry(0.2)},
                     vb={"a": _entry(0.25, cost=cost(0.04))})
    colors = F._model_colors(report)
    fig = F._cost_vs_score(report, colors)
    (ax,) = fig.axes
    errs = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    pts = [(c.lines[0].get_xdata()[0], c.lines[0].get_ydata()[0], c.lines[0].get_marker(),
            to_hex(c.lines[0].get_color())) for c in errs]
    assert pts == [(0.01, 0.5, "o", to_hex(colors["a"])), (0.02, 0.75, "o", to_hex(colors["b"])),
                   (0.04, 0.25, "s", to_hex(colors["a"]))]
    assert errs[0].lines[2][0].get_segments()[0].tolist() == [[0.01, 0.25], [0.01, 0.75]]
    assert errs[1].lines[2][0].get_segments()[0].tolist() == [[0.02, 0.75], [0.02, 0.75]]
    assert all(c.lines[0].get_markersize() == 7 and len(c.lines[1]) == 2 for c in errs)
    assert ax.get_xscale() == "linear" and ax.margins()[0] == 0.1
    assert ax.xaxis.get_major_formatter()(0.0123, 0) == "$0.0123"
    assert ax.get_xlabel() == ("dollars per episode (agent + user simulator + judge, stored "
                               "prices)")
    assert ax.get_ylabel() == "Avg@k" and ax.get_ylim() == (-0.03, 1.05)
    assert ax.yaxis.get_major_formatter()(0.5, 0) == "50%"
    assert ax.get_title(loc="left") == "Cost against score (bars: 95% CI)"
    _style_ok(ax)
    labels, _ = _legend(fig)
    assert labels == ["a", "b", "t1", "vb"]
    leg = fig.legends[0]
    assert [(h.get_marker(), to_hex(h.get_color()), h.get_linestyle())
            for h in leg.legend_handles] == [
        ("o", to_hex(colors["a"]), "None"), ("o", to_hex(colors["b"]), "None"),
        ("o", "#808080", "None"), ("s", "#808080", "None")]
    assert all(len(c.lines[1]) == 2 and c.lines[1][0].get_markersize() == 2 * 3 for c in errs)
    assert fig.get_size_inches()[1] == pytest.approx(4.2)
    wide = _report(t1={"a": _entry(0.5, cost=cost(0.001)), "b": _entry(0.5, cost=cost(0.031))})
    fig = F._cost_vs_score(wide, F._model_colors(wide))
    assert fig.axes[0].get_xscale() == "log"
    assert _legend(fig)[0] == ["a", "b"]  # one benchmark: no shapes in the legend
    edge = _report(t1={"a": _entry(0.5, cost=cost(0.001)), "b": _entry(0.5, cost=cost(0.03))})
    assert F._cost_vs_score(edge, F._model_colors(edge)).axes[0].get_xscale() == "linear"
    assert F._cost_vs_score(_report(t1={"a": _entry(0.5)}), {"a": "C0"}) is None
    assert F._cost_vs_score({"models": {}}, {}) is None
    nine = _report(**{f"b{i}": {"a": _entry(0.5, cost=cost(0.01))} for i in range(9)})
    fig = F._cost_vs_score(nine, F._model_colors(nine))
    markers = [c.lines[0].get_marker() for c in fig.axes[0].containers
               if isinstance(c, ErrorbarContainer)]
    assert markers == list("osD^vP*Xo")


def _dom(avg, prompt=None, cached=None, completion=None, turns=None) -> dict:
    profile = {"agent_tokens": {"prompt": prompt, "cached_prompt": cached,
                                "completion": completion}, "turns": {"mean": turns}}
    return {"avg": avg, "profile": profile}


def test_the_per_domain_panels():
    report = _report(vb={
        "a": _entry(0.5, domains={"hotel": _dom(0.5, 1000, 400, 50, 3),
                                  "a,z": _dom(1.0, 2000, None, 70, 5)}),
        "b": _entry(0.9, domains={"hotel": _dom(0.25, 3000, 1000, 90, 7)}),
        "0": _entry(0.1)})
    colors = F._model_colors(report)
    assert (colors["a"], colors["b"]) == ("C1", "C2")
    fig = F._domains(report, "vb", colors)
    axes = fig.axes
    assert [ax.get_title(loc="left") for ax in axes] == [
        wrap_label(t, 22) for t in ("Avg@k", "agent prompt tokens / episode",
                                    "agent completion tokens / episode", "turns / episode")]
    # two domains (single ones first), two models: bands of one line each, at least 0.4 in
    band = max(LINE + 0.06, 0.16 * 2 + 0.08)
    centers = [band + band / 2, band / 2]
    bar = band * 0.8 / 2
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["hotel", "a, z"]
    assert list(axes[0].get_yticks()) == pytest.approx(centers)
    assert all(ax.get_ylim() == pytest.approx((0, 2 * band)) for ax in axes)
    avg = axes[0].patches
    # model a (offset -bar/2: above the centre) then b, each over its domains
    assert [p.get_width() for p in avg] == [0.5, 1.0, 0.25]
    assert [p.get_y() + p.get_height() / 2 for p in avg] == pytest.approx(
        [centers[0] + bar / 2, centers[1] + bar / 2, centers[0] - bar / 2])
    assert all(p.get_height() == pytest.approx(bar * 0.95) for p in avg)
    assert [to_hex(p.get_facecolor()) for p in avg] == [to_hex(colors[m]) for m in "aab"]
    prompt = axes[1].patches
    widths = [p.get_width() for p in prompt]
    assert widths == [1000, 2000, 400, 3000, 1000]  # a's bars, a's cached, b's, b's cached
    hatched = [p for p in prompt if p.get_hatch()]
    assert [(p.get_width(), p.get_hatch(), p.get_alpha()) for p in hatched] == [
        (400, "////", 0.45), (1000, "////", 0.45)]
    assert [to_hex(p.get_edgecolor()[:3]) for p in hatched] == [to_hex(colors["a"]),
                                                                 to_hex(colors["b"])]
    assert [to_hex(p.get_facecolor()[:3]) for p in hatched] == ["#ffffff", "#ffffff"]
    assert all(p.get_linewidth() == 0 and p.get_height() == pytest.approx(bar * 0.95)
               for p in hatched)
    assert [p.get_y() + p.get_height() / 2 for p in hatched] == pytest.approx(
        [centers[0] + bar / 2, centers[0] - bar / 2])  # over its model's bar
    assert [p.get_width() for p in axes[2].patches] == [50, 70, 90]
    assert [p.get_width() for p in axes[3].patches] == [3, 5, 7]
    assert axes[0].get_xlim() == (0, 1.02)
    assert axes[0].xaxis.get_major_locator()._edge.step == 0.25
    assert axes[0].xaxis.get_major_formatter()(0.25, 0) == "25%"
    assert axes[1].xaxis.get_major_formatter()(12345, 0) == "12.3k"
    assert axes[2].xaxis.get_major_locator()._nbins == 4
    for ax in axes:
        _style_ok(ax)
    assert fig.get_suptitle() == ("vb: per domain (means over its episodes; hatched: cached "
                                  "prompt tokens)")
    assert _legend(fig)[0] == ["a", "b"]
    assert [to_hex(h.get_facecolor()) for h in fig.legends[0].legend_handles] == [
        to_hex("C1"), to_hex("C2")]
    title = fig._suptitle
    assert (title.get_position()[0], title.get_ha()) == (0.01, "left")
    assert fig.get_size_inches()[1] == pytest.approx(2 * band + 1.3 + 0.25)
    assert axes[1].get_shared_y_axes().joined(axes[0], axes[3])


def test_domains_without_data_have_no_figure():
    assert F._domains(_report(vb={"a": _entry(0.5)}), "vb", {"a": "C0"}) is None
    no_profile = _report(vb={"a": _entry(0.5, domains={"d": {"avg": 0.5}})})
    assert F._domains(no_profile, "vb", {"a": "C0"}) is None
    missing = _report(vb={"a": _entry(0.5, domains={"d": None, "e": _dom(0.5, 10)})})
    fig = F._domains(missing, "vb", {"a": "C0"})
    assert [p.get_width() for p in fig.axes[0].patches] == [0.5]


def test_domain_labels_keep_full_names_where_short_ones_clash():
    long1 = "a,b,c,d,e,f"
    long2 = "a,b,c,d,e,g"
    assert F._domain_labels(["hotel", long1]) == ["hotel", "6 domains: a, b, +4"]
    assert F._domain_labels([long1, long2]) == [wrap_label(long1, 26), wrap_label(long2, 26)]
    assert F._domain_labels(["x" * 30]) == [wrap_label("x" * 30, 26)]


def test_many_models_widen_a_domains_band():
    models = {f"m{i}": _entry(0.5, domains={"d": _dom(0.5, 10)}) for i in range(5)}
    fig = F._domains(_report(vb=models), "vb", F._model_colors(_report(vb=models)))
    band = max(LINE + 0.06, 0.16 * 5 + 0.08)
    assert fig.axes[0].get_ylim() == pytest.approx((0, band))
    # a quarter inch per row of four legend entries: two rows for five models
    assert fig.get_size_inches()[1] == pytest.approx(max(2.2, band + 1.3 + 0.25 * 2))
    two_line = F._domains(_report(vb={"a": _entry(0.5, domains={
        "a very long domain name, and more": _dom(0.5, 10)})}), "vb", {"a": "C0"})
    assert two_line.axes[0].get_ylim() == pytest.approx((0, 2 * LINE + 0.06))


def test_the_latency_histogram():
    report = {"benchmarks": {}, "models": {
        "a": {"episodes": 2, "profile": {"agent_latency_hist": {
            "counts": [1, 4, 2], "edges": [0.01, 0.1, 1.0, 30.0]}}},
        "b": {"episodes": 1, "profile": {"agent_latency_hist": {
            "counts": [3], "edges": [0.02, 20.0]}}},
        "0": {"episodes": 1, "profile": {}}, "d": {"episodes": 0}}}
    colors = F._model_colors(report)
    fig = F._latency(report, colors)
    (ax,) = fig.axes
    stairs = ax.patches
    assert [list(s.get_data().values) for s in stairs] == [[1, 4, 2], [3]]
    assert [list(s.get_data().edges) for s in stairs] == [[0.01, 0.1, 1.0, 30.0], [0.02, 20.0]]
    assert (colors["a"], colors["b"]) == ("C1", "C2")
    assert [to_hex(s.get_edgecolor()) for s in stairs] == [to_hex(colors["a"]),
                                                           to_hex(colors["b"])]
    assert all(s.get_linewidth() == 1.5 for s in stairs)
    assert ax.get_xlim() == pytest.approx((0.01, 30.0)) and ax.get_xscale() == "log"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("latency of one agent model call", "calls")
    assert ax.get_title(loc="left") == "Agent model-call latency"
    assert ax.xaxis.get_major_formatter()(0.02, 0) == "20 ms"
    _style_ok(ax)
    assert _legend(fig)[0] == ["a", "b"]
    assert [(to_hex(h.get_color()), h.get_linewidth()) for h in fig.legends[0].legend_handles] \
        == [(to_hex("C1"), 2), (to_hex("C2"), 2)]
    assert fig.get_size_inches()[1] == pytest.approx(3.6)
    assert F._latency({"models": {"a": {"episodes": 1}}}, {}) is None


@pytest.mark.parametrize("lo, hi, subs", [(0.01, 3.16, (1.0, 2.0, 5.0)),
                                          (1.0, 10 ** 2.5, (1.0, 2.0, 5.0)),
                                          (0.01, 3.17, (1.0, 3.0)), (0.01, 1000, (1.0, 3.0)),
                                          (0.01, 1001, (1.0,)), (0.0, 1.0, (1.0,))])
def test_a_log_axis_in_seconds_has_fewer_ticks_over_longer_spans(lo, hi, subs):
    fig = F._new(2)
    ax = fig.subplots()
    F._log_seconds(ax, lo, hi)
    loc = ax.xaxis.get_major_locator()
    assert ax.get_xscale() == "log" and tuple(loc._subs) == subs and loc._base == 10
    assert ax.xaxis.get_major_formatter()(1.5, 0) == "1.5 s"
    assert ax.xaxis.get_minor_formatter()(2, 0) == ""


def test_which_figures_a_report_has():
    report = _report(t1={"a": _entry(0.5)}, vb={"a": _entry(0.5)})
    assert F.figure_specs(report) == [
        ("leaderboard", "Leaderboard: Avg@k with its 95% CI over the task population"),
        ("pass_curves", "Pass@k and Pass^k over k"),
        ("mse_vs_k", "Estimated MSE of the k-trial Avg against the true Avg (s²/k), vs k"),
        ("cost_vs_score", "Cost against score"),
        ("domains:t1", "t1 per domain: score, tokens, turns"),
        ("domains:vb", "vb per domain: score, tokens, turns"),
        ("latency", "Agent model-call latency")]
    figs = F.figures(report)
    assert list(figs) == [n for n, _ in F.figure_specs(report)]
    assert figs["leaderboard"] is not None
    assert [n for n, f in figs.items() if f is None] == [
        "pass_curves", "mse_vs_k", "cost_vs_score", "domains:t1", "domains:vb", "latency"]
    dom = _report(t1={"a": _entry(0.5)}, vb={"a": _entry(0.5, domains={"d": _dom(0.5, 10)})})
    figs = F.figures(dom, ["domains:vb", "domains:t1"])
    assert list(figs) == ["domains:vb", "domains:t1"] and figs["domains:t1"] is None
    assert figs["domains:vb"].get_suptitle().startswith("vb: per domain")
    assert F.figure_specs({}) == [s for s in F.figure_specs(report)
                                  if not s[0].startswith("domains:")]
    full = {"benchmarks": {"t1": {"source": {"label": "L"}, "models": {
        "a": _entry(0.5, cost={"per_episode": 0.01})}}},
        "models": {"a": {"episodes": 1, "profile": {"agent_latency_hist": {
            "counts": [1], "edges": [0.1, 1.0]}}}}}
    figs = F.figures(full, ["cost_vs_score", "latency"])
    assert figs["cost_vs_score"].axes[0].get_title(loc="left").startswith("Cost against score")
    assert figs["latency"].axes[0].get_title(loc="left") == "Agent model-call latency"


def test_without_matplotlib_the_report_says_how_to_get_it(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_mpl(name, *a, **kw):
        if name == "matplotlib":
            raise ImportError(name)
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_mpl)
    with pytest.raises(RuntimeError) as err:
        F._new(1)
    assert str(err.value) == "the HTML report needs matplotlib: pip install matplotlib"
    assert isinstance(err.value.__cause__, ImportError)


def test_leaderboard_rows_of_no_score_and_long_names():
    report = _report(t1={"a": _entry(0.0), "b": _entry(0.5)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. grid(False, alpha=...) warns it draws a grid
        fig = F._leaderboard(report, F._model_colors(report))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["b", "a"]
    name = "x" * 20 + " " + "y" * 14  # 35 characters: two lines at 34
    many = _report(t1={**{f"model {i}": _entry(i / 10) for i in range(7)}, name: _entry(0.0)})
    fig = F._leaderboard(many, F._model_colors(many))
    assert list(fig.axes[0].get_subplotspec().get_gridspec().get_height_ratios()) == [
        9 * LINE + 0.25 * 8]


def test_domain_bands_of_one_model_and_of_three_domains():
    report = _report(vb={"a": _entry(0.5, domains={d: _dom(0.5, 10) for d in "xyz"})})
    fig = F._domains(report, "vb", {"a": "C0"})
    band = max(LINE + 0.06, 0.16 + 0.08)
    assert list(fig.axes[0].get_yticks()) == pytest.approx([2.5 * band, 1.5 * band, 0.5 * band])
    assert fig.axes[0].get_ylim() == pytest.approx((0, 3 * band))
    assert [ax.get_subplotspec().get_geometry() for ax in fig.axes] == [
        (1, 4, i, i) for i in range(4)]
