"""Hedging at its edges (client/hedging.py): when copies go, which answer a call keeps, what a
losing copy is billed, and that a caller's cancellation is never taken for a copy's win. The
transport here holds each request until the test lets it answer: no sockets, no timing luck."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from sweepbench.client.facade import ModelClient
from sweepbench.client.hedging import MAX_HEDGES, IdleSlots, Race, bill
from sweepbench.client.limits import EndpointLimits
from sweepbench.client.outcomes import FAILED
from sweepbench.client.results import CallLedger, CallResult
from sweepbench.client.stalls import HEDGE_BURST, MIN_SAMPLES, Flight, StallPolicy
from sweepbench.client.transports.memory import Answer, MemoryTransport, completion
from sweepbench.config import Endpoint
from sweepbench.wire import AssistantMessage, ChatRequest, Usage, UserMessage

from .rig import cancel_after


def req() -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage("hi")])


class Held:
    """A transport: request ``i`` waits until ``gates[i]`` is set, then answers 200 "r{i}";
    ``on_post(i)`` (if set) runs as request ``i`` arrives. Counts the requests cancelled on
    the wire."""

    def __init__(self) -> None:
        self.gates: list[asyncio.Event] = []
        self.cancelled = 0
        self.on_post = None

    async def post(self, body: bytes, headers):
        i = len(self.gates)
        gate = asyncio.Event()
        self.gates.append(gate)
        if self.on_post is not None:
            self.on_post(i)
        try:
            await gate.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return 200, {}, msgspec.json.encode(completion(f"r{i}"))

    async def aclose(self) -> None:
        pass


def hedged(transport, **endpoint) -> ModelClient:
    """A client whose endpoint is primed at 10 ms a request: hedge delay 20 ms (hedge_min_s),
    TTFB budget 10 s (the floor), so only hedges happen here."""
    client = ModelClient(Endpoint(name="ep", max_retries=0, hedge=True, hedge_min_s=0.02,
                                  **endpoint),
                         base_url="http://ref.invalid/v1", transport=transport)
    for _ in range(MIN_SAMPLES):
        client.stalls.latency.add(0.01)
    assert client.stalls.hedge_delay() == 0.02 and client.stalls.ttfb_budget() == 10.0
    return client


async def until(predicate) -> None:
    while not predicate():
        await asyncio.sleep(0.005)


def nothing_left(client: ModelClient) -> bool:
    """No in-flight slot held, no request left on the watchdog's list."""
    return client.limits.concurrency.in_flight == 0 and not client.stalls._flights


# ---- when copies go -----------------------------------------------------------------------


def race_of(send, stalls: StallPolicy | None = None) -> Race:
    stalls = stalls or StallPolicy(Endpoint(name="e", base_url="http://h"))
    limits = EndpointLimits.for_endpoint(Endpoint(name="e", base_url="http://h"))
    race = Race(stalls, limits, send, b"{}", None, CallLedger())
    race.flight.permit = "first copy's permit"
    return race


async def test_copies_go_one_per_hedge_delay_of_age_in_the_first_copy_slot_at_most_two():
    permits: list[object] = []

    async def send(body, headers, call, flight, permit) -> CallResult:
        permits.append(permit)
        await asyncio.sleep(10)
        raise AssertionError("never answers")

    race = race_of(send)
    seen = []
    for age in (0.99, 1.0, 1.99, 2.0, 2.5, 50.0):
        race.tick(age, 1.0)
        seen.append(len(race.copies))
    assert seen == [0, 1, 1, 2, 2, 2] and MAX_HEDGES == 2
    assert race.call.hedged == 2 and race.stalls.hedges == 2
    await asyncio.sleep(0)
    assert permits == ["first copy's permit"] * 2  # no slot or bucket of their own
    race.close()


async def test_no_copy_while_one_is_answering_or_past_the_hedge_share():
    async def send(body, headers, call, flight, permit) -> CallResult:
        await asyncio.sleep(10)
        raise AssertionError("never answers")

    race = race_of(send)
    race.tick(1.0, 1.0)
    race.copies[0][2].got_first_byte = True  # its body is on its way: no hang
    race.tick(5.0, 1.0)
    assert len(race.copies) == 1
    race.close()

    stalls = StallPolicy(Endpoint(name="e", base_url="http://h"))
    stalls.hedges = HEDGE_BURST  # no request counted yet: the burst is spent
    race = race_of(send, stalls)
    race.tick(1.0, 1.0)
    assert race.copies == [] and race.call.hedged == 0 and stalls.hedges == HEDGE_BURST
    stalls.requests = 10  # a tenth of 10 requests: one more
    race.tick(1.0, 1.0)
    assert len(race.copies) == 1 and stalls.hedges == HEDGE_BURST + 1
    race.close()


async def test_a_win_while_the_first_copy_is_not_on_the_wire_changes_nothing():
    async def send(body, headers, call, flight, permit) -> CallResult:
        raise AssertionError("not sent")

    race = race_of(send)
    other = asyncio.ensure_future(asyncio.sleep(0))
    race._win(other)  # type: ignore[arg-type]
    assert race.won is None and not race.flight.outrun and not race.flight.stop()
    await other


# ---- which answer the call keeps ------------------------------------------------------------


async def test_a_copy_that_answers_first_wins_and_the_hung_first_copy_is_stopped():
    transport = Held()
    client = hedged(transport)
    call = asyncio.ensure_future(client.complete(req()))
    await until(lambda: len(transport.gates) == 2)  # the request and its first hedge
    transport.gates[1].set()
    result = await call
    await asyncio.sleep(0)
    assert result.message.content == "r1" and result.hedge_won and result.hedged == 1
    assert (result.attempts, result.statuses, result.failures) == (1, [200], [])
    assert result.hung == 0 and result.hedge_usage is None  # the first copy got no byte
    assert nothing_left(client) and transport.cancelled == 1
    assert client.failing == 0 and client.last_failure is None  # a loser is no failure


async def test_the_first_copy_keeps_its_answer_when_it_comes_before_a_copy_does():
    transport = Held()
    client = hedged(transport)
    call = asyncio.ensure_future(client.complete(req()))
    await until(lambda: len(transport.gates) == 3)  # the request and both hedges
    transport.gates[0].set()
    result = await call
    await asyncio.sleep(0)
    assert result.message.content == "r0" and not result.hedge_won and result.hedged == 2
    assert nothing_left(client) and transport.cancelled == 2


async def test_copies_use_the_first_copys_in_flight_slot_even_the_only_one():
    transport = Held()
    client = hedged(transport, max_concurrency=1)
    call = asyncio.ensure_future(client.complete(req()))
    for _ in range(200):
        if len(transport.gates) == 3:
            break
        await asyncio.sleep(0.005)
    assert len(transport.gates) == 3  # the request and both hedges, none queued for a slot
    assert client.limits.concurrency.in_flight == 1
    transport.gates[2].set()
    assert (await call).message.content == "r2"


async def test_a_first_copy_failing_before_its_backups_left_is_retried_as_usual():
    """The first copy's 500 comes back before its backup ever ran: there is no backup answer
    to wait for (one not yet sent is no better than one sent long ago); the call retries."""
    transport = MemoryTransport(Answer(500, {"error": {"message": "boom"}}),
                                Answer(body=completion("retried")))
    client = ModelClient(Endpoint(name="ep", max_retries=1), base_url="http://ref.invalid/v1",
                         transport=transport, backoff_base_s=0.001, backoff_max_s=0.001)
    client.spare = IdleSlots(idle=1)
    client.limits.outcomes.add(FAILED)  # faulted lately: backups go
    for _ in range(MIN_SAMPLES):
        client.stalls.latency.add(0.3)
    result = await client.complete(req())
    assert (result.message.content, result.statuses, result.hedged) == ("retried", [500, 200], 2)
    assert not result.hedge_won and transport.count == 2  # neither backup reached the wire
    for _ in range(3):
        await asyncio.sleep(0)  # the cancelled backups give their slots back
    assert client.spare.lent == 0 and nothing_left(client)


# ---- a cancel is a cancel -------------------------------------------------------------------


async def test_a_cancel_during_a_race_propagates_at_once_and_leaves_nothing_behind():
    transport = Held()
    client = hedged(transport)
    call = asyncio.ensure_future(client.complete(req()))
    await until(lambda: len(transport.gates) == 3)
    call.cancel()
    await asyncio.sleep(0)
    assert call.done() and call.cancelled()  # in the very next step: nothing awaited first
    await asyncio.sleep(0)  # the copies' own cancellations land
    assert nothing_left(client) and transport.cancelled == 3


@pytest.mark.parametrize("steps", range(6))
async def test_a_cancel_landing_about_when_a_copy_wins_is_never_taken_for_the_win(steps):
    """The copy answers at once and, ``steps`` loop steps later, the caller is cancelled:
    before the win, in the same step as the win's stop, or after the call ended. A cancel
    that reached the caller's task before its call ended raises; only one that came after it
    finds the copy's answer returned."""
    transport = Held()
    client = hedged(transport)
    call = asyncio.ensure_future(client.complete(req()))
    outcome: list[bool] = []

    def on_post(i: int) -> None:
        if i == 1:  # the hedge: answers at once; the cancel follows
            transport.gates[1].set()
            cancel_after(steps, call, outcome)

    transport.on_post = on_post
    results = await asyncio.gather(call, return_exceptions=True)
    await asyncio.sleep(0)
    assert len(outcome) == 1
    if outcome[0]:  # the cancel reached a call still running
        assert isinstance(results[0], asyncio.CancelledError)
    else:
        assert results[0].message.content == "r1" and results[0].hedge_won
    assert nothing_left(client)
    assert steps or outcome == [True]  # at once: before the win, a cancel
    assert steps < 5 or outcome == [False]  # five steps on, the call had ended


# ---- what a losing copy costs ---------------------------------------------------------------


def test_a_losing_copy_is_billed_only_when_it_got_its_first_byte():
    result = CallResult(message=AssistantMessage(content="x"), usage=Usage(7, 2), latency_s=0.1,
                        attempts=1, statuses=[200])
    answering, silent, also_answering = Flight(), Flight(), Flight()
    answering.got_first_byte = also_answering.got_first_byte = True
    call = CallLedger()
    bill(call, result, [answering, silent, also_answering])
    assert call.hedge_usage == Usage(14, 4)  # twice the winner's usage, the silent one free
    free = CallLedger()
    bill(free, result, [silent])
    assert free.hedge_usage is None


# ---- idle slots -----------------------------------------------------------------------------


def test_idle_slots_lend_one_copy_per_idle_slot_and_say_when_one_comes_back():
    spare = IdleSlots(idle=2)
    woken: list[int] = []
    spare.given = lambda: woken.append(spare.lent)
    assert [spare.take() for _ in range(3)] == [True, True, False]
    assert (spare.lent, spare.sent) == (2, 2)
    spare.give()
    assert woken == [1] and spare.take() and (spare.lent, spare.sent) == (2, 3)
