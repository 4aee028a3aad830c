"""Redirects on every transport (client/transports/base.py decides): an error naming the
endpoint and the target unless the endpoint follows them; followed, a 307/308 keeps method and
body, and the key never leaves the endpoint's origin."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import msgspec
import pytest
from aiohttp import web

from sweepbench.client.facade import ModelClient
from sweepbench.client.transports.base import MAX_REDIRECTS
from sweepbench.config import Endpoint
from sweepbench.errors import FatalError
from sweepbench.wire import ChatRequest, UserMessage

from ..rig import OK_BODY

TRANSPORTS = ["http", "aiohttp", "openai"]
KEY = "sk-canary-9f8e7d6c5b4a3210"


class Site:
    """A server answering each path by its script: (status, Location) for a redirect, else
    the chat reply; records (method, path, body, Authorization) of every request."""

    def __init__(self) -> None:
        self.script: dict[str, tuple[int, str]] = {}
        self.seen: list[tuple[str, str, bytes, str | None]] = []
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append((request.method, request.path, await request.read(),
                          request.headers.get("Authorization")))
        if request.path in self.script:
            status, location = self.script[request.path]
            return web.Response(status=status, headers={"Location": location})
        return web.json_response(OK_BODY)


@asynccontextmanager
async def site() -> AsyncIterator[Site]:
    s = Site()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", s.handle)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    server = web.TCPSite(runner, "127.0.0.1", 0)
    await server.start()
    s.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        yield s
    finally:
        await runner.cleanup()


def client_for(base: str, transport: str, **kw) -> ModelClient:
    ep = Endpoint(name="redir", base_url=base + "/v1", transport=transport, max_retries=2,
                  timeout_s=5.0, api_key_env="SWEEPBENCH_REDIRECT_KEY", **kw)
    return ModelClient(ep, backoff_base_s=0.001, backoff_max_s=0.01)


def req() -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage("hi")])


async def refused(transport: str, status: int, location: str, **kw) -> tuple[str, Site]:
    async with site() as origin:
        origin.script["/v1/chat/completions"] = (status, location)
        async with client_for(origin.url, transport, **kw) as client:
            with pytest.raises(FatalError) as info:
                await client.complete(req())
    assert info.value.attempts == 1  # not retried: it would be again
    return str(info.value), origin


@pytest.fixture(autouse=True)
def _key(monkeypatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_REDIRECT_KEY", KEY)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_redirect_is_an_error_naming_the_target_unless_the_endpoint_follows(
        transport, status) -> None:
    async with site() as elsewhere:
        target = elsewhere.url + "/v1/chat/completions"
        message, origin = await refused(transport, status, target)
        assert elsewhere.seen == []  # nothing went there
    assert message == (f"redir: {origin.url}/v1/chat/completions redirects ({status}) to "
                       f"{target}; not followed (set follow_redirects = true on the endpoint "
                       "to follow a 307 or 308)")
    assert [s[:2] for s in origin.seen] == [("POST", "/v1/chat/completions")]


@pytest.mark.parametrize("status", [301, 302, 303])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_redirect_that_would_turn_the_request_into_a_get_is_never_followed(
        transport, status) -> None:
    message, origin = await refused(transport, status, "/v2/chat/completions",
                                    follow_redirects=True)
    assert message == (f"redir: {origin.url}/v1/chat/completions redirects ({status}) to "
                       f"{origin.url}/v2/chat/completions; not followed (a {status} would "
                       "turn the chat request into a GET; point base_url at the target)")
    assert [s[:2] for s in origin.seen] == [("POST", "/v1/chat/completions")]


@pytest.mark.parametrize("status", [307, 308])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_followed_redirect_keeps_method_body_and_key_on_the_same_origin(
        transport, status) -> None:
    async with site() as origin:
        origin.script["/v1/chat/completions"] = (status, "/v2/chat/completions")
        async with client_for(origin.url, transport, follow_redirects=True) as client:
            sent = client.encode(req())
            result = await client.complete(req())
    assert result.message.content == "hello" and result.attempts == 1
    assert origin.seen == [("POST", "/v1/chat/completions", sent, f"Bearer {KEY}"),
                           ("POST", "/v2/chat/completions", sent, f"Bearer {KEY}")]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_followed_redirect_to_another_origin_does_not_carry_the_key(transport) -> None:
    async with site() as origin, site() as elsewhere:
        origin.script["/v1/chat/completions"] = (307, elsewhere.url + "/v9/chat/completions")
        async with client_for(origin.url, transport, follow_redirects=True) as client:
            sent = client.encode(req())
            result = await client.complete(req())
    assert result.message.content == "hello"
    assert origin.seen == [("POST", "/v1/chat/completions", sent, f"Bearer {KEY}")]
    assert elsewhere.seen == [("POST", "/v9/chat/completions", sent, None)]
    assert msgspec.json.decode(sent)["messages"] == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_redirect_loop_stops_after_the_most_redirects_in_a_row(transport) -> None:
    message, origin = await refused(transport, 307, "/v1/chat/completions",
                                    follow_redirects=True)
    assert message == (f"redir: {origin.url}/v1/chat/completions redirects (307) to "
                       f"{origin.url}/v1/chat/completions; not followed (more than "
                       f"{MAX_REDIRECTS} redirects in a row)")
    assert len(origin.seen) == MAX_REDIRECTS + 1


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_redirect_off_http_is_not_followed(transport) -> None:
    message, origin = await refused(transport, 308, "file:///etc/passwd",
                                    follow_redirects=True)
    assert message == (f"redir: {origin.url}/v1/chat/completions redirects (308) to "
                       "file:///etc/passwd; not followed (not an http:// or https:// URL)")
