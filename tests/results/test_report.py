"""The leaderboard JSON and table, from a small store built here."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from sweepbench.errors import ReportError
from sweepbench.results.report import build_report, render
from sweepbench.results.store import RunStore
from sweepbench.wire import EpisodeRecord

DOMAIN = {"t1": "delivery", "t2": "delivery", "t3": "ota"}


def add(store: RunStore, run: str, model: str, task: str, trial: int, *,
        finish: str | None = "user_stop", verdicts: dict | None = None) -> str:
    """One episode; finish=None leaves it running; verdicts: {(judge, method): passed}."""
    domain = DOMAIN[task]
    ep = f"{model}|vitabench:{domain}:en:{task}|{trial}"
    store.episode_started(run, ep, model=model, benchmark="vitabench", domain=domain,
                          task_id=task, lang="en", trial=trial)
    if finish is not None:
        store.episode_finished(ep, EpisodeRecord(
            run_id=run, model=model, benchmark="vitabench", domain=domain, task_id=task,
            trial=trial, termination=finish))
    for (judge, method), passed in (verdicts or {}).items():
        store.judgment(run, ep, judge=judge, method=method, passed=passed,
                       score=None if passed is None else float(passed), details={})
    return ep


V1, V2, LIKERT = ("j", "v1"), ("j2", "v2"), ("j3", "likert")


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("old", {"n": 0})
        add(s, "old", "A", "t1", 0, verdicts={V1: True})
        s.finish_run("old", "done")
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


def test_report_json_default_method(store):
    report = build_report(store)
    json.dumps(report)  # plain JSON
    assert report["run_id"] == "new" and report["status"] == "running"
    assert report["judge_method"] == {"judge": "j", "method": "v1"}  # most verdicts
    assert [(p["judge"], p["method"], p["verdicts"]) for p in report["judge_methods"]] == [
        ("j", "v1", 10), ("j2", "v2", 2), ("j3", "likert", 0)]
    assert all(0.0 <= x <= 1.0 for x in fractions(report))
    assert list(report["models"]) == ["A", "B", "C"]

    a = report["models"]["A"]
    assert (a["k"], a["tasks"], a["episodes"], a["passed"], a["errors"], a["unjudged"],
            a["unfinished"]) == (2, 3, 6, 3, 1, 1, 0)
    assert a["avg"] == 0.5
    assert a["pass_at_k"] == pytest.approx(2 / 3)  # t1 1, t2 1, t3 0
    assert a["pass_hat_k"] == pytest.approx(1 / 3)  # t1 1, t2 0, t3 0
    ota = a["domains"]["ota"]
    assert (ota["episodes"], ota["errors"], ota["unjudged"], ota["avg"], ota["pass_at_k"]) == (
        2, 1, 1, 0.0, 0.0)
    delivery = a["domains"]["delivery"]
    assert (delivery["tasks"], delivery["avg"], delivery["pass_at_k"],
            delivery["pass_hat_k"]) == (2, 0.75, 1.0, 0.5)

    b = report["models"]["B"]
    assert (b["k"], b["episodes"], b["passed"], b["errors"], b["unfinished"]) == (1, 5, 3, 0, 1)
    assert b["avg"] == 0.6
    assert b["pass_at_k"] == pytest.approx(2 / 3) and b["pass_hat_k"] == pytest.approx(2 / 3)
    assert b["domains"]["delivery"]["unfinished"] == 1

    common = build_report(store, k=2)["models"]["B"]  # one k for all: B's t2 is incomplete
    assert (common["k"], common["incomplete_tasks"]) == (2, 1)
    assert common["pass_at_k"] == pytest.approx(0.5)  # t1 0, t3 1

    c = report["models"]["C"]
    assert c["episodes"] == 0 and c["unfinished"] == 1 and c["avg"] is None


def test_method_picks_the_judgments(store):
    report = build_report(store, method="v2")
    assert report["judge_method"] == {"judge": "j2", "method": "v2"}
    a, b = report["models"]["A"], report["models"]["B"]
    assert (a["passed"], a["errors"], a["unjudged"]) == (0, 1, 4)
    assert (b["passed"], b["unjudged"], b["avg"]) == (1, 4, 0.2)
    assert build_report(store, judge="j2")["judge_method"] == report["judge_method"]
    # a score-only method has no pass/fail verdicts: everything is unjudged, hence failed
    likert = build_report(store, method="likert")["models"]["A"]
    assert (likert["passed"], likert["unjudged"], likert["avg"]) == (0, 5, 0.0)


def test_unknown_method_or_run(store):
    with pytest.raises(ReportError, match="j/v1, j2/v2, j3/likert"):
        build_report(store, method="nope")
    with pytest.raises(ReportError, match="runs: old, new"):
        build_report(store, "missing")
    old = build_report(store, "old")
    assert old["status"] == "done" and old["models"]["A"]["avg"] == 1.0


def test_no_runs_and_no_judgments(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        with pytest.raises(ReportError, match="no runs"):
            build_report(s)
        s.begin_run("r", {})
        add(s, "r", "A", "t1", 0)
        s.flush_sync()
        report = build_report(s)
        assert report["judge_method"] is None
        assert report["models"]["A"]["unjudged"] == 1 and report["models"]["A"]["avg"] == 0.0


def test_render_leaderboard(store):
    console = Console(record=True, width=200, file=io.StringIO())
    console.print(render(build_report(store)))
    full = console.export_text()
    assert "j / v1" in full  # the caption names the judge the pass comes from
    text = full.split("└")[0]  # the leaderboard: the first table
    lines = {line.split("│")[1].strip(): line for line in text.splitlines() if "│" in line}
    report = build_report(store)
    ks = {m["k"] for m in report["models"].values()}
    k = str(ks.pop()) if len(ks) == 1 else "k"
    assert f"Avg@{k}" in text and f"Pass^{k}" in text
    header = [c.strip() for c in next(l for l in text.splitlines() if "Model" in l).split("┃")[1:-1]]
    gaps = [c for c in ("errors", "unjudged", "unfinished")
            if any(m[c] for m in report["models"].values())]
    assert header[-len(gaps):] == [g.capitalize() for g in gaps]
    a = dict(zip(header, (cell.strip() for cell in lines["A"].split("│")[1:-1])))
    assert [a[h] for h in header[:7]] == ["A", "3", "2", "50.0%", a["95% CI"], "66.7%", "33.3%"]
    assert a["Errors"] == "1"  # shown because some model has errors
    lo, hi = report["models"]["A"]["ci95"]
    assert a["95% CI"] == f"{100 * lo:.1f}–{100 * hi:.1f}" and lo <= 0.5 <= hi
    assert a.get("Unjudged") == "1"
    assert [cell.strip() for cell in lines["C"].split("│")[1:-1]][3] == "—"
    body = [line.split("│")[1].strip() for line in text.splitlines() if "│" in line]
    assert body.index("B") < body.index("A") < body.index("C")  # best Avg@k first


def test_report_ci_curves_comparisons_and_agreement(store):
    report = build_report(store, seed=1)
    a = report["models"]["A"]
    assert a["ci95"][0] <= a["avg"] <= a["ci95"][1]
    assert a["mse_vs_k"] is not None and len(a["mse_vs_k"]) == 2  # k = 1..2 trials
    assert a["pass_at_k_curve"][-1] == pytest.approx(a["pass_at_k"])
    assert report["models"]["B"]["mse_vs_k"] is None  # B's t2 has a single finished trial
    assert a["benchmarks"]["vitabench"]["domains"]["ota"]["unjudged"] == 1
    assert build_report(store, seed=1) == report  # seeded: the same JSON again
    [cmp] = report["comparisons"]  # B and A (C has nothing finished)
    assert (cmp["a"], cmp["b"], cmp["tasks"]) == ("B", "A", 3)
    assert 0 < cmp["p_value"] <= 1
    pairs = {(g["a"], g["b"]): g for g in report["judge_agreement"]}
    assert pairs[("j/v1", "j2/v2")]["episodes"] == 2  # A t1#0 and B t1#0, both disagree
    assert pairs[("j/v1", "j2/v2")]["pass_agreement"] == 0.0
    assert ("j/v1", "j3/likert") not in pairs  # likert gives no verdicts, no rubric


def test_t1_metric_columns_from_judgment_details(tmp_path):
    """Whatever numeric keys the chosen method's details hold become report columns."""
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("r", {})
        for model, f1 in (("M", 0.8), ("N", 0.4)):
            for trial in range(2):
                ep = add(s, "r", model, "t1", trial)
                # the shape of judge.t1_metrics.T1Score, plus a count and some text
                s.judgment("r", ep, judge="t1", method="t1-metrics", passed=trial == 0,
                           score=f1, details={
                               "tool": {"precision": 1.0, "recall": f1, "f1": f1},
                               "param": {"f1": f1 / 2}, "output_em": trial == 0,
                               "calls": 4, "windows": 1, "note": "text",
                               "rubrics": [{"met": True}]})
                s.judgment("r", ep, judge="llm", method="likert", passed=None,
                           score=0.25 * (trial + 1), details={"likert": trial + 1})
        s.flush_sync()
        report = build_report(s, profile=False)
    assert report["judge_method"] == {"judge": "t1", "method": "t1-metrics"}
    assert report["metric_keys"] == ["output_em", "param_f1", "tool_f1", "tool_precision",
                                     "tool_recall"]  # not "calls": a count, not a rate
    m = report["models"]["M"]
    assert m["metrics"] == pytest.approx({"tool_f1": 0.8, "param_f1": 0.4, "output_em": 0.5,
                                          "tool_precision": 1.0, "tool_recall": 0.8})
    assert m["method_scores"] == pytest.approx({"llm/likert": 0.375, "t1/t1-metrics": 0.8})
    assert m["domains"]["delivery"]["metrics"]["tool_f1"] == pytest.approx(0.8)
    assert m["score"] == pytest.approx(0.8)
    console = Console(record=True, width=250, file=io.StringIO())
    console.print(render(report))
    text = console.export_text()
    for column in ("Tool F1", "Param F1", "Output EM", "likert", "llm", "Score"):
        assert column in text
    assert "note" not in text and "calls" not in text and "windows" not in text
    assert "profile" not in report["models"]["M"]
