"""``run``, ``replay`` and ``judge`` end to end: reference server on loopback, real HTTP, real
store."""

from __future__ import annotations

import json
import sqlite3

import pytest

from sweepbench.benchmarks.catalog import load_tasks
from sweepbench.benchmarks.doubles import RegistryWorld
from sweepbench.cli import main
from sweepbench.store.codec import register

from .helpers import entry, metrics, run_json


def test_default_run_is_offline_and_discriminates(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([]) == 0  # no arguments: the embedded default
    capsys.readouterr()
    stores = list((tmp_path / "runs").glob("*.sqlite"))
    assert stores == [tmp_path / "runs" / "sweepbench.sqlite"]  # one store that grows
    code, report = run_json(capsys, "report", str(stores[0]), "--json")
    assert code == 0
    # T1's headline is its Pass (the state check): the oracle passes all, the noisy agent not
    oracle, noisy = entry(report, "t1", "scripted/oracle"), entry(report, "t1", "scripted/noisy:0.3")
    assert oracle["k"] == noisy["k"] == 4 and oracle["tasks"] == noisy["tasks"] >= 1
    assert oracle["avg"] == oracle["pass_at_k"] == oracle["pass_hat_k"] == 1.0
    assert 0.0 < noisy["avg"] < 1.0 and noisy["pass_hat_k"] <= noisy["avg"] <= noisy["pass_at_k"]
    # VitaBench's headline is the sliding-window judge: the default runs the judge double,
    # which follows the state check (a column of its own) for test doubles
    v_oracle, v_noisy = (entry(report, "vitabench@2025-12", m) for m in ("scripted/oracle", "scripted/noisy:0.3"))
    assert v_oracle["avg"] == 1.0 and v_oracle["unjudged"] == 0
    assert v_oracle["state"] == 1.0 and 0.0 < v_noisy["state"] < 1.0
    assert v_noisy["avg"] == v_noisy["state"]
    # every episode has its events, one state judgment and one judgment of its LLM judge
    # (VitaBench: sliding; T1: likert)
    db = sqlite3.connect(stores[0])
    n_episodes = db.execute("select count(*) from episodes where status = 'done'").fetchone()[0]
    assert n_episodes == 2 * 4 * (oracle["tasks"] + 17)
    by_method = dict(db.execute("select method, count(*) from judgments group by method"))
    assert by_method == {"state": n_episodes, "sliding": 2 * 4 * 17,
                         "likert": 2 * 4 * oracle["tasks"]}
    kinds = dict(db.execute("select kind, count(*) from events group by kind").fetchall())
    assert kinds["model_call"] > n_episodes and kinds["tool_call"] > 0


def test_rerunning_the_same_sweep_skips_finished_episodes(tmp_path, capsys):
    out = tmp_path / "s.sqlite"
    args = ["run", "--model", "scripted/oracle", "--trials", "2", "--out", str(out), "--json"]
    _, first = run_json(capsys, *args)
    err_first = capsys.readouterr().err
    _, second = run_json(capsys, *args)
    assert metrics(first) == metrics(second)
    db = sqlite3.connect(out)
    tasks = sum(bs["models"]["scripted/oracle"]["tasks"] + bs["models"]["scripted/oracle"]["unjudged"] // 2
                for bs in first["benchmarks"].values())
    assert db.execute("select count(*) from episodes").fetchone()[0] == 2 * tasks
    assert "already" not in err_first


def test_chaos_model_run_completes_with_tool_errors(tmp_path, capsys):
    out = tmp_path / "c.sqlite"
    code, report = run_json(capsys, "run", "--benchmark", "vitabench:delivery", "--model",
                            "scripted/chaos", "--trials", "1", "--out", str(out), "--json")
    chaos = entry(report, "vitabench@2025-12", "scripted/chaos")
    # it changes nothing, so it passes exactly the tasks that need no change (state check)
    tasks = load_tasks("vitabench:delivery")
    no_change = [t for t in tasks if not RegistryWorld().gold_plan(t)]
    assert code == 0 and chaos["errors"] == 0 and chaos["unjudged"] == len(tasks)
    assert chaos["state"] == pytest.approx(len(no_change) / len(tasks))
    db = sqlite3.connect(out)
    results = [json.loads(p)["result"] for (p,) in
               db.execute("select payload from events where kind = 'tool_call'")]
    # every call fails; upstream's tools answer one (a wrong-typed distance) with a plain refusal
    refusals = {r for r in results if not r.startswith("Error:")}
    assert results and refusals == {"distance value type should be float or int, but get <class 'list'>"}


def test_replay_on_samples(capsys):
    code, result = run_json(capsys, "replay", "--benchmark", "vitabench:delivery", "--json")
    assert code == 0 and result["tasks"] == result["passed"] >= 5 and result["failures"] == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_replay_on_real_delivery_tasks(shared_data, capsys, lang):
    code, result = run_json(capsys, "replay", "--benchmark", "vitabench@2025-11:delivery",
                            "--data-dir", str(shared_data), "--lang", lang, "--json")
    assert result["tasks"] == 80
    # one published task expects a product that is on no menu: the only failure allowed
    assert result["passed"] == 79 and result["unreachable"] == 1
    assert [f["task"] for f in result["failures"]] == ["80715001"]
    assert code == 1


def test_bad_input_gives_a_clear_error_and_exit_2(tmp_path, capsys):
    assert main(["run", "--benchmark", "nosuchbench", "--out", str(tmp_path / "x.sqlite")]) == 2
    assert "unknown benchmark 'nosuchbench'" in capsys.readouterr().err
    assert main(["run", "--model", "gpt-nowhere", "--out", str(tmp_path / "y.sqlite")]) == 2
    assert "unknown model 'gpt-nowhere'" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("trials = 'four'\n")
    assert main(["run", "--config", str(bad)]) == 2
    assert "Expected `int`" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.sqlite")]) == 2


def test_shards_merge_and_resume_from_the_command_line(tmp_path, capsys):
    base = ["run", "--benchmark", "vitabench:delivery", "--model", "scripted/oracle",
            "--trials", "1", "--no-progress"]
    for i in range(2):
        assert main([*base, "--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}.sqlite")]) == 0
    merged = tmp_path / "merged.sqlite"
    assert main(["merge", str(merged), str(tmp_path / "s0.sqlite"), str(tmp_path / "s1.sqlite")]) == 0
    capsys.readouterr()
    _, report = run_json(capsys, "report", str(merged), "--json")
    oracle = entry(report, "vitabench@2025-12", "scripted/oracle")
    assert oracle["unjudged"] == len(load_tasks("vitabench:delivery")) and oracle["state"] == 1.0
    # --resume takes the stored config: nothing left to run
    assert main(["run", "--resume", str(merged), "--json"]) == 0
    captured = capsys.readouterr()
    assert "0 episodes run" in captured.err and metrics(json.loads(captured.out)) == metrics(report)
    assert main([*base, "--shard", "2/2"]) == 2


def test_t1_replay_all_templates_oracle_perfect_noisy_lower(capsys):
    code, oracle = run_json(capsys, "replay", "--benchmark", "t1", "--json")
    assert code == 0 and oracle["tasks"] == oracle["passed"] == 525
    assert set(oracle["metrics"].values()) == {1.0}
    assert {"tool_f1", "param_f1", "output_em"} <= set(oracle["metrics"])
    code, noisy = run_json(capsys, "replay", "--benchmark", "t1:single", "--model",
                           "scripted/noisy:0.3", "--json")
    assert code == 1 and 0 < noisy["passed"] < noisy["tasks"] == 275
    assert all(noisy["metrics"][k] < 1.0 for k in ("tool_recall", "param_recall", "output_em"))


@pytest.mark.parametrize("mode", ["solo", "neutral"])
def test_user_modes(tmp_path, capsys, mode):
    out = tmp_path / f"{mode}.sqlite"
    code, report = run_json(capsys, "run", "--benchmark", "vitabench:delivery", "--model",
                            "scripted/oracle", "--trials", "1", "--user-mode", mode,
                            "--out", str(out), "--json", "--no-progress")
    assert code == 0 and entry(report, "vitabench@2025-12", "scripted/oracle")["state"] == 1.0
    db = sqlite3.connect(out)
    register(db)  # sb_record: records are stored compressed (store.codec)
    records = [json.loads(r) for (r,) in db.execute(
        "select sb_record(episode_key, record) from episodes")]
    if mode == "solo":
        # as upstream: a relay user says the whole instruction once, then the agent works alone
        assert all(r["user_calls"] == 1 and r["termination"] == "agent_done" for r in records)
        assert all([m["role"] for m in r["messages"][1:3]] == ["assistant", "user"]
                   for r in records)  # the greeting (not shown to the agent), the instruction
    else:
        assert all(r["user_calls"] > 0 for r in records)


def test_judge_command_rejudges_a_stored_run(tmp_path, capsys):
    out = tmp_path / "j.sqlite"
    assert main(["run", "--benchmark", "vitabench:delivery", "--trials", "1", "--out", str(out),
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["judge", str(out), "--judge-model", "scripted/judge", "--method", "full"]) == 0
    err = capsys.readouterr().err
    assert "judgments made" in err and "agreement of scripted/judge / full with the state check" in err
    db = sqlite3.connect(out)
    methods = {m for (m,) in db.execute("select distinct method from judgments")}
    assert methods == {"state", "sliding", "full"}  # the default's judge, and the one added


def test_each_benchmark_has_its_papers_headline_and_the_llm_judge_changes_no_t1_number(
        tmp_path, capsys):
    run = ["run", "--benchmark", "vitabench:delivery", "--benchmark", "t1:bar", "--model",
           "scripted/oracle", "--model", "scripted/noisy:0.3", "--trials", "2", "--json",
           "--no-progress"]
    _, without = run_json(capsys, *run, "--out", str(tmp_path / "a.sqlite"))
    _, judged = run_json(capsys, *run, "--judge-model", "scripted/judge",
                         "--out", str(tmp_path / "b.sqlite"))
    vita, t1 = judged["benchmarks"]["vitabench@2025-12"], judged["benchmarks"]["t1"]
    assert (vita["source"]["judge"], vita["source"]["method"]) == ("scripted/judge", "sliding")
    assert (t1["source"]["judge"], t1["source"]["method"]) == ("state", "state")
    noisy = vita["models"]["scripted/noisy:0.3"]
    assert noisy["unjudged"] == 0 and noisy["avg"] is not None  # scored by the judge ...
    assert 0 < noisy["state"] < 1  # ... and the state check is a column of its own
    assert "scripted/judge/likert" in t1["models"]["scripted/noisy:0.3"]["method_scores"]
    same = ("k", "tasks", "episodes", "passed", "errors", "avg", "ci95", "pass_at_k",
            "pass_hat_k", "state", "metrics", "unjudged", "pass_at_k_curve", "mse_vs_k")

    def numbers(e: dict) -> dict:  # the leaderboard's numbers (not the Likert column)
        return {**{k: e.get(k) for k in same},
                "domains": {d: {k: v.get(k) for k in same} for d, v in e["domains"].items()}}

    for m, entry in without["benchmarks"]["t1"]["models"].items():
        assert numbers(entry) == numbers(t1["models"][m])
    assert without["benchmarks"]["t1"]["comparisons"] == t1["comparisons"]
    assert without["benchmarks"]["vitabench@2025-12"]["models"]["scripted/oracle"]["avg"] is None


def test_resume_with_more_trials_runs_only_the_new_trials(tmp_path, capsys):
    out = tmp_path / "s.sqlite"
    assert main(["run", "--benchmark", "t1:bar", "--model", "scripted/oracle", "--trials", "1",
                 "--limit", "2", "--out", str(out), "--no-progress"]) == 0
    first = capsys.readouterr().err.split()[1].rstrip(":")
    assert main(["run", "--resume", first, "--out", str(out), "--trials", "3", "--json"]) == 0
    captured = capsys.readouterr()
    assert "4 episodes run, 2 already finished" in captured.err  # --trials is honoured
    assert json.loads(captured.out)["benchmarks"]["t1"]["models"]["scripted/oracle"]["k"] == 3
    db = sqlite3.connect(out)
    configs = [json.loads(c) for (c,) in db.execute("select config from runs order by created_at")]
    assert [c["trials"] for c in configs] == [1, 3] and configs[1]["limit"] == 2
    assert main(["run", "--resume", "run-none", "--out", str(out)]) == 2


def test_changed_task_data_under_the_same_path_is_said_and_run_anew(tmp_path, capsys):
    from sweepbench.benchmarks.vitabench.tasks import SAMPLES

    folder = tmp_path / "data" / "vitabench" / "delivery"
    folder.mkdir(parents=True)
    tasks = json.loads((SAMPLES / "vitabench_delivery.json").read_text())
    (folder / "tasks_en.json").write_text(json.dumps(tasks))
    cmd = ["run", "--benchmark", "vitabench:delivery", "--prompts", "own", "--model", "scripted/oracle",
           "--trials", "1", "--data-dir", str(tmp_path / "data"), "--out",
           str(tmp_path / "s.sqlite"), "--no-progress"]
    assert main(cmd) == 0
    capsys.readouterr()
    tasks[0]["environment"]["time"] = "2025-07-01 09:00:00"
    (folder / "tasks_en.json").write_text(json.dumps(tasks))
    from sweepbench.benchmarks import catalog  # a new process would read the file again

    catalog._load.cache_clear()
    catalog._index.cache_clear()
    assert main(cmd) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert f"1 episodes run, {len(tasks) - 1} already finished" in err
    assert "identity changed: task content (1)" in err
    catalog._load.cache_clear()
    catalog._index.cache_clear()
