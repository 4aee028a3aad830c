"""Terminal tables at 80 columns: a title is a line of its own (not centred over a narrow
table and wrapped to its width), and a table a little too wide for its borders drops them
before it is split; the layout's arithmetic, and each table of a report (title, columns,
rows, caption) from a hand-made report."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from sweepbench.results.render import terminal as term
from sweepbench.results.render.terminal import FitTable

TITLE = ("vitabench@2025-12: pass from the sliding-window rubric judge (scripted/judge)")
HEAD = ["Model", "Tasks", "k", "Avg@4", "95% CI", "Pass@4", "Pass^4", "State"]
ROWS = [["scripted/oracle", "17", "4", "100.0%", "100.0–100.0", "100.0%", "100.0%", "100.0%"],
        ["scripted/noisy:0.3", "17", "4", "35.3%", "22.1–48.5", "76.5%", "5.9%", "35.3%"]]


def _lines(table: FitTable, width: int) -> list[str]:
    console = Console(record=True, width=width, file=io.StringIO())
    console.print(table)
    return console.export_text().splitlines()


def test_the_quick_start_leaderboard_is_one_table_with_a_one_line_title_at_80_columns():
    lines = _lines(FitTable(TITLE, HEAD, ROWS), 80)
    assert lines == [
        TITLE,
        "Model               Tasks  k   Avg@4       95% CI  Pass@4  Pass^4   State",
        "─" * 73,
        "scripted/oracle        17  4  100.0%  100.0–100.0  100.0%  100.0%  100.0%",
        "scripted/noisy:0.3     17  4   35.3%    22.1–48.5   76.5%    5.9%   35.3%"]


def test_a_table_that_fits_its_borders_keeps_them_and_its_title_above():
    lines = _lines(FitTable(TITLE, HEAD, ROWS), 120)
    assert lines[0] == TITLE
    assert lines[1].startswith("┏━━━━") and lines[2].startswith("┃ Model")
    assert max(map(len, lines)) == 84


def test_a_table_too_wide_even_without_borders_is_split_with_each_title_on_one_line():
    head = HEAD + [f"Extra {i}" for i in range(6)]
    rows = [r + ["12.5%"] * 6 for r in ROWS]
    lines = _lines(FitTable("metrics", head, rows), 80)
    assert [line for line in lines if line.startswith("metrics")] == [
        "metrics (1/2)", "metrics (2/2)"]
    assert max(map(len, lines)) <= 80


def test_a_table_one_column_too_wide_without_borders_closes_up_before_it_splits():
    """Two intervals per row make the leaderboard 81 columns wide with two spaces between
    columns: at 80 it is drawn with one space, whole, rather than in two parts."""
    head = ["Model", "Tasks", "Avg@4", "95% CI task population", "95% CI these tasks",
            "Pass@4", "Pass^4", "State"]
    rows = [["scripted/oracle", "17", "100.0%", "81.6–100.0", "94.7–100.0", "100.0%",
             "100.0%", "100.0%"],
            ["scripted/noisy:0.3", "17", "35.3%", "22.2–51.1", "25.0–47.2", "76.5%", "5.9%",
             "35.3%"]]
    lines = _lines(FitTable("vitabench", head, rows), 80)
    assert lines[0] == "vitabench" and not any("(1/2)" in line for line in lines)
    assert lines[-2:] == [
        "scripted/oracle       17 100.0%       81.6–100.0 94.7–100.0 100.0% 100.0% 100.0%",
        "scripted/noisy:0.3    17  35.3%        22.2–51.1  25.0–47.2  76.5%   5.9%  35.3%"]
    assert len(_lines(FitTable("vitabench", head, rows), 81)[-1]) == 81  # two spaces at 81


# ---- the layout's arithmetic and each table of a report, at their edges ---------------------


def test_a_columns_need_and_natural_width():
    t = FitTable("t", ["Model name", "Avg 95% CI", "N"],
                 [["a-very-long-model-name-that-wraps-somewhere-past-30", "12.5%", "7"],
                  ["short", "100.0%", "12345"]], key_min=30)
    assert [t._natural(i) for i in range(3)] == [51, 10, 5]
    # text may wrap down to key_min (or its longest header word); numbers never
    assert [t._need(i) for i in range(3)] == [30, 6, 5]
    assert FitTable("t", ["Model"], [["ab"]], key_min=30)._need(0) == 5  # header word
    assert FitTable("t", ["M"], [["abcdef"]], key_min=4)._need(0) == 4
    assert FitTable("t", ["M"], [["abc"]], key_min=4)._need(0) == 3
    assert FitTable("t", ["A B"], [])._need(0) == 1 and FitTable("t", ["A B"], [])._natural(0) == 3
    assert FitTable("t", ["", "x"], [["ab", "1"]], wrap=(1,)).wrap == {0, 1}
    assert FitTable("t", ["", "x", "y"], [["ab", "1", "2"]], keep=2).wrap == {0, 1}


def test_layout_packs_columns_into_tables_and_gives_room_back():
    t = FitTable("t", ["Key", "aaaa", "bbbb", "cccc"],
                 [["k" * 40, "1", "2", "3"]], key_min=10)
    # boxed: 3 a column beyond its width, 1 for the edge: 1 + 13 + 7 * 3 = 35 for one table
    assert t.layout(35) == [{0: 10, 1: 4, 2: 4, 3: 4}]
    assert t.layout(36) == [{0: 11, 1: 4, 2: 4, 3: 4}]  # the key grows back first
    # split: each table's room goes to its key (34 - 1 - 27 = 6 and 34 - 1 - 20 = 13)
    assert t.layout(34) == [{0: 16, 1: 4, 2: 4}, {0: 23, 3: 4}]
    assert t.layout(100) == [{0: 40, 1: 4, 2: 4, 3: 4}]  # no wider than natural
    # bare: 2 between columns, none at the edges: -2 + 12 + 6 * 3 = 28
    assert t.layout(28, term._BARE) == [{0: 10, 1: 4, 2: 4, 3: 4}]
    assert t.layout(27, term._BARE) == [{0: 15, 1: 4, 2: 4}, {0: 21, 3: 4}]
    assert t.layout(10, term._BARE) == [{0: 10, 1: 4}, {0: 10, 2: 4}, {0: 10, 3: 4}]
    # a header that wrapped (numbers narrower than it) widens back after the text
    h = FitTable("t", ["K", "Long header"], [["key", "1"]], key_min=3)
    assert h.layout(1 + 3 * 2 + 3 + 6) == [{0: 3, 1: 6}]
    assert h.layout(1 + 3 * 2 + 3 + 8) == [{0: 3, 1: 8}]
    assert h.layout(1 + 3 * 2 + 3 + 20) == [{0: 3, 1: 11}]


def test_fit_tries_boxed_then_bare_then_tight_then_splits_bare():
    t = FitTable("t", ["Key", "aaaa", "bbbb", "cccc"], [["k" * 10, "1", "2", "3"]], key_min=10)
    assert t.fit(35) == ([{0: 10, 1: 4, 2: 4, 3: 4}], term._BOXED)
    assert t.fit(34) == ([{0: 10, 1: 4, 2: 4, 3: 4}], term._BARE)  # 28 wide
    assert t.fit(28) == ([{0: 10, 1: 4, 2: 4, 3: 4}], term._BARE)
    assert t.fit(27) == ([{0: 10, 1: 4, 2: 4, 3: 4}], term._TIGHT)  # -1 + 22 + 3 = 25
    assert t.fit(25) == ([{0: 10, 1: 4, 2: 4, 3: 4}], term._TIGHT)
    assert t.fit(24) == ([{0: 10, 1: 4, 2: 4}, {0: 10, 3: 4}], term._BARE)


def test_each_style_is_drawn_as_its_own_spacing():
    t = FitTable("title", ["Key", "aaaa", "bbbb"], [["k" * 10, "1", "2"]], key_min=10,
                 caption="said below")
    boxed = _lines(t, 40)
    assert boxed[0] == "title" and boxed[-1] == "said below"
    assert boxed[1].startswith("┏") and boxed[4] == "│ kkkkkkkkkk │    1 │    2 │"
    assert _lines(t, 27)[1:] == ["Key         aaaa  bbbb", "─" * 22, "kkkkkkkkkk     1     2",
                                 "said below"]
    assert _lines(t, 21)[1:] == ["Key        aaaa bbbb", "─" * 20, "kkkkkkkkkk    1    2",
                                 "said below"]
    split = _lines(t, 17)
    assert split == ["title (1/2)", "Key         aaaa", "─" * 16, "kkkkkkkkkk     1",
                     "title (2/2)", "Key         bbbb", "─" * 16, "kkkkkkkkkk     2",
                     "said below"]
    assert _lines(FitTable("t", ["Key"], [["k"]]), 40)[-1].startswith("└")  # no caption


def test_markup_in_a_cell_is_printed_literally():
    lines = _lines(FitTable("[bold]t[/]", ["[red]K"], [["[x]"]]), 40)
    assert lines[0] == "[bold]t[/]" and "[red]K" in lines[2] and "[x]" in lines[4]


def _models(**over) -> dict:
    base = {"tasks": 3, "avg": 0.5, "pass_at_k": 0.75, "pass_hat_k": 0.25, "k": 2,
            "ci95": [0.25, 0.75], "intervals": {"avg": {"fixed_set": [0.4, 0.6]}}}
    return {m: {**base, **s} for m, s in over.items()}


def test_k_label():
    assert term._k_label(_models(a={}, b={})) == "2"
    assert term._k_label(_models(a={}, b={"k": 3})) == "k"
    assert term._k_label(_models(a={"k": None})) == "k" and term._k_label({}) == "k"


def test_a_plain_leaderboard():
    t = term._leaderboard("t1", _models(b={"avg": 0.25}, a={}), state_column=True)
    assert t.title == "t1"
    assert t.head == ["Model", "Tasks", "Avg@2", "95% CI task population", "95% CI these tasks",
                      "Pass@2", "Pass^2"]
    assert t.rows == [["a", "3", "50.0%", "25.0–75.0", "40.0–60.0", "75.0%", "25.0%"],
                      ["b", "3", "25.0%", "25.0–75.0", "40.0–60.0", "75.0%", "25.0%"]]
    assert t.caption == (
        "one k for every row (k = 2); Avg@2: mean over tasks of per-task pass rates; errors "
        "count as failures; unjudged and unfinished episodes are not scored (counts shown); "
        "95% CI over the task population (other tasks like these) and over trials on these "
        "tasks")


def test_a_leaderboard_with_every_optional_column():
    models = _models(
        a={"score": 0.5 + 2e-9, "state": 0.4, "without_unreachable": {"avg": 0.6},
           "cost": {"total": 1.5, "per_pass": 0.5}, "errors": 1, "unjudged": 2,
           "bounds": [0.1, 0.9]},
        b={"avg": 0.25, "score": 0.5, "state": None, "unfinished": 4, "not_applicable": 5,
           "incomplete_tasks": 2, "undefined": "nothing scored"})
    t = term._leaderboard("x", models, state_column=True)
    assert t.head == ["Model", "Tasks", "Avg@2", "95% CI task population", "95% CI these tasks",
                      "Pass@2", "Pass^2", "Score", "State", "Avg@2 reachable", "$ total",
                      "$/pass", "Errors", "Unjudged", "Unfinished", "Not applicable",
                      "Avg@2 if gaps failed–passed"]
    assert t.rows == [
        ["a", "3", "50.0%", "25.0–75.0", "40.0–60.0", "75.0%", "25.0%", "50.0%", "40.0%",
         "60.0%", "$1.5000", "$0.5000", "1", "2", "0", "0", "10.0–90.0"],
        ["b (incomplete)", "3", "25.0%", "25.0–75.0", "40.0–60.0", "incomplete", "incomplete",
         "50.0%", "—", "25.0%", "—", "—", "0", "0", "4", "5", "—"]]
    assert t.caption.split("\n")[1:] == [
        "b: undefined (nothing scored)",
        ("b: incomplete, 2 tasks with fewer than 2 scored trials (no Pass@2 / Pass^2; its "
         "Avg@2 is the mean of per-task rates over the trials it has; --k sets k)")]
    # a score within 1e-9 of the average is no column; no State column unless asked
    close = term._leaderboard("x", _models(a={"score": 0.5 + 1e-10, "state": 0.4}),
                              state_column=False)
    assert close.head == t.head[:7]
    none = term._leaderboard("x", _models(a={"score": None, "cost": {"total": 0}}),
                             state_column=True)
    assert none.head == t.head[:7]
    avg_none = term._leaderboard("x", _models(a={"avg": None, "score": 1e-10}),
                                 state_column=True)
    assert avg_none.head == t.head[:7]
    avg_none = term._leaderboard("x", _models(a={"avg": None, "score": 2e-9}),
                                 state_column=True)
    assert avg_none.head[7] == "Score"


def test_where_a_pass_comes_from():
    src = {"label": "the paper's Pass", "method": "state", "judge": "state"}
    assert term._source(src) == "the paper's Pass (state check)"
    assert term._source({**src, "explicit": True}) == \
        "the paper's Pass (state check), chosen explicitly"
    assert term._source({**src, "method": "sliding", "judge": "J"}) == \
        "the paper's Pass (J / sliding)"
    assert term._source({**src, "method": "full", "judge": None}) == (
        "the paper's Pass (no full judgments yet: sweepbench judge STORE --judge-model M "
        "--method full)")
    assert term._source({**src, "method": "likert", "applicable": False}) == (
        "the likert judge, chosen explicitly; likert does not apply: not applicable "
        "(episodes excluded, not failed)")
    assert term._source({**src, "applicable": True}) == "the paper's Pass (state check)"


def _domains(k: int, **cells) -> dict:
    return {"k": k, "domains": {d: {"tasks": n, "avg": a, "pass_hat_k": p}
                                for d, (n, a, p) in cells.items()}}


def test_the_domain_table():
    one = {"source": {}, "models": {"a": {"avg": 0.5, **_domains(1, hotel=(2, 0.5, 0.5))}}}
    assert term._domain_table("vb", one) is None
    b = {"models": {
        "a": {"avg": 0.5, **_domains(1, hotel=(2, 0.5, 0.5), **{"a,b": (3, 1.0, 1.0)})},
        "b": {"avg": 0.9, **_domains(1, hotel=(4, 0.25, 0.0), zoo=(1, 0.0, 0.0))}}}
    t = term._domain_table("vb", b)
    assert (t.title, t.head, t.key_min) == ("vb by domain: Avg@1", ["Domain", "Tasks", "b", "a"],
                                            24)
    assert t.rows == [["hotel", "4", "25.0%", "50.0%"], ["zoo", "1", "0.0%", "—"],
                      ["a, b", "3", "—", "100.0%"]]  # compositions after single domains
    for m in b["models"].values():
        m["k"] = 2
    t = term._domain_table("vb", b)
    assert t.title == "vb by domain: Avg@2 / Pass^2"
    assert t.rows[0] == ["hotel", "4", "25.0% / 0.0%", "50.0% / 50.0%"]
    assert t.rows[1] == ["zoo", "1", "0.0% / 0.0%", "—"]
    assert term._domain_table("vb", {"models": {"a": {"avg": 0.5, "domains": None}}}) is None


def test_the_metrics_table():
    src = {"judge": "state", "method": "state"}
    assert term._metrics_table("t1", {"source": src, "models": {"a": {"avg": 0.5}}}) is None
    only_own = {"a": {"avg": 0.5, "method_scores": {"state/state": 0.5}}}
    assert term._metrics_table("t1", {"source": src, "models": only_own}) is None
    models = {"a": {"avg": 0.5, "metrics": {"output_em": 0.5, "tool_f1": 0.25},
                    "method_scores": {"J/likert": 0.75, "state/state": 0.5}},
              "b": {"avg": 0.9, "method_scores": {"A/full": 1.0}}}
    t = term._metrics_table("t1", {"source": src, "models": models})
    assert t.title == "t1: metrics and other judges (means over the episodes that have them)"
    assert t.head == ["Model", "Tool F1", "Output EM", "Full-trajectory rubrics (A)",
                      "Likert (J)"]
    assert t.rows == [["b", "—", "—", "100.0%", "—"], ["a", "25.0%", "50.0%", "—", "75.0%"]]
    own = term._metrics_table("vb", {"source": {"judge": "J", "method": "likert"},
                                     "models": models})
    assert own.head == ["Model", "Tool F1", "Output EM", "Full-trajectory rubrics (A)"]
    nojudge = term._metrics_table("vb", {"source": {"method": "full"}, "models": {
        "a": {"avg": 0.5, "method_scores": {"None/full": 0.5, "J/full": 0.25}}}})
    assert nojudge.head == ["Model", "Full-trajectory rubrics (J)"]


def _report(**over) -> dict:
    return {"benchmarks": {}, "models": {}, **over}


def test_the_cost_table():
    assert term._cost_table(_report()) is None
    assert term._cost_table(_report(cost={"total": 0})) is None
    r = _report(cost={"total": 2.5, "agent": 1.0, "user": 0.5, "judge": 1.0},
                benchmarks={"t1": {"models": {"a": {"avg": 0.5, "cost": {
                    "agent": 1.0, "user": 0.5, "judge": 1.0, "total": 2.5, "per_episode": 0.5,
                    "per_pass": 1.25}}}}})
    t = term._cost_table(r)
    assert t.title == ("cost (stored prices): total $2.5000 = agent $1.0000 + user $0.5000 + "
                       "judge $1.0000")
    assert t.head == ["Model", "Benchmark", "Agent", "User", "Judge", "Total", "$/episode",
                      "$/pass"]
    assert t.rows == [["a", "t1", "$1.0000", "$0.5000", "$1.0000", "$2.5000", "$0.5000",
                       "$1.2500"]]
    assert t.keep == 2


def test_the_stalls_error_unjudged_and_unreachable_tables():
    assert term._stalls_table(_report()) is None
    t = term._stalls_table(_report(stalls_by_endpoint={"A": {
        "calls": 1200, "hung": 3, "hedged": 2, "hedge_wins": 1}}))
    assert t.title == ("requests abandoned for want of a first byte (hung) and hedged, per "
                       "endpoint")
    assert (t.head, t.rows, t.keep) == (["Endpoint", "Calls", "Hung", "Hedged", "Won by a copy"],
                                        [["A", "1,200", "3", "2", "1"]], 1)
    assert term._error_table(_report()) is None
    t = term._error_table(_report(error_reasons=[{"benchmark": "t1", "reason": "HTTP 500",
                                                  "episodes": 4}]))
    assert t.title == "episodes that ended in error (failures), by reason"
    assert (t.head, t.rows, t.keep) == (["Benchmark", "Reason", "Episodes"],
                                        [["t1", "HTTP 500", "4"]], 2)
    assert term._unjudged_table(_report()) is None
    t = term._unjudged_table(_report(unjudged_by_judge=[
        {"judge": "J", "method": "full", "reason": "timeout", "episodes": 2}]))
    assert t.title == ("episodes a judge left unjudged (no verdict: not scored; run again to "
                       "retry)")
    assert (t.head, t.rows, t.keep) == (["Judge", "Method", "Reason", "Episodes"],
                                        [["J", "full", "timeout", "2"]], 2)
    assert term._unreachable_table(_report()) is None
    t = term._unreachable_table(_report(unreachable=[
        {"benchmark": "vb", "domain": "d", "task_id": "7", "reason": "no dish", "episodes": 3}]))
    assert t.title == ("unreachable tasks (a defect of the task data: no agent can pass them; "
                       "'reachable' columns leave them out)")
    assert (t.head, t.rows, t.keep, t.wrap) == (
        ["Benchmark", "Domain", "Task", "Reason", "Episodes"],
        [["vb", "d", "7", "no dish", "3"]], 3, {0, 1, 2, 3})


def test_still_open():
    assert term._still_open(None) == "" and term._still_open({}) == ""
    assert term._still_open({"wide": {"a": 0.123456, "b": None}, "open_pairs": ["a|b"]}) == \
        "; still open: a ±0.123, b (nothing scored), a vs b"
    assert term._still_open({"open_pairs": ["x|y"]}) == "; still open: x vs y"


def test_the_adaptive_table():
    a = {"benchmarks": {"t1": {"trials_per_cell": {"m": {"min": 2, "max": 8, "median": 4,
                                                         "total": 1234}},
                               "trials_per_pair": {"a|b": 6}, "pass_k": "Pass@k of 4"},
                        "vb": {"trials_per_cell": {}}},
         "runs": [{"run_id": "r1", "stopping_rule": "ci 0.05", "why": "met", "rounds": 3,
                   "benchmarks": {"t1": {"stopped": "budget", "unmet": {"open_pairs": ["a|b"]}},
                                  "vb": {"stopped": None}}},
                  {"run_id": "r2", "rule": "fixed", "why": "done", "rounds": 1}],
         "interval": "intervals are adaptive"}
    t = term._adaptive_table(a)
    assert t.title == "adaptive sweep: scored trials per (model, task)"
    assert t.head == ["Benchmark", "Model", "Trials per task", "Trials"]
    assert t.rows == [["t1", "m", "2-8 (median 4)", "1,234"]]
    assert t.caption.split("\n") == [
        "adaptive sweep r1: ci 0.05; stopped: met after 3 rounds",
        "adaptive sweep r2: fixed; stopped: done after 1 rounds",
        "r1 on t1: budget; still open: a vs b",
        "t1: trials charged per neighbour pair: a vs b 6",
        "t1: Pass@k of 4",
        "intervals are adaptive"]


def _texts(group) -> list:
    return [p.title if isinstance(p, FitTable) else p.plain for p in group.renderables]


def test_render_puts_the_parts_in_order():
    src = {"label": "L", "method": "state", "judge": "state"}
    cell = {"tasks": 1, "avg": 1.0, "pass_hat_k": 1.0}
    bench = {"source": src, "models": _models(a={"domains": {"x": cell, "y": cell}})}
    report = _report(benchmarks={"t1": bench, "vb": {**bench, "source": {
        **src, "method": "likert", "judge": "J"}}}, models=_models(a={}),
        overall={"label": "mean of benchmarks"}, superseded=2,
        cost={"unpriced_calls": 3, "calls": 10},
        error_reasons=[{"benchmark": "t1", "reason": "r", "episodes": 1}],
        adaptive={"benchmarks": {}, "runs": [], "interval": "i"})
    assert _texts(term.render(report)) == [
        "t1: pass from L (state check)", "vb: pass from L (J / likert)",
        "overall (mean of benchmarks)", "adaptive sweep: scored trials per (model, task)",
        "t1 by domain: Avg@2 / Pass^2", "vb by domain: Avg@2 / Pass^2",
        "episodes that ended in error (failures), by reason",
        ("2 stored episodes superseded by a newer identity of the same model, task and trial "
         "(not counted)\n3 of 10 model calls have no stored price (not in the cost)")]
    group = term.render(report)
    assert [p.rows[0][-1] if isinstance(p, FitTable) else None
            for p in group.renderables[:2]] == ["25.0%", "25.0%"]
    # the State column only where the pass is not the state check's
    boards = group.renderables[:3]
    assert ["State" in b.head for b in boards] == [False, False, False]
    with_state = _report(benchmarks={"vb": {"source": {**src, "method": "likert", "judge": "J"},
                                            "models": _models(a={"state": 0.5})}})
    assert "State" in term.render(with_state).renderables[0].head
    overall_state = {**report, "models": _models(a={"state": 0.5})}
    assert "State" not in term.render(overall_state).renderables[2].head


def test_render_with_nothing_or_an_undefined_overall():
    assert _texts(term.render(_report())) == ["no episodes in this selection"]
    bench = {"source": {"label": "L", "method": "state"}, "models": _models(a={})}
    undefined = _report(benchmarks={"t1": bench, "vb": bench},
                        models=_models(a={"undefined": "x"}), overall={"label": "o"})
    assert _texts(term.render(undefined))[2] == (
        "overall: undefined (some benchmark has nothing scored by its headline)")
    one = _report(benchmarks={"t1": bench}, models=_models(a={}), cost={"unpriced_calls": 0})
    assert _texts(term.render(one)) == ["t1: pass from L (state check)"]
    assert isinstance(term.render(one).renderables[0], FitTable)
    assert not any(isinstance(p, Text) for p in term.render(one).renderables)


@pytest.mark.parametrize("width", [60, 200])
def test_a_rendered_report_is_printed_whole_at_any_width(width):
    bench = {"source": {"label": "L", "method": "state"}, "models": _models(a={}, b={})}
    console = Console(record=True, width=width, file=io.StringIO())
    console.print(term.render(_report(benchmarks={"t1": bench})))
    text = console.export_text()
    assert text.splitlines()[0] == "t1: pass from L (state check)"
    assert max(map(len, text.splitlines())) <= width and "50.0%" in text


def test_titles_are_bold_and_a_long_word_folds_rather_than_being_cut():
    t = FitTable("title", ["Key", "aaaa"], [["k" * 50, "1"], ["x y", "2"]], key_min=10)
    console = Console(record=True, width=30, file=io.StringIO(), force_terminal=True,
                      color_system="standard")
    console.print(t)
    assert console.export_text(styles=True).splitlines()[0] == "\x1b[1mtitle\x1b[0m"
    assert _lines(t, 30)[4:7] == ["│ kkkkkkkkkkkkkkkkkkk │    1 │",
                                  "│ kkkkkkkkkkkkkkkkkkk │      │",
                                  "│ kkkkkkkkkkkk        │      │"]


def test_an_empty_header_needs_a_column_of_one():
    assert FitTable("t", [""], [[""]])._need(0) == 1
    assert FitTable("t", ["", ""], [["", ""]])._need(1) == 1
    assert FitTable("t", [""], [["abc"]])._need(0) == 3


def test_the_edges_of_the_optional_columns():
    base = {"k": 2, "tasks": 3, "pass_at_k": 0.5, "pass_hat_k": 0.5}
    at = term._leaderboard("x", {"a": {**base, "avg": 0.0, "score": 1e-9}}, state_column=True)
    assert "Score" not in at.head  # 1e-9 from the average is no different score
    errors = term._leaderboard("x", {"a": {**base, "avg": 0.5, "errors": 1}}, state_column=True)
    assert errors.head[-2:] == ["Errors", "Avg@2 if gaps failed–passed"]
    unjudged = term._leaderboard("x", {"a": {**base, "avg": 0.5, "unjudged": 1}},
                                 state_column=True)
    assert unjudged.head[-2:] == ["Unjudged", "Avg@2 if gaps failed–passed"]
    unfinished = term._leaderboard("x", {"a": {**base, "avg": 0.5, "unfinished": 1}},
                                   state_column=True)
    assert unfinished.head[-1] == "Unfinished"  # no bounds: those are not scored either way
    t = term._domain_table("vb", {"models": {
        "a": {"avg": 0.5, "k": 1, "domains": {"d": {"tasks": 2, "avg": 0.5}, "zz": None}},
        "b": {"avg": 0.4, "k": 1, "domains": {"d": None}}}})
    assert t.rows == [["d", "2", "50.0%", "—"], ["zz", "0", "—", "—"]]
    a = {"benchmarks": {"t1": {"trials_per_cell": {}, "trials_per_pair": {"a|b": 6, "b|c": 2}}},
         "runs": [], "interval": "i"}
    assert term._adaptive_table(a).caption.split("\n")[0] == (
        "t1: trials charged per neighbour pair: a vs b 6, b vs c 2")


def test_render_gives_each_benchmark_its_own_metrics_and_no_state_column_under_the_check():
    src = {"label": "L", "method": "state", "judge": "state"}
    models = _models(a={"state": 0.5, "metrics": {"tool_f1": 0.5}})
    group = term.render(_report(benchmarks={"t1": {"source": src, "models": models}}))
    assert _texts(group) == ["t1: pass from L (state check)",
                             ("t1: metrics and other judges (means over the episodes that have "
                              "them)")]
    assert "State" not in group.renderables[0].head
