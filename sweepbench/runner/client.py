"""The model client: one facade per OpenAI-compatible chat-completions endpoint.

``ModelClient.complete`` sends one :class:`~sweepbench.wire.ChatRequest` and returns a
:class:`CallResult`, retrying what is worth retrying. Every failure leaves as a :class:`~sweepbench.errors.ModelError` (the tree is drawn in
:mod:`sweepbench.errors`). Other 4xx (and unexpected 1xx/3xx) raise a plain ``FatalError``. Transport errors are
translated in one place per transport (``AiohttpTransport.post``, ``OpenAITransport.post``)
with ``raise ... from``; ``asyncio.CancelledError`` is never caught. After
``endpoint.max_retries`` retries the last ``RetryableError`` is raised.

Every attempt first passes the endpoint's shared limits (:mod:`sweepbench.runner.limits`):
circuit breaker, Retry-After pause, adaptive in-flight cap, RPM and TPM buckets. Waiting
there spends no retry budget; only requests actually sent count as attempts. Outcomes flow
back: 429 shrinks the in-flight cap and a Retry-After pauses the whole endpoint; 5xx and
connection failures count toward opening the breaker; usage corrects the token estimate.

The API key is read from the environment on every call, sent only as the ``Authorization``
header, and scrubbed from any server text that ends up in an error message; it is never
stored on the client, in results, in exceptions or in logs.

A client belongs to the event loop that first uses it (its aiohttp session is created lazily
inside that loop); ``aclose()`` or ``async with`` releases it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import aiohttp
import msgspec
from msgspec import Struct
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)
from yarl import URL

from sweepbench.config import Endpoint
from sweepbench.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ContextLengthError,
    EndpointUnavailableError,
    FatalError,
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
from sweepbench.runner.body import BodyTemplate
from sweepbench.runner.limits import BreakerOpen, EndpointLimits, Permit
from sweepbench.runner.response_cache import ResponseCache
from sweepbench.wire import AssistantMessage, ChatRequest, Usage, chat_response_decoder

__all__ = [
    "AiohttpTransport",
    "AuthenticationError",
    "BadRequestError",
    "CallResult",
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


class CallResult(Struct, kw_only=True):
    """One successful model call, retries included."""

    message: AssistantMessage
    usage: Usage
    """Token usage; ``usage.cached_prompt_tokens`` is the provider's prompt-cache hit count
    (``prompt_tokens_details.cached_tokens`` or ``cache_read_input_tokens``)."""
    latency_s: float
    """Wall time of the whole call: every attempt, every back-off and limit wait."""
    attempt_latency_s: float
    """Wall time of the successful attempt alone."""
    attempts: int
    """HTTP requests made for this call (0: answered from the response cache). A failed
    half-open breaker probe counts here but did not use up the retry budget."""
    statuses: list[int]
    """HTTP status of each attempt, in order; 0 for attempts that got no response."""
    response_id: str = ""
    finish_reason: str | None = None
    model: str = ""
    """The model name the server reported."""
    rate_limited: int = 0
    """Attempts answered 429 (rate limit, not quota)."""
    limit_wait_s: float = 0.0
    """Time spent waiting on this endpoint's limits (breaker, pause, slot, RPM/TPM buckets)."""
    from_cache: bool = False
    """Answered from the response cache, without an HTTP call."""

    @property
    def retries(self) -> int:
        return max(0, self.attempts - 1)


# ---- transports -----------------------------------------------------------------------------

Reply = tuple[int, Any, bytes]
"""(HTTP status, response headers (``.get`` by name), raw body)."""


class Transport(Protocol):
    """One HTTP round trip; raises only ``ModelError`` subclasses (translated at the seam)."""

    async def post(self, body: bytes, headers: dict[str, str] | None) -> Reply: ...

    async def aclose(self) -> None: ...


class AiohttpTransport:
    """POST to ``url`` over a pooled aiohttp session created lazily in the first loop used."""

    def __init__(self, url: str, *, name: str, max_connections: int, timeout_s: float,
                 connect_timeout_s: float) -> None:
        self._url = URL(url)
        self._name = name
        self._limit = max_connections
        self._timeout = aiohttp.ClientTimeout(total=timeout_s, sock_connect=connect_timeout_s)
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
        name = self._name
        session = self._get_session()
        try:
            async with session.post(self._url, data=body, headers=headers) as resp:
                return resp.status, resp.headers, await resp.read()
        except TimeoutError as err:  # also aiohttp.ServerTimeoutError
            raise RequestTimeout(
                f"{name}: request timed out ({type(err).__name__})", endpoint=name
            ) from err
        except aiohttp.InvalidURL as err:
            raise FatalError(f"{name}: invalid base URL", endpoint=name) from err
        except aiohttp.ClientPayloadError as err:
            raise InvalidResponseError(
                f"{name}: response body truncated ({type(err).__name__})", endpoint=name
            ) from err
        except (aiohttp.ClientError, OSError) as err:
            raise TransportError(
                f"{name}: connection failed ({type(err).__name__}: {err})", endpoint=name
            ) from err


# ---- client ---------------------------------------------------------------------------------

_RESERVED_EXTRA = frozenset({"model", "messages", "tools", "sweepbench", "stream"})
_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "prompt is too long",
    "too many tokens",
    "maximum context",
)
_MAX_SERVER_TEXT = 400

RetryHook = Callable[[RetryableError, float], None]


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

    __slots__ = ("payload", "rate_limited", "statuses", "waited")

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.rate_limited = 0
        self.waited = 0.0
        self.payload = b""


class ModelClient:
    """Chat completions against one endpoint: transport, limits, retries, optional cache.

    ``base_url`` overrides ``endpoint.base_url`` (scripted endpoints have none in the config;
    the runner passes the reference server's URL). ``limits`` are this endpoint+account's
    shared :class:`~sweepbench.runner.limits.EndpointLimits` (from a ``LimitsPool`` keyed by
    :func:`limits_key`); without one the client makes its own. ``cache`` is an opt-in
    :class:`~sweepbench.runner.response_cache.ResponseCache`. ``transport`` replaces the HTTP
    seam (default: aiohttp, or the openai SDK when ``endpoint.transport == "openai"``).
    ``backoff_base_s`` / ``backoff_max_s`` shape the jittered exponential back-off (full
    jitter: a random wait in ``[0, min(max, base * 2**retry)]``); ``retry_after_max_s`` caps
    how long a Retry-After may hold us (and the whole endpoint). ``on_retry(error, wait_s)`` is
    called before each back-off wait.
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
        reserved = sorted(_RESERVED_EXTRA.intersection(endpoint.extra_body))
        if reserved:
            raise ConfigError(
                f"endpoint {endpoint.name!r}: extra_body may not set {', '.join(reserved)}"
            )
        if endpoint.max_concurrency < 1:
            raise ConfigError(f"endpoint {endpoint.name!r}: max_concurrency must be >= 1")
        self.endpoint = endpoint
        self._name = endpoint.name
        self.base_url = base.rstrip("/")
        url = self.base_url + "/chat/completions"
        self.template = BodyTemplate(
            model=endpoint.model_name,
            keep_sweepbench=endpoint.scripted,
            defaults={"temperature": endpoint.temperature, "max_tokens": endpoint.max_tokens},
            extra_body=endpoint.extra_body,
        )
        self.limits = limits if limits is not None else EndpointLimits.for_endpoint(endpoint)
        self.cache = cache
        kind = getattr(endpoint, "transport", "aiohttp") or "aiohttp"
        if transport is None:
            if kind == "openai":
                from sweepbench.runner.transport_openai import OpenAITransport

                transport = OpenAITransport(
                    self.base_url, name=self._name, timeout_s=endpoint.timeout_s,
                    connect_timeout_s=endpoint.connect_timeout_s)
            elif kind == "aiohttp":
                transport = AiohttpTransport(
                    url, name=self._name, max_connections=endpoint.max_concurrency,
                    timeout_s=endpoint.timeout_s, connect_timeout_s=endpoint.connect_timeout_s)
            else:
                raise ConfigError(
                    f"endpoint {endpoint.name!r}: unknown transport {kind!r} (aiohttp, openai)")
        self._transport = transport
        self._cache_identity = f"{url}\n{kind}"
        self._closed = False

        self._retry_after_max_s = retry_after_max_s
        self._retry_jitter_s = backoff_base_s
        self._backoff = wait_random_exponential(multiplier=backoff_base_s, max=backoff_max_s)
        self._on_retry = on_retry
        self._retrying = AsyncRetrying(
            stop=stop_after_attempt(endpoint.max_retries + 1),
            retry=retry_if_exception(_worth_retrying),
            wait=self._wait,
            before_sleep=self._before_sleep,
            reraise=True,
        )

    # -- lifecycle ------------------------------------------------------------------------

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._closed = True
        await self._transport.aclose()

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
        start = time.perf_counter()
        key = None
        if self.cache is not None:
            key = self.cache.key(self._cache_identity, body)
            payload = self.cache.get(key)
            if payload is not None:
                result = self._decode(payload, 0.0, 0, [])
                result.from_cache = True
                result.latency_s = time.perf_counter() - start
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
        except Exception as err:
            if not _worth_retrying(err):
                raise
            first: list[BaseException] = [err]

            async def attempt() -> CallResult:
                if first:  # tenacity sees the failure that already happened as attempt 1
                    raise first.pop()
                return await self._attempt(body, headers, call)

            result = await self._retrying.copy()(attempt)
        result.latency_s = time.perf_counter() - start
        result.rate_limited = call.rate_limited
        result.limit_wait_s = call.waited
        if key is not None:
            self.cache.put(key, call.payload)  # type: ignore[union-attr]
        return result

    async def _attempt(self, body: bytes, headers: dict[str, str] | None,
                       call: _Call) -> CallResult:
        """One attempt as tenacity counts them: one request, after waiting on the limits.

        A failed half-open breaker probe does not use up the attempt: the caller only went
        because the breaker picked it, so it goes back to waiting (until breaker_max_wait_s).
        """
        limits = self.limits
        max_wait = limits.breaker_max_wait_s
        t0 = time.perf_counter()
        try:
            while True:
                async with limits.permit(len(body)) as permit:
                    call.waited += permit.waited_s
                    call.statuses.append(0)
                    try:
                        return await self._send(permit, body, headers, call)
                    except (ServerError, TransportError, InvalidResponseError) as err:
                        if not permit.probe or (
                                max_wait is not None and time.perf_counter() - t0 >= max_wait):
                            raise
                        log.debug("%s: breaker probe failed (%s); waiting again",
                                  self._name, type(err).__name__)
        except BreakerOpen as err:
            error = EndpointUnavailableError(f"{self._name}: {err}", endpoint=self._name)
            error.attempts = len(call.statuses)
            raise error from err
        except ModelError as err:
            err.attempts = len(call.statuses)
            raise

    async def _send(self, permit: Permit, body: bytes, headers: dict[str, str] | None,
                    call: _Call) -> CallResult:
        """One request under a permit; reports its outcome to the limits."""
        limits, statuses = self.limits, call.statuses
        t0 = time.perf_counter()
        try:
            status, resp_headers, payload = await self._transport.post(body, headers)
        except ModelError as err:
            limits.failed(permit, down=isinstance(err, RetryableError))
            raise
        elapsed = time.perf_counter() - t0
        statuses[-1] = status
        if status >= 300:
            err = self._http_error(status, resp_headers, payload)
            after = getattr(err, "retry_after", None)
            pause = None if after is None else min(after, self._retry_after_max_s)
            if isinstance(err, RateLimitError):
                call.rate_limited += 1
                limits.rate_limited(permit, pause)
            else:
                limits.failed(permit, down=isinstance(err, ServerError), retry_after=pause)
            raise err
        try:
            result = self._decode(payload, elapsed, len(statuses), statuses)
        except InvalidResponseError:
            limits.failed(permit, down=True)
            raise
        usage = result.usage
        limits.succeeded(permit, len(body), usage.prompt_tokens, usage.completion_tokens)
        call.payload = payload
        return result

    def _decode(
        self, payload: bytes, elapsed: float, attempt: int, statuses: list[int]
    ) -> CallResult:
        name = self._name
        try:
            resp = chat_response_decoder.decode(payload)
        except msgspec.DecodeError as err:  # includes ValidationError
            start = self._scrub(repr(payload[:80]))
            raise InvalidResponseError(
                f"{name}: invalid response body ({err}); starts {start}", endpoint=name
            ) from err
        if not resp.choices:
            raise InvalidResponseError(f"{name}: response has no choices", endpoint=name)
        choice = resp.choices[0]
        message = choice.message
        if message.tool_calls is not None and not message.tool_calls:
            # Some servers send "tool_calls": []; echoing that back is rejected by others.
            message = AssistantMessage(content=message.content)
        return CallResult(
            message=message,
            usage=resp.usage.to_usage() if resp.usage is not None else Usage(),
            latency_s=elapsed,
            attempt_latency_s=elapsed,
            attempts=attempt,
            statuses=list(statuses),
            response_id=resp.id,
            finish_reason=choice.finish_reason,
            model=resp.model,
        )

    def _http_error(self, status: int, headers: Any, payload: bytes) -> ModelError:
        name = self._name
        text, code = _server_message(payload)
        text = self._scrub(text)
        msg = f"{name}: HTTP {status}: {text}" if text else f"{name}: HTTP {status}"
        if status == 429:
            if code == "insufficient_quota":
                return QuotaExceededError(msg, endpoint=name, status=status)
            return RateLimitError(
                msg, endpoint=name, status=status, retry_after=_retry_after(headers)
            )
        if status == 408 or status >= 500:
            retry_after = _retry_after(headers) if status == 503 else None
            return ServerError(msg, endpoint=name, status=status, retry_after=retry_after)
        if status == 400:
            haystack = f"{code} {text}".lower()
            if any(marker in haystack for marker in _CONTEXT_MARKERS):
                return ContextLengthError(msg, endpoint=name, status=status)
            return BadRequestError(msg, endpoint=name, status=status)
        if status in (401, 403):
            return AuthenticationError(msg, endpoint=name, status=status)
        if status == 404:
            return NotFoundError(msg, endpoint=name, status=status)
        return FatalError(msg, endpoint=name, status=status)

    def _scrub(self, text: str) -> str:
        """Remove the API key from server-supplied text (some servers echo it back)."""
        if not text or not self.endpoint.api_key_env:
            return text
        try:
            key = self.endpoint.api_key()
        except ConfigError:
            return text
        if key and key in text:
            text = text.replace(key, "[redacted]")
        return text

    # -- retry policy ---------------------------------------------------------------------

    def _wait(self, state: RetryCallState) -> float:
        err = state.outcome.exception() if state.outcome is not None else None
        retry_after = getattr(err, "retry_after", None)
        if retry_after is not None:
            # Honour the server, plus a little jitter so callers told the same time spread out.
            return min(retry_after, self._retry_after_max_s) + random.uniform(
                0, self._retry_jitter_s
            )
        return self._backoff(state)

    def _before_sleep(self, state: RetryCallState) -> None:
        err = state.outcome.exception() if state.outcome is not None else None
        wait = state.upcoming_sleep
        if isinstance(err, RetryableError):
            log.debug(
                "%s: attempt %d failed (%s), retrying in %.3fs",
                self._name,
                state.attempt_number,
                type(err).__name__,
                wait,
            )
            if self._on_retry is not None:
                self._on_retry(err, wait)


def _worth_retrying(err: BaseException) -> bool:
    return isinstance(err, RetryableError)


class Conversation:
    """``ModelClient.complete`` for one append-only conversation (one episode, one role).

    Bodies are spliced from cached per-message bytes (:class:`SplicingEncoder`), so the
    client's encoding work per call is the new messages only; the bytes are identical to
    ``client.encode(request)``.
    """

    def __init__(self, client: ModelClient) -> None:
        self.client = client
        self.encoder = client.template.splicer()

    async def __call__(self, request: ChatRequest) -> CallResult:
        return await self.client.complete(self.encoder.encode(request))


def _server_message(payload: bytes) -> tuple[str, str]:
    """(message, code) from an OpenAI-style error body, or the body's start as text."""
    try:
        data = msgspec.json.decode(payload)
    except msgspec.DecodeError:
        return payload[:_MAX_SERVER_TEXT].decode("utf-8", "replace").strip(), ""
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict):
        message = str(err.get("message") or "")
        code = err.get("code") or err.get("type") or ""
        return message[:_MAX_SERVER_TEXT], str(code)
    if isinstance(err, str):
        return err[:_MAX_SERVER_TEXT], ""
    return payload[:_MAX_SERVER_TEXT].decode("utf-8", "replace").strip(), ""


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
