"""The HTML report's building blocks and sections (``results.render.html``) from hand-made
reports, each checked as the exact HTML it gives: tables (text and number columns, groups,
splits), every section's words, notes where data is missing, the figures embedded with their
sizes and captions (figures replaced by test doubles: no matplotlib here), the page's
frame. tests/results/test_html.py renders real reports in Chromium."""

from __future__ import annotations

import base64
import io
import re

import pytest

from sweepbench.results.render import html as H

ALL = {"figs": ["leaderboard", "latency", "domains:vb"]}


class _FakeFigure:
    """A figure test double: ``savefig`` writes a PNG header of a given size."""

    def __init__(self, w: int, h: int) -> None:
        self.w, self.h = w, h

    def savefig(self, buf: io.BytesIO, format: str) -> None:
        assert format == "png"
        buf.write(b"\x89PNG\r\n\x1a\n" + bytes(8) + self.w.to_bytes(4, "big")
                  + self.h.to_bytes(4, "big") + b"rest")


@pytest.fixture
def fake_figures(monkeypatch):
    made = {"leaderboard": _FakeFigure(1100, 420), "latency": None,
            "domains:vb": _FakeFigure(900, 300)}
    monkeypatch.setattr(H, "figures", lambda report: {n: made[n] for n in report["figs"]})
    monkeypatch.setattr(H, "figure_specs", lambda report: [
        (n, c) for n, c in (("leaderboard", "Avg@k <by> model"), ("latency", "latency"),
                            ("domains:vb", "vb per domain")) if n in report["figs"]])
    return made


def test_plots_are_base64_pngs_or_none(fake_figures):
    out = H.plots(ALL)
    assert list(out) == ["leaderboard", "latency", "domains:vb"] and out["latency"] is None
    assert base64.b64decode(out["leaderboard"])[16:24] == (1100).to_bytes(4, "big") + \
        (420).to_bytes(4, "big")


def test_figures_are_embedded_with_their_size_and_an_escaped_caption(fake_figures):
    figs = H._figures(ALL)
    assert list(figs) == ["leaderboard", "domains:vb"]
    b64 = H.plots(ALL)["leaderboard"]
    assert figs["leaderboard"] == (
        '<figure><img class="plot" id="plot-leaderboard" alt="Avg@k &lt;by&gt; model" '
        f'width="1100" height="420" src="data:image/png;base64,{b64}"><figcaption>'
        "Avg@k &lt;by&gt; model</figcaption></figure>")
    assert 'id="plot-domains-vb"' in figs["domains:vb"]
    assert 'width="900" height="300"' in figs["domains:vb"]
    w, h = 2**24 + 3, 2**24 + 70000  # a byte in each place
    assert H._png_size(b"\x89PNG\r\n\x1a\n" + bytes(8) + w.to_bytes(4, "big")
                       + h.to_bytes(4, "big")) == (w, h)


def test_cells_and_tables():
    assert H._cell("<a>", False) == "<td>&lt;a&gt;</td>"
    assert H._cell(5, True) == '<td class="n">5</td>'
    assert H._cell(H._Raw("<wbr>"), False) == "<td><wbr></td>"
    assert H._table(["A<", "B", "C"], [["x", "1", "2"]], text_cols=2, caption="cap&") == (
        "<table><caption>cap&amp;</caption><thead><tr><th>A&lt;</th><th>B</th>"
        "<th class=n>C</th></tr></thead><tbody><tr><td>x</td><td>1</td>"
        '<td class="n">2</td></tr></tbody></table>')
    assert H._table(["A"], []) == "<table><thead><tr><th>A</th></tr></thead><tbody></tbody></table>"
    assert H._table(["A", "B"], [["x", 1], ["y", 2]], text_cols=2) == (
        "<table><thead><tr><th>A</th><th>B</th></tr></thead><tbody><tr><td>x</td><td>1</td>"
        "</tr><tr><td>y</td><td>2</td></tr></tbody></table>")
    assert H._split_table(["A", "B"], [["x", 1]], text_cols=2) == H._table(
        ["A", "B"], [["x", 1]], text_cols=2)
    assert H._grouped_table(["D"], ["m"], ["A"], [["d", "1"], ["e", "2"]]).endswith(
        '<tbody><tr><td>d</td><td class="n">1</td></tr><tr><td>e</td><td class="n">2</td>'
        "</tr></tbody></table>")
    assert H._grouped_table(["Domain", "Tasks"], ["m<1>", "m2"], ["Avg", "CI"],
                            [["d", "3", "1", "2", "3", "4"]]) == (
        "<table><thead><tr><th rowspan=2>Domain</th><th rowspan=2 class=n>Tasks</th>"
        "<th colspan=2 class=g>m&lt;1&gt;</th><th colspan=2 class=g>m2</th></tr><tr>"
        "<th class=n>Avg</th><th class=n>CI</th><th class=n>Avg</th><th class=n>CI</th>"
        '</tr></thead><tbody><tr><td>d</td><td class="n">3</td><td class="n">1</td>'
        '<td class="n">2</td><td class="n">3</td><td class="n">4</td></tr></tbody></table>')


def test_a_table_wider_than_eleven_numbers_is_split_repeating_its_text_columns():
    head = ["M"] + [f"c{i}" for i in range(11)]
    rows = [["m"] + [str(i) for i in range(11)]]
    assert H._split_table(head, rows) == H._table(head, rows)
    head12, rows12 = head + ["c11"], [rows[0] + ["11"]]
    assert H._split_table(head12, rows12) == (
        H._table(head, rows) + H._table(["M", "c11"], [["m", "11"]]))
    two = H._split_table(["A", "B"] + head12[1:], [["a", "b"] + rows12[0][1:]], text_cols=2)
    assert two == (H._table(["A", "B"] + head[1:], [["a", "b"] + rows[0][1:]], text_cols=2)
                   + H._table(["A", "B", "c11"], [["a", "b", "11"]], text_cols=2))
    head23 = ["M"] + [f"c{i}" for i in range(23)]
    parts = H._split_table(head23, [["m"] + [str(i) for i in range(23)]])
    assert parts.count("<table>") == 3 and parts.endswith(
        H._table(["M", "c22"], [["m", "22"]]))


def test_small_pieces():
    assert H._domain("a<,b") == "a&lt;,<wbr>b" and isinstance(H._domain("a"), H._Raw)
    assert H._p("x<") == "<p>x&lt;</p>" and H._p("x", "c") == "<p class=c>x</p>"
    assert H._note("n") == "<p class=note>n</p>"
    assert H._k({"a": {"k": 2}, "b": {"k": 2}}) == "2"
    assert H._k({"a": {"k": 2}, "b": {"k": 3}}) == "k" and H._k({"a": {"k": 0}}) == "k"
    assert H._k({"a": {}, "b": {"k": 4}}) == "4"
    assert H._value([1, "a", {"x": [2, 3]}]) == "1, a, x=2, 3" and H._value(None) == "None"
    assert H._value((1,)) == "1" and H._value({"a": 1, "b": "x"}) == "a=1, b=x"


def _models(**over) -> dict:
    base = {"tasks": 3, "avg": 0.5, "pass_at_k": 0.75, "pass_hat_k": 0.25, "k": 2,
            "ci95": [0.25, 0.75], "intervals": {"avg": {"fixed_set": [0.4, 0.6]}}}
    return {m: {**base, **s} for m, s in over.items()}


def _cells(html: str) -> list[str]:
    return re.findall(r"<t[hd](?: [^>]*)?>(.*?)</t[hd]>", html)


def test_a_plain_board():
    html = H._board(_models(b={"avg": 0.25}, a={}), state=True)
    assert _cells(html) == [
        "Model", "Tasks", "Avg@2", "95% CI, task population", "95% CI, these tasks", "Pass@2",
        "Pass^2",
        "a", "3", "50.0%", "25.0–75.0", "40.0–60.0", "75.0%", "25.0%",
        "b", "3", "25.0%", "25.0–75.0", "40.0–60.0", "75.0%", "25.0%"]


def test_a_board_with_every_optional_column():
    models = _models(
        a={"state": 0.4, "without_unreachable": {"avg": 0.6},
           "cost": {"total": 1.5, "per_pass": 0.5}, "errors": 1, "unjudged": 2,
           "bounds": [0.1, 0.9]},
        b={"avg": 0.25, "state": None, "unfinished": 4, "not_applicable": 5,
           "incomplete_tasks": 2, "undefined": "nothing <scored>"})
    assert _cells(H._board(models, state=True)) == [
        "Model", "Tasks", "Avg@2", "95% CI, task population", "95% CI, these tasks", "Pass@2",
        "Pass^2", "State check", "Avg@2 reachable tasks", "Errors", "Unjudged", "Unfinished",
        "Not applicable", "Avg@2 if unjudged / errored all failed – all passed", "$ total",
        "$ / pass",
        "a", "3", "50.0%", "25.0–75.0", "40.0–60.0", "75.0%", "25.0%", "40.0%", "60.0%", "1",
        "2", "0", "0", "10.0–90.0", "$1.5000", "$0.5000",
        "b (undefined: nothing &lt;scored&gt;) (incomplete)", "3", "25.0%", "25.0–75.0",
        "40.0–60.0", "incomplete", "incomplete", "—", "25.0%", "0", "0", "4", "5", "—", "—",
        "—"]
    assert "State check" not in H._board(models, state=False)
    assert "State check" not in H._board(_models(a={"state": None}), state=True)
    assert "$ total" not in H._board(_models(a={"cost": {"total": 0}}), state=True)


def test_k_note_and_source():
    assert H._k_note({"value": 3, "requested": True}) == (
        "One k for every row: k = 3 (asked for). Avg@k is the mean over tasks of per-task "
        "pass rates.")
    assert H._k_note({}) == ("One k for every row: k = None (the fewest scored trials of any "
                             "task). Avg@k is the mean over tasks of per-task pass rates.")
    src = {"label": "L", "method": "state"}
    assert H._source(src) == "Pass from L (the state check)."
    assert H._source({**src, "explicit": True}) == "Pass from L (the state check), chosen explicitly."
    assert H._source({**src, "method": "full", "judge": "J"}) == "Pass from L (J / full)."
    assert H._source({**src, "method": "full"}) == "Pass from L (no judge yet / full)."
    assert H._source({**src, "method": "likert", "applicable": False}) == (
        "likert does not apply to this benchmark: its episodes are not applicable (excluded, "
        "not failed).")
    assert H._source({**src, "applicable": True}) == "Pass from L (the state check)."


def test_the_leaderboard_section():
    src = {"label": "L", "method": "state"}
    one = {"benchmarks": {"t1": {"source": src, "models": _models(a={}), "k": {"value": 2}}}}
    html = H._leaderboard(one, {"leaderboard": "<FIG>"})
    assert html == ("<FIG><h3>t1</h3><p>Pass from L (the state check).</p>"
                    + H._board(_models(a={}), state=False)
                    + H._note(H._k_note({"value": 2})))
    assert H._leaderboard({"benchmarks": {}}, {}) == H._note("No episodes in this selection.")
    two = {"benchmarks": {"t1": {"source": src, "models": _models(a={"incomplete_tasks": 3})},
                          "v<b": {"source": {**src, "method": "full", "judge": "J"},
                                  "models": _models(a={"state": 0.5})}},
           "models": _models(a={"state": 0.5}), "overall": {"label": "pooled <all>"}}
    html = H._leaderboard(two, {})
    assert html.startswith("<h3>t1</h3>")
    assert H._note("a: incomplete, 3 tasks with fewer than k scored trials: no Pass@k or "
                   "Pass^k; its Avg@k is the mean of per-task rates over the trials it "
                   "has.") in html
    assert "<h3>v&lt;b</h3><p>Pass from L (J / full).</p>" in html
    assert html.endswith("<h3>Overall</h3><p>pooled &lt;all&gt;.</p>"
                         + H._board(two["models"], state=False))
    assert html.count("State check") == 1  # the judged benchmark's board only


def test_the_adaptive_section():
    assert H._adaptive({}) == "" and H._adaptive({"adaptive": {}}) == ""
    a = {"runs": [{"run_id": "r1", "stopping_rule": "ci", "benchmarks": {
        "t1": {"rounds": 3, "trials": 40, "cells": 10, "stopped": "budget",
               "unmet": {"wide": {"a": 0.123456, "b": None}, "open_pairs": ["a|b"]}},
        "vb": {"rounds": 1, "trials": 4, "cells": 2, "why": "met"}}},
        {"run_id": "r2", "rule": "fixed"}],
        "benchmarks": {"t1": {"trials_per_cell": {"m": {"min": 2, "median": 3, "max": 1000,
                                                        "total": 12345}},
                              "trials_per_pair": {"a|b": 6}, "pass_k": "Pass@k of 4"},
                       "vb": {"trials_per_cell": {}}},
        "interval": "intervals are adaptive"}
    assert H._adaptive({"adaptive": a}) == "".join([
        "<h3 id=adaptive>Adaptive sweep</h3>",
        "<p>Run r1: ci.</p>",
        ("<p>t1: stopped after 3 rounds (batches after the first trials), 40 trials over 10 "
         "(model, task) cells: budget. Still open: a at ±0.123; b: nothing scored; a vs b.</p>"),
        ("<p>vb: stopped after 1 rounds (batches after the first trials), 4 trials over 2 "
         "(model, task) cells: met.</p>"),
        "<p>Run r2: fixed.</p>",
        H._table(["Benchmark", "Model", "Fewest trials of a task", "Median", "Most",
                  "Scored trials"], [["t1", "m", "2", "3", "1,000", "12,345"]], text_cols=2,
                 caption="Scored trials per (model, task)"),
        H._table(["Benchmark", "Neighbours", "Trials charged"], [["t1", "a vs b", "6"]],
                 text_cols=2, caption="Trials added to tell neighbours apart"),
        "<p class=note>t1: Pass@k of 4.</p>",
        "<p class=note>Intervals are adaptive.</p>"])
    bare = H._adaptive({"adaptive": {"runs": [], "benchmarks": {"t1": {"trials_per_cell": {}}},
                                     "interval": ""}})
    assert bare == "<h3 id=adaptive>Adaptive sweep</h3>"


def test_the_metrics_section():
    src = {"judge": "state", "method": "state"}
    none = {"benchmarks": {"t1": {"source": src, "models": {"a": {"avg": 0.5, "method_scores": {
        "state/state": 0.5}}}}}}
    assert H._metrics(none) == H._note("No judgment metrics or other judges in this selection.")
    assert H._metrics({}) == H._note("No judgment metrics or other judges in this selection.")
    models = {"a": {"avg": 0.5, "metrics": {"output_em": 0.5, "tool_f1": 0.25},
                    "method_scores": {"J/likert": 0.75, "state/state": 0.5}},
              "b": {"avg": 0.9, "method_scores": {"A/full": 1.0}}}
    html = H._metrics({"benchmarks": {"t<1": {"source": src, "models": models},
                                      "x": {"source": src, "models": {"a": {"avg": 0.1}}}}})
    assert html == (
        "<p>Means over the episodes that have them; metrics come from the headline "
        "judgment&#x27;s details, judges&#x27; scores from each judge.</p><h3>t&lt;1</h3>"
        + H._split_table(["Model", "Tool F1", "Output EM", "Full-trajectory rubrics (A)",
                          "Likert (J)"],
                         [["b", "—", "—", "100.0%", "—"], ["a", "25.0%", "50.0%", "—", "75.0%"]]))
    own = H._metrics({"benchmarks": {"v": {"source": {"judge": "J", "method": "likert"},
                                           "models": models}}})
    assert "Likert (J)" not in own and "Full-trajectory rubrics (A)" in own
    nojudge = H._metrics({"benchmarks": {"v": {"source": {"method": "full"}, "models": {
        "a": {"avg": 0.5, "method_scores": {"None/full": 0.5}}}}}})
    assert nojudge.startswith("<p class=note>")


def _dom(**cells) -> dict:
    return {d: {"tasks": n, "avg": a, "ci95": [a, a], "pass_hat_k": a}
            for d, (n, a) in cells.items()}


def test_the_domains_section():
    assert H._domains({"benchmarks": {}}, {}) == H._note("No per-domain results in this "
                                                         "selection.")
    assert H._domains({"benchmarks": {"t1": {"models": _models(a={})}}}, {}) == H._note(
        "No per-domain results in this selection.")
    models = {"a": {"avg": 0.5, "k": 1, "domains": _dom(hotel=(2, 0.5), **{"x,y": (1, 1.0)})},
              "b": {"avg": 0.9, "k": 1, "domains": _dom(hotel=(4, 0.25))}}
    html = H._domains({"benchmarks": {"vb": {"models": models}}}, {"domains:vb": "<FIG>"})
    assert html == "<h3>vb</h3><FIG>" + H._grouped_table(
        ["Domain", "Tasks"], ["b", "a"], ["Avg@1", "95% CI (task population)"],
        [[H._domain("hotel"), "4", "25.0%", "25.0–25.0", "50.0%", "50.0–50.0"],
         [H._domain("x,y"), "1", "—", "—", "100.0%", "100.0–100.0"]])
    for m in models.values():
        m["k"] = 2
    html = H._domains({"benchmarks": {"vb": {"models": models}}}, {})
    assert html.startswith("<h3>vb</h3>" + H._note("vb per domain: no tokens or turns "
                                                    "recorded, no plot."))
    assert html.endswith(H._grouped_table(
        ["Domain", "Tasks"], ["b", "a"], ["Avg@2", "95% CI (task population)", "Pass^2"],
        [[H._domain("hotel"), "4", "25.0%", "25.0–25.0", "25.0%", "50.0%", "50.0–50.0",
          "50.0%"],
         [H._domain("x,y"), "1", "—", "—", "—", "100.0%", "100.0–100.0", "100.0%"]]))
    five = {f"m{i}": {"avg": i / 10, "k": 1, "domains": _dom(d=(1, 0.5))} for i in range(5)}
    html = H._domains({"benchmarks": {"vb": {"models": five}}}, {})
    assert html.count("<table>") == 2 and html.endswith(H._grouped_table(
        ["Domain", "Tasks"], ["m0"], ["Avg@1", "95% CI (task population)"],
        [[H._domain("d"), "1", "50.0%", "50.0–50.0"]]))


def test_the_cost_section():
    r = {"cost": {"total": 2.5, "agent": 1.0, "user": 0.5, "judge": 1.0, "unpriced_calls": 1234,
                  "calls": 5678},
         "benchmarks": {"t1": {"models": {"a": {"avg": 0.5, "cost": {"total": 2.5}}}}}}
    html = H._cost(r, {"cost_vs_score": "<FIG>"})
    assert html == (
        "<p>Total $2.5000: agent $1.0000, user simulator $0.5000, judge $1.0000; 1,234 of "
        "5,678 model calls without a stored price (not in the cost).</p>"
        + H._table(["Model", "Benchmark", "Agent", "User simulator", "Judge", "Total",
                    "$ / episode", "$ / pass"],
                   [["a", "t1", "—", "—", "—", "$2.5000", "—", "—"]], text_cols=2) + "<FIG>")
    assert H._cost({}, {}) == (
        "<p>Total —: agent —, user simulator —, judge —; 0 of 0 model calls without a stored "
        "price (not in the cost).</p>" + H._table(
            ["Model", "Benchmark", "Agent", "User simulator", "Judge", "Total", "$ / episode",
             "$ / pass"], [], text_cols=2)
        + H._note("Cost against score: no priced calls in this selection."))


def test_the_profiles_section():
    assert H._profiles({"models": {"a": {"avg": 0.5}}}, {}) == H._note(
        "No profile in this report.")
    profile = {"episodes": 12, "turns": {"mean": 3.456}, "tool_calls": {"mean": 1234.5},
               "agent_tokens": {"prompt": 12345, "cached_prompt": 2000, "completion": 999},
               "user_tokens": {"prompt": 5, "completion": 1500000},
               "latency_s": {"agent": {"p50": 0.085, "p95": 1.5, "p99": 2.0},
                             "user": {"p50": 0.5}},
               "retries": 3, "rate_limited": 2, "stalls": {"hung": 1, "hedged": 4},
               "wall_s": {"mean": 12.0}}
    r = {"models": {"a": {"avg": 0.5, "profile": profile}, "b": {"avg": 0.9}},
         "stalls_by_endpoint": {"E": {"calls": 10, "hung": 1, "hedged": 2, "hedge_wins": 1}}}
    html = H._profiles(r, {"latency": "<FIG>"})
    assert html == (
        "<p>Per episode (means over the model&#x27;s episodes); latency of one model call.</p>"
        + H._table(["Model", "Episodes", "Turns", "Tool calls", "Agent prompt tokens",
                    "of them cached", "Agent completion tokens", "User prompt tokens",
                    "User completion tokens"],
                   [["a", "12", "3.46", "1,234", "12.3k", "2k", "999", "5", "1.5M"]])
        + H._table(["Model", "Agent call p50", "p95", "p99", "User call p50", "p95", "p99",
                    "Retries", "HTTP 429", "Hung", "Hedged", "Wall time / episode"],
                   [["a", "85 ms", "1.5 s", "2 s", "500 ms", "—", "—", "3", "2", "1", "4",
                     "12 s"]])
        + "<p>Requests abandoned for want of a first byte (hung) and hedge copies sent, per "
          "endpoint:</p>"
        + H._table(["Endpoint", "Calls", "Hung (abandoned)", "Hedged", "Won by a copy"],
                   [["E", "10", "1", "2", "1"]])
        + "<FIG>")
    bare = H._profiles({"models": {"a": {"avg": 0.5, "profile": {"episodes": 1}}}}, {})
    assert bare.endswith(H._note("Latency distribution: no latency recorded."))
    assert "Requests abandoned" not in bare
    assert H._stalls({}) == ""


def test_the_errors_section():
    assert H._errors({}) == H._note("No episode ended in error.")
    r = {"error_reasons": [{"benchmark": "t1", "reason": "HTTP <500>", "models": {"a": 2, "b": 1},
                            "example_episode": "ep-1", "episodes": 3}],
         "terminations": {"t<1": {"a": {"user_stop": 2, "error": 1}, "b": {"max_steps": 4}}}}
    assert H._errors(r) == (
        "<p>Episodes that ended in error count as failures. Grouped by reason (numbers and "
        "ids masked); one example each.</p>"
        + H._table(["Benchmark", "Reason", "By model", "Example episode", "Episodes"],
                   [["t1", "HTTP <500>", "a: 2; b: 1", "ep-1", "3"]], text_cols=4)
        + "<h3>How t&lt;1 episodes ended</h3>"
        + H._split_table(["Model", "error", "max_steps", "user_stop"],
                         [["a", "1", "0", "2"], ["b", "0", "4", "0"]]))


def test_the_unreachable_comparisons_and_agreement_sections():
    assert H._unreachable({}) == H._note("No unreachable tasks in this selection.")
    r = {"unreachable": [{"benchmark": "vb", "domain": "d", "task_id": "7", "reason": "no dish",
                          "episodes": 3}]}
    assert H._unreachable(r) == (
        "<p>No agent can pass these tasks (a defect of their data); the &#x27;reachable "
        "tasks&#x27; columns leave them out.</p>"
        + H._table(["Benchmark", "Domain", "Task", "Reason", "Episodes"],
                   [["vb", "d", "7", "no dish", "3"]], text_cols=4))
    assert H._comparisons({}) == H._note("Fewer than two models with common tasks.")
    c = {"a": "x", "b": "y", "tasks": 9, "mean_a": 0.5, "mean_b": 0.25, "diff": 0.25,
         "ci95": [0.05, 0.45], "p_value": 0.012345, "p_adjusted": 0.0246, "significant": True}
    fam = {"scope": "pooled", "pairs": 1, "models": 2, "correction": "holm", "alpha": 0.05}
    html = H._comparisons({"comparisons": [c, {**c, "diff": -0.5, "significant": False}],
                           "comparisons_family": fam})
    assert html == (
        "<p>Pooled leaderboard. Family: pooled, 1 pairs of 2 models; p adjusted over the family "
        "(Holm); significant at adjusted p ≤ 0.05. Per-task pass rates on common tasks.</p>"
        + H._table(["Model A", "Model B", "Common tasks", "A pass rate", "B pass rate", "A − B",
                    "95% CI (pts)", "p (raw)", "p (Holm)", "Significant"],
                   [["x", "y", "9", "50.0%", "25.0%", "+25.0 pts", "5.0–45.0", "0.0123",
                     "0.0246", "yes"],
                    ["x", "y", "9", "50.0%", "25.0%", "-50.0 pts", "5.0–45.0", "0.0123",
                     "0.0246", "no"]], text_cols=2))
    bh = H._comparisons({"comparisons": [c], "comparisons_family": {**fam, "correction": "bh"}})
    assert "(Benjamini-Hochberg)" in bh and "p (Benjamini-Hochberg)" in bh
    other = H._comparisons({"comparisons": [c], "comparisons_family": {"correction": "none"}})
    assert "(none)" in other and "Family: None, None pairs of None models" in other
    assert H._agreement({}) == H._note("One judge only: no agreement to measure.")
    a = {"a": "state/state", "b": "J/likert", "episodes": 10, "pass_agreement": 0.9,
         "pass_kappa": 0.61234, "rubric_items": 40, "rubric_agreement": 0.75,
         "rubric_kappa": None}
    assert H._agreement({"judge_agreement": [a]}) == H._table(
        ["Judge A", "Judge B", "Episodes", "Pass agreement", "Pass κ", "Rubric items",
         "Rubric agreement", "Rubric κ"],
        [["State check", "Likert (J)", "10", "90.0%", "0.612", "40", "75.0%", "—"]],
        text_cols=2)


def test_the_configuration_section():
    assert H._configuration({}) == (
        "<p>Report made by sweepbench unknown. Keys are never stored: endpoints name the "
        "variable that holds theirs.</p>")
    run = {"run_id": "r<1>", "status": "done", "command": "sweepbench run", "created_at": "t0",
           "finished_at": None, "headlines": {"vb": "full"}, "settings": {"k": [1, 2]},
           "endpoints": [{"name": "A", "base_url": "http://a", "rpm": 60},
                         {"name": "B", "max_retries": 3}],
           "prices": {"B": {"input": 2.0, "output": 0.075}, "A": {"input": 1.0},
                      "bad": 3}}
    conf = {"report_sweepbench": "1.2", "runs": [run, {"run_id": "r2"}]}
    assert H._configuration({"configuration": conf}) == "".join([
        ("<p>Report made by sweepbench 1.2. Keys are never stored: endpoints name the variable "
         "that holds theirs.</p>"),
        "<h3>Run r&lt;1&gt;</h3>",
        H._table(["Setting", "Value"], [["Status", "done"], ["Command", "sweepbench run"],
                                        ["Started", "t0"],
                                        ["sweepbench", "not recorded (older run)"],
                                        ["Headline of vb", "full"], ["k", "1, 2"]],
                 text_cols=2),
        H._table(["Endpoint", "Base URL", "RPM", "Retries"],
                 [["A", "http://a", "60", "—"], ["B", "—", "—", "3"]], text_cols=4,
                 caption="Endpoints"),
        H._table(["Endpoint", "Input $/Mtok", "Cached input $/Mtok", "Output $/Mtok"],
                 [["A", "$1.00", "—", "—"], ["B", "$2.00", "—", "$0.075"]],
                 caption="Prices stored with the run"),
        "<h3>Run r2</h3>",
        H._table(["Setting", "Value"], [["sweepbench", "not recorded (older run)"]],
                 text_cols=2)])
    run2 = {"run_id": "r", "sweepbench": "0.9"}
    assert "<td>sweepbench</td><td>0.9</td>" in H._configuration(
        {"configuration": {"runs": [run2]}})


def test_the_page(fake_figures, tmp_path):
    report = {"run_id": "r1", "status": "done <ok>", "benchmarks": {}, "models": {}, **ALL}
    page = H.render_html(report)
    assert page.count(H._CSS) == 1
    lines = page.replace(H._CSS, "CSS").split("\n")
    title = "sweepbench report (r1)"
    assert lines[:6] == [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title><style>CSS</style></head><body>",
        f"<h1>{title}</h1>",
        "<nav>" + "".join(f'<a href="#{k}">{v}</a>' for k, v in H._SECTIONS) + "</nav>"]
    assert lines[6] == (
        "<p>Status: done &lt;ok&gt;. Each benchmark is scored by its headline (its paper&#x27;s "
        "metric). Errors count as failures; unjudged and unfinished episodes are not scored "
        "(counted). Avg@k is the mean over tasks of per-task pass rates; one k per "
        "leaderboard. 95% CIs: over the task population (other tasks like these) and over "
        "trials on these tasks. Rates are percentages.</p>")
    figs = H._figures(report)
    assert lines[7] == ('<h2 id="leaderboard">Leaderboard</h2>' + figs["leaderboard"]
                        + H._note("No episodes in this selection."))
    assert lines[9] == ('<h2 id="curves">Pass@k and Pass^k</h2>'
                        + H._note("Pass@k and Pass^k curves need more than one trial per "
                                  "task."))
    assert [line.split(">")[0] for line in lines[7:18]] == [
        f'<h2 id="{k}"' for k, _ in H._SECTIONS]
    assert lines[-1] == "</body></html>" and len(lines) == 19
    named = H.render_html({**report, "stores": ["a.db", "b.db"]})
    assert "<title>sweepbench report (a.db, b.db)</title>" in named
    assert "<title>mine &amp; yours</title>" in H.render_html(report, title="mine & yours")
    path = H.write_html(report, tmp_path / "sub" / "r.html", title="T")
    assert path == tmp_path / "sub" / "r.html"
    assert path.read_text(encoding="utf-8") == H.render_html(report, title="T")


def test_curves_embed_both_figures_in_order(monkeypatch):
    monkeypatch.setattr(H, "_figures", lambda report: {"mse_vs_k": "<MSE>",
                                                       "pass_curves": "<PASS>"})
    page = H.render_html({"run_id": "r", "benchmarks": {}, "models": {}})
    assert '<h2 id="curves">Pass@k and Pass^k</h2><PASS><MSE>\n' in page
    monkeypatch.setattr(H, "_figures", lambda report: {"mse_vs_k": "<MSE>"})
    page = H.render_html({"run_id": "r", "benchmarks": {}, "models": {}})
    assert '<h2 id="curves">Pass@k and Pass^k</h2><MSE>\n' in page


def test_the_edges_of_boards_domains_metrics_and_configuration():
    base = {"k": 2, "tasks": 3, "pass_at_k": 0.5, "pass_hat_k": 0.5, "avg": 0.5}
    bound = "Avg@2 if unjudged / errored all failed – all passed"
    assert _cells(H._board({"a": {**base, "errors": 1}}, state=True))[7:9] == ["Errors", bound]
    assert _cells(H._board({"a": {**base, "unjudged": 1}}, state=True))[7:9] == [
        "Unjudged", bound]
    assert bound not in H._board({"a": {**base, "unfinished": 1}}, state=True)
    src = {"label": "L", "method": "state"}
    under_check = H._leaderboard({"benchmarks": {"t1": {"source": src, "models": {
        "a": {**base, "state": 0.5}}}}}, {})
    assert "State check" not in under_check
    # domains: single ones first, a domain no model has a cell for, a benchmark without
    models = {"a": {"avg": 0.5, "k": 1, "domains": {"b": {"tasks": 2, "avg": 0.5},
                                                   "a,b": {"tasks": 1, "avg": 1.0}, "zz": None}}}
    html = H._domains({"benchmarks": {"none": {"models": {"x": {"avg": 0.1}}},
                                      "vb": {"models": models}}}, {})
    assert html.startswith("<h3>vb</h3>") and html.endswith(H._grouped_table(
        ["Domain", "Tasks"], ["a"], ["Avg@1", "95% CI (task population)"],
        [[H._domain("b"), "2", "50.0%", "—"], [H._domain("zz"), "0", "—", "—"],
         [H._domain("a,b"), "1", "100.0%", "—"]]))
    # metrics: a benchmark with metrics and no other judge, after one with neither; the
    # state check's scores are not another judge's even when the headline is a judge's
    judged = {"source": {"judge": "J", "method": "full"}, "models": {"a": {
        "avg": 0.5, "metrics": {"tool_f1": 0.5}, "method_scores": {"state/state": 0.25}}}}
    html = H._metrics({"benchmarks": {"x": {"source": src, "models": {"a": {"avg": 0.1}}},
                                      "t1": judged}})
    assert html.endswith("<h3>t1</h3>" + H._split_table(["Model", "Tool F1"], [["a", "50.0%"]]))
    run = {"run_id": "r", "finished_at": "t1", "prices": {"A": {"cached_input": 0.5}}}
    html = H._configuration({"configuration": {"runs": [run]}})
    assert "<tr><td>Finished</td><td>t1</td></tr>" in html
    assert "<tr><td>A</td><td class=\"n\">—</td><td class=\"n\">$0.50</td>" in html
    a = {"a": "x/full", "b": "y/full", "episodes": 1, "pass_agreement": 1.0, "pass_kappa": 1,
         "rubric_items": 2, "rubric_agreement": 0.5, "rubric_kappa": -0.25}
    assert _cells(H._agreement({"judge_agreement": [a]}))[-1] == "-0.25"


def test_a_page_with_its_figures_in_place(fake_figures):
    models = {"a": {"avg": 0.5, "k": 1, "tasks": 1, "pass_at_k": 0.5, "pass_hat_k": 0.5,
                    "domains": {"d": {"tasks": 1, "avg": 0.5}}, "profile": {"episodes": 1}}}
    report = {"run_id": "r", "benchmarks": {"vb": {"source": {"label": "L", "method": "state"},
                                                   "models": models}},
              "models": models, "figs": ["domains:vb", "latency"]}
    figs = H._figures(report)
    page = H.render_html(report)
    assert '<h2 id="domains">Per domain</h2><h3>vb</h3>' + figs["domains:vb"] in page
    assert H._note("Latency distribution: no latency recorded.") in page  # no figure drawn
    assert "leaderboard" not in figs
