"""``report``, ``export`` and ``merge`` over stores grown by real sweeps."""

from __future__ import annotations

import json
import sqlite3

from sweepbench.cli import main

from .helpers import entry, metrics, run_json


UNREACHABLE = {"80715001": "delivery", "10826019": "instore", "10826031": "instore"}


def test_the_three_known_unreachable_tasks_are_apart_in_every_output(shared_data, tmp_path,
                                                                     capsys):
    out = tmp_path / "s.sqlite"
    tasks = [a for t in [*UNREACHABLE, "10826004"] for a in ("--task", t)]
    assert main(["run", "--data-dir", str(shared_data), "--benchmark", "vitabench:delivery",
                 "--benchmark", "vitabench:instore", "--release", "2025-11", *tasks, "--model", "scripted/oracle",
                 "--trials", "1", "--judge-model", "scripted/judge", "--out", str(out),
                 "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    terminal = " ".join(" ".join(lines).split())
    assert "unreachable tasks" in terminal
    code, report = run_json(capsys, "report", str(out), "--json")
    listed = {u["task_id"]: u for u in report["unreachable"]}
    assert {t: u["domain"] for t, u in listed.items()} == UNREACHABLE
    words = set(terminal.split())  # the table wraps a long reason over lines
    assert all(u["reason"] and set(u["reason"].split()) <= words for u in listed.values())
    assert all(task in words for task in UNREACHABLE)
    oracle = entry(report, "vitabench@2025-11", "scripted/oracle")
    assert oracle["state"] == 0.25  # the oracle passes the one reachable task only
    # the headline with and without them
    assert (oracle["tasks"], oracle["without_unreachable"]["tasks"]) == (4, 1)
    # the leaderboard column without them (its header may wrap over the lines above)
    first_row = next(i for i, line in enumerate(lines) if line.startswith("scripted/oracle"))
    assert any("reachable" in line.split() for line in lines[:first_row])
    html, csv_path = tmp_path / "r.html", tmp_path / "r.csv"
    assert main(["report", str(out), "--html", str(html)]) == 0
    page = html.read_text(encoding="utf-8")
    assert main(["export", str(out), "--csv", str(csv_path)]) == 0
    import csv as csv_module

    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = {r["task_id"]: r for r in csv_module.DictReader(f)}
    for task, u in listed.items():
        assert f"<td>{task}</td>" in page
        assert rows[task]["unreachable"] == u["reason"]
    assert rows["10826004"]["unreachable"] == ""


def test_merge_keeps_every_store_and_report_reads_several(tmp_path, capsys):
    base = ["run", "--benchmark", "t1:bar", "--limit", "3", "--trials", "2", "--no-progress"]
    for name, model in (("a", "scripted/oracle"), ("b", "scripted/noisy:0.3")):
        assert main([*base, "--model", model, "--out", str(tmp_path / f"{name}.sqlite")]) == 0
    merged = tmp_path / "m.sqlite"
    assert main(["merge", str(merged), str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")]) == 0
    capsys.readouterr()
    _, both = run_json(capsys, "report", str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite"),
                       "--json")
    _, report = run_json(capsys, "report", str(merged), "--json")
    assert set(report["models"]) == {"scripted/oracle", "scripted/noisy:0.3"}  # both models
    assert metrics(report) == metrics(both) and len(report["runs"]) == 2
    db = sqlite3.connect(merged)
    prices = [json.loads(p) for (p,) in db.execute("select prices from runs")]
    assert {n for p in prices for n in p} >= {"scripted/oracle", "scripted/noisy:0.3"}
    # the filters: one model, a trial range
    _, one = run_json(capsys, "report", str(merged), "--model", "scripted/oracle",
                      "--trials", "1", "--json")
    assert list(one["models"]) == ["scripted/oracle"] and one["models"]["scripted/oracle"]["k"] == 1
