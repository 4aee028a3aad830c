"""The model client: one facade per OpenAI-compatible chat-completions endpoint.

``ModelClient.complete`` sends one :class:`~sweepbench.wire.ChatRequest` and returns a
:class:`~sweepbench.client.results.CallResult`, retrying what is worth retrying. Every failure
leaves as a :class:`~sweepbench.errors.ModelError` (the tree is drawn in
:mod:`sweepbench.errors`), the answer's status and body classified into one by
:mod:`sweepbench.client.classify`; transport errors are translated in one place per transport
(:mod:`sweepbench.client.transports`) with ``raise ... from``; ``asyncio.CancelledError`` is
never caught.

Every request counts: a call sends at most ``endpoint.max_retries + 1`` requests, whatever the
circuit breaker does, and each failed one is kept (:class:`~sweepbench.client.results.
AttemptFailure`) in the result or on the error. Before each request the call passes the
endpoint's shared limits (:mod:`sweepbench.client.limits`): circuit breaker, Retry-After
pause, adaptive in-flight cap, RPM and TPM buckets. That wait is reported apart
(``queue_wait_s``), as are back-off sleeps (:mod:`sweepbench.client.retry`); ``latency_s``
runs from the send of the request that was answered to its answer. Outcomes flow back:
clustered 429s shrink the in-flight cap and their Retry-After pauses the whole endpoint (an
isolated 429 holds only its own request for its Retry-After); 5xx and connection failures
count toward opening the breaker (whose error then names the failure behind it); usage
corrects the token estimate. A refused connection to an endpoint that has never answered
fails at once: nothing is running there. The call's ``wall_s`` includes any wait for a sweep
slot lent during a back-off.

Hung requests do not hold a call for ``timeout_s`` (:mod:`sweepbench.client.stalls`): a
request with no response headers within the endpoint's time-to-first-byte budget (from its
observed latency) is abandoned as a ``FirstByteTimeout`` and retried; and where hedging is on,
a request slower than the endpoint's high-percentile latency gets a copy, the first answer
wins and the others are cancelled (:mod:`sweepbench.client.hedging`). The call's result
counts both (``hung``, ``hedged``, ``hedge_won``, ``hedge_usage``); only the winner's answer
is returned.

The API key is read from the environment on every call, sent only as the ``Authorization``
header, and scrubbed from any server text that ends up in an error message; it is never
stored on the client, in results, in exceptions or in logs.

A client belongs to the event loop that first uses it (its connections are made lazily inside
that loop); ``aclose()`` or ``async with`` releases it. Time (latencies, back-off
sleeps) comes from the limits' clock, so tests can run it on a fake one.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable
from typing import Any

import msgspec

from sweepbench.client.body import BodyTemplate
from sweepbench.client.cache import ResponseCache
from sweepbench.client.classify import http_error, read_reply, scrub_error
from sweepbench.client.hedging import IdleSlots, Race
from sweepbench.client.breaker import BreakerOpen
from sweepbench.client.clock import MonotonicClock
from sweepbench.client.limits import EndpointLimits, Permit
from sweepbench.client.results import AttemptFailure, CallLedger, CallResult
from sweepbench.client.retry import RetryHook, RetryPolicy
from sweepbench.client.secrets import KEYS
from sweepbench.client.shapes import DecodedReply
from sweepbench.client.stalls import FLIGHT, Flight, Outrun, StallPolicy
from sweepbench.client.transports.aiohttp import AiohttpTransport
from sweepbench.client.transports.base import DEFAULT_MAX_REPLY_BYTES, Reply, Transport, too_large
from sweepbench.client.transports.http import HttpTransport
from sweepbench.config import Endpoint
from sweepbench.errors import (
    AuthenticationError,
    ConfigError,
    ConnectionRefused,
    EndpointUnavailableError,
    FirstByteTimeout,
    ModelError,
    RateLimitError,
    RetryableError,
    ServerError,
)
from sweepbench.wire import ChatRequest

__all__ = ["Conversation", "ModelClient", "limits_key"]

_RESERVED_EXTRA = frozenset({"model", "messages", "tools", "sweepbench", "stream"})
_MAX_FAILURE_TEXT = 300


def limits_key(endpoint: Endpoint, base_url: str | None = None) -> str:
    """Endpoints with the same key share one :class:`EndpointLimits` (URL + account + model);
    ``endpoint.limits_key``, when the config sets one, overrides it."""
    explicit = getattr(endpoint, "limits_key", None)
    if explicit:
        return explicit
    base = (base_url if base_url is not None else endpoint.base_url).strip().rstrip("/")
    return f"{base}|{endpoint.api_key_env or ''}|{endpoint.model_name}"


class ModelClient:
    """Chat completions against one endpoint: transport, limits, retries, optional cache.

    ``base_url`` overrides ``endpoint.base_url`` (scripted endpoints have none in the config;
    the runner passes the reference server's URL). ``limits`` are this endpoint+account's
    shared :class:`~sweepbench.client.limits.EndpointLimits` (from a ``LimitsPool`` keyed by
    :func:`limits_key`); without one the client makes its own. ``cache`` is an opt-in
    :class:`~sweepbench.client.cache.ResponseCache` (a stored entry that is not a response
    gives the cache up; the call goes to the endpoint). ``transport`` replaces the HTTP
    seam (default: by ``endpoint.transport``, "http", "aiohttp" or "openai").
    ``backoff_base_s`` / ``backoff_max_s`` shape the jittered exponential back-off (full
    jitter: a random wait in ``[0, min(max, base * 2**(retry-1))]``, where ``base`` is half the
    endpoint's median latency, at most ``backoff_base_s``, while the endpoint mostly answers,
    and ``backoff_base_s`` when it mostly fails: see :class:`~sweepbench.client.retry.
    RetryPolicy`); ``retry_after_max_s`` caps how long a Retry-After may hold us (and the
    whole endpoint). ``on_retry(error, wait_s)`` is called before each back-off wait.

    ``cache_url`` files cached answers under another base URL (a fleet's replicas share
    their first's). ``health()`` tells how the endpoint is doing right now (for progress displays): the
    breaker's state, the latest failed request and when the last call succeeded.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        base_url: str | None = None,
        limits: EndpointLimits | None = None,
        cache: ResponseCache | None = None,
        transport: Transport | None = None,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 30.0,
        retry_after_max_s: float = 120.0,
        on_retry: RetryHook | None = None,
        cache_url: str | None = None,
    ) -> None:
        base = (base_url if base_url is not None else endpoint.base_url).strip()
        if not base:
            raise ConfigError(
                f"endpoint {endpoint.name!r} has no base_url"
                + (" (scripted: pass the reference server's URL)" if endpoint.scripted else "")
            )
        msgspec.structs.replace(endpoint, base_url=base).validate()  # scheme, timeouts
        reserved = sorted(_RESERVED_EXTRA.intersection(endpoint.extra_body))
        if reserved:
            raise ConfigError(
                f"endpoint {endpoint.name!r}: extra_body may not set {', '.join(reserved)}"
            )
        if endpoint.max_concurrency < 1:
            raise ConfigError(f"endpoint {endpoint.name!r}: max_concurrency must be >= 1")
        self.endpoint = endpoint
        self._name = endpoint.name
        KEYS.register(endpoint.api_key_env)  # its key is scrubbed from every text from now on
        self._max_bytes = getattr(endpoint, "max_reply_bytes", DEFAULT_MAX_REPLY_BYTES)
        self.base_url = base.rstrip("/")
        self.url = url = self.base_url + "/chat/completions"
        self.template = BodyTemplate.for_endpoint(endpoint)
        self.limits = limits if limits is not None else EndpointLimits.for_endpoint(endpoint)
        self.clock = self.limits.clock
        # the wall clock's own C function where it is the wall clock (a call is timed 3 times)
        self._now = time.monotonic if type(self.clock) is MonotonicClock else self.clock.now
        self.cache = cache
        kind = getattr(endpoint, "transport", "http") or "http"
        if transport is None:
            net = {"follow_redirects": endpoint.follow_redirects,  # alike on every transport
                   "proxy": endpoint.proxy}
            if kind == "openai":
                from sweepbench.client.transports.openai import OpenAITransport

                transport = OpenAITransport(
                    self.base_url, name=self._name, timeout_s=endpoint.timeout_s,
                    connect_timeout_s=endpoint.connect_timeout_s,
                    max_reply_bytes=self._max_bytes, **net)
            elif kind == "http":
                transport = HttpTransport(
                    url, name=self._name, max_connections=endpoint.max_concurrency,
                    timeout_s=endpoint.timeout_s, connect_timeout_s=endpoint.connect_timeout_s,
                    max_reply_bytes=self._max_bytes, stopping=self._limits_closed, **net)
            elif kind == "aiohttp":
                transport = AiohttpTransport(
                    url, name=self._name, max_connections=endpoint.max_concurrency,
                    timeout_s=endpoint.timeout_s, connect_timeout_s=endpoint.connect_timeout_s,
                    max_reply_bytes=self._max_bytes, stopping=self._limits_closed, **net)
            else:
                raise ConfigError(
                    f"endpoint {endpoint.name!r}: unknown transport {kind!r} (http, aiohttp, openai)")
        self._transport = transport
        self.stalls = StallPolicy(endpoint)  # TTFB budget and hedging, from observed latency
        # the sweep's idle slots, lent to ramp-down backups (None: no backups; the sweep sets it)
        self.spare: IdleSlots | None = None
        self._backups: int = getattr(endpoint, "backups", 0) if self.stalls.hedging else 0
        # a fleet's replicas file answers under its first URL: any replica finds them
        filed = cache_url.rstrip("/") + "/chat/completions" if cache_url else url
        self._cache_identity = f"{filed}\n{kind}"
        self._closed = False
        self.last_ok_at: float | None = None  # clock time of the last successful request
        self.last_failure: AttemptFailure | None = None
        self.failing = 0  # failed requests since the last successful one
        self.retry = RetryPolicy(
            name=self._name, limits=self.limits, latency=self.stalls.latency,
            max_retries=endpoint.max_retries, backoff_base_s=backoff_base_s,
            backoff_max_s=backoff_max_s, retry_after_max_s=retry_after_max_s,
            on_retry=on_retry)

    def _limits_closed(self) -> bool:
        return self.limits.closed

    # -- lifecycle ------------------------------------------------------------------------

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._closed = True
        await self._transport.aclose()

    def health(self) -> dict[str, Any]:
        """Now: ``breaker`` state, ``failing`` (failed requests in a row), ``last_failure``
        (its message, or None) and ``since_ok_s`` (None: no success yet); while the breaker
        is not closed, also what it waits for and when waiting calls give up:
        ``open_for_s``, ``probe_in_s`` (the next probe request), ``max_wait_s``
        (breaker_max_wait_s; None: forever) and ``gives_up_in_s`` (when the first waiting
        call fails; None: never)."""
        last, breaker, now = self.last_failure, self.limits.breaker, self._now()
        out: dict[str, Any] = {
            "breaker": breaker.state,
            "failing": self.failing,
            "last_failure": last.message if last is not None else None,
            "since_ok_s": None if self.last_ok_at is None else max(0.0, now - self.last_ok_at),
        }
        if breaker.state != "closed" and breaker.down_since is not None:
            open_for, max_wait = max(0.0, now - breaker.down_since), self.limits.breaker_max_wait_s
            out.update(open_for_s=open_for, probe_in_s=breaker.probe_in(now), max_wait_s=max_wait,
                       gives_up_in_s=None if max_wait is None else max(0.0, max_wait - open_for))
        return out

    # -- the call -------------------------------------------------------------------------

    def encode(self, request: ChatRequest) -> bytes:
        """The exact JSON body sent for ``request`` (model, defaults, extra_body applied)."""
        return self.template.plain(request)

    def conversation(self, affinity: str | None = None) -> Conversation:
        """A ModelCall for one append-only conversation: bodies spliced from cached bytes.
        ``affinity`` (the episode's task) routes a fleet's calls; one way in needs none."""
        return Conversation(self)

    async def complete(self, request: ChatRequest | bytes) -> CallResult:
        """Send ``request`` (or a body already encoded for this client, e.g. by
        :meth:`conversation`); retry retryable failures; raise a ``ModelError`` subclass."""
        if self._closed:
            raise RuntimeError(f"ModelClient for {self._name!r} is closed")
        body = request if isinstance(request, bytes) else self.encode(request)
        now = self._now
        start = now()
        key = None
        if self.cache is not None:
            key = self.cache.key(self._cache_identity, body)
            payload = self.cache.get(key)
            if payload is not None:
                try:
                    reply = read_reply(self._name, self.url, payload)
                except ModelError as err:  # the cache's fault, not the model's: ask it
                    self.cache.fail(f"a stored entry is not a response: {err}")
                else:
                    result = self._result(reply, 0.0, [])
                    result.from_cache = True
                    result.wall_s = now() - start
                    return result
        try:
            api_key = self.endpoint.api_key()
        except ConfigError as err:
            error = AuthenticationError(str(err), endpoint=self._name)
            error.attempts = 0
            raise error from err
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        call = CallLedger()
        try:  # the common case, one attempt, without the retry loop
            result = await self._attempt(body, headers, call)
        except ModelError as err:
            if not self.retry.worth_retrying(err) or self.endpoint.max_retries < 1:
                raise
            result = await self.retry.run(
                functools.partial(self._attempt, body, headers, call), err, call)
        result.wall_s = now() - start
        result.queue_wait_s = call.waited
        result.backoff_s = call.backoff
        result.rate_limited = call.rate_limited
        result.failures = call.failures
        if call.hung or call.hedged:
            result.hung, result.hedged, result.hedge_won = call.hung, call.hedged, call.hedge_won
            result.hedge_usage = call.hedge_usage
        if key is not None:
            self.cache.put(key, call.payload)  # type: ignore[union-attr]
        return result

    def _attempt(self, body: bytes, headers: dict[str, str] | None,
                 call: CallLedger) -> Awaitable[CallResult]:
        """One attempt as the retry loop counts them: one request (and maybe its hedge). The
        coroutine of the one that runs, not a wrapper around it (awaited at once)."""
        stalls = self.stalls
        stalls.requests += 1
        if not stalls.hedging:
            return self._request(body, headers, call)
        race = Race(stalls, self.limits, self._request, body, headers, call)
        return race.run(self._request(body, headers, call, race.flight))

    async def _request(self, body: bytes, headers: dict[str, str] | None, call: CallLedger,
                       flight: Flight | None = None, permit: Permit | None = None
                       ) -> CallResult:
        """One request, after waiting on the limits; a hedge copy (``permit``: its first
        copy's) is sent at once, in the first copy's slot and budget."""
        try:
            if permit is not None:
                call.statuses.append(0)
                return await self._send(permit, body, headers, call, flight)
            async with self.limits.permit(len(body)) as permit:
                call.waited += permit.waited_s
                call.statuses.append(0)
                if flight is not None:
                    flight.leaving(permit)
                    spare = self.spare
                    if (spare is not None and self._backups and spare.idle > spare.lent
                            and flight.race is not None and self.stalls.primed
                            and self.limits.faulted_lately):
                        flight.race.send_backups(spare, self._backups)
                return await self._send(permit, body, headers, call, flight)
        except BreakerOpen as err:
            error = EndpointUnavailableError(f"{self._name}: {err}", endpoint=self._name)
            call.tag(error)
            raise error from err
        except ModelError as err:
            call.tag(err)
            raise

    def _failed(self, call: CallLedger, err: ModelError, status: int) -> str:
        """Record a failed request; returns the reason the limits keep for the breaker."""
        text = scrub_error(err)
        prefix = f"{self._name}: "
        if text.startswith(prefix):
            text = text[len(prefix):]
        failure = AttemptFailure(error=type(err).__name__, status=status,
                                 message=text[:_MAX_FAILURE_TEXT])
        call.failures.append(failure)
        self.last_failure = failure
        self.failing += 1
        return failure.message

    async def _post(self, body: bytes, headers: dict[str, str] | None,
                    flight: Flight) -> Reply:
        """``transport.post`` under ``flight``'s deadline, which the endpoint's watchdog makes
        expire when the request has no first byte within its budget (a ``FirstByteTimeout``),
        or its race when a copy answered first (``Outrun``, no failure). ``flight`` is
        published for the transport to say when the headers came."""
        stalls = self.stalls
        token = FLIGHT.set(flight)
        flight.size = len(body)
        stalls.track(flight)
        deadline = flight.deadline = asyncio.timeout(None)
        try:
            async with deadline:
                return await self._transport.post(body, headers)
        except TimeoutError:
            if not deadline.expired():
                raise  # not the flight's stop (transports translate their own timeouts)
            if flight.outrun:
                raise Outrun from None
            raise FirstByteTimeout(
                f"{self._name}: no response from {self.url} within the time-to-first-byte "
                f"budget ({flight.abandoned:.3g} s); abandoned as hung",
                endpoint=self._name) from None
        finally:
            flight.deadline = None
            FLIGHT.reset(token)
            stalls.untrack(flight)

    async def _send(self, permit: Permit, body: bytes, headers: dict[str, str] | None,
                    call: CallLedger, flight: Flight | None = None) -> CallResult:
        """One request under a permit; reports its outcome to the limits."""
        limits, now = self.limits, self._now
        if flight is None:
            flight = Flight()
        flight.hung = call.hung  # each abandonment of this call doubles its next budget
        t0 = now()
        try:
            status, resp_headers, payload = await self._post(body, headers, flight)
        except ModelError as err:
            if type(err) is FirstByteTimeout:
                call.hung += 1
            reason = self._failed(call, err, 0)
            if isinstance(err, ConnectionRefused) and not limits.answered:
                limits.failed(permit, down=None)  # nothing there yet: no breaker to open
            else:
                limits.failed(permit, down=isinstance(err, RetryableError), reason=reason)
            raise
        answered = now()
        elapsed = answered - t0
        call.statuses[-1] = status
        limits.answered = True
        if len(payload) > self._max_bytes:  # a transport that does not cap its reads
            err = too_large(self._name, self.url, self._max_bytes)
            limits.failed(permit, down=False, reason=self._failed(call, err, status))
            raise err
        if status >= 300:
            err = http_error(self._name, status, resp_headers, payload)
            reason = self._failed(call, err, status)
            after = getattr(err, "retry_after", None)
            pause = None if after is None else min(after, self.retry.retry_after_max_s)
            if isinstance(err, RateLimitError):
                call.rate_limited += 1
                limits.rate_limited(permit, pause)
            else:
                limits.failed(permit, down=isinstance(err, ServerError), retry_after=pause,
                              reason=reason)
            raise err
        try:
            reply = read_reply(self._name, self.url, payload)
        except ModelError as err:
            reason = self._failed(call, err, status)
            limits.failed(permit, down=isinstance(err, RetryableError), reason=reason)
            raise
        usage = reply.usage
        limits.succeeded(permit, len(body), usage.prompt_tokens, usage.completion_tokens)
        self.stalls.observe(elapsed, len(body))
        self.last_ok_at = answered
        self.failing = 0
        call.payload = payload
        return self._result(reply, elapsed, call.statuses)

    @staticmethod
    def _result(reply: DecodedReply, elapsed: float, statuses: list[int]) -> CallResult:
        return CallResult(
            message=reply.message, usage=reply.usage, latency_s=elapsed,
            attempts=len(statuses), statuses=list(statuses), response_id=reply.response_id,
            finish_reason=reply.finish_reason, model=reply.model)


class Conversation:
    """``ModelClient.complete`` for one append-only conversation (one episode, one role).

    Bodies are spliced from cached per-message bytes (:class:`SplicingEncoder`), so the
    client's encoding work per call is the new messages only; the bytes are identical to
    ``client.encode(request)``.
    """

    def __init__(self, client: ModelClient) -> None:
        self.client = client
        self.encoder = client.template.splicer()

    def __call__(self, request: ChatRequest) -> Awaitable[CallResult]:
        # the client's coroutine itself, not one wrapped in another: one frame less per call
        return self.client.complete(self.encoder.encode(request))
