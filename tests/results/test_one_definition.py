"""One definition of Avg@k and one k per leaderboard, from the report to its exports: with
unequal trial counts and unjudged episodes, the headline, the comparisons, the tables export
and the inspect log say the same number, and every row of a leaderboard has the same k."""

from __future__ import annotations

import io
import json
from collections import defaultdict

import pytest
from rich.console import Console

from sweepbench.results.export.writers import export_tables
from sweepbench.results.report import build_report, render
from sweepbench.results.selection import Selection, load_view
from sweepbench.store.runstore import RunStore

from .test_report import add

HEAD, LIKERT = ("zj", "v1"), ("j3", "likert")  # the headline's scorer sorts last by name
INFO = {"vitabench": {"headline": "v1", "headline_label": "the v1 judge",
                      "judge_methods": ["v1", "likert"]}}
FAILED = [f"f{t}" for t in range(9)]


@pytest.fixture
def store(tmp_path):
    """X: one easy task run 40 times (all pass), nine tasks run 4 times (all fail); pooled
    over episodes X reads 40/76 = 0.526, over tasks 0.10. Y: the same ten tasks 4 times,
    passing trial 0 of each; its f0#3 finished but unjudged, so f0 has 3 scored trials."""
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("r", {})
        for i in range(40):
            add(s, "r", "X", "easy", i, domain="delivery", verdicts={HEAD: True, LIKERT: None})
        for t in FAILED:
            for i in range(4):
                add(s, "r", "X", t, i, domain="delivery", verdicts={HEAD: False})
        for t in ["easy", *FAILED]:
            for i in range(4):
                unjudged = (t, i) == ("f0", 3)
                add(s, "r", "Y", t, i, domain="delivery",
                    verdicts={LIKERT: None} if unjudged else {HEAD: i == 0})
        s.flush_sync()
        yield s


def test_headline_comparisons_and_exports_agree(store, tmp_path):
    report = build_report(store, benchmarks=INFO)
    board = report["benchmarks"]["vitabench"]
    x, y = board["models"]["X"], board["models"]["Y"]
    assert x["avg"] == pytest.approx(0.10)  # not 40/76: every task weighs the same
    assert y["avg"] == pytest.approx((9 * 0.25 + 1 / 3) / 10)
    assert (y["unjudged"], y["episodes"]) == (1, 39)
    # Y's f0#3 failed: f0 1/4; passed: f0 2/4
    assert y["bounds"] == [pytest.approx(0.25), pytest.approx(0.275)]
    # one k for the board: Y's f0 has 3 scored trials, so every row is at k = 3
    assert {e["k"] for e in board["models"].values()} == {3} and board["k"] == {
        "value": 3, "requested": False, "incomplete": []}
    [cmp] = board["comparisons"]
    assert (cmp["a"], cmp["b"]) == ("Y", "X")  # Y tops the board and the comparison
    assert (cmp["mean_a"], cmp["mean_b"]) == (pytest.approx(y["avg"]), pytest.approx(x["avg"]))
    assert cmp["diff"] == pytest.approx(y["avg"] - x["avg"])
    assert board["comparisons_family"]["pairs"] == 1
    # the episodes table: the mean over tasks of each task's mean headline verdict
    export_tables(store, None, tmp_path, ("jsonl",), benchmarks=INFO)
    verdicts: dict = defaultdict(lambda: defaultdict(list))
    for line in (tmp_path / "episodes.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["passed"] is not None:
            verdicts[row["model"]][row["task_id"]].append(row["passed"])
    for model, entry in (("X", x), ("Y", y)):
        per_task = [sum(v) / len(v) for v in verdicts[model].values()]
        assert sum(per_task) / len(per_task) == pytest.approx(entry["avg"])


def test_asking_for_k_marks_rows_that_cannot_support_it(store):
    report = build_report(store, benchmarks=INFO, k=4)
    board = report["benchmarks"]["vitabench"]
    x, y = board["models"]["X"], board["models"]["Y"]
    assert (x["k"], x["incomplete_tasks"], x["pass_at_k"]) == (4, 0, pytest.approx(0.1))
    assert (y["k"], y["incomplete_tasks"], y["pass_at_k"], y["pass_hat_k"]) == (4, 1, None, None)
    assert board["k"] == {"value": 4, "requested": True, "incomplete": ["Y"]}
    console = Console(record=True, width=250, file=io.StringIO())
    console.print(render(report))
    table = console.export_text().split("└")[0]
    head = next(line for line in table.splitlines() if "Model" in line)
    assert "Pass@4" in head and "Pass^4" in head and "Avg@4" in head
    cells = {r.split("│")[1].strip(): [c.strip() for c in r.split("│")[1:-1]]
             for r in table.splitlines() if "│" in r}
    assert cells["Y (incomplete)"][5:7] == ["incomplete", "incomplete"]
    assert cells["X"][5] == "10.0%"


def test_the_inspect_log_leads_with_the_reports_headline(store, tmp_path):
    log = pytest.importorskip("inspect_ai.log", reason="the inspect extra installs inspect_ai")
    from sweepbench.results.export.inspect_log import export_inspect

    board = build_report(store, benchmarks=INFO)["benchmarks"]["vitabench"]
    paths = export_inspect(store, load_view([store], Selection()), tmp_path, benchmarks=INFO)
    assert len(paths) == 2
    for path in paths:
        ev = log.read_eval_log(str(path))
        entry = board["models"][ev.eval.metadata["sweepbench_row"]]
        first = ev.results.scores[0]
        assert first.name == "zj/v1" and first.metadata == {"headline": True}
        assert ev.results.metadata == {"headline_scorer": "zj/v1"}
        assert list(first.metrics)[:2] == ["avg_at_k", "k"]
        assert first.metrics["avg_at_k"].value == pytest.approx(entry["avg"])
        assert first.metrics["k"].value == entry["k"]
        for sample in ev.samples:
            if sample.scores and "zj/v1" in sample.scores:
                assert next(iter(sample.scores)) == "zj/v1"


def test_the_viewers_leaderboard_cells_are_the_reports_avg(store):
    from sweepbench.view.queries import StoreReader

    board = build_report(store, benchmarks=INFO)["benchmarks"]["vitabench"]
    cells = {c["model"]: c for c in StoreReader(store.path).cells(None, {"vitabench": HEAD})}
    for model in ("X", "Y"):
        c = cells[model]
        assert c["rated_tasks"] == 10
        assert c["rate_sum"] / c["rated_tasks"] == pytest.approx(board["models"][model]["avg"])
    assert cells["X"]["passed"] / (cells["X"]["passed"] + cells["X"]["failed"]) == 40 / 76
