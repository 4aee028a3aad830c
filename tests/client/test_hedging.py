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
from sweepbench.client.stalls import (
    HEDGE_BURST,
    MIN_SAMPLES,
    Flight,
    Outrun,
    StallPolicy,
)
from sweepbench.client.transports.memory import Answer, MemoryTransport, completion
from sweepbench.config import Endpoint
from sweepbench.errors import ServerError
from sweepbench.wire import AssistantMessage, ChatRequest, Usage, UserMessage

from ..support import FakeClock
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


# ---- a Race driven by hand: a first copy under a deadline, copies that answer on cue ---------


class FixedStalls:
    """A test double of the endpoint's StallPolicy: a fixed hedge delay, hedges always fit."""

    def __init__(self, delay: float | None) -> None:
        self.delay = delay

    def hedge_delay(self) -> float | None:
        return self.delay

    def may_hedge(self) -> bool:
        return True


class Copies:
    """The race's ``send``: copy ``i`` records its arguments, counts ``hung`` abandoned and
    ``limited`` 429s on its own ledger, then answers with ``plans[i]``: ``(seconds, reply)``,
    a reply being a string (a 200 with that content, its first byte seen) or an exception."""

    def __init__(self, *plans) -> None:
        self.plans = list(plans)
        self.sent: list[tuple] = []
        self.hung = self.limited = 0

    async def __call__(self, body, headers, call, flight, permit) -> CallResult:
        self.sent.append((body, headers, call, flight, permit))
        flight.sent_at = asyncio.get_running_loop().time()
        seconds, reply = self.plans[len(self.sent) - 1]
        call.hung += self.hung
        call.rate_limited += self.limited
        await asyncio.sleep(seconds)
        flight.got_first_byte = True
        if isinstance(reply, BaseException):
            call.statuses.append(getattr(reply, "status", 0) or 0)
            call.failures.append(f"copy {len(self.sent)}")
            raise reply
        call.statuses.append(200)
        call.payload = reply.encode()
        return CallResult(message=AssistantMessage(content=reply), usage=Usage(7, 2),
                          latency_s=seconds, attempts=1, statuses=[200])


async def first_copy(race: Race, seconds: float, reply, *, first_byte: bool = False):
    """The first copy as the client's ``_post`` sends it: on the wire under a deadline its race
    may stop (``Outrun``); ``reply`` after ``seconds`` as in :class:`Copies`."""
    flight = race.flight
    flight.sent_at = asyncio.get_running_loop().time()
    deadline = flight.deadline = asyncio.timeout(None)
    try:
        async with deadline:
            flight.got_first_byte = first_byte
            await asyncio.sleep(seconds)
    except TimeoutError:
        race.call.statuses.append(0)
        assert flight.outrun
        raise Outrun from None
    finally:
        flight.deadline = None
    if isinstance(reply, BaseException):
        race.call.statuses.append(reply.status or 0)
        raise reply
    race.call.statuses.append(200)
    return CallResult(message=AssistantMessage(content=reply), usage=Usage(7, 2),
                      latency_s=seconds, attempts=1, statuses=[200])


def hand_race(send, delay: float | None = 1.0, limits: EndpointLimits | None = None) -> Race:
    limits = limits or EndpointLimits.for_endpoint(Endpoint(name="e", base_url="http://h"))
    race = Race(FixedStalls(delay), limits, send, b"{}", {"X-Copy": "1"}, CallLedger())
    race.flight.permit = "first copy's permit"
    return race


def boom() -> ServerError:
    return ServerError("HTTP 500: boom", endpoint="e", status=500)


async def test_a_hedge_that_wins_takes_the_call_with_its_books_and_stops_the_first_copy():
    send = Copies((0.01, "copy"))
    send.hung, send.limited = 1, 2
    race = hand_race(send)
    race.call.hung, race.call.rate_limited, race.call.statuses = 1, 1, [503]
    race.hung0 = 1
    run = asyncio.ensure_future(race.run(first_copy(race, 10, "first", first_byte=True)))
    await asyncio.sleep(0)
    race.tick(1.0, 1.0)
    result = await run
    (_, headers, _sub, flight, permit), = send.sent
    assert (headers, permit, flight) == ({"X-Copy": "1"}, "first copy's permit", race.copies[0][2])
    assert result.message.content == "copy" and race.call.hedge_won
    assert race.call.statuses == [503, 200] and (result.statuses, result.attempts) == ([503, 200], 2)
    assert (race.call.hung, race.call.rate_limited) == (2, 3)  # one more each, from the copy
    assert race.call.payload == b"copy"
    # the first copy had its first byte when stopped: billed like the answer; the winner is not
    assert race.call.hedge_usage == Usage(7, 2)
    assert race.flight.race is None and race.ready is None and not race.live  # unhooked


async def test_a_winning_copy_that_failed_raises_its_error_with_the_call_books():
    send = Copies((0.01, boom()))
    race = hand_race(send)
    run = asyncio.ensure_future(race.run(first_copy(race, 10, "first")))
    await asyncio.sleep(0)
    race.tick(1.0, 1.0)
    with pytest.raises(ServerError) as info:
        await run
    assert race.call.failures == ["copy 1"] and race.call.hedge_won
    assert (info.value.attempts, info.value.statuses) == (1, [500])
    assert info.value.failures == ["copy 1"]


async def test_a_first_copy_failing_after_it_answered_headers_is_not_billed_beside_its_backup():
    send = Copies((0.02, "backup"))
    race = hand_race(send)
    race.send_backups(IdleSlots(idle=1), 1)
    result = await race.run(first_copy(race, 0.01, boom(), first_byte=True))
    assert result.message.content == "backup" and race.call.hedge_won
    assert race.call.hedge_usage is None  # a 500's headers are no answer
    assert race.call.statuses == [200] and race.call.payload == b"backup"


async def test_after_a_failed_first_copy_the_first_backup_to_answer_within_the_delay_is_taken():
    # the first copy fails at 0.05 s, backup 1 at 0.07 s, backup 2 answers at 0.1 s, backup 3
    # hangs: the hedge delay is 1 s
    send = Copies((0.07, boom()), (0.1, "second"), (30, "never"))
    race = hand_race(send)
    race.send_backups(IdleSlots(idle=3), 3)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    result = await race.run(first_copy(race, 0.05, boom()))
    assert result.message.content == "second"
    assert loop.time() - t0 < 0.5  # taken when it came, not at the end of the delay


async def test_a_backup_answering_after_the_hedge_delay_is_not_waited_for():
    send = Copies((0.4, "late"))
    race = hand_race(send, delay=0.1)
    race.send_backups(IdleSlots(idle=1), 1)
    with pytest.raises(ServerError):
        await race.run(first_copy(race, 0.0, boom()))


async def test_without_a_hedge_delay_a_failed_first_copy_waits_for_no_backup():
    send = Copies((0.05, "backup"))
    race = hand_race(send, delay=None)
    race.send_backups(IdleSlots(idle=1), 1)
    with pytest.raises(ServerError):
        await race.run(first_copy(race, 0.0, boom()))


class _Done:
    """A test double of a finished copy's task, on a loop whose time is ``now``."""

    def __init__(self, now: float, error: BaseException | None = None, cancelled=False) -> None:
        self.now, self.error, self._cancelled = now, error, cancelled

    def cancelled(self) -> bool:
        return self._cancelled

    def exception(self):
        if self._cancelled:
            raise asyncio.CancelledError
        return self.error

    def get_loop(self):
        return self

    def time(self) -> float:
        return self.now


async def test_a_backup_answering_at_the_hedge_delay_wins_at_once_and_a_failed_one_never():
    race = hand_race(Copies())
    race.flight.sent_at = 100.0
    async with asyncio.timeout(None) as deadline:
        await asyncio.sleep(0)  # the first copy on the wire
        race.flight.deadline = deadline
        race.backup_done(_Done(100.5, boom()))
        race.backup_done(_Done(100.5, cancelled=True))
        assert race.ready is None and race.won is None
        early = _Done(100.5)
        race.backup_done(early)  # half the delay: held
        assert race.ready is early and race.won is None
        on_time = _Done(101.0)
        race.backup_done(on_time)  # at the delay: the held one stays ready, this one wins
        assert race.ready is early and race.won is on_time and race.flight.outrun
        race.flight.deadline = None
    closed = hand_race(Copies())
    closed.close()
    closed.backup_done(_Done(0.0))
    assert closed.ready is None


async def test_a_tick_with_a_backup_ready_gives_it_the_win():
    race = hand_race(Copies())
    ready = _Done(0.0)
    race.ready = ready
    async with asyncio.timeout(None) as deadline:
        await asyncio.sleep(0)  # the first copy on the wire
        race.flight.deadline = deadline
        race.tick(0.1, 1.0)
        race.flight.deadline = None
    assert race.won is ready and race.copies == []


async def test_backups_do_not_count_against_the_hedges_and_carry_the_request():
    send = Copies((30, "never"), (30, "never"))
    race = hand_race(send)
    race.send_backups(IdleSlots(idle=1), 2)
    race.tick(1.0, 1.0)  # one hedge delay: the first hedge goes, the backup not counted
    assert len(race.copies) == 2 and race.call.hedged == 2
    await asyncio.sleep(0)
    (_, h1, _, f1, p1), (_, h2, _, f2, _) = send.sent
    assert h1 == h2 == {"X-Copy": "1"} and (f1, f2) == (race.copies[0][2], race.copies[1][2])
    assert p1 is not None and p1 != "first copy's permit"  # a backup's own permit
    race.close()


def test_no_backup_would_take_the_rate_limit_under_half_its_bank():
    clock = FakeClock()
    limits = EndpointLimits(max_concurrency=8, rpm=240, headroom=1.0, burst_s=1.0, clock=clock)
    limits.requests.reserve(2)  # 4 banked, 2 left: one more leaves 1, under half
    race = hand_race(Copies(), limits=limits)
    spare = IdleSlots(idle=2)
    race.send_backups(spare, 1)
    assert race.copies == [] and spare.lent == 0 and race.call.hedged == 0
    assert limits.concurrency.in_flight == 0


def test_idle_slots_start_with_none_idle_and_need_nobody_told():
    spare = IdleSlots()
    assert not spare.take() and spare.sent == 0
    spare.idle = 1
    assert spare.take()
    spare.give()  # nobody to tell
    assert spare.lent == 0
