"""A prompt that no longer fits and a reply cut short end an episode with their own reasons,
``context_overflow`` and ``truncated``, counted as failures (issue 15)."""

from __future__ import annotations

import types
from collections import Counter

from sweepbench.config import Endpoint, load_config
from sweepbench.datasets.task import Task
from sweepbench.ids import FAILED_TERMINATIONS, TerminationReason
from sweepbench.store.runstore import RunStore
from sweepbench.client.facade import ModelClient
from sweepbench.client.limits import EndpointLimits
from sweepbench.runner.sweep import run_sweep
from sweepbench.client.transports.memory import Answer, MemoryTransport, VirtualClock, completion
from sweepbench.simulator.episode import run_episode
from sweepbench.tools.base import Toolkit, tool


@tool("read")
def look(db) -> str:
    """Look."""
    return "seen"


TOOLKIT = Toolkit.from_module(types.SimpleNamespace(look=look), "test")
TASK = Task(id="t1", benchmark="test", domain="test", instructions="Do it.",
            environment={"time": "2025-01-01 10:00:00", "user_id": "U1"})


def client(*replies) -> tuple[ModelClient, MemoryTransport]:
    clock = VirtualClock()
    ep = Endpoint(name="m", base_url="http://memory.invalid/v1")
    transport = MemoryTransport(*replies, clock=clock)
    return ModelClient(ep, transport=transport, limits=EndpointLimits.for_endpoint(
        ep, clock=clock), backoff_base_s=0.001), transport


async def episode(agent_reply: Answer):
    user, _ = client(Answer(body=completion("please help")))
    agent, transport = client(agent_reply)
    res = await run_episode(TASK, agent=agent.complete, user=user.complete, toolkit=TOOLKIT,
                            state={}, final_state=lambda s: {})
    return res, transport


async def test_context_overflow_ends_the_episode_with_its_reason_never_retried() -> None:
    overflow = Answer(400, {"error": {
        "code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 9412, "n_ctx": 8192,
        "message": "request (9412 tokens) exceeds the available context size (8192 tokens), "
                   "try increasing it"}})  # llama.cpp's words
    res, transport = await episode(overflow)
    assert res.termination == TerminationReason.CONTEXT_OVERFLOW
    assert "exceeds the available context size" in res.error
    assert transport.count == 1 and res.termination in FAILED_TERMINATIONS


async def test_truncated_reply_ends_the_episode_and_stays_in_the_record() -> None:
    res, _ = await episode(Answer(body=completion("I will now list every hotel: 1) Jin",
                                                  finish_reason="length")))
    assert res.termination == TerminationReason.TRUNCATED
    assert "finish_reason 'length'" in res.error
    assert res.messages[-1].content == "I will now list every hotel: 1) Jin"
    assert res.agent_calls == 1 and res.agent_usage.completion_tokens == 3


async def test_a_sweep_records_both_endings_and_fails_them(tmp_path) -> None:
    cfg = load_config(None, dict(models=["scripted/oracle"], benchmarks=["vitabench:delivery"],
                                 trials=6, reference_faults="overflow=0.1,length=0.1",
                                 reference_seed=3))
    outcome = await run_sweep(cfg, tmp_path / "s.sqlite")
    with RunStore(outcome.store_path) as store:
        records = store.episodes(outcome.run_id)
        ends = Counter(r.termination for r in records)
        rows = {r["episode_key"]: r for r in store.episode_rows(outcome.run_id)}
        state = {j["episode_key"]: j for j in store.judgments(rows) if j["judge"] == "state"}
    assert ends["context_overflow"] and ends["truncated"] and ends["user_stop"]
    for eid, row in rows.items():
        if row["termination"] in ("context_overflow", "truncated"):
            assert state[eid]["passed"] is False  # counted as failures
