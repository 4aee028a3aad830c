"""The default transport: HTTP/1.1 keep-alive POSTs on the event loop's own sockets, parsed by
``httptools`` (``Endpoint.transport = "http"``).

Why not aiohttp's ``ClientSession`` here: a model call is one POST of bytes we already hold to
one URL, over and over. The session's per-request Python (request object, header multidicts,
cookie jar, tracing hooks, timer handles, payload writer tasks) was about 40% of the client's
CPU per call; this path keeps only what the call needs: request heads pre-built per endpoint,
one ``writelines`` per request, llhttp (C) parsing the answer straight into a bytes list, one
future per request. aiohttp stays available (``transport = "aiohttp"``) and serves the
reference server.

Same seam and semantics as :class:`~sweepbench.client.transports.aiohttp.AiohttpTransport`:

- ``(status, headers, body)``; headers are read by name, case-insensitively;
- one deadline (``timeout_s``) over connect, send and the whole body; ``connect_timeout_s``
  for the TCP (and TLS) connect alone;
- the client's time-to-first-byte watchdog is told when the headers arrive;
- a body over ``max_reply_bytes`` (by its Content-Length, or while it arrives) is not read
  further: the connection is dropped and a ``FatalError`` raised;
- ``stopping()`` (the sweep's signal gate) is asked in the same step as the socket write, just
  before it: once it answers true, no byte of a request leaves;
- errors are translated here, in one place: refused -> ``ConnectionRefused``, timeouts ->
  ``RequestTimeout``, a connection lost or a reply that is not HTTP -> ``TransportError`` /
  ``InvalidResponseError``; a cancelled request closes its connection (never reused half-read).

We ask for no compression (``Accept-Encoding: identity``); a server that compresses anyway is
unpacked under the same size cap (:mod:`~sweepbench.client.transports.unpack`, as on every
transport). A pooled connection the server closed while idle is noticed and dropped before
reuse. A redirect is followed only where
:func:`~sweepbench.client.transports.base.redirect_target` allows, through a transport of the
target's own. Through a proxy (:mod:`~sweepbench.client.transports.proxy`), an http:// URL is
sent to it whole, an https:// one through a CONNECT tunnel. A request is never re-sent here
otherwise, not even on a connection that closed before answering: the server may have got it,
so it is the client's to count and retry.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httptools

from sweepbench.errors import (
    ConnectionRefused,
    FatalError,
    InvalidResponseError,
    RequestTimeout,
    TransportError,
)
from sweepbench.client.stalls import FLIGHT
from sweepbench.client.transports.base import redirect_target, too_large, without_key
from sweepbench.client.transports.proxy import TunnelRefused, open_tunnel, proxy_for
from sweepbench.client.transports.unpack import ACCEPT_ENCODING, BadEncoding, TooLarge, unpack

__all__ = ["HttpTransport", "ReplyHeaders"]

_HOPS_KEPT = 4  # redirect targets kept open at most


class ReplyHeaders(dict):
    """Response headers by lower-cased name (a repeated header keeps its last value)."""

    __slots__ = ()

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return dict.get(self, name.lower(), default)

    def __getitem__(self, name: str) -> str:
        return dict.__getitem__(self, name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and dict.__contains__(self, name.lower())


class _Lost(Exception):
    """The connection closed before the answer's headers came."""

    def __init__(self, exc: BaseException | None) -> None:
        super().__init__(f"connection closed{f' ({exc})' if exc else ''} before the response")


class _TooLarge(Exception):
    """The answer is over ``max_reply_bytes``."""


class _BadReply(Exception):
    """What came back is not an HTTP answer we can read."""


class _Expired(Exception):
    """The request's deadline (``timeout_s``) passed before the whole answer came."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection; one request at a time."""

    __slots__ = ("_body", "_flight", "_got", "_headers", "_limit", "_name", "_over", "_parser",
                 "_waiter", "closed", "deadline_token", "done", "keep_alive", "status",
                 "transport", "used")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.used = False  # carried a request before: a stale close is possible
        self.deadline_token: object = None  # the request its transport's deadlines watch
        self._waiter: asyncio.Future[None] | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._reset()

    def _reset(self) -> None:
        self._headers: ReplyHeaders = ReplyHeaders()
        self._name = ""
        self._body: list[bytes] = []
        self._got = 0
        self._flight: Any = None
        self.status = 0
        self.done = False
        self.keep_alive = False
        self._over = False  # announced a body over the limit

    # -- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self._waiter is None:  # nothing asked: a server talking out of turn
            self.abort()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(_BadReply("the server switched protocols"))
        except httptools.HttpParserError as err:  # also our callbacks' errors, wrapped
            if self._got > self._limit or self._over:
                self._fail(_TooLarge())
            else:
                self._fail(_BadReply(f"not a valid HTTP response ({err})"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            if not self.status:
                waiter.set_exception(_Lost(exc))
            elif self._has_length():  # headers came, then the close before the whole body
                waiter.set_exception(_BadReply(
                    f"response body truncated (the connection closed after {self._got} bytes)"))
            else:  # a body that runs until the close: complete now
                self.done = True
                waiter.set_result(None)

    # -- httptools callbacks -----------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.done:  # a second answer to one request: nothing on this connection is trusted
            self.closed = True

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.done:
            return
        if name:
            self._name = name.decode("latin-1").lower()
            self._headers[self._name] = value.decode("latin-1")
        elif self._name:  # a value continued across reads
            self._headers[self._name] += value.decode("latin-1")

    def on_headers_complete(self) -> None:
        if self.done:
            return
        self.status = self._parser.get_status_code()
        if self.status < 200:  # 1xx: an interim answer; the real one follows
            self._headers = ReplyHeaders()
            self.status = 0
            return
        flight = self._flight
        if flight is not None:
            flight.got_first_byte = True  # the client's first-byte budget no longer applies
        size = self._headers.get("content-length")
        if size is not None and size.isdigit() and int(size) > self._limit:
            self._over = True
            raise _TooLarge

    def on_body(self, body: bytes) -> None:
        if self.done:
            return
        self._got += len(body)
        if self._got > self._limit:
            raise _TooLarge
        self._body.append(body)

    def on_message_complete(self) -> None:
        if not self.status or self.done:
            return  # the end of a 1xx, or of an answer nobody asked for
        self.done = True
        self.keep_alive = self._parser.should_keep_alive()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- requests ------------------------------------------------------------------------------

    def _has_length(self) -> bool:
        return "content-length" in self._headers or "chunked" in self._headers.get(
            "transfer-encoding", "")

    def _fail(self, err: BaseException) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(err)
        self.abort()

    def expire(self) -> None:
        """The deadline: whatever is under way fails, and the connection is not kept."""
        self._fail(_Expired())

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def send(self, head: bytes, body: bytes, loop: asyncio.AbstractEventLoop,
             stopping: Callable[[], bool] | None) -> asyncio.Future[None]:
        """Write one request; the future its whole answer settles. The caller awaits it,
        clears ``_waiter`` however that ends, then reads :meth:`reply` (in the caller's own
        coroutine rather than one of its own here: one frame less per request)."""
        self._reset()
        self._flight = FLIGHT.get()
        waiter = self._waiter = loop.create_future()
        if stopping is not None and stopping():
            raise asyncio.CancelledError("the sweep is stopping: request not sent")
        self.used = True
        self.transport.writelines((head, body))  # type: ignore[union-attr]
        return waiter

    def reply(self) -> tuple[int, ReplyHeaders, bytes]:
        """The answer the last :meth:`send`'s future settled."""
        body = self._body
        payload = b"".join(body) if len(body) != 1 else body[0]
        return self.status, self._headers, payload


class HttpTransport:
    """POST to ``url`` over a pool of keep-alive connections bound to the first loop used.

    ``stopping`` (when given) is asked in the step that writes each request, just before the
    write; once it answers true no request leaves.
    """

    def __init__(self, url: str, *, name: str, max_connections: int, timeout_s: float,
                 connect_timeout_s: float, max_reply_bytes: int,
                 stopping: Callable[[], bool] | None = None, follow_redirects: bool = False,
                 key_origin: str | None = None, proxy: str | None = None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FatalError(f"{name}: invalid base URL {url}", endpoint=name)
        self._url = url
        self._name = name
        self._host = parts.hostname
        self._tls = parts.scheme == "https"
        try:
            self._port = parts.port or (443 if self._tls else 80)
        except ValueError as err:
            raise FatalError(f"{name}: invalid base URL {url} ({err})", endpoint=name) from err
        host = parts.netloc.rpartition("@")[2]  # never user:password into a header
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._proxy_setting = proxy
        self._proxy = proxy_for(url, proxy, name)
        through = ""
        if self._proxy is not None and not self._tls:  # the proxy is sent the whole URL
            target = f"http://{host}{target}"
            auth = self._proxy.authorization
            through = f"Proxy-Authorization: {auth}\r\n" if auth else ""
        self._via = f" through proxy {self._proxy.shown}" if self._proxy is not None else ""
        self._head = (f"POST {target} HTTP/1.1\r\nHost: {host}\r\n{through}"
                      "Content-Type: application/json\r\nAccept: application/json\r\n"
                      f"Accept-Encoding: {ACCEPT_ENCODING}\r\n"
                      "Connection: keep-alive\r\n").encode("latin-1")
        self._limit = max(1, max_connections)
        self._timeout_s = timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._max_bytes = max_reply_bytes
        self._stopping = stopping
        self._follow = follow_redirects
        self._key_origin = key_origin or url  # where the API key may go
        self._hops: dict[str, HttpTransport] = {}  # redirect targets followed
        self._idle: deque[_Connection] = deque()
        self._open = 0  # connections open or opening
        self._waiting: deque[asyncio.Future[None]] = deque()  # for a connection slot
        self._busy: set[_Connection] = set()
        self._ssl: ssl.SSLContext | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        # The requests' deadlines, in the order sent, which is their deadlines' order (one
        # timeout_s for all), under one timer for the earliest: a timer per request cost
        # more (made, queued and cancelled for each) than the rest of this transport's
        # book-keeping. An entry is live while its connection still holds its token.
        self._deadlines: deque[tuple[float, _Connection, object]] = deque()
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._deadline_at = 0.0  # what the timer is set for

    async def _redirect(self, target: str, body: bytes, headers: dict[str, str] | None,
                        hops: int, deadline: float) -> Any:
        """The request again, to ``target``, through a transport of its own (kept for the
        next time, a few at most), the key only to the endpoint's origin."""
        hop = self._hops.pop(target, None)
        if hop is None:
            hop = HttpTransport(
                target, name=self._name, max_connections=self._limit,
                timeout_s=self._timeout_s, connect_timeout_s=self._connect_timeout_s,
                max_reply_bytes=self._max_bytes, stopping=self._stopping,
                follow_redirects=True, key_origin=self._key_origin, proxy=self._proxy_setting)
            if len(self._hops) >= _HOPS_KEPT:
                await self._hops.pop(next(iter(self._hops))).aclose()
        self._hops[target] = hop  # the most recent last
        return await hop.post(body, without_key(headers, target, self._key_origin),
                              _hops=hops, _deadline=deadline)

    def _head_for(self, body: bytes, headers: dict[str, str] | None) -> bytes:
        extra = b""
        if headers:
            lines = []
            for key, value in headers.items():
                if any(c in key or c in value for c in "\r\n\0"):
                    raise FatalError(f"{self._name}: header {key!r} holds a line break; "
                                     "not sent", endpoint=self._name)
                lines.append(f"{key}: {value}\r\n")
            extra = "".join(lines).encode("latin-1")
        return b"%sContent-Length: %d\r\n%s\r\n" % (self._head, len(body), extra)

    async def aclose(self) -> None:
        self._closed = True
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None
        self._deadlines.clear()
        for conn in (*self._idle, *self._busy):
            conn.abort()
        self._idle.clear()
        for hop in self._hops.values():
            await hop.aclose()
        self._hops.clear()

    def _bind(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        if self._closed:
            raise RuntimeError(f"ModelClient for {self._name!r} is closed")
        if self._loop is loop:
            return loop
        if self._loop is not None:
            raise RuntimeError(f"ModelClient for {self._name!r} is bound to another event "
                               "loop; create one client per loop")
        self._loop = loop
        return loop

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> _Connection:
        if self._tls and self._ssl is None:
            self._ssl = ssl.create_default_context()
        proxy, url, via = self._proxy, self._url, self._via
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                if proxy is None or not self._tls:
                    host, port = (self._host, self._port) if proxy is None else (proxy.host,
                                                                                 proxy.port)
                    _, conn = await loop.create_connection(
                        lambda: _Connection(self._max_bytes), host, port,
                        ssl=self._ssl if self._tls else None)
                else:
                    conn = _Connection(self._max_bytes)
                    await open_tunnel(proxy, self._host, self._port, self._ssl, conn)
        except TimeoutError as err:
            raise RequestTimeout(
                f"{self._name}: connect to {url}{via} timed out (connect_timeout_s "
                f"{self._connect_timeout_s:g})", endpoint=self._name) from err
        except TunnelRefused as err:
            assert proxy is not None
            hint = (": its credentials go in HTTPS_PROXY (http://user:password@host:port)"
                    if err.status == 407 else "")
            kind = FatalError if err.status == 407 else TransportError
            raise kind(f"{self._name}: proxy {proxy.shown} would not tunnel to {url} "
                       f"({err}){hint}", endpoint=self._name) from None
        except ssl.SSLError as err:
            raise TransportError(f"{self._name}: TLS handshake with {url}{via} failed "
                                 f"({err})", endpoint=self._name) from err
        except OSError as err:
            if isinstance(err, ConnectionRefusedError):
                who = url if proxy is None else f"proxy {proxy.shown} (for {url})"
                raise ConnectionRefused(
                    f"{self._name}: connection refused by {who} (is the server running?)",
                    endpoint=self._name) from err
            raise TransportError(f"{self._name}: connection to {url}{via} failed "
                                 f"({type(err).__name__}: {err})", endpoint=self._name) from err
        return conn

    async def _acquire(self, loop: asyncio.AbstractEventLoop) -> _Connection:
        while self._open >= self._limit:
            slot = loop.create_future()
            self._waiting.append(slot)
            try:
                await slot
            except BaseException:
                if slot.done() and not slot.cancelled():
                    self._wake()  # pass the slot on
                raise
            conn = self._idle_connection()
            if conn is not None:
                return conn
        self._open += 1
        try:
            return await self._connect(loop)
        except BaseException:
            self._open -= 1
            self._wake()
            raise

    def _wake(self) -> None:
        waiting = self._waiting
        while waiting:
            slot = waiting.popleft()
            if not slot.done():
                slot.set_result(None)
                return

    def _watch(self, loop: asyncio.AbstractEventLoop, deadline: float, conn: _Connection,
               token: object) -> None:
        """``conn``'s request (``token``) fails at ``deadline`` unless it is done by then."""
        conn.deadline_token = token
        deadlines = self._deadlines
        while deadlines and deadlines[0][1].deadline_token is not deadlines[0][2]:
            deadlines.popleft()  # done: most requests end in the order they were sent
        if len(deadlines) > 2 * len(self._busy) + 64:  # done ones held up behind a slow one
            live = [e for e in deadlines if e[1].deadline_token is e[2]]
            deadlines.clear()
            deadlines.extend(live)
        entry = (deadline, conn, token)
        if not deadlines or deadlines[-1][0] <= deadline:
            deadlines.append(entry)
        else:  # it waited for a connection while later ones were sent: kept in order
            i = len(deadlines) - 1
            while i > 0 and deadlines[i - 1][0] > deadline:
                i -= 1
            deadlines.insert(i, entry)
        timer = self._deadline_timer
        if timer is not None and deadline < self._deadline_at:
            timer.cancel()
            timer = None
        if timer is None:
            self._arm(loop, deadlines[0][0])

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        self._deadline_at = when
        self._deadline_timer = loop.call_at(when, self._expire_due)

    def _expire_due(self) -> None:
        """The timer for the earliest deadline: that request and any other due fail (as a
        timer of their own would have made them); the timer is set for the next one."""
        self._deadline_timer = None
        loop = self._loop
        if loop is None or self._closed:
            return
        due = max(self._deadline_at, loop.time())
        deadlines = self._deadlines
        while deadlines:
            deadline, conn, token = deadlines[0]
            if conn.deadline_token is not token:
                deadlines.popleft()
            elif deadline <= due:
                deadlines.popleft()
                conn.deadline_token = None
                conn.expire()
            else:
                self._arm(loop, deadline)
                return

    def _release(self, conn: _Connection, reuse: bool) -> None:
        self._busy.discard(conn)
        if reuse and not conn.closed and not self._closed:
            self._idle.append(conn)
        else:
            conn.abort()
            self._open -= 1
        self._wake()

    def _idle_connection(self) -> _Connection | None:
        idle = self._idle
        while idle:
            conn = idle.pop()  # the most recently used: least likely closed by the server
            if not conn.closed:
                return conn
            self._open -= 1
        return None

    async def post(self, body: bytes, headers: dict[str, str] | None, *, _hops: int = 0,
                   _deadline: float | None = None) -> Any:
        """One POST; translates every failure to a ``ModelError``. (``_hops``: redirects
        followed to get here; ``_deadline``: the first request's, which a followed redirect
        keeps.)"""
        loop = self._bind()
        head = self._head_for(body, headers)
        # one deadline over connect, send and body (and any redirect followed)
        deadline = loop.time() + self._timeout_s if _deadline is None else _deadline
        try:
            conn = self._idle_connection()
            if conn is None:  # connecting, or waiting for a connection: rare, so the timer
                async with asyncio.timeout_at(deadline):  # machinery is paid only here
                    conn = await self._acquire(loop)
            self._busy.add(conn)
            reuse = False
            token = object()
            self._watch(loop, deadline, conn, token)
            try:
                waiter = conn.send(head, body, loop, self._stopping)
                try:
                    await waiter
                finally:
                    conn._waiter = None
                status, reply_headers, payload = conn.reply()
                reuse = conn.keep_alive
            finally:
                if conn.deadline_token is token:
                    conn.deadline_token = None  # its deadline no longer applies
                self._release(conn, reuse)
        except (TimeoutError, _Expired) as err:
            raise RequestTimeout(
                f"{self._name}: request to {self._url} timed out (timeout_s "
                f"{self._timeout_s:g})", endpoint=self._name) from err
        except _TooLarge:
            raise too_large(self._name, self._url, self._max_bytes) from None
        except _Lost as err:
            raise TransportError(f"{self._name}: connection to {self._url} failed "
                                 f"(ServerDisconnected: {err})", endpoint=self._name) from err
        except _BadReply as err:
            raise InvalidResponseError(f"{self._name}: response from {self._url}: {err}",
                                       endpoint=self._name) from None
        if 300 <= status < 400 and (target := redirect_target(
                self._name, self._url, status, reply_headers, self._follow, _hops)):
            return await self._redirect(target, body, headers, _hops + 1, deadline)
        encoding = reply_headers.get("content-encoding")
        if encoding:
            try:
                payload = unpack(payload, encoding, self._max_bytes)
            except TooLarge:
                raise too_large(self._name, self._url, self._max_bytes) from None
            except BadEncoding as err:
                raise InvalidResponseError(f"{self._name}: response from {self._url}: {err}",
                                           endpoint=self._name) from None
        return status, reply_headers, payload
