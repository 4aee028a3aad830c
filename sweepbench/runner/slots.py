"""The sweep's episode slots, lent while an episode sleeps before a retry.

``max_concurrency`` bounds the episodes that are making requests. An episode asleep between a
failed request and its retry (its back-off, a 429's Retry-After) makes none, and in a sweep
against an endpoint with isolated faults those sleeps add up: 10% of requests answered with a
0.2 s Retry-After hold a slot idle for a tenth of the run. With ``lend_slots`` on, the sweep
runs up to ``max_concurrency // 4`` (at least 1) episodes more than it has slots
(:func:`lending_workers`), and a sleeping episode lends its slot (:meth:`Lease.sleep`): a
waiting episode starts on it. When the sleeper wakes it takes the next slot that frees up,
before any new episode starts, so the episodes making requests never exceed
``max_concurrency``. Once the queue is empty nothing is waiting to start: a freed slot goes
to a woken sleeper, else it is idle and lent to the ramp-down's backup copies
(:class:`~sweepbench.client.hedging.IdleSlots`), and a sleeper that wakes then takes an idle
slot back. A sweep that stops starting (a budget, an error streak, a signal) is not a
ramp-down: its freed slots stay free, for its sleepers only.

The client decides whether a sleep lends (only while its endpoint's faults are isolated, see
``ModelClient``): it finds the episode's :class:`Lease` in :data:`LEASE`, which the sweep sets
for each episode's task. Tasks without one (judges, tests) sleep holding whatever they hold.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from sweepbench.client.lending import LEASE
from sweepbench.client.hedging import IdleSlots

__all__ = ["LEASE", "Lease", "Slots", "lending_workers"]

LEND_SHARE = 4
"""With lending on, up to ``max_concurrency // LEND_SHARE`` (at least 1) episodes more than
slots are alive at once: the most sleepers whose slots can be running other episodes."""


def lending_workers(slots: int) -> int:
    """The extra episodes a sweep of ``slots`` may have alive while some sleep."""
    return max(1, slots // LEND_SHARE)


class Slots:
    """``n`` slots handed to episodes: starts (:meth:`start`) queue behind woken sleepers
    (:meth:`Lease.sleep`); :meth:`close` ends the starts, and from then on a freed slot
    nobody is waiting for is idle (``spare.idle``) until a sleeper takes it back."""

    def __init__(self, n: int, spare: IdleSlots) -> None:
        self.free = n
        self.spare = spare
        self.open = True  # episodes may still start
        self.ramp_down = False  # closed because the queue is empty: freed slots turn idle
        self.asleep = 0  # episodes asleep on a lent slot, now
        self.lends = 0  # slots ever lent
        self._starts: deque[asyncio.Future[bool]] = deque()
        self._wakers: deque[asyncio.Future[bool]] = deque()
        spare.given = self._spare_given

    async def start(self) -> bool:
        """A slot for a new episode (True), or False once :meth:`close` was called."""
        if not self.open:
            return False
        if self.free > 0:  # free slots only exist while nobody waits for one
            self.free -= 1
            return True
        return await _wait(self._starts, self.release)

    def release(self) -> None:
        """A slot is free: to a woken sleeper first, then to a waiting start, else free (or,
        in the ramp-down, idle)."""
        if _hand_over(self._wakers) or (self.open and _hand_over(self._starts)):
            return
        if self.ramp_down:
            self.spare.idle += 1
        else:
            self.free += 1

    def close(self, *, ramp_down: bool) -> None:
        """No more starts: the waiting starts get False. ``ramp_down`` (the queue is empty):
        the free slots, and each one freed from now on, turn idle, for backup copies of the
        last episodes' requests. A sweep that stops (a budget, an error streak, a signal)
        keeps them free: nothing more is spent on its behalf. The first close decides."""
        if not self.open:
            return
        self.open = False
        while self._starts:
            fut = self._starts.popleft()
            if not fut.done():
                fut.set_result(False)
        if ramp_down:
            self.ramp_down = True
            self.spare.idle += self.free
            self.free = 0

    def lease(self) -> Lease:
        """An episode's hold on the slot it just started on."""
        return Lease(self)

    async def _take_back(self) -> bool:
        if self.free > 0:
            self.free -= 1
            return True
        spare = self.spare
        if self.ramp_down and spare.idle > spare.lent:  # an idle slot no backup is using
            spare.idle -= 1
            return True
        return await _wait(self._wakers, self.release)

    def _spare_given(self) -> None:
        """A backup copy gave its idle slot back: to a woken sleeper, if one waits."""
        spare = self.spare
        if self._wakers and spare.idle > spare.lent:
            spare.idle -= 1
            if not _hand_over(self._wakers):
                spare.idle += 1


class Lease:
    """One episode's slot: ``held`` except while lent during a sleep. The sweep releases the
    slot when the episode ends if, and only if, it is held then (an episode cancelled in
    its sleep has none)."""

    __slots__ = ("held", "slots")

    def __init__(self, slots: Slots) -> None:
        self.slots = slots
        self.held = True

    async def sleep(self, seconds: float, sleep: Callable[[float], Awaitable[None]]) -> None:
        """``sleep(seconds)`` with the slot lent to whoever waits for one, then the slot (or
        the next one free) taken back."""
        slots = self.slots
        if not self.held:  # not expected (one sleep at a time per episode): just sleep
            await sleep(seconds)
            return
        self.held = False
        slots.asleep += 1
        slots.lends += 1
        slots.release()
        try:
            await sleep(seconds)
        finally:
            slots.asleep -= 1
        self.held = await slots._take_back()

    def release(self) -> None:
        """The episode ended: its slot, if held, is free."""
        if self.held:
            self.held = False
            self.slots.release()


async def _wait(waiters: deque[asyncio.Future[bool]], release: Callable[[], None]) -> bool:
    """Queue for a slot; a slot granted to a waiter cancelled meanwhile is passed on."""
    fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    waiters.append(fut)
    try:
        return await fut
    except asyncio.CancelledError:
        if fut.done() and not fut.cancelled() and fut.result():
            release()  # granted just before the cancellation landed
        else:
            try:
                waiters.remove(fut)
            except ValueError:
                pass
        raise


def _hand_over(waiters: deque[asyncio.Future[bool]]) -> bool:
    """Grant a slot to the first waiter still waiting; False if there is none."""
    while waiters:
        fut = waiters.popleft()
        if not fut.done():
            fut.set_result(True)
            return True
    return False
