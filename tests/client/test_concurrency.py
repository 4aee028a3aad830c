"""The adaptive in-flight cap: first come first served, cancelled waiters, AIMD, argument
checks, and a slot granted to a waiter that is cancelled in the same breath."""

from __future__ import annotations

import asyncio

import pytest

from sweepbench.client.concurrency import AdaptiveConcurrency

from ..support import FakeClock


async def test_concurrency_caps_and_serves_fifo() -> None:
    c = AdaptiveConcurrency(2)
    await c.acquire()
    await c.acquire()
    order: list[int] = []

    async def waiter(i: int) -> None:
        await c.acquire()
        order.append(i)

    tasks = [asyncio.create_task(waiter(i)) for i in range(3)]
    await asyncio.sleep(0)
    assert order == [] and c.in_flight == 2
    c.release()
    await asyncio.sleep(0)
    assert order == [0]
    c.release()
    c.release()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2] and c.in_flight == 2


async def test_cancelled_waiter_does_not_leak_a_slot() -> None:
    c = AdaptiveConcurrency(1)
    await c.acquire()
    task = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    c.release()
    assert c.in_flight == 0
    await c.acquire()
    assert c.in_flight == 1


async def test_waiter_cancelled_then_popped_by_a_release_stays_cancelled() -> None:
    """The Ctrl-C case: the waiter is cancelled, and before it runs again a release() pops
    its (done) future; leaving must neither raise ValueError (removed twice, which replaced
    the CancelledError) nor take or leak a slot."""
    c = AdaptiveConcurrency(1)
    await c.acquire()
    cancelled = asyncio.create_task(c.acquire())
    behind = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    cancelled.cancel()
    c.release()  # pops the cancelled waiter (done), grants the one behind it
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    await behind
    assert c.in_flight == 1 and not c._waiters
    c.release()
    assert c.in_flight == 0


async def test_aimd_shrinks_on_overload_once_per_window_and_grows_back() -> None:
    clock = FakeClock()
    c = AdaptiveConcurrency(20, min_limit=2, decrease=0.5, clock=clock)
    sent = [await c.acquire() for _ in range(10)]
    clock.advance(1)
    for s in sent:  # a burst of 429s from requests in flight together: one decrease
        c.on_overload(s)
    assert c.limit == 10.0 and c.decreases == 1
    clock.advance(1)
    c.on_overload(clock.now())  # a request sent after the decrease: decrease again
    assert c.limit == 5.0
    for _ in range(10):
        clock.advance(1)
        c.on_overload(clock.now())
    assert c.limit == 2.0 and c.cap == 2  # bounded below
    for _ in range(2000):
        c.on_success()
    assert c.limit == 20.0  # grew back, bounded by max_concurrency
    # roughly +1 per `limit` successes
    c2 = AdaptiveConcurrency(100, initial=10)
    for _ in range(10):
        c2.on_success()
    assert 10.9 < c2.limit < 11.1


async def test_shrunk_limit_holds_new_callers_until_in_flight_drains() -> None:
    clock = FakeClock()
    c = AdaptiveConcurrency(4, decrease=0.5, clock=clock)
    sent = [await c.acquire() for _ in range(4)]
    c.on_overload(sent[0])
    assert c.cap == 2
    task = asyncio.create_task(c.acquire())
    for _ in range(2):
        c.release()
        await asyncio.sleep(0)
        assert not task.done()  # 3, then 2 in flight: still at the cap
    c.release()
    await asyncio.sleep(0)
    assert task.done() and c.in_flight == 2


@pytest.mark.parametrize("kw, message", [
    ({"max_limit": 0}, "need 1 <= min_limit <= max_limit, got 1, 0"),
    ({"max_limit": 4, "min_limit": 0}, "need 1 <= min_limit <= max_limit, got 0, 4"),
    ({"max_limit": 4, "min_limit": 5}, "need 1 <= min_limit <= max_limit, got 5, 4"),
    ({"max_limit": 4, "decrease": 0.0}, r"decrease must be in \(0, 1\), got 0.0"),
    ({"max_limit": 4, "decrease": 1.0}, r"decrease must be in \(0, 1\), got 1.0"),
    ({"max_limit": 4, "decrease": 1.5}, r"decrease must be in \(0, 1\), got 1.5"),
])
def test_concurrency_bounds_and_decrease_are_checked(kw, message) -> None:
    with pytest.raises(ValueError, match=message):
        AdaptiveConcurrency(**kw)


async def test_a_cancelled_waiter_leaves_the_queue_at_once() -> None:
    c = AdaptiveConcurrency(1)
    await c.acquire()
    waiter = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    assert len(c._waiters) == 1
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert len(c._waiters) == 0 and c.in_flight == 1


async def test_a_429_of_a_request_sent_at_the_decrease_counts_again() -> None:
    clock = FakeClock()
    c = AdaptiveConcurrency(16, decrease=0.5, clock=clock)
    c.on_overload(await c.acquire())
    c.on_overload(await c.acquire())  # sent after the decrease (same clock reading)
    assert (c.limit, c.decreases) == (4.0, 2)


# ---- at the edges -------------------------------------------------------------------------


async def test_a_slot_granted_to_a_waiter_cancelled_at_once_is_handed_on() -> None:
    c = AdaptiveConcurrency(1)
    await c.acquire()
    granted = asyncio.create_task(c.acquire())
    behind = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    c.release()  # grants `granted` (counted in) ...
    granted.cancel()  # ... which is cancelled before it runs again
    await asyncio.gather(granted, return_exceptions=True)
    assert granted.cancelled()
    await asyncio.wait_for(behind, 1.0)  # the slot went on to the next waiter
    assert c.in_flight == 1
    c.release()
    assert c.in_flight == 0 and c.cap == 1
    await asyncio.wait_for(c.acquire(), 1.0)  # the cap did not shrink for good


async def test_a_slot_granted_and_cancelled_with_nobody_behind_is_free_again() -> None:
    c = AdaptiveConcurrency(1)
    await c.acquire()
    granted = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    c.release()
    granted.cancel()
    await asyncio.gather(granted, return_exceptions=True)
    assert c.in_flight == 0 and not c._waiters


async def test_a_newcomer_queues_behind_a_waiter_already_granted() -> None:
    c = AdaptiveConcurrency(1)
    await c.acquire()
    order: list[str] = []

    async def take(name: str) -> None:
        await c.acquire()
        order.append(name)

    first = asyncio.create_task(take("first"))
    await asyncio.sleep(0)
    c.release()  # the slot is the first waiter's, though it has not run yet
    newcomer = asyncio.create_task(take("newcomer"))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert order == ["first"] and not newcomer.done() and c.in_flight == 1
    c.release()
    await asyncio.wait_for(newcomer, 1.0)
    assert order == ["first", "newcomer"]


async def test_a_newcomer_waits_while_others_queue_even_under_the_cap() -> None:
    """Waiters queued at a shrunk cap are served before a caller that arrives later, even once
    the cap grows back."""
    clock = FakeClock()
    c = AdaptiveConcurrency(2, decrease=0.5, clock=clock)
    sent = [await c.acquire() for _ in range(2)]
    c.on_overload(sent[0])
    assert c.cap == 1
    waiter = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    c.release()  # 1 in flight, at the cap: the waiter still waits
    await asyncio.sleep(0)
    assert not waiter.done()
    c.limit = 2.0  # as on_success would, without its wake-up: a free slot and a queue
    late = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    assert not late.done()
    c.release()
    await asyncio.wait_for(waiter, 1.0)
    await asyncio.wait_for(late, 1.0)
    assert c.in_flight == 2
