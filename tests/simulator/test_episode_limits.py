"""The per-episode token and time limits (``--token-limit``, ``--time-limit``): where each is
checked and what the episode records when it ends by one."""

from __future__ import annotations

import asyncio

from sweepbench.ids import TerminationReason
from sweepbench.simulator.episode import EpisodeLimits
from sweepbench.wire import AssistantMessage
from tests.simulator.test_episode import call, run, scripted


def agent_steps(n: int):
    """An agent that lists items ``n`` times, then says it is done (each call 10 + 2 tokens)."""
    return scripted(*[call("list_items", "{}", i) for i in range(n)], AssistantMessage("done"))


async def test_an_agent_past_its_token_limit_ends_the_episode_with_its_reply_on_record():
    # each agent call uses 10 prompt + 2 completion tokens: 24 after two calls, 36 after three
    res, _ = await run(agent_steps(5), scripted(AssistantMessage("hi")),
                       limits=EpisodeLimits(token_limit=35))
    assert res.termination == TerminationReason.TOKEN_LIMIT
    assert res.agent_calls == 3 and res.tool_calls == 2  # the third reply's call never ran
    assert res.error == "the agent used 36 tokens, past its token limit of 35"
    assert res.messages[-1].tool_calls[0].id == "c2"


async def test_a_token_limit_reached_exactly_is_not_passed():
    res, _ = await run(agent_steps(2), scripted(AssistantMessage("hi"),
                                                AssistantMessage("###STOP###")),
                       limits=EpisodeLimits(token_limit=36))
    assert res.termination == TerminationReason.USER_STOP and res.agent_calls == 3


async def test_the_user_simulators_tokens_do_not_count_toward_the_token_limit():
    res, _ = await run(agent_steps(0), scripted(AssistantMessage("hi"),
                                                AssistantMessage("###STOP###")),
                       limits=EpisodeLimits(token_limit=12))
    assert res.termination == TerminationReason.USER_STOP
    assert (res.user_calls, res.user_usage.prompt_tokens) == (2, 20)


async def test_a_time_limit_ends_the_episode_before_the_next_call_never_during_one():
    agent = agent_steps(5)
    slow = agent

    async def slow_agent(req):
        await asyncio.sleep(0.05)
        return await slow(req)

    res, _ = await run(slow_agent, scripted(AssistantMessage("hi")),
                       limits=EpisodeLimits(time_limit_s=0.01))
    # the first agent call starts in time and is answered; the second is never sent
    assert res.termination == TerminationReason.TIME_LIMIT
    assert (res.user_calls, res.agent_calls, len(agent.seen)) == (1, 1, 1)
    assert res.error.startswith("the episode ran ") and res.error.endswith(
        " s, past its time limit of 0.01 s")
