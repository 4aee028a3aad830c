"""The model client: one facade per OpenAI-compatible chat-completions endpoint.

``ModelClient.complete`` sends one :class:`~sweepbench.wire.ChatRequest` and returns a
:class:`CallResult`, retrying what is worth retrying. Every failure leaves as a
:class:`~sweepbench.errors.ModelError` (the tree is drawn in :mod:`sweepbench.errors`); other
4xx (and unexpected 1xx/3xx) raise a plain ``FatalError``, a 400/413/422 saying the prompt does
not fit raises ``ContextLengthError`` (the wording of each server is in
:mod:`sweepbench.client.shapes`). Transport errors are translated in one place per transport
(``HttpTransport.post``, ``AiohttpTransport.post``, ``OpenAITransport.post``) with
``raise ... from``;
``asyncio.CancelledError`` is never caught. Responses are read by
:func:`~sweepbench.client.shapes.decode_reply`; a body it cannot read is an
``InvalidResponseError`` naming the endpoint.

Every request counts: a call sends at most ``endpoint.max_retries + 1`` requests, whatever the
circuit breaker does, and each failed one is kept (:class:`AttemptFailure`) in the result or
on the error. Before each request the call passes the endpoint's shared limits
(:mod:`sweepbench.client.limits`): circuit breaker, Retry-After pause, adaptive in-flight cap,
RPM and TPM buckets. That wait is reported apart (``queue_wait_s``), as are back-off sleeps;
``latency_s`` runs from the send of the request that was answered to its answer. Outcomes flow
back: clustered 429s shrink the in-flight cap and their Retry-After pauses the whole
endpoint (an isolated 429 holds only its own request for its Retry-After); 5xx and
connection failures count toward opening the breaker (whose error then names the failure
behind it); usage corrects the token estimate. A refused connection to an endpoint that has
never answered fails at once: nothing is running there. While an endpoint's faults are
isolated, an episode's sleep before a retry lends its sweep slot to another episode
(:mod:`sweepbench.runner.slots`); the call's ``wall_s`` includes its wait for a slot back.

Hung requests do not hold a call for ``timeout_s`` (:mod:`sweepbench.client.stalls`): a
request with no response headers within the endpoint's time-to-first-byte budget (from its
observed latency) is abandoned as a ``FirstByteTimeout`` and retried; and where hedging is on,
a request slower than the endpoint's high-percentile latency gets a copy, the first answer
wins and the others are cancelled (``_race``). The call's result counts both (``hung``,
``hedged``, ``hedge_won``, ``hedge_usage``); only the winner's answer is returned.

The API key is read from the environment on every call, sent only as the ``Authorization``
header, and scrubbed from any server text that ends up in an error message; it is never
stored on the client, in results, in exceptions or in logs.

A client belongs to the event loop that first uses it (its connections are made lazily inside
that loop); ``aclose()`` or ``async with`` releases it. Time (latencies, back-off
sleeps) comes from the limits' clock, so tests can run it on a fake one.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import aiohttp
import msgspec
from msgspec import Struct, field
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
)
from yarl import URL

from sweepbench.config import Endpoint
from sweepbench.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ConnectionRefused,
    ContextLengthError,
    EndpointUnavailableError,
    FatalError,
    FirstByteTimeout,
    InvalidResponseError,
    ModelError,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    RequestTimeout,
    RetryableError,
    ServerError,
    TransportError,
)
from sweepbench.client.body import BodyTemplate
from sweepbench.client.stalls import (BACKUP_KEEP, MAX_HEDGES, FLIGHT, Flight, IdleSlots,
                                     StallPolicy, first_byte)
from sweepbench.client.breaker import BreakerOpen
from sweepbench.client.clock import MonotonicClock
from sweepbench.client.limits import EndpointLimits, Permit
from sweepbench.client.cache import ResponseCache
from sweepbench.client.secrets import KEYS
from sweepbench.client.transports.http import HttpTransport
from sweepbench.client.shapes import (
    TRUNCATED,
    DecodedReply,
    InBandError,
    ShapeError,
    decode_reply,
    error_text,
    is_context_overflow,
)
from sweepbench.client.lending import LEASE
from sweepbench.wire import AssistantMessage, ChatRequest, Usage

__all__ = [
    "AiohttpTransport",
    "AttemptFailure",
    "AuthenticationError",
    "BadRequestError",
    "CallResult",
    "ConnectionRefused",
    "ContextLengthError",
    "Conversation",
    "EndpointUnavailableError",
    "FatalError",
    "InvalidResponseError",
    "ModelClient",
    "ModelError",
    "NotFoundError",
    "QuotaExceededError",
    "RateLimitError",
    "RequestTimeout",
    "RetryableError",
    "ServerError",
    "Transport",
    "TransportError",
    "limits_key",
]

log = logging.getLogger(__name__)

# ---- result ---------------------------------------------------------------------------------


class AttemptFailure(Struct, kw_only=True, omit_defaults=True):
    """One request of a call that failed: the error's class, the HTTP status (0: no
    response) and the message (the server's words, API key scrubbed)."""

    error: str
    status: int = 0
    message: str = ""


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
    """What the losing copies are counted as billed (see :mod:`sweepbench.client.stalls`)."""

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


# ---- transports -----------------------------------------------------------------------------

_READ_CHUNK = 1 << 16
DEFAULT_MAX_REPLY_BYTES = Endpoint.__struct_defaults__[
    Endpoint.__struct_fields__.index("max_reply_bytes") - len(Endpoint.__struct_fields__)]

Reply = tuple[int, Any, bytes]
"""(HTTP status, response headers (``.get`` by name), raw body)."""


class Transport(Protocol):
    """One HTTP round trip; raises only ``ModelError`` subclasses (translated at the seam).
    A transport that can tell calls :func:`~sweepbench.client.stalls.first_byte` when the
    response headers arrive (else the whole round trip is held to the first-byte budget)."""

    async def post(self, body: bytes, headers: dict[str, str] | None) -> Reply: ...

    async def aclose(self) -> None: ...


def refused(err: BaseException) -> bool:
    """Whether ``err`` (or an error it wraps) is a refused TCP connection."""
    seen: set[int] = set()
    cur: BaseException | None = err
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionRefusedError) or getattr(cur, "errno", None) == errno.ECONNREFUSED:
            return True
        os_error = getattr(cur, "os_error", None)  # aiohttp.ClientConnectorError
        if isinstance(os_error, BaseException) and refused(os_error):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


class GatedBody(aiohttp.payload.BytesPayload):
    """A request body that asks ``stopping()`` in the step that writes it, just before the write.

    aiohttp buffers a request's headers and sends them with the first body bytes, so this is
    the last moment a request can still be withheld. A signal handler that lands while a
    coroutine is past every earlier check (inside aiohttp's send, or in a body-writing task
    created after the handler cancelled every task) is caught here: nothing is sent and the
    write fails as cancelled.
    """

    def __init__(self, value: bytes, stopping: Callable[[], bool]) -> None:
        super().__init__(value, content_type="application/json")
        self._stopping = stopping

    async def write_with_length(self, writer: Any, content_length: int | None) -> None:
        if self._stopping():
            raise asyncio.CancelledError("the sweep is stopping: request not sent")
        await super().write_with_length(writer, content_length)


class AiohttpTransport:
    """POST to ``url`` over a pooled aiohttp session created lazily in the first loop used.

    ``stopping`` (when given) is asked just before each request's bytes are written; once it
    answers true no request leaves (see :class:`GatedBody`).
    """

    def __init__(self, url: str, *, name: str, max_connections: int, timeout_s: float,
                 connect_timeout_s: float, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
                 stopping: Callable[[], bool] | None = None) -> None:
        self._url = URL(url)
        self._stopping = stopping
        self._name = name
        self._limit = max_connections
        self._timeout_s = timeout_s
        self._max_bytes = max_reply_bytes
        # ``total`` is one deadline over connect, send and the whole body (aiohttp keeps it
        # running until the response is released), to the millisecond: not rounded up to a
        # whole second as aiohttp does past ``ceil_threshold`` by default
        self._timeout = aiohttp.ClientTimeout(total=timeout_s, sock_connect=connect_timeout_s,
                                              ceil_threshold=math.inf)
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    async def aclose(self) -> None:
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    def _get_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is not None and self._loop is loop:
            return self._session
        if self._closed:
            raise RuntimeError(f"ModelClient for {self._name!r} is closed")
        if self._session is not None:
            raise RuntimeError(
                f"ModelClient for {self._name!r} is bound to another event loop; "
                "create one client per loop"
            )
        self._loop = loop
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=self._limit),
            timeout=self._timeout,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        return self._session

    async def post(self, body: bytes, headers: dict[str, str] | None) -> Reply:
        """The single place aiohttp and OS errors are translated."""
        name, url = self._name, self._url
        session = self._get_session()
        try:  # the session's total timeout: one deadline over connect, send and the body
            async with session.post(url, headers=headers, data=body if self._stopping is None
                                    else GatedBody(body, self._stopping)) as resp:
                first_byte()  # the headers are in: only the total timeout applies now
                size = resp.content_length
                if size is not None and size > self._max_bytes:
                    raise too_large(name, url, self._max_bytes)
                if size is not None and "Content-Encoding" not in resp.headers:
                    return resp.status, resp.headers, await resp.read()  # size known, capped
                chunks, got = [], 0
                async for chunk in resp.content.iter_chunked(_READ_CHUNK):
                    got += len(chunk)
                    if got > self._max_bytes:
                        raise too_large(name, url, self._max_bytes)
                    chunks.append(chunk)
                return resp.status, resp.headers, b"".join(chunks)
        except TimeoutError as err:  # also aiohttp.ServerTimeoutError
            raise RequestTimeout(
                f"{name}: request to {url} timed out ({type(err).__name__}; timeout_s "
                f"{self._timeout_s:g})", endpoint=name) from err
        except aiohttp.InvalidURL as err:
            raise FatalError(f"{name}: invalid base URL {url}", endpoint=name) from err
        except aiohttp.ClientPayloadError as err:
            raise InvalidResponseError(
                f"{name}: response body from {url} truncated ({type(err).__name__})",
                endpoint=name) from err
        except (aiohttp.ClientError, OSError) as err:
            if self._stopping is not None and self._stopping():  # withheld by GatedBody
                raise asyncio.CancelledError("the sweep is stopping: request not sent") from err
            if refused(err):
                raise ConnectionRefused(
                    f"{name}: connection refused by {url} (is the server running?)",
                    endpoint=name) from err
            raise TransportError(
                f"{name}: connection to {url} failed ({type(err).__name__}: {err})",
                endpoint=name) from err


def too_large(name: str, url: object, limit: int) -> FatalError:
    """A reply over ``max_reply_bytes``: not read further, not retried (it would be again)."""
    return FatalError(f"{name}: reply from {url} is larger than max_reply_bytes ({limit}); "
                      "not read further", endpoint=name)


# ---- client ---------------------------------------------------------------------------------

_RESERVED_EXTRA = frozenset({"model", "messages", "tools", "sweepbench", "stream"})
_MAX_SERVER_TEXT = 400
_SCRUB_WINDOW = 16_384  # server text scrubbed before any cut; longer text is dropped first
_MAX_FAILURE_TEXT = 300

RetryHook = Callable[[RetryableError, float], None]
BACKOFF_LATENCY_K = 0.5
"""The quick back-off's base: this many of the endpoint's recent median latencies ..."""
BACKOFF_FLOOR_S = 0.02
"""... but at least this (however fast the endpoint), at most ``backoff_base_s``."""
HEALTHY_FAILING_SHARE = 0.5
"""Failed retries back off quickly while under this share of the endpoint's recent requests
failed (and its breaker is closed)."""


def limits_key(endpoint: Endpoint, base_url: str | None = None) -> str:
    """Endpoints with the same key share one :class:`EndpointLimits` (URL + account + model);
    ``endpoint.limits_key``, when the config sets one, overrides it."""
    explicit = getattr(endpoint, "limits_key", None)
    if explicit:
        return explicit
    base = (base_url if base_url is not None else endpoint.base_url).strip().rstrip("/")
    return f"{base}|{endpoint.api_key_env or ''}|{endpoint.model_name}"


class _Call:
    """Book-keeping of one ``complete()`` across its attempts."""

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


def _give_back(limits: EndpointLimits, spare: IdleSlots, _task: object) -> None:
    """A backup ended: its in-flight slot and the idle slot it was lent."""
    limits.concurrency.release()
    spare.give()


class _Race:
    """The hedges of one attempt (see ``ModelClient._race``): copies and the winner. Told
    the first copy's age by the endpoint's watchdog (``tick``); ``close()`` unhooks it all,
    so a call leaves no reference cycle behind. ``backups``: the copies sent at once in the
    ramp-down (:meth:`send_backups`); ``ready``: one that answered, held until the first copy
    fails or reaches the hedge delay."""

    __slots__ = ("backups", "body", "call", "cancelling", "client", "copies", "flight",
                 "headers", "hung0", "live", "me", "ready", "won")

    def __init__(self, client: ModelClient, body: bytes, headers: dict[str, str] | None,
                 call: _Call) -> None:
        self.client, self.body, self.headers, self.call = client, body, headers, call
        me = asyncio.current_task()
        assert me is not None
        self.me, self.cancelling = me, me.cancelling()
        self.copies: list[tuple[asyncio.Task[CallResult], _Call, Flight]] = []
        self.won: asyncio.Task[CallResult] | None = None  # the copy that answered first
        self.live = True
        self.flight = Flight(self)
        self.backups: list[asyncio.Task[CallResult]] = []
        self.ready: asyncio.Task[CallResult] | None = None
        self.hung0 = call.hung  # what every copy's own count starts from

    def send_backups(self, spare: IdleSlots, n: int) -> None:
        """Up to ``n`` copies now, each on an idle slot of the sweep and a permit the limits
        grant at once (the first copy holds its own already)."""
        client, call = self.client, self.call
        for _ in range(n):
            if not spare.take():
                return
            permit = client.limits.try_permit(len(self.body), keep=BACKUP_KEEP)
            if permit is None:
                spare.give()
                return
            call.hedged += 1
            sub, flight = _Call(call.hung), Flight()
            task = asyncio.ensure_future(client._backup(
                self.body, self.headers, sub, flight, permit))
            # given back however it ends (cancelled before it ever ran, too)
            task.add_done_callback(functools.partial(_give_back, client.limits, spare))
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
        delay = self.client.stalls.hedge_delay()
        flight = self.flight
        if (delay is not None and flight.sent_at and not flight.got_first_byte
                and task.get_loop().time() - flight.sent_at >= delay):
            self._win(task)  # late and not answering: as a hedge would

    def _win(self, task: asyncio.Task[CallResult]) -> None:
        if self.live and self.won is None:
            self.won = task
            self.me.cancel()  # stop this task's request: the copy answered first

    async def fallback(self) -> asyncio.Task[CallResult] | None:
        """The first copy failed: a backup that answered, or the first to answer of those
        still on the wire younger than the hedge delay (older ones are suspect, like the
        hedge delay says); None: none, the failure stands."""
        self.live = False  # nothing cancels this task from now on
        if self.ready is not None:
            return self.ready
        delay = self.client.stalls.hedge_delay()
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
                or not self.client.stalls.may_hedge()):
            return  # not yet, enough, answering (a body on its way is no hang), over share
        call = self.call
        call.hedged += 1
        sub, flight = _Call(call.hung), Flight()
        task = asyncio.ensure_future(self.client._request(
            self.body, self.headers, sub, flight, self.flight.permit))
        task.add_done_callback(self.copy_done)
        self.copies.append((task, sub, flight))

    def copy_done(self, task: asyncio.Task[CallResult]) -> None:
        if task.cancelled():
            return
        task.exception()  # retrieved: a loser's error is not "never retrieved"
        self._win(task)

    def close(self) -> list[tuple[asyncio.Task[CallResult], _Call, Flight]]:
        """Stop the copies; the copies, for their books."""
        self.live = False
        self.flight.race = None
        self.ready = None
        for task, _, _ in self.copies:
            task.remove_done_callback(self.copy_done)
            task.remove_done_callback(self.backup_done)
            task.cancel()
        return self.copies


class ModelClient:
    """Chat completions against one endpoint: transport, limits, retries, optional cache.

    ``base_url`` overrides ``endpoint.base_url`` (scripted endpoints have none in the config;
    the runner passes the reference server's URL). ``limits`` are this endpoint+account's
    shared :class:`~sweepbench.client.limits.EndpointLimits` (from a ``LimitsPool`` keyed by
    :func:`limits_key`); without one the client makes its own. ``cache`` is an opt-in
    :class:`~sweepbench.client.cache.ResponseCache`. ``transport`` replaces the HTTP
    seam (default: by ``endpoint.transport``, "http", "aiohttp" or "openai").
    ``backoff_base_s`` / ``backoff_max_s`` shape the jittered exponential back-off (full
    jitter: a random wait in ``[0, min(max, base * 2**(retry-1))]``, where ``base`` is half the
    endpoint's median latency, at most ``backoff_base_s``, while the endpoint mostly answers,
    and ``backoff_base_s`` when it mostly fails: see ``_backoff``); ``retry_after_max_s`` caps
    how long a Retry-After may hold us (and the whole endpoint). ``on_retry(error, wait_s)`` is
    called before each back-off wait.

    ``health()`` tells how the endpoint is doing right now (for progress displays): the
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
            if kind == "openai":
                from sweepbench.client.transports.openai import OpenAITransport

                transport = OpenAITransport(
                    self.base_url, name=self._name, timeout_s=endpoint.timeout_s,
                    connect_timeout_s=endpoint.connect_timeout_s,
                    max_reply_bytes=self._max_bytes)
            elif kind == "http":
                transport = HttpTransport(
                    url, name=self._name, max_connections=endpoint.max_concurrency,
                    timeout_s=endpoint.timeout_s, connect_timeout_s=endpoint.connect_timeout_s,
                    max_reply_bytes=self._max_bytes, stopping=self._limits_closed)
            elif kind == "aiohttp":
                transport = AiohttpTransport(
                    url, name=self._name, max_connections=endpoint.max_concurrency,
                    timeout_s=endpoint.timeout_s, connect_timeout_s=endpoint.connect_timeout_s,
                    max_reply_bytes=self._max_bytes, stopping=self._limits_closed)
            else:
                raise ConfigError(
                    f"endpoint {endpoint.name!r}: unknown transport {kind!r} (http, aiohttp, openai)")
        self._transport = transport
        self.stalls = StallPolicy(endpoint)  # TTFB budget and hedging, from observed latency
        # the sweep's idle slots, lent to ramp-down backups (None: no backups; the sweep sets it)
        self.spare: IdleSlots | None = None
        self._backups: int = getattr(endpoint, "backups", 0) if self.stalls.hedging else 0
        self._cache_identity = f"{url}\n{kind}"
        self._closed = False
        self.last_ok_at: float | None = None  # clock time of the last successful request
        self.last_failure: AttemptFailure | None = None
        self.failing = 0  # failed requests since the last successful one

        self._retry_after_max_s = retry_after_max_s
        self._backoff_base_s = backoff_base_s
        self._backoff_max_s = backoff_max_s
        self._on_retry = on_retry
        self._retrying = AsyncRetrying(
            stop=stop_after_attempt(endpoint.max_retries + 1),
            retry=retry_if_exception(self._worth_retrying),
            wait=self._wait,
            sleep=self._sleep,
            reraise=True,
        )

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
        (its message, or None) and ``since_ok_s`` (None: no success yet)."""
        last = self.last_failure
        return {
            "breaker": self.limits.breaker.state,
            "failing": self.failing,
            "last_failure": last.message if last is not None else None,
            "since_ok_s": (None if self.last_ok_at is None
                           else max(0.0, self._now() - self.last_ok_at)),
        }

    # -- the call -------------------------------------------------------------------------

    def encode(self, request: ChatRequest) -> bytes:
        """The exact JSON body sent for ``request`` (model, defaults, extra_body applied)."""
        return self.template.plain(request)

    def conversation(self) -> Conversation:
        """A ModelCall for one append-only conversation: bodies spliced from cached bytes."""
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
                result = self._result(self._decode(payload), 0.0, [])
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
        call = _Call()
        try:  # the common case, one attempt, without tenacity's per-call machinery
            result = await self._attempt(body, headers, call)
        except ModelError as err:
            if not self._worth_retrying(err) or self.endpoint.max_retries < 1:
                raise
            first: list[BaseException] = [err]

            async def attempt() -> CallResult:
                if first:  # tenacity sees the failure that already happened as attempt 1
                    raise first.pop()
                return await self._attempt(body, headers, call)

            retrying = self._retrying.copy(
                before_sleep=functools.partial(self._before_sleep, call))
            result = await retrying(attempt)
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

    def _worth_retrying(self, err: BaseException) -> bool:
        if isinstance(err, ConnectionRefused):  # nothing ever answered there: not running
            return self.limits.answered
        return isinstance(err, RetryableError)

    def _attempt(self, body: bytes, headers: dict[str, str] | None,
                 call: _Call) -> Awaitable[CallResult]:
        """One attempt as tenacity counts them: one request (and maybe its hedge). The
        coroutine of the one that runs, not a wrapper around it (awaited at once)."""
        stalls = self.stalls
        stalls.requests += 1
        if not stalls.hedging:
            return self._request(body, headers, call)
        return self._race(body, headers, call)

    async def _race(self, body: bytes, headers: dict[str, str] | None,
                    call: _Call) -> CallResult:
        """One attempt with hedges: the request runs in this task; once it has been on the
        wire for the hedge delay (once the endpoint's latency is known) without a byte back,
        a copy goes out as a task (and one more after another delay). The first answer wins,
        errors included (an error fails the attempt, retried as usual, rather than waiting
        on a copy suspected hung); a copy that answers first cancels this task's request and
        the others are cancelled. Ramp-down backups (sent with the request, see
        ``_Race.send_backups``) are held to a different rule: their errors are ignored, and
        their answer is used only if this request fails (``_Race.fallback``) or is late.
        Copies keep their own books (``_Call``), merged into ``call`` when one wins. A request
        that answers in time costs one small object."""
        race = _Race(self, body, headers, call)
        failed = False  # the first copy failed and a backup answered instead
        try:
            try:
                result = await self._request(body, headers, call, race.flight)
            except ModelError:
                winner = await race.fallback() if race.backups else None
                if winner is None:
                    raise
                failed = True
            else:
                winner = None
        except asyncio.CancelledError:
            if not race.won or race.me.uncancel() > race.cancelling:
                raise  # not (only) ours: the caller's cancellation
            winner = race.won
        finally:
            copies = race.close()
        if not copies:  # the usual call: nothing hedged, nothing to merge or bill
            return result
        base = race.hung0  # each copy started counting from it
        for _, sub, _ in copies:
            call.hung += sub.hung - base
            call.rate_limited += sub.rate_limited
        # a copy that failed (a 500 has headers too) was not billed for an answer
        losers = [(t, f) for t, _, f in copies
                  if not (t.done() and not t.cancelled() and t.exception() is not None)]
        if winner is None:
            self._bill(call, result, [f for _, f in losers])
            return result
        _, sub, _ = next(c for c in copies if c[0] is winner)
        call.statuses[-1:] = sub.statuses  # the attempt's status is its answer's
        call.hedge_won = True
        err = winner.exception()
        if err is not None:
            call.failures.extend(sub.failures)
            if isinstance(err, ModelError):
                self._tag(err, call)
            raise err
        result = winner.result()
        call.payload = sub.payload
        rest = [f for t, f in losers if t is not winner]
        self._bill(call, result, rest if failed else [race.flight] + rest)
        result.statuses = list(call.statuses)
        result.attempts = len(call.statuses)
        return result

    @staticmethod
    def _bill(call: _Call, result: CallResult, losers: list[Flight]) -> None:
        """Losing copies that got a first byte count as billed like the winner's answer."""
        for loser in losers:
            if loser.got_first_byte:
                call.hedge_usage = (call.hedge_usage or Usage()) + result.usage

    async def _request(self, body: bytes, headers: dict[str, str] | None, call: _Call,
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
            self._tag(error, call)
            raise error from err
        except ModelError as err:
            self._tag(err, call)
            raise

    async def _backup(self, body: bytes, headers: dict[str, str] | None, call: _Call,
                      flight: Flight, permit: Permit) -> CallResult:
        """A ramp-down backup copy under its own ``permit`` (from ``try_permit``; its
        in-flight slot is released by ``_Race.send_backups`` when the task ends)."""
        try:
            call.statuses.append(0)
            return await self._send(permit, body, headers, call, flight)
        except ModelError as err:
            self._tag(err, call)
            raise

    @staticmethod
    def _tag(err: ModelError, call: _Call) -> None:
        _scrub_error(err)
        err.attempts = len(call.statuses)
        err.statuses = list(call.statuses)
        err.failures = list(call.failures)
        err.hung, err.hedged = call.hung, call.hedged  # type: ignore[attr-defined]

    def _failed(self, call: _Call, err: ModelError, status: int) -> str:
        """Record a failed request; returns the reason the limits keep for the breaker."""
        text = _scrub_error(err)
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
        """``transport.post`` watched by the endpoint's watchdog, which cancels it when it has
        no first byte within its budget: a ``FirstByteTimeout``. ``flight`` is published for
        the transport to say when the headers came."""
        stalls = self.stalls
        token = FLIGHT.set(flight)
        stalls.track(flight)
        try:
            return await self._transport.post(body, headers)
        except asyncio.CancelledError:
            task = flight.task
            if flight.abandoned is None or task is None or task.uncancel() > flight.cancelling:
                raise  # not (only) the watchdog's: the caller's cancellation
            raise FirstByteTimeout(
                f"{self._name}: no response from {self.url} within the time-to-first-byte "
                f"budget ({flight.abandoned:.3g} s); abandoned as hung",
                endpoint=self._name) from None
        finally:
            FLIGHT.reset(token)
            stalls.untrack(flight)

    async def _send(self, permit: Permit, body: bytes, headers: dict[str, str] | None,
                    call: _Call, flight: Flight | None = None) -> CallResult:
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
            err = self._http_error(status, resp_headers, payload)
            reason = self._failed(call, err, status)
            after = getattr(err, "retry_after", None)
            pause = None if after is None else min(after, self._retry_after_max_s)
            if isinstance(err, RateLimitError):
                call.rate_limited += 1
                limits.rate_limited(permit, pause)
            else:
                limits.failed(permit, down=isinstance(err, ServerError), retry_after=pause,
                              reason=reason)
            raise err
        try:
            reply = self._decode(payload)
        except ModelError as err:
            reason = self._failed(call, err, status)
            limits.failed(permit, down=isinstance(err, RetryableError), reason=reason)
            raise
        usage = reply.usage
        limits.succeeded(permit, len(body), usage.prompt_tokens, usage.completion_tokens)
        self.stalls.observe(elapsed)
        self.last_ok_at = answered
        self.failing = 0
        call.payload = payload
        return self._result(reply, elapsed, call.statuses)

    def _decode(self, payload: bytes) -> DecodedReply:
        name = self._name
        try:
            reply = decode_reply(payload)
        except InBandError as err:
            text = self._scrub(err.text[:_SCRUB_WINDOW])[:_MAX_SERVER_TEXT]
            if err.status is not None:  # e.g. an upstream 502 reported inside a 200
                error = self._classify(err.status, None, f"{text} (in a 2xx body)", text)
            else:
                error = InvalidResponseError(f"{name}: a 2xx body carrying an error: {text}",
                                             endpoint=name)
            raise error from None
        except ShapeError as err:
            start = repr(self._scrub(payload[:_SCRUB_WINDOW].decode("utf-8", "replace"))[:80])
            raise InvalidResponseError(
                f"{name}: invalid response from {self.url}: {self._scrub(str(err))[:200]}; "
                f"body starts {start}", endpoint=name) from None
        if echoes_key(reply, payload):
            raise FatalError(
                f"{name}: the reply from {self.url} contains an API key (whole, cut, re-cased "
                "or base64); refused: an endpoint that echoes keys is not shown to any model",
                endpoint=name)
        return reply

    @staticmethod
    def _result(reply: DecodedReply, elapsed: float, statuses: list[int]) -> CallResult:
        return CallResult(
            message=reply.message, usage=reply.usage, latency_s=elapsed,
            attempts=len(statuses), statuses=list(statuses), response_id=reply.response_id,
            finish_reason=reply.finish_reason, model=reply.model)

    def _http_error(self, status: int, headers: Any, payload: bytes) -> ModelError:
        shown, text = _server_text(payload)
        return self._classify(status, headers, shown, text)

    def _classify(self, status: int, headers: Any, shown: str, text: str) -> ModelError:
        """The error for an HTTP ``status`` whose body says ``text``."""
        name = self._name
        msg = f"{name}: HTTP {status}: {shown}" if shown else f"{name}: HTTP {status}"
        if status == 429:
            if "insufficient_quota" in text:
                return QuotaExceededError(msg, endpoint=name, status=status)
            return RateLimitError(
                msg, endpoint=name, status=status, retry_after=_retry_after(headers))
        if status == 408 or status >= 500:
            retry_after = _retry_after(headers) if status == 503 else None
            return ServerError(msg, endpoint=name, status=status, retry_after=retry_after)
        if is_context_overflow(status, text):
            return ContextLengthError(msg, endpoint=name, status=status)
        if status == 400:
            return BadRequestError(msg, endpoint=name, status=status)
        if status in (401, 403):
            return AuthenticationError(msg, endpoint=name, status=status)
        if status == 404:
            return NotFoundError(msg, endpoint=name, status=status)
        return FatalError(msg, endpoint=name, status=status)

    @staticmethod
    def _scrub(text: str) -> str:
        """Every configured key, in any form, removed from server text (before any cut)."""
        return KEYS.scrub(text)

    # -- retry policy ---------------------------------------------------------------------

    def _wait(self, state: RetryCallState) -> float:
        err = state.outcome.exception() if state.outcome is not None else None
        retry_after = getattr(err, "retry_after", None)
        if retry_after is not None:
            # Honour the server, plus a little jitter (a quarter of it, at most the quick
            # back-off) so that callers told the same time spread out.
            retry_after = min(retry_after, self._retry_after_max_s)
            return retry_after + random.uniform(
                0, min(self._quick_backoff_s(), max(BACKOFF_FLOOR_S, retry_after / 4)))
        return self._backoff(state)

    def _backoff(self, state: RetryCallState) -> float:
        """Full jitter: a random wait in ``[0, min(backoff_max_s, base * 2**(retry-1))]``.
        ``base`` is the quick back-off (half a median latency) while the endpoint mostly
        answers (breaker closed, under ``HEALTHY_FAILING_SHARE`` of its recent requests
        failed): its faults are isolated, a retry soon most likely succeeds. Otherwise it is
        ``backoff_base_s``: an endpoint in trouble is given time."""
        base = self._quick_backoff_s() if self._mostly_answering() else self._backoff_base_s
        return random.uniform(0, min(self._backoff_max_s,
                                     base * 2.0 ** (state.attempt_number - 1)))

    def _quick_backoff_s(self) -> float:
        """``BACKOFF_LATENCY_K`` x the endpoint's recent median latency, clamped to
        ``[BACKOFF_FLOOR_S, backoff_base_s]``; ``backoff_base_s`` until that is known."""
        median = self.stalls.latency.quantile(0.5)
        base = self._backoff_base_s
        if median is None:
            return base
        return min(base, max(BACKOFF_FLOOR_S, BACKOFF_LATENCY_K * median))

    async def _sleep(self, seconds: float) -> None:
        """The sleep before a retry. An episode's task (:data:`LEASE`) lends its sweep slot
        for it while the endpoint's faults are isolated (the same test as the quick
        back-off's, and the endpoint neither paused nor at its rate limit): then another
        episode may run meanwhile; an endpoint in trouble is sent no more work."""
        lease = LEASE.get()
        if lease is None or not self._isolated_faults():
            await self.clock.sleep(seconds)
            return
        await lease.sleep(seconds, self.clock.sleep)

    def _mostly_answering(self) -> bool:
        """Breaker closed and under ``HEALTHY_FAILING_SHARE`` of recent requests failed: the
        endpoint's failures are isolated ones (the quick back-off's test)."""
        limits = self.limits
        return (limits.breaker.state == "closed"
                and limits.outcomes.failing_share < HEALTHY_FAILING_SHARE)

    def _isolated_faults(self) -> bool:
        limits = self.limits
        return (self._mostly_answering() and not limits.outcomes.limit_hit()
                and limits.paused_until <= self._now())

    def _before_sleep(self, call: _Call, state: RetryCallState) -> None:
        err = state.outcome.exception() if state.outcome is not None else None
        wait = state.upcoming_sleep
        call.backoff += wait
        if isinstance(err, RetryableError):
            log.debug("%s: attempt %d failed (%s), retrying in %.3fs", self._name,
                      state.attempt_number, type(err).__name__, wait)
            if self._on_retry is not None:
                self._on_retry(err, wait)


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


def _server_text(payload: bytes) -> tuple[str, str]:
    """(what to show, everything to classify by) of an error body: its messages (else its
    type and code), and all its words (see :func:`~sweepbench.client.shapes.error_text`);
    the body's start as text when it is not JSON."""
    try:
        data = msgspec.json.decode(payload)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        data = None
    if isinstance(data, (dict, list, str)):
        text = error_text(data)
        shown = error_text(data, ("message",)) or text
    else:
        text = shown = ""
    if not text:
        text = shown = payload[:_SCRUB_WINDOW].decode("utf-8", "replace").strip()
    # keys out first: a cut must never leave a recognisable piece of one
    scrub = KEYS.scrub
    return (scrub(shown[:_SCRUB_WINDOW])[:_MAX_SERVER_TEXT],
            scrub(text[:_SCRUB_WINDOW])[:_MAX_SERVER_TEXT])


def _scrub_error(err: ModelError) -> str:
    """Scrub ``err``'s message in place (keys in any form); returns the message."""
    text = str(err)
    clean = KEYS.scrub(text)
    if clean != text:
        err.args = (clean, *err.args[1:])
    return clean


def echoes_key(reply: DecodedReply, payload: bytes) -> bool:
    """Whether a 200 reply holds a configured key anywhere: its raw body, or its decoded
    content, reasoning, tool calls, id or model (JSON escapes can hide a key in the raw)."""
    if not KEYS.active:
        return False
    msg = reply.message
    calls = msg.tool_calls or ()
    return KEYS.leaks(payload.decode("utf-8", "replace"), msg.content, msg.reasoning,
                      reply.response_id, reply.model,
                      *(f"{c.function.name} {c.function.arguments}" for c in calls),
                      *((str(msg.reasoning_details),) if msg.reasoning_details else ()))


def _retry_after(headers: Any) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date); None when absent/bad."""
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)
