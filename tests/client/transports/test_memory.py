"""The in-memory doubles (client/transports/memory.py): the scripted transport answers and
records exactly, and the virtual clock wakes sleepers in time order, only when the loop is idle."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from sweepbench.client.transports.memory import (
    Answer,
    MemoryTransport,
    VirtualClock,
    completion,
)
from sweepbench.errors import ServerError


def test_a_completion_body_is_one_choice_with_usage():
    assert completion() == {
        "id": "chatcmpl-mem", "object": "chat.completion", "created": 0, "model": "mem",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}
    calls = [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    body = completion(None, tool_calls=calls, usage={}, finish_reason="tool_calls",
                      reasoning="why")
    assert body["choices"] == [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "reasoning": "why", "tool_calls": calls}}]
    assert body["usage"] == {}


async def test_the_transport_answers_in_script_order_and_records_each_request():
    clock = VirtualClock(start=5.0)
    boom = ServerError("boom", endpoint="e")
    t = MemoryTransport(Answer(201, b"raw", {"X": "1"}), {"a": 1}, lambda req: Answer(body=req),
                        boom, clock=clock)
    assert await t.post(b'{"n":0}', {"h": "0"}) == (201, {"X": "1"}, b"raw")
    assert await t.post(b'{"n":1}', None) == (200, {}, b'{"a":1}')
    assert await t.post(b'{"n":2}', None) == (200, {}, b'{"n":2}')  # a callable of the request
    errors = []
    for n in (3, 4):  # the last reply repeats: a fresh copy of the exception each time
        with pytest.raises(ServerError) as info:
            await t.post(msgspec.json.encode({"n": n}), None)
        errors.append(info.value)
    assert errors[0] is not boom and errors[1] is not errors[0] and str(errors[1]) == "boom"
    assert t.count == 5 and t.bodies == [{"n": n} for n in range(5)]
    assert t.raw[:2] == [b'{"n":0}', b'{"n":1}'] and t.headers[:2] == [{"h": "0"}, None]
    assert t.times == [5.0] * 5 and (t.in_flight, t.max_in_flight) == (0, 1)
    default = MemoryTransport()
    status, _, payload = await default.post(b"{}", None)
    assert (status, msgspec.json.decode(payload)) == (200, completion())
    assert default.times == [0.0]  # no clock


async def test_delayed_answers_wait_on_the_clock_and_count_in_flight():
    clock = VirtualClock()
    t = MemoryTransport(Answer(delay_s=2.0), clock=clock)
    await asyncio.gather(t.post(b"{}", None), t.post(b"{}", None))
    assert clock.now() == 1002.0 and (t.in_flight, t.max_in_flight) == (0, 2)
    with pytest.raises(RuntimeError) as info:
        await MemoryTransport(Answer(delay_s=1.0)).post(b"{}", None)
    assert str(info.value) == "a delayed answer needs the transport's clock"
    assert not t.closed
    await t.aclose()
    assert t.closed


async def test_the_virtual_clock_wakes_sleepers_in_time_order_once_the_loop_is_idle():
    clock = VirtualClock(start=10.0)
    woke: list[tuple[str, float]] = []

    async def nap(name: str, s: float) -> None:
        await clock.sleep(s)
        woke.append((name, clock.now()))

    async def busy() -> None:
        for _ in range(5):  # runnable work: time does not move while it runs
            await asyncio.sleep(0)
        woke.append(("busy", clock.now()))

    cancelled = asyncio.ensure_future(nap("cancelled", 0.5))
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.gather(nap("b", 2.0), nap("a", 1.0), nap("a2", 1.0), nap("now", -3.0), busy())
    assert woke == [("busy", 10.0), ("now", 10.0), ("a", 11.0), ("a2", 11.0), ("b", 12.0)]
    clock.advance(0.5)
    assert clock.now() == 12.5


async def test_the_virtual_clock_refuses_a_loop_it_cannot_see_into():
    clock = VirtualClock()
    sleeper = asyncio.ensure_future(clock.sleep(1.0))
    await asyncio.sleep(0)  # parked, its wake-up scheduled on this loop

    class Opaque:  # an event loop without asyncio's ready queue (uvloop, say)
        pass

    with pytest.raises(RuntimeError) as info:
        clock._drive(Opaque())
    assert str(info.value) == "VirtualClock needs asyncio's default event loop"
    sleeper.cancel()
