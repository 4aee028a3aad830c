"""Helpers of the client tests: a client on an in-memory transport and a virtual clock
(:class:`Rig`), the answers it is scripted with, and a cancel timed to the loop's steps."""

from __future__ import annotations

import asyncio

from sweepbench.config import Endpoint
from sweepbench.client.facade import ModelClient
from sweepbench.client.results import CallResult
from sweepbench.client.limits import EndpointLimits
from sweepbench.client.transports.memory import Answer, MemoryTransport, VirtualClock, completion
from sweepbench.wire import ChatRequest, ToolSpec, UserMessage

OK_BODY = completion("hello", tool_calls=[], usage={
    "prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14,
    "prompt_tokens_details": {"cached_tokens": 8}})
OK_BODY["id"], OK_BODY["model"] = "chatcmpl-abc", "served-model"
OK = Answer(body=OK_BODY)
TOOLS = [ToolSpec(function={"name": "f", "parameters": {}})]


def status(code: int, message: str = "nope", headers: dict[str, str] | None = None,
           code_str: str | None = None, delay_s: float = 0.0) -> Answer:
    return Answer(code, {"error": {"message": message, "type": "error", "code": code_str}},
                  headers or {}, delay_s)


def endpoint(**kw) -> Endpoint:
    kw.setdefault("name", "test-model")
    kw.setdefault("base_url", "http://memory.invalid/v1")
    kw.setdefault("max_retries", 3)
    return Endpoint(**kw)


class Rig:
    """A client on an in-memory transport and a virtual clock."""

    def __init__(self, *replies, clock: VirtualClock | None = None,
                 limits: EndpointLimits | None = None, **kw) -> None:
        backoff = {k: kw.pop(k) for k in ("backoff_base_s", "backoff_max_s", "retry_after_max_s",
                                          "on_retry", "cache") if k in kw}
        backoff.setdefault("backoff_base_s", 0.001)
        backoff.setdefault("backoff_max_s", 0.01)
        self.ep = endpoint(**kw)
        self.clock = clock or (limits.clock if limits is not None else VirtualClock())
        self.limits = limits or EndpointLimits.for_endpoint(self.ep, clock=self.clock)
        self.transport = MemoryTransport(*(replies or (OK,)), clock=self.clock)
        self.client = ModelClient(self.ep, limits=self.limits, transport=self.transport,
                                  **backoff)

    async def __call__(self, req: ChatRequest | None = None) -> CallResult:
        return await self.client.complete(req or request())

    @property
    def bodies(self) -> list[dict]:
        return self.transport.bodies


def request(**kw) -> ChatRequest:
    kw.setdefault("model", "whatever")
    kw.setdefault("messages", [UserMessage("hi")])
    return ChatRequest(**kw)


def cancel_after(steps: int, task: asyncio.Task, outcome: list[bool]) -> None:
    """``task.cancel()`` ``steps`` loop steps from now (0: now); its answer into ``outcome``."""
    if steps == 0:
        outcome.append(task.cancel())
    else:
        asyncio.get_running_loop().call_soon(cancel_after, steps - 1, task, outcome)
