"""ModelClient through its transport seam: an in-memory transport and a virtual clock, so no
test here depends on sockets or on how busy the machine is. The aiohttp transport itself is
tested at the end, over loopback, where the socket is the point."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import msgspec
import pytest

from sweepbench.config import Endpoint
from sweepbench.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ConnectionRefused,
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
from sweepbench.client import retry as retry_mod
from sweepbench.client.classify import parse_retry_after
from sweepbench.client.facade import ModelClient, limits_key
from sweepbench.client.results import AttemptFailure, CallResult
from sweepbench.client.limits import FAILED, EndpointLimits, LimitsPool
from sweepbench.client.cache import ResponseCache
from sweepbench.client.transports.memory import Answer, MemoryTransport, VirtualClock, completion
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    FunctionCall,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)

OK_BODY = completion("hello", tool_calls=[], usage={
    "prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14,
    "prompt_tokens_details": {"cached_tokens": 8}})
OK_BODY["id"], OK_BODY["model"] = "chatcmpl-abc", "served-model"
OK = Answer(body=OK_BODY)
TOOLS = [ToolSpec(function={"name": "f", "parameters": {}})]


def status(code: int, message: str = "nope", headers: dict[str, str] | None = None,
           code_str: str | None = None, delay_s: float = 0.0) -> Answer:
    return Answer(code, {"error": {"message": message, "type": "error", "code": code_str}},
                  headers or {}, delay_s)


def endpoint(**kw) -> Endpoint:
    kw.setdefault("name", "test-model")
    kw.setdefault("base_url", "http://memory.invalid/v1")
    kw.setdefault("max_retries", 3)
    return Endpoint(**kw)


class Rig:
    """A client on an in-memory transport and a virtual clock."""

    def __init__(self, *replies, clock: VirtualClock | None = None,
                 limits: EndpointLimits | None = None, **kw) -> None:
        backoff = {k: kw.pop(k) for k in ("backoff_base_s", "backoff_max_s", "retry_after_max_s",
                                          "on_retry", "cache") if k in kw}
        backoff.setdefault("backoff_base_s", 0.001)
        backoff.setdefault("backoff_max_s", 0.01)
        self.ep = endpoint(**kw)
        self.clock = clock or (limits.clock if limits is not None else VirtualClock())
        self.limits = limits or EndpointLimits.for_endpoint(self.ep, clock=self.clock)
        self.transport = MemoryTransport(*(replies or (OK,)), clock=self.clock)
        self.client = ModelClient(self.ep, limits=self.limits, transport=self.transport,
                                  **backoff)

    async def __call__(self, req: ChatRequest | None = None) -> CallResult:
        return await self.client.complete(req or request())

    @property
    def bodies(self) -> list[dict]:
        return self.transport.bodies


def request(**kw) -> ChatRequest:
    kw.setdefault("model", "whatever")
    kw.setdefault("messages", [UserMessage("hi")])
    return ChatRequest(**kw)


# ---- success path and encoding -------------------------------------------------------------


async def test_success_result_and_body() -> None:
    rig = Rig(name="nick", model="real-model", temperature=0.3, max_tokens=50,
              extra_body={"top_p": 0.9, "reasoning_effort": "low"})
    result = await rig(request(sweepbench={"episode": "e1"}, seed=7, tools=TOOLS))
    assert isinstance(result, CallResult)
    assert result.message.content == "hello"
    assert result.message.tool_calls is None  # "tool_calls": [] normalised away
    assert (result.usage.prompt_tokens, result.usage.completion_tokens,
            result.usage.cached_prompt_tokens) == (11, 3, 8)
    assert result.rate_limited == 0 and not result.from_cache
    assert result.attempts == 1 and result.retries == 0 and result.statuses == [200]
    assert result.failures == [] and result.queue_wait_s == 0.0 and result.backoff_s == 0.0
    assert result.response_id == "chatcmpl-abc" and result.model == "served-model"
    assert result.finish_reason == "stop" and not result.truncated

    body = rig.bodies[0]
    assert body["model"] == "real-model"
    assert "sweepbench" not in body  # real endpoints never see it
    assert body["temperature"] == 0.3 and body["max_tokens"] == 50 and body["seed"] == 7
    assert body["top_p"] == 0.9 and body["reasoning_effort"] == "low"
    assert body["tools"][0]["function"]["name"] == "f"
    assert "tool_choice" not in body  # not configured: the server's default
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert rig.transport.headers[0] is None  # no key configured: no Authorization


async def test_request_values_beat_endpoint_defaults_and_extra_body_beats_both() -> None:
    rig = Rig(temperature=0.3, max_tokens=50, extra_body={"max_tokens": 9})
    await rig(request(temperature=1.0, max_tokens=20))
    raw = rig.transport.raw[0]
    assert rig.bodies[0]["temperature"] == 1.0 and rig.bodies[0]["max_tokens"] == 9
    assert raw.count(b'"max_tokens"') == 1


async def test_scripted_endpoint_keeps_sweepbench_field_and_needs_base_url() -> None:
    ep = Endpoint(name="scripted/oracle")
    with pytest.raises(ConfigError, match="reference server"):
        ModelClient(ep)
    transport = MemoryTransport(OK)
    client = ModelClient(ep, base_url="http://ref.invalid/v1", transport=transport)
    await client.complete(request(sweepbench={"task": "t1", "trial": 2}))
    assert transport.bodies[0]["sweepbench"] == {"task": "t1", "trial": 2}
    assert transport.bodies[0]["model"] == "scripted/oracle"


@pytest.mark.parametrize("key", ["model", "messages", "stream", "sweepbench"])
def test_extra_body_may_not_override_reserved_fields(key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        ModelClient(endpoint(extra_body={key: 1}))


async def test_closed_client_refuses_calls() -> None:
    rig = Rig()
    await rig.client.aclose()
    assert rig.transport.closed
    with pytest.raises(RuntimeError, match="closed"):
        await rig()


# ---- per-endpoint request options (issue 15, defect 7) --------------------------------------


async def test_max_tokens_is_sent_only_when_configured() -> None:
    assert Endpoint(name="m").max_tokens is None  # upstream VitaBench sends none either
    rig = Rig()
    await rig()
    assert "max_tokens" not in rig.bodies[0]
    bounded = Rig(max_tokens=4096)
    await bounded()
    assert bounded.bodies[0]["max_tokens"] == 4096  # a runaway generation is bounded
    off = Rig(max_tokens=0)
    await off()
    assert "max_tokens" not in off.bodies[0]


async def test_budget_as_max_completion_tokens() -> None:
    rig = Rig(max_tokens=800, max_tokens_field="max_completion_tokens")
    await rig()
    await rig(request(max_tokens=64))
    assert [b.get("max_completion_tokens") for b in rig.bodies] == [800, 64]
    assert all("max_tokens" not in b for b in rig.bodies)  # reasoning models reject it


async def test_tool_choice_is_sent_with_tools_only() -> None:
    rig = Rig(tool_choice="auto")
    await rig(request(tools=TOOLS))
    await rig(request())
    assert rig.bodies[0]["tool_choice"] == "auto"
    assert "tool_choice" not in rig.bodies[1]  # no tools: a tool_choice would be a 400
    named = {"type": "function", "function": {"name": "f"}}
    rig2 = Rig(tool_choice=named)
    convo = rig2.client.conversation()
    req = request(tools=TOOLS)
    await convo(req)
    assert rig2.bodies[0]["tool_choice"] == named
    assert rig2.transport.raw[0] == rig2.client.encode(req)  # spliced == plain


def _tool_turn(reasoning: str | None = None, details=None) -> list:
    call = ToolCall("call_1", FunctionCall("f", '{"x":1}'))
    return [UserMessage("hi"),
            AssistantMessage(None, [call], reasoning=reasoning, reasoning_details=details),
            ToolMessage("call_1", "42")]


async def test_assistant_content_null_or_empty_string() -> None:
    default, empty = Rig(), Rig(assistant_empty_content="")
    for rig in (default, empty):
        req = request(messages=_tool_turn(), tools=TOOLS)
        await rig(req)
        await rig.client.conversation()(req)
        assert rig.transport.raw[0] == rig.transport.raw[1]  # spliced == plain
    assert "content" not in default.bodies[0]["messages"][1]
    assert empty.bodies[0]["messages"][1]["content"] == ""  # llama.cpp answers 500 to null


async def test_reasoning_is_stored_but_sent_back_only_when_asked() -> None:
    details = [{"type": "reasoning.text", "text": "think", "signature": "sig=="}]
    req = request(messages=_tool_turn("I should call f.", details), tools=TOOLS)
    plain = Rig()
    await plain(req)
    sent = plain.bodies[0]["messages"][1]
    assert "reasoning" not in sent and "reasoning_content" not in sent
    assert "reasoning_details" not in sent

    back = Rig(send_reasoning=True)
    await back(req)
    await back.client.conversation()(req)
    assert back.transport.raw[0] == back.transport.raw[1]
    sent = back.bodies[0]["messages"][1]
    assert sent["reasoning_content"] == "I should call f." and sent["reasoning_details"] == details
    # a tool-call turn with no stored reasoning still carries the field (DeepSeek insists)
    await back(request(messages=_tool_turn(), tools=TOOLS))
    assert back.bodies[-1]["messages"][1]["reasoning_content"] == ""

    ollama = Rig(send_reasoning=True, reasoning_field="reasoning")
    await ollama(req)
    assert ollama.bodies[0]["messages"][1]["reasoning"] == "I should call f."


async def test_reply_reasoning_and_tokens_reach_the_result() -> None:
    body = completion("done", reasoning_content="step 1, step 2", usage={
        "prompt_tokens": 100, "completion_tokens": 60, "total_tokens": 160,
        "completion_tokens_details": {"reasoning_tokens": 45}})
    result = await Rig(Answer(body=body))()
    assert result.message.reasoning == "step 1, step 2"
    assert result.usage.reasoning_tokens == 45 and result.usage.completion_tokens == 60


# ---- retries ------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [429, 503])
async def test_retry_after_is_honoured(code: int) -> None:
    seen: list[tuple[type, float]] = []
    rig = Rig(status(code, headers={"Retry-After": "0.3"}), OK,
              on_retry=lambda e, w: seen.append((type(e), w)))
    result = await rig()
    assert result.attempts == 2 and result.statuses == [code, 200]
    assert 0.3 <= result.backoff_s <= 0.302  # Retry-After plus jitter; back-off alone is ~1 ms
    assert rig.transport.times[1] - rig.transport.times[0] == pytest.approx(result.backoff_s)
    assert seen[0][0] is (RateLimitError if code == 429 else ServerError) and seen[0][1] >= 0.3


async def test_retry_after_is_capped() -> None:
    rig = Rig(status(429, headers={"Retry-After": "3600"}), OK, retry_after_max_s=0.05)
    result = await rig()
    assert result.attempts == 2 and result.wall_s < 1.0


async def test_500_twice_then_success_keeps_every_failure() -> None:
    rig = Rig(status(500, "boom"), status(502, "bad gateway"), OK)
    result = await rig()
    assert result.attempts == 3 and result.retries == 2 and rig.transport.count == 3
    assert result.statuses == [500, 502, 200]
    assert result.failures == [
        AttemptFailure(error="ServerError", status=500, message="HTTP 500: boom"),
        AttemptFailure(error="ServerError", status=502, message="HTTP 502: bad gateway")]


async def test_408_is_retried() -> None:
    assert (await Rig(status(408), OK)()).statuses == [408, 200]


async def test_retries_exhausted_raise_last_retryable_error() -> None:
    rig = Rig(status(500, "boom"), max_retries=2)
    with pytest.raises(ServerError) as info:
        await rig()
    assert rig.transport.count == 3
    assert info.value.attempts == 3 and info.value.status == 500
    assert info.value.statuses == [500, 500, 500] and len(info.value.failures) == 3
    assert "boom" in str(info.value) and "test-model" in str(info.value)


@pytest.mark.parametrize(
    ("code", "error", "code_str", "message"),
    [
        (400, BadRequestError, None, "bad field"),
        (400, ContextLengthError, "context_length_exceeded", "too long"),
        (400, ContextLengthError, None, "This model's maximum context length is 8192 tokens"),
        (413, ContextLengthError, None, "prompt is too long: 210000 tokens > 200000 maximum"),
        (401, AuthenticationError, None, "bad key"),
        (403, AuthenticationError, None, "forbidden"),
        (404, NotFoundError, None, "no such model"),
        (422, FatalError, None, "unprocessable"),
        (429, QuotaExceededError, "insufficient_quota", "You exceeded your current quota"),
    ],
)
async def test_fatal_errors_are_not_retried(code, error, code_str, message) -> None:
    rig = Rig(status(code, message, code_str=code_str))
    with pytest.raises(FatalError) as info:
        await rig()
    assert type(info.value) is error
    assert not isinstance(info.value, RetryableError)
    assert rig.transport.count == 1 and info.value.attempts == 1 and info.value.status == code
    assert message in str(info.value)


@pytest.mark.parametrize(
    "bad",
    [b"<html>gateway hiccup</html>", b'{"choices": [{"mess', b'{"unexpected": true}',
     b'{"choices": []}'],
    ids=["not-json", "truncated-json", "wrong-shape", "no-choices"],
)
async def test_invalid_body_is_retried(bad: bytes) -> None:
    result = await Rig(Answer(body=bad), OK)()
    assert result.attempts == 2 and result.statuses == [200, 200]
    assert result.failures[0].error == "InvalidResponseError"


async def test_invalid_body_exhausted_raises_invalid_response_naming_the_endpoint() -> None:
    rig = Rig(Answer(body=b"garbage"), max_retries=1)
    with pytest.raises(InvalidResponseError) as info:
        await rig()
    assert rig.transport.count == 2
    assert str(info.value).startswith("test-model: invalid response from "
                                      "http://memory.invalid/v1/chat/completions")


async def test_error_inside_a_200_is_classified_by_its_code() -> None:
    inband = Answer(body={"error": {"message": "Provider returned error", "code": 502}})
    result = await Rig(inband, OK)()
    assert result.statuses == [200, 200]
    assert result.failures[0].error == "ServerError"
    assert "Provider returned error" in result.failures[0].message
    rig = Rig(Answer(body={"error": {"message": "no code here"}}), max_retries=0)
    with pytest.raises(InvalidResponseError, match="no code here"):
        await rig()


async def test_timeout_from_the_transport_is_retried() -> None:
    rig = Rig(RequestTimeout("test-model: request timed out", endpoint="test-model"), OK)
    result = await rig()
    assert result.attempts == 2 and result.statuses == [0, 200]
    assert result.failures[0].error == "RequestTimeout"


async def test_cancellation_propagates() -> None:
    rig = Rig(Answer(body=OK_BODY, delay_s=5.0))
    task = asyncio.create_task(rig())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# ---- defect 1: the breaker never spends more sends than max_retries allows -----------------


async def test_breaker_probes_count_against_max_retries() -> None:
    # One request that always gets a 500, the breaker opening after every failure: before the
    # fix a failed half-open probe did not count, and the call was sent until the breaker's
    # max wait (50 sends in 21 minutes where 7 were allowed).
    rig = Rig(status(500, "upstream exploded"), max_retries=6, breaker_threshold=1,
              breaker_cooldown_s=1.0, breaker_max_wait_s=600.0)
    with pytest.raises(ServerError) as info:
        await rig()
    assert rig.transport.count == 7 == info.value.attempts
    assert "upstream exploded" in str(info.value)
    assert [f.status for f in info.value.failures] == [500] * 7


async def test_a_caller_that_gives_up_on_the_breaker_names_the_failure_behind_it() -> None:
    rig = Rig(status(500, "upstream exploded"), max_retries=0, breaker_threshold=1,
              breaker_cooldown_s=30.0, breaker_max_wait_s=0.1)
    with pytest.raises(ServerError):
        await rig()
    with pytest.raises(EndpointUnavailableError) as info:  # another episode, same endpoint
        await rig()
    assert rig.transport.count == 1  # it never sent: it waited on the open breaker
    assert "circuit breaker open" in str(info.value)
    assert "HTTP 500: upstream exploded" in str(info.value)
    assert not isinstance(info.value, RetryableError) and info.value.attempts == 0


async def test_breaker_waiters_do_not_burn_retries() -> None:
    # The endpoint is down for 5 s. The breaker opens after two failures; callers arriving
    # while it is open wait instead of sending and succeed once a probe has closed it.
    clock = VirtualClock()
    down_until = clock.now() + 5.0

    def reply(body: dict) -> Answer:
        return status(503) if clock.now() < down_until else OK

    limits = EndpointLimits(max_concurrency=8, breaker_threshold=2, breaker_cooldown_s=2.0,
                            clock=clock)
    first = Rig(reply, limits=limits, max_retries=1)
    with pytest.raises(ServerError):
        await first()  # two sends, two 503s: the breaker opens
    assert limits.breaker.state == "open"
    rig = Rig(reply, limits=limits, max_retries=3)
    results = await asyncio.gather(*(rig() for _ in range(6)))
    assert limits.breaker.state == "closed" and limits.breaker.opened >= 2
    assert all(r.message.content == "hello" for r in results)
    # nobody sent while it was open: besides one success each, only the probes were sent,
    # and no call sent more than max_retries + 1
    assert rig.transport.count <= limits.breaker.opened - 1 + 6
    assert all(r.attempts <= 4 for r in results)
    assert min(r.queue_wait_s for r in results) >= 2.0  # they waited, in the queue


# ---- defect 2: a refused connection fails at once, naming the URL -------------------------


def _refused() -> ConnectionRefused:
    return ConnectionRefused("test-model: connection refused by http://127.0.0.1:9/v1/chat/"
                             "completions (is the server running?)", endpoint="test-model")


async def test_refused_connection_to_an_endpoint_that_never_answered_fails_at_once() -> None:
    rig = Rig(_refused(), max_retries=6)
    for _ in range(20):  # every episode: one request each, no breaker to wait on
        with pytest.raises(ConnectionRefused) as info:
            await rig()
        assert info.value.attempts == 1
    assert rig.transport.count == 20 and rig.limits.breaker.state == "closed"
    assert rig.clock.now() == 1000.0  # no back-off, no wait at all
    assert "connection refused" in str(info.value) and "127.0.0.1:9" in str(info.value)


async def test_refused_connection_after_the_endpoint_answered_is_retried() -> None:
    rig = Rig(OK, _refused(), _refused(), OK, max_retries=3)
    await rig()
    result = await rig()  # the server restarts: worth waiting for
    assert result.statuses == [0, 0, 200]
    assert [f.error for f in result.failures] == ["ConnectionRefused"] * 2


# ---- defect 3: latency from the send; queue wait apart --------------------------------------


async def test_latency_is_measured_from_the_send_and_queue_wait_is_apart() -> None:
    rig = Rig(Answer(body=OK_BODY, delay_s=2.0), max_concurrency=1)
    first, second = await asyncio.gather(rig(), rig())
    assert first.latency_s == pytest.approx(2.0) and first.queue_wait_s == 0.0
    assert second.latency_s == pytest.approx(2.0)  # the server's time, not ours
    assert second.queue_wait_s == pytest.approx(2.0)  # waited for the in-flight slot
    assert second.wall_s == pytest.approx(4.0)


async def test_back_off_is_reported_apart_and_does_not_hold_a_slot() -> None:
    rig = Rig(status(500), OK, max_concurrency=1)
    rig.client.retry.backoff = lambda state: 0.5
    slow = asyncio.create_task(rig())
    await asyncio.sleep(0)
    fast = await rig()
    assert fast.queue_wait_s == 0.0 and fast.wall_s < 0.5  # not queued behind the back-off
    result = await slow
    assert result.attempts == 2 and result.backoff_s == pytest.approx(0.5)
    assert result.wall_s == pytest.approx(0.5)


# ---- limits ---------------------------------------------------------------------------------


async def test_concurrency_cap_is_honoured() -> None:
    rig = Rig(Answer(body=OK_BODY, delay_s=0.05), max_concurrency=3)
    results = await asyncio.gather(*(rig() for _ in range(12)))
    assert len(results) == 12 and rig.transport.count == 12
    assert rig.transport.max_in_flight == 3


def clustering(clock: VirtualClock | None = None, **kw) -> EndpointLimits:
    """Limits that take every 429 as one of a cluster (a limit being hit)."""
    return EndpointLimits(rate_limit_min=1, rate_limit_share=0.0, clock=clock or VirtualClock(),
                          **kw)


async def a_429_then_three_more(rig: Rig) -> tuple[CallResult, list[CallResult]]:
    """A call answered 429 (then 200), and three calls made while it waits: their results."""
    first = asyncio.create_task(rig())
    while rig.transport.count < 1:
        await asyncio.sleep(0)
    others = await asyncio.gather(*(rig() for _ in range(3)))
    return await first, others


async def test_retry_after_of_clustered_429s_pauses_the_whole_endpoint() -> None:
    rig = Rig(status(429, headers={"Retry-After": "0.4"}), OK, limits=clustering())
    result, others = await a_429_then_three_more(rig)
    assert result.rate_limited == 1 and result.statuses == [429, 200]
    assert all(r.attempts == 1 and r.queue_wait_s == pytest.approx(0.4) for r in others)
    times = rig.transport.times
    assert min(times[1:]) - times[0] == pytest.approx(0.4)  # nobody sent during the pause
    assert rig.limits.pauses == 1


async def test_clustered_429s_shrink_adaptive_concurrency() -> None:
    rig = Rig(status(429), OK, limits=clustering(max_concurrency=10))
    await rig()
    assert rig.limits.concurrency.limit == pytest.approx(7.0 + 1 / 7.0)


async def test_an_isolated_429_holds_only_its_own_request() -> None:
    rig = Rig(status(429, headers={"Retry-After": "0.4"}), OK, max_concurrency=10)
    result, others = await a_429_then_three_more(rig)
    assert result.rate_limited == 1 and result.statuses == [429, 200]
    assert 0.4 <= result.backoff_s <= 0.402  # its own Retry-After, honoured
    assert all(r.attempts == 1 and r.queue_wait_s == 0.0 for r in others)
    times = rig.transport.times
    assert max(times[1:4]) - times[0] < 0.4  # the others went at once
    assert rig.limits.pauses == 0 and rig.limits.concurrency.limit == 10.0


# ---- back-off ---------------------------------------------------------------------------


def primed(*replies, monkeypatch, **kw) -> Rig:
    """A rig whose endpoint answered 20 requests in 0.2 s each (its median latency known),
    then ``replies``; jitter always draws its ceiling."""
    monkeypatch.setattr(retry_mod.random, "uniform", lambda low, high: high)
    kw.setdefault("backoff_base_s", 0.5)
    kw.setdefault("backoff_max_s", 30.0)
    return Rig(*[Answer(body=OK_BODY, delay_s=0.2)] * 20, *replies, **kw)


async def test_isolated_failures_back_off_about_one_latency_doubling(monkeypatch) -> None:
    seen: list[float] = []
    rig = primed(status(500), TransportError("reset", endpoint="test-model"), OK,
                 monkeypatch=monkeypatch, on_retry=lambda e, w: seen.append(w))
    for _ in range(20):
        await rig()
    result = await rig()
    assert result.statuses == [500, 0, 200]
    assert seen == pytest.approx([0.1, 0.2])  # 0.5 x the 0.2 s median, doubled per retry
    assert result.backoff_s == pytest.approx(0.3)


async def test_back_off_before_the_latency_is_known_is_the_base(monkeypatch) -> None:
    seen: list[float] = []
    monkeypatch.setattr(retry_mod.random, "uniform", lambda low, high: high)
    rig = Rig(status(500), status(500), OK, backoff_base_s=0.5, backoff_max_s=30.0,
              on_retry=lambda e, w: seen.append(w))
    await rig()
    assert seen == pytest.approx([0.5, 1.0])


async def test_an_endpoint_mostly_failing_gets_the_full_back_off(monkeypatch) -> None:
    seen: list[float] = []
    rig = primed(status(500), OK, monkeypatch=monkeypatch, on_retry=lambda e, w: seen.append(w))
    for _ in range(20):
        await rig()
    for _ in range(20):  # 20 failures among the 40 latest answers, then this call's: over half
        rig.limits.outcomes.add(FAILED)
    await rig()
    assert seen == pytest.approx([0.5])


async def test_an_open_breaker_gets_the_full_back_off(monkeypatch) -> None:
    seen: list[float] = []
    rig = primed(status(500), OK, monkeypatch=monkeypatch, breaker_threshold=1,
                 on_retry=lambda e, w: seen.append(w))
    for _ in range(20):
        await rig()
    result = await rig()  # the 500 opened the breaker
    assert seen == pytest.approx([0.5]) and result.statuses == [500, 200]


@pytest.mark.parametrize(("after", "wait"), [("0.2", 0.25), ("2", 2.1), ("0", 0.02)])
async def test_retry_after_jitter_is_a_quarter_of_it_at_most_the_quick_back_off(
        monkeypatch, after: str, wait: float) -> None:
    seen: list[float] = []
    rig = primed(status(429, headers={"Retry-After": after}), OK, monkeypatch=monkeypatch,
                 on_retry=lambda e, w: seen.append(w))
    for _ in range(20):
        await rig()
    await rig()
    assert seen == pytest.approx([wait])  # quick back-off 0.1; floor 0.02


async def test_clients_sharing_limits_share_the_in_flight_cap() -> None:
    clock = VirtualClock()
    pool = LimitsPool(clock=clock)
    ep1, ep2 = endpoint(name="agent", max_concurrency=2), endpoint(name="user", max_concurrency=2)
    assert limits_key(ep1) != limits_key(ep2)  # different model names
    shared = pool.get("acct", ep1)
    transport = MemoryTransport(Answer(body=OK_BODY, delay_s=0.05), clock=clock)
    c1 = ModelClient(ep1, limits=shared, transport=transport)
    c2 = ModelClient(ep2, limits=shared, transport=transport)
    await asyncio.gather(*(c.complete(request()) for c in (c1, c2) for _ in range(4)))
    assert transport.max_in_flight == 2


async def test_rpm_bucket_spaces_requests() -> None:
    # Formerly a wall-clock test that failed under CPU load; the limits' clock is virtual now.
    clock = VirtualClock()
    limits = EndpointLimits(rpm=1200, headroom=1.0, burst_s=0.05, clock=clock)  # 20/s, burst 1
    rig = Rig(limits=limits)
    await asyncio.gather(*(rig() for _ in range(6)))
    gaps = [b - a for a, b in zip(rig.transport.times, rig.transport.times[1:])]
    assert gaps == pytest.approx([0.05] * 5)
    assert clock.now() - 1000.0 == pytest.approx(0.25)


async def test_tpm_bucket_is_corrected_from_usage() -> None:
    clock = VirtualClock()
    limits = EndpointLimits(tpm=60, headroom=1.0, burst_s=1000.0, clock=clock)
    rig = Rig(limits=limits)  # usage: 11 prompt + 3 completion tokens
    body = rig.client.encode(request())
    await rig()
    assert limits.tokens is not None
    # the estimate (body/4) was replaced by the true 14 tokens
    assert limits.tokens.level == pytest.approx(1000.0 - 14, abs=0.5)
    assert limits.estimator.estimate(len(body)) == 14


# ---- body splicing, cache -----------------------------------------------------------------


async def test_conversation_sends_spliced_bodies_identical_to_encode() -> None:
    rig = Rig(temperature=0.1, extra_body={"top_p": 0.9})
    convo = rig.client.conversation()
    messages: list = [UserMessage("hi")]
    for i in range(5):
        req = request(messages=messages[:], tools=TOOLS, sweepbench={"i": i})
        result = await convo(req)
        assert rig.transport.raw[-1] == rig.client.encode(req)
        messages += [result.message, UserMessage(f"again {i}")]
    assert convo.encoder.messages_encoded == len(messages) - 2  # the last two were not sent
    assert rig.bodies[-1]["messages"][-1] == {"role": "user", "content": "again 3"}


async def test_complete_accepts_encoded_bytes() -> None:
    rig = Rig()
    await rig.client.complete(rig.client.encode(request(messages=[UserMessage("raw")])))
    assert rig.bodies[0]["messages"] == [{"role": "user", "content": "raw"}]


async def test_response_cache_hit_is_identical_and_makes_no_call(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    rig = Rig(cache=cache)
    first = await rig()
    again = await rig()
    other = await rig(request(messages=[UserMessage("different")]))
    assert rig.transport.count == 2  # the repeat never reached the server
    assert again.from_cache and not first.from_cache and not other.from_cache
    assert again.attempts == 0 and again.statuses == []
    assert again.message == first.message and again.usage == first.usage
    assert again.response_id == first.response_id and again.model == first.model
    assert len(cache) == 2

    # persisted: a new client (a re-run) is answered from disk; another endpoint is not
    cache2 = ResponseCache(tmp_path / "responses.sqlite")
    assert (await Rig(cache=cache2)()).from_cache
    assert not (await Rig(cache=cache2, base_url="http://elsewhere.invalid/v1")()).from_cache
    cache.close()
    cache2.close()


async def test_failed_calls_are_not_cached(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    rig = Rig(status(400, "bad"), OK, cache=cache)
    with pytest.raises(BadRequestError):
        await rig()
    assert not (await rig()).from_cache
    assert len(cache) == 1
    cache.close()


async def test_unknown_transport_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="transport"):
        ModelClient(endpoint(transport="grpc"))


async def test_health_tells_the_latest_failure_and_breaker_state() -> None:
    rig = Rig(OK, status(500, "melting"), max_retries=0, breaker_threshold=1,
              breaker_cooldown_s=60.0)
    await rig()
    assert rig.client.health()["last_failure"] is None
    rig.clock.advance(3.0)
    with pytest.raises(ServerError):
        await rig()
    health = rig.client.health()
    assert health == {"breaker": "open", "failing": 1, "last_failure": "HTTP 500: melting",
                      "since_ok_s": pytest.approx(3.0)}


# ---- secrets ------------------------------------------------------------------------------

CANARY = "sk-canary-7f3a9c1e5b2d4f6a8c0e"


def _all_text(err: BaseException) -> str:
    return "".join(traceback.format_exception(err)) + repr(err) + str(vars(err))


async def test_api_key_never_leaks(monkeypatch, caplog) -> None:
    monkeypatch.setenv("SWEEPBENCH_TEST_KEY", CANARY)
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    for reply, kw in [
        (status(401, f"Incorrect API key provided: {CANARY}"), {}),
        (status(500, f"upstream said {CANARY}"), {"max_retries": 1}),
        (Answer(body=CANARY.encode()), {"max_retries": 1}),
        (Answer(body={"error": {"message": f"in-band {CANARY}", "code": 502}}),
         {"max_retries": 1}),
    ]:
        rig = Rig(reply, api_key_env="SWEEPBENCH_TEST_KEY", **kw)
        with pytest.raises(ModelError) as info:
            await rig()
        texts.append(_all_text(info.value) + repr(vars(rig.client))
                     + msgspec.json.encode(info.value.failures).decode())
        assert rig.transport.headers[0] == {"Authorization": f"Bearer {CANARY}"}  # it was sent
    result = await Rig(api_key_env="SWEEPBENCH_TEST_KEY")()
    texts.append(repr(result) + msgspec.json.encode(result).decode())
    assert "Incorrect API key provided: [redacted]" in texts[0]
    assert caplog.records, "retries should have been logged at DEBUG"
    texts.append(caplog.text)
    for text in texts:
        assert CANARY not in text


async def test_missing_key_env_is_fatal_without_a_request(monkeypatch) -> None:
    monkeypatch.delenv("SWEEPBENCH_UNSET_KEY", raising=False)
    rig = Rig(api_key_env="SWEEPBENCH_UNSET_KEY")
    with pytest.raises(AuthenticationError, match="SWEEPBENCH_UNSET_KEY"):
        await rig()
    assert rig.transport.count == 0


# ---- helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("2", 2.0), ("0.5", 0.5), ("-3", 0.0), ("soon", None), ("", None), ("nan", None)],
)
def test_retry_after_parsing(value: str, expected: float | None) -> None:
    assert parse_retry_after({"Retry-After": value}) == expected


def test_retry_after_http_date() -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    seconds = parse_retry_after({"Retry-After": format_datetime(when, usegmt=True)})
    assert seconds is not None and 25 <= seconds <= 31


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
