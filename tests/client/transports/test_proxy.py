"""client/transports/proxy.py's CONNECT tunnel at its edges: the exact request a proxy is
sent, how its answer's status line is read, the 64 KiB head limit, and TLS to the target's
name on top. The proxy is a scripted double on 127.0.0.2 (not the usual 127.0.0.1: the
tunnel must dial the proxy's own host); transports through a real forwarding proxy are in
test_proxies.py."""

from __future__ import annotations

import asyncio
import base64
import ssl
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest

from sweepbench.client.transports.proxy import (
    Proxy,
    TunnelRefused,
    _ConnectReply,
    open_tunnel,
)

HOST = "127.0.0.2"  # any 127/8 address is loopback on Linux
NAME = "model.invalid"
OK = b"HTTP/1.1 200 Connection established\r\n\r\n"


@pytest.fixture(scope="module")
def cert(tmp_path_factory) -> tuple[str, str]:
    """A self-signed certificate for NAME and its key (paths)."""
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", f"/CN={NAME}", "-addext",
                    f"subjectAltName=DNS:{NAME}"], check=True, capture_output=True, timeout=30)
    return str(cert), str(key)


@dataclass
class Script:
    """What the scripted proxy saw: each CONNECT head, and whether the client hung up."""

    heads: list[bytes] = field(default_factory=list)
    hung_up: asyncio.Event = field(default_factory=asyncio.Event)
    port: int = 0


@asynccontextmanager
async def proxy_double(*replies: bytes, tls: ssl.SSLContext | None = None
                       ) -> AsyncIterator[Script]:
    """A proxy that reads a CONNECT head, writes ``replies`` (one write each) and then,
    with ``tls``, talks TLS as the target would, echoing one line; else waits for the client
    to hang up. No reply at all, or a last one of b"": it closes there."""
    script = Script()

    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            script.heads.append(await reader.readuntil(b"\r\n\r\n"))
            if not replies:
                return
            for reply in replies:
                writer.write(reply)
                await writer.drain()
            if replies[-1] == b"":  # the proxy closes here
                script.hung_up.set()
                return
            if tls is not None:
                await writer.start_tls(tls)
                writer.write(b"echo " + await reader.readline())
                await writer.drain()
            await reader.read()  # until the client hangs up
            script.hung_up.set()
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError):
            script.hung_up.set()
        finally:
            writer.close()

    server = await asyncio.start_server(on_conn, HOST, 0)
    script.port = server.sockets[0].getsockname()[1]
    try:
        yield script
    finally:
        server.close()
        await server.wait_closed()


class Above(asyncio.Protocol):
    """The protocol on top of the tunnel: the TLS transport it is given, the first data."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.data: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if not self.data.done():
            self.data.set_result(data)


def trusting(cert: tuple[str, str]) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=cert[0])


def serving(cert: tuple[str, str]) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*cert)
    return context


async def refused_with(*replies: bytes, host: str = NAME, proxy: Proxy | None = None
                       ) -> tuple[TunnelRefused, Script]:
    async with proxy_double(*replies) as script:
        with pytest.raises(TunnelRefused) as info:
            await open_tunnel(proxy or Proxy(HOST, script.port), host, 443,
                              ssl.create_default_context(), Above())
        await asyncio.wait_for(script.hung_up.wait(), 5)  # the raw connection was dropped
    return info.value, script


# ---- the CONNECT request --------------------------------------------------------------------


async def test_the_connect_request_names_the_target_and_carries_no_credentials_without_them():
    err, script = await refused_with(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")
    assert script.heads == [b"CONNECT model.invalid:443 HTTP/1.1\r\nHost: model.invalid:443\r\n\r\n"]
    assert err.status == 407 and str(err) == "HTTP 407"


async def test_credentials_go_as_proxy_authorization_and_an_ipv6_target_in_brackets():
    async with proxy_double(b"HTTP/1.1 403 Forbidden\r\n\r\n") as script:
        with pytest.raises(TunnelRefused):
            await open_tunnel(Proxy(HOST, script.port, "agent", "pa:ss"), "::1", 8443,
                              ssl.create_default_context(), Above())
    auth = base64.b64encode(b"agent:pa:ss").decode()
    assert script.heads == [(f"CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n"
                             f"Proxy-Authorization: Basic {auth}\r\n\r\n").encode()]


# ---- the proxy's answer ---------------------------------------------------------------------


@pytest.mark.parametrize(("reply", "status"), [
    (b"HTTP/1.1 300 Multiple Choices\r\n\r\n", 300),  # only a 2xx opens the tunnel
    (b"HTTP/1.0 199 Early\r\n\r\n", 199),
    (b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n", 502),
    (b"HTTP/2 200 OK\r\n\r\n", 0),  # not HTTP/1.x
    (b"XTTP/1.1 200 OK\r\n\r\n", 0),
    (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", 0),  # a second word that is no number
    (b"HTTP/1.1 abc OK\r\n\r\n", 0),
    (b"HTTP/1.1\r\n\r\n", 0),  # no status at all
    (b"HTTP/1.1  200 OK\r\n\r\n", 0),  # two spaces: the status is not the second word
])
async def test_an_answer_that_is_not_a_2xx_refuses_the_tunnel(reply, status):
    err, _ = await refused_with(reply)
    assert err.status == status
    assert str(err) == (f"HTTP {status}" if status else "not an HTTP answer")


async def test_a_proxy_closing_before_the_blank_line_is_not_an_http_answer():
    err, _ = await refused_with(b"HTTP/1.1 200 OK\r\n", b"")
    assert err.status == 0 and str(err) == "not an HTTP answer"


async def test_an_answer_in_pieces_is_read_up_to_its_blank_line():
    reply = _ConnectReply(asyncio.get_running_loop())
    reply.data_received(b"HTTP/1.1 200 OK\r\n\r")
    assert not reply.done.done()
    reply.data_received(b"\n")
    assert reply.done.result() is None and bytes(reply.head) == b"HTTP/1.1 200 OK\r\n\r\n"
    reply.connection_lost(None)  # after the answer: nothing changes
    assert reply.done.result() is None


async def test_a_head_past_64_kib_without_its_end_is_refused():
    reply = _ConnectReply(asyncio.get_running_loop())
    reply.data_received(b"x" * (1 << 16))  # 64 KiB exactly: still waiting
    assert not reply.done.done()
    reply.data_received(b"x")
    err = reply.done.exception()
    assert type(err) is TunnelRefused and err.status == 0


async def test_a_connection_lost_before_the_answer_refuses_the_tunnel():
    reply = _ConnectReply(asyncio.get_running_loop())
    reply.data_received(b"HTTP/1.1 200")
    reply.connection_lost(ConnectionResetError())
    err = reply.done.exception()
    assert type(err) is TunnelRefused and err.status == 0


# ---- TLS on top -----------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [OK, b"HTTP/1.1 200\r\n\r\n", b"HTTP/1.0 299 Fine\r\n\r\n"])
async def test_a_2xx_opens_tls_to_the_target_through_the_tunnel(cert, answer):
    above = Above()
    async with proxy_double(answer, tls=serving(cert)) as script:
        await open_tunnel(Proxy(HOST, script.port), NAME, 443, trusting(cert), above)
        assert above.transport is not None
        assert above.transport.get_extra_info("ssl_object").server_hostname == NAME
        above.transport.write(b"hi\n")
        assert await asyncio.wait_for(above.data, 5) == b"echo hi\n"
        above.transport.close()


async def test_the_targets_certificate_must_name_the_target(cert):
    above = Above()
    async with proxy_double(OK, tls=serving(cert)) as script:
        with pytest.raises(ssl.SSLCertVerificationError):  # certified as NAME, not this
            await open_tunnel(Proxy(HOST, script.port), "other.invalid", 443, trusting(cert),
                              above)
        await asyncio.wait_for(script.hung_up.wait(), 5)
    assert above.transport is None


# ---- proxy_for: NO_PROXY against a URL without a port -------------------------------------------


def test_no_proxy_names_a_host_whose_url_has_no_port(monkeypatch):
    from sweepbench.client.transports.proxy import proxy_for

    for var in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.upper(), raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://p:3128")
    monkeypatch.setenv("NO_PROXY", "h,.corp")
    assert proxy_for("http://h/v1", None, "e") is None
    assert proxy_for("http://api.corp/v1", None, "e") is None
    assert proxy_for("http://g/v1", None, "e") == Proxy("p", 3128)
