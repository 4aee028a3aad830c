"""The episode loop with hand-written test-double callers and a two-tool toolkit."""

from __future__ import annotations

import types

import msgspec
import pytest

from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError, ToolError
from sweepbench.ids import TerminationReason
from sweepbench.simulator.episode import MAX_TOOL_CALLS_PER_MESSAGE, EpisodeLimits, run_episode
from sweepbench.tools.base import Toolkit, tool
from sweepbench.wire import (
    AssistantMessage,
    FunctionCall,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)


@tool("write")
def add_item(db, name: str, count: int) -> str:
    """Add an item.

    Args:
        name: item name
        count: how many
    """
    if count <= 0:
        raise ToolError("count must be positive")
    db["items"][name] = db["items"].get(name, 0) + count
    return "ok"


@tool("read")
def list_items(db) -> dict:
    """List items."""
    return db["items"]


TOOLKIT = Toolkit.from_module(types.SimpleNamespace(add_item=add_item, list_items=list_items), "test")
TASK = Task(id="t1", benchmark="test", domain="test", instructions="Add two apples.",
            environment={"time": "2025-01-01 10:00:00", "user_id": "U1"})


class Reply:
    def __init__(self, message: AssistantMessage) -> None:
        self.message, self.usage, self.latency_s = message, Usage(10, 2, 4), 0.0


def scripted(*messages):
    """A caller that answers with the given messages in order and records each request."""
    seen = []

    async def call(req):
        seen.append(req)
        return Reply(messages[len(seen) - 1])

    call.seen = seen
    return call


def call(name, args, i=0):
    return AssistantMessage(tool_calls=[ToolCall(f"c{i}", FunctionCall(name, args))])


async def run(agent, user, **kw):
    db = {"items": {}}
    events = []
    res = await run_episode(TASK, agent=agent, user=user, toolkit=TOOLKIT, state=db,
                            final_state=lambda s: {"items": dict(s["items"])},
                            on_event=lambda k, p: events.append(k), **kw)
    return res, events


async def test_tool_calls_then_user_stop():
    agent = scripted(call("add_item", '{"name": "apple", "count": 2}'), AssistantMessage("Done."))
    user = scripted(AssistantMessage("Two apples please."), AssistantMessage("###STOP###"))
    res, events = await run(agent, user)
    assert res.termination == TerminationReason.USER_STOP
    assert res.final_state == {"items": {"apple": 2}}
    assert (res.agent_calls, res.user_calls, res.tool_calls, res.tool_errors) == (2, 2, 1, 0)
    assert res.agent_usage == Usage(20, 4, 8)
    assert events == ["tool_call"]  # model calls are journaled by the runner's callers
    # the tool result is in the agent's conversation, but not in the user's
    assert any(isinstance(m, ToolMessage) and m.content == "ok" for m in res.messages)
    assert not any(isinstance(m, ToolMessage) for m in user.seen[-1].messages)
    # the user sees the agent's words as `user` messages
    assert isinstance(user.seen[-1].messages[-1], UserMessage)
    assert user.seen[-1].messages[-1].content == "Done."


async def test_requests_are_append_only():
    agent = scripted(call("list_items", "{}"), call("add_item", '{"name":"a","count":1}', 1),
                     AssistantMessage("ok"))
    user = scripted(AssistantMessage("hi"), AssistantMessage("###STOP###"))
    await run(agent, user)
    first, second, third = (r.messages for r in agent.seen)
    assert second[: len(first)] == first and third[: len(second)] == second
    assert all(r.tools for r in agent.seen) and not any(r.tools for r in user.seen)


@pytest.mark.parametrize("name,args,needle", [
    ("nope", "{}", "unknown tool `nope`"),
    ("add_item", '{"name": "a", "count": ', "not valid JSON"),
    ("add_item", '{"name": "a", "count": "2"}', "Expected `int`, got `str`"),
    ("add_item", '{"name": "a"}', "missing required field `count`"),
    ("add_item", '{"name": "a", "count": 1, "x": 1}', "unknown field `x`"),
    ("add_item", '{"name": "a", "count": -1}', "count must be positive"),
    ("add_item", '{"name": ' + "[" * 10_000 + "]" * 10_000 + ', "count": 1}',
     "arguments for `add_item` nest deeper than 64 levels"),
])
async def test_bad_tool_calls_become_errors_and_the_episode_continues(name, args, needle):
    agent = scripted(call(name, args), AssistantMessage("sorry"))
    user = scripted(AssistantMessage("hi"), AssistantMessage("###STOP###"))
    res, _ = await run(agent, user)
    assert res.termination == TerminationReason.USER_STOP
    tool_msg = next(m for m in res.messages if isinstance(m, ToolMessage))
    assert tool_msg.content.startswith("Error:") and needle in tool_msg.content
    assert res.tool_errors == 1 and res.final_state == {"items": {}}


async def test_error_budget_ends_the_episode():
    agent = scripted(*[call("nope", "{}", i) for i in range(10)])
    user = scripted(AssistantMessage("hi"))
    res, _ = await run(agent, user, limits=EpisodeLimits(max_tool_errors=2))
    assert res.termination == TerminationReason.TOO_MANY_ERRORS and res.tool_errors == 3


async def test_a_batch_that_exhausts_both_budgets_ends_as_too_many_errors():
    # user (step 1), then per failing call its message and its result (2 steps): the second
    # failure's batch is step 5, the last step, and the first beyond the error budget
    agent = scripted(*[call("nope", "{}", i) for i in range(3)])
    user = scripted(AssistantMessage("hi"))
    res, _ = await run(agent, user, limits=EpisodeLimits(max_tool_errors=1, max_steps=5))
    assert res.termination == TerminationReason.TOO_MANY_ERRORS
    assert (res.steps, res.tool_errors, res.agent_calls) == (5, 2, 2)
    res, _ = await run(scripted(*[call("nope", "{}", i) for i in range(3)]),
                       scripted(AssistantMessage("hi")),
                       limits=EpisodeLimits(max_tool_errors=2, max_steps=5))
    assert res.termination == TerminationReason.MAX_STEPS and res.tool_errors == 2


async def test_every_call_of_a_message_runs_before_the_error_budget_is_checked():
    many = AssistantMessage(tool_calls=[ToolCall(f"c{i}", FunctionCall("nope", "{}"))
                                        for i in range(3)])
    res, _ = await run(scripted(many), scripted(AssistantMessage("hi")),
                       limits=EpisodeLimits(max_tool_errors=0))
    assert res.termination == TerminationReason.TOO_MANY_ERRORS
    assert (res.tool_calls, res.tool_errors) == (3, 3)
    assert sum(isinstance(m, ToolMessage) for m in res.messages) == 3


def calls(n: int) -> AssistantMessage:
    return AssistantMessage(tool_calls=[ToolCall(f"c{i}", FunctionCall("add_item",
                                                 f'{{"name": "i{i}", "count": 1}}'))
                                        for i in range(n)])


async def test_a_reply_asking_for_10000_tool_calls_ends_the_episode_before_any_runs():
    res, events = await run(scripted(calls(10_000)), scripted(AssistantMessage("hi")))
    assert res.termination == TerminationReason.TOO_MANY_TOOL_CALLS
    assert res.error == ("the agent asked for 10000 tool calls in one message (at most 64); "
                         "none were run")
    assert (res.tool_calls, res.agent_calls, events) == (0, 1, [])
    assert res.final_state == {"items": {}}
    assert len(res.messages[-1].tool_calls) == 10_000  # the reply is on record, whole
    assert MAX_TOOL_CALLS_PER_MESSAGE == 64


async def test_a_reply_at_the_tool_call_cap_runs_every_call():
    res, _ = await run(scripted(calls(64), AssistantMessage("done")),
                       scripted(AssistantMessage("hi"), AssistantMessage("###STOP###")))
    assert res.termination == TerminationReason.USER_STOP and res.tool_calls == 64
    res, _ = await run(scripted(calls(3)), scripted(AssistantMessage("hi")),
                       limits=EpisodeLimits(max_tool_calls_per_message=2))
    assert res.termination == TerminationReason.TOO_MANY_TOOL_CALLS
    assert res.error.startswith("the agent asked for 3 tool calls in one message (at most 2)")


async def test_turn_limit():
    agent = scripted(*[AssistantMessage("and?")] * 10)
    user = scripted(*[AssistantMessage("more")] * 10)
    res, _ = await run(agent, user, limits=EpisodeLimits(max_turns=3))
    assert res.termination == TerminationReason.MAX_TURNS and res.turns == 4


async def test_agent_stop_and_failed_model_call():
    agent = scripted(AssistantMessage("bye ###STOP###"))
    user = scripted(AssistantMessage("hi"))
    res, _ = await run(agent, user)
    assert res.termination == TerminationReason.AGENT_STOP

    async def broken(req):
        raise RuntimeError("HTTP 401 from endpoint")

    res, _ = await run(broken, scripted(AssistantMessage("hi")))
    assert res.termination == TerminationReason.ERROR and "401" in res.error
    assert res.final_state == {"items": {}}


async def test_message_history_prefixes_both_views():
    history = [{"role": "user", "content": "I ordered noodles earlier."},
               {"role": "assistant", "content": "I see the noodle order.",
                "tool_calls": None},
               {"role": "system", "content": "dropped: each side has its own system prompt"}]
    task = msgspec.structs.replace(TASK, message_history=history)
    agent = scripted(AssistantMessage("Done."))
    user = scripted(AssistantMessage("Cancel it please."), AssistantMessage("###STOP###"))
    await run_episode(task, agent=agent, user=user, toolkit=TOOLKIT, state={"items": {}},
                      final_state=lambda s: s)
    first_agent = agent.seen[0].messages
    assert [type(m).__name__ for m in first_agent[:3]] == ["SystemMessage", "UserMessage", "AssistantMessage"]
    assert first_agent[1].content == "I ordered noodles earlier."
    assert first_agent[-1].content == "Cancel it please."
    first_user = user.seen[0].messages  # mirrored: its own words as assistant
    assert [(type(m).__name__, m.content) for m in first_user[1:]] == [
        ("AssistantMessage", "I ordered noodles earlier."), ("UserMessage", "I see the noodle order.")]


async def test_malformed_history_is_a_clear_task_error():
    task = msgspec.structs.replace(TASK, message_history=[{"role": "wizard", "content": 1}])
    with pytest.raises(TaskError, match="message_history is malformed"):
        await run_episode(task, agent=scripted(), user=scripted(), toolkit=TOOLKIT,
                          state={"items": {}}, final_state=lambda s: s)
