"""T1-Bench's benchmark object: the check scores an episode's calls as §3.2.1 does, and the
scripted referee and judge doubles answer as documented."""

from __future__ import annotations

import msgspec

from sweepbench.benchmarks.t1.benchmark import T1
from sweepbench.benchmarks.t1.metrics import calls_from_messages, score
from sweepbench.benchmarks.t1.oracle import gold_plan
from sweepbench.benchmarks.t1.prompts import judge_prompt, transcript
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    EpisodeRecord,
    FunctionCall,
    ToolCall,
    ToolMessage,
    UserMessage,
)

BENCH = T1()


def record(messages) -> EpisodeRecord:
    return EpisodeRecord(run_id="r", model="m", benchmark="t1", domain="flight", task_id="t",
                         trial=0, termination="user_stop", messages=messages)


def agent_messages(calls) -> list:
    """The calls as an agent's messages, each followed by the output it saw."""
    msgs: list = [UserMessage("hello")]
    for k, c in enumerate(calls):
        msgs.append(AssistantMessage(None, tool_calls=[
            ToolCall(f"c{k}", FunctionCall(c.name, msgspec.json.encode(c.arguments).decode()))]))
        msgs.append(ToolMessage(f"c{k}", c.output, c.name))
    return msgs


def test_check_of_the_gold_calls_passes_with_every_metric_at_one(tasks, run_steps):
    task = tasks[0]
    msgs = agent_messages(run_steps(task, gold_plan(task)))
    judged = BENCH.check(task, record(msgs))
    assert (judged["passed"], judged["score"]) == (True, 1.0)
    expected = score(task, calls_from_messages(msgs)).as_dict()
    assert expected.pop("passed") is True
    assert judged["details"] == expected
    assert judged["details"]["tool"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "accuracy": 1.0}


def test_check_without_calls_fails_with_zero_recall(tasks):
    task = tasks[0]
    judged = BENCH.check(task, record([UserMessage("hello"), AssistantMessage("Bye.")]))
    assert (judged["passed"], judged["score"]) == (False, 0.0)
    assert "passed" not in judged["details"]
    assert judged["details"]["tool"]["recall"] == 0.0 and judged["details"]["output_em"] == 0.0


def test_scripted_referee_answers_the_classifier_and_the_exit_check(tasks):
    task = tasks[0]
    assert msgspec.json.decode(BENCH.scripted_referee("classifier", task).content) == list(task.domains)
    exit_reply = msgspec.json.decode(BENCH.scripted_referee("exit", task).content)
    assert exit_reply["should_end"] is False
    assert BENCH.scripted_referee("other", task) is None


def test_scripted_judge_follows_the_hint_else_the_prompt_digest():
    def scores(meta, text="judge this"):
        req = ChatRequest(model="m", messages=[UserMessage(text)], sweepbench=meta)
        reply = msgspec.json.decode(BENCH.scripted_judge(req).content)
        assert {v["reasoning"] for v in reply.values()} == {"scripted verdict"}
        return reply["helpfulness"]["score"], reply["coherence"]["score"]
    assert scores({"judge_hint": True}) == (5, 5)
    assert scores({"judge_hint": False}) == (1, 1)
    free = [scores(None, f"prompt {i}") for i in range(40)]
    assert all(1 <= h <= 5 and 1 <= c <= 5 for h, c in free)
    assert len(set(free)) > 5 and free == [scores({}, f"prompt {i}") for i in range(40)]


async def test_likert_judge_reads_the_transcript_and_scores_the_mean(tasks):
    task, seen = tasks[0], []
    msgs = [UserMessage("Find me a flight"), AssistantMessage("Here is one.")]

    class Reply:
        message = AssistantMessage('{"helpfulness": {"score": 4, "reasoning": "ok"}, '
                                   '"coherence": {"score": 3, "reasoning": "ok"}}')

    async def call(req):
        seen.append(req)
        return Reply()
    judged = await BENCH.judge(task, record(msgs), "likert", call, data_dir=None)
    assert judged["passed"] is None and judged["score"] == (3.5 - 1) / 4
    assert (judged["details"]["helpfulness"], judged["details"]["coherence"]) == (4, 3)
    assert seen[0].messages[0].content == judge_prompt(transcript(msgs), None)
