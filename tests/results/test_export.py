"""Trajectories as JSONL, results as CSV."""

from __future__ import annotations

import csv

import pytest

from sweepbench.errors import StoreError
from sweepbench.results.export import (
    export_results_csv,
    export_trajectories,
    read_trajectories,
)
from sweepbench.results.store import EpisodeMeta, RunStore
from sweepbench.wire import (
    AssistantMessage,
    EpisodeRecord,
    FunctionCall,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)


def record(task: str, trial: int, termination: str = "user_stop") -> EpisodeRecord:
    return EpisodeRecord(
        run_id="r", model="m", benchmark="t1", domain="hotel", task_id=task, trial=trial,
        termination=termination,
        messages=[UserMessage("book a room, 你好"),
                  AssistantMessage(tool_calls=[ToolCall("c1", FunctionCall("search", '{"q":1}'))]),
                  ToolMessage("c1", '{"hits": 1}', name="search"), AssistantMessage("done")],
        agent_usage=Usage(100, 20, 80), user_usage=Usage(50, 5), agent_calls=2, user_calls=1,
        tool_calls=1, turns=1, wall_s=2.5, error="boom" if termination == "error" else None)


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("r", {}, prices={"m": {"input": 1.0, "output": 10.0}, "j": {"output": 1.0}})
        for task, trial, term in (("a", 0, "user_stop"), ("a", 1, "error"), ("b", 0, None)):
            label = f"m|t1:hotel:en:{task}|{trial}"
            meta = EpisodeMeta(key=f"ep-{task}{trial}", label=label, model="m", benchmark="t1",
                               domain="hotel", task_id=task, lang="en", trial=trial,
                               unreachable="no such hotel" if task == "b" else None)
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
            if term:
                s.episode_finished(meta.key, record(task, trial, term))
        s.event("ep-a0", 0, "model_call", {"role": "agent", "usage": {
            "prompt_tokens": 1000, "completion_tokens": 100}}, run_id="r", endpoint="m")
        s.event("ep-a0", 0, "model_call", {"role": "judge", "usage": {"completion_tokens": 1000}},
                journal="judge|j|likert", run_id="r", endpoint="j")
        s.judgment("ep-a0", judge="t1", method="metrics", passed=True,
                   score=0.75, details={"tool": {"f1": 0.5}, "output_em": True, "why": "x",
                                       "calls": 3})
        s.judgment("ep-a0", judge="llm", method="likert", passed=None,
                   score=0.5, details={})
        s.flush_sync()
        yield s


def test_trajectories_round_trip(store, tmp_path):
    path = tmp_path / "out" / "traj.jsonl"
    assert export_trajectories(store, "r", path) == 2  # the running episode has no record
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and all(line.startswith("{") for line in lines)
    assert list(read_trajectories(path)) == store.episodes("r")
    assert not list(path.parent.glob(".*tmp"))  # no temp file left behind
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n{\"run_id\": 1}\n")
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        list(read_trajectories(bad))


def test_results_csv_one_row_per_episode(store, tmp_path):
    path = tmp_path / "results.csv"
    assert export_results_csv(store, "r", path) == 3
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    by_id = {r["label"]: r for r in rows}
    done = by_id["m|t1:hotel:en:a|0"]
    assert done["episode_key"] == "ep-a0" and done["run_id"] == "r"
    assert float(done["cost_agent"]) == pytest.approx((1000 * 1.0 + 100 * 10.0) / 1e6)
    assert float(done["cost_judge"]) == pytest.approx(1000 * 1.0 / 1e6)
    assert float(done["cost_total"]) == pytest.approx(0.003) and done["cost_user"] == "0.0"
    assert done["status"] == "done" and done["turns"] == "1" and done["wall_s"] == "2.5"
    assert done["agent_prompt_tokens"] == "100" and done["agent_cached_prompt_tokens"] == "80"
    assert done["t1/metrics:passed"] == "1" and done["t1/metrics:score"] == "0.75"
    assert done["t1/metrics:tool_f1"] == "0.5" and done["t1/metrics:output_em"] == "1"
    assert done["t1/metrics:calls"] == "3"
    assert done["llm/likert:passed"] == "" and done["llm/likert:score"] == "0.5"
    assert "t1/metrics:why" not in done  # text details are not columns
    err = by_id["m|t1:hotel:en:a|1"]
    assert err["status"] == "error" and err["error"] == "boom" and err["t1/metrics:passed"] == ""
    running = by_id["m|t1:hotel:en:b|0"]
    assert running["status"] == "running" and running["turns"] == ""
    assert running["unreachable"] == "no such hotel" and running["cost_total"] == ""
    assert export_results_csv(store, None, path) == 3  # no run: every episode


def test_unknown_run(store, tmp_path):
    with pytest.raises(StoreError, match="runs: r"):
        export_results_csv(store, "nope", tmp_path / "x.csv")
    assert not (tmp_path / "x.csv").exists()
