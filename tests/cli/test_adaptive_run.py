"""``sweepbench run --target-ci`` / ``--until-ranked`` from the command line: the report says
the sweep was adaptive, a resumed adaptive run keeps its rule, options that do not go
together are refused before anything runs, and only a sweep whose rule held exits 0 (each
other stop has its status, said on stderr with how to go on)."""

from __future__ import annotations

import io
import json
import re
import socket
from pathlib import Path

from rich.console import Console

from sweepbench.cli import (
    BUDGET_EXIT,
    ERRORS_EXIT,
    FAILING_EXIT,
    STUCK_EXIT,
    UNDECIDED_EXIT,
    main,
)
from sweepbench.results.report import build_report, render
from sweepbench.store.runstore import RunStore

from .helpers import call, run_json


def run_all(capsys, *argv):
    """(exit status, the JSON report on stdout, stderr with its lines joined)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, json.loads(captured.out), " ".join(captured.err.split())


BASE = ["run", "--model", "scripted/noisy:0.15", "--model", "scripted/noisy:0.5",
        "--benchmark", "t1:single", "--limit", "8", "--trials", "2", "--no-progress",
        "--json"]


def test_target_ci_run_reports_rule_trials_per_cell_and_resumes_with_its_rule(tmp_path,
                                                                              capsys):
    store = str(tmp_path / "s.sqlite")
    code, report = run_json(capsys, *BASE, "--target-ci", "0.2", "--max-trials", "6",
                            "--out", store)
    assert code == 0  # the target was met: the one stop that exits 0
    [run] = report["adaptive"]["runs"]
    assert run["rule"] == "target-ci" and run["target"] == 0.2 and run["max_trials"] == 6
    assert run["why"] == "target" and "half-width 0.2" in run["stopping_rule"]
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
    code, report, err = run_all(capsys, *close)
    # the cap, not an answer: a status of its own, what is still open and how to go on
    assert code == UNDECIDED_EXIT == 6
    [run] = report["adaptive"]["runs"]
    assert run["why"] == "max_trials" and run["rounds"] >= 1
    assert run["benchmarks"]["t1"]["unmet"] == {
        "open_pairs": ["scripted/noisy:0.3|scripted/noisy:0.35"]}
    assert ("adaptive sweep stopped before its rule held: every trial it would add is past "
            "--max-trials 4; not met on t1: scripted/noisy:0.3 vs scripted/noisy:0.35 not yet "
            "told apart") in err
    assert (f"`sweepbench run --resume {tmp_path / 'close.sqlite'} --max-trials 8`; exit "
            "status 6") in err
    terminal = Console(file=io.StringIO(), width=400)
    terminal.print(render(report))
    assert (f"{run['run_id']} on t1: --max-trials reached before the rule held; still open: "
            "scripted/noisy:0.3 vs scripted/noisy:0.35") in terminal.file.getvalue()
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
    assert main(argv) == STUCK_EXIT == 7  # every episode ran, and yet no answer
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    [run] = report["adaptive"]["runs"]
    assert run["why"] == "stuck" and run["rounds"] == 0
    assert report["adaptive"]["benchmarks"] == {}  # no trial scored
    [(bench, asked)] = run["benchmarks"].items()  # what the sweep asked and ran
    assert bench.startswith("vitabench") and asked["why"] == "stuck"
    assert asked["trials"] == 2 * asked["cells"] and asked["trials_per_cell"]["max"] == 2
    assert "add --judge-model" in " ".join(captured.err.split())
    assert ("adaptive sweep stopped before its rule held: the trials it asked have no verdict"
            in captured.err) and captured.err.rstrip().endswith("exit status 7")


def _config(path: Path, models: list[str], **extra) -> Path:
    lines = [f"models = {json.dumps(models)}", 'benchmarks = ["t1:single"]', "limit = 8",
             "trials = 2", *(f"{k} = {json.dumps(v)}" for k, v in extra.items())]
    for name in models:
        lines += ["[[endpoints]]", f"name = {json.dumps(name)}"]
        if name.startswith("scripted/"):
            lines += ["price_input_per_mtok = 300.0", "price_output_per_mtok = 1200.0"]
        else:
            port = _closed_port()
            lines += [f'base_url = "http://127.0.0.1:{port}/v1"']
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_spending_cap_stops_an_adaptive_sweep_with_the_budget_status(tmp_path, capsys):
    models = ["scripted/noisy:0.3", "scripted/noisy:0.35"]
    config = str(_config(tmp_path / "priced.toml", models))
    flags = ["--no-progress", "--json", "--target-ci", "0.05", "--max-trials", "6"]
    full = str(tmp_path / "full.sqlite")
    code, report, _ = run_all(capsys, "run", "--config", config, *flags, "--out", full)
    [run] = report["adaptive"]["runs"]
    assert run["why"] == "max_trials" and code == UNDECIDED_EXIT  # 0.05 is out of reach
    total = report["cost"]["total"]
    cap = f"{total * 0.6:.6f}"  # the first trials (1/3 of the full sweep) and some rounds
    code, report, err = run_all(capsys, "run", "--config", config, *flags, "--max-cost", cap,
                                "--out", str(tmp_path / "capped.sqlite"))
    assert code == BUDGET_EXIT == 3
    [run] = report["adaptive"]["runs"]
    assert run["why"] == "budget" and run["benchmarks"]["t1"]["stopped"].startswith(
        "--max-cost reached")
    assert ("the adaptive sweep stopped before its rule held; stopped by the spending cap: "
            in err) and "run again with a higher --max-cost to continue" in err


def test_an_adaptive_sweep_whose_every_trial_errors_never_exits_0(tmp_path, capsys):
    """An endpoint that refuses every connection: the error streak stops the sweep (5);
    without the streak the errors are failures, the rule may hold on them, and the run still
    says so and exits non-zero (4)."""
    config = str(_config(tmp_path / "dead.toml", ["m"]))
    base = ["run", "--config", config, "--no-preflight", "--no-progress", "--json",
            "--max-concurrency", "2", "--target-ci", "0.1", "--max-trials", "4"]
    code, report, err = run_all(capsys, *base, "--error-streak", "3",
                                "--out", str(tmp_path / "streak.sqlite"))
    assert code == FAILING_EXIT == 5
    [run] = report["adaptive"]["runs"]
    assert run["why"] == "failing"
    assert "the adaptive sweep stopped before its rule held; stopped: the last 3 finished " \
           "episodes all ended in error" in err
    assert "4 episodes run, 0 already finished in the store, 4 ended in error" in err

    code, report, err = run_all(capsys, *base, "--error-streak", "0",
                                "--out", str(tmp_path / "errors.sqlite"))
    assert code == ERRORS_EXIT == 4
    assert report["adaptive"]["runs"][0]["why"] == "target"  # 0 of 2 on every task
    assert "the adaptive sweep decided with them counted as failures" in err


def test_the_html_report_shows_how_the_adaptive_sweep_went(tmp_path, capsys):
    """Rule, why it stopped and after how many rounds, what was still open, trials per
    cell as fewest / median / most per model (a row per model, not per cell), trials per
    pair, and the k of Pass@k."""
    from sweepbench.results.render.html import render_html

    store = tmp_path / "close.sqlite"
    models = ["scripted/noisy:0.3", "scripted/noisy:0.35", "scripted/noisy:0.9"]
    argv = ["run", *(a for m in models for a in ("--model", m)), *BASE[5:], "--until-ranked",
            "--max-trials", "4", "--out", str(store)]
    assert main(argv) == UNDECIDED_EXIT
    capsys.readouterr()
    with RunStore(store) as s:
        report = build_report(s, None)
    page = render_html(report)
    section = page[page.index("<h3 id=adaptive>"):page.index('<h2 id="metrics">')]
    [run] = report["adaptive"]["runs"]
    b = run["benchmarks"]["t1"]
    assert f"Run {run['run_id']}: until ranked: every pair of neighbours" in section
    assert (f"t1: stopped after {b['rounds']} rounds (batches after the first trials), "
            f"{b['trials']} trials over 24 (model, task) cells: --max-trials reached before "
            "the rule held. Still open: ") in section
    cells = report["adaptive"]["benchmarks"]["t1"]["trials_per_cell"]
    assert section.count("<tr>") == 1 + len(cells) + 1 + len(
        report["adaptive"]["benchmarks"]["t1"]["trials_per_pair"])
    for m, n in cells.items():
        assert (f"<tr><td>t1</td><td>{m}</td><td class=\"n\">{n['min']}</td><td class=\"n\">"
                f"{n['median']}</td><td class=\"n\">{n['max']}</td><td class=\"n\">"
                f"{n['total']}</td></tr>") in section
    for pair, n in report["adaptive"]["benchmarks"]["t1"]["trials_per_pair"].items():
        assert f"<td>{pair.replace('|', ' vs ')}</td><td class=\"n\">{n}</td>" in section
    k = report["benchmarks"]["t1"]["k"]["value"]
    assert f"Pass@{k} and Pass^{k} are shown only for rows whose every task" in section


def test_retry_errors_runs_each_errored_episode_once_per_run_not_once_per_round(tmp_path,
                                                                               capsys):
    """Two endpoints that refuse every connection, until ranked (never: every trial
    fails): with --retry-errors, a later round must not run again the episodes an earlier
    round of the same run ended in error."""
    config = str(_config(tmp_path / "dead.toml", ["m1", "m2"]))
    argv = ["run", "--config", config, "--no-preflight", "--no-progress", "--json",
            "--error-streak", "0", "--until-ranked", "--max-trials", "4", "--retry-errors",
            "--out", str(tmp_path / "s.sqlite")]
    for _ in range(2):  # a fresh store, then the same command again
        code, report, err = run_all(capsys, *argv)
        assert code == UNDECIDED_EXIT
        [run] = report["adaptive"]["runs"]
        trials = run["benchmarks"]["t1"]["trials"]
        assert trials == 2 * 8 * 4 and run["rounds"] >= 1  # the cap, in more than a round
        # every trial ran once: the first time new, the second time retried once
        ran = re.search(r"run run-\S+: (\d+) episodes run.*?(\d+) ended in error", err)
        assert ran and ran.groups() == (str(trials), str(trials))
