"""The leaderboards JSON and tables, from small stores built here."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from sweepbench.errors import ReportError
from sweepbench.results.report import build_report, render
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.results.selection import Selection, parse_trials
from sweepbench.wire import EpisodeRecord

DOMAIN = {"t1": "delivery", "t2": "delivery", "t3": "ota"}
V1, V2, LIKERT = ("j", "v1"), ("j2", "v2"), ("j3", "likert")
HEADLINES = {"vitabench": {"headline": "v1", "headline_label": "the v1 judge",
                           "judge_methods": ["v1", "v2", "likert"]}}


def add(store: RunStore, run: str, model: str, task: str, trial: int, *,
        finish: str | None = "user_stop", verdicts: dict | None = None, benchmark: str = "vitabench",
        domain: str | None = None, unreachable: str | None = None, started: float | None = None) -> str:
    """One episode; finish=None leaves it running; verdicts: {(judge, method): passed}."""
    domain = domain or DOMAIN.get(task, "hotel")
    label = f"{model}|{benchmark}:{domain}:en:{task}|{trial}"
    meta = EpisodeMeta(key=f"ep-{run}-{label}", label=label, model=model, benchmark=benchmark,
                       domain=domain, task_id=task, lang="en", trial=trial, spec=f"{benchmark}:{domain}",
                       user_model="U", user_mode="default", unreachable=unreachable)
    store.select(run, [meta])
    store.episode_started(meta, run_id=run)
    if finish is not None:
        store.episode_finished(meta.key, EpisodeRecord(
            run_id=run, model=model, benchmark=benchmark, domain=domain, task_id=task,
            trial=trial, termination=finish))
    for (judge, method), passed in (verdicts or {}).items():
        store.judgment(meta.key, judge=judge, method=method, passed=passed,
                       score=None if passed is None else float(passed), details={})
    return meta.key


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("old", {"n": 0})
        add(s, "old", "A", "t1", 0, verdicts={V1: False})  # superseded by the newer identity
        s.finish_run("old", "done")
        s.flush_sync()
        s.begin_run("new", {"n": 1})
        # model A: 3 tasks x 2 trials
        add(s, "new", "A", "t1", 0, verdicts={V1: True, V2: False, LIKERT: None})
        add(s, "new", "A", "t1", 1, verdicts={V1: True, LIKERT: None})
        add(s, "new", "A", "t2", 0, verdicts={V1: True, LIKERT: None})
        add(s, "new", "A", "t2", 1, verdicts={V1: False, LIKERT: None})
        add(s, "new", "A", "t3", 0, finish="error", verdicts={V1: True})  # error wins
        add(s, "new", "A", "t3", 1)  # finished, never judged
        # model B: t2 trial 1 still running, so B's k is 1
        add(s, "new", "B", "t1", 0, verdicts={V1: False, V2: True})
        add(s, "new", "B", "t1", 1, verdicts={V1: False})
        add(s, "new", "B", "t2", 0, verdicts={V1: True})
        add(s, "new", "B", "t2", 1, finish=None)
        add(s, "new", "B", "t3", 0, verdicts={V1: True})
        add(s, "new", "B", "t3", 1, verdicts={V1: True})
        # model C: nothing finished yet
        add(s, "new", "C", "t1", 0, finish=None)
        s.flush_sync()
        yield s


def fractions(report: dict):
    for m in report["models"].values():
        for scope in [m, *m["domains"].values()]:
            for key in ("avg", "pass_at_k", "pass_hat_k"):
                if scope[key] is not None:
                    yield scope[key]


def test_report_json_headline_from_the_benchmark(store):
    report = build_report(store, benchmarks=HEADLINES)
    json.dumps(report)  # plain JSON
    assert report["runs"] == ["old", "new"] and report["status"] == "running"
    assert report["judge_method"] == {"judge": "j", "method": "v1"}  # the headline
    assert report["benchmarks"]["vitabench"]["source"]["label"] == "the v1 judge"
    assert [(p["judge"], p["method"], p["verdicts"]) for p in report["judge_methods"]] == [
        ("j", "v1", 10), ("j2", "v2", 2), ("j3", "likert", 0)]
    assert all(0.0 <= x <= 1.0 for x in fractions(report))
    assert list(report["models"]) == ["A", "B", "C"]
    assert report["superseded"] == 1  # A's t1#0 of the old run: a newer identity counts
    assert report["models"] == {m: {k: v for k, v in e.items() if k != "benchmarks"}
                                | {"benchmarks": report["models"][m]["benchmarks"]}
                                for m, e in report["models"].items()}

    a = report["models"]["A"]
    # t3#1 is unjudged: not scored, so t3 has one scored trial and A's k is 1
    assert (a["k"], a["tasks"], a["episodes"], a["passed"], a["errors"], a["unjudged"],
            a["unfinished"]) == (1, 3, 5, 3, 1, 1, 0)
    assert a["avg"] == 0.5  # the mean of t1 1, t2 .5, t3 0 (pooled, 3 / 5 would be 0.6)
    assert a["pass_at_k"] == pytest.approx(0.5)
    # t3#1 unjudged failed: t3 0/2; unjudged and the error passed: t3 2/2
    assert a["bounds"] == [pytest.approx(1.5 / 3), pytest.approx(2.5 / 3)]
    ota = a["domains"]["ota"]
    assert (ota["episodes"], ota["errors"], ota["unjudged"], ota["avg"]) == (1, 1, 1, 0.0)
    assert report["k"] == {"value": 1, "requested": False, "incomplete": []}
    asked = build_report(store, benchmarks=HEADLINES, k=2)
    two = asked["models"]["A"]
    # t3 has one scored trial: A cannot support k = 2, so no Pass@2 rather than t1 and t2's
    assert (two["k"], two["incomplete_tasks"], two["pass_at_k"], two["pass_hat_k"]) == (
        2, 1, None, None)
    assert asked["k"] == {"value": 2, "requested": True, "incomplete": ["A", "B"]}

    b = report["models"]["B"]
    assert (b["k"], b["episodes"], b["passed"], b["errors"], b["unfinished"]) == (1, 5, 3, 0, 1)
    assert b["avg"] == pytest.approx(2 / 3)  # t1 0, t2 1, t3 1
    assert b["pass_at_k"] == pytest.approx(2 / 3) and b["pass_hat_k"] == pytest.approx(2 / 3)
    assert b["domains"]["delivery"]["unfinished"] == 1

    c = report["models"]["C"]
    assert c["episodes"] == 0 and c["unfinished"] == 1 and c["avg"] is None


def test_without_headlines_the_state_check_is_the_source(store):
    report = build_report(store)  # nothing says VitaBench's headline: the state check
    assert report["benchmarks"]["vitabench"]["source"]["method"] == "state"
    assert report["models"]["A"]["unjudged"] == 5  # no state judgments here: unjudged


def test_method_picks_the_judgments(store):
    report = build_report(store, method="v2", benchmarks=HEADLINES)
    assert report["judge_method"] == {"judge": "j2", "method": "v2"}
    assert report["benchmarks"]["vitabench"]["source"]["explicit"] is True
    a, b = report["models"]["A"], report["models"]["B"]
    assert (a["passed"], a["errors"], a["unjudged"]) == (0, 1, 4)
    assert (b["passed"], b["unjudged"], b["avg"]) == (1, 4, 1.0)
    assert build_report(store, judge="j2", method="v2")["judge_method"] == report["judge_method"]
    # a score-only method has no pass/fail verdicts: all unjudged but the error
    likert = build_report(store, method="likert", benchmarks=HEADLINES)["models"]["A"]
    assert (likert["passed"], likert["errors"], likert["unjudged"], likert["avg"]) == (0, 1, 5, 0.0)


def test_unknown_method_or_run(store):
    with pytest.raises(ReportError, match="j/v1, j2/v2, j3/likert"):
        build_report(store, method="nope")
    with pytest.raises(ReportError, match="runs: old, new"):
        build_report(store, "missing")
    old = build_report(store, "old", benchmarks=HEADLINES)  # only what the old run selected
    assert old["status"] == "done" and old["models"]["A"]["avg"] == 0.0
    assert old["superseded"] == 0 and list(old["models"]) == ["A"]


def test_no_runs_and_no_judgments(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        with pytest.raises(ReportError, match="no runs"):
            build_report(s)
        s.begin_run("r", {})
        add(s, "r", "A", "t1", 0)
        s.flush_sync()
        report = build_report(s, benchmarks=HEADLINES)
        assert report["judge_method"] is None
        assert report["models"]["A"]["unjudged"] == 1 and report["models"]["A"]["avg"] is None


def test_filters_by_model_benchmark_split_and_trials(store):
    def models(**sel):
        return {m: e["episodes"] + e["unjudged"] + e["unfinished"]
                for m, e in build_report(store, selection=Selection(**sel),
                                         benchmarks=HEADLINES)["models"].items()}
    assert models(models=("B",)) == {"B": 6}
    assert models(trials=parse_trials("1")) == {"A": 3, "B": 3, "C": 1}
    assert models(trials=parse_trials("1-1")) == {"A": 3, "B": 3}
    assert models(splits=("ota",)) == {"A": 2, "B": 2}
    assert models(splits=("vitabench:ota",)) == models(splits=("ota",))
    assert models(benchmarks=("t1",)) == {}
    with pytest.raises(ValueError, match="trials"):
        parse_trials("x")
    assert parse_trials("3-") == (3, 1 << 30)


def test_several_stores_count_each_episode_once(tmp_path, store):
    with RunStore(tmp_path / "other.db") as other:
        other.begin_run("elsewhere", {})
        add(other, "new", "B", "t2", 1, verdicts={V1: False})  # finished here: wins
        add(other, "elsewhere", "D", "t1", 0, verdicts={V1: True})
        other.flush_sync()
        report = build_report([store, other], benchmarks=HEADLINES)
    assert report["models"]["B"]["unfinished"] == 0 and report["models"]["B"]["episodes"] == 6
    assert report["models"]["D"]["avg"] == 1.0
    assert len(report["stores"]) == 2 and "elsewhere" in report["runs"]


def test_render_leaderboard(store):
    console = Console(record=True, width=200, file=io.StringIO())
    report = build_report(store, benchmarks=HEADLINES)
    console.print(render(report))
    full = console.export_text()
    assert "j / v1" in full  # the title names the judge the pass comes from
    text = full.split("└")[0]  # the leaderboard: the first table
    lines = {line.split("│")[1].strip(): line for line in text.splitlines() if "│" in line}
    assert "Avg@1" in text and "Pass^1" in text
    header = [c.strip() for c in next(l for l in text.splitlines() if "Model" in l).split("┃")[1:-1]]
    gaps = [c for c in ("errors", "unjudged", "unfinished")
            if any(m[c] for m in report["models"].values())]
    assert header[-len(gaps) - 1:] == [g.capitalize() for g in gaps] + [
        "Avg@1 if gaps failed–passed"]
    a = dict(zip(header, (cell.strip() for cell in lines["A"].split("│")[1:-1])))
    assert header[:7] == ["Model", "Tasks", "Avg@1", "95% CI task population",
                          "95% CI these tasks", "Pass@1", "Pass^1"]
    assert [a[h] for h in header[:7]] == ["A", "3", "50.0%", a["95% CI task population"],
                                          a["95% CI these tasks"], "50.0%", "50.0%"]
    assert a["Errors"] == "1" and a["Unjudged"] == "1"
    assert a["Avg@1 if gaps failed–passed"] == "50.0–83.3"
    lo, hi = report["models"]["A"]["ci95"]
    assert a["95% CI task population"] == f"{100 * lo:.1f}–{100 * hi:.1f}" and lo <= 0.5 <= hi
    lo, hi = report["models"]["A"]["intervals"]["avg"]["fixed_set"]
    assert a["95% CI these tasks"] == f"{100 * lo:.1f}–{100 * hi:.1f}" and lo <= 0.5 <= hi
    assert [cell.strip() for cell in lines["C"].split("│")[1:-1]][3] == "—"
    body = [line.split("│")[1].strip() for line in text.splitlines() if "│" in line]
    assert body.index("A") < body.index("C") and body.index("B") < body.index("C")
    assert "1 stored episodes superseded" in full


def test_report_ci_curves_comparisons_and_agreement(store):
    report = build_report(store, seed=1, benchmarks=HEADLINES, k=2)
    a = report["models"]["A"]
    assert a["ci95"][0] <= a["avg"] <= a["ci95"][1]
    assert a["mse_vs_k"] is None  # t3 has a single scored trial
    assert a["benchmarks"]["vitabench"]["domains"]["ota"]["unjudged"] == 1
    assert build_report(store, seed=1, benchmarks=HEADLINES, k=2) == report  # seeded
    [cmp] = report["comparisons"]  # A and B (C has nothing finished)
    assert {cmp["a"], cmp["b"]} == {"A", "B"} and cmp["tasks"] == 3
    assert 0 < cmp["p_value"] <= 1
    pairs = {(g["a"], g["b"]): g for g in report["judge_agreement"]}
    assert pairs[("j/v1", "j2/v2")]["episodes"] == 2  # A t1#0 and B t1#0, both disagree
    assert pairs[("j/v1", "j2/v2")]["pass_agreement"] == 0.0
    assert ("j/v1", "j3/likert") not in pairs  # likert gives no verdicts, no rubric


def test_t1_metric_columns_from_judgment_details(tmp_path):
    """Whatever numeric keys the headline's details hold become report columns."""
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("r", {})
        for model, f1 in (("M", 0.8), ("N", 0.4)):
            for trial in range(2):
                ep = add(s, "r", model, "t1", trial)
                # the shape of T1's metrics, plus a count and some text
                s.judgment(ep, judge="t1", method="t1-metrics", passed=trial == 0,
                           score=f1, details={
                               "tool": {"precision": 1.0, "recall": f1, "f1": f1},
                               "param": {"f1": f1 / 2}, "output_em": trial == 0,
                               "calls": 4, "windows": 1, "note": "text",
                               "rubrics": [{"met": True}]})
                s.judgment(ep, judge="llm", method="likert", passed=None,
                           score=0.25 * (trial + 1), details={"likert": trial + 1})
        s.flush_sync()
        report = build_report(s, profile=False, benchmarks={
            "vitabench": {"headline": "t1-metrics"}})
    assert report["judge_method"] == {"judge": "t1", "method": "t1-metrics"}
    assert report["metric_keys"] == ["output_em", "param_f1", "tool_f1", "tool_precision",
                                     "tool_recall"]  # not "calls": a count, not a rate
    m = report["models"]["M"]
    assert m["metrics"] == pytest.approx({"tool_f1": 0.8, "param_f1": 0.4, "output_em": 0.5,
                                          "tool_precision": 1.0, "tool_recall": 0.8})
    assert m["method_scores"] == pytest.approx({"llm/likert": 0.375, "t1/t1-metrics": 0.8})
    assert m["domains"]["delivery"]["metrics"]["tool_f1"] == pytest.approx(0.8)
    assert m["score"] == pytest.approx(0.8)
    # and in every scope: model x benchmark, model x benchmark x domain, on either board
    per_bench = report["benchmarks"]["vitabench"]["models"]["M"]
    for entry in (m["benchmarks"]["vitabench"], per_bench,
                  m["benchmarks"]["vitabench"]["domains"]["delivery"],
                  per_bench["domains"]["delivery"]):
        assert entry["metrics"]["tool_f1"] == pytest.approx(0.8)
        assert entry["method_scores"] == pytest.approx({"llm/likert": 0.375,
                                                        "t1/t1-metrics": 0.8})
    # no state check judged these episodes: no state column, in any scope
    assert m["state"] is None and m["domains"]["delivery"]["state"] is None
    console = Console(record=True, width=250, file=io.StringIO())
    console.print(render(report))
    text = console.export_text()
    for column in ("Tool F1", "Param F1", "Output EM", "Likert (llm)", "Score"):
        assert column in text
    assert "note" not in text and "calls" not in text and "windows" not in text
    assert "profile" not in report["models"]["M"]


MIXED = {"vitabench": {"headline": "sliding", "judge_methods": ["sliding", "full"]},
         "t1": {"headline": "state", "judge_methods": ["likert"]}}


def mixed_store(s: RunStore) -> None:
    s.begin_run("r", {})
    for model, good in (("M", True), ("N", False)):
        for task in ("a", "b"):
            for trial in range(2):
                add(s, "r", model, task, trial, benchmark="t1", domain="hotel",
                    verdicts={("state", "state"): good, ("J", "likert"): None})
                add(s, "r", model, task, trial, benchmark="vitabench", domain="delivery",
                    verdicts={("state", "state"): good, ("J", "sliding"): not good,
                              ("J", "full"): good},
                    unreachable="product on no menu" if task == "b" else None)
    s.flush_sync()


def test_one_headline_per_benchmark_and_not_applicable(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        mixed_store(s)
        report = build_report(s, benchmarks=MIXED)
        vita, t1 = report["benchmarks"]["vitabench"], report["benchmarks"]["t1"]
        assert vita["source"]["method"] == "sliding" and vita["source"]["judge"] == "J"
        assert t1["source"]["method"] == "state"
        # each benchmark by its own headline; the state check is a column
        assert vita["models"]["N"]["avg"] == 1.0 and vita["models"]["N"]["state"] == 0.0
        assert vita["models"]["M"]["state"] == 1.0 and report["models"]["M"]["state"] == 1.0
        assert t1["models"]["M"]["avg"] == 1.0 and t1["models"]["N"]["avg"] == 0.0
        assert report["judge_method"] is None  # two sources: no single one
        assert "pooled" in report["overall"]["label"]
        assert report["models"]["M"]["episodes"] == 8
        # an explicit method that T1 lacks: T1 is not applicable, never failed
        full = build_report(s, method="full", benchmarks=MIXED)
        assert full["benchmarks"]["vitabench"]["models"]["M"]["avg"] == 1.0
        ft1 = full["benchmarks"]["t1"]
        assert ft1["source"]["applicable"] is False and ft1["not_applicable"] == 8
        assert ft1["models"]["M"]["errors"] == 0 and ft1["models"]["M"]["avg"] is None
        assert "undefined" in full["models"]["M"]
        console = Console(record=True, width=250, file=io.StringIO())
        console.print(render(full))
        text = " ".join(console.export_text().split())
        assert "full does not apply: not applicable" in text and "Not applicable" in text


def test_unreachable_tasks_are_apart_with_their_reason(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        mixed_store(s)
        report = build_report(s, benchmarks=MIXED)
    [u] = report["unreachable"]
    assert (u["benchmark"], u["task_id"], u["reason"], u["episodes"]) == (
        "vitabench", "b", "product on no menu", 4)
    assert report["benchmarks"]["vitabench"]["unreachable"] == [u]
    assert u == {"benchmark": "vitabench", "domain": "delivery", "lang": "en", "task_id": "b",
                 "reason": "product on no menu", "episodes": 4}
    n = report["benchmarks"]["vitabench"]["models"]["N"]
    assert n["tasks"] == 2 and n["without_unreachable"]["tasks"] == 1
    assert "without_unreachable" not in report["benchmarks"]["t1"]["models"]["N"]
    console = Console(record=True, width=250, file=io.StringIO())
    console.print(render(report))
    text = console.export_text()
    assert "unreachable tasks" in text and "product on no menu" in text and "reachable" in text


# ---- the terminal tables at 80 and 120 columns -----------------------------------------------


def _terminal(report: dict, width: int) -> str:
    console = Console(record=True, width=width, file=io.StringIO())
    console.print(render(report))
    return console.export_text()


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("which", ["t1_store", "vita_samples_store"])
def test_terminal_tables_fit_and_cut_no_number(which, width, request):
    from sweepbench.runner.build import benchmark_info

    with RunStore(request.getfixturevalue(which)) as s:
        report = build_report(s, benchmarks=benchmark_info())
    text = _terminal(report, width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text  # nothing truncated
    cells = " ".join(text.split())
    for b in report["benchmarks"].values():
        k = next(s["k"] for s in b["models"].values() if s["k"])
        for header in (f"Avg@{k}", "95% CI", f"Pass@{k}", f"Pass^{k}"):
            assert header in cells
        for m, s in b["models"].items():
            assert m in cells
            for value in (s["avg"], s["pass_at_k"], s["pass_hat_k"]):
                assert f"{100 * value:.1f}%" in cells
            for d in s["domains"].values():
                assert f"{100 * d['avg']:.1f}%" in cells
    assert "param_accuracy" not in text  # human names, one format


def test_store_strings_are_printed_literally(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("r", {})
        model, task = "[bold red]m[/bold red]", "[link=x]t[/link]"
        label = f"{model}|vitabench:delivery:en:{task}|0"
        meta = EpisodeMeta(key="ep-1", label=label, model=model, benchmark="vitabench",
                           domain="delivery", task_id=task, lang="en", trial=0,
                           unreachable="[red]no menu[/red]")
        s.select("r", [meta])
        s.episode_started(meta, run_id="r")
        s.episode_finished("ep-1", EpisodeRecord(
            run_id="r", model=model, benchmark="vitabench", domain="delivery", task_id=task,
            trial=0, termination="error", error="[blink]boom[/blink]"))
        s.flush_sync()
        report = build_report(s, profile=False)
    text = _terminal(report, 200)
    for literal in (model, task, "[red]no menu[/red]", "[blink]boom[/blink]"):
        assert literal in text  # rich read none of it as markup


def test_a_task_is_unreachable_by_its_state_checks_reason_when_the_row_says_none(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("r", {})
        for task, why in (("a", None), ("b", "no such dish"), ("c", "")):
            key = add(s, "r", "M", task, 0, domain="delivery")
            s.judgment(key, judge="state", method="state", passed=False, score=0.0,
                       details={"unreachable": why})
        key = add(s, "r", "M", "d", 0, domain="delivery", unreachable="the row's own")
        s.judgment(key, judge="state", method="state", passed=False, score=0.0,
                   details={"unreachable": "the check's"})
        s.flush_sync()
        report = build_report(s, profile=False)
    assert [(u["task_id"], u["reason"], u["episodes"]) for u in report["unreachable"]] == [
        ("b", "no such dish", 1), ("d", "the row's own", 1)]


def test_metric_columns_are_the_headlines_rates_of_scored_episodes_only(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("r", {})
        # a running episode's headline details (read first: task "a") count for nothing
        key = add(s, "r", "M", "a", 0, finish=None, domain="delivery")
        s.judgment(key, judge="t1", method="t1-metrics", passed=True, score=1.0,
                   details={"early": 0.1})
        for trial in range(2):
            key = add(s, "r", "M", "b", trial, domain="delivery")
            s.judgment(key, judge="t1", method="t1-metrics", passed=True, score=1.0,
                       details={"rate": 0.25 * (trial + 1), "big": 1.5, "neg": -0.1, "one": 1.0})
            s.judgment(key, judge="other", method="likert", passed=None, score=0.5,
                       details={"other_rate": 0.3})  # not the headline's
        s.flush_sync()
        report = build_report(s, profile=False, benchmarks={
            "vitabench": {"headline": "t1-metrics"}})
    # rates within [0, 1] only (1.5 and -0.1 are not), of the headline, of scored episodes
    assert report["metric_keys"] == ["one", "rate"]
    assert report["models"]["M"]["metrics"] == {"one": 1.0, "rate": 0.375}


def test_gaps_are_counted_in_each_rows_benchmark_and_domain(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        mixed_store(s)
        add(s, "r", "M", "c", 0, finish=None, benchmark="t1", domain="hotel")
        add(s, "r", "N", "c", 0, finish=None, benchmark="vitabench", domain="delivery")
        add(s, "r", "N", "c", 1, finish=None, benchmark="vitabench", domain="delivery")
        s.flush_sync()
        report = build_report(s, benchmarks=MIXED)
    per = {(b, m): report["benchmarks"][b]["models"][m]["unfinished"]
           for b in ("t1", "vitabench") for m in ("M", "N")}
    assert per == {("t1", "M"): 1, ("t1", "N"): 0, ("vitabench", "M"): 0, ("vitabench", "N"): 2}
    n = report["benchmarks"]["vitabench"]["models"]["N"]
    assert n["domains"]["delivery"]["unfinished"] == 2
    assert report["models"]["N"]["benchmarks"]["vitabench"]["unfinished"] == 2
    assert report["models"]["N"]["benchmarks"]["vitabench"]["domains"]["delivery"][
        "unfinished"] == 2
    assert report["models"]["M"]["benchmarks"]["t1"]["unfinished"] == 1
    assert (report["models"]["M"]["unfinished"], report["models"]["N"]["unfinished"]) == (1, 2)


def test_the_reports_top_level_fields_exactly(store):
    """Where the report says what it read: its stores, runs, selection, status (the run's own
    when one run is asked for, else running / done from the episodes), the one judge and
    method, the method-score keys, pooled benchmarks, superseded copies, no damage."""
    rep = build_report(store, benchmarks=HEADLINES, n_boot=50)
    assert list(rep) == [
        "stores", "run_id", "runs", "status", "selection", "judge_method", "judge_methods",
        "metric_keys", "method_score_keys", "benchmarks", "models", "adaptive", "k", "overall",
        "superseded", "unreachable", "cost", "comparisons", "comparisons_family",
        "judge_agreement", "error_reasons", "unjudged_by_judge", "terminations",
        "stalls_by_endpoint", "configuration", "damaged"]
    assert rep["stores"] == [str(store.path)]
    assert (rep["run_id"], rep["runs"], rep["status"]) == ("new", ["old", "new"], "running")
    assert rep["selection"] == {} and rep["judge_method"] == {"judge": "j", "method": "v1"}
    assert rep["method_score_keys"] == ["j/v1", "j2/v2"]
    assert rep["adaptive"] is None and rep["superseded"] == 1 and rep["damaged"] == []
    assert rep["overall"] == {"label": "= vitabench", "benchmarks": ["vitabench"]}
    assert rep["cost"]["calls"] == 0 and rep["stalls_by_endpoint"] == {}
    only_a = build_report(store, benchmarks=HEADLINES, n_boot=50,
                          selection=Selection(models=("A",)))
    assert only_a["status"] == "done" and only_a["selection"] == {"models": ["A"]}
    store.finish_run("new", "interrupted")
    store.flush_sync()
    asked = build_report(store, "new", benchmarks=HEADLINES, n_boot=50)
    assert (asked["run_id"], asked["status"]) == ("new", "interrupted")  # the run's own
    assert asked["selection"] == {"run": "new"}
    both = build_report([store, store], benchmarks=HEADLINES, n_boot=50)
    assert both["stores"] == [str(store.path)] * 2 and both["status"] == "running"
    assert build_report([store, store], "new", benchmarks=HEADLINES,
                        n_boot=50)["status"] == "running"  # several stores: the episodes'


def test_what_build_reports_arguments_reach(tmp_path, store):
    """The judge asked for, the runs' own recorded headlines, the pooled label, an adaptive
    run, the defaults (seed 0, profiles on) and the collector left as found."""
    import gc

    assert gc.isenabled()
    default = build_report(store, benchmarks=HEADLINES, n_boot=50)
    assert gc.isenabled()  # paused while reading, enabled again
    assert default == build_report(store, benchmarks=HEADLINES, n_boot=50, seed=0,
                                   profile=True)
    assert default["comparisons"] != build_report(store, benchmarks=HEADLINES, n_boot=50,
                                                  seed=1)["comparisons"]
    assert "profile" in default["models"]["A"]
    # an explicit judge for the headline method: j2's verdicts, not j's
    j2 = build_report(store, benchmarks=HEADLINES, n_boot=50, method="v2", judge="j2")
    assert j2["judge_method"] == {"judge": "j2", "method": "v2"}
    assert j2["models"]["B"]["passed"] == 1 and j2["models"]["A"]["passed"] == 0
    with pytest.raises(ReportError, match=r"judge/method pairs present: none\)"):
        with RunStore(tmp_path / "bare.db") as bare:
            bare.begin_run("r", {})
            add(bare, "r", "A", "t1", 0)
            bare.flush_sync()
            build_report(bare, method="v1")
    with RunStore(tmp_path / "mixed.db") as s:
        mixed_store(s)
        s.finish_run("r", "done")
        s.begin_run("ad", {}, info={"benchmarks": MIXED, "adaptive": {
            "rule": "target_ci", "benchmarks": {"t1": {"by_pair": {"M|N": 4}}}}})
        s.finish_run("ad", "done")
        s.flush_sync()
        pooled = build_report(s, n_boot=50)  # the headlines the runs recorded
        assert pooled["overall"]["label"] == ("pooled over t1, vitabench; each episode scored "
                                              "by its own benchmark's source")
        assert pooled["benchmarks"]["vitabench"]["source"]["method"] == "sliding"
        assert pooled["adaptive"]["runs"][0]["run_id"] == "ad"
        assert pooled["adaptive"]["benchmarks"]["t1"]["trials_per_pair"] == {"M|N": 4}
        assert pooled["adaptive"]["benchmarks"]["t1"]["trials_per_cell"]["M"]["total"] == 4
        plain = build_report(s, "r", n_boot=50)  # another run's adaptive info: not this one's
        assert plain["adaptive"] is None
        assert pooled["models"]["M"]["intervals"] != plain["models"]["M"]["intervals"]


def test_the_rows_codes_are_made_once_for_the_board_and_the_call_side(store, monkeypatch):
    from sweepbench.results import call_side, row_codes

    expected = build_report(store, benchmarks=HEADLINES, n_boot=50)
    made = []
    real = row_codes.RowCodes.of.__func__

    def counted(cls, rows):
        made.append(len(rows))
        return real(cls, rows)

    monkeypatch.setattr(row_codes.RowCodes, "of", classmethod(counted))
    for apart in (10**9, 0):  # here and in a second process: the same codes given to both
        made.clear()
        monkeypatch.setattr(call_side, "APART_FROM", apart)
        assert build_report(store, benchmarks=HEADLINES, n_boot=50) == expected
        assert len(made) == 1
