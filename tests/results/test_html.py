"""The HTML report: its figures' labels checked on matplotlib's own bounding boxes, the page
written atomically, and the reports of a full T1 run and of VitaBench runs rendered in
headless Chromium at 1,400 px: nothing overflows, every plot is drawn."""

from __future__ import annotations

import base64
import io
import json
import random
import re

import pytest

pytest.importorskip("matplotlib", reason="the HTML report needs matplotlib")
Image = pytest.importorskip("PIL.Image", reason="pillow (a matplotlib dependency) is needed")

from sweepbench.errors import ConfigError  # noqa: E402
from sweepbench.results.render.figures import WIDTH_PX, figures  # noqa: E402
from sweepbench.results.render.html import plots, render_html, write_html  # noqa: E402
from sweepbench.results.report import build_report  # noqa: E402
from sweepbench.store.runstore import EpisodeMeta, RunStore  # noqa: E402
from sweepbench.runner.build import benchmark_info  # noqa: E402
from sweepbench.wire import EpisodeRecord, Usage  # noqa: E402

from .conftest import SCREENS, _run  # noqa: E402

PLOT_NAMES = ["leaderboard", "pass_curves", "mse_vs_k", "cost_vs_score", "domains:vitabench",
              "latency"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    rng = random.Random(4)
    path = tmp_path_factory.mktemp("html") / "s.db"
    with RunStore(path) as s:
        # the user model's calls are priced too: a model with unpriced calls has no total
        s.begin_run("r", {"user_model": "U"}, prices={"weak": {"input": 1.0, "output": 2.0},
                                                      "U": {"input": 0.0, "output": 0.0}},
                    info={"benchmarks": {"vitabench": {"headline": "m"}}})
        for model, skill in (("good <b>model</b> $a_1$", 0.8), ("weak", 0.4)):
            for t in range(9):
                domain = ("delivery", "ota", "instore")[t % 3]
                for trial in range(4):
                    label = f"{model}|vitabench:{domain}:en:t{t}|{trial}"
                    meta = EpisodeMeta(key=f"ep-{label}", label=label, model=model,
                                       benchmark="vitabench", domain=domain, task_id=f"t{t}",
                                       lang="en", trial=trial, user_model="U",
                                       unreachable="no <menu>" if t == 8 else None)
                    s.select("r", [meta])
                    s.episode_started(meta, run_id="r")
                    ep = meta.key
                    for seq in range(4):
                        s.event(ep, seq, "model_call", {
                            "role": "agent" if seq % 2 == 0 else "user",
                            "latency_s": rng.lognormvariate(-1, 0.7), "attempts": 1,
                            "usage": {"prompt_tokens": 500, "completion_tokens": 50}},
                            run_id="r", endpoint=model if seq % 2 == 0 else "U")
                    turns = rng.randint(2, 10)
                    s.episode_finished(ep, EpisodeRecord(
                        run_id="r", model=model, benchmark="vitabench", domain=domain,
                        task_id=f"t{t}", trial=trial, termination="user_stop", turns=turns,
                        wall_s=rng.uniform(1, 9), agent_usage=Usage(2000 * turns, 90 * turns),
                        user_usage=Usage(300 * turns, 20 * turns)))
                    passed = rng.random() < skill
                    s.judgment(ep, judge="j", method="m", passed=passed,
                               score=0.5 + 0.5 * passed, details={"rubric": [passed, True]})
        s.flush_sync()
        return build_report(s)


def decode(b64: str):
    return Image.open(io.BytesIO(base64.b64decode(b64))).convert("RGB")


def not_blank(img) -> bool:
    colours = img.getcolors(maxcolors=1 << 20)
    return colours is not None and len(colours) > 20 and max(n for n, _ in colours) < 0.97 * (
        img.width * img.height)


def test_embedded_pngs_are_drawn_and_fit_the_page(report):
    pngs = plots(report)
    assert list(pngs) == PLOT_NAMES
    for name, b64 in pngs.items():
        assert b64 is not None, name
        img = decode(b64)
        assert img.width == WIDTH_PX and 200 <= img.height <= 3000, (name, img.size)
        assert not_blank(img), name


def test_page_is_self_contained_and_escaped(report, tmp_path):
    page = write_html(report, tmp_path / "sub" / "r.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "good &lt;b&gt;model&lt;/b&gt;" in page and "<b>model</b>" not in page
    srcs = re.findall(r'src="([^"]*)"', page)
    assert len(srcs) == len(PLOT_NAMES) and all(s.startswith("data:image/png;base64,")
                                                for s in srcs)
    assert "http://" not in page and "https://" not in page  # nothing fetched
    for heading in ("Leaderboard", "Per domain", "Tokens, turns, latency", "Paired comparisons",
                    "Judge agreement", "Unreachable tasks", "Cost", "Errors and terminations",
                    "Configuration"):
        assert f">{heading}</h2>" in page
    # the unreachable task with its (escaped) reason, and the stored prices' cost
    assert "<td>t8</td><td>no &lt;menu&gt;</td>" in page
    total = report["cost"]["total"]
    assert total == pytest.approx(2 * 9 * 4 * (500 * 1.0 + 50 * 2.0) / 1e6)  # weak's agent calls
    assert f"Total ${total:,.4f}" in page
    # one way to show rates: percentages in the leaderboards, metrics and domain tables
    rates = page[page.index('id="leaderboard"'):page.index('id="cost"')]
    assert not re.search(r"<td[^>]*>[01]?\.\d+</td>", rates)  # no raw 0-1 numbers
    assert re.search(r'<td class="n">\d+\.\d%</td>', rates)


def test_missing_data_is_a_note_not_an_empty_plot(report):
    bare = json.loads(json.dumps(report))
    for scope in [bare["models"], *(b["models"] for b in bare["benchmarks"].values())]:
        for m in scope.values():
            m.pop("profile", None)
            m["mse_vs_k"] = None
            m["cost"] = None
            for d in m["domains"].values():
                d.pop("profile", None)
    pngs = plots(bare)
    assert [n for n, p in pngs.items() if p is None] == [
        "mse_vs_k", "cost_vs_score", "domains:vitabench", "latency"]
    page = render_html(bare)
    assert page.count("<img") == 2 and "No profile in this report" in page
    assert "vitabench per domain: no tokens or turns recorded" in page
    assert "Cost against score: no priced calls" in page


def test_a_failed_write_leaves_the_old_page_whole(report, tmp_path, monkeypatch):
    out = tmp_path / "report.html"
    out.write_text("old page", encoding="utf-8")

    def full_disk(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("sweepbench.results.files.os.replace", full_disk)
    with pytest.raises(ConfigError, match=f"cannot write {out}: No space"):
        write_html(report, out)
    assert out.read_text(encoding="utf-8") == "old page"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temp file left


# ---- the reports of real runs ----------------------------------------------------------------


@pytest.fixture(scope="session")
def t1_report(t1_store):
    with RunStore(t1_store) as s:
        return build_report(s, benchmarks=benchmark_info())


@pytest.fixture(scope="session")
def vita_report(vita_samples_store):
    with RunStore(vita_samples_store) as s:
        return build_report(s, benchmarks=benchmark_info())


@pytest.fixture(scope="session")
def vita_real_report(vita_real_store):
    with RunStore(vita_real_store) as s:
        return build_report(s, benchmarks=benchmark_info())


def test_the_t1_run_is_what_the_report_needs(t1_report):
    """The run behind the T1 tests: every template, failures, errors, prices."""
    noisy = t1_report["benchmarks"]["t1"]["models"]["scripted/noisy:0.3"]
    assert noisy["tasks"] == 525 and 0 < noisy["avg"] < 0.6 and noisy["errors"] > 0
    assert len(noisy["domains"]) >= 20  # 11 domains and the multi-domain splits
    assert t1_report["cost"]["total"] > 0 and t1_report["error_reasons"]
    assert len(t1_report["configuration"]["runs"]) == 2


def _boxes(fig):
    """Every label-like text of a drawn figure with its window extent: tick labels, axis
    labels, titles, the suptitle and legends (as one box each)."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    out = []

    def add(what, artist):
        if artist is None or not artist.get_visible():
            return
        if hasattr(artist, "get_text") and not artist.get_text().strip():
            return
        out.append((what, artist.get_window_extent(r)))

    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        for axis, name in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks():
                if tick.label1.get_visible() and lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:
                    add(f"ax{i} {name}tick {tick.label1.get_text()!r}", tick.label1)
            add(f"ax{i} {name}label", axis.label)
        for loc in ("left", "center", "right"):
            add(f"ax{i} title {loc}", ax._left_title if loc == "left" else
                ax.title if loc == "center" else ax._right_title)
        add(f"ax{i} legend", ax.get_legend())
    add("suptitle", fig._suptitle)
    for leg in fig.legends:
        add("figure legend", leg)
    return out


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5


def assert_labels_clear(name, fig):
    boxes = _boxes(fig)
    assert len(boxes) >= 4, name
    w, h = fig.canvas.get_width_height()
    for what, b in boxes:
        assert b.x0 >= -0.5 and b.y0 >= -0.5 and b.x1 <= w + 0.5 and b.y1 <= h + 0.5, (
            f"{name}: {what} leaves the figure ({b} in {w}x{h})")
    for i, (wa, a) in enumerate(boxes):
        for wb, b in boxes[i + 1:]:
            assert not _overlaps(a, b), f"{name}: {wa} overlaps {wb}"


@pytest.mark.parametrize("which", ["synthetic", "t1", "vita", "vita_real"])
def test_no_figure_label_overlaps_or_leaves_its_figure(which, request):
    report = request.getfixturevalue({"synthetic": "report", "t1": "t1_report",
                                      "vita": "vita_report",
                                      "vita_real": "vita_real_report"}[which])
    drawn = {n: f for n, f in figures(report).items() if f is not None}
    expected = {"leaderboard", "latency", "cost_vs_score"} | {
        f"domains:{b}" for b in report["benchmarks"]}
    if which in ("synthetic", "vita"):
        expected |= {"pass_curves", "mse_vs_k"}  # several trials
    assert set(drawn) == expected
    for name, fig in drawn.items():
        assert_labels_clear(f"{which} {name}", fig)
    if which == "t1":  # one category row per split, the figure grown for them
        dom = drawn["domains:t1"]
        ticks = [t for t in dom.axes[0].get_yticklabels() if t.get_text()]
        assert len(ticks) == len(report["benchmarks"]["t1"]["models"]["scripted/noisy:0.3"][
            "domains"]) >= 20
        assert dom.get_size_inches()[1] * dom.dpi >= 20 * 30


def test_long_model_names_and_many_models_stay_clear(report):
    """Forty-character model names, eight models: the legends and tick labels still clear."""
    big = json.loads(json.dumps(report))
    for scope in [big["models"], *(b["models"] for b in big["benchmarks"].values())]:
        base = dict(scope)
        scope.clear()
        for i in range(8):
            for m, s in base.items():
                scope[f"provider-{i}/a-rather-long-model-name-{m[:6]}-{i}"] = s
    for name, fig in figures(big).items():
        if fig is not None:
            assert_labels_clear(f"many models {name}", fig)


_OVERFLOW = """(() => {
  const de = document.documentElement, vw = de.clientWidth, bad = [];
  if (de.scrollWidth > de.clientWidth) bad.push(`page ${de.scrollWidth} > ${de.clientWidth}`);
  document.querySelectorAll("table").forEach((t, i) => {
    const r = t.getBoundingClientRect();
    if (t.scrollWidth > t.clientWidth || r.right > vw)
      bad.push(`table ${i} (${t.rows[0].innerText.slice(0, 60)}): ${t.scrollWidth}/${t.clientWidth}, right ${r.right}`);
  });
  document.querySelectorAll("td, th").forEach(c => {
    if (c.scrollWidth > c.clientWidth + 1) bad.push(`cell ${c.innerText.slice(0, 40)}`);
  });
  document.querySelectorAll("img.plot").forEach(i => {
    const r = i.getBoundingClientRect();
    if (r.right > vw || !i.complete || i.naturalWidth === 0) bad.push(`plot ${i.id}`);
  });
  return {bad, tables: document.querySelectorAll("table").length,
          plots: [...document.querySelectorAll("img.plot")].map(i => i.id)};
})()"""


@pytest.mark.parametrize("which", ["t1", "vita", "vita_real"])
def test_report_page_fits_1400px_in_headless_chromium(which, request, browser, tmp_path):
    report = request.getfixturevalue({"t1": "t1_report", "vita": "vita_report",
                                      "vita_real": "vita_real_report"}[which])
    page_path = write_html(report, tmp_path / f"{which}.html")
    page = browser(1400, 900)
    page.goto(page_path.as_uri())
    found = page.eval(_OVERFLOW)
    assert found["bad"] == [], found["bad"]
    assert found["tables"] >= 8
    assert "plot-leaderboard" in found["plots"] and f"plot-domains-{next(iter(report['benchmarks']))}" in found["plots"]
    shot = page.screenshot(SCREENS / f"report-{which}.png")
    img = Image.open(shot).convert("RGB")
    assert img.width == 1400 and not_blank(img)


@pytest.fixture(scope="module", params=[3, 6])
def many_models_report(request, tmp_path_factory):
    """VitaBench samples (three domains and the cross-domain set) and six T1 templates, two
    trials, with 3 or 6 agents (the oracle and noisy ones)."""
    n = request.param
    models = ", ".join(f'"{m}"' for m in ["scripted/oracle",
                                           *(f"scripted/noisy:0.{i}" for i in range(1, n))])
    tmp = tmp_path_factory.mktemp(f"models{n}")
    _run(tmp, "many", 'benchmarks = ["vitabench:delivery", "vitabench:instore", '
         '"vitabench:ota", "vitabench:delivery,instore,ota", "t1:single"]\nlimit = 6\n'
         f'trials = 2\nmodels = [{models}]\njudge_models = ["scripted/judge"]\n',
         "--out", str(tmp / "s.sqlite"))
    with RunStore(tmp / "s.sqlite") as s:
        return n, build_report(s, benchmarks=benchmark_info())


def test_a_report_of_3_or_6_models_fits_1400px(many_models_report, browser, tmp_path):
    """Per-domain tables name each model once over its Avg@k / CI / Pass^k columns, four
    models a table: 3 models were 1,616 px wide and 6 were 2,103 px."""
    n, report = many_models_report
    page = browser(1400, 900)
    page.goto(write_html(report, tmp_path / f"models-{n}.html").as_uri())
    assert page.eval("document.documentElement.scrollWidth") == 1400
    assert page.eval(_OVERFLOW)["bad"] == []
    grouped = page.eval("document.querySelectorAll('th.g').length")
    assert grouped == n * len(report["benchmarks"])  # each model once per benchmark
    shot = page.screenshot(SCREENS / f"report-{n}-models.png")
    assert Image.open(shot).width == 1400
