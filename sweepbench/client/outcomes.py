"""An endpoint's last answers, counted by outcome: whether its 429s cluster (a real limit, which
the whole endpoint obeys) or are isolated (only the request that got one waits), and the share
of failures that back-off reads.
"""

from __future__ import annotations

from collections import deque

__all__ = ["ANSWERED", "FAILED", "LIMITED", "AnswerWindow"]


ANSWERED, LIMITED, FAILED = 0, 1, 2
"""Outcomes of a request as :class:`AnswerWindow` counts them."""


class AnswerWindow:
    """The endpoint's last ``size`` request outcomes: answered, 429 (``LIMITED``), or failed
    as if down (``FAILED``: 5xx, no answer, an unreadable body). It tells isolated faults
    from an endpoint in trouble:

    - :meth:`limit_hit`: 429s cluster, at least ``min_count`` of them and at least ``share``
      of the window. A provider's random, isolated 429 says nothing about the endpoint's load
      (the request that got it waits out its Retry-After, nobody else); a real limit answers
      429 to most of what is sent, and only then do the in-flight cap and a Retry-After act
      on the whole endpoint.
    - :attr:`failing_share`: the share of failures, which the client's back-off reads (an
      endpoint that mostly answers gets its failed requests retried soon).
    """

    def __init__(self, size: int, share: float, min_count: int) -> None:
        if size < 1 or min_count < 1 or not 0 <= share <= 1:
            raise ValueError(f"need size >= 1, min_count >= 1, share in [0, 1]; got "
                             f"{size}, {min_count}, {share}")
        self.share = share
        self.min_count = min_count
        self.counts = [0, 0, 0]  # of each outcome in the window
        self._recent: deque[int] = deque(maxlen=size)

    def __len__(self) -> int:
        return len(self._recent)

    @property
    def limited(self) -> int:
        return self.counts[LIMITED]

    @property
    def failed(self) -> int:
        return self.counts[FAILED]

    def add(self, outcome: int) -> None:
        recent = self._recent
        if len(recent) == recent.maxlen:  # the oldest is about to drop out
            self.counts[recent[0]] -= 1
        recent.append(outcome)
        self.counts[outcome] += 1

    def limit_hit(self) -> bool:
        """Whether the window's 429s cluster (see the class docstring)."""
        limited = self.counts[LIMITED]
        return limited >= self.min_count and limited >= self.share * sum(self.counts)

    @property
    def failing_share(self) -> float:
        n = sum(self.counts)
        return self.counts[FAILED] / n if n else 0.0
