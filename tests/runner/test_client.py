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

from sweepbench.config import Endpoint
from sweepbench.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ContextLengthError,
    EndpointUnavailableError,
    FatalError,
    InvalidResponseError,
    ModelError,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    RequestTimeout,
    RetryableError,
    ServerError,
    TransportError,
)
from sweepbench.runner import client as client_mod
from sweepbench.runner.client import CallResult, ModelClient, limits_key
from sweepbench.runner.limits import EndpointLimits, LimitsPool
from sweepbench.runner.response_cache import ResponseCache
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
    assert result.rate_limited == 0 and not result.from_cache and result.limit_wait_s >= 0
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
    # One call sits in a long back-off wait; the other must not queue behind it.
    script = Script(lambda: status(500), ok)
    async with serve(script) as url:
        async with make_client(endpoint(url, max_concurrency=1)) as client:
            client._backoff = lambda state: 0.5
            slow = asyncio.create_task(client.complete(request()))
            await asyncio.sleep(0.1)
            t0 = time.perf_counter()
            await client.complete(request())
            assert time.perf_counter() - t0 < 0.3
            assert (await slow).attempts == 2


class Stamped(Script):
    """A Script that also records when each request arrived."""

    def __init__(self, *replies, **kw) -> None:
        super().__init__(*replies, **kw)
        self.times: list[float] = []

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        self.times.append(time.perf_counter())
        return await super().__call__(request)


async def test_retry_after_pauses_the_whole_endpoint() -> None:
    script = Stamped(lambda: status(429, headers={"Retry-After": "0.4"}), ok)
    async with serve(script) as url:
        async with make_client(endpoint(url)) as client:
            first = asyncio.create_task(client.complete(request()))
            while script.count < 1:
                await asyncio.sleep(0.005)
            await asyncio.sleep(0.05)
            others = await asyncio.gather(*(client.complete(request()) for _ in range(3)))
            result = await first
    assert result.rate_limited == 1 and result.statuses == [429, 200]
    assert all(r.attempts == 1 and r.limit_wait_s >= 0.3 for r in others)
    assert min(script.times[1:]) - script.times[0] >= 0.38  # nobody sent during the pause
    assert client.limits.pauses == 1


async def test_429_shrinks_adaptive_concurrency() -> None:
    script = Script(lambda: status(429), ok)
    async with serve(script) as url:
        async with make_client(endpoint(url, max_concurrency=10)) as client:
            await client.complete(request())
            assert client.limits.concurrency.limit == pytest.approx(7.0 + 1 / 7.0)


async def test_breaker_waiters_do_not_burn_retries() -> None:
    # The endpoint is down for a while. The breaker opens after two failures; callers arriving
    # while it is open wait instead of sending, and then succeed on their first attempt even
    # with no retry budget at all.
    down_until = time.perf_counter() + 0.5

    def reply() -> web.Response:
        return status(503) if time.perf_counter() < down_until else ok()

    script = Script(*([reply] * 1000))
    async with serve(script) as url:
        limits = EndpointLimits(max_concurrency=8, breaker_threshold=2,
                                breaker_cooldown_s=0.2)
        async with make_client(endpoint(url, max_retries=0), limits=limits) as client:
            for _ in range(2):
                with pytest.raises(ServerError):
                    await client.complete(request())
            assert limits.breaker.state == "open"
            results = await asyncio.gather(*(client.complete(request()) for _ in range(6)))
    assert limits.breaker.state == "closed"
    assert limits.breaker.opened >= 2  # at least one failed probe, re-opened, then closed
    # the probes aside, nobody was sent while it was open: a handful of requests, not dozens
    assert script.count <= 2 + limits.breaker.opened + 6
    # a failed probe is a request made, but not a retry spent: it sits in `attempts`
    assert sum(r.attempts for r in results) <= 6 + limits.breaker.opened
    assert all(r.message.content == "hello" for r in results)


async def test_breaker_gives_up_after_max_wait() -> None:
    script = Script(lambda: status(500))
    async with serve(script) as url:
        limits = EndpointLimits(breaker_threshold=1, breaker_cooldown_s=30.0,
                                breaker_max_wait_s=0.1)
        async with make_client(endpoint(url, max_retries=5), limits=limits) as client:
            with pytest.raises(EndpointUnavailableError) as info:
                await client.complete(request())
    assert script.count == 1  # failed once, then waited on the breaker, never sent again
    assert not isinstance(info.value, RetryableError) and info.value.attempts == 1


async def test_clients_sharing_limits_share_the_in_flight_cap() -> None:
    script = Script(delay=0.05)
    async with serve(script) as url:
        pool = LimitsPool()
        ep1 = endpoint(url, name="agent", max_concurrency=2)
        ep2 = endpoint(url, name="user", max_concurrency=2)
        assert limits_key(ep1) != limits_key(ep2)  # different model names
        shared = pool.get("acct", ep1)
        async with make_client(ep1, limits=shared) as c1, \
                make_client(ep2, limits=shared) as c2:
            await asyncio.gather(*(c.complete(request()) for c in (c1, c2) for _ in range(4)))
    assert script.max_in_flight == 2


async def test_rpm_bucket_spaces_requests() -> None:
    script = Stamped()
    async with serve(script) as url:
        limits = EndpointLimits(rpm=1200, headroom=1.0, burst_s=0.05)  # 20/s, burst 1
        async with make_client(endpoint(url), limits=limits) as client:
            t0 = time.perf_counter()
            await asyncio.gather(*(client.complete(request()) for _ in range(6)))
            elapsed = time.perf_counter() - t0
    assert elapsed >= 0.22  # five waits of 50 ms after the first
    gaps = [b - a for a, b in zip(script.times, script.times[1:])]
    assert min(gaps) > 0.03


async def test_tpm_bucket_is_corrected_from_usage() -> None:
    script = Script()  # usage: 11 prompt + 3 completion tokens
    async with serve(script) as url:
        limits = EndpointLimits(tpm=60, headroom=1.0, burst_s=1000.0)  # 1/s, burst 1000
        async with make_client(endpoint(url), limits=limits) as client:
            body = client.encode(request())
            await client.complete(request())
    assert limits.tokens is not None
    # the estimate (body/4) was replaced by the true 14 tokens
    assert limits.tokens.level == pytest.approx(1000.0 - 14, abs=0.5)
    assert limits.estimator.estimate(len(body)) == 14


# ---- body splicing, cache -----------------------------------------------------------------


async def test_conversation_sends_spliced_bodies_identical_to_encode() -> None:
    script = Script()
    async with serve(script) as url:
        ep = endpoint(url, temperature=0.1, extra_body={"top_p": 0.9})
        async with make_client(ep) as client:
            convo = client.conversation()
            tools = [ToolSpec(function={"name": "f", "parameters": {}})]
            messages: list = [UserMessage("hi")]
            for i in range(5):
                req = request(messages=messages[:], tools=tools, sweepbench={"i": i})
                result = await convo(req)
                assert script.bodies[-1] == msgspec.json.decode(client.encode(req))
                messages += [result.message, UserMessage(f"again {i}")]
    assert convo.encoder.messages_encoded == len(messages) - 2  # the last two were not sent
    assert script.bodies[-1]["messages"][-1] == {"role": "user", "content": "again 3"}


async def test_complete_accepts_encoded_bytes() -> None:
    script = Script()
    async with serve(script) as url:
        async with make_client(endpoint(url)) as client:
            await client.complete(client.encode(request(messages=[UserMessage("raw")])))
    assert script.bodies[0]["messages"] == [{"role": "user", "content": "raw"}]


async def test_response_cache_hit_is_identical_and_makes_no_call(tmp_path) -> None:
    script = Script()
    cache = ResponseCache(tmp_path / "responses.sqlite")
    async with serve(script) as url:
        async with make_client(endpoint(url), cache=cache) as client:
            first = await client.complete(request())
            again = await client.complete(request())
            other = await client.complete(request(messages=[UserMessage("different")]))
    assert script.count == 2  # the repeat never reached the server
    assert again.from_cache and not first.from_cache and not other.from_cache
    assert again.attempts == 0 and again.statuses == []
    assert again.message == first.message and again.usage == first.usage
    assert again.response_id == first.response_id and again.model == first.model
    assert len(cache) == 2

    # persisted: a new client (a re-run) is answered from disk; another endpoint is not
    cache2 = ResponseCache(tmp_path / "responses.sqlite")
    async with serve(Script()) as url2:
        async with make_client(endpoint(url), cache=cache2) as client:
            assert (await client.complete(request())).from_cache
        async with make_client(endpoint(url2), cache=cache2) as client:
            assert not (await client.complete(request())).from_cache
    cache.close()
    cache2.close()


async def test_failed_calls_are_not_cached(tmp_path) -> None:
    script = Script(lambda: status(400, "bad"), ok)
    cache = ResponseCache(tmp_path / "c.sqlite")
    async with serve(script) as url:
        async with make_client(endpoint(url), cache=cache) as client:
            with pytest.raises(BadRequestError):
                await client.complete(request())
            assert not (await client.complete(request())).from_cache
    assert len(cache) == 1
    cache.close()


async def test_unknown_transport_is_a_config_error() -> None:
    class WithTransport(Endpoint, kw_only=True):
        transport: str = "grpc"

    ep = WithTransport(name="m", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ConfigError, match="transport"):
        ModelClient(ep)


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
