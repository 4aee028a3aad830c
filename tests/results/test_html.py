"""The HTML report: embedded PNG plots checked directly, and rendered in headless Chromium."""

from __future__ import annotations

import base64
import io
import json
import random
import re
import shutil
import subprocess
import tempfile

import pytest

pytest.importorskip("matplotlib", reason="the HTML report needs matplotlib")
Image = pytest.importorskip("PIL.Image", reason="pillow (a matplotlib dependency) is needed")

from sweepbench.results.html import FIG_PX, plots, render_html, write_html  # noqa: E402
from sweepbench.results.report import build_report  # noqa: E402
from sweepbench.results.store import EpisodeMeta, RunStore  # noqa: E402
from sweepbench.wire import EpisodeRecord, Usage  # noqa: E402

PLOT_NAMES = ["pass_curves", "mse_vs_k", "turns", "tokens", "latency"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    rng = random.Random(4)
    path = tmp_path_factory.mktemp("html") / "s.db"
    with RunStore(path) as s:
        s.begin_run("r", {"user_model": "U"}, prices={"weak": {"input": 1.0, "output": 2.0}},
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


def test_embedded_pngs_have_the_size_and_are_not_blank(report):
    pngs = plots(report)
    assert list(pngs) == PLOT_NAMES
    for name, b64 in pngs.items():
        assert b64 is not None, name
        img = decode(b64)
        assert img.size == FIG_PX, name
        assert not_blank(img), name


def test_page_is_self_contained_and_escaped(report, tmp_path):
    page = write_html(report, tmp_path / "sub" / "r.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "good &lt;b&gt;model&lt;/b&gt;" in page and "<b>model</b>" not in page
    srcs = re.findall(r'src="([^"]*)"', page)
    assert len(srcs) == len(PLOT_NAMES) and all(s.startswith("data:image/png;base64,")
                                                for s in srcs)
    assert "http://" not in page and "https://" not in page  # nothing fetched
    for heading in ("Leaderboard", "Per benchmark and domain", "Tokens, cost, latency",
                    "Paired comparisons", "Judge agreement", "Unreachable tasks", "Cost"):
        assert heading in page
    # the unreachable task with its (escaped) reason, and the stored prices' cost
    assert "<td>t8</td><td>8</td><td>no &lt;menu&gt;</td>" in page
    total = report["cost"]["total"]
    assert total == pytest.approx(2 * 9 * 4 * (500 * 1.0 + 50 * 2.0) / 1e6)  # weak's agent calls
    assert f"Total ${total:,.4f}" in page
    for img in re.findall(r'<img[^>]*>', page):
        b64 = re.search(r'base64,([^"]+)"', img).group(1)
        assert decode(b64).size == FIG_PX


def test_missing_data_is_a_note_not_an_empty_plot(report):
    bare = json.loads(json.dumps(report))
    for m in bare["models"].values():
        m.pop("profile", None)
        m["mse_vs_k"] = None
        for d in m["domains"].values():
            d.pop("profile", None)
    pngs = plots(bare)
    assert [n for n, p in pngs.items() if p is None] == ["mse_vs_k", "turns", "tokens",
                                                          "latency"]
    page = render_html(bare)
    assert page.count("<img") == 1 and "Latency distribution: no data" in page


def _chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser",
                                               "google-chrome")) if p), None)


_PROBE = """<script>
window.addEventListener("load", () => {
  const out = [...document.querySelectorAll("img.plot")].map(i => {
    const r = i.getBoundingClientRect();
    return {id: i.id, w: i.naturalWidth, h: i.naturalHeight, complete: i.complete,
            x: r.left + window.scrollX, y: r.top + window.scrollY};
  });
  const pre = document.createElement("pre"); pre.id = "probe";
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
});
</script></body>"""


def _run_chromium(binary: str, url: str, *extra: str, window: tuple[int, int]) -> str:
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", "--hide-scrollbars",
             "--force-device-scale-factor=1", f"--window-size={window[0]},{window[1]}",
             *extra, url],
            capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.skipif(_chromium() is None,
                    reason="headless Chromium is not installed (apt-get install chromium)")
def test_page_renders_in_headless_chromium(report, tmp_path):
    binary = _chromium()
    page = tmp_path / "report.html"
    write_html(report, page)
    window = (1600, 3200)
    # 1. Where the plots are and that the browser decoded them (a probe script, in a copy).
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _PROBE),
                     encoding="utf-8")
    dom = _run_chromium(binary, probe.as_uri(), "--virtual-time-budget=5000", "--dump-dom",
                        window=window)
    found = json.loads(re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S).group(1))
    assert [f["id"] for f in found] == [f"plot-{n}" for n in PLOT_NAMES]
    for f in found:
        assert f["complete"] and (f["w"], f["h"]) == FIG_PX, f
    # 2. A screenshot of the page itself: every plot's area shows a drawn, non-blank image.
    shot = tmp_path / "shot.png"
    _run_chromium(binary, page.as_uri(), f"--screenshot={shot}", window=window)
    img = Image.open(shot).convert("RGB")
    assert img.size == window
    for f in found:
        x, y = round(f["x"]), round(f["y"])
        assert y + FIG_PX[1] <= window[1], f"{f['id']} is below the screenshot"
        crop = img.crop((x, y, x + FIG_PX[0], y + FIG_PX[1]))
        assert crop.size == FIG_PX and not_blank(crop), f["id"]
    assert not_blank(img)
