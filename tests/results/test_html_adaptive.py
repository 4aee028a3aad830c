"""The HTML report of an adaptive sweep in headless Chromium at 1,400 px: the "Adaptive
sweep" part of the Leaderboard section is there, fits, and is one row per model (fewest /
median / most trials of a task), not one per (model, task)."""

from __future__ import annotations

import contextlib
import io

import pytest

pytest.importorskip("matplotlib", reason="the HTML report needs matplotlib")
Image = pytest.importorskip("PIL.Image", reason="pillow (a matplotlib dependency) is needed")

from sweepbench.cli import UNDECIDED_EXIT, main  # noqa: E402
from sweepbench.results.render.html import write_html  # noqa: E402
from sweepbench.results.report import build_report  # noqa: E402
from sweepbench.store.runstore import RunStore  # noqa: E402

from .conftest import SCREENS  # noqa: E402
from .test_html import _OVERFLOW  # noqa: E402

MODELS = ["scripted/noisy:0.3", "scripted/noisy:0.32", "scripted/noisy:0.36",
          "scripted/noisy:0.6"]


@pytest.fixture(scope="module")
def adaptive_report(tmp_path_factory):
    """Until ranked over 4 models, two of them close: the cap is reached with pairs open."""
    store = tmp_path_factory.mktemp("adaptive") / "s.sqlite"
    argv = ["run", *(a for m in MODELS for a in ("--model", m)), "--benchmark", "t1:single",
            "--limit", "12", "--trials", "2", "--until-ranked", "--max-trials", "5",
            "--no-progress", "--json", "--out", str(store)]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == UNDECIDED_EXIT
    with RunStore(store) as s:
        return build_report(s)


def test_the_adaptive_section_fits_1400px_with_a_row_per_model(adaptive_report, browser,
                                                               tmp_path):
    page = browser(1400, 900)
    page.goto(write_html(adaptive_report, tmp_path / "adaptive.html").as_uri())
    found = page.eval(_OVERFLOW)
    assert found["bad"] == [], found["bad"]
    rows = page.eval("""(() => {
      const h = document.getElementById("adaptive"), out = [];
      for (let e = h.nextElementSibling; e && e.tagName !== "H2"; e = e.nextElementSibling)
        if (e.tagName === "TABLE")
          out.push([e.caption ? e.caption.innerText : "", e.tBodies[0].rows.length]);
      h.scrollIntoView();
      return out;
    })()""")
    pairs = adaptive_report["adaptive"]["benchmarks"]["t1"]["trials_per_pair"]
    cells = adaptive_report["adaptive"]["benchmarks"]["t1"]["trials_per_cell"]
    # every trial added after the first ones is charged to one pair, and a pair whose models
    # swapped places between rounds is one row, not two
    assert sum(pairs.values()) == sum(c["total"] for c in cells.values()) - 2 * 12 * len(MODELS)
    assert len({frozenset(p.split("|")) for p in pairs}) == len(pairs)
    assert rows == [["Scored trials per (model, task)", len(MODELS)],
                    ["Trials added to tell neighbours apart", len(pairs)]]
    text = page.eval("document.getElementById('adaptive').parentElement.innerText")
    assert "--max-trials reached before the rule held. Still open: " in text
    shot = page.screenshot(SCREENS / "report-adaptive.png", full_page=False)
    img = Image.open(shot).convert("RGB")
    assert img.width == 1400
