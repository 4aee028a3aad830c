"""Upstream's premature-termination rule, end to end: an agent that only makes failing calls.

In the November release upstream has no tool-error budget: such an agent runs until
``max_steps`` (300 steps: the user's message, then 2 per agent message with its results). In
the updated release a failed call counts toward ``max_errors`` (10): the 10th ends it as
``too_many_errors``. Either way an episode that ended by a limit scores 0 without a judge
call. Run through ``Sweep`` against test-double
models on the reference server; the judge's requests are counted.
"""

from __future__ import annotations

import pytest

from sweepbench.config import Endpoint, SweepConfig
from sweepbench.ids import TerminationReason
from sweepbench.store.runstore import RunStore
from sweepbench.devserver.server import ReferenceServer
from sweepbench.runner.sweep import Sweep
from sweepbench.wire import AssistantMessage, ChatRequest, FunctionCall, ToolCall


class Doubles:
    """Test doubles: an agent whose every call fails, a user who never stops, a counted judge."""

    def __init__(self) -> None:
        self.judge_requests = 0

    def agent(self, req: ChatRequest) -> AssistantMessage:
        n = sum(1 for m in req.messages if getattr(m, "tool_calls", None))
        return AssistantMessage(None, [ToolCall(f"call_{n}", FunctionCall("no_such_tool", "{}"))])

    def user(self, req: ChatRequest) -> AssistantMessage:
        return AssistantMessage("Please go on.")

    def judge(self, req: ChatRequest) -> AssistantMessage:
        self.judge_requests += 1
        return AssistantMessage("[]")

    def resolve(self, name: str):
        return {"failing-agent": self.agent, "patient-user": self.user,
                "counted-judge": self.judge}.get(name)


async def run(tmp_path, release="2025-11", **overrides):
    doubles = Doubles()
    names = ["failing-agent", "patient-user", "counted-judge"]
    async with ReferenceServer(doubles.resolve, models=names) as server:
        cfg = SweepConfig(
            benchmarks=[f"vitabench@{release}:delivery"], models=["failing-agent"],
            user_model="patient-user", judge_models=["counted-judge"], judge_methods=["sliding"],
            trials=1, limit=1, endpoints=[Endpoint(name=n, base_url=server.url) for n in names],
            **overrides)
        with RunStore(tmp_path / "run.sqlite") as store:
            # no preflight request: the judge's requests are counted
            outcome = await Sweep(cfg, store, check_endpoints=False).run()
            records = store.episodes(outcome.run_id)
            judgments = {j["method"]: j for j in store.judgments()}
    return doubles, records, judgments


@pytest.mark.parametrize("max_steps,agent_calls,tool_calls", [(None, 150, 149), (21, 10, 10)])
async def test_failing_calls_end_at_max_steps_with_reward_zero_and_no_judge_call(
        tmp_path, max_steps, agent_calls, tool_calls):
    doubles, records, judgments = await run(tmp_path, max_steps=max_steps)
    (record,) = records
    assert record.termination == TerminationReason.MAX_STEPS
    assert record.steps == (max_steps or 300)
    # the user's message, then an agent message and its results per call: with 300 steps the
    # 150th agent message reaches the limit before its tool call runs, with 21 its results
    assert (record.agent_calls, record.user_calls) == (agent_calls, 1)
    assert record.tool_calls == record.tool_errors == tool_calls
    sliding = judgments["sliding"]
    assert (sliding["passed"], sliding["score"]) == (False, 0.0)
    assert sliding["details"]["premature"] and sliding["details"]["note"] == (
        "Simulation terminated prematurely. Termination reason: TerminationReason.MAX_STEPS")
    assert doubles.judge_requests == 0


async def test_in_the_updated_release_the_tenth_failed_call_ends_it_with_reward_zero(tmp_path):
    doubles, records, judgments = await run(tmp_path, release="2025-12")
    (record,) = records
    assert record.termination == TerminationReason.TOO_MANY_ERRORS
    # the user's message, then ten agent messages each with its failed call's result
    assert (record.steps, record.agent_calls, record.tool_calls, record.tool_errors) == (
        21, 10, 10, 10)
    sliding = judgments["sliding"]
    assert (sliding["passed"], sliding["score"]) == (False, 0.0)
    assert sliding["details"]["note"] == ("Simulation terminated prematurely. Termination "
                                          "reason: TerminationReason.TOO_MANY_ERRORS")
    assert doubles.judge_requests == 0
