"""``sweepbench run --target-ci`` / ``--until-ranked`` from the command line: the report says
the sweep was adaptive, a resumed adaptive run keeps its rule, and options that do not go
together are refused before anything runs."""

from __future__ import annotations

import json

from sweepbench.cli import main

from .helpers import call, run_json

BASE = ["run", "--model", "scripted/noisy:0.15", "--model", "scripted/noisy:0.5",
        "--benchmark", "t1:single", "--limit", "8", "--trials", "2", "--no-progress",
        "--json"]


def test_target_ci_run_reports_rule_trials_per_cell_and_resumes_with_its_rule(tmp_path,
                                                                              capsys):
    store = str(tmp_path / "s.sqlite")
    code, report = run_json(capsys, *BASE, "--target-ci", "0.2", "--max-trials", "6",
                            "--out", store)
    assert code == 0
    [run] = report["adaptive"]["runs"]
    assert run["rule"] == "target-ci" and run["target"] == 0.2 and run["max_trials"] == 6
    assert run["why"] in ("target", "max_trials") and "half-width 0.2" in run["stopping_rule"]
    cells = report["adaptive"]["benchmarks"]["t1"]["trials_per_cell"]
    assert set(cells) == {"scripted/noisy:0.15", "scripted/noisy:0.5"}
    assert all(2 <= c["min"] <= c["max"] <= 6 for c in cells.values())
    episodes = sum(e["episodes"] for e in report["benchmarks"]["t1"]["models"].values())
    assert sum(c["total"] for c in cells.values()) == episodes
    # the leaderboard's k is the fewest trials of any task: Pass@k is shown at that k
    k = report["benchmarks"]["t1"]["k"]["value"]
    assert k == min(c["min"] for c in cells.values())
    assert f"at least {k} scored trials" in report["adaptive"]["benchmarks"]["t1"]["pass_k"]

    # --resume of that run: its adaptive rule again, nothing left to run, the same numbers
    code, again = run_json(capsys, "run", "--resume", store, "--no-progress", "--json")
    assert code == 0
    [run2] = again["adaptive"]["runs"]
    assert run2["rule"] == "target-ci" and run2["why"] == run["why"]
    assert again["adaptive"]["benchmarks"] == report["adaptive"]["benchmarks"]


def test_until_ranked_stops_at_once_for_a_clear_gap_and_charges_a_close_pair(tmp_path,
                                                                           capsys):
    flags = ["--until-ranked", "--margin", "0.05", "--max-trials", "4"]
    far = [*BASE, *flags, "--out", str(tmp_path / "far.sqlite")]
    code, report = run_json(capsys, *far)
    assert code == 0
    [run] = report["adaptive"]["runs"]
    assert run["rule"] == "until-ranked" and run["margin"] == 0.05
    assert (run["why"], run["rounds"]) == ("ranked", 0)  # 15 vs 50% errors: told apart at once
    assert "trials_per_pair" not in report["adaptive"]["benchmarks"]["t1"]

    close = [*BASE[:2], "scripted/noisy:0.3", *BASE[3:4], "scripted/noisy:0.35", *BASE[5:],
             *flags, "--out", str(tmp_path / "close.sqlite")]
    code, report = run_json(capsys, *close)
    assert code == 0
    [run] = report["adaptive"]["runs"]
    assert run["why"] == "max_trials" and run["rounds"] >= 1
    pairs = report["adaptive"]["benchmarks"]["t1"]["trials_per_pair"]
    cells = report["adaptive"]["benchmarks"]["t1"]["trials_per_cell"]
    added = sum(c["total"] for c in cells.values()) - 2 * 8 * 2
    assert pairs == {"scripted/noisy:0.3|scripted/noisy:0.35": added} and added > 0


def test_adaptive_options_that_do_not_go_together_are_refused(tmp_path, capsys):
    out = ["--out", str(tmp_path / "x.sqlite")]
    assert call([*BASE, "--target-ci", "0.1", "--until-ranked", *out]) == 2
    assert call([*BASE, "--target-ci", "0", *out]) == 2
    assert call([*BASE, "--margin", "0.02", *out]) == 2  # --margin alone: not adaptive
    assert call([*BASE, "--target-ci", "0.1", "--margin", "0.02", *out]) == 2
    assert call([*BASE, "--target-ci", "0.1", "--max-trials", "1", *out]) == 2
    assert call([*BASE, "--target-ci", "0.1", "--shard", "0/2", *out]) == 2
    assert call([*BASE, "--target-ci", "0.1", "--workers", "2", *out]) == 2  # one process
    assert not (tmp_path / "x.sqlite").exists()  # refused before anything ran


def test_plan_forecasts_an_adaptive_sweep_or_says_it_cannot(tmp_path, capsys):
    store = str(tmp_path / "p.sqlite")
    plan = [a for a in BASE if a not in ("--no-progress",)]
    plan[0] = "plan"
    code, first = run_json(capsys, *plan, "--target-ci", "0.2", "--max-trials", "6",
                           "--out", store)
    assert code == 0 and "no history" in first["adaptive"]["cannot"]
    assert first["adaptive"]["cap"]["episodes"] == 2 * 8 * 6
    assert run_json(capsys, *BASE, "--out", store)[0] == 0  # a fixed sweep: the history
    code, second = run_json(capsys, *plan, "--target-ci", "0.2", "--max-trials", "6",
                            "--out", store)
    assert code == 0 and "cannot" not in second["adaptive"]
    assert second["adaptive"]["stored"] == 2 * 8 * 2
    assert 0 <= second["adaptive"]["to_run"]["median"] <= 2 * 8 * 4


def test_a_headline_without_a_judge_stops_the_adaptive_sweep_and_says_why(tmp_path, capsys):
    """VitaBench is scored by an LLM judge: with none, no trial has a verdict, and more
    trials would not give one."""
    argv = [*BASE[:6], "vitabench:delivery", *BASE[7:], "--target-ci", "0.3",
            "--out", str(tmp_path / "v.sqlite")]
    assert main(argv) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    [run] = report["adaptive"]["runs"]
    assert run["why"] == "stuck" and run["rounds"] == 0
    assert report["adaptive"]["benchmarks"] == {}  # no trial scored
    [(bench, asked)] = run["benchmarks"].items()  # what the sweep asked and ran
    assert bench.startswith("vitabench") and asked["why"] == "stuck"
    assert asked["trials"] == 2 * asked["cells"] and asked["trials_per_cell"]["max"] == 2
    assert "add --judge-model" in " ".join(captured.err.split())
