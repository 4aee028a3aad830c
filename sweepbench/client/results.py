"""What one model call gives back, and the books it keeps on the way there.

:class:`CallResult` is a successful call, retries and hedges included; every request of a call
that failed is an :class:`AttemptFailure`, kept on the result or on the error that ends the call.
:class:`CallLedger` is the running account of one call across its attempts (a hedge copy keeps
one of its own, merged when it wins): the result and the error are both filled in from it, so
they count the same way.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from sweepbench.client.classify import scrub_error
from sweepbench.client.shapes import TRUNCATED
from sweepbench.errors import ModelError
from sweepbench.wire import AssistantMessage, Usage

__all__ = ["AttemptFailure", "CallLedger", "CallResult"]


class AttemptFailure(Struct, kw_only=True, omit_defaults=True):
    """One request of a call that failed: the error's class, the HTTP status (0: no
    response) and the message (the server's words, API key scrubbed)."""

    error: str
    status: int = 0
    message: str = ""
    replica: str = ""
    """The way in it went to, for a model with several (:mod:`sweepbench.client.fleet`)."""


class CallResult(Struct, kw_only=True):
    """One successful model call, retries included."""

    message: AssistantMessage
    """The reply; ``message.reasoning`` holds its reasoning text when the server sent one."""
    usage: Usage
    """Token usage; ``cached_prompt_tokens`` is the provider's prompt-cache hit count and
    ``reasoning_tokens`` the part of ``completion_tokens`` spent thinking."""
    latency_s: float
    """From sending the request that was answered to its answer (server time plus network);
    waits before sending and between attempts are not in it."""
    attempts: int
    """HTTP requests made for this call (0: answered from the response cache)."""
    statuses: list[int]
    """HTTP status of each attempt, in order; 0 for attempts that got no response."""
    failures: list[AttemptFailure] = field(default_factory=list)
    """Why each failed attempt failed, in order."""
    queue_wait_s: float = 0.0
    """Time spent waiting on this endpoint's limits before sending (circuit breaker,
    Retry-After pause, in-flight slot, RPM/TPM buckets), over every attempt."""
    backoff_s: float = 0.0
    """Time slept between attempts (retry back-off, Retry-After)."""
    wall_s: float = 0.0
    """The whole call: queue waits, attempts and back-off."""
    response_id: str = ""
    finish_reason: str | None = None
    """As the server sent it ("stop", "tool_calls", "length", ...)."""
    model: str = ""
    """The model name the server reported."""
    rate_limited: int = 0
    """Attempts answered 429 (rate limit, not quota)."""
    from_cache: bool = False
    """Answered from the response cache, without an HTTP call."""
    hung: int = 0
    """Requests abandoned with no first byte within the endpoint's TTFB budget (then
    retried; each is also in ``failures`` when it was the attempt's own request)."""
    hedged: int = 0
    """Hedge copies sent (second copies of a slow request; not in ``attempts``)."""
    hedge_won: bool = False
    """The answer came from a hedge copy."""
    hedge_usage: Usage | None = None
    """What the losing copies are counted as billed (see :mod:`sweepbench.client.hedging`)."""
    replica: str = ""
    """The way in that answered, for a model with several (:mod:`sweepbench.client.fleet`)."""

    @property
    def stalls(self) -> dict[str, Any] | None:
        """Hung and hedged requests of this call for the journal; None when there were none."""
        if not (self.hung or self.hedged):
            return None
        out: dict[str, Any] = {"hung": self.hung, "hedged": self.hedged,
                               "hedge_won": self.hedge_won}
        if self.hedge_usage is not None:
            out["hedge_usage"] = self.hedge_usage
        return out

    @property
    def retries(self) -> int:
        return max(0, self.attempts - 1)

    @property
    def truncated(self) -> bool:
        """The reply was cut short (``finish_reason`` "length", a content filter, a server
        interruption): not a complete answer."""
        return self.finish_reason in TRUNCATED


class CallLedger:
    """Book-keeping of one ``complete()`` across its attempts (or of one hedge copy)."""

    __slots__ = ("backoff", "failures", "hedge_usage", "hedge_won", "hedged", "hung", "payload",
                 "rate_limited", "statuses", "waited")

    def __init__(self, hung: int = 0) -> None:
        self.statuses: list[int] = []
        self.failures: list[AttemptFailure] = []
        self.rate_limited = 0
        self.waited = 0.0
        self.backoff = 0.0
        self.payload = b""
        self.hung = hung  # requests abandoned for want of a first byte
        self.hedged = 0
        self.hedge_won = False
        self.hedge_usage: Usage | None = None

    def tag(self, err: ModelError) -> None:
        """``err`` leaves the call: its message scrubbed, the call's requests written on it."""
        scrub_error(err)
        err.attempts = len(self.statuses)
        err.statuses = list(self.statuses)
        err.failures = list(self.failures)
        err.hung, err.hedged = self.hung, self.hedged  # type: ignore[attr-defined]
