"""Per-minute limits as token buckets (RPM, TPM), and a request's tokens guessed before it goes.

Buckets are *reservation* buckets (GCRA): ``reserve(n)`` takes ``n`` at once, possibly into
debt, and returns how long the caller must wait for the debt to be repaid. Callers are thereby
served in arrival order, no lock or polling is needed, and a request larger than the burst
capacity still goes (after a proportionally longer wait) instead of starving.
"""

from __future__ import annotations

import math

from sweepbench.client.clock import WALL_CLOCK, Clock

__all__ = ["TokenBucket", "TokenEstimator"]


class TokenBucket:
    """``rate`` tokens per second, at most ``capacity`` banked; callers may go into debt.

    The bucket starts with ``initial`` tokens (default: ``capacity``). Debt is capped at
    ``window_s`` seconds of rate (a per-minute limit's minute): one absurd reservation or
    usage report never makes a caller wait longer than the window the limit is stated over.
    """

    def __init__(self, rate: float, capacity: float, *, initial: float | None = None,
                 clock: Clock = WALL_CLOCK, window_s: float = 60.0) -> None:
        if rate <= 0 or capacity <= 0:
            raise ValueError(f"bucket rate and capacity must be > 0, got {rate}, {capacity}")
        self.rate = rate
        self.capacity = capacity
        self._floor = -rate * window_s
        self._clock = clock
        self._level = capacity if initial is None else min(initial, capacity)
        self._at = clock.now()

    @classmethod
    def per_minute(cls, limit: float, *, burst_s: float = 1.0, headroom: float = 1.0,
                   clock: Clock = WALL_CLOCK) -> TokenBucket:
        """A bucket for a per-minute limit: ``headroom`` of the rate, ``burst_s`` of it banked."""
        rate = limit * headroom / 60.0
        return cls(rate, max(1.0, rate * burst_s), clock=clock)

    def _refill(self) -> None:
        now = self._clock.now()
        if now > self._at:
            self._level = min(self.capacity, self._level + (now - self._at) * self.rate)
            self._at = now

    @property
    def level(self) -> float:
        """Tokens available now (negative: debt still to be repaid)."""
        self._refill()
        return self._level

    def reserve(self, n: float) -> float:
        """Take ``n`` tokens now; return the seconds to wait before using them (0: go)."""
        self._refill()
        self._level = max(self._floor, self._level - n)
        return 0.0 if self._level >= 0 else -self._level / self.rate

    def adjust(self, delta: float) -> None:
        """Give back (``delta`` > 0) or take more (< 0), e.g. once true usage is known."""
        self._refill()
        self._level = max(self._floor, min(self.capacity, self._level + delta))

    async def acquire(self, n: float = 1.0) -> float:
        """Reserve ``n`` and sleep until they are ours; returns the seconds waited."""
        wait = self.reserve(n)
        if wait > 0:
            try:
                await self._clock.sleep(wait)
            except BaseException:  # cancelled while waiting: the tokens were never used
                self.adjust(n)
                raise
        return wait


class TokenEstimator:
    """Tokens a request will cost, guessed before the call from its body size.

    Starts at four bytes per prompt token (what the reference server counts) and learns the
    ratio and the mean completion length from each response's usage (moving averages).
    """

    def __init__(self, *, bytes_per_token: float = 4.0, alpha: float = 0.2) -> None:
        self.tokens_per_byte = 1.0 / bytes_per_token
        self.completion = 0.0
        self._alpha = alpha
        self._seen = False

    def estimate(self, body_bytes: int) -> int:
        return max(1, math.ceil(body_bytes * self.tokens_per_byte + self.completion))

    def observe(self, body_bytes: int, prompt_tokens: int, completion_tokens: int) -> None:
        if body_bytes <= 0 or prompt_tokens <= 0:
            return
        ratio = prompt_tokens / body_bytes
        if not self._seen:
            self.tokens_per_byte, self.completion, self._seen = ratio, completion_tokens, True
            return
        a = self._alpha
        self.tokens_per_byte += a * (ratio - self.tokens_per_byte)
        self.completion += a * (completion_tokens - self.completion)
