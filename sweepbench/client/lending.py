"""Where the client finds the sleep-lender of the task it runs in.

A retry's back-off (or a 429's Retry-After) is time in which an episode makes no request. The
sweep may lend that episode's slot to another episode meanwhile
(:class:`sweepbench.runner.slots.Lease`); the client decides *whether* a sleep lends (only
while its endpoint's faults are isolated), the lender decides *how*. The context variable
lives here, beside the client that reads it, so the arrow points from the sweep to the client.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import Protocol


class SleepLender(Protocol):
    async def sleep(self, seconds: float, sleep: Callable[[float], Awaitable[None]]) -> None:
        """Sleep ``seconds`` with ``sleep``, lending the task's slot meanwhile."""


LEASE: contextvars.ContextVar[SleepLender | None] = contextvars.ContextVar("sweepbench_lease",
                                                                         default=None)
"""The slot of the episode whose task this is (set by the sweep), or None."""
