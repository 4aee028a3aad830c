"""The default transport (client/transports/http.py) against raw sockets: what it writes, how it
pools, and every way an answer can come back wrong."""

from __future__ import annotations

import asyncio
import base64
import gzip
import ssl
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from sweepbench.client.stalls import FLIGHT, Flight
from sweepbench.client.transports.http import HttpTransport
from sweepbench.errors import (
    ConnectionRefused,
    FatalError,
    InvalidResponseError,
    RequestTimeout,
    TransportError,
)

BODY = b'{"ok": true}'
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, "Server"], Awaitable[None]]


class Server:
    """A TCP server running ``handler`` per connection; counts connections and requests."""

    def __init__(self) -> None:
        self.connections = 0
        self.open = 0
        self.most_open = 0
        self.heads: list[bytes] = []
        self.closed_by_client = 0

    async def read_request(self, reader: asyncio.StreamReader) -> bytes | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        self.heads.append(head)
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return await reader.readexactly(length)


@asynccontextmanager
async def serve(handler: Handler) -> AsyncIterator[tuple[Server, str]]:
    srv = Server()

    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        srv.connections += 1
        srv.open += 1
        srv.most_open = max(srv.most_open, srv.open)
        try:
            await handler(reader, writer, srv)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            srv.open -= 1
            writer.close()

    server = await asyncio.start_server(on_conn, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield srv, f"http://127.0.0.1:{port}/v1/chat/completions"
    finally:
        server.close()


def answer(body: bytes = BODY, *, extra: bytes = b"", status: bytes = b"200 OK") -> bytes:
    return (b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s"
            % (status, len(body), extra, body))


def keep_answering(reply: bytes = answer(), delay: float = 0.0) -> Handler:
    async def handler(reader, writer, srv) -> None:
        while await srv.read_request(reader) is not None:
            if delay:
                await asyncio.sleep(delay)
            writer.write(reply)
            await writer.drain()
    return handler


def once(reply: bytes, *, then_close: bool = True, wait_s: float = 0.0) -> Handler:
    async def handler(reader, writer, srv) -> None:
        if await srv.read_request(reader) is None:
            return
        writer.write(reply)
        await writer.drain()
        if wait_s:
            await asyncio.sleep(wait_s)
        if not then_close:
            await reader.read()  # until the client closes
    return handler


def transport(url: str, **kw) -> HttpTransport:
    kw.setdefault("name", "t")
    kw.setdefault("max_connections", 8)
    kw.setdefault("timeout_s", 5.0)
    kw.setdefault("connect_timeout_s", 2.0)
    kw.setdefault("max_reply_bytes", 1 << 20)
    return HttpTransport(url, **kw)


async def failed_post(url: str, error: type[BaseException], match: str | None = None
                      ) -> BaseException:
    """What one post of ``{}`` to ``url`` raised (an ``error``), the transport closed after."""
    t = transport(url)
    try:
        with pytest.raises(error, match=match) as info:
            await t.post(b"{}", None)
    finally:
        await t.aclose()
    return info.value


async def test_sequential_requests_share_one_connection_and_send_a_plain_head() -> None:
    async with serve(keep_answering()) as (srv, url):
        t = transport(url.replace("127.0.0.1", "user:secret@127.0.0.1") + "?v=1")
        try:
            for i in range(5):
                status, headers, body = await t.post(b'{"n": %d}' % i, {"Authorization": "Bearer k"})
                assert (status, body, headers.get("CONTENT-TYPE")) == (200, BODY,
                                                                       "application/json")
        finally:
            await t.aclose()
    assert srv.connections == 1 and len(srv.heads) == 5
    head = srv.heads[0].decode()
    assert head.startswith("POST /v1/chat/completions?v=1 HTTP/1.1\r\n")
    assert f"Host: {url.split('/')[2]}\r\n" in head and "secret" not in head
    assert "Content-Length: 8\r\n" in head and "Authorization: Bearer k\r\n" in head
    assert "Accept-Encoding: identity\r\n" in head  # no compression asked for


async def test_concurrent_requests_open_no_more_than_max_connections() -> None:
    async with serve(keep_answering(delay=0.05)) as (srv, url):
        t = transport(url, max_connections=2)
        try:
            replies = await asyncio.gather(*(t.post(b"{}", None) for _ in range(7)))
        finally:
            await t.aclose()
    assert [r[0] for r in replies] == [200] * 7
    assert srv.most_open == 2 and srv.connections == 2 and len(srv.heads) == 7


async def test_a_cancelled_request_drops_its_connection_and_the_next_one_works() -> None:
    async with serve(keep_answering(delay=0.3)) as (srv, url):
        t = transport(url)
        try:
            task = asyncio.ensure_future(t.post(b"{}", None))
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            status, _, body = await t.post(b"{}", None)  # not the half-read connection
        finally:
            await t.aclose()
    assert (status, body) == (200, BODY) and srv.connections == 2


async def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    async with serve(once(answer())) as (srv, url):  # answers, then closes
        t = transport(url)
        try:
            assert (await t.post(b"{}", None))[0] == 200
            await asyncio.sleep(0.05)  # the close reaches the client
            assert (await t.post(b"{}", None))[0] == 200
        finally:
            await t.aclose()
    assert srv.connections == 2


async def test_connection_close_is_honoured() -> None:
    async with serve(keep_answering(answer(extra=b"Connection: close\r\n"))) as (srv, url):
        t = transport(url)
        try:
            for _ in range(3):
                assert (await t.post(b"{}", None))[0] == 200
        finally:
            await t.aclose()
    assert srv.connections == 3


@pytest.mark.parametrize("encoding, pack", [
    (b"gzip", gzip.compress),
    (b"deflate", zlib.compress),
    (b"deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send it
])
async def test_a_compressed_answer_is_unpacked(encoding, pack) -> None:
    reply = answer(pack(BODY), extra=b"Content-Encoding: %s\r\n" % encoding)
    async with serve(keep_answering(reply)) as (_, url):
        t = transport(url)
        try:
            assert (await t.post(b"{}", None))[2] == BODY
        finally:
            await t.aclose()


async def test_a_compressed_answer_over_the_cap_is_refused_unpacked() -> None:
    bomb = gzip.compress(b" " * (4 << 20))  # 4 MiB of spaces in about 4 KiB
    reply = answer(bomb, extra=b"Content-Encoding: gzip\r\n")
    async with serve(keep_answering(reply)) as (_, url):
        t = transport(url, max_reply_bytes=1 << 20)
        try:
            with pytest.raises(FatalError, match="larger than max_reply_bytes"):
                await t.post(b"{}", None)
        finally:
            await t.aclose()


@pytest.mark.parametrize("reply, match", [
    (answer(b"xx", extra=b"Content-Encoding: br\r\n"), "unsupported Content-Encoding"),
    (answer(b"not gzip", extra=b"Content-Encoding: gzip\r\n"), "not valid gzip"),
    (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not a valid HTTP response"),
    (answer()[:-5], "truncated"),
])
async def test_an_unreadable_answer_is_an_invalid_response(reply, match) -> None:
    async with serve(once(reply)) as (_, url):
        error = await failed_post(url, InvalidResponseError, match)
    assert error.endpoint == "t" and url in str(error)


CHUNKED = (b"HTTP/1.1 100 Continue\r\n\r\n"
           b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"5\r\n{\"ok\"\r\n7\r\n: true}\r\n0\r\n\r\n")
UNTIL_CLOSE = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + BODY


@pytest.mark.parametrize("reply", [CHUNKED, UNTIL_CLOSE], ids=["chunked", "until-close"])
async def test_chunked_interim_and_close_delimited_answers_are_read_whole(reply) -> None:
    async with serve(once(reply)) as (_, url):
        t = transport(url)
        try:
            assert (await t.post(b"{}", None))[::2] == (200, BODY)
        finally:
            await t.aclose()


async def test_the_first_byte_is_reported_before_the_body_arrives() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BODY)

    async def slow_body(reader, writer, srv) -> None:
        await srv.read_request(reader)
        writer.write(head)
        await writer.drain()
        await asyncio.sleep(0.3)
        writer.write(BODY)
        await writer.drain()

    async with serve(slow_body) as (_, url):
        t = transport(url)
        flight = Flight()

        async def post() -> tuple:
            FLIGHT.set(flight)
            return await t.post(b"{}", None)

        try:
            task = asyncio.ensure_future(post())
            await asyncio.sleep(0.15)
            assert flight.got_first_byte and not task.done()
            assert (await task)[2] == BODY
        finally:
            await t.aclose()


async def test_a_header_with_a_line_break_is_never_sent() -> None:
    async with serve(keep_answering()) as (srv, url):
        t = transport(url)
        try:
            with pytest.raises(FatalError, match="line break"):
                await t.post(b"{}", {"Authorization": "Bearer k\r\nX-Evil: 1"})
        finally:
            await t.aclose()
    assert srv.heads == []


async def test_refused_timeout_and_lost_connections_translate() -> None:
    async with serve(once(b"")) as (_, url):  # reads the request, closes without a byte
        error = await failed_post(url, TransportError, "closed")
        assert not isinstance(error, (RequestTimeout, ConnectionRefused))
    async with serve(keep_answering(delay=2.0)) as (_, url):
        t = transport(url, timeout_s=0.2)
        try:
            with pytest.raises(RequestTimeout, match=r"timed out \(timeout_s 0.2\)"):
                await t.post(b"{}", None)
        finally:
            await t.aclose()
    t = transport(url)  # that server is gone now
    with pytest.raises(ConnectionRefused, match="is the server running"):
        await t.post(b"{}", None)


@pytest.mark.parametrize("url", ["ftp://h/v1", "http:///v1", "http://h:notaport/v1"])
def test_a_bad_url_is_a_fatal_error(url) -> None:
    with pytest.raises(FatalError, match="invalid base URL"):
        transport(url)


async def test_a_closed_transport_refuses_new_requests() -> None:
    async with serve(keep_answering()) as (_, url):
        t = transport(url)
        assert (await t.post(b"{}", None))[0] == 200
        await t.aclose()
        with pytest.raises(RuntimeError, match="closed"):
            await t.post(b"{}", None)


async def test_a_timed_out_connection_is_not_reused() -> None:
    async with serve(keep_answering(delay=0.4)) as (srv, url):
        t = transport(url, timeout_s=0.2)
        try:
            with pytest.raises(RequestTimeout):
                await t.post(b"{}", None)
            t._timeout_s = 5.0
            status, _, body = await t.post(b"{}", None)
        finally:
            await t.aclose()
    assert (status, body) == (200, BODY) and srv.connections == 2


@pytest.fixture
def certificate(tmp_path):
    """A self-signed certificate for 127.0.0.1 (openssl's command line)."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


async def test_https_verifies_the_server_and_then_talks(certificate, monkeypatch) -> None:
    import ssl

    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    srv = Server()

    async def on_conn(reader, writer) -> None:
        try:
            await keep_answering()(reader, writer, srv)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(on_conn, "127.0.0.1", 0, ssl=context)
    url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
    try:
        untrusted = transport(url)
        with pytest.raises(TransportError, match="TLS handshake .* failed"):
            await untrusted.post(b"{}", None)
        await untrusted.aclose()
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trusted from now on
        trusted = transport(url)
        try:
            assert (await trusted.post(b"{}", None))[::2] == (200, BODY)
        finally:
            await trusted.aclose()
    finally:
        server.close()
    assert srv.heads and srv.heads[0].startswith(b"POST /v1/chat/completions HTTP/1.1")


async def test_a_connection_that_answered_twice_is_not_reused() -> None:
    async with serve(keep_answering(answer() + answer(b'{"stale": 1}'))) as (srv, url):
        t = transport(url)
        try:
            for _ in range(3):  # each answer is the first one of its own connection
                assert (await t.post(b"{}", None))[2] == BODY
        finally:
            await t.aclose()
    assert srv.connections == 3


async def test_a_later_request_with_an_earlier_deadline_still_times_out_on_time() -> None:
    """One timer serves every deadline: a request whose deadline comes before those already
    on the wire (a shorter timeout, or a wait for a connection) moves it earlier."""
    async with serve(keep_answering(delay=1.0)) as (_, url):
        t = transport(url, timeout_s=5.0)
        try:
            slow = asyncio.ensure_future(t.post(b"{}", None))
            await asyncio.sleep(0.05)
            t._timeout_s = 0.2
            loop = asyncio.get_running_loop()
            started = loop.time()
            with pytest.raises(RequestTimeout, match=r"timeout_s 0.2"):
                await t.post(b"{}", None)
            assert loop.time() - started < 0.6
            assert (await slow)[0] == 200  # its own deadline, 5 s, was never due
        finally:
            await t.aclose()


async def test_deadlines_of_finished_requests_do_not_pile_up_behind_a_slow_one() -> None:
    """Finished requests leave the deadline queue even while an older one is still out, and
    that one still times out at its own deadline."""
    first = True

    async def handler(reader, writer, srv) -> None:
        nonlocal first
        while await srv.read_request(reader) is not None:
            if first:
                first = False
                await asyncio.sleep(5.0)  # the first request hangs
            writer.write(answer())
            await writer.drain()

    async with serve(handler) as (_, url):
        t = transport(url, timeout_s=1.0)
        try:
            hung = asyncio.ensure_future(t.post(b"{}", None))
            await asyncio.sleep(0.05)
            for _ in range(400):
                assert (await t.post(b"{}", None))[0] == 200
                assert len(t._deadlines) < 80  # not one per request sent
            with pytest.raises(RequestTimeout):
                await hung
        finally:
            await t.aclose()


# ---- edges, exact (unit tests of the default transport's own parts) ---------------------------


def test_reply_headers_are_read_by_name_without_regard_to_case() -> None:
    from sweepbench.client.transports.http import ReplyHeaders

    headers = ReplyHeaders({"content-type": "application/json"})
    assert headers["Content-Type"] == headers.get("CONTENT-TYPE") == "application/json"
    assert "Content-Type" in headers and 1 not in headers
    assert headers.get("X-Missing", "none") == "none"
    with pytest.raises(KeyError):
        headers["X-Missing"]


@pytest.mark.parametrize("framing", [b"Transfer-Encoding: chunked\r\n",
                                     b"Transfer-Encoding: gzip, chunked\r\n"])
async def test_a_chunked_answer_cut_short_is_truncated_not_complete(framing) -> None:
    reply = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + framing
             + b"\r\n10\r\n{\"ok\": tr")  # a chunk of 16 bytes announced, 9 sent, then closed
    async with serve(once(reply)) as (_, url):
        error = await failed_post(url, InvalidResponseError)
    assert str(error).endswith("response body truncated (the connection closed after "
                                    "9 bytes)")


async def test_each_hung_request_times_out_at_its_own_deadline_in_turn() -> None:
    """One timer serves every deadline: after the first expires it is set for the next."""
    async with serve(keep_answering(delay=5.0)) as (_, url):
        t = transport(url, timeout_s=0.3)
        loop = asyncio.get_running_loop()
        try:
            started = loop.time()
            first = asyncio.ensure_future(t.post(b"{}", None))
            await asyncio.sleep(0.15)
            second = asyncio.ensure_future(t.post(b"{}", None))
            outcomes = await asyncio.wait_for(asyncio.gather(first, second,
                                                             return_exceptions=True), 3.0)
            took = loop.time() - started
        finally:
            await t.aclose()
    assert [type(o) for o in outcomes] == [RequestTimeout, RequestTimeout]
    assert took >= 0.45 and not t._deadlines


async def test_a_header_value_split_across_reads_is_read_whole() -> None:
    async def handler(reader, writer, srv) -> None:
        await srv.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nX-Long: abc")
        await writer.drain()
        await asyncio.sleep(0.05)  # the rest of the value comes in a read of its own
        writer.write(b"d\xe9f\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY))
        await writer.drain()

    async with serve(handler) as (_, url):
        t = transport(url)
        try:
            status, headers, body = await t.post(b"{}", None)
        finally:
            await t.aclose()
    assert (status, headers["x-long"], body) == (200, "abcd\xe9f", BODY)


def test_the_request_head_is_built_once_for_the_endpoint_and_for_its_proxy(monkeypatch) -> None:
    for var in ("http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    plain = transport("http://user:pw@h.invalid:8080/v1/chat?x=1", proxy="")
    assert plain._head == (b"POST /v1/chat?x=1 HTTP/1.1\r\nHost: h.invalid:8080\r\n"
                           b"Content-Type: application/json\r\nAccept: application/json\r\n"
                           b"Accept-Encoding: identity\r\nConnection: keep-alive\r\n")
    assert plain._via == "" and plain._port == 8080 and not plain._tls
    monkeypatch.setenv("HTTP_PROXY", "http://agent:s3cret@p:3128")
    proxied = transport("http://h.invalid/v1/chat")
    auth = "Basic " + base64.b64encode(b"agent:s3cret").decode()
    assert proxied._head == (b"POST http://h.invalid/v1/chat HTTP/1.1\r\nHost: h.invalid\r\n"
                             + f"Proxy-Authorization: {auth}\r\n".encode()
                             + b"Content-Type: application/json\r\nAccept: application/json\r\n"
                             b"Accept-Encoding: identity\r\nConnection: keep-alive\r\n")
    assert proxied._via == " through proxy http://p:3128" and proxied._port == 80
    tls = transport("https://h.invalid/", proxy="http://p:3128")  # a tunnel: no whole URL
    assert tls._head.startswith(b"POST / HTTP/1.1\r\nHost: h.invalid\r\nContent-Type")
    assert tls._port == 443 and tls._tls and tls._limit == 8
    assert transport("http://h.invalid/v1", max_connections=0)._limit == 1


class Dial:
    """``loop.create_connection`` for a test: records (host, port, ssl) and raises ``error``
    (or never answers, for None)."""

    def __init__(self, error: BaseException | None) -> None:
        self.error, self.calls = error, []

    async def __call__(self, factory, host, port, ssl=None):
        self.calls.append((host, port, ssl))
        if self.error is None:
            await asyncio.sleep(30)
        raise self.error


URL = "http://h.invalid:81/v1/chat/completions"


@pytest.mark.parametrize(("error", "kind", "message"), [
    (ConnectionRefusedError(111, "refused"), ConnectionRefused,
     f"t: connection refused by {URL} (is the server running?)"),
    (OSError(113, "No route to host"), TransportError,
     f"t: connection to {URL} failed (OSError: [Errno 113] No route to host)"),
    (ssl.SSLError(1, "bad handshake"), TransportError,
     f"t: TLS handshake with {URL} failed (bad handshake)"),
    (None, RequestTimeout, f"t: connect to {URL} timed out (connect_timeout_s 0.05)"),
])
@pytest.mark.parametrize("proxied", [False, True])
async def test_a_failed_connect_is_translated_naming_the_url_and_proxy(error, kind, message,
                                                                      proxied, monkeypatch):
    dial = Dial(error)
    monkeypatch.setattr(asyncio.get_running_loop(), "create_connection", dial)
    t = transport(URL, connect_timeout_s=0.05, proxy="http://p:3128" if proxied else "")
    with pytest.raises(kind) as info:
        await t.post(b"{}", None)
    if proxied:
        message = message.replace(f"by {URL}", f"by proxy http://p:3128 (for {URL})").replace(
            f"{URL} failed", f"{URL} through proxy http://p:3128 failed").replace(
            f"{URL} timed out", f"{URL} through proxy http://p:3128 timed out")
    assert str(info.value) == message and info.value.endpoint == "t"
    assert dial.calls == [("p", 3128, None) if proxied else ("h.invalid", 81, None)]
    assert t._open == 0  # the slot the connect held is free again
    await t.aclose()


@pytest.mark.parametrize(("status", "kind", "hint"), [
    (407, FatalError, ": its credentials go in HTTPS_PROXY (http://user:password@host:port)"),
    (502, TransportError, ""),
])
async def test_a_refused_tunnel_is_fatal_only_for_credentials(status, kind, hint, monkeypatch):
    from sweepbench.client.transports import http as module
    from sweepbench.client.transports.proxy import TunnelRefused

    async def refuse(proxy, host, port, context, protocol) -> None:
        assert (proxy.host, proxy.port, host, port) == ("p", 3128, "h.invalid", 443)
        raise TunnelRefused(status)

    monkeypatch.setattr(module, "open_tunnel", refuse)
    t = transport("https://h.invalid/v1", proxy="http://p:3128")
    with pytest.raises(kind) as info:
        await t.post(b"{}", None)
    assert str(info.value) == (f"t: proxy http://p:3128 would not tunnel to "
                               f"https://h.invalid/v1 (HTTP {status}){hint}")
    assert type(info.value) is kind and info.value.endpoint == "t"
    await t.aclose()


def test_a_lost_connection_says_why_when_it_knows() -> None:
    from sweepbench.client.transports.http import _Lost

    assert str(_Lost(None)) == "connection closed before the response"
    assert str(_Lost(ConnectionResetError("reset by peer"))) == (
        "connection closed (reset by peer) before the response")


async def test_a_server_switching_protocols_is_an_invalid_response() -> None:
    reply = (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
             b"Connection: Upgrade\r\n\r\n")
    async with serve(once(reply, then_close=False)) as (_, url):
        error = await failed_post(url, InvalidResponseError)
    assert str(error) == f"t: response from {url}: the server switched protocols"


async def test_a_length_announced_over_the_cap_is_refused_before_any_body() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n"
    async with serve(once(head, then_close=False)) as (_, url):  # announces, never sends
        t = transport(url, max_reply_bytes=10, timeout_s=3.0)
        try:
            with pytest.raises(FatalError) as info:
                await asyncio.wait_for(t.post(b"{}", None), 2.0)
        finally:
            await t.aclose()
    assert str(info.value) == (f"t: reply from {url} is larger than max_reply_bytes (10); not "
                               "read further")
    async with serve(once(answer(b"x" * 10))) as (_, url):
        t = transport(url, max_reply_bytes=10)
        try:
            assert (await t.post(b"{}", None))[2] == b"x" * 10  # the cap exactly: read
        finally:
            await t.aclose()


def chunked(*chunks: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked"
            b"\r\n\r\n" + b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n")


async def test_a_body_in_chunks_is_counted_whole_against_the_cap() -> None:
    async with serve(keep_answering(chunked(b"x" * 6, b"y" * 4))) as (_, url):
        t = transport(url, max_reply_bytes=10)
        try:
            assert (await t.post(b"{}", None))[2] == b"x" * 6 + b"y" * 4  # 10: the cap
        finally:
            await t.aclose()
    async with serve(keep_answering(chunked(b"x" * 6, b"y" * 5))) as (_, url):
        t = transport(url, max_reply_bytes=10)
        try:
            with pytest.raises(FatalError, match=r"larger than max_reply_bytes \(10\)"):
                await t.post(b"{}", None)
        finally:
            await t.aclose()


def redirect_to(target: str) -> bytes:
    return answer(b"", extra=b"Location: %s\r\n" % target.encode(),
                  status=b"307 Temporary Redirect")


async def test_a_followed_redirect_goes_through_a_kept_transport_of_the_same_settings(
        monkeypatch) -> None:
    calls: list[tuple] = []
    real = HttpTransport.post

    async def spy(self, body, headers, **kw):
        calls.append((self, headers, kw))
        return await real(self, body, headers, **kw)

    monkeypatch.setattr(HttpTransport, "post", spy)

    def stopping() -> bool:
        return False

    loop = asyncio.get_running_loop()
    async with serve(keep_answering()) as (_, target), \
            serve(keep_answering(redirect_to(target))) as (_, url):
        t = transport(url, follow_redirects=True, timeout_s=4.0, connect_timeout_s=1.5,
                      max_reply_bytes=1000, stopping=stopping, proxy="")
        try:
            before = loop.time()
            assert (await t.post(b"{}", {"Authorization": "Bearer k"}))[2] == BODY
            after = loop.time()
            assert (await t.post(b"{}", {"Authorization": "Bearer k"}))[2] == BODY
            hop = t._hops[target]
            assert list(t._hops) == [target] and calls[1][0] is hop and calls[3][0] is hop
            assert (hop._timeout_s, hop._connect_timeout_s, hop._max_bytes, hop._stopping,
                    hop._follow, hop._key_origin, hop._proxy_setting) == (
                4.0, 1.5, 1000, stopping, True, url, "")
        finally:
            await t.aclose()
    assert calls[1][1] == {}  # another port: another origin, no key
    kw = calls[1][2]
    assert kw["_hops"] == 1 and before + 4.0 <= kw["_deadline"] <= after + 4.0


async def test_at_most_four_redirect_targets_are_kept_open() -> None:
    served = 0

    async def handler(reader, writer, srv) -> None:
        nonlocal served
        while await srv.read_request(reader) is not None:
            served += 1
            writer.write(redirect_to(f"{target}?n={served}"))
            await writer.drain()

    async with serve(keep_answering()) as (_, target), serve(handler) as (_, url):
        t = transport(url, follow_redirects=True)
        try:
            await t.post(b"{}", None)
            first = t._hops[f"{target}?n=1"]
            for _ in range(4):
                await t.post(b"{}", None)
            assert list(t._hops) == [f"{target}?n={n}" for n in (2, 3, 4, 5)]
            assert first._closed  # the oldest was closed as it was dropped
        finally:
            await t.aclose()


class Wire:
    """An asyncio transport double: whether it was aborted."""

    def __init__(self) -> None:
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True


async def test_a_connection_lost_before_the_head_fails_its_request_saying_why() -> None:
    from sweepbench.client.transports.http import _Connection, _Lost

    conn = _Connection(10)
    conn._waiter = asyncio.get_running_loop().create_future()
    conn.connection_lost(ConnectionResetError("reset by peer"))
    err = conn._waiter.exception()
    assert type(err) is _Lost and str(err) == "connection closed (reset by peer) before the response"
    assert conn.closed is True


def test_an_aborted_connection_is_closed_and_its_transport_aborted() -> None:
    from sweepbench.client.transports.http import _Connection

    bare = _Connection(10)
    bare.abort()  # no transport yet: nothing to abort
    assert bare.closed is True
    wired, wire = _Connection(10), Wire()
    wired.connection_made(wire)  # type: ignore[arg-type]
    wired.abort()
    assert wired.closed is True and wire.aborted


class Held:
    """A connection as the deadline queue sees it: the token of the request it carries."""

    def __init__(self, token: object = None) -> None:
        self.deadline_token = token

    def abort(self) -> None:  # as aclose() ends every busy connection
        self.deadline_token = None


def watching(t: HttpTransport, loop, deadline: float) -> Held:
    conn = Held()
    t._watch(loop, deadline, conn, object())
    return conn


async def test_deadlines_are_kept_in_order_under_one_timer_for_the_earliest() -> None:
    t = transport("http://h.invalid/v1")
    loop = asyncio.get_running_loop()
    base = loop.time() + 100.0
    a, b = watching(t, loop, base + 10), watching(t, loop, base + 12)
    c = watching(t, loop, base + 11)  # waited for a connection: goes between
    d = watching(t, loop, base + 9)  # before all: the timer moves earlier
    e = watching(t, loop, base + 12)  # equal to the last: after it
    f = watching(t, loop, base + 10)  # equal to one inside: after it
    assert [(when - base, conn) for when, conn, _ in t._deadlines] == [
        (9, d), (10, a), (10, f), (11, c), (12, b), (12, e)]
    assert t._deadline_at == base + 9 and t._deadline_timer.when() == base + 9
    await t.aclose()


@pytest.mark.parametrize(("queued", "pruned"), [(66, False), (67, True)])
async def test_finished_deadlines_are_dropped_once_more_than_twice_the_busy_plus_64(queued,
                                                                                    pruned):
    t = transport("http://h.invalid/v1")
    loop = asyncio.get_running_loop()
    base = loop.time() + 100.0
    head = watching(t, loop, base)  # still out: the finished ones queue up behind it
    t._busy = {head}  # type: ignore[assignment]
    for i in range(queued - 1):
        watching(t, loop, base + 1 + i).deadline_token = None  # finished
    assert len(t._deadlines) == queued
    watching(t, loop, base + 1000)
    assert len(t._deadlines) == (2 if pruned else queued + 1)
    await t.aclose()


async def test_a_request_is_withheld_once_the_sweep_is_stopping() -> None:
    async with serve(keep_answering()) as (srv, url):
        t = transport(url, stopping=lambda: True)
        try:
            with pytest.raises(asyncio.CancelledError) as info:
                await t.post(b"{}", None)
        finally:
            await t.aclose()
    assert str(info.value) == "the sweep is stopping: request not sent" and srv.heads == []


async def test_a_bad_chunk_after_exactly_the_cap_is_an_invalid_response() -> None:
    reply = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
             b"a\r\n0123456789\r\nzz\r\n")  # 10 bytes (the cap), then no chunk size
    async with serve(once(reply, then_close=False)) as (_, url):
        t = transport(url, max_reply_bytes=10)
        try:
            with pytest.raises(InvalidResponseError, match="not a valid HTTP response"):
                await t.post(b"{}", None)
        finally:
            await t.aclose()


async def test_a_connection_released_unused_is_closed_and_counted_out() -> None:
    async with serve(keep_answering(answer(extra=b"Connection: close\r\n"))) as (srv, url):
        t = transport(url)
        try:
            for _ in range(2):
                assert (await t.post(b"{}", None))[0] == 200
                assert (t._open, t._busy, len(t._idle)) == (0, set(), 0)
        finally:
            await t.aclose()
    assert srv.connections == 2


async def test_a_deadline_between_two_others_is_placed_between_them() -> None:
    t = transport("http://h.invalid/v1")
    loop = asyncio.get_running_loop()
    base = loop.time() + 100.0
    held = [watching(t, loop, base + s) for s in (9, 10, 11, 12, 12)]
    middle = watching(t, loop, base + 11.5)
    assert [conn for _, conn, _ in t._deadlines] == held[:3] + [middle] + held[3:]
    await t.aclose()


async def test_extra_headers_are_sent_each_on_its_line_and_a_line_break_is_refused() -> None:
    async with serve(keep_answering()) as (srv, url):
        t = transport(url)
        try:
            await t.post(b"{}", {"Authorization": "Bearer X", "X-Trace": "aXb"})
            with pytest.raises(FatalError) as info:
                await t.post(b"{}", {"X-Evil": "a\r\nHost: elsewhere"})
        finally:
            await t.aclose()
    assert srv.heads[0].endswith(b"Content-Length: 2\r\nAuthorization: Bearer X\r\n"
                                 b"X-Trace: aXb\r\n\r\n")
    assert str(info.value) == "t: header 'X-Evil' holds a line break; not sent"
    assert info.value.endpoint == "t" and len(srv.heads) == 1


def test_a_transport_used_from_a_second_loop_is_refused() -> None:
    t = transport("http://h.invalid/v1")

    async def bind() -> None:
        t._bind()

    asyncio.run(bind())
    with pytest.raises(RuntimeError) as info:
        asyncio.run(bind())
    assert str(info.value) == ("ModelClient for 't' is bound to another event loop; create one "
                               "client per loop")


async def test_https_through_a_proxy_tunnels_with_our_tls_context_and_connection(monkeypatch):
    from sweepbench.client.transports import http as module
    from sweepbench.client.transports.http import _Connection
    from sweepbench.client.transports.proxy import TunnelRefused

    seen = []

    async def tunnel(proxy, host, port, context, protocol) -> None:
        seen.append((context, protocol))
        raise TunnelRefused(502)

    monkeypatch.setattr(module, "open_tunnel", tunnel)
    t = transport("https://h.invalid/v1", proxy="http://p:3128", max_reply_bytes=1234)
    with pytest.raises(TransportError):
        await t.post(b"{}", None)
    await t.aclose()
    (context, protocol), = seen
    assert context is t._ssl and isinstance(context, ssl.SSLContext)
    assert type(protocol) is _Connection and protocol._limit == 1234


async def test_timeouts_and_lost_connections_name_the_endpoint() -> None:
    async with serve(keep_answering(delay=2.0)) as (_, url):
        t = transport(url, timeout_s=0.2)
        try:
            with pytest.raises(RequestTimeout) as info:
                await t.post(b"{}", None)
        finally:
            await t.aclose()
    assert info.value.endpoint == "t"
    async with serve(once(b"")) as (_, url):
        error = await failed_post(url, TransportError)
    assert error.endpoint == "t" and "(ServerDisconnected: connection closed" in str(error)


async def test_an_idle_connection_outlives_the_deadline_of_the_request_it_carried() -> None:
    async with serve(keep_answering()) as (srv, url):
        t = transport(url, timeout_s=0.2)
        try:
            assert (await t.post(b"{}", None))[0] == 200
            await asyncio.sleep(0.35)  # past the first request's deadline
            assert (await t.post(b"{}", None))[0] == 200
        finally:
            await t.aclose()
    assert srv.connections == 1  # the same connection, not expired while idle
