"""Import of upstream VitaBench results files (a synthetic file in upstream's format)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweepbench.benchmarks.vitabench.importer import import_vitabench
from sweepbench.errors import ImportFormatError
from sweepbench.results.report import build_report
from sweepbench.store.runstore import RunStore
from sweepbench.wire import AssistantMessage, ToolMessage


def sim(task: str, trial: int | None, reward: float | None, rubric: list[bool]) -> dict:
    """One upstream SimulationRun, shaped as upstream saves it (our own made-up content)."""
    ts = "2025-01-01T00:00:00"
    return {
        "id": f"sim-{task}-{trial}", "task_id": task, "timestamp": ts, "start_time": ts,
        "end_time": ts, "duration": 12.5, "termination_reason": "user_stop",
        "agent_cost": 0.01, "user_cost": 0.002, "trial": trial, "seed": 42,
        "states": {"old_states": [], "new_states": []},
        "reward_info": None if reward is None else {
            "reward": reward, "reward_breakdown": None, "info": None,
            "window_evaluations": [],
            "nl_rubrics": [{"nl_rubric": f"item {i}", "met": m, "justification": "because"}
                           for i, m in enumerate(rubric)]},
        "messages": [
            {"role": "assistant", "content": "Hello, how can I help?", "turn_idx": 0,
             "timestamp": ts, "usage": {"prompt_tokens": 900, "completion_tokens": 12},
             "cost": 0.001, "raw_data": None, "tool_calls": None},
            {"role": "user", "content": "Order noodles near me", "turn_idx": 1, "timestamp": ts,
             "usage": {"prompt_tokens": 300, "completion_tokens": 8}, "tool_calls": None},
            {"role": "assistant", "content": None, "turn_idx": 2, "timestamp": ts,
             "usage": {"prompt_tokens": 1000, "completion_tokens": 30},
             "tool_calls": [{"id": "call_1", "name": "search_shops",
                             "arguments": {"keyword": "noodles", "limit": 3},
                             "requestor": "assistant"},
                            {"id": "call_2", "name": "get_user", "arguments": {},
                             "requestor": "assistant"}]},
            {"role": "tool", "tool_messages": [
                {"id": "call_1", "name": "search_shops", "role": "tool", "content": "[]",
                 "requestor": "assistant", "error": False, "turn_idx": 3, "timestamp": ts},
                {"id": "call_2", "name": "get_user", "role": "tool", "content": "not found",
                 "requestor": "assistant", "error": True, "turn_idx": 3, "timestamp": ts}]},
            {"role": "assistant", "content": "Done. ###STOP###", "turn_idx": 4, "timestamp": ts,
             "usage": {"prompt_tokens": 1100, "completion_tokens": 20}},
        ],
    }


def upstream_file(tmp_path, name="delivery_run.json") -> str:
    sims = [sim("d1", 0, 1.0, [True, True]), sim("d1", 1, 0.0, [True, False]),
            sim("d2", 0, 0.0, [False, False, True]), sim("d2", 1, None, []),
            sim("d3", None, 1.0, []), sim("d3", None, 0.0, [False])]  # no trial: by order
    data = {
        "timestamp": "2025-01-01T00:00:00",
        "info": {"git_commit": "abc", "num_trials": 2, "max_steps": 300, "max_errors": 10,
                 "seed": 300,
                 "user_info": {"implementation": "user_simulator", "llm": "user-llm",
                               "llm_args": {"temperature": 0.0},
                               "global_simulation_guidelines": None},
                 "agent_info": {"implementation": "llm_agent", "llm": "agent-llm",
                                "llm_args": {"temperature": 0.0}},
                 "environment_info": {"domain_name": "delivery", "tool_defs": None}},
        "tasks": [{"id": t, "domain": "delivery", "environment": {}, "instructions": "x",
                   "user_scenario": {"persona": "p"}, "evaluation_criteria": None}
                  for t in ("d1", "d2", "d3")],
        "simulations": sims,
    }
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_import_then_report(tmp_path):
    path = upstream_file(tmp_path)
    with RunStore(tmp_path / "s.db") as store:
        summary = import_vitabench(store, path)
        assert (summary.run_id, summary.model, summary.episodes, summary.judged) == (
            "vitabench-import:delivery_run", "agent-llm", 6, 5)
        assert summary.domains == {"delivery": 6} and summary.replaced == 0
        # no renamed tool was called, so nothing tells the release: the current one
        assert summary.benchmark == "vitabench@2025-12"
        records = {(r.task_id, r.trial): r for r in store.episodes(summary.run_id)}
        assert sorted(records) == [("d1", 0), ("d1", 1), ("d2", 0), ("d2", 1), ("d3", 0),
                                   ("d3", 1)]
        r = records["d1", 0]
        assert r.lang == "en" and r.wall_s == 12.5 and r.termination == "user_stop"
        assert (r.agent_calls, r.user_calls, r.turns, r.tool_calls, r.tool_errors) == (
            3, 1, 1, 2, 1)
        assert (r.agent_usage.prompt_tokens, r.agent_usage.completion_tokens) == (3000, 62)
        assert r.user_usage.prompt_tokens == 300
        call = r.messages[2]
        assert isinstance(call, AssistantMessage)
        assert json.loads(call.tool_calls[0].function.arguments) == {"keyword": "noodles",
                                                                     "limit": 3}
        assert isinstance(r.messages[3], ToolMessage) and r.messages[4].tool_call_id == "call_2"
        labels = {r["episode_key"]: r["label"] for r in store.episode_rows(summary.run_id)}
        judgments = {labels[j["episode_key"]]: j for j in store.judgments(labels)}
        j = judgments["agent-llm|vitabench@2025-12:delivery:en:d1|1"]
        # upstream's reward is the paper's sliding-window judge: VitaBench's headline
        assert (j["judge"], j["method"], j["passed"], j["score"]) == (
            "vitabench-upstream", "sliding", False, 0.5)
        assert [x["met"] for x in j["details"]["rubric"]] == [True, False]

        report = build_report(store, summary.run_id)
        m = report["models"]["agent-llm"]
        # the episode without reward_info is unjudged: counted, not scored (so d2 has one
        # scored trial and k is 1)
        assert (m["k"], m["tasks"], m["episodes"], m["passed"], m["unjudged"]) == (1, 3, 5, 2, 1)
        # Avg@k and the score: means over tasks (d1 .5, d2 0, d3 .5; scores d1 (1 + .5) / 2,
        # d2 1/3, d3 (1 + 0) / 2)
        assert m["avg"] == pytest.approx(1 / 3)
        assert m["score"] == pytest.approx((0.75 + 1 / 3 + 0.5) / 3)
        assert m["pass_at_k"] == pytest.approx(1 / 3) and m["pass_hat_k"] == pytest.approx(1 / 3)
        assert report["benchmarks"]["vitabench@2025-12"]["source"]["method"] == "sliding"
        two = build_report(store, summary.run_id, k=2)["models"]["agent-llm"]
        # d2 cannot support k = 2: the row is incomplete, no Pass@2 from d1 and d3 alone
        assert (two["incomplete_tasks"], two["pass_at_k"], two["pass_hat_k"]) == (1, None, None)
        assert m["profile"]["agent_tokens"]["prompt"] == 3000.0
        assert m["profile"]["latency_s"] is None  # upstream records no latencies

        again = import_vitabench(store, path)  # idempotent: same ids, replaced in place
        assert again.episodes == 6 and len(store.episodes(summary.run_id)) == 6


def test_language_detection_and_overrides(tmp_path):
    path = upstream_file(tmp_path)
    data = json.loads(open(path, encoding="utf-8").read())
    data["simulations"][0]["messages"][1]["content"] = "帮我点一份面条"
    zh = tmp_path / "zh.json"
    zh.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with RunStore(tmp_path / "s.db") as store:
        s = import_vitabench(store, zh, run_id="mine", model="renamed")
        assert (s.run_id, s.model) == ("mine", "renamed")
        assert {r.lang for r in store.episodes("mine")} == {"zh"}
        s2 = import_vitabench(store, path, run_id="mine", lang="zh")  # a second file, same run
        assert s2.run_id == "mine"


def test_not_an_upstream_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"info": {}, "simulations": [{"id": "x"}]}))
    with RunStore(tmp_path / "s.db") as store:
        with pytest.raises(ImportFormatError, match=r"bad.json.*simulations\[0\]"):
            import_vitabench(store, bad)
        bad.write_text("not json")
        with pytest.raises(ImportFormatError, match="not a VitaBench results file"):
            import_vitabench(store, bad)
        no_model = json.loads(open(upstream_file(tmp_path)).read())
        no_model["info"]["agent_info"]["llm"] = None
        bad.write_text(json.dumps(no_model))
        with pytest.raises(ImportFormatError, match="pass model="):
            import_vitabench(store, bad)


def test_the_release_is_told_by_the_renamed_tools_the_agent_called(tmp_path):
    for name, release in (("delivery_store_search_recommand", "2025-11"),
                          ("delivery_store_search_recommend", "2025-12")):
        path = Path(upstream_file(tmp_path, f"{release}.json"))
        path.write_text(path.read_text().replace('"search_shops"', f'"{name}"'))
        with RunStore(tmp_path / f"{release}.db") as store:
            summary = import_vitabench(store, path)
            assert summary.benchmark == f"vitabench@{release}"
            assert {r.benchmark for r in store.episodes(summary.run_id)} == {summary.benchmark}
