"""Copies of a slow request: hedges and ramp-down backups, and which answer a call keeps.

- **Hedging** (``Endpoint.hedge``; when, :meth:`~sweepbench.client.stalls.StallPolicy.
  hedge_delay`): when a request has not answered after the endpoint's hedge delay, a second
  copy of the same request goes out; the first answer wins and the other is cancelled (if the
  copy has not answered either after another hedge delay, one more goes out: ``MAX_HEDGES``).
  A copy is the same request: it is sent at once in its first copy's slot of the endpoint's
  limits (no second in-flight slot, no second RPM/TPM reservation; a copy that waited in the
  queue behind the slot its own hung first copy holds would rescue nothing). At most
  ``HEDGE_SHARE`` of requests are hedged (:meth:`~sweepbench.client.stalls.StallPolicy.
  may_hedge`). A copy to a model that samples is a second draw; the first to finish wins,
  which favours shorter answers (a request still unanswered at p99 is usually a long one).
  Won hedges are counted and shown (``hedge_wins``); docs/models/hung-requests.md says when
  to turn hedging off.
- **Ramp-down backups** (:class:`IdleSlots`, ``Endpoint.backups``): once a sweep has no
  episode left to start, its freed slots sit idle while the last episodes run, and every
  fault of theirs (a 429's Retry-After, a 500 after a full latency, a hang) lengthens the
  sweep by as much. Then, once the endpoint is primed and while it has been failing lately
  (``EndpointLimits.faulted_lately``), each request also goes out as backup copies at once,
  each on an idle slot and a permit the endpoint's limits grant now (never queued ahead of
  a first copy). The first copy's answer is preferred: a backup's answer is used only when
  the first copy fails, or has no first byte at the hedge delay, so no answer is picked for
  being fast (the bias hedging has) and a fault costs the episode about nothing. Counted
  with the hedges (``hedged``, ``hedge_won``).

Billing rule for a losing copy (what ``CallResult.hedge_usage`` counts): a loser that got its
first byte before it was cancelled is counted as billed like the winner's whole usage (a
non-streaming first byte means the provider generated the answer); a loser cancelled before
any byte, or one that failed (an error's headers are no answer), is counted as free, so the
figure is a lower bound.

A :class:`Race` is one attempt's first copy and its copies: the first copy runs in the
caller's task, the copies as tasks of their own; every copy keeps its own books
(:class:`~sweepbench.client.results.CallLedger`), merged into the call's when one wins.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable

from sweepbench.client.limits import EndpointLimits, Permit
from sweepbench.client.results import CallLedger, CallResult
from sweepbench.client.stalls import Flight, Outrun, StallPolicy
from sweepbench.errors import ModelError
from sweepbench.wire import Usage

__all__ = ["BACKUP_KEEP", "MAX_HEDGES", "IdleSlots", "Race", "SendCopy", "bill"]

MAX_HEDGES = 2
"""Copies a request may get: one after the hedge delay, one more if that one hangs too."""
BACKUP_KEEP = 0.5
"""A ramp-down backup goes only if the endpoint's RPM and TPM buckets keep this share of
their capacity after it: under a rate limit, the banked burst is for the requests that must
go, and a backup spending it would make the next first copy wait."""

SendCopy = Callable[[bytes, "dict[str, str] | None", CallLedger, Flight, Permit],
                    Awaitable[CallResult]]
"""Sends one copy of a request at once under ``permit`` (the client's ``_request``)."""


class IdleSlots:
    """A sweep's episode slots with nothing left to run (its queue is empty), lent to
    ramp-down backup copies: at most one copy in flight per idle slot, so requests in
    flight stay within the sweep's ``max_concurrency``. The sweep adds a slot as a worker
    finds the queue empty (``idle``); a copy takes one (:meth:`take`) and gives it back
    when it ends (:meth:`give`), which calls ``given`` (if set: the sweep's slots, whose
    woken sleepers may be waiting for an idle slot)."""

    __slots__ = ("given", "idle", "lent", "sent")

    def __init__(self, idle: int = 0) -> None:
        self.idle = idle
        self.lent = 0
        self.sent = 0  # copies ever sent on a lent slot
        self.given: Callable[[], None] | None = None

    def take(self) -> bool:
        if self.lent >= self.idle:
            return False
        self.lent += 1
        self.sent += 1
        return True

    def give(self) -> None:
        self.lent -= 1
        if self.given is not None:
            self.given()


def _give_back(limits: EndpointLimits, spare: IdleSlots, _task: object) -> None:
    """A backup ended: its in-flight slot and the idle slot it was lent."""
    limits.concurrency.release()
    spare.give()


def bill(call: CallLedger, result: CallResult, losers: list[Flight]) -> None:
    """Losing copies that got a first byte count as billed like the winner's answer."""
    for loser in losers:
        if loser.got_first_byte:
            call.hedge_usage = (call.hedge_usage or Usage()) + result.usage


class Race:
    """The hedges of one attempt (see :meth:`run`): copies and the winner. Told the first
    copy's age by the endpoint's watchdog (``tick``); ``close()`` unhooks it all, so a call
    leaves no reference cycle behind. ``backups``: the copies sent at once in the ramp-down
    (:meth:`send_backups`); ``ready``: one that answered, held until the first copy fails or
    reaches the hedge delay."""

    __slots__ = ("backups", "body", "call", "copies", "flight", "headers", "hung0", "limits",
                 "live", "ready", "send", "stalls", "won")

    def __init__(self, stalls: StallPolicy, limits: EndpointLimits, send: SendCopy, body: bytes,
                 headers: dict[str, str] | None, call: CallLedger) -> None:
        self.stalls, self.limits, self.send = stalls, limits, send
        self.body, self.headers, self.call = body, headers, call
        self.copies: list[tuple[asyncio.Task[CallResult], CallLedger, Flight]] = []
        self.won: asyncio.Task[CallResult] | None = None  # the copy that answered first
        self.live = True
        self.flight = Flight(self)
        self.backups: list[asyncio.Task[CallResult]] = []
        self.ready: asyncio.Task[CallResult] | None = None
        self.hung0 = call.hung  # what every copy's own count starts from

    def send_backups(self, spare: IdleSlots, n: int) -> None:
        """Up to ``n`` copies now, each on an idle slot of the sweep and a permit the limits
        grant at once (the first copy holds its own already)."""
        call, limits = self.call, self.limits
        for _ in range(n):
            if not spare.take():
                return
            permit = limits.try_permit(len(self.body), keep=BACKUP_KEEP)
            if permit is None:
                spare.give()
                return
            call.hedged += 1
            sub, flight = CallLedger(call.hung), Flight()
            task = asyncio.ensure_future(self.send(self.body, self.headers, sub, flight, permit))
            # given back however it ends (cancelled before it ever ran, too)
            task.add_done_callback(functools.partial(_give_back, limits, spare))
            task.add_done_callback(self.backup_done)
            self.backups.append(task)
            self.copies.append((task, sub, flight))

    def backup_done(self, task: asyncio.Task[CallResult]) -> None:
        """A backup answered: held as ``ready``, used at once if the first copy is past the
        hedge delay already (else by ``tick`` when it is, or when the first copy fails)."""
        if task.cancelled() or task.exception() is not None or not self.live:
            return  # a failed backup changes nothing: the first copy goes on
        if self.ready is None:
            self.ready = task
        delay = self.stalls.hedge_delay()
        flight = self.flight
        if (delay is not None and flight.sent_at and not flight.got_first_byte
                and task.get_loop().time() - flight.sent_at >= delay):
            self._win(task)  # late and not answering: as a hedge would

    def _win(self, task: asyncio.Task[CallResult]) -> None:
        """``task`` answered first: the first copy's request is stopped (``Outrun``). A first
        copy not on the wire (it answered already) keeps its own answer."""
        flight = self.flight
        if self.live and self.won is None and flight.deadline is not None:
            self.won = task
            flight.outrun = True
            flight.stop()

    async def fallback(self) -> asyncio.Task[CallResult] | None:
        """The first copy failed: a backup that answered, or the first to answer of those
        still on the wire younger than the hedge delay (older ones are suspect, like the
        hedge delay says); None: none, the failure stands."""
        self.live = False  # nothing stops the first copy from now on (it has ended)
        if self.ready is not None:
            return self.ready
        delay = self.stalls.hedge_delay()
        pending = {t for t in self.backups if not t.done()}
        if delay is None or not pending:
            return None
        loop = asyncio.get_running_loop()
        until = min(f.sent_at for t, _, f in self.copies if t in pending) + delay
        while pending and (left := until - loop.time()) > 0:
            done, pending = await asyncio.wait(pending, timeout=left,
                                               return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if not task.cancelled() and task.exception() is None:
                    return task
        return None

    def tick(self, age: float, delay: float) -> None:
        """The first copy has been on the wire ``age`` s without a byte back: a backup that
        answered wins; else one more copy per ``delay`` s of it, up to ``MAX_HEDGES``, within
        the endpoint's hedge share."""
        if self.ready is not None:
            self._win(self.ready)
            return
        copies = [c for c in self.copies if c[0] not in self.backups]
        if (not self.live or age < delay * (len(copies) + 1) or len(copies) >= MAX_HEDGES
                or any(f.got_first_byte and not t.done() for t, _, f in self.copies)
                or not self.stalls.may_hedge()):
            return  # not yet, enough, answering (a body on its way is no hang), over share
        call = self.call
        call.hedged += 1
        sub, flight = CallLedger(call.hung), Flight()
        task = asyncio.ensure_future(self.send(
            self.body, self.headers, sub, flight, self.flight.permit))
        task.add_done_callback(self.copy_done)
        self.copies.append((task, sub, flight))

    def copy_done(self, task: asyncio.Task[CallResult]) -> None:
        if task.cancelled():
            return
        task.exception()  # retrieved: a loser's error is not "never retrieved"
        self._win(task)

    def close(self) -> list[tuple[asyncio.Task[CallResult], CallLedger, Flight]]:
        """Stop the copies; the copies, for their books."""
        self.live = False
        self.flight.race = None
        self.ready = None
        for task, _, _ in self.copies:
            task.remove_done_callback(self.copy_done)
            task.remove_done_callback(self.backup_done)
            task.cancel()
        return self.copies

    async def run(self, first: Awaitable[CallResult]) -> CallResult:
        """One attempt with hedges: ``first`` (the request, sent under :attr:`flight`) runs
        in this task; once it has been on the wire for the hedge delay (once the endpoint's
        latency is known) without a byte back, a copy goes out as a task (and one more after
        another delay). The first answer wins, errors included (an error fails the attempt,
        retried as usual, rather than waiting on a copy suspected hung); a copy that answers
        first stops this task's request (:meth:`_win`: a value, ``won``, and the request's
        deadline made to expire) and the others are cancelled. Ramp-down backups
        (sent with the request, see :meth:`send_backups`) are held to a different rule:
        their errors are ignored, and their answer is used only if this request fails
        (:meth:`fallback`) or is late. Copies keep their own books, merged into the call's
        when one wins. A request that answers in time costs one small object."""
        call = self.call
        failed = False  # the first copy failed and a backup answered instead
        try:
            try:
                result = await first
            except Outrun:  # stopped for the copy that answered first
                winner = self.won
            except ModelError:
                winner = await self.fallback() if self.backups else None
                if winner is None:
                    raise
                failed = True
            else:
                winner = None
        finally:
            copies = self.close()
        if not copies:  # the usual call: nothing hedged, nothing to merge or bill
            return result
        base = self.hung0  # each copy started counting from it
        for _, sub, _ in copies:
            call.hung += sub.hung - base
            call.rate_limited += sub.rate_limited
        # a copy that failed (a 500 has headers too) was not billed for an answer
        losers = [(t, f) for t, _, f in copies
                  if not (t.done() and not t.cancelled() and t.exception() is not None)]
        if winner is None:
            bill(call, result, [f for _, f in losers])
            return result
        _, sub, _ = next(c for c in copies if c[0] is winner)
        call.statuses[-1:] = sub.statuses  # the attempt's status is its answer's
        call.hedge_won = True
        err = winner.exception()
        if err is not None:
            call.failures.extend(sub.failures)
            if isinstance(err, ModelError):
                call.tag(err)
            raise err
        result = winner.result()
        call.payload = sub.payload
        rest = [f for t, f in losers if t is not winner]
        bill(call, result, rest if failed else [self.flight] + rest)
        result.statuses = list(call.statuses)
        result.attempts = len(call.statuses)
        return result
