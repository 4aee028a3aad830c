"""ModelClient against small loopback servers we control: encoding, retries, errors, limits."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import msgspec
import pytest
from aiohttp import web

from sweepbench.config import ConfigError, Endpoint
from sweepbench.runner import client as client_mod
from sweepbench.runner.client import (
    AuthenticationError,
    BadRequestError,
    CallResult,
    ContextLengthError,
    FatalError,
    InvalidResponseError,
    ModelClient,
    ModelError,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    RequestTimeout,
    RetryableError,
    ServerError,
    TransportError,
)
from sweepbench.wire import ChatRequest, ToolSpec, UserMessage

OK_BODY = {
    "id": "chatcmpl-abc",
    "object": "chat.completion",
    "created": 1,
    "model": "served-model",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "hello", "tool_calls": []},
            "finish_reason": "stop",
        }
    ],
    "usage": {
        "prompt_tokens": 11,
        "completion_tokens": 3,
        "total_tokens": 14,
        "prompt_tokens_details": {"cached_tokens": 8},
    },
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def ok() -> web.Response:
    return web.json_response(OK_BODY)


def status(code: int, message: str = "nope", headers: dict[str, str] | None = None,
           code_str: str | None = None) -> web.Response:
    body = {"error": {"message": message, "type": "error", "code": code_str}}
    return web.json_response(body, status=code, headers=headers)


class Script:
    """A handler that answers request i with ``replies[i]`` (the last one repeats) and records
    what it saw: bodies, headers, in-flight maximum, peers."""

    def __init__(self, *replies: Callable[[], web.StreamResponse] | float, delay: float = 0.0):
        self.replies = replies or (ok,)
        self.delay = delay
        self.bodies: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.peers: set[object] = set()
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def count(self) -> int:
        return len(self.bodies)

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        i = len(self.bodies)
        self.bodies.append(msgspec.json.decode(await request.read()))
        self.headers.append(dict(request.headers))
        self.paths.append(request.path)
        self.peers.add(request.transport.get_extra_info("peername") if request.transport else None)
        reply = self.replies[min(i, len(self.replies) - 1)]
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if isinstance(reply, (int, float)):  # a number means: hang this long, then answer
                await asyncio.sleep(reply)
                return ok()
            return reply()
        finally:
            self.in_flight -= 1


@asynccontextmanager
async def serve(handler: Handler) -> AsyncIterator[str]:
    async def handle(request: web.Request) -> web.StreamResponse:
        return await handler(request)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def raw_serve(*scripts: bytes | None) -> AsyncIterator[str]:
    """A bare TCP server: connection i reads one request then writes ``scripts[i]`` verbatim
    and closes (None: close without a byte). The last script repeats."""
    served = 0

    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        script = scripts[min(served, len(scripts) - 1)]
        served += 1
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        await reader.readexactly(length)
        if script:
            writer.write(script)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(on_conn, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()
        await server.wait_closed()


def http_bytes(body: bytes, *, content_length: int | None = None) -> bytes:
    n = len(body) if content_length is None else content_length
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {n}\r\nConnection: close\r\n\r\n".encode()
        + body
    )


def endpoint(base_url: str, **kw) -> Endpoint:
    kw.setdefault("name", "test-model")
    kw.setdefault("max_retries", 3)
    kw.setdefault("timeout_s", 5.0)
    kw.setdefault("connect_timeout_s", 1.0)
    return Endpoint(base_url=base_url, **kw)


def make_client(ep: Endpoint, **kw) -> ModelClient:
    kw.setdefault("backoff_base_s", 0.001)
    kw.setdefault("backoff_max_s", 0.01)
    return ModelClient(ep, **kw)


def request(**kw) -> ChatRequest:
    kw.setdefault("model", "whatever")
    kw.setdefault("messages", [UserMessage("hi")])
    return ChatRequest(**kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- success path and encoding -------------------------------------------------------------


async def test_success_result_and_body() -> None:
    script = Script()
    async with serve(script) as url:
        ep = endpoint(url, name="nick", model="real-model", temperature=0.3, max_tokens=50,
                      extra_body={"top_p": 0.9, "reasoning_effort": "low"})
        async with make_client(ep) as client:
            result = await client.complete(
                request(sweepbench={"episode": "e1"}, seed=7,
                        tools=[ToolSpec(function={"name": "f", "parameters": {}})])
            )
    assert isinstance(result, CallResult)
    assert result.message.content == "hello"
    assert result.message.tool_calls is None  # "tool_calls": [] normalised away
    assert (result.usage.prompt_tokens, result.usage.completion_tokens,
            result.usage.cached_prompt_tokens) == (11, 3, 8)
    assert result.attempts == 1 and result.retries == 0 and result.statuses == [200]
    assert result.response_id == "chatcmpl-abc" and result.model == "served-model"
    assert result.finish_reason == "stop"
    assert result.latency_s >= result.attempt_latency_s > 0

    body = script.bodies[0]
    assert body["model"] == "real-model"
    assert "sweepbench" not in body  # real endpoints never see it
    assert body["temperature"] == 0.3 and body["max_tokens"] == 50 and body["seed"] == 7
    assert body["top_p"] == 0.9 and body["reasoning_effort"] == "low"
    assert body["tools"][0]["function"]["name"] == "f"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert "Authorization" not in script.headers[0]
    assert script.headers[0]["Content-Type"] == "application/json"


async def test_request_values_beat_endpoint_defaults_and_extra_body_beats_both() -> None:
    script = Script()
    async with serve(script) as url:
        ep = endpoint(url, temperature=0.3, max_tokens=50, extra_body={"max_tokens": 9})
        async with make_client(ep) as client:
            await client.complete(request(temperature=1.0, max_tokens=20))
    body = script.bodies[0]
    assert body["temperature"] == 1.0
    assert body["max_tokens"] == 9
    assert list(body).count("max_tokens") == 1


async def test_scripted_endpoint_keeps_sweepbench_field_and_needs_base_url() -> None:
    ep = Endpoint(name="scripted/oracle")
    with pytest.raises(ConfigError, match="reference server"):
        ModelClient(ep)
    script = Script()
    async with serve(script) as url:
        async with make_client(ep, base_url=url) as client:
            await client.complete(request(sweepbench={"task": "t1", "trial": 2}))
    assert script.bodies[0]["sweepbench"] == {"task": "t1", "trial": 2}
    assert script.bodies[0]["model"] == "scripted/oracle"


@pytest.mark.parametrize("key", ["model", "messages", "stream", "sweepbench"])
def test_extra_body_may_not_override_reserved_fields(key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        ModelClient(endpoint("http://127.0.0.1:1/v1", extra_body={key: 1}))


@pytest.mark.parametrize("suffix", ["", "/"])
async def test_base_url_with_or_without_trailing_slash(suffix: str) -> None:
    script = Script()
    async with serve(script) as url:
        async with make_client(endpoint(url + suffix)) as client:
            await client.complete(request())
    assert script.paths == ["/v1/chat/completions"]


async def test_session_is_pooled_across_calls() -> None:
    script = Script()
    async with serve(script) as url:
        async with make_client(endpoint(url)) as client:
            for _ in range(5):
                await client.complete(request())
    assert script.count == 5
    assert len(script.peers) == 1  # one kept-alive connection, not one per call


async def test_closed_client_refuses_calls() -> None:
    client = make_client(endpoint("http://127.0.0.1:1/v1"))
    await client.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await client.complete(request())


# ---- retries ------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [429, 503])
async def test_retry_after_is_honoured(code: int) -> None:
    script = Script(lambda: status(code, headers={"Retry-After": "0.3"}), ok)
    seen: list[tuple[type, float]] = []
    async with serve(script) as url:
        async with make_client(endpoint(url), on_retry=lambda e, w: seen.append((type(e), w))) \
                as client:
            t0 = time.perf_counter()
            result = await client.complete(request())
            elapsed = time.perf_counter() - t0
    assert result.attempts == 2 and result.statuses == [code, 200]
    assert elapsed >= 0.3  # the back-off alone would be ~1 ms
    assert elapsed < 1.5
    assert seen[0][0] is (RateLimitError if code == 429 else ServerError)
    assert seen[0][1] >= 0.3


async def test_retry_after_is_capped() -> None:
    script = Script(lambda: status(429, headers={"Retry-After": "3600"}), ok)
    async with serve(script) as url:
        async with make_client(endpoint(url), retry_after_max_s=0.05) as client:
            t0 = time.perf_counter()
            result = await client.complete(request())
    assert result.attempts == 2
    assert time.perf_counter() - t0 < 1.0


async def test_500_twice_then_success() -> None:
    script = Script(lambda: status(500), lambda: status(502), ok)
    async with serve(script) as url:
        async with make_client(endpoint(url)) as client:
            result = await client.complete(request())
    assert result.attempts == 3 and result.retries == 2
    assert result.statuses == [500, 502, 200]
    assert script.count == 3


async def test_408_is_retried() -> None:
    script = Script(lambda: status(408), ok)
    async with serve(script) as url:
        async with make_client(endpoint(url)) as client:
            assert (await client.complete(request())).statuses == [408, 200]


async def test_retries_exhausted_raise_last_retryable_error() -> None:
    script = Script(lambda: status(500, "boom"))
    async with serve(script) as url:
        async with make_client(endpoint(url, max_retries=2)) as client:
            with pytest.raises(ServerError) as info:
                await client.complete(request())
    assert script.count == 3
    assert info.value.attempts == 3 and info.value.status == 500
    assert "boom" in str(info.value) and "test-model" in str(info.value)


@pytest.mark.parametrize(
    ("code", "error", "code_str", "message"),
    [
        (400, BadRequestError, None, "bad field"),
        (400, ContextLengthError, "context_length_exceeded", "too long"),
        (400, ContextLengthError, None, "This model's maximum context length is 8192 tokens"),
        (401, AuthenticationError, None, "bad key"),
        (403, AuthenticationError, None, "forbidden"),
        (404, NotFoundError, None, "no such model"),
        (422, FatalError, None, "unprocessable"),
        (429, QuotaExceededError, "insufficient_quota", "You exceeded your current quota"),
    ],
)
async def test_fatal_errors_are_not_retried(code, error, code_str, message) -> None:
    script = Script(lambda: status(code, message, code_str=code_str))
    async with serve(script) as url:
        async with make_client(endpoint(url)) as client:
            with pytest.raises(FatalError) as info:
                await client.complete(request())
    assert type(info.value) is error
    assert not isinstance(info.value, RetryableError)
    assert script.count == 1 and info.value.attempts == 1 and info.value.status == code
    assert message in str(info.value)


async def test_connection_refused_is_retried_then_raised() -> None:
    retries: list[RetryableError] = []
    ep = endpoint(f"http://127.0.0.1:{free_port()}/v1", max_retries=2)
    async with make_client(ep, on_retry=lambda e, w: retries.append(e)) as client:
        with pytest.raises(TransportError) as info:
            await client.complete(request())
    assert info.value.attempts == 3
    assert len(retries) == 2
    assert isinstance(info.value.__cause__, Exception)  # translated with `raise ... from`
    assert info.value.status is None


@pytest.mark.parametrize(
    "bad",
    [
        lambda: web.Response(body=b"<html>gateway hiccup</html>", content_type="text/html"),
        lambda: web.Response(body=b'{"choices": [{"mess', content_type="application/json"),
        lambda: web.json_response({"unexpected": True}),
        lambda: web.json_response({"choices": []}),
    ],
    ids=["not-json", "truncated-json", "wrong-shape", "no-choices"],
)
async def test_invalid_body_is_retried(bad) -> None:
    script = Script(bad, ok)
    async with serve(script) as url:
        async with make_client(endpoint(url)) as client:
            result = await client.complete(request())
    assert result.attempts == 2 and result.statuses == [200, 200]


async def test_invalid_body_exhausted_raises_invalid_response() -> None:
    script = Script(lambda: web.Response(body=b"garbage"))
    async with serve(script) as url:
        async with make_client(endpoint(url, max_retries=1)) as client:
            with pytest.raises(InvalidResponseError):
                await client.complete(request())
    assert script.count == 2


async def test_body_cut_short_of_content_length_is_retried() -> None:
    good = msgspec.json.encode(OK_BODY)
    async with raw_serve(http_bytes(good[:20], content_length=len(good)), http_bytes(good)) \
            as url:
        async with make_client(endpoint(url)) as client:
            result = await client.complete(request())
    assert result.attempts == 2 and result.message.content == "hello"


async def test_connection_closed_without_response_is_retried() -> None:
    good = msgspec.json.encode(OK_BODY)
    async with raw_serve(None, http_bytes(good)) as url:
        async with make_client(endpoint(url)) as client:
            result = await client.complete(request())
    assert result.attempts == 2 and result.statuses == [0, 200]


async def test_timeout_is_retried() -> None:
    script = Script(5.0, ok)  # the first request hangs far past the timeout
    async with serve(script) as url:
        async with make_client(endpoint(url, timeout_s=0.2)) as client:
            t0 = time.perf_counter()
            result = await client.complete(request())
    assert result.attempts == 2 and result.statuses == [0, 200]
    assert time.perf_counter() - t0 < 2.0


async def test_timeouts_exhausted_raise_request_timeout() -> None:
    script = Script(5.0)
    async with serve(script) as url:
        async with make_client(endpoint(url, timeout_s=0.15, max_retries=1)) as client:
            with pytest.raises(RequestTimeout) as info:
                await client.complete(request())
    assert info.value.attempts == 2
    assert isinstance(info.value, TransportError) and isinstance(info.value, RetryableError)


async def test_cancellation_propagates() -> None:
    script = Script(5.0)
    async with serve(script) as url:
        async with make_client(endpoint(url)) as client:
            task = asyncio.create_task(client.complete(request()))
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task


# ---- limits -------------------------------------------------------------------------------


async def test_concurrency_cap_is_honoured() -> None:
    script = Script(delay=0.05)
    async with serve(script) as url:
        async with make_client(endpoint(url, max_concurrency=3)) as client:
            results = await asyncio.gather(*(client.complete(request()) for _ in range(12)))
    assert len(results) == 12 and script.count == 12
    assert script.max_in_flight == 3


async def test_back_off_waits_do_not_hold_a_concurrency_slot() -> None:
    # One call sits in a long Retry-After wait; the other must not queue behind it.
    script = Script(lambda: status(429, headers={"Retry-After": "0.5"}), ok)
    async with serve(script) as url:
        async with make_client(endpoint(url, max_concurrency=1)) as client:
            slow = asyncio.create_task(client.complete(request()))
            await asyncio.sleep(0.1)
            t0 = time.perf_counter()
            await client.complete(request())
            assert time.perf_counter() - t0 < 0.3
            assert (await slow).attempts == 2


# ---- secrets ------------------------------------------------------------------------------

CANARY = "sk-canary-7f3a9c1e5b2d4f6a8c0e"


def _all_text(err: BaseException) -> str:
    return "".join(traceback.format_exception(err)) + repr(err) + str(vars(err))


async def test_api_key_never_leaks(monkeypatch, caplog) -> None:
    monkeypatch.setenv("SWEEPBENCH_TEST_KEY", CANARY)
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []

    def echo_key_401() -> web.Response:  # the worst server: echoes the key in its error
        return status(401, f"Incorrect API key provided: {CANARY}")

    for script, kw in [
        (Script(echo_key_401), {}),
        (Script(lambda: status(500, f"upstream said {CANARY}")), {"max_retries": 1}),
        (Script(lambda: web.Response(body=CANARY.encode())), {"max_retries": 1}),
        (Script(5.0), {"timeout_s": 0.1, "max_retries": 1}),
    ]:
        async with serve(script) as url:
            ep = endpoint(url, api_key_env="SWEEPBENCH_TEST_KEY", **kw)
            async with make_client(ep) as client:
                with pytest.raises(ModelError) as info:
                    await client.complete(request())
                texts.append(_all_text(info.value) + repr(vars(client)))
        assert script.headers[0]["Authorization"] == f"Bearer {CANARY}"  # the key was sent

    refused = endpoint(f"http://127.0.0.1:{free_port()}/v1", api_key_env="SWEEPBENCH_TEST_KEY",
                       max_retries=1)
    async with make_client(refused) as client:
        with pytest.raises(TransportError) as info:
            await client.complete(request())
        texts.append(_all_text(info.value))

    script = Script()
    async with serve(script) as url:
        async with make_client(endpoint(url, api_key_env="SWEEPBENCH_TEST_KEY")) as client:
            result = await client.complete(request())
    texts.append(repr(result) + msgspec.json.encode(result).decode())

    assert "Incorrect API key provided: [redacted]" in texts[0]
    assert caplog.records, "retries should have been logged at DEBUG"
    texts.append(caplog.text)
    for text in texts:
        assert CANARY not in text


async def test_missing_key_env_is_fatal_without_a_request(monkeypatch) -> None:
    monkeypatch.delenv("SWEEPBENCH_UNSET_KEY", raising=False)
    script = Script()
    async with serve(script) as url:
        async with make_client(endpoint(url, api_key_env="SWEEPBENCH_UNSET_KEY")) as client:
            with pytest.raises(AuthenticationError, match="SWEEPBENCH_UNSET_KEY"):
                await client.complete(request())
    assert script.count == 0


# ---- helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("2", 2.0), ("0.5", 0.5), ("-3", 0.0), ("soon", None), ("", None), ("nan", None)],
)
def test_retry_after_parsing(value: str, expected: float | None) -> None:
    assert client_mod._retry_after({"Retry-After": value}) == expected


def test_retry_after_http_date() -> None:
    when = datetime.now(timezone.utc) + timedelta(seconds=30)
    seconds = client_mod._retry_after({"Retry-After": format_datetime(when, usegmt=True)})
    assert seconds is not None and 25 <= seconds <= 31
