"""The first-byte budget at its edges (client/stalls.py): each abandonment of a call doubles its
next budget until ``timeout_s`` alone holds the request, the watchdog follows a client onto a
new event loop, and a caller's cancellation is never taken for an abandonment. Transports
here are doubles that never send headers (the loopback tests are in test_hung_requests.py)."""

from __future__ import annotations

import asyncio
import time

import msgspec
import pytest

from sweepbench.client.facade import ModelClient
from sweepbench.client.stalls import MIN_SAMPLES, Flight, StallPolicy
from sweepbench.client.transports.memory import completion
from sweepbench.config import Endpoint
from sweepbench.errors import FirstByteTimeout, RequestTimeout
from sweepbench.wire import ChatRequest, UserMessage

from .rig import cancel_after

OK = msgspec.json.encode(completion("fine"))


def req() -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage("hi")])


class Hangs:
    """A transport whose requests never get headers, each failing as a real transport's own
    deadline makes it after ``timeout_s``; the first ``answer`` requests answer at once."""

    def __init__(self, timeout_s: float, answer: int = 0) -> None:
        self.timeout_s = timeout_s
        self.answer = answer
        self.count = 0

    async def post(self, body: bytes, headers):
        self.count += 1
        if self.count <= self.answer:
            return 200, {}, OK
        await asyncio.sleep(self.timeout_s)
        raise RequestTimeout(f"ep: request timed out (timeout_s {self.timeout_s:g})",
                             endpoint="ep")

    async def aclose(self) -> None:
        pass


def client_on(transport: Hangs, **endpoint) -> ModelClient:
    return ModelClient(Endpoint(name="ep", hedge=False, timeout_s=transport.timeout_s,
                                **endpoint), base_url="http://ref.invalid/v1",
                       transport=transport, backoff_base_s=0.001, backoff_max_s=0.001)


# ---- the budget doubles, then timeout_s alone applies ---------------------------------------


def test_each_abandonment_doubles_the_budget_until_it_reaches_timeout_s():
    p = StallPolicy(Endpoint(name="p", base_url="http://h", timeout_s=10.0, ttfb_floor_s=1.0,
                             ttfb_ceiling_s=1.0))
    assert [p.ttfb_budget(n) for n in range(5)] == [1.0, 2.0, 4.0, 8.0, None]  # 16 > 10
    exact = StallPolicy(Endpoint(name="p", base_url="http://h", timeout_s=8.0,
                                 ttfb_floor_s=1.0, ttfb_ceiling_s=1.0))
    assert exact.ttfb_budget(2) == 4.0 and exact.ttfb_budget(3) is None  # 8 is timeout_s
    primed = StallPolicy(Endpoint(name="p", base_url="http://h", timeout_s=100.0, ttfb_k=3.0,
                                  ttfb_floor_s=0.5, ttfb_ceiling_s=20.0))
    for _ in range(MIN_SAMPLES):
        primed.observe(1.0)
    assert [primed.ttfb_budget(n) for n in range(7)] == [3.0, 6.0, 12.0, 24.0, 48.0, 96.0,
                                                         None]  # past the ceiling, below 100


async def test_each_hung_request_of_a_call_gets_twice_the_budget_of_the_last():
    transport = Hangs(timeout_s=0.7)
    client = client_on(transport, max_retries=4, ttfb_floor_s=0.05, ttfb_ceiling_s=0.05)
    with pytest.raises(RequestTimeout) as info:
        await client.complete(req())
    err = info.value
    assert err.attempts == 5 and err.hung == 4  # type: ignore[attr-defined]
    assert [f.error for f in err.failures] == ["FirstByteTimeout"] * 4 + ["RequestTimeout"]
    budgets = [f.message.split("budget (")[1].split(")")[0] for f in err.failures[:4]]
    assert budgets == ["0.05 s", "0.1 s", "0.2 s", "0.4 s"]  # then 0.8 s: past timeout_s


# ---- a new event loop -----------------------------------------------------------------------


def test_a_client_on_a_new_event_loop_abandons_a_hung_request_at_its_budget():
    """The watchdog's check is a timer of the loop it was set on: one left by a loop that has
    ended never runs, and must not stand in for the new loop's, or a hung request would be
    held for the whole timeout_s."""
    transport = Hangs(timeout_s=5.0, answer=1)
    client = client_on(transport, max_retries=0, ttfb_floor_s=0.1, ttfb_ceiling_s=0.2)
    asyncio.run(client.complete(req()))  # answered at once; its loop ends with a check set
    assert client.stalls._check_at is not None and transport.count == 1

    async def hung() -> tuple[float, FirstByteTimeout]:
        t0 = time.monotonic()
        with pytest.raises(FirstByteTimeout) as info:
            await client.complete(req())
        return time.monotonic() - t0, info.value

    took, err = asyncio.run(hung())
    assert "budget (0.2 s)" in str(err) and err.hung == 1  # type: ignore[attr-defined]
    assert took < 4.0  # its budget, not the 5 s timeout


# ---- a cancel is a cancel -------------------------------------------------------------------


@pytest.mark.parametrize("steps", range(5))
async def test_a_cancel_landing_about_when_a_request_is_abandoned_is_still_a_cancel(steps):
    """The watchdog abandons the request and, ``steps`` loop steps later, the caller is
    cancelled. A cancel that reached the caller's task before its call ended raises as a
    cancel, never as a ``FirstByteTimeout``; nothing is left on the watchdog's list or the
    endpoint's in-flight slots either way."""
    transport = Hangs(timeout_s=30.0)
    client = client_on(transport, max_retries=0, ttfb_floor_s=5.0, ttfb_ceiling_s=5.0)
    call = asyncio.ensure_future(client.complete(req()))
    while not client.stalls._flights:
        await asyncio.sleep(0)
    flight = next(iter(client.stalls._flights))
    flight.sent_at -= 10.0  # past its 5 s budget
    outcome: list[bool] = []
    client.stalls._check()  # abandons it
    cancel_after(steps, call, outcome)
    results = await asyncio.gather(call, return_exceptions=True)
    await asyncio.sleep(0)
    assert flight.abandoned == 5.0 and len(outcome) == 1
    if outcome[0]:
        assert isinstance(results[0], asyncio.CancelledError)
    else:
        assert isinstance(results[0], FirstByteTimeout)
    assert client.limits.concurrency.in_flight == 0 and not client.stalls._flights
    assert steps > 1 or outcome == [True]
    assert steps < 4 or outcome == [False]


async def test_a_flight_stops_only_while_on_the_wire_and_once():
    flight = Flight()
    assert not flight.stop()  # not on the wire: nothing to stop
    flight.deadline = deadline = asyncio.timeout(None)

    async def send() -> None:
        async with deadline:
            await asyncio.sleep(10)

    sender = asyncio.ensure_future(send())
    await asyncio.sleep(0)
    assert flight.stop() is True
    await asyncio.sleep(0)
    assert deadline.expired() and flight.stop() is False  # stopped already
    with pytest.raises(TimeoutError):
        await sender
