"""The first-byte budget at its edges (client/stalls.py): each abandonment of a call doubles its
next budget until ``timeout_s`` alone holds the request, the watchdog follows a client onto a
new event loop, and a caller's cancellation is never taken for an abandonment. Transports
here are doubles that never send headers (the loopback tests are in test_hung_requests.py)."""

from __future__ import annotations

import asyncio
import math
import time

import msgspec
import pytest

from sweepbench.client.facade import ModelClient
from sweepbench.client.limits import EndpointLimits
from sweepbench.client.stalls import (
    MIN_SAMPLES,
    WINDOW,
    Flight,
    LatencyTracker,
    StallPolicy,
    priced,
)
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


class Ticks:
    """The client's clock for latencies that do not depend on the machine's load: each reading
    is 5 ms after the last (a call's latency is two readings apart: 5 ms exactly); sleeps are
    the loop's."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        self.t += 0.005
        return self.t

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def client_on(transport: Hangs, clock: Ticks | None = None, **endpoint) -> ModelClient:
    ep = Endpoint(name="ep", hedge=False, timeout_s=transport.timeout_s, **endpoint)
    return ModelClient(ep, base_url="http://ref.invalid/v1", transport=transport,
                       limits=None if clock is None else EndpointLimits.for_endpoint(ep,
                                                                                     clock=clock),
                       backoff_base_s=0.001, backoff_max_s=0.001)


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


# ---- the latencies behind the budget ------------------------------------------------------


def test_only_finite_non_negative_latencies_count_and_the_window_keeps_the_last_512():
    t = LatencyTracker()
    for bad in (-0.001, math.inf, -math.inf, math.nan):
        t.add(bad)
    t.add(0.0)  # an answer within the clock's resolution
    assert len(t) == 1
    for _ in range(WINDOW):
        t.add(1.0)
    for _ in range(WINDOW // 2 + 1):
        t.add(3.0)
    assert len(t) == WINDOW == 512 and t.quantile(0.5) == 3.0  # the 1.0s of old have gone


def test_quantiles_are_nearest_ranks():
    t = LatencyTracker()
    for s in range(1, MIN_SAMPLES + 1):  # 1.0 ... 20.0
        t.add(float(s))
    assert [t.quantile(q) for q in (0.01, 0.05, 0.5, 0.95, 0.99, 1.0)] == [
        1.0, 1.0, 10.0, 19.0, 20.0, 20.0]


def test_quantiles_are_recomputed_every_16_samples_not_sooner():
    t = LatencyTracker()
    for _ in range(MIN_SAMPLES):
        t.add(1.0)
    assert t.quantile(0.99) == 1.0
    for _ in range(15):
        t.add(9.0)
    assert t.quantile(0.99) == 1.0  # 15 new samples: the sorted copy stands (cheap)
    t.add(9.0)
    assert t.quantile(0.99) == 9.0  # the 16th: sorted again


def test_the_budget_is_k_times_p99_not_the_slowest():
    p = StallPolicy(Endpoint(name="p", base_url="http://h", timeout_s=100.0, ttfb_k=4.0,
                             ttfb_floor_s=0.1, ttfb_ceiling_s=50.0))
    for i in range(1, 101):
        p.observe(i / 100)  # 0.01 ... 1.00 s
    assert p.ttfb_budget() == pytest.approx(4 * 0.99)


@pytest.mark.parametrize("price", ["price_input_per_mtok", "price_cached_input_per_mtok",
                                   "price_output_per_mtok"])
def test_any_one_price_makes_an_endpoint_priced(price):
    assert priced(Endpoint(name="p", **{price: 0.5}))
    assert not priced(Endpoint(name="p"))


# ---- the watchdog's own clock ---------------------------------------------------------------


def test_the_watchdog_checks_four_times_per_shortest_wait_within_20_ms_and_1_s():
    def interval(**endpoint) -> float:
        return StallPolicy(Endpoint(name="p", base_url="http://h", hedge=False,
                                    **endpoint))._interval()

    assert interval() == 1.0  # no budget yet: timeout_s (120 s) / 4, at most 1 s
    assert interval(ttfb_floor_s=0.2, ttfb_ceiling_s=0.2) == 0.05
    assert interval(ttfb_floor_s=0.04, ttfb_ceiling_s=0.04) == 0.02


async def test_a_check_without_a_budget_or_with_copies_on_the_wire_carries_on():
    """No budget yet (the ceiling is timeout_s), and a copy's flight (no race of its own) past
    the hedge delay: the check looks, does nothing, and is set again."""
    p = StallPolicy(Endpoint(name="p", base_url="http://h", hedge=True, hedge_min_s=0.05))
    copy = Flight()
    p.track(copy)
    copy.sent_at -= 1.0
    p._check()  # no latency known: no budget, no hedge delay
    assert p.ttfb_budget() is None and p._check_at is not None
    for _ in range(MIN_SAMPLES):
        p.latency.add(0.01)
    p._check()  # a hedge delay now, and a flight that is no race's first copy
    assert p.hedge_delay() == 0.05 and copy.abandoned is None and p._check_at is not None
    p.untrack(copy)
    p._check_at.cancel()


async def test_the_watchdog_sleeps_with_nothing_on_the_wire_and_wakes_for_the_next_request():
    transport = Hangs(timeout_s=5.0, answer=1)
    client = client_on(transport, max_retries=0, ttfb_floor_s=0.1, ttfb_ceiling_s=0.2)
    await client.complete(req())
    await asyncio.sleep(0.2)  # a check (every 50 ms) found nothing on the wire
    assert client.stalls._check_at is None  # no timer while idle
    with pytest.raises(FirstByteTimeout, match=r"budget \(0\.2 s\)"):
        await asyncio.wait_for(client.complete(req()), 4.0)


class Mixed(Hangs):
    """Requests whose text holds "hang" hang; the others answer after 5 ms."""

    async def post(self, body: bytes, headers):
        if b"hang" in body:
            return await super().post(body, headers)
        await asyncio.sleep(0.005)
        return 200, {}, OK


async def hung_then_primed(**endpoint) -> tuple[ModelClient, asyncio.Future]:
    """A request that hangs, sent before the endpoint's latency is known (the watchdog at its
    slow pace, 1 s), then the 20 answers that make it known: a budget of 0.1 s (the floor).
    Their latencies are read on :class:`Ticks` (5 ms each), so a loaded machine, whose 5 ms
    answers may take longer, does not raise the budget above the floor."""
    client = client_on(Mixed(timeout_s=6.0), clock=Ticks(), max_retries=0, ttfb_floor_s=0.1,
                       **endpoint)
    hung = asyncio.ensure_future(client.complete(
        ChatRequest(model="x", messages=[UserMessage("hang")])))
    await asyncio.sleep(0.05)
    for _ in range(MIN_SAMPLES):
        await client.complete(req())
    assert client.stalls.ttfb_budget() == 0.1 and not hung.done()
    return client, hung


async def test_a_request_sent_before_the_latency_was_known_gets_its_budget_once_it_is():
    """Nothing is sent after the 20th answer: the watchdog must speed up by itself."""
    _, hung = await hung_then_primed()
    with pytest.raises(FirstByteTimeout, match=r"budget \(0\.1 s\)"):
        await asyncio.wait_for(hung, 3.0)


async def test_answers_coming_all_the_while_do_not_postpone_the_watchdog():
    client, hung = await hung_then_primed()
    t0 = time.monotonic()
    while not hung.done() and time.monotonic() - t0 < 3.0:
        await client.complete(req())  # answers every ~5 ms, all the while
    assert hung.done(), "the hung request outlived 3 s of answers after its budget was known"
    with pytest.raises(FirstByteTimeout, match=r"budget \(0\.1 s\)"):
        await hung


def test_first_byte_marks_the_current_flight_only():
    from sweepbench.client.stalls import FLIGHT, first_byte

    first_byte()  # no flight on this context: nothing to mark, no error
    flight, other = Flight(), Flight()
    token = FLIGHT.set(flight)
    try:
        first_byte()
    finally:
        FLIGHT.reset(token)
    assert flight.got_first_byte is True and other.got_first_byte is False


# ---- the watchdog's check, driven by hand (unit tests: no request waits on the clock) --------


class Deadline:
    """A flight's deadline double: ``stop`` makes it expire."""

    def __init__(self) -> None:
        self.stopped = False

    def expired(self) -> bool:
        return self.stopped

    def reschedule(self, when: float) -> None:
        self.stopped = True


class TickLog(list):
    """A race double: the (age, hedge delay) of each tick."""

    def tick(self, age: float, delay: float) -> None:
        self.append((age, delay))


def policy(**endpoint) -> StallPolicy:
    endpoint.setdefault("hedge", False)
    return StallPolicy(Endpoint(name="p", base_url="http://h", **endpoint))


def on_the_wire(p: StallPolicy, age: float, race=None, size: int = 0) -> Flight:
    """A flight tracked by ``p``, sent ``age`` seconds ago, with a deadline double."""
    flight = Flight(race)
    flight.size = size
    p.track(flight)
    flight.sent_at -= age
    flight.deadline = Deadline()  # type: ignore[assignment]
    return flight


def checked(p: StallPolicy) -> None:
    p._check()
    p._check_at.cancel()  # the next check is not waited for


async def test_a_flight_past_its_budget_is_stopped_and_one_with_its_first_byte_is_not():
    p = policy(timeout_s=60.0, ttfb_floor_s=1.0, ttfb_ceiling_s=1.0)
    byte, hung, young = on_the_wire(p, 5.0), on_the_wire(p, 4.0), on_the_wire(p, 0.0)
    byte.got_first_byte = True
    checked(p)
    assert (byte.abandoned, hung.abandoned, young.abandoned) == (None, 1.0, None)
    assert (byte.deadline.stopped, hung.deadline.stopped, young.deadline.stopped) == (
        False, True, False)


async def test_a_hedgeable_flight_is_told_its_age_between_the_hedge_delay_and_its_budget():
    p = policy(hedge=True, timeout_s=60.0, ttfb_floor_s=10.0, ttfb_ceiling_s=10.0,
               hedge_min_s=1.0)
    for _ in range(MIN_SAMPLES):
        p.latency.add(0.01)
    loop = asyncio.get_running_loop()
    old, young = TickLog(), TickLog()
    t0 = loop.time()
    flight = on_the_wire(p, 5.0, old)
    on_the_wire(p, 0.0, young)
    checked(p)
    assert flight.abandoned is None and len(old) == 1 and young == []
    age, delay = old[0]
    assert delay == 1.0 and 5.0 <= age <= 5.0 + (loop.time() - t0)


async def test_self_hosted_only_the_oldest_waiting_flight_may_be_abandoned_once_per_answer():
    p = policy(kind="self-hosted", timeout_s=60.0, ttfb_floor_s=2.0, ttfb_ceiling_s=2.0)
    first, second = on_the_wire(p, 5.0), on_the_wire(p, 4.0)
    loop = asyncio.get_running_loop()
    before = loop.time()
    checked(p)
    assert (first.abandoned, second.abandoned) == (2.0, None)
    assert before <= p.answered_at <= loop.time()  # the next in line waits from now
    p.untrack(first)
    checked(p)
    assert second.abandoned is None  # 4 s on the wire, but the server answered just now


async def test_self_hosted_budgets_run_from_the_last_answer_and_grow_with_the_prompt():
    p = policy(kind="self-hosted", timeout_s=60.0, ttfb_floor_s=2.0, ttfb_ceiling_s=2.0)
    for size in range(10, 210, 10):  # 10 ... 200 bytes: the median is 100
        p.sizes.add(float(size))
    long = on_the_wire(p, 4.0, size=300)  # three median prompts: a budget of 6 s
    checked(p)
    assert long.abandoned is None
    long.sent_at -= 3.0
    checked(p)
    assert long.abandoned == 6.0
    p.untrack(long)
    recent = on_the_wire(p, 10.0)
    p.answered_at = asyncio.get_running_loop().time() - 0.5  # answered half a second ago
    checked(p)
    assert recent.abandoned is None


def test_the_prefill_factor_is_the_prompt_over_the_median_prompt_at_least_one():
    p = policy()
    sized = Flight()
    sized.size = 300
    assert p._prefill(sized) == 1.0  # no median yet
    for size in range(10, 210, 10):
        p.sizes.add(float(size))
    assert p._prefill(sized) == 3.0
    sized.size = 50
    assert p._prefill(sized) == 1.0
    sized.size = 0
    assert p._prefill(sized) == 1.0  # size unknown


def test_the_hedge_delay_is_the_largest_of_its_three_floors():
    def delay(latencies, **endpoint) -> float:
        p = policy(hedge=True, **endpoint)
        for s in latencies:
            p.latency.add(s)
        return p.hedge_delay()

    assert delay([float(s) for s in range(1, 21)], hedge_quantile=0.95) == 19.0  # the quantile
    assert delay([1.0] * 20, hedge_quantile=0.95) == 1.5  # 1.5 medians
    assert delay([1.0] * 19 + [100.0], hedge_quantile=0.9) == 1.5
    assert delay([0.001] * 20, hedge_min_s=0.25) == 0.25  # its minimum


def test_hedges_stay_within_a_tenth_of_requests_plus_a_burst_of_four():
    p = policy(hedge=True)
    assert [p.may_hedge() for _ in range(5)] == [True] * 4 + [False]
    assert p.hedges == 4
    p.requests = 20  # 2 more
    assert [p.may_hedge() for _ in range(3)] == [True, True, False]
    assert p.hedges == 6


async def test_the_twentieth_latency_speeds_the_watchdog_up_at_once():
    p = policy(timeout_s=60.0, ttfb_floor_s=0.1)
    loop = asyncio.get_running_loop()
    for _ in range(MIN_SAMPLES):
        p.observe(0.005)  # nothing on the wire: no timer to speed up
    assert p._check_at is None and p.answered_at == 0.0
    p = policy(timeout_s=60.0, ttfb_floor_s=0.1)
    flight = Flight()
    p.track(flight)
    slow = p._check_at
    assert slow.when() - loop.time() > 0.1  # no budget yet: a check a second (1 s)
    for _ in range(MIN_SAMPLES - 1):
        p.observe(0.005)
    assert p._check_at is slow
    before = loop.time()
    p.observe(0.005, size=40)
    assert p._check_at is not slow and slow.cancelled()
    assert p._check_at.when() - loop.time() <= 0.025 and before <= p.answered_at <= loop.time()
    assert p.sizes.quantile(0.5) is None and len(p.sizes) == 1
    p.untrack(flight)
    p.untrack(flight)  # twice: nothing left to take
    p._check_at.cancel()


def test_a_flight_leaving_holds_its_permit():
    flight = Flight()
    flight.leaving("its permit")
    assert flight.permit == "its permit"


class Frozen:
    """The running loop's clock held at ``t`` while a check runs by hand (no await inside)."""

    def __init__(self, t: float) -> None:
        self.loop, self.t = asyncio.get_running_loop(), t

    def __enter__(self) -> float:
        self.loop.time = lambda: self.t  # type: ignore[method-assign]
        return self.t

    def __exit__(self, *exc) -> None:
        del self.loop.time  # the class's own again


@pytest.mark.parametrize("kind", ["hosted", "self-hosted"])
async def test_a_flight_is_abandoned_at_its_budget_exactly(kind):
    p = policy(kind=kind, timeout_s=60.0, ttfb_floor_s=2.0, ttfb_ceiling_s=2.0)
    at, before = on_the_wire(p, 0.0), on_the_wire(p, 0.0)
    t = float(round(asyncio.get_running_loop().time()) + 10)  # whole seconds: exact sums
    at.sent_at, before.sent_at = t - 2.0, t - 1.999
    with Frozen(t):
        p._check()
    p._check_at.cancel()
    assert at.abandoned == 2.0
    if kind == "hosted":
        assert before.abandoned is None
    else:  # waited from the head's abandonment, now
        assert before.abandoned is None and p.answered_at == t


async def test_every_flight_past_its_budget_is_abandoned_in_one_check():
    p = policy(timeout_s=60.0, ttfb_floor_s=1.0, ttfb_ceiling_s=1.0)
    flights = [on_the_wire(p, 5.0), on_the_wire(p, 4.0), on_the_wire(p, 3.0)]
    checked(p)
    assert [f.abandoned for f in flights] == [1.0, 1.0, 1.0]


async def test_self_hosted_flights_behind_the_head_get_no_budget_but_are_told_their_age():
    p = policy(kind="self-hosted", hedge=True, timeout_s=60.0, ttfb_floor_s=2.0,
               ttfb_ceiling_s=2.0, hedge_min_s=1.0)
    for _ in range(MIN_SAMPLES):
        p.latency.add(0.01)
    for size in range(10, 210, 10):  # the median prompt: 100 bytes
        p.sizes.add(float(size))
    behind = TickLog()
    head = on_the_wire(p, 5.0, size=300)  # a long prompt: 6 s
    short = on_the_wire(p, 4.0, race=behind)  # 2 s of its own, but not the head
    checked(p)
    assert (head.abandoned, short.abandoned) == (None, None)
    assert len(behind) == 1 and behind[0][1] == 1.0
    head.sent_at -= 2.0  # now past its 6 s: abandoned, and the next still told its age
    checked(p)
    assert (head.abandoned, short.abandoned) == (6.0, None) and len(behind) == 2


def test_hedging_is_on_by_default_only_for_hosted_endpoints_without_prices():
    def hedging(**endpoint) -> bool:
        endpoint.setdefault("base_url", "http://api.example/v1")
        return StallPolicy(Endpoint(name="p", **endpoint)).hedging

    assert hedging()
    assert not hedging(price_output_per_mtok=1.0)
    assert not hedging(kind="self-hosted") and not hedging(base_url="http://127.0.0.1:8000/v1")
    assert hedging(hedge=True, price_output_per_mtok=1.0) and hedging(hedge=True,
                                                                      kind="self-hosted")
    assert not hedging(hedge=False)


def test_self_hosted_is_the_kind_or_else_a_local_host():
    from sweepbench.client.stalls import self_hosted

    def local(base_url: str, kind: str | None = None) -> bool:
        return self_hosted(Endpoint(name="p", base_url=base_url, kind=kind))

    for url in ("http://localhost:8000/v1", "http://LOCALHOST/v1", "http://gpu.localhost/v1",
                "http://127.0.0.1/v1", "http://[::1]:8000/v1", "http://10.0.0.5/v1",
                "http://192.168.1.2/v1", "http://169.254.0.9/v1"):
        assert local(url), url
    for url in ("http://api.example/v1", "http://8.8.8.8/v1", "http://localhost.example/v1"):
        assert not local(url), url
    assert local("http://api.example/v1", kind="self-hosted")
    assert not local("http://localhost/v1", kind="hosted")


def test_a_new_flight_is_nowhere_yet():
    f = Flight()
    assert (f.race, f.hung, f.got_first_byte, f.abandoned, f.outrun, f.sent_at, f.size,
            f.permit, f.deadline) == (None, 0, False, None, False, 0.0, 0, None, None)
