"""The names users arrive with from inspect, where sweepbench's meaning is the same:
`--epochs` (trials per task), `--max-connections` (requests in flight per endpoint),
`--token-limit` and `--time-limit` (per episode: the episode ends with its reason and fails,
never an error); and `--help` saying where `--limit` differs. Each end to end with scripted
models or a local stand-in server, no network."""

from __future__ import annotations

import json

import pytest

from sweepbench.cli.parser import build_parser
from tests.cli.helpers import call
from tests.cli.stand_in import stand_in

T1 = ["run", "--benchmark", "t1:single", "--no-progress", "--json"]


def run(capsys, *argv: str) -> dict:
    code = call([*T1, *argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_epochs_is_trials_under_inspects_name(tmp_path, capsys):
    report = run(capsys, "--model", "scripted/oracle", "--limit", "2", "--epochs", "3",
                 "--out", str(tmp_path / "s.sqlite"))
    entry = report["benchmarks"]["t1"]["models"]["scripted/oracle"]
    assert (entry["k"], entry["tasks"], entry["episodes"]) == (3, 2, 6)
    again = run(capsys, "--model", "scripted/oracle", "--limit", "2", "--trials", "3",
                "--out", str(tmp_path / "s.sqlite"))
    assert again["benchmarks"]["t1"]["models"]["scripted/oracle"]["episodes"] == 6  # stored


@pytest.mark.parametrize("flags, peak", [([], 4), (["--max-connections", "1"], 1),
                                         (["--max-connections", "2"], 2)])
def test_max_connections_caps_requests_in_flight_per_endpoint(monkeypatch, tmp_path, capsys,
                                                              flags, peak):
    with stand_in(delay_s=0.3) as server:
        monkeypatch.setenv("VLLM_BASE_URL", server.base_url("vllm"))
        monkeypatch.delenv("VLLM_API_KEY", raising=False)
        run(capsys, "--model", "vllm/a", "--limit", "4", "--trials", "1", *flags,
            "--out", str(tmp_path / "s.sqlite"))
    assert len(server.seen) == 4 and server.peak["a"] == peak


def terminations(report: dict, model: str) -> dict:
    return report["terminations"]["t1"][model]


@pytest.mark.parametrize("limit, ending", [("109", "token_limit"), ("110", "agent_stop")])
def test_token_limit_ends_an_episode_whose_agent_used_more(monkeypatch, tmp_path, capsys,
                                                          limit, ending):
    with stand_in() as server:  # the agent's one reply: 100 prompt + 10 completion tokens
        monkeypatch.setenv("VLLM_BASE_URL", server.base_url("vllm"))
        monkeypatch.delenv("VLLM_API_KEY", raising=False)
        report = run(capsys, "--model", "vllm/a", "--limit", "2", "--trials", "1",
                     "--token-limit", limit, "--out", str(tmp_path / "s.sqlite"))
    assert terminations(report, "vllm/a") == {ending: 2}
    entry = report["benchmarks"]["t1"]["models"]["vllm/a"]
    assert (entry["errors"], entry["avg"]) == (0, 0.0)  # failed, not errors


def test_time_limit_ends_episodes_as_failures_that_no_llm_judge_is_asked_about(tmp_path,
                                                                               capsys):
    store = tmp_path / "s.sqlite"
    # each scripted call takes 0.05 s: the first is made, the limit is past before the next
    report = run(capsys, "--model", "scripted/oracle", "--limit", "2", "--trials", "1",
                 "--latency", "0.05", "--time-limit", "0.02", "--judge-model",
                 "scripted/judge", "--out", str(store))
    assert terminations(report, "scripted/oracle") == {"time_limit": 2}
    entry = report["benchmarks"]["t1"]["models"]["scripted/oracle"]
    assert (entry["errors"], entry["avg"], entry["unjudged"]) == (0, 0.0, 0)
    from sweepbench.store.runstore import RunStore

    with RunStore(store) as s:
        rows = s.episode_rows()
        judged = s.judgments([r["episode_key"] for r in rows])
    assert {r["status"] for r in rows} == {"done"}
    assert sorted((j["judge"], j["passed"]) for j in judged) == [
        ("scripted/judge", False), ("scripted/judge", False), ("state", False), ("state", False)]
    assert all(j["details"] == {"premature": True, "termination": "time_limit", "calls": 0}
               for j in judged if j["judge"] == "scripted/judge")
    # without the limit the oracle passes: the limit, not the agent, failed them
    report = run(capsys, "--model", "scripted/oracle", "--limit", "2", "--trials", "1",
                 "--latency", "0.05", "--out", str(tmp_path / "t.sqlite"))
    assert report["benchmarks"]["t1"]["models"]["scripted/oracle"]["avg"] == 1.0


@pytest.mark.parametrize("flag, value, message", [
    ("--token-limit", "0", "argument --token-limit: must be >= 1, got 0"),
    ("--time-limit", "-1", "argument --time-limit: must be > 0, got -1"),
    ("--time-limit", "nan", "argument --time-limit: must be > 0, got nan"),
    ("--max-connections", "x", "argument --max-connections: 'x' is not an integer"),
])
def test_a_bad_limit_is_a_usage_error(capsys, flag, value, message):
    assert call(["run", flag, value]) == 2
    assert message in capsys.readouterr().err


def test_run_help_says_where_limit_differs_from_inspects(monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # no line breaks inside a hyphenated word
    sub = build_parser()._subparsers._group_actions[0].choices
    for command in ("run", "plan"):
        text = " ".join(sub[command].format_help().split())
        assert ("--limit N only the first N tasks of each benchmark, each run --trials times "
                "(unlike inspect's --limit, which counts samples over the whole eval and takes "
                "a range)") in text
        assert "--trials K, --epochs K" in text
        assert "(as inspect's; --max-concurrency counts episodes)" in text
