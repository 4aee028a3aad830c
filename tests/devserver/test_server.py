"""The reference server: OpenAI-compatible over loopback, scripted policies as models."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import aiohttp
import msgspec
import openai
import pytest

from sweepbench.config import Endpoint
from sweepbench.errors import (
    BadRequestError,
    ConfigError,
    NotFoundError,
    RateLimitError,
    ServerError,
    TransportError,
)
from sweepbench.client.facade import ModelClient
from sweepbench.devserver.server import Policy, ReferenceServer, estimate_tokens
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    FunctionCall,
    SystemMessage,
    ToolCall,
    ToolSpec,
    UserMessage,
)

REPO = Path(__file__).resolve().parents[2]

WEATHER_TOOL = ToolSpec(
    function={
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
)


def last_user_text(req: ChatRequest) -> str:
    for message in reversed(req.messages):
        if isinstance(message, UserMessage):
            return message.content
    raise ValueError("no user message to answer")


def echo(req: ChatRequest) -> AssistantMessage:
    return AssistantMessage(content=f"echo: {last_user_text(req)}")


def weather(req: ChatRequest) -> AssistantMessage:
    args = json.dumps({"city": last_user_text(req)})
    return AssistantMessage(
        tool_calls=[ToolCall(id="call_1", function=FunctionCall(name="get_weather",
                                                                 arguments=args))]
    )


def crash(req: ChatRequest) -> AssistantMessage:
    raise RuntimeError("policy bug")


def wrong_type(req: ChatRequest) -> AssistantMessage:
    return "not a message"  # type: ignore[return-value]


def whoami(req: ChatRequest) -> AssistantMessage:
    return AssistantMessage(content=json.dumps(req.sweepbench))


POLICIES: dict[str, Policy] = {
    "scripted/echo": echo,
    "scripted/weather": weather,
    "scripted/crash": crash,
    "scripted/wrong-type": wrong_type,
    "scripted/whoami": whoami,
}


def server(**kw) -> ReferenceServer:
    kw.setdefault("models", list(POLICIES))
    return ReferenceServer(POLICIES.get, **kw)


def client_for(srv: ReferenceServer, name: str, **kw) -> ModelClient:
    kw.setdefault("max_retries", 0)
    return ModelClient(Endpoint(name=name, **kw), base_url=srv.url, backoff_base_s=0.001,
                       backoff_max_s=0.01)


def chat(model: str, text: str = "Paris", **kw) -> ChatRequest:
    return ChatRequest(model=model, messages=[SystemMessage("be brief"), UserMessage(text)], **kw)


# ---- round trips through our client --------------------------------------------------------


async def test_client_round_trip_text_and_tool_call() -> None:
    async with server() as srv:
        async with client_for(srv, "scripted/echo") as c:
            text = await c.complete(chat("ignored", "hello there"))
        async with client_for(srv, "scripted/weather") as c:
            tool = await c.complete(chat("ignored", "Lyon", tools=[WEATHER_TOOL]))

    assert text.message == AssistantMessage(content="echo: hello there")
    assert text.finish_reason == "stop"
    assert text.model == "scripted/echo"
    assert text.usage.prompt_tokens > 0 and text.usage.completion_tokens > 0

    call = tool.message.tool_calls[0]
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Lyon"}
    assert tool.finish_reason == "tool_calls"
    assert dict(srv.requests) == {"scripted/echo": 1, "scripted/weather": 1}


async def test_scripted_identity_reaches_the_policy() -> None:
    async with server() as srv, client_for(srv, "scripted/whoami") as c:
        result = await c.complete(chat("x", sweepbench={"task": "t7", "trial": 3}))
    assert json.loads(result.message.content) == {"task": "t7", "trial": 3}


async def test_usage_and_id_are_deterministic() -> None:
    async with server() as srv, client_for(srv, "scripted/echo") as c:
        a = await c.complete(chat("x", "same"))
        b = await c.complete(chat("x", "same"))
        longer = await c.complete(chat("x", "same " * 200))
        with_tools = await c.complete(chat("x", "same", tools=[WEATHER_TOOL]))
    assert (a.usage.prompt_tokens, a.usage.completion_tokens) == (
        b.usage.prompt_tokens, b.usage.completion_tokens)
    assert a.response_id == b.response_id != ""
    # The prefix cache: the repeat is served from the first request's prompt.
    assert a.usage.cached_prompt_tokens == 0
    assert 0 < b.usage.cached_prompt_tokens <= b.usage.prompt_tokens
    assert longer.usage.prompt_tokens > a.usage.prompt_tokens + 200
    assert longer.usage.completion_tokens > a.usage.completion_tokens
    assert with_tools.usage.prompt_tokens > a.usage.prompt_tokens
    assert srv.requests["scripted/echo"] == 4


def test_estimate_tokens() -> None:
    assert estimate_tokens(0) == 1
    assert estimate_tokens(4) == 1
    assert estimate_tokens(5) == 2
    assert estimate_tokens(400) == 100


async def test_errors_map_to_client_errors(caplog) -> None:
    caplog.set_level(logging.ERROR, logger="sweepbench.devserver.server")
    async with server() as srv:
        async with client_for(srv, "scripted/nobody") as c:
            with pytest.raises(NotFoundError, match="scripted/nobody"):
                await c.complete(chat("x"))
        async with client_for(srv, "scripted/echo") as c:
            with pytest.raises(BadRequestError, match="no user message to answer"):
                await c.complete(ChatRequest(model="x", messages=[SystemMessage("s")]))
        async with client_for(srv, "scripted/crash", max_retries=1) as c:
            with pytest.raises(ServerError) as info:
                await c.complete(chat("x"))
    assert info.value.attempts == 2 and info.value.status == 500
    assert srv.requests["scripted/crash"] == 2
    assert srv.rejected == 1  # the unknown model
    assert "policy bug" in caplog.text  # the traceback is logged server-side


# ---- the OpenAI SDK sees a compatible server ----------------------------------------------


async def test_openai_sdk_parses_tool_calls_and_text() -> None:
    async with server() as srv:
        sdk = openai.AsyncOpenAI(base_url=srv.url, api_key="unused", max_retries=0)
        try:
            tool = await sdk.chat.completions.create(
                model="scripted/weather",
                messages=[{"role": "user", "content": "Oslo"}],
                tools=[msgspec.to_builtins(WEATHER_TOOL)],
            )
            text = await sdk.chat.completions.create(
                model="scripted/echo", messages=[{"role": "user", "content": "hi"}]
            )
            models = await sdk.models.list()
            with pytest.raises(openai.NotFoundError):
                await sdk.chat.completions.create(
                    model="scripted/missing", messages=[{"role": "user", "content": "hi"}]
                )
        finally:
            await sdk.close()

    choice = tool.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.index == 0
    assert choice.message.tool_calls[0].function.name == "get_weather"
    assert json.loads(choice.message.tool_calls[0].function.arguments) == {"city": "Oslo"}
    assert choice.message.tool_calls[0].id == "call_1"
    assert tool.object == "chat.completion" and tool.model == "scripted/weather"
    assert tool.usage is not None and tool.usage.total_tokens == (
        tool.usage.prompt_tokens + tool.usage.completion_tokens
    )
    assert text.choices[0].message.content == "echo: hi"
    assert text.choices[0].finish_reason == "stop"
    assert [m.id for m in models.data] == list(POLICIES)


# ---- raw HTTP: error shapes ---------------------------------------------------------------


async def _post(url: str, body: bytes) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as s:
        async with s.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
            return r.status, await r.json()


def _assert_openai_error(payload: dict) -> dict:
    err = payload["error"]
    assert set(err) == {"message", "type", "code"}
    assert isinstance(err["message"], str) and err["message"]
    return err


@pytest.mark.parametrize(
    ("body", "expected", "fragment"),
    [
        (b"{not json", 400, "invalid request body"),
        (b'{"model": "scripted/echo"}', 400, "messages"),
        (b'{"model": "scripted/echo", "messages": [{"role": "robot", "content": "x"}]}', 400,
         "invalid request body"),
        (b'{"model": "nope", "messages": []}', 404, "nope"),
        (b'{"model": "scripted/echo", "messages": [{"role": "system", "content": "s"}]}', 400,
         "no user message"),
        (b'{"model": "scripted/crash", "messages": []}', 500, "scripted/crash"),
        (b'{"model": "scripted/wrong-type", "messages": []}', 500, "str"),
    ],
    ids=["malformed", "missing-field", "bad-role", "unknown-model", "value-error", "crash",
         "wrong-return-type"],
)
async def test_error_responses_are_openai_shaped(body, expected, fragment) -> None:
    async with server() as srv:
        code, payload = await _post(srv.url + "/chat/completions", body)
    assert code == expected
    assert fragment in _assert_openai_error(payload)["message"]
    if expected == 500:
        assert "policy bug" not in payload["error"]["message"]  # no internals to the client


async def test_unrouted_paths_are_openai_shaped_404() -> None:
    async with server() as srv:
        code, payload = await _post(srv.url + "/completions", b"{}")
    assert code == 404
    _assert_openai_error(payload)


# ---- latency, lifecycle, loopback ---------------------------------------------------------


async def test_latency_is_simulated_without_blocking() -> None:
    async with server(latency_s=0.2) as srv, client_for(srv, "scripted/echo") as c:
        t0 = time.perf_counter()
        await c.complete(chat("x"))
        single = time.perf_counter() - t0
        t0 = time.perf_counter()
        await asyncio.gather(*(c.complete(chat("x", str(i))) for i in range(8)))
        eight = time.perf_counter() - t0
    assert single >= 0.2
    assert eight < 0.2 * 3  # concurrent sleeps, not serial ones


def slow_echo(req: ChatRequest) -> AssistantMessage:
    time.sleep(0.15)  # a policy that takes its time (on the loop, as policies run)
    return echo(req)


async def test_latency_includes_the_servers_own_work() -> None:
    """The answer is worked out while the latency runs: a request takes the latency drawn,
    not the latency plus the policy's time (or the whole sweep runs slower than its L)."""
    srv = ReferenceServer({"scripted/slow": slow_echo}.get, latency_s=0.25)
    async with srv, client_for(srv, "scripted/slow") as c:
        await c.complete(chat("x", "warm"))  # first-use set-up out of the figure
        t0 = time.perf_counter()
        result = await c.complete(chat("x", "timed"))
        took = time.perf_counter() - t0
    assert result.message.content == "echo: timed"
    assert 0.25 <= took < 0.25 + 0.1  # not 0.40: the policy's 0.15 s ran inside the 0.25


async def test_each_tool_list_reaches_the_policy_and_a_bad_one_is_named() -> None:
    """Tool lists are decoded once and reused: each request still gets its own list."""
    other = ToolSpec(function={"name": "get_time", "parameters": {"type": "object"}})
    seen: list[list[str]] = []

    def names(req: ChatRequest) -> AssistantMessage:
        seen.append([t.function["name"] for t in req.tools or []])
        return AssistantMessage("ok")

    srv = ReferenceServer({"scripted/names": names}.get)
    async with srv, client_for(srv, "scripted/names") as c:
        for tools in ([WEATHER_TOOL], [other], [WEATHER_TOOL, other], None, [WEATHER_TOOL]):
            await c.complete(chat("x", tools=tools))
        code, payload = await _post(srv.url + "/chat/completions", msgspec.json.encode(
            {"model": "scripted/names", "messages": [], "tools": [{"function": 3}]}))
    assert seen == [["get_weather"], ["get_time"], ["get_weather", "get_time"], [],
                    ["get_weather"]]
    assert code == 400 and "$.tools[0].function" in payload["error"]["message"]


async def test_url_and_lifecycle() -> None:
    srv = server()
    with pytest.raises(RuntimeError, match="not running"):
        _ = srv.url
    await srv.start()
    try:
        assert srv.url.startswith("http://127.0.0.1:") and srv.url.endswith("/v1")
        assert srv.port > 0 and f":{srv.port}/" in srv.url
        async with ModelClient(Endpoint(name="scripted/echo"), base_url=srv.url + "/") as c:
            assert (await c.complete(chat("x", "slash"))).message.content == "echo: slash"
    finally:
        await srv.stop()
    with pytest.raises(RuntimeError):
        _ = srv.url
    await srv.stop()  # idempotent


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com", ""])
def test_non_loopback_host_is_refused(host: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        ReferenceServer(POLICIES.get, host=host)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_hosts_are_accepted(host: str) -> None:
    ReferenceServer(POLICIES.get, host=host)


def test_negative_latency_is_refused() -> None:
    with pytest.raises(ValueError, match="latency_s"):
        ReferenceServer(POLICIES.get, latency_s=-1)


async def test_models_listing_defaults_to_empty() -> None:
    async with ReferenceServer(POLICIES.get) as srv, aiohttp.ClientSession() as s:
        async with s.get(srv.url + "/models") as r:
            assert r.status == 200
            assert await r.json() == {"object": "list", "data": []}


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM")
def test_run_forever_prints_url_serves_and_stops_on_sigterm() -> None:
    code = (
        "from sweepbench.devserver.server import ReferenceServer\n"
        "from sweepbench.wire import AssistantMessage\n"
        "ReferenceServer(lambda m: (lambda r: AssistantMessage(content='pong'))"
        " if m == 'scripted/ping' else None).run_forever()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1"), proc.stderr.read()

        async def ping() -> str:
            async with ModelClient(Endpoint(name="scripted/ping"), base_url=url) as c:
                return (await c.complete(chat("x"))).message.content

        assert asyncio.run(ping()) == "pong"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


# ---- faults, limits, outage, latency, prefix cache (the busy-provider simulation) -----------

FAULT_MIX = "429=0.1,500=0.05,timeout=0.02,reset=0.01,garbage=0.01"


async def _outcomes(srv: ReferenceServer, n: int, *, timeout_s: float = 1.0) -> list[str]:
    """What a plain aiohttp client sees for ``n`` distinct requests, as fault kinds."""

    async def one(s: aiohttp.ClientSession, i: int) -> str:
        body = msgspec.json.encode(chat("scripted/echo", f"request {i}"))
        try:
            async with s.post(srv.url + "/chat/completions", data=body) as r:
                payload = await r.read()
                if r.status != 200:
                    return str(r.status)
        except TimeoutError:
            return "timeout"
        except aiohttp.ServerDisconnectedError:
            return "reset"
        except aiohttp.ClientPayloadError:
            return "garbage"  # cut off mid-body
        try:
            json.loads(payload)
        except ValueError:
            return "garbage"  # not JSON
        return "ok"

    # sock_read, not total: waiting for a pooled connection must not count as a timeout
    timeout = aiohttp.ClientTimeout(total=None, sock_read=timeout_s)
    async with aiohttp.ClientSession(timeout=timeout) as s:
        return list(await asyncio.gather(*(one(s, i) for i in range(n))))


def plain_client(srv: ReferenceServer, **kw) -> ModelClient:
    """Our client with retries but without its shared limits getting in the way (no breaker,
    no adaptive cap), so that the server's behaviour is what the test sees."""
    try:
        from sweepbench.client.limits import EndpointLimits
    except ImportError:  # pragma: no cover - before the client grew shared limits
        return ModelClient(Endpoint(name="scripted/echo", **kw), base_url=srv.url,
                           backoff_base_s=0.001, backoff_max_s=0.002)
    limits = EndpointLimits(max_concurrency=64, adaptive=False, breaker_threshold=1 << 30)
    return ModelClient(Endpoint(name="scripted/echo", **kw), base_url=srv.url, limits=limits,
                       backoff_base_s=0.001, backoff_max_s=0.002)


async def test_every_fault_kind_reaches_a_real_client_at_its_rate() -> None:
    n = 1200
    spec = dict(p.split("=") for p in FAULT_MIX.split(","))
    async with server(faults=FAULT_MIX, seed=11, hang_s=30) as srv:
        seen = Counter(await _outcomes(srv, n))
    assert set(seen) == {"ok", *spec}
    for kind, p in spec.items():
        p = float(p)
        sigma = math.sqrt(n * p * (1 - p))
        assert abs(seen[kind] - n * p) < 4 * sigma, (kind, seen)
        assert srv.faults[kind] == seen[kind]  # the server counts what the client saw
    assert srv.answered["scripted/echo"] == seen["ok"] == srv.attempts[1]
    assert srv.requests["scripted/echo"] == n


async def test_faults_are_reproducible_per_seed() -> None:
    async with server(faults="429=0.2,500=0.2,reset=0.1", seed=5) as srv:
        first = await _outcomes(srv, 60)
    async with server(faults="429=0.2,500=0.2,reset=0.1", seed=5) as srv:
        again = await _outcomes(srv, 60)
    async with server(faults="429=0.2,500=0.2,reset=0.1", seed=6) as srv:
        other = await _outcomes(srv, 60)
    assert first == again
    assert first != other


async def test_a_retry_gets_a_fresh_draw_and_succeeds() -> None:
    async with server(faults="500=0.5,reset=0.2", seed=2) as srv:
        async with plain_client(srv, max_retries=20) as c:
            results = await asyncio.gather(*(c.complete(chat("x", str(i))) for i in range(40)))
    assert all(r.message.content.startswith("echo: ") for r in results)
    retried = sum(r.retries for r in results)
    assert retried > 20  # 70% of attempts fail
    assert srv.requests["scripted/echo"] == 40 + retried
    assert sum(k * v for k, v in srv.attempts.items()) == 40 + retried
    # The same calls needed the same attempts in a second run with the same seed.
    async with server(faults="500=0.5,reset=0.2", seed=2) as srv2:
        async with plain_client(srv2, max_retries=20) as c:
            again = await asyncio.gather(*(c.complete(chat("x", str(i))) for i in range(40)))
    assert [r.attempts for r in again] == [r.attempts for r in results]


async def test_garbage_is_html_or_a_truncated_body_with_200() -> None:
    bodies = []
    async with server(faults="garbage=1") as srv, aiohttp.ClientSession() as s:
        for i in range(12):
            body = msgspec.json.encode(chat("scripted/echo", str(i)))
            async with s.post(srv.url + "/chat/completions", data=body) as r:
                assert r.status == 200
                try:
                    bodies.append(("html", await r.text()))
                except aiohttp.ClientPayloadError:
                    bodies.append(("truncated", None))
    kinds = {k for k, _ in bodies}
    assert kinds == {"html", "truncated"}
    assert all("<html>" in text for k, text in bodies if k == "html")


def test_bad_specs_are_refused_by_the_server() -> None:
    with pytest.raises(ValueError, match="'bogus=1': unknown fault kind"):
        server(faults="500=0.1,bogus=1")
    with pytest.raises(ValueError, match="latency spec"):
        server(latency="normal:1")
    with pytest.raises(ValueError, match="not both"):
        server(latency="fixed:1", latency_s=1)
    with pytest.raises(ValueError, match="duration must be > 0"):
        server(outage=(1.0, 0.0))
    with pytest.raises(ValueError, match="rpm_limit must be >= 1"):
        server(rpm_limit=0)


@pytest.mark.parametrize("latency_s", [math.inf, math.nan, -0.5])
def test_a_latency_that_is_not_a_finite_number_is_refused(latency_s) -> None:
    with pytest.raises(ValueError) as info:  # an infinite latency would hang every answer
        server(latency_s=latency_s)
    assert str(info.value) == f"latency_s must be a finite number >= 0, got {latency_s}"


async def test_shutdown_is_not_blocked_by_hung_requests() -> None:
    srv = server(faults="timeout=1", hang_s=120)
    await srv.start()
    async with client_for(srv, "scripted/echo", timeout_s=60) as c:
        calls = [asyncio.ensure_future(c.complete(chat("x", str(i)))) for i in range(5)]
        while srv.faults["timeout"] < 5:
            await asyncio.sleep(0.01)
        t0 = time.perf_counter()
        await srv.stop()
        stopped = time.perf_counter() - t0
        results = await asyncio.gather(*calls, return_exceptions=True)
    assert stopped < 2.0
    assert all(isinstance(r, TransportError) for r in results), results


async def test_a_hang_shorter_than_the_client_timeout_ends_in_504() -> None:
    async with server(faults="timeout=1", hang_s=0.05) as srv:
        async with client_for(srv, "scripted/echo") as c:
            with pytest.raises(ServerError) as info:
                await c.complete(chat("x"))
    assert info.value.status == 504


async def _raw(srv: ReferenceServer, model: str, text: str = "hi",
               key: str | None = None) -> tuple[int, dict, dict]:
    headers = {"Authorization": f"Bearer {key}"} if key else None
    async with aiohttp.ClientSession() as s:
        body = msgspec.json.encode(chat(model, text))
        async with s.post(srv.url + "/chat/completions", data=body, headers=headers) as r:
            return r.status, dict(r.headers), await r.json()


async def test_rate_limits_are_per_key_as_each_key_is_an_account() -> None:
    async with server(rpm_limit=2) as srv:
        got = [(await _raw(srv, "scripted/echo", str(i), key))[0]
               for i, key in enumerate(["a", "a", "a", "b", "b", None, None, None])]
    assert got == [200, 200, 429, 200, 200, 200, 200, 429]


async def test_rpm_limit_answers_429_with_retry_after_until_a_slot_frees() -> None:
    async with server(rpm_limit=3) as srv:
        t_start = time.monotonic()
        ok = [await _raw(srv, "scripted/echo", str(i)) for i in range(3)]
        t_first = time.monotonic()
        status, headers, payload = await _raw(srv, "scripted/echo")
        other_model = await _raw(srv, "scripted/weather")  # limits are per model
    assert [s for s, _, _ in ok] == [200, 200, 200]
    assert [h["x-ratelimit-remaining-requests"] for _, h, _ in ok] == ["2", "1", "0"]
    assert ok[0][1]["x-ratelimit-limit-requests"] == "3"
    assert status == 429
    err = _assert_openai_error(payload)
    assert err["code"] == "rate_limit_exceeded" and err["type"] == "requests"
    assert "requests per min (RPM): Limit 3" in err["message"]
    retry_after = float(headers["Retry-After"])
    # the first request leaves the window 60 s after it was admitted (a moment before t_first)
    # (bounds from the clock, not constants: a loaded machine takes seconds for 3 requests)
    assert 60.0 - (time.monotonic() - t_start) - 0.01 < retry_after
    assert retry_after <= 60.0 - (time.monotonic() - t_first) + 0.01
    assert int(headers["retry-after-ms"]) == pytest.approx(retry_after * 1000, abs=1)
    assert other_model[0] == 200
    assert srv.limited == {"requests": 1}


async def test_rpm_limited_client_is_told_when_to_come_back() -> None:
    async with server(rpm_limit=1) as srv, client_for(srv, "scripted/echo") as c:
        t_start = time.monotonic()
        await c.complete(chat("x", "one"))
        with pytest.raises(RateLimitError) as info:
            await c.complete(chat("x", "two"))
        elapsed = time.monotonic() - t_start
    assert 60.0 - elapsed - 0.01 < info.value.retry_after <= 60.0


async def test_tpm_limit_counts_estimated_tokens() -> None:
    async with server(tpm_limit=100) as srv:
        first = await _raw(srv, "scripted/echo", "a" * 120)  # ~50 tokens in, ~32 out
        used = first[2]["usage"]["total_tokens"]
        second = await _raw(srv, "scripted/echo", "b" * 120)
        small = await _raw(srv, "scripted/echo", "c")
        huge = await _raw(srv, "scripted/echo", "d" * 800)
    assert first[0] == 200
    assert first[1]["x-ratelimit-remaining-tokens"] == str(100 - first[2]["usage"]["prompt_tokens"])
    assert second[0] == 429 and second[2]["error"]["type"] == "tokens"
    assert "tokens per min (TPM): Limit 100" in second[2]["error"]["message"]
    assert 59.0 < float(second[1]["Retry-After"]) <= 60.0
    assert second[1]["x-ratelimit-remaining-tokens"] == str(100 - used)
    assert small[0] == 200  # a request that fits still gets through
    assert huge[0] == 400 and huge[2]["error"]["code"] == "request_too_large"
    assert srv.limited == {"tokens": 1}


async def test_outage_window_answers_503_then_recovers() -> None:
    async with server(outage=(0.3, 0.4)) as srv:
        before = await _raw(srv, "scripted/echo", "before")
        await asyncio.sleep(max(0.0, 0.35 - srv.elapsed()))
        during = await _raw(srv, "scripted/echo", "during")
        also_during = await _raw(srv, "scripted/nobody", "during")
        await asyncio.sleep(max(0.0, 0.75 - srv.elapsed()))
        after = await _raw(srv, "scripted/echo", "after")
    assert before[0] == 200 and after[0] == 200
    assert during[0] == also_during[0] == 503
    assert "Retry-After" not in during[1]  # a real outage does not know when it ends
    assert _assert_openai_error(during[2])["code"] == "service_unavailable"
    assert srv.outage_rejected == 2
    assert srv.answered["scripted/echo"] == 2


async def _latencies(spec: str | None, n: int) -> list[float]:
    async def timed(s: aiohttp.ClientSession, i: int) -> float:
        body = msgspec.json.encode(chat("scripted/echo", str(i)))
        t0 = time.perf_counter()
        async with s.post(srv.url + "/chat/completions", data=body) as r:
            await r.read()
            assert r.status == 200
        return time.perf_counter() - t0

    async with server(latency=spec, seed=1) as srv:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:
            await asyncio.gather(*(timed(s, -1 - i) for i in range(n)))  # open connections
            return sorted(await asyncio.gather(*(timed(s, i) for i in range(n))))


@pytest.mark.parametrize(
    ("spec", "median", "low", "high"),
    [("fixed:0.1", 0.1, 0.1, 0.1), ("uniform:0.05,0.25", 0.15, 0.05, 0.25),
     ("lognormal:median=0.1,sigma=0.5", 0.1, 0.0, None)],
)
async def test_latency_distributions_over_http(spec: str, median: float, low: float,
                                               high: float | None) -> None:
    n = 31
    overhead = (await _latencies(None, n))[n // 2]  # loopback HTTP on a possibly busy machine
    latencies = await _latencies(spec, n)
    # The median of 31 draws is within ~0.02 of the distribution's (exact medians over many
    # draws: test_faults). Over HTTP the delay is a floor; a busy machine adds to it by more
    # than any fixed margin, so above it only a gross error (seconds for 0.1) is caught here.
    observed = latencies[n // 2]
    assert median - 0.04 <= observed
    assert observed - overhead <= median + 0.5
    assert latencies[0] >= low
    if high is not None:
        assert latencies[-1] < high + 0.1


async def test_prefix_cache_grows_over_an_append_only_conversation() -> None:
    messages: list = [SystemMessage("You are a helpful assistant. " * 20)]
    cached, prompts = [], []
    async with server() as srv, client_for(srv, "scripted/echo") as c:
        for turn in range(5):
            messages.append(UserMessage(f"question number {turn} " * 5))
            r = await c.complete(ChatRequest(model="x", messages=list(messages),
                                             tools=[WEATHER_TOOL]))
            cached.append(r.usage.cached_prompt_tokens)
            prompts.append(r.usage.prompt_tokens)
            messages.append(r.message)
        unrelated = await c.complete(chat("x", "something else entirely"))
        other_model = await c.complete(ChatRequest(model="x", messages=messages[:2]))
    assert cached[0] == 0
    assert all(a < b for a, b in itertools.pairwise(cached))  # growing
    for prev, now in zip(prompts, cached[1:]):
        assert now == pytest.approx(prev, abs=1)  # the whole previous prompt, as a prefix
    assert all(c < p for c, p in zip(cached, prompts))
    assert unrelated.usage.cached_prompt_tokens == 0
    # without the tools the prefix differs (tools come first), so no hit either
    assert other_model.usage.cached_prompt_tokens == 0
    assert srv.cached_tokens == sum(cached)


async def test_prefix_cache_can_be_disabled_and_faults_do_not_fill_it() -> None:
    async with server(cache_entries=0) as srv, client_for(srv, "scripted/echo") as c:
        await c.complete(chat("x", "same"))
        again = await c.complete(chat("x", "same"))
    assert again.usage.cached_prompt_tokens == 0
    async with server(faults="500=1") as srv, client_for(srv, "scripted/echo") as c:
        with pytest.raises(ServerError):
            await c.complete(chat("x", "same"))
        srv.fault_spec = type(srv.fault_spec)()  # faults off
        after = await c.complete(chat("x", "same"))
    assert after.usage.cached_prompt_tokens == 0  # the failed attempt was never processed


async def test_stats_are_plain_data() -> None:
    async with server(faults="429=0.5", seed=3) as srv:
        await _outcomes(srv, 20)
        stats = srv.stats()
    assert json.loads(json.dumps(stats)) == stats
    assert stats["requests"]["scripted/echo"] == 20
    assert stats["faults"]["429"] + stats["answered"]["scripted/echo"] == 20


async def test_overflow_and_length_faults_end_calls_as_real_servers_do() -> None:
    from sweepbench.errors import ContextLengthError

    async with server(faults="overflow=1") as srv:
        async with plain_client(srv, max_retries=3) as c:
            with pytest.raises(ContextLengthError, match="maximum context length") as info:
                await c.complete(chat("x", "1"))
    assert info.value.attempts == 1 and srv.faults["overflow"] == 1  # never retried
    async with server(faults="length=1") as srv:
        async with plain_client(srv) as c:
            result = await c.complete(chat("x", "2"))
    assert result.finish_reason == "length" and result.truncated
    assert result.message.content.startswith("echo: ")


def test_the_sweep_configs_cache_size_reaches_the_built_in_server():
    from sweepbench.config import load_config
    from sweepbench.runner.build import reference_server

    small = reference_server(load_config(None, {"reference_cache_entries": 250}))
    assert small._cache.max_entries == 250
    assert reference_server(load_config(None, {"reference_cache_entries": 0}))._cache is None
    with pytest.raises(ConfigError, match="reference_cache_entries must be >= 0, got -1"):
        load_config(None, {"reference_cache_entries": -1})
