"""The circuit breaker with fake clocks: its states, one half-open probe, cool-downs doubling
up to a cap, giving up after the caller's wait, and what may close it."""

from __future__ import annotations

import asyncio

import pytest

from sweepbench.client.breaker import BreakerOpen, CircuitBreaker

from ..support import FakeClock


class ManualClock:
    """Time moves only when the test says so; sleepers wake when their time has come."""

    def __init__(self) -> None:
        self.t = 0.0
        self.sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        fut = asyncio.get_running_loop().create_future()
        self.sleepers.append((self.t + seconds, fut))
        await fut

    async def advance(self, seconds: float) -> None:
        self.t += seconds
        for at, fut in list(self.sleepers):
            if at <= self.t and not fut.done():
                fut.set_result(None)
        for _ in range(5):
            await asyncio.sleep(0)


async def test_breaker_state_machine() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=3, cooldown_s=5.0, max_cooldown_s=15.0, clock=clock)
    assert await br.wait() is False
    br.failure()
    br.failure()
    br.success()  # a success resets the count
    br.failure()
    br.failure()
    assert br.state == "closed"
    br.failure()
    assert br.state == "open" and br.opened == 1

    # open: a caller waits out the cool-down, then is the half-open probe
    t0 = clock.now()
    assert await br.wait() is True
    assert br.state == "half_open" and clock.now() - t0 == pytest.approx(5.0)

    # probe fails: open again, cool-down doubled
    br.failure(probe=True)
    assert br.state == "open" and br.opened == 2
    t1 = clock.now()
    assert await br.wait() is True
    assert clock.now() - t1 == pytest.approx(10.0)
    br.failure(probe=True)
    t2 = clock.now()
    assert await br.wait() is True
    assert clock.now() - t2 == pytest.approx(15.0)  # capped

    # probe succeeds: closed, cool-down reset
    br.success(probe=True)
    assert br.state == "closed" and br.failures == 0
    assert await br.wait() is False
    for _ in range(3):
        br.failure()
    t3 = clock.now()
    assert await br.wait() is True
    assert clock.now() - t3 == pytest.approx(5.0)


async def test_half_open_lets_one_probe_through_and_releases_the_rest() -> None:
    br = CircuitBreaker(threshold=1, cooldown_s=0.01)
    br.failure()
    results = await asyncio.wait_for(asyncio.gather(
        *(br.wait() for _ in range(5)), _succeed_probe_soon(br)), 2.0)
    assert sorted(results[:5]) == [False, False, False, False, True]
    assert br.state == "closed"


async def _succeed_probe_soon(br: CircuitBreaker) -> None:
    while br.state != "half_open":
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.01)
    br.success(probe=True)


async def test_abandoned_probe_hands_probing_to_another_waiter() -> None:
    br = CircuitBreaker(threshold=1, cooldown_s=0.0)
    br.failure()
    assert await br.wait() is True
    other = asyncio.create_task(br.wait())
    await asyncio.sleep(0.01)
    assert not other.done()
    br.abandon(True)
    assert await asyncio.wait_for(other, 1.0) is True


async def test_breaker_gives_up_after_max_wait() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=1, cooldown_s=100.0, clock=clock)
    br.failure()
    with pytest.raises(BreakerOpen) as info:
        await br.wait(max_wait_s=30.0)
    assert info.value.waited_s == pytest.approx(30.0)


def test_a_breaker_needs_a_threshold_of_at_least_one() -> None:
    with pytest.raises(ValueError, match="breaker threshold must be >= 1, got 0"):
        CircuitBreaker(threshold=0)
    assert CircuitBreaker(threshold=1).threshold == 1


async def test_the_default_breaker_opens_after_ten_failures_and_cools_down_from_one_second() -> None:
    clock = FakeClock()
    br = CircuitBreaker(clock=clock)
    for _ in range(9):
        br.failure()
    assert br.state == "closed"
    br.failure()
    assert br.state == "open"
    waits = []
    for _ in range(7):
        t0 = clock.now()
        assert await br.wait() is True
        waits.append(clock.now() - t0)
        br.failure(probe=True)
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


async def test_a_short_cool_down_is_not_rounded_up() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=1, cooldown_s=0.25, clock=clock)
    br.failure()
    t0 = clock.now()
    assert await br.wait() is True
    assert clock.now() - t0 == 0.25


async def test_waiting_behind_a_probe_costs_no_polling() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=1, cooldown_s=1.0, clock=clock)
    br.failure()
    assert await br.wait() is True  # the probe
    slept = len(clock.slept)
    behind = asyncio.create_task(br.wait())
    for _ in range(20):
        await asyncio.sleep(0)
    assert not behind.done() and len(clock.slept) == slept  # asleep until the probe reports
    br.success(probe=True)
    assert await asyncio.wait_for(behind, 1.0) is False


async def test_max_wait_counts_from_when_the_caller_started_waiting() -> None:
    clock = ManualClock()
    br = CircuitBreaker(threshold=1, cooldown_s=1.0, clock=clock)
    br.failure()
    probe = asyncio.create_task(br.wait())
    behind = asyncio.create_task(br.wait(max_wait_s=30.0))
    await clock.advance(0)
    await clock.advance(1.0)  # half-open: the first takes the probe, the other waits on
    assert probe.done() and probe.result() is True and not behind.done()
    await clock.advance(28.9)
    assert not behind.done()
    await clock.advance(0.1)
    with pytest.raises(BreakerOpen) as info:
        await asyncio.wait_for(behind, 1.0)
    assert info.value.waited_s == pytest.approx(30.0)


def test_breaker_open_says_what_it_knows() -> None:
    bare = BreakerOpen(2.0)
    assert str(bare) == "endpoint unavailable: circuit breaker open for 2.0s"
    assert bare.last_failure == "" and bare.waited_s == 2.0
    full = BreakerOpen(3.25, "HTTP 503: busy", 4)
    assert str(full) == ("endpoint unavailable: circuit breaker open for 3.2s after 4 "
                         "consecutive failures; last: HTTP 503: busy")
    assert full.last_failure == "HTTP 503: busy"


# ---- what may close it --------------------------------------------------------------------


async def test_a_stale_success_does_not_close_an_open_breaker() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=1, cooldown_s=5.0, clock=clock)
    br.failure()
    assert br.state == "open"
    br.success()  # a request sent before the breaker opened, answered late
    assert br.state == "open"
    t0 = clock.now()
    assert await br.wait() is True  # still the full cool-down, then a probe
    assert clock.now() - t0 == 5.0


async def test_any_answer_while_half_open_closes_the_breaker() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=1, cooldown_s=5.0, clock=clock)
    br.failure()
    assert await br.wait() is True and br.state == "half_open"
    br.success()  # an older request answering shows the endpoint alive too
    assert br.state == "closed"
    assert await br.wait() is False


def test_it_knows_since_when_it_is_down_and_when_the_next_probe_goes() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=1, cooldown_s=2.0, clock=clock)
    assert br.down_since is None and br.probe_in(clock.now()) == 0.0
    br.failure()
    assert (br.down_since, br.probe_in(clock.now())) == (1000.0, 2.0)
    clock.advance(2.5)
    assert br.probe_in(clock.now()) == 0.0  # due: the next caller probes
    br.failure(probe=True)  # the probe failed: open again, cool-down doubled, same outage
    assert (br.down_since, br.probe_in(clock.now())) == (1000.0, 4.0)
    br.success(probe=True)
    assert (br.state, br.down_since) == ("closed", None)
