"""In-memory doubles of the model client's two seams: a transport and a clock.

:class:`MemoryTransport` answers ``ModelClient`` requests from a script, without sockets, and
records what it was sent; :class:`VirtualClock` is a :class:`~sweepbench.client.clock.Clock`
whose time moves only when every task is waiting on it, so back-off, Retry-After, breaker
cool-downs and RPM spacing run instantly and exactly. Together they make client tests (and
config checks) independent of the machine's load::

    clock = VirtualClock()
    transport = MemoryTransport(Answer(500, {"error": {"message": "boom"}}), OK, clock=clock)
    client = ModelClient(endpoint, transport=transport,
                         limits=EndpointLimits.for_endpoint(endpoint, clock=clock))
"""

from __future__ import annotations

import asyncio
import copy
import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

__all__ = ["Answer", "MemoryTransport", "VirtualClock", "completion"]


class VirtualClock:
    """Simulated time for one event loop: ``sleep`` parks the caller; when nothing else can
    run (the loop's ready queue is empty), time jumps to the earliest wake-up.

    Only for code whose waiting is all on this clock (no sockets, no real timers), on
    asyncio's own event loop (it looks at the loop's ready queue)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.t = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self._scheduled = False

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        """Move time by hand (wakes nobody; sleepers wake when the loop is next idle)."""
        self.t += seconds

    async def sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._sleepers, (self.t + max(0.0, seconds), next(self._seq), fut))
        self._schedule(loop)
        await fut

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._drive, loop)

    def _drive(self, loop: asyncio.AbstractEventLoop) -> None:
        self._scheduled = False
        sleepers = self._sleepers
        while sleepers and sleepers[0][2].done():  # cancelled sleepers
            heapq.heappop(sleepers)
        if not sleepers:
            return
        ready = getattr(loop, "_ready", None)
        if ready is None:
            raise RuntimeError("VirtualClock needs asyncio's default event loop")
        if ready:  # others can still run: let them first
            self._schedule(loop)
            return
        when = sleepers[0][0]
        self.t = max(self.t, when)
        while sleepers and sleepers[0][0] <= self.t:
            fut = heapq.heappop(sleepers)[2]
            if not fut.done():
                fut.set_result(None)
        if sleepers:
            self._schedule(loop)


def completion(content: str | None = "hello", *, tool_calls: list[dict] | None = None,
               usage: dict[str, Any] | None = None, finish_reason: str = "stop",
               **message: Any) -> dict[str, Any]:
    """A chat-completions body with one choice."""
    msg: dict[str, Any] = {"role": "assistant", "content": content, **message}
    if tool_calls is not None:
        msg["tool_calls"] = tool_calls
    return {"id": "chatcmpl-mem", "object": "chat.completion", "created": 0, "model": "mem",
            "choices": [{"index": 0, "message": msg, "finish_reason": finish_reason}],
            "usage": usage if usage is not None else
            {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}


@dataclass
class Answer:
    """One scripted HTTP answer: ``body`` is JSON-encoded unless it is bytes; ``delay_s`` is
    server time on the transport's clock before it answers."""

    status: int = 200
    body: Any = field(default_factory=completion)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    def payload(self) -> bytes:
        return self.body if isinstance(self.body, bytes) else msgspec.json.encode(self.body)


Script = Answer | BaseException | dict | Callable[[dict], Any]


class MemoryTransport:
    """A :class:`~sweepbench.client.transports.base.Transport` answering request ``i`` with
    ``replies[i]`` (the last repeats): an :class:`Answer`, a body dict (200), an exception to
    raise (a copy of it: a ``ModelError``, as a real transport would), or a callable of the decoded request
    returning one of those. Records ``bodies``, ``headers``, arrival ``times`` and the most
    requests it held at once (``max_in_flight``)."""

    def __init__(self, *replies: Script, clock: Any = None) -> None:
        self.replies = replies or (Answer(),)
        self.clock = clock
        self.bodies: list[dict] = []
        self.raw: list[bytes] = []
        self.headers: list[dict[str, str] | None] = []
        self.times: list[float] = []
        self.in_flight = self.max_in_flight = 0
        self.closed = False

    @property
    def count(self) -> int:
        return len(self.bodies)

    async def post(self, body: bytes, headers: dict[str, str] | None) -> tuple[int, Any, bytes]:
        i = len(self.bodies)
        self.raw.append(body)
        self.bodies.append(msgspec.json.decode(body))
        self.headers.append(headers)
        self.times.append(self.clock.now() if self.clock is not None else 0.0)
        reply = self.replies[min(i, len(self.replies) - 1)]
        if callable(reply) and not isinstance(reply, (Answer, BaseException, dict)):
            reply = reply(self.bodies[-1])
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if isinstance(reply, BaseException):
                raise copy.copy(reply)  # a fresh one per request, as a transport raises
            answer = reply if isinstance(reply, Answer) else Answer(body=reply)
            if answer.delay_s:
                if self.clock is None:
                    raise RuntimeError("a delayed answer needs the transport's clock")
                await self.clock.sleep(answer.delay_s)
            return answer.status, answer.headers, answer.payload()
        finally:
            self.in_flight -= 1

    async def aclose(self) -> None:
        self.closed = True
