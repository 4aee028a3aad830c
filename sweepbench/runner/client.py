"""The model client: one facade per OpenAI-compatible chat-completions endpoint.

``ModelClient.complete`` sends one :class:`~sweepbench.wire.ChatRequest` and returns a
:class:`CallResult`, retrying what is worth retrying. Every failure leaves as one of these::

    ModelError                      base; .endpoint, .status (HTTP status or None), .attempts
    ├── RetryableError              worth trying again; .retry_after (seconds or None)
    │   ├── RateLimitError          429 (Retry-After honoured)
    │   ├── ServerError             408, 5xx (Retry-After honoured on 503)
    │   ├── TransportError          connection refused / reset / closed mid-response
    │   │   └── RequestTimeout      connect or total timeout
    │   └── InvalidResponseError    2xx with a truncated, non-JSON or malformed body
    └── FatalError                  retrying cannot help; raised at once
        ├── BadRequestError         400
        │   └── ContextLengthError  400 saying the prompt is too long
        ├── AuthenticationError     401, 403, or the key's environment variable is unset
        ├── NotFoundError           404 (unknown model or wrong base URL)
        └── QuotaExceededError      429 whose code is ``insufficient_quota`` (billing, not rate)

Other 4xx (and unexpected 1xx/3xx) raise a plain ``FatalError``. aiohttp and asyncio errors are
translated in one place (``_post``) with ``raise ... from``; ``asyncio.CancelledError`` is
never caught. After ``endpoint.max_retries`` retries the last ``RetryableError`` is raised.

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
from typing import Any

import aiohttp
import msgspec
from msgspec import Struct
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt
from tenacity import RetryCallState, wait_random_exponential
from yarl import URL

from sweepbench.config import ConfigError, Endpoint
from sweepbench.wire import AssistantMessage, ChatRequest, Usage, chat_response_decoder, encoder

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CallResult",
    "ContextLengthError",
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
    "TransportError",
]

log = logging.getLogger(__name__)

# ---- errors ---------------------------------------------------------------------------------


class ModelError(Exception):
    """A model call that did not produce a response."""

    def __init__(self, message: str, *, endpoint: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.status = status
        self.attempts = 1  # requests made for this call when the error left the client


class RetryableError(ModelError):
    def __init__(
        self,
        message: str,
        *,
        endpoint: str = "",
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, endpoint=endpoint, status=status)
        self.retry_after = retry_after
        """Seconds the server asked us to wait (Retry-After), if it said."""


class RateLimitError(RetryableError):
    pass


class ServerError(RetryableError):
    pass


class TransportError(RetryableError):
    pass


class RequestTimeout(TransportError):
    pass


class InvalidResponseError(RetryableError):
    pass


class FatalError(ModelError):
    pass


class BadRequestError(FatalError):
    pass


class ContextLengthError(BadRequestError):
    pass


class AuthenticationError(FatalError):
    pass


class NotFoundError(FatalError):
    pass


class QuotaExceededError(FatalError):
    pass


# ---- result ---------------------------------------------------------------------------------


class CallResult(Struct, kw_only=True):
    """One successful model call, retries included."""

    message: AssistantMessage
    usage: Usage
    latency_s: float
    """Wall time of the whole call: every attempt and every back-off wait."""
    attempt_latency_s: float
    """Wall time of the successful attempt alone."""
    attempts: int
    statuses: list[int]
    """HTTP status of each attempt, in order; 0 for attempts that got no response."""
    response_id: str = ""
    finish_reason: str | None = None
    model: str = ""
    """The model name the server reported."""

    @property
    def retries(self) -> int:
        return self.attempts - 1


# ---- client ---------------------------------------------------------------------------------

_RESERVED_EXTRA = frozenset({"model", "messages", "tools", "sweepbench", "stream"})
_OVERRIDABLE = ("temperature", "max_tokens", "seed")
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


class ModelClient:
    """Chat completions against one endpoint: pooled session, concurrency cap, retries.

    ``base_url`` overrides ``endpoint.base_url`` (scripted endpoints have none in the config;
    the runner passes the reference server's URL). ``backoff_base_s`` / ``backoff_max_s``
    shape the jittered exponential back-off (full jitter: a random wait in
    ``[0, min(max, base * 2**retry)]``); ``retry_after_max_s`` caps how long a Retry-After
    header may make us wait. ``on_retry(error, wait_s)`` is called before each back-off
    wait, e.g. for an adaptive rate limiter to see 429s.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        base_url: str | None = None,
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
        self._url = URL(base.rstrip("/") + "/chat/completions")
        # Request fields: the endpoint's defaults apply when the request leaves them unset;
        # a key in extra_body wins over both (the request field is dropped).
        self._model = endpoint.model_name
        self._keep_sweepbench = endpoint.scripted
        self._defaults: dict[str, Any] = {
            "temperature": endpoint.temperature,
            "max_tokens": endpoint.max_tokens,
        }
        self._dropped = frozenset(k for k in _OVERRIDABLE if k in endpoint.extra_body)
        extra = encoder.encode(endpoint.extra_body)[1:-1] if endpoint.extra_body else b""
        self._extra_fragment = b"," + extra if extra else b""

        self._semaphore = asyncio.Semaphore(endpoint.max_concurrency)
        self._timeout = aiohttp.ClientTimeout(
            total=endpoint.timeout_s, sock_connect=endpoint.connect_timeout_s
        )
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

        self._retry_after_max_s = retry_after_max_s
        self._retry_jitter_s = backoff_base_s
        self._backoff = wait_random_exponential(multiplier=backoff_base_s, max=backoff_max_s)
        self._on_retry = on_retry
        self._retrying = AsyncRetrying(
            stop=stop_after_attempt(endpoint.max_retries + 1),
            retry=retry_if_exception_type(RetryableError),
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
            connector=aiohttp.TCPConnector(limit=self.endpoint.max_concurrency),
            timeout=self._timeout,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        return self._session

    # -- the call -------------------------------------------------------------------------

    def encode(self, request: ChatRequest) -> bytes:
        """The exact JSON body sent for ``request`` (model, defaults, extra_body applied)."""
        changes: dict[str, Any] = {"model": self._model}
        if not self._keep_sweepbench and request.sweepbench is not None:
            changes["sweepbench"] = None
        for name in _OVERRIDABLE:
            if name in self._dropped:
                changes[name] = None
            elif getattr(request, name) is None and self._defaults.get(name) is not None:
                changes[name] = self._defaults[name]
        body = encoder.encode(msgspec.structs.replace(request, **changes))
        if self._extra_fragment:
            body = body[:-1] + self._extra_fragment + b"}"
        return body

    async def complete(self, request: ChatRequest) -> CallResult:
        """Send ``request``; retry retryable failures; raise a ``ModelError`` subclass."""
        session = self._get_session()
        body = self.encode(request)
        try:
            key = self.endpoint.api_key()
        except ConfigError as err:
            error = AuthenticationError(str(err), endpoint=self._name)
            error.attempts = 0
            raise error from err
        headers = {"Authorization": f"Bearer {key}"} if key else None
        statuses: list[int] = []  # one per attempt, shared across attempts of this call
        start = time.perf_counter()
        result: CallResult = await self._retrying.copy()(
            self._attempt, session, body, headers, statuses
        )
        result.latency_s = time.perf_counter() - start
        return result

    async def _attempt(
        self,
        session: aiohttp.ClientSession,
        body: bytes,
        headers: dict[str, str] | None,
        statuses: list[int],
    ) -> CallResult:
        attempt = len(statuses) + 1
        statuses.append(0)
        try:
            async with self._semaphore:
                t0 = time.perf_counter()
                status, resp_headers, payload = await self._post(session, body, headers)
                elapsed = time.perf_counter() - t0
            statuses[-1] = status
            if status >= 300:
                raise self._http_error(status, resp_headers, payload)
            return self._decode(payload, elapsed, attempt, statuses)
        except ModelError as err:
            err.attempts = attempt
            raise

    async def _post(
        self, session: aiohttp.ClientSession, body: bytes, headers: dict[str, str] | None
    ) -> tuple[int, Any, bytes]:
        """One HTTP round trip; the single place transport errors are translated."""
        name = self._name
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
