"""The HTTP transports under ModelClient, over loopback (the socket is the point): the
aiohttp transport and the default one, parametrized alike (the default one's own edges are in
test_http.py); then the aiohttp transport's own edges on a session double: the session's
settings, each failure's translation, the size cap, proxies and redirects, exact values."""

from __future__ import annotations

import asyncio
import base64
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import msgspec
import pytest
from yarl import URL

from sweepbench.client.facade import ModelClient
from sweepbench.errors import (
    ConnectionRefused,
    RequestTimeout,
    RetryableError,
    TransportError,
)

from ..rig import OK_BODY, endpoint, request

# ---- the aiohttp transport, over loopback (the socket is the point) -------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@asynccontextmanager
async def raw_serve(*scripts: bytes | None, hang_s: float = 0.0) -> AsyncIterator[str]:
    """A bare TCP server: connection i reads one request then writes ``scripts[i]`` verbatim
    and closes (None: close without a byte; after ``hang_s`` seconds). The last repeats.
    Records every request's head in ``heads``."""
    served = 0
    heads: list[bytes] = []

    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        while True:
            script = scripts[min(served, len(scripts) - 1)]
            served += 1
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            heads.append(head)
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            if hang_s:
                await asyncio.sleep(hang_s)
            if not script:
                break
            writer.write(script)
            await writer.drain()
            if b"Connection: close" in script:
                break
        writer.close()

    server = await asyncio.start_server(on_conn, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    raw_serve.heads = heads  # type: ignore[attr-defined]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()
        await server.wait_closed()


def http_bytes(body: bytes, *, content_length: int | None = None, close: bool = True) -> bytes:
    n = len(body) if content_length is None else content_length
    conn = "close" if close else "keep-alive"
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {n}\r\nConnection: {conn}\r\n\r\n".encode() + body)


GOOD = msgspec.json.encode(OK_BODY)
HTTP_TRANSPORTS = ["http", "aiohttp"]


def real_client(url: str, **kw) -> ModelClient:
    kw.setdefault("timeout_s", 5.0)
    kw.setdefault("connect_timeout_s", 1.0)
    return ModelClient(endpoint(base_url=url, **kw), backoff_base_s=0.001, backoff_max_s=0.01)


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_round_trip_pools_one_connection_and_sends_headers(transport, monkeypatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_TEST_KEY", "k-1")
    async with raw_serve(http_bytes(GOOD, close=False)) as url, real_client(
            url + "/", transport=transport, api_key_env="SWEEPBENCH_TEST_KEY") as client:
        for _ in range(3):
            assert (await client.complete(request())).message.content == "hello"
    heads = raw_serve.heads  # type: ignore[attr-defined]
    assert len(heads) == 3 and all(h.startswith(b"POST /v1/chat/completions ") for h in heads)
    assert b"Authorization: Bearer k-1" in heads[0]
    assert b"Content-Type: application/json" in heads[0]


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_refused_connection_fails_within_seconds_naming_the_url(transport) -> None:
    port = free_port()
    t0 = time.monotonic()  # wall clock: how long a researcher waits is the point
    async with real_client(f"http://127.0.0.1:{port}/v1", transport=transport,
                           max_retries=6) as client:
        with pytest.raises(ConnectionRefused) as info:
            await client.complete(request())
    assert time.monotonic() - t0 < 5.0
    assert "connection refused" in str(info.value)
    assert f"http://127.0.0.1:{port}/v1/chat/completions" in str(info.value)
    assert info.value.attempts == 1 and isinstance(info.value.__cause__, Exception)


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_body_cut_short_of_content_length_is_retried(transport) -> None:
    async with raw_serve(http_bytes(GOOD[:20], content_length=len(GOOD)),
                         http_bytes(GOOD)) as url, real_client(url, transport=transport) as client:
        result = await client.complete(request())
    assert result.attempts == 2 and result.message.content == "hello"
    assert result.failures[0].error == "InvalidResponseError"


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_connection_closed_without_response_is_retried(transport) -> None:
    async with raw_serve(None, http_bytes(GOOD)) as url, real_client(
            url, transport=transport) as client:
        result = await client.complete(request())
    assert result.attempts == 2 and result.statuses == [0, 200]
    assert result.failures[0].error == "TransportError" and url in result.failures[0].message


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_timeout_names_the_url(transport) -> None:
    async with raw_serve(None, hang_s=5.0) as url, real_client(
            url, transport=transport, timeout_s=0.2, max_retries=1) as client:
        with pytest.raises(RequestTimeout) as info:
            await client.complete(request())
    assert info.value.attempts == 2 and url in str(info.value)
    assert isinstance(info.value, TransportError) and isinstance(info.value, RetryableError)


# ---- AiohttpTransport at its edges, on a session double (exact values) ----------------------

URL_ = "http://h.invalid/v1/chat/completions"
KEYED = {"Authorization": "Bearer k"}


class Resp:
    """A response double: ``status``, ``headers``, a body of known length (``length``; None:
    unknown, read in ``chunks``)."""

    def __init__(self, status: int = 200, headers: dict | None = None, body: bytes = b"",
                 length: int | None | bool = True, chunks: list[bytes] | None = None) -> None:
        self.status, self.headers, self._body = status, headers or {}, body
        self.content_length = len(body) if length is True else length
        self._chunks = [body] if chunks is None else chunks
        self.chunk_sizes: list[int] = []
        self.content = self

    async def read(self) -> bytes:
        return self._body

    async def iter_chunked(self, n: int):
        self.chunk_sizes.append(n)
        for chunk in self._chunks:
            yield chunk


class Session:
    """A session double: each ``post`` answers the next outcome (a Resp, or an exception
    raised as the request is made); records (url, keyword arguments)."""

    def __init__(self, *outcomes) -> None:
        self.outcomes = list(outcomes)
        self.posts: list[tuple] = []

    def post(self, url, **kw):
        self.posts.append((url, kw))
        outcome = self.outcomes.pop(0)

        class Request:
            async def __aenter__(self):
                if isinstance(outcome, BaseException):
                    raise outcome
                return outcome

            async def __aexit__(self, *exc) -> None:
                return None

        return Request()


def on_double(*outcomes, url: str = URL_, **kw):
    """An AiohttpTransport whose session is a :class:`Session` of ``outcomes``."""
    from sweepbench.client.transports.aiohttp import AiohttpTransport

    kw.setdefault("name", "ep")
    kw.setdefault("max_connections", 3)
    kw.setdefault("timeout_s", 5.0)
    kw.setdefault("connect_timeout_s", 1.5)
    kw.setdefault("proxy", "")
    t = AiohttpTransport(url, **kw)
    t._session, t._loop = Session(*outcomes), asyncio.get_running_loop()
    return t


async def test_the_session_carries_the_endpoints_limits_and_is_made_once():
    import math

    import aiohttp

    from sweepbench.client.transports.aiohttp import AiohttpTransport

    t = AiohttpTransport(URL_, name="ep", max_connections=3, timeout_s=5.0,
                         connect_timeout_s=1.5, proxy="")
    session = t._get_session()
    assert t._get_session() is session
    assert session.connector.limit == 3
    assert session.timeout == aiohttp.ClientTimeout(total=5.0, sock_connect=1.5,
                                                    ceil_threshold=math.inf)
    assert session.auto_decompress is False and session.trust_env is False
    assert dict(session.headers) == {"Content-Type": "application/json",
                                     "Accept": "application/json", "Accept-Encoding": "identity"}
    await t.aclose()
    assert session.closed and t._session is None
    with pytest.raises(RuntimeError) as info:
        t._get_session()
    assert str(info.value) == "ModelClient for 'ep' is closed"


def test_a_client_used_from_a_second_loop_is_refused():
    from sweepbench.client.transports.aiohttp import AiohttpTransport

    t = AiohttpTransport(URL_, name="ep", max_connections=1, timeout_s=5.0,
                         connect_timeout_s=1.0, proxy="")

    async def first() -> None:
        await t._get_session().close()

    async def second() -> None:
        t._get_session()

    asyncio.run(first())
    with pytest.raises(RuntimeError) as info:
        asyncio.run(second())
    assert str(info.value) == ("ModelClient for 'ep' is bound to another event loop; create "
                               "one client per loop")


async def test_one_post_sends_the_body_once_and_marks_the_first_byte():
    from sweepbench.client.stalls import FLIGHT, Flight

    t = on_double(Resp(201, {"X": "y"}, b'{"a": 1}'))
    flight = Flight()
    token = FLIGHT.set(flight)
    try:
        status, headers, body = await t.post(b"{}", KEYED)
    finally:
        FLIGHT.reset(token)
    assert (status, headers, body) == (201, {"X": "y"}, b'{"a": 1}')
    assert flight.got_first_byte
    assert t._session.posts == [(URL(URL_), {"headers": KEYED, "data": b"{}",
                                             "allow_redirects": False})]


async def test_with_a_gate_the_body_asks_it_before_it_is_written():
    from sweepbench.client.transports.aiohttp import GatedBody

    t = on_double(Resp(body=b"ok"), stopping=lambda: False)
    await t.post(b"{}", None)
    data = t._session.posts[0][1]["data"]
    assert type(data) is GatedBody and data._value == b"{}"
    assert data.content_type == "application/json"


@pytest.mark.parametrize("known", [True, False])
async def test_a_reply_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(known):
    from sweepbench.errors import FatalError

    fits = Resp(body=b"x" * 10, length=True if known else None, chunks=[b"x" * 6, b"x" * 4])
    t = on_double(fits, max_reply_bytes=10)
    assert (await t.post(b"{}", None))[2] == b"x" * 10
    assert fits.chunk_sizes == ([] if known else [1 << 16])
    over = Resp(body=b"x" * 11, length=True if known else None, chunks=[b"x" * 6, b"x" * 5])
    t = on_double(over, max_reply_bytes=10)
    with pytest.raises(FatalError) as info:
        await t.post(b"{}", None)
    assert str(info.value) == (f"ep: reply from {URL_} is larger than max_reply_bytes (10); "
                               "not read further")


async def test_a_compressed_reply_is_unpacked_under_the_limit():
    import gzip

    from sweepbench.errors import FatalError, InvalidResponseError

    t = on_double(Resp(headers={"Content-Encoding": "gzip"}, body=gzip.compress(b"y" * 30)),
                  max_reply_bytes=30)
    assert (await t.post(b"{}", None))[2] == b"y" * 30
    t = on_double(Resp(headers={"Content-Encoding": "gzip"}, body=gzip.compress(b"y" * 31)),
                  max_reply_bytes=30)
    with pytest.raises(FatalError) as info:  # 31 bytes unpacked from 23
        await t.post(b"{}", None)
    assert str(info.value) == (f"ep: reply from {URL_} is larger than max_reply_bytes (30); "
                               "not read further")
    t = on_double(Resp(headers={"Content-Encoding": "gzip"}, body=b"not gzip"))
    with pytest.raises(InvalidResponseError) as info:
        await t.post(b"{}", None)
    assert str(info.value).startswith(f"ep: response from {URL_}: body not valid gzip (")
    assert info.value.endpoint == "ep"


def _proxy_error(status: int):
    import aiohttp
    from multidict import CIMultiDict, CIMultiDictProxy

    sent = aiohttp.RequestInfo(URL("http://p:3128"), "CONNECT", CIMultiDictProxy(CIMultiDict()),
                               URL("http://p:3128"))
    return aiohttp.ClientHttpProxyError(sent, (), status=status, message="no")


def _refused():
    import aiohttp

    return aiohttp.ClientConnectorError(
        None, ConnectionRefusedError(111, "Connection refused"))  # type: ignore[arg-type]


@pytest.mark.parametrize(("error", "kind", "message"), [
    (TimeoutError(), RequestTimeout,
     f"ep: request to {URL_} timed out (TimeoutError; timeout_s 5)"),
    ("server_timeout", RequestTimeout,
     f"ep: request to {URL_} timed out (ServerTimeoutError; timeout_s 5)"),
    ("invalid_url", "FatalError", f"ep: invalid base URL {URL_}"),
    ("payload", "InvalidResponseError",
     f"ep: response body from {URL_} truncated (ClientPayloadError)"),
    ("refused", ConnectionRefused,
     f"ep: connection refused by {URL_} (is the server running?)"),
    (OSError("boom"), TransportError, f"ep: connection to {URL_} failed (OSError: boom)"),
])
async def test_each_failure_is_translated_once_naming_the_url(error, kind, message):
    import aiohttp

    from sweepbench import errors

    error = {"server_timeout": lambda: aiohttp.ServerTimeoutError("slow"),
             "invalid_url": lambda: aiohttp.InvalidURL(URL_),
             "payload": lambda: aiohttp.ClientPayloadError("cut"),
             "refused": _refused}.get(error, lambda: error)()
    kind = getattr(errors, kind) if isinstance(kind, str) else kind
    t = on_double(error)
    with pytest.raises(errors.ModelError) as info:
        await t.post(b"{}", None)
    assert type(info.value) is kind and str(info.value) == message
    assert info.value.endpoint == "ep"


@pytest.mark.parametrize(("error", "kind", "message"), [
    ("refused", ConnectionRefused,
     f"ep: connection refused by proxy http://p:3128 (for {URL_}) (is the server running?)"),
    (OSError("boom"), TransportError,
     f"ep: connection to {URL_} through proxy http://p:3128 failed (OSError: boom)"),
    (407, "FatalError", (f"ep: proxy http://p:3128 would not tunnel to {URL_} (HTTP 407): "
                         "its credentials go in HTTPS_PROXY (http://user:password@host:port)")),
    (403, TransportError, (f"ep: connection to {URL_} through proxy http://p:3128 failed "
                           "(ClientHttpProxyError: 403, message='no', url='http://p:3128')")),
])
async def test_a_failure_through_a_proxy_names_it(error, kind, message):
    from sweepbench import errors

    error = (_refused() if error == "refused" else _proxy_error(error) if isinstance(error, int)
             else error)
    kind = getattr(errors, kind) if isinstance(kind, str) else kind
    t = on_double(error, proxy="http://p:3128")
    with pytest.raises(errors.ModelError) as info:
        await t.post(b"{}", None)
    assert type(info.value) is kind and str(info.value) == message
    assert info.value.endpoint == "ep"


async def test_a_failure_while_the_gate_is_closed_is_a_cancel():
    t = on_double(OSError("reset"), stopping=lambda: True)
    with pytest.raises(asyncio.CancelledError) as info:
        await t.post(b"{}", None)
    assert str(info.value) == "the sweep is stopping: request not sent"
    t = on_double(OSError("reset"), stopping=lambda: False)
    with pytest.raises(TransportError):
        await t.post(b"{}", None)


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_proxy_credentials_go_with_the_connect_for_https_and_the_request_for_http(scheme):
    url = f"{scheme}://h.invalid/v1/chat/completions"
    auth = "Basic " + base64.b64encode(b"u:pw").decode()
    t = on_double(Resp(body=b"ok"), url=url, proxy="http://u:pw@p:3128")
    await t.post(b"{}", KEYED)
    sent = t._session.posts[0][1]
    assert sent["proxy"] == "http://p:3128"
    if scheme == "https":
        assert sent["proxy_headers"] == {"Proxy-Authorization": auth}
        assert sent["headers"] == KEYED
    else:
        assert "proxy_headers" not in sent
        assert sent["headers"] == {**KEYED, "Proxy-Authorization": auth}
    t = on_double(Resp(body=b"ok"), url=url, proxy="http://p:3128")  # no credentials
    await t.post(b"{}", None)
    sent = t._session.posts[0][1]
    assert sent["proxy"] == "http://p:3128" and "proxy_headers" not in sent
    assert sent["headers"] is None


class Clock:
    """``time.monotonic`` for the transport's module: the given readings in turn."""

    def __init__(self, *readings: float) -> None:
        self.readings = list(readings)

    def monotonic(self) -> float:
        return self.readings.pop(0)


async def test_a_followed_redirect_keeps_the_first_deadline_and_takes_its_own_proxy(
        monkeypatch):
    import math

    import aiohttp

    from sweepbench.client.transports import aiohttp as module

    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://p:3128")
    monkeypatch.setenv("NO_PROXY", "h.invalid")
    monkeypatch.setattr(module, "time", Clock(100.0, 101.5, 102.0))
    t = on_double(Resp(307, {"Location": "/v2/chat"}), Resp(308, {"Location":
                  "http://other.invalid/x"}), Resp(body=b"ok"), proxy=None,
                  follow_redirects=True)
    assert (await t.post(b"{}", KEYED))[2] == b"ok"
    (u0, k0), (u1, k1), (u2, k2) = t._session.posts
    assert (str(u0), str(u1), str(u2)) == (URL_, "http://h.invalid/v2/chat",
                                           "http://other.invalid/x")
    assert "timeout" not in k0 and "proxy" not in k0 and "proxy" not in k1
    assert k1["timeout"] == aiohttp.ClientTimeout(total=3.5, sock_connect=1.5,
                                                  ceil_threshold=math.inf)
    assert k2["timeout"] == aiohttp.ClientTimeout(total=3.0, sock_connect=1.5,
                                                  ceil_threshold=math.inf)
    assert k1["headers"] == KEYED and k2["headers"] == {}  # the key stays on its origin
    assert k2["proxy"] == "http://p:3128"  # other.invalid is not in NO_PROXY


@pytest.mark.parametrize(("now", "spent"), [(104.999, False), (105.0, True)])
async def test_a_redirect_after_the_deadline_times_out(monkeypatch, now, spent):
    from sweepbench.client.transports import aiohttp as module

    monkeypatch.setattr(module, "time", Clock(100.0, now))
    t = on_double(Resp(307, {"Location": "/v2/chat"}), Resp(body=b"ok"), follow_redirects=True)
    if not spent:
        assert (await t.post(b"{}", None))[2] == b"ok"
        return
    with pytest.raises(RequestTimeout) as info:
        await t.post(b"{}", None)
    assert str(info.value) == f"ep: request to {URL_} timed out (timeout_s 5)"
    assert info.value.endpoint == "ep" and len(t._session.posts) == 1


async def test_redirects_are_counted_to_the_limit():
    from sweepbench.client.transports.base import MAX_REDIRECTS
    from sweepbench.errors import FatalError

    t = on_double(*[Resp(307, {"Location": f"/v{i}"}) for i in range(MAX_REDIRECTS + 1)],
                  follow_redirects=True)
    with pytest.raises(FatalError) as info:
        await t.post(b"{}", None)
    assert f"more than {MAX_REDIRECTS} redirects in a row" in str(info.value)
    assert len(t._session.posts) == MAX_REDIRECTS + 1


async def test_redirects_are_refused_unless_followed_naming_the_endpoint():
    from sweepbench.errors import FatalError

    t = on_double(Resp(307, {"Location": "/v2/chat"}))  # follow_redirects left as it is
    with pytest.raises(FatalError) as info:
        await t.post(b"{}", None)
    assert str(info.value).startswith(f"ep: {URL_} redirects (307) to http://h.invalid/v2/chat")
    t = on_double(Resp(307, {"Location": "/v2/%41"}), Resp(body=b"ok"), follow_redirects=True)
    await t.post(b"{}", None)
    assert str(t._session.posts[1][0]) == "http://h.invalid/v2/%41"  # the target as sent


async def test_the_proxy_is_the_configured_one_for_redirects_too_and_the_environments_else(
        monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://p:3128")
    t = on_double(Resp(307, {"Location": "http://other.invalid/x"}), Resp(body=b"ok"),
                  proxy="http://q:8080", follow_redirects=True)
    await t.post(b"{}", None)
    assert [k["proxy"] for _, k in t._session.posts] == ["http://q:8080"] * 2
    t = on_double(Resp(body=b"ok"), proxy=None)
    await t.post(b"{}", None)
    assert t._session.posts[0][1]["proxy"] == "http://p:3128"


def test_a_proxy_that_is_not_http_is_refused_naming_the_endpoint():
    from sweepbench.client.transports.aiohttp import AiohttpTransport
    from sweepbench.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        AiohttpTransport(URL_, name="ep", max_connections=1, timeout_s=1.0,
                         connect_timeout_s=1.0, proxy="socks5://p:1080")
    assert str(info.value) == ("endpoint 'ep': proxy (socks5://p...) is not an http://host:port "
                               "proxy; only http:// proxies are supported")


def test_a_redirect_to_where_the_environments_proxy_is_not_http_names_the_endpoint(
        monkeypatch):
    from sweepbench.errors import ConfigError

    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "socks5://p:1080")
    monkeypatch.setenv("NO_PROXY", "h.invalid")

    async def follow() -> None:
        t = on_double(Resp(307, {"Location": "http://other.invalid/x"}), proxy=None,
                      follow_redirects=True)
        await t.post(b"{}", None)

    with pytest.raises(ConfigError) as info:
        asyncio.run(follow())
    assert str(info.value) == ("endpoint 'ep': the environment's http_proxy (socks5://p...) is "
                               "not an http://host:port proxy; only http:// proxies are supported")


class Writer:
    """An aiohttp stream writer double: what was written."""

    def __init__(self) -> None:
        self.written = b""

    async def write(self, data: bytes) -> None:
        self.written += bytes(data)


async def test_the_gated_body_writes_what_it_is_asked_for_unless_the_sweep_is_stopping():
    from sweepbench.client.transports.aiohttp import GatedBody

    writer = Writer()
    await GatedBody(b"abcd", lambda: False).write_with_length(writer, 3)
    assert writer.written == b"abc"
    with pytest.raises(asyncio.CancelledError) as info:
        await GatedBody(b"abcd", lambda: True).write_with_length(writer, 4)
    assert str(info.value) == "the sweep is stopping: request not sent"
    assert writer.written == b"abc"
