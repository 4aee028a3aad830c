"""The last gate before a request leaves: once the endpoint's limits are closed (a signal), not
one byte of a request is written, even when the closing lands after every earlier check
(issue 9, point 1: no request sent after the signal)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import orjson
import pytest

from sweepbench.config import Endpoint
from sweepbench.client.facade import ModelClient
from sweepbench.client.transports.aiohttp import AiohttpTransport
from sweepbench.client.transports.http import HttpTransport
from sweepbench.wire import ChatRequest, UserMessage

REPLY = orjson.dumps({"id": "x", "choices": [{"index": 0, "message": {
    "role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})


class RawServer:
    """A bare TCP server that answers each complete HTTP request with one JSON reply and keeps
    every byte it received, so a test sees whether anything (even lone headers) was sent."""

    def __init__(self) -> None:
        self.received = bytearray()
        self.requests = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.received += head
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length)
                self.received += body
                self.requests += 1
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(REPLY), REPLY))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.received += b""  # the client went away
        finally:
            writer.close()


@asynccontextmanager
async def raw_server() -> AsyncIterator[tuple[RawServer, str]]:
    srv = RawServer()
    server = await asyncio.start_server(srv.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield srv, f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()


def request() -> ChatRequest:
    return ChatRequest(model="m", messages=[UserMessage("hi")])


@pytest.mark.parametrize("kind", [HttpTransport, AiohttpTransport])
async def test_transport_withholds_the_whole_request_once_stopping(kind) -> None:
    stop = False
    async with raw_server() as (srv, url):
        transport = kind(url + "/chat/completions", name="gated", max_connections=4,
                         timeout_s=5.0, connect_timeout_s=5.0, max_reply_bytes=1 << 20,
                         stopping=lambda: stop)
        try:
            status, _, body = await transport.post(b'{"a": 1}', None)
            assert (status, orjson.loads(body)["id"]) == (200, "x")
            sent = len(srv.received)
            assert sent > 0 and srv.requests == 1
            stop = True  # the signal: the pooled connection is still open
            with pytest.raises(asyncio.CancelledError):
                await transport.post(b'{"a": 2}', None)
            await asyncio.sleep(0.1)
            assert len(srv.received) == sent, bytes(srv.received[sent:])  # not even headers
            assert srv.requests == 1
        finally:
            await transport.aclose()


@pytest.mark.parametrize("transport", ["http", "aiohttp"])
async def test_limits_closed_after_the_permit_still_send_nothing(transport) -> None:
    """The signal lands after the client took its permit (past ``limits.permit``'s check),
    inside the send: the client's own transport asks the limits just before writing."""
    async with raw_server() as (srv, url):
        ep = Endpoint(name="gated", base_url=url, max_retries=0, timeout_s=5.0,
                      transport=transport)
        async with ModelClient(ep) as client:
            result = await client.complete(request())
            assert result.message.content == "ok"
            sent = len(srv.received)
            real_post = client._transport.post

            async def post_after_signal(body, headers):
                client.limits.closed = True  # what LimitsPool.close() does from the handler
                return await real_post(body, headers)

            client._transport.post = post_after_signal  # type: ignore[method-assign]
            with pytest.raises(asyncio.CancelledError):
                await client.complete(request())
            await asyncio.sleep(0.1)
        assert len(srv.received) == sent and srv.requests == 1


@pytest.mark.parametrize("transport", ["http", "aiohttp"])
async def test_an_open_gate_costs_nothing_in_behaviour(transport) -> None:
    async with raw_server() as (srv, url):
        ep = Endpoint(name="gated", base_url=url, max_retries=0, timeout_s=5.0,
                      transport=transport)
        async with ModelClient(ep) as client:
            for _ in range(3):
                assert (await client.complete(request())).message.content == "ok"
        assert srv.requests == 3
        assert b"Content-Type: application/json" in srv.received
