"""The VitaBench episode protocol in the generic loop: what the agent and user are sent, steps,
limits and terminations as upstream's orchestrator has them, per release (test-double
callers)."""

from __future__ import annotations

import json

import msgspec
import pytest

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.vitabench.episode import MAX_STEPS, VitaBenchProtocol, resent_arguments
from sweepbench.benchmarks.vitabench.prompts import GREETING
from sweepbench.benchmarks.vitabench.release import RELEASES
from sweepbench.client.body import BodyTemplate
from sweepbench.ids import TerminationReason
from sweepbench.simulator.episode import run_episode
from sweepbench.wire import (
    AssistantMessage,
    EpisodeRecord,
    FunctionCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)

BENCH = registry.get("vitabench")
TASK = BENCH.load_tasks(("delivery",), data_dir=None, lang="en")[0]
NOVEMBER, UPDATED = RELEASES["2025-11"], RELEASES["2025-12"]


class Reply:
    def __init__(self, message: AssistantMessage) -> None:
        self.message, self.usage, self.latency_s = message, Usage(), 0.0


BENCH_RECORD = EpisodeRecord(run_id="r", model="m", benchmark="vitabench", domain="delivery",
                             task_id=TASK.id, trial=0, termination="user_stop")


def scripted(*messages):
    """Test double: answers with ``messages`` in order (the last one repeated), records requests."""
    seen = []

    async def call(req):
        seen.append(req)
        return Reply(messages[min(len(seen), len(messages)) - 1])

    call.seen = seen
    return call


def search(i=1, args='{"keywords":["奶茶"]}', content=None):
    return AssistantMessage(content, [ToolCall(f"call_{i}", FunctionCall(
        "delivery_store_search_recommand", args))])


def protocol_of(rules=NOVEMBER, mode="default"):
    return VitaBenchProtocol(None, mode, rules=rules)


async def play(agent, user, *, mode="default", rules=NOVEMBER, **kw):
    protocol = protocol_of(rules, mode)
    kw.setdefault("limits", protocol.limits(TASK))
    return await run_episode(TASK, agent=agent, user=user, toolkit=BENCH.toolkit(TASK),
                             state=BENCH.new_state(TASK), final_state=BENCH.final_state,
                             protocol=protocol, **kw)


async def test_greeting_params_and_resent_arguments():
    agent = scripted(search(), AssistantMessage("Found one."))
    user = scripted(AssistantMessage("Milk tea please."), AssistantMessage("###STOP###"))
    res = await play(agent, user)
    assert res.termination == TerminationReason.USER_STOP and res.steps == 5
    first, second = agent.seen
    # the agent never sees the greeting; the user simulator and the record do
    assert [type(m) for m in first.messages] == [SystemMessage, UserMessage]
    assert [m.content for m in user.seen[0].messages[1:]] == [GREETING["en"]]
    assert res.messages[1] == AssistantMessage(GREETING["en"])
    assert (first.temperature, first.tool_choice) == (0.0, "auto")
    assert (user.seen[0].temperature, user.seen[0].tool_choice, user.seen[0].tools) == (0.0, None, None)
    # its own call comes back as upstream re-sends it, and the result names its tool
    call, result = second.messages[2], second.messages[3]
    assert call.tool_calls[0].function.arguments == json.dumps({"keywords": ["奶茶"]})
    assert call.tool_calls[0].function.arguments == '{"keywords": ["\\u5976\\u8336"]}'
    assert isinstance(result, ToolMessage) and result.name == "delivery_store_search_recommand"
    # the user sees the agent's words, never its tool traffic
    assert [m.content for m in user.seen[1].messages[1:]] == [
        GREETING["en"], "Milk tea please.", "Found one."]


async def test_a_reply_with_10000_tool_calls_ends_the_episode_scored_0_without_judging():
    many = AssistantMessage(None, [ToolCall(f"call_{i}", FunctionCall(
        "delivery_store_search_recommand", '{"keywords":["x"]}')) for i in range(10_000)])
    agent = scripted(many)
    res = await play(agent, scripted(AssistantMessage("Milk tea please.")))
    assert (res.termination, res.tool_calls, len(agent.seen)) == (
        TerminationReason.TOO_MANY_TOOL_CALLS, 0, 1)
    assert res.error == ("the agent asked for 10000 tool calls in one message (at most 64); "
                         "none were run")
    record = msgspec.structs.replace(BENCH_RECORD, termination=str(res.termination))
    assert BENCH.premature_judgment(TASK, record) == {
        "passed": False, "score": 0.0, "details": {
            "premature": True, "termination": "too_many_tool_calls", "calls": 0,
            "note": "Simulation terminated prematurely. Termination reason: "
                    "TerminationReason.TOO_MANY_TOOL_CALLS"}}


def test_arguments_no_tool_would_read_are_resent_as_the_model_wrote_them():
    deep = '{"keywords":' + "[" * 100 + "]" * 100 + "}"
    assert resent_arguments(deep) == deep
    assert resent_arguments('{"keywords": ["\\u5976"]}') == '{"keywords": ["\\u5976"]}'
    assert resent_arguments('{"keywords":["x"]}') == '{"keywords": ["x"]}'  # re-written
    assert resent_arguments('{"n":1e400}') == '{"n":1e400}'  # never "Infinity", not JSON


async def test_endpoint_settings_override_the_protocols_params():
    agent = scripted(AssistantMessage("hi ###STOP###"))
    user = scripted(AssistantMessage("hello"))
    await play(agent, user, request_params={"agent": {"temperature": 0.7}})
    assert (agent.seen[0].temperature, agent.seen[0].tool_choice) == (0.7, "auto")
    assert user.seen[0].temperature == 0.0


async def test_empty_agent_replies_are_dropped_then_end_the_episode():
    empty = AssistantMessage("  ")
    agent = scripted(empty, AssistantMessage(None), AssistantMessage("ok ###STOP###"))
    res = await play(agent, scripted(AssistantMessage("hello")))
    assert res.termination == TerminationReason.AGENT_STOP and res.agent_calls == 3
    assert all(m.content != "  " for m in res.messages)  # dropped unseen
    assert agent.seen[0].messages == agent.seen[2].messages  # retried from the same state
    res = await play(scripted(empty), scripted(AssistantMessage("hello")))
    assert res.termination == TerminationReason.INVALID_AGENT_MESSAGE
    assert (res.agent_calls, res.steps) == (3, 1)
    assert BENCH.premature_judgment(TASK, _record(res))["score"] == 0.0


def _record(res):
    from sweepbench.wire import EpisodeRecord

    return EpisodeRecord(run_id="r", model="m", benchmark="vitabench", domain="delivery",
                         task_id=TASK.id, trial=0, termination=str(res.termination))


async def test_stops():
    # the agent's stop wins over its tool calls, which are not run
    res = await play(scripted(search(content="Done ###STOP###")), scripted(AssistantMessage("hi")))
    assert res.termination == TerminationReason.AGENT_STOP and res.tool_calls == 0
    for word in ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"):
        res = await play(scripted(AssistantMessage("?")), scripted(AssistantMessage(f"ok {word}")))
        assert res.termination == TerminationReason.USER_STOP
    assert BENCH.premature_judgment(TASK, _record(res)) is None  # judged as usual


async def test_max_steps_wins_over_a_stop_in_the_same_step():
    user = scripted(AssistantMessage("hi"))
    res = await play(scripted(AssistantMessage("bye ###STOP###")), user,
                     limits=protocol_of().limits(TASK, max_steps=2))
    assert res.termination == TerminationReason.MAX_STEPS and res.steps == 2


def test_limits_are_upstreams():
    limits = protocol_of().limits(TASK, max_turns=None, max_tool_errors=3)
    assert (limits.max_steps, limits.max_tool_errors, limits.max_turns,
            limits.max_agent_steps_per_turn) == (MAX_STEPS, None, None, None)
    assert protocol_of().limits(TASK, max_steps=50, max_turns=4).max_turns == 4
    # the updated release: upstream's max_errors ends the episode at the count, the loop's
    # budget at one beyond it
    assert [protocol_of(UPDATED).limits(TASK, max_tool_errors=n).max_tool_errors
            for n in (10, 3, 1, 0)] == [9, 2, 0, 0]
    assert protocol_of(UPDATED).limits(TASK).max_steps == MAX_STEPS


def failing(n):
    """The i-th agent reply: a call that raises (a missing argument), ``n`` of them, then text."""
    return [AssistantMessage(None, [ToolCall(f"call_{i}", FunctionCall(
        "get_delivery_store_info", "{}"))]) for i in range(1, n + 1)] + [AssistantMessage("?")]


async def test_the_updated_release_ends_at_the_tenth_failed_call_before_asking_again():
    res = await play(scripted(*failing(12)), scripted(AssistantMessage("hi")), rules=UPDATED)
    assert res.termination == TerminationReason.TOO_MANY_ERRORS
    # the user's message, then each call and its result: 21 steps, 22 messages with the
    # greeting (the record's first message is the agent's system prompt)
    assert (res.agent_calls, res.user_calls, res.tool_calls, res.tool_errors, res.steps) == (
        10, 1, 10, 10, 21)
    assert len(res.messages) == 23 and isinstance(res.messages[-1], ToolMessage)
    record = _record(res)
    assert BENCH.premature_judgment(TASK, record) == {
        "passed": False, "score": 0.0, "details": {
            "premature": True, "termination": "too_many_errors", "calls": 0,
            "note": "Simulation terminated prematurely. Termination reason: "
                    "TerminationReason.TOO_MANY_ERRORS"}}


async def test_the_november_release_counts_no_tool_errors():
    user = scripted(AssistantMessage("hi"), AssistantMessage("###STOP###"))
    res = await play(scripted(*failing(12)), user)
    assert res.termination == TerminationReason.USER_STOP
    assert (res.agent_calls, res.tool_errors, res.steps) == (13, 12, 27)


async def test_too_many_errors_wins_over_the_step_limit_in_the_same_step():
    protocol = protocol_of(UPDATED)
    res = await play(scripted(*failing(12)), scripted(AssistantMessage("hi")), rules=UPDATED,
                     limits=protocol.limits(TASK, max_steps=21))
    assert res.termination == TerminationReason.TOO_MANY_ERRORS and res.steps == 21
    res = await play(scripted(*failing(12)), scripted(AssistantMessage("hi")), rules=UPDATED,
                     limits=protocol.limits(TASK, max_steps=19))
    assert res.termination == TerminationReason.MAX_STEPS and res.tool_errors == 9


async def test_the_updated_release_sends_reasoning_back_to_the_agent_only():
    thinking = msgspec.structs.replace(search(), reasoning="AGENT_THINK_1")
    user = scripted(AssistantMessage("Milk tea please.", reasoning="USER_THINK_1"),
                    AssistantMessage("###STOP###"))
    agent = scripted(thinking, AssistantMessage("Found one.", reasoning="AGENT_THINK_2"))
    res = await play(agent, user, rules=UPDATED)
    assert res.termination == TerminationReason.USER_STOP
    assert [r.resend_reasoning for r in agent.seen] == ["reasoning_content"] * 2
    assert [r.resend_reasoning for r in user.seen] == [None, None]
    template = BodyTemplate(model="m")  # an endpoint that sends no reasoning back itself
    sent = msgspec.json.decode(template.plain(agent.seen[1]))
    assert sent["messages"][2]["reasoning_content"] == "AGENT_THINK_1"
    assert "resend_reasoning" not in sent
    assert b"THINK" not in b"".join(template.plain(r) for r in user.seen)
    # the November release: the same conversation, no reasoning in any request
    agent = scripted(thinking, AssistantMessage("Found one."))
    await play(agent, scripted(AssistantMessage("hi"), AssistantMessage("###STOP###")))
    assert [r.resend_reasoning for r in agent.seen] == [None, None]
    assert b"THINK" not in template.plain(agent.seen[1])


@pytest.mark.parametrize("last,reason", [("###STOP###", TerminationReason.AGENT_STOP),
                                          ("All done.", TerminationReason.AGENT_DONE)])
async def test_solo_relays_the_instruction_once(last, reason):
    agent = scripted(search(), AssistantMessage(last))
    user = scripted(AssistantMessage(TASK.instructions))
    res = await play(agent, user, mode="solo")
    assert res.termination == reason and res.user_calls == 1
    assert user.seen[0].sweepbench["solo"] is True
    assert [m.content for m in agent.seen[0].messages[1:]] == [TASK.instructions]
