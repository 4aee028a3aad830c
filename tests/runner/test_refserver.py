"""The reference server: OpenAI-compatible over loopback, scripted policies as models."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import msgspec
import openai
import pytest

from sweepbench.config import Endpoint
from sweepbench.runner.client import (
    BadRequestError,
    ModelClient,
    NotFoundError,
    ServerError,
)
from sweepbench.runner.refserver import Policy, ReferenceServer, estimate_tokens
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
    assert a.usage == b.usage and a.response_id == b.response_id != ""
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
    caplog.set_level(logging.ERROR, logger="sweepbench.runner.refserver")
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
    async with ReferenceServer(POLICIES.get) as srv:
        async with aiohttp.ClientSession() as s:
            async with s.get(srv.url + "/models") as r:
                assert r.status == 200
                assert await r.json() == {"object": "list", "data": []}


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM")
def test_run_forever_prints_url_serves_and_stops_on_sigterm() -> None:
    code = (
        "from sweepbench.runner.refserver import ReferenceServer\n"
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
