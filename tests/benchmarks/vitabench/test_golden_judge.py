"""Judge parity with upstream VitaBench on ``golden/judge/``: prompts per window, verdicts, reward.

Upstream's sliding-window evaluator judged one 23-message trajectory of delivery task 10711001
(three windows) with each scripted reply scenario of ``scenarios.json`` (reply *i* for window
*i*, the last one repeated), in English and in Chinese. sweepbench's judge, given the same
trajectory, task and replies, must send the same system and user prompt for every window and
reach the same per-rubric verdicts and reward. Where upstream raised (``unparseable``: a prose
reply), sweepbench keeps its own handling: it asks again, then leaves the window unjudged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.vitabench.judge import judge_episode
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    FunctionCall,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)

SCENARIOS = ["all_true_plain", "fenced_with_preamble", "string_booleans", "string_false",
             "omit_rubric_then_true", "true_then_false", "trailing_comma",
             "no_rubric_idx_positional", "python_literals", "unparseable", "yes_strings",
             "truncated"]


@pytest.fixture(scope="module")
def golden_dir(shared_data) -> Path:
    path = shared_data / "vitabench" / "golden" / "judge"
    if not path.is_dir():
        pytest.skip(f"judge goldens are not at {path}")
    return path


def trajectory(golden_dir: Path) -> list:
    """``traj.json`` (upstream's message dump) as sweepbench's wire messages."""
    out: list = []
    for m in json.loads((golden_dir / "traj.json").read_text(encoding="utf-8")):
        if m["role"] == "user":
            out.append(UserMessage(m["content"]))
        elif m["role"] == "tool":
            out.append(ToolMessage(m["id"], m["content"], m["name"]))
        else:
            calls = [ToolCall(tc["id"], FunctionCall(tc["name"], json.dumps(tc["arguments"])))
                     for tc in m.get("tool_calls") or []] or None
            out.append(AssistantMessage(m["content"], calls))
    return out


class Reply:
    def __init__(self, text: str) -> None:
        self.message, self.usage, self.latency_s = AssistantMessage(text), Usage(), 0.0


class ScenarioJudge:
    """Test double: answers window *i* with the scenario's reply *i* (the last one repeated),
    on every attempt; records every request."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.requests: list[ChatRequest] = []

    async def __call__(self, req: ChatRequest) -> Reply:
        self.requests.append(req)
        return Reply(self.replies[min(req.sweepbench["window"], len(self.replies) - 1)])


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_judge_matches_upstream(scenario, lang, golden_dir, shared_data):
    replies = json.loads((golden_dir / "scenarios.json").read_text(encoding="utf-8"))[scenario]
    expected = json.loads((golden_dir / f"upstream_{lang}.json").read_text(encoding="utf-8"))[scenario]
    tasks = registry.get("vitabench@2025-11").load_tasks(("delivery",), data_dir=shared_data, lang=lang)
    task = next(t for t in tasks if t.id == "10711001")
    judge = ScenarioJudge(replies)
    res = await judge_episode(task, trajectory(golden_dir), call=judge, data_dir=shared_data,
                              lang=lang)
    prompts = [[{"role": "system", "content": r.messages[0].content},
                {"role": "user", "content": r.messages[1].content}]
               for r in judge.requests if r.sweepbench["attempt"] == 0]
    assert res.template == "upstream" and res.windows == 3
    if "exception" in expected["result"]:  # upstream raised after the first window's reply
        assert prompts[:len(expected["prompts"])] == expected["prompts"]
        # sweepbench asks again (2 retries), then records each window as unjudged
        assert (res.unjudged_windows, res.calls) == (3, 9)
        assert "unreadable judge reply" in res.window_log[0].error
        assert not res.passed and not any(r.met for r in res.rubrics)
        return
    assert prompts == expected["prompts"]
    assert res.calls == 3 and res.unjudged_windows == 0
    assert [r.met for r in res.rubrics] == expected["result"]["met"]
    assert (1.0 if res.passed else 0.0) == expected["result"]["reward"]
    assert res.score == pytest.approx(expected["result"]["score"]["NL_ASSERTION"])
