"""An optional transport through the official ``openai`` SDK (``Endpoint.transport = "openai"``).

Same seam as :class:`~sweepbench.client.transports.aiohttp.AiohttpTransport`: one POST of our exact
request body, answering ``(status, headers, raw body)``; the client decodes, classifies and
retries as for any transport, so behaviour (limits, retries, error tree, cache) is identical.
Use it where the SDK's own HTTP stack is wanted (proxies and TLS set up through its
environment variables, gateways tested only with it). The SDK's retries are off (``max_retries
=0``): ours apply. Its aiohttp backend (``DefaultAioHttpClient``) is used when the installed
SDK has it, else its default httpx client.

The body is decoded and handed to ``chat.completions.with_raw_response.create``: ``model`` and
``messages`` as arguments, every other field through ``extra_body``, so nothing the SDK does
not know about is lost. The API key goes per request as the ``Authorization`` header; the SDK
client itself holds only a placeholder. Errors are translated here, in one place:
HTTP errors are handed back as replies (the client maps statuses for every transport alike),
``APITimeoutError`` -> ``RequestTimeout``, ``APIConnectionError`` -> ``ConnectionRefused`` when
nothing listens at the URL, else ``TransportError``; anything else from the SDK ->
``FatalError``. Messages name the URL.

The SDK's timeouts apply per read, so a body trickling in a byte at a time would never time
out: the whole call runs under one ``asyncio.timeout(timeout_s)``. The SDK reads whole bodies
(error bodies too): a response hook wraps each body's stream so that it stops, with an error,
past ``max_reply_bytes``, and unpacks a compressed one itself under the same cap (httpx's
decoder has none; :mod:`~sweepbench.client.transports.unpack`); no compression is asked for.
Another response hook tells the client's time-to-first-byte budget
(:mod:`sweepbench.client.stalls`) that the headers are in, before the body is read. Redirects:
httpx follows only what :func:`~sweepbench.client.transports.base.redirect_target` allows (a
hook raises its error for the rest), and a request hook keeps the key to the endpoint's origin.
The proxy is :func:`~sweepbench.client.transports.proxy.proxy_for`'s, given to httpx (which
would otherwise read the environment by rules of its own).
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any

import msgspec

from sweepbench.errors import (
    ConnectionRefused,
    FatalError,
    InvalidResponseError,
    RequestTimeout,
    TransportError,
)
from sweepbench.client.stalls import first_byte
from sweepbench.client.transports.base import (
    DEFAULT_MAX_REPLY_BYTES,
    MAX_REDIRECTS,
    Reply,
    redirect_target,
    refused,
    same_origin,
    too_large,
)
from sweepbench.client.transports.proxy import proxy_for
from sweepbench.client.transports.unpack import ACCEPT_ENCODING, BadEncoding, TooLarge, unpack

__all__ = ["OpenAITransport", "sdk_backend"]

_PLACEHOLDER_KEY = "sweepbench-key-sent-per-request"
_HOPS: ContextVar[list[int]] = ContextVar("_HOPS")  # redirects followed in this call


class _TooLarge(Exception):
    """Raised from inside the SDK's read of a body over the size limit."""


class _BadBody(Exception):
    """Raised from inside the SDK's read of a body its Content-Encoding does not describe."""


def _capped_stream(base: type) -> type:
    class CappedStream(base):  # type: ignore[misc,valid-type]
        """An httpx byte stream that stops past ``limit`` bytes; a compressed one (``encoding``)
        is gathered under the limit and yielded unpacked under it (httpx's own decoder, which
        has no limit, is left nothing to do)."""

        def __init__(self, stream: Any, limit: int, encoding: str = "") -> None:
            self._stream, self._limit, self._encoding = stream, limit, encoding

        async def __aiter__(self) -> Any:
            got = 0
            raw: list[bytes] = []
            async for chunk in self._stream:
                got += len(chunk)
                if got > self._limit:
                    raise _TooLarge
                if not self._encoding:
                    yield chunk
                else:
                    raw.append(chunk)
            if self._encoding:
                try:
                    yield unpack(b"".join(raw), self._encoding, self._limit)
                except TooLarge:
                    raise _TooLarge from None
                except BadEncoding as err:
                    raise _BadBody(str(err)) from None

        async def aclose(self) -> None:
            await self._stream.aclose()

    return CappedStream


def _httpx_module() -> Any:
    """The httpx the SDK is built on (``httpx2`` in newer SDKs)."""
    from openai import _base_client

    return getattr(_base_client, "httpx2", None) or _base_client.httpx


def _cap_hook(limit: int, stream_type: type) -> Any:
    async def cap(response: Any) -> None:
        size = response.headers.get("content-length", "")
        if size.isdigit() and int(size) > limit:
            raise _TooLarge
        encoding = response.headers.get("content-encoding", "")
        response.stream = stream_type(response.stream, limit, encoding)
        if encoding:  # unpacked by our stream: httpx must not decode it again
            del response.headers["content-encoding"]
    return cap


async def _first_byte_hook(response: Any) -> None:
    first_byte()  # headers in, body not yet read: the TTFB budget no longer applies


def _too_large(err: BaseException) -> bool:
    seen: set[int] = set()
    cur: BaseException | None = err
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, _TooLarge):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def sdk_backend() -> str:
    """'aiohttp' when the installed SDK has ``DefaultAioHttpClient``, else 'httpx'."""
    try:
        from openai import DefaultAioHttpClient  # noqa: F401
    except ImportError:
        return "httpx"
    return "aiohttp"


class OpenAITransport:
    def __init__(self, base_url: str, *, name: str, timeout_s: float, connect_timeout_s: float,
                 backend: str | None = None,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
                 follow_redirects: bool = False, proxy: str | None = None) -> None:
        try:
            import openai
        except ImportError as err:  # an extra: pip install 'sweepbench[openai]'
            raise FatalError(f"{name}: transport 'openai' needs the openai package: "
                             "pip install 'sweepbench[openai]'", endpoint=name) from None
        self._openai = openai
        self._base_url = base_url
        self._name = name
        self._timeout = openai.Timeout(timeout_s, connect=connect_timeout_s)
        self._timeout_s = timeout_s
        self._max_bytes = max_reply_bytes
        self._follow = follow_redirects
        self._proxy = proxy_for(base_url, proxy, name)
        self.backend = backend or sdk_backend()
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def _get_client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._loop is loop:
            return self._client
        if self._closed:
            raise RuntimeError(f"ModelClient for {self._name!r} is closed")
        if self._client is not None:
            raise RuntimeError(
                f"ModelClient for {self._name!r} is bound to another event loop; "
                "create one client per loop")
        openai = self._openai
        http_client = None
        hooks = {"request": [self._key_hook],
                 "response": [self._redirect_hook, _first_byte_hook, _cap_hook(
                     self._max_bytes, _capped_stream(_httpx_module().AsyncByteStream))]}
        # httpx follows what _redirect_hook lets through (it raises for the rest) and counts
        # one more, so that ours is the error
        options: dict[str, Any] = {
            "timeout": self._timeout, "event_hooks": hooks, "follow_redirects": self._follow,
            "max_redirects": MAX_REDIRECTS + 1}
        httpx, proxy = _httpx_module(), self._proxy
        if proxy is not None:
            options["proxy"] = httpx.Proxy(proxy.shown, auth=(
                (proxy.user, proxy.password) if proxy.authorization else None))
        else:  # proxy_for said none: httpx must not take one from the environment
            options["mounts"] = {"all://": None, "http://": None, "https://": None}
        if self.backend == "aiohttp":
            try:
                http_client = openai.DefaultAioHttpClient(**options)
            except RuntimeError:  # the SDK stub when its aiohttp extra is not installed
                self.backend = "httpx"
        if http_client is None:
            http_client = openai.DefaultAsyncHttpxClient(**options)
        http_client.headers["Accept-Encoding"] = ACCEPT_ENCODING  # as every transport
        self._client = openai.AsyncOpenAI(
            api_key=_PLACEHOLDER_KEY, base_url=self._base_url, max_retries=0,
            timeout=self._timeout, http_client=http_client)
        self._loop = loop
        return self._client

    async def _key_hook(self, request: Any) -> None:
        """The API key goes to the endpoint's own origin only (httpx would also send it on a
        redirect from http to https)."""
        if not same_origin(request.url, self._base_url):
            request.headers.pop("Authorization", None)

    async def _redirect_hook(self, response: Any) -> None:
        """A redirect httpx may follow, or the error saying why not (counted per call)."""
        if 300 <= response.status_code < 400:
            hops = _HOPS.get()
            if redirect_target(self._name, response.request.url, response.status_code,
                               response.headers, self._follow, hops[0]):
                hops[0] += 1

    async def aclose(self) -> None:
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def post(self, body: bytes, headers: dict[str, str] | None) -> Reply:
        openai, name = self._openai, self._name
        client = self._get_client()
        try:
            fields = msgspec.json.decode(body)
        except msgspec.DecodeError as err:
            raise FatalError(f"{name}: request body is not JSON ({err})", endpoint=name) from err
        model = fields.pop("model")
        messages = fields.pop("messages")
        auth = (headers or {}).get("Authorization")
        extra_headers = {"Authorization": auth if auth else openai.Omit()}
        _HOPS.set([0])  # this task's (the hooks run in it)
        try:  # the SDK's timeouts are per read: one deadline over the whole call
            async with asyncio.timeout(self._timeout_s):
                raw = await client.chat.completions.with_raw_response.create(
                    model=model, messages=messages, extra_body=fields,
                    extra_headers=extra_headers)
            resp = raw.http_response
            return resp.status_code, resp.headers, resp.content
        except openai.APIStatusError as err:
            resp = err.response
            return resp.status_code, resp.headers, resp.content
        except _TooLarge as err:
            raise too_large(name, self._base_url, self._max_bytes) from err
        except _BadBody as err:
            raise InvalidResponseError(f"{name}: response from {self._base_url}: {err}",
                                       endpoint=name) from None
        except TimeoutError as err:
            raise RequestTimeout(f"{name}: request to {self._base_url} timed out (timeout_s "
                                 f"{self._timeout_s:g})", endpoint=name) from err
        except (openai.APITimeoutError, openai.APIConnectionError) as err:
            if _too_large(err):
                raise too_large(name, self._base_url, self._max_bytes) from err
            proxy = self._proxy
            if refused(err):  # the SDK's aiohttp backend calls it a connect *timeout*
                who = self._base_url if proxy is None else (
                    f"proxy {proxy.shown} (for {self._base_url})")
                raise ConnectionRefused(f"{name}: connection refused by {who} (is the server "
                                        "running?)", endpoint=name) from err
            if isinstance(err, openai.APITimeoutError):
                raise RequestTimeout(f"{name}: request to {self._base_url} timed out (openai "
                                     f"{type(err).__name__})", endpoint=name) from err
            cause = err.__cause__
            what = f"{type(cause).__name__}" if cause is not None else type(err).__name__
            via = "" if proxy is None else f" through proxy {proxy.shown}"
            raise TransportError(f"{name}: connection to {self._base_url}{via} failed (openai: "
                                 f"{what})", endpoint=name) from err
        except openai.APIResponseValidationError as err:
            raise InvalidResponseError(f"{name}: invalid response (openai: {err.message})",
                                       endpoint=name) from err
        except openai.OpenAIError as err:
            raise FatalError(f"{name}: openai SDK error ({type(err).__name__})",
                             endpoint=name) from err
