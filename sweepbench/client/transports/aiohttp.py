"""The aiohttp transport (``Endpoint.transport = "aiohttp"``): POSTs over a pooled
``aiohttp.ClientSession``.

The default transport (:mod:`sweepbench.client.transports.http`) spends less CPU per call; this
one is kept for where aiohttp's own stack is wanted. Same seam and semantics
(:mod:`sweepbench.client.transports.base`): one deadline (``timeout_s``) over connect, send and
the whole body; the client's first-byte budget told when the headers arrive; a reply over
``max_reply_bytes`` not read further, nor unpacked past it (aiohttp's own decompression is off:
:mod:`~sweepbench.client.transports.unpack` does it); ``stopping()`` asked in the step that
writes the request (:class:`GatedBody`); aiohttp and OS errors translated here, in one place.
aiohttp follows no redirect itself: :func:`~sweepbench.client.transports.base.redirect_target`
decides; the proxy is :func:`~sweepbench.client.transports.proxy.proxy_for`'s (aiohttp's
``trust_env`` stays off: one rule for every transport).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any

import aiohttp
from yarl import URL

from sweepbench.client.stalls import first_byte
from sweepbench.client.transports.base import (
    DEFAULT_MAX_REPLY_BYTES,
    READ_CHUNK,
    Reply,
    redirect_target,
    refused,
    too_large,
    without_key,
)
from sweepbench.client.transports.proxy import Proxy, proxy_for
from sweepbench.client.transports.unpack import ACCEPT_ENCODING, BadEncoding, TooLarge, unpack
from sweepbench.errors import (
    ConnectionRefused,
    FatalError,
    InvalidResponseError,
    RequestTimeout,
    TransportError,
)

__all__ = ["AiohttpTransport", "GatedBody"]


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
                 stopping: Callable[[], bool] | None = None,
                 follow_redirects: bool = False, proxy: str | None = None) -> None:
        self._url = URL(url)
        self._follow = follow_redirects
        self._proxy_setting = proxy
        self._proxy = proxy_for(url, proxy, name)
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
        self._session = aiohttp.ClientSession(  # bodies unpacked by us, under the cap
            connector=aiohttp.TCPConnector(limit=self._limit),
            timeout=self._timeout, auto_decompress=False,
            headers={"Content-Type": "application/json", "Accept": "application/json",
                     "Accept-Encoding": ACCEPT_ENCODING},
        )
        return self._session

    async def post(self, body: bytes, headers: dict[str, str] | None) -> Reply:
        """One POST, and the redirects :func:`redirect_target` lets it follow (under the
        first request's deadline, the key only to the endpoint's origin)."""
        session = self._get_session()
        url, hops, timeout, proxy = self._url, 0, None, self._proxy
        started = time.monotonic()
        while True:
            reply = await self._round_trip(session, url, body, headers, timeout, proxy)
            status, reply_headers, _ = reply
            if not 300 <= status < 400 or not (target := redirect_target(
                    self._name, url, status, reply_headers, self._follow, hops)):
                return reply
            left = self._timeout_s - (time.monotonic() - started)
            if left <= 0:
                raise RequestTimeout(f"{self._name}: request to {self._url} timed out "
                                     f"(timeout_s {self._timeout_s:g})", endpoint=self._name)
            timeout = aiohttp.ClientTimeout(total=left, sock_connect=self._timeout.sock_connect,
                                            ceil_threshold=math.inf)
            headers = without_key(headers, target, self._url)
            url, hops = URL(target, encoded=True), hops + 1
            proxy = proxy_for(target, self._proxy_setting, self._name)

    async def _round_trip(self, session: aiohttp.ClientSession, url: URL, body: bytes,
                          headers: dict[str, str] | None,
                          timeout: aiohttp.ClientTimeout | None, proxy: Proxy | None) -> Reply:
        """The single place aiohttp and OS errors are translated."""
        name = self._name
        options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        if proxy is not None:
            options["proxy"] = proxy.shown
            auth = proxy.authorization
            if auth and url.scheme == "https":  # sent with the CONNECT
                options["proxy_headers"] = {"Proxy-Authorization": auth}
            elif auth:  # sent with the request, which goes to the proxy
                headers = {**(headers or {}), "Proxy-Authorization": auth}
        try:  # the session's total timeout: one deadline over connect, send and the body
            async with session.post(url, headers=headers, data=body if self._stopping is None
                                    else GatedBody(body, self._stopping),
                                    allow_redirects=False, **options) as resp:
                first_byte()  # the headers are in: only the total timeout applies now
                size = resp.content_length
                if size is not None and size > self._max_bytes:
                    raise too_large(name, url, self._max_bytes)
                if size is not None:
                    payload = await resp.read()  # size known, capped
                else:
                    chunks, got = [], 0
                    async for chunk in resp.content.iter_chunked(READ_CHUNK):
                        got += len(chunk)
                        if got > self._max_bytes:
                            raise too_large(name, url, self._max_bytes)
                        chunks.append(chunk)
                    payload = b"".join(chunks)
                encoding = resp.headers.get("Content-Encoding")
                if encoding:
                    payload = unpack(payload, encoding, self._max_bytes)
                return resp.status, resp.headers, payload
        except TooLarge:
            raise too_large(name, url, self._max_bytes) from None
        except BadEncoding as err:
            raise InvalidResponseError(f"{name}: response from {url}: {err}",
                                       endpoint=name) from None
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
            if isinstance(err, aiohttp.ClientHttpProxyError) and err.status == 407:
                raise FatalError(f"{name}: proxy {proxy.shown} would not tunnel to {url} "
                                 "(HTTP 407): its credentials go in HTTPS_PROXY "
                                 "(http://user:password@host:port)", endpoint=name) from None
            if refused(err):
                who = url if proxy is None else f"proxy {proxy.shown} (for {url})"
                raise ConnectionRefused(
                    f"{name}: connection refused by {who} (is the server running?)",
                    endpoint=name) from err
            via = "" if proxy is None else f" through proxy {proxy.shown}"
            raise TransportError(
                f"{name}: connection to {url}{via} failed ({type(err).__name__}: {err})",
                endpoint=name) from err
