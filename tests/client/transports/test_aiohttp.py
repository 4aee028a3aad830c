"""The HTTP transports under ModelClient, over loopback (the socket is the point): the
aiohttp transport and the default one, parametrized alike (the default one's own edges are in
test_http.py)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import msgspec
import pytest

from sweepbench.errors import ConnectionRefused, RequestTimeout, RetryableError, TransportError
from sweepbench.client.facade import ModelClient

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
    async with raw_serve(http_bytes(GOOD[:20], content_length=len(GOOD)), http_bytes(GOOD)) \
            as url:
        async with real_client(url, transport=transport) as client:
            result = await client.complete(request())
    assert result.attempts == 2 and result.message.content == "hello"
    assert result.failures[0].error == "InvalidResponseError"


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_connection_closed_without_response_is_retried(transport) -> None:
    async with raw_serve(None, http_bytes(GOOD)) as url:
        async with real_client(url, transport=transport) as client:
            result = await client.complete(request())
    assert result.attempts == 2 and result.statuses == [0, 200]
    assert result.failures[0].error == "TransportError" and url in result.failures[0].message


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_timeout_names_the_url(transport) -> None:
    async with raw_serve(None, hang_s=5.0) as url:
        async with real_client(url, transport=transport, timeout_s=0.2, max_retries=1) as client:
            with pytest.raises(RequestTimeout) as info:
                await client.complete(request())
    assert info.value.attempts == 2 and url in str(info.value)
    assert isinstance(info.value, TransportError) and isinstance(info.value, RetryableError)
