"""The openai-SDK transport behind ModelClient: round trip, error mapping, no key leaks."""

from __future__ import annotations

import socket
import traceback

import msgspec
import pytest
from aiohttp import web

pytest.importorskip("openai")

from sweepbench.config import Endpoint
from sweepbench.errors import (
    AuthenticationError,
    BadRequestError,
    ConnectionRefused,
    ContextLengthError,
    ModelError,
    NotFoundError,
    RateLimitError,
    RequestTimeout,
    ServerError,
)
from sweepbench.client.facade import ModelClient
from sweepbench.client.transports.openai import OpenAITransport, sdk_backend
from sweepbench.wire import ChatRequest, ToolSpec, UserMessage

from ...support import serve as serve_handler

CANARY = "sk-canary-openai-0d9e8f7a6b5c"
OK_BODY = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "served",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "hello from sdk"}}],
    "usage": {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24,
              "prompt_tokens_details": {"cached_tokens": 16}},
}


class Server:
    def __init__(self, *replies) -> None:
        self.replies = replies
        self.bodies: list[dict] = []
        self.headers: list[dict] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.bodies.append(msgspec.json.decode(await request.read()))
        self.headers.append(dict(request.headers))
        reply = self.replies[min(len(self.bodies) - 1, len(self.replies) - 1)]
        if isinstance(reply, float):
            import asyncio

            await asyncio.sleep(reply)
            return web.json_response(OK_BODY)
        return reply()


def ok() -> web.Response:
    return web.json_response(OK_BODY)


def err(code: int, message: str = "nope", code_str: str | None = None,
        headers: dict | None = None):
    return lambda: web.json_response(
        {"error": {"message": message, "type": "error", "code": code_str}},
        status=code, headers=headers)


def serve(server: Server):
    return serve_handler(server.handle)


class OpenAIEndpoint(Endpoint, kw_only=True):
    """Until config.Endpoint has the field (proposed to the lead)."""

    transport: str = "openai"


def endpoint(url: str, **kw) -> Endpoint:
    kw.setdefault("name", "sdk-model")
    kw.setdefault("max_retries", 2)
    kw.setdefault("timeout_s", 5.0)
    return OpenAIEndpoint(base_url=url, **kw)


def client_for(ep: Endpoint) -> ModelClient:
    return ModelClient(ep, backoff_base_s=0.001, backoff_max_s=0.01)


def req(**kw) -> ChatRequest:
    kw.setdefault("model", "x")
    kw.setdefault("messages", [UserMessage("hi")])
    return ChatRequest(**kw)


def test_backend_is_aiohttp_when_available() -> None:
    assert sdk_backend() in ("aiohttp", "httpx")


async def test_round_trip_through_the_sdk(monkeypatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_SDK_KEY", CANARY)
    server = Server(ok)
    async with serve(server) as url:
        ep = endpoint(url, model="real", temperature=0.2, api_key_env="SWEEPBENCH_SDK_KEY",
                      extra_body={"top_p": 0.5})
        async with client_for(ep) as client:
            assert isinstance(client._transport, OpenAITransport)
            result = await client.complete(req(
                seed=3, tools=[ToolSpec(function={"name": "f", "parameters": {}})],
                sweepbench={"x": 1}))
            sent = msgspec.json.decode(client.encode(req(
                seed=3, tools=[ToolSpec(function={"name": "f", "parameters": {}})])))
    assert result.message.content == "hello from sdk"
    assert (result.usage.prompt_tokens, result.usage.cached_prompt_tokens) == (20, 16)
    assert result.attempts == 1 and result.statuses == [200]
    assert server.bodies[0] == sent  # every field we encode arrives, nothing else
    assert server.headers[0]["Authorization"] == f"Bearer {CANARY}"


async def test_no_key_sends_no_authorization() -> None:
    server = Server(ok)
    async with serve(server) as url, client_for(endpoint(url)) as client:
        await client.complete(req())
    assert "Authorization" not in server.headers[0]


@pytest.mark.parametrize(
    ("reply", "error", "requests"),
    [
        (err(400, "bad"), BadRequestError, 1),
        (err(400, "maximum context length exceeded"), ContextLengthError, 1),
        (err(401), AuthenticationError, 1),
        (err(404), NotFoundError, 1),
        (err(429, "slow", headers={"Retry-After": "0"}), RateLimitError, 3),
        (err(503), ServerError, 3),
    ],
)
async def test_http_errors_map_into_our_tree(reply, error, requests) -> None:
    server = Server(reply)
    async with serve(server) as url, client_for(endpoint(url)) as client:
        with pytest.raises(ModelError) as info:
            await client.complete(req())
    assert type(info.value) is error and len(server.bodies) == requests


async def test_retry_then_success() -> None:
    server = Server(err(500), err(429), ok)
    async with serve(server) as url, client_for(endpoint(url)) as client:
        result = await client.complete(req())
    assert result.statuses == [500, 429, 200] and result.rate_limited == 1


async def test_connection_refused_and_timeout() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    async with client_for(endpoint(f"http://127.0.0.1:{port}/v1", max_retries=1)) as client:
        with pytest.raises(ConnectionRefused) as info:  # nothing there: not retried
            await client.complete(req())
    assert info.value.attempts == 1 and info.value.__cause__ is not None
    assert f"connection refused by http://127.0.0.1:{port}/v1" in str(info.value)

    server = Server(5.0)
    async with serve(server) as url:
        async with client_for(endpoint(url, timeout_s=0.2, max_retries=0)) as client:
            with pytest.raises(RequestTimeout):
                await client.complete(req())


async def test_key_never_in_errors(monkeypatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_SDK_KEY", CANARY)
    server = Server(err(401, f"Incorrect API key provided: {CANARY}"))
    async with serve(server) as url:
        async with client_for(endpoint(url, api_key_env="SWEEPBENCH_SDK_KEY")) as client:
            with pytest.raises(AuthenticationError) as info:
                await client.complete(req())
            text = ("".join(traceback.format_exception(info.value)) + repr(info.value)
                    + str(vars(info.value)) + repr(vars(client)) + repr(vars(client._transport)))
    assert "[redacted]" in text and CANARY not in text
