"""ModelClient through its transport seam: an in-memory transport and a virtual clock, so no
test here depends on sockets or on how busy the machine is. What a call sends and returns,
how it passes the endpoint's limits, its body splicing and cache, and its secrets; retries are
in test_retry.py, what answers mean in test_classify.py, the transports over loopback in
transports/."""

from __future__ import annotations

import asyncio
import logging
import traceback

import msgspec
import pytest

from sweepbench.client.cache import ResponseCache
from sweepbench.client.facade import ModelClient, limits_key
from sweepbench.client.limits import EndpointLimits, LimitsPool
from sweepbench.client.results import CallResult
from sweepbench.client.transports.memory import (
    Answer,
    MemoryTransport,
    VirtualClock,
    completion,
)
from sweepbench.config import Endpoint
from sweepbench.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ModelError,
    ServerError,
)
from sweepbench.wire import (
    AssistantMessage,
    FunctionCall,
    ToolCall,
    ToolMessage,
    UserMessage,
)

from .rig import OK, OK_BODY, TOOLS, Rig, endpoint, request, status

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


async def test_cancellation_propagates() -> None:
    rig = Rig(Answer(body=OK_BODY, delay_s=5.0))
    task = asyncio.create_task(rig())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


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


async def test_a_cached_entry_that_is_not_a_response_is_asked_of_the_endpoint(
        tmp_path, caplog) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    rig = Rig(cache=cache)
    first = await rig()
    cache._db.execute("UPDATE responses SET payload = ?", (b"<html>not a reply</html>",))
    with caplog.at_level(logging.WARNING, logger="sweepbench.client.cache"):
        again = await rig()  # not a model error: the endpoint answers instead
        third = await rig()
    assert rig.transport.count == 3 and not again.from_cache and not third.from_cache
    assert again.message == first.message
    assert [m.split(" failed (")[0] for m in caplog.messages] == [
        f"response cache {tmp_path / 'c.sqlite'}"]
    assert "a stored entry is not a response" in caplog.messages[0]
    cache.close()


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
                      "since_ok_s": pytest.approx(3.0), "open_for_s": 0.0, "probe_in_s": 60.0,
                      "max_wait_s": 600.0, "gives_up_in_s": 600.0}
    rig.clock.advance(10.0)  # what it waits for, and until when, as time passes
    assert {k: rig.client.health()[k] for k in ("open_for_s", "probe_in_s", "gives_up_in_s")} \
        == {"open_for_s": 10.0, "probe_in_s": 50.0, "gives_up_in_s": 590.0}


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


def test_the_limits_key_is_the_url_the_account_and_the_model():
    ep = endpoint(base_url="  http://h/v1//  ", api_key_env="KEY_A", model="m-1")
    assert limits_key(ep) == "http://h/v1|KEY_A|m-1"
    assert limits_key(ep, base_url="http://other/v1/") == "http://other/v1|KEY_A|m-1"
    assert limits_key(endpoint(base_url="/v1", model="m")) == "/v1||m"  # no key, no account
    assert limits_key(endpoint(model="m", limits_key="shared")) == "shared"


async def test_health_before_any_answer_and_under_a_second_and_with_no_wait_limit() -> None:
    rig = Rig(status(500, "melting"), OK, status(500, "again"), max_retries=0,
              breaker_threshold=1, breaker_cooldown_s=60.0, breaker_max_wait_s=None)
    with pytest.raises(ServerError):
        await rig()
    assert rig.client.health()["since_ok_s"] is None  # no success yet
    health = rig.client.health()
    assert (health["max_wait_s"], health["gives_up_in_s"]) == (None, None)  # waits forever
    rig.clock.advance(60.0)
    await rig()  # the probe answers: closed again
    rig.clock.advance(0.25)
    assert rig.client.health()["since_ok_s"] == 0.25


async def test_a_wait_about_to_end_gives_up_in_under_a_second() -> None:
    rig = Rig(status(500, "melting"), max_retries=0, breaker_threshold=1, breaker_cooldown_s=60.0,
              breaker_max_wait_s=10.0)
    with pytest.raises(ServerError):
        await rig()
    rig.clock.advance(9.5)
    assert rig.client.health()["gives_up_in_s"] == 0.5


def test_an_endpoint_the_client_cannot_use_is_refused_in_one_exact_line():
    from sweepbench.errors import ConfigError

    cases = [({"base_url": "  "}, "endpoint 'test-model' has no base_url"),
             ({"base_url": "", "name": "scripted/oracle"},
              ("endpoint 'scripted/oracle' has no base_url (scripted: pass the reference "
               "server's URL)")),
             ({"extra_body": {"stream": True, "model": "x", "top_k": 1}},
              "endpoint 'test-model': extra_body may not set model, stream"),
             ({"max_concurrency": 0}, "endpoint 'test-model': max_concurrency must be >= 1")]
    for fields, message in cases:
        with pytest.raises(ConfigError) as info:
            ModelClient(endpoint(**fields))
        assert str(info.value) == message


# ---- the transport an endpoint gets, and what each answer tells the limits (exact) ----------

_PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
               "ALL_PROXY", "no_proxy", "NO_PROXY")


@pytest.mark.parametrize("kind", ["http", "aiohttp", "openai"])
def test_each_transport_is_built_from_the_endpoints_fields(kind, monkeypatch) -> None:
    from sweepbench.client.transports.proxy import Proxy

    for var in _PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
    if kind == "openai":
        pytest.importorskip("openai")
    ep = endpoint(base_url="http://h.invalid/v1/", transport=kind, max_concurrency=7,
                  timeout_s=33.0, connect_timeout_s=4.5, max_reply_bytes=12345,
                  follow_redirects=True, proxy="http://p:3128")
    client = ModelClient(ep)
    t = client._transport
    assert (client.base_url, client.url) == ("http://h.invalid/v1",
                                              "http://h.invalid/v1/chat/completions")
    assert (t._name, t._timeout_s, t._max_bytes, t._follow, t._proxy) == (
        "test-model", 33.0, 12345, True, Proxy("p", 3128))
    if kind == "openai":
        assert (t._base_url, t._timeout.connect) == ("http://h.invalid/v1", 4.5)
        return
    connect = t._connect_timeout_s if kind == "http" else t._timeout.sock_connect
    assert (str(t._url), t._limit, connect, t._proxy_setting) == (
        client.url, 7, 4.5, "http://p:3128")
    assert t._stopping() is False  # the gate is the limits' closing
    client.limits.closed = True
    assert t._stopping() is True


def test_the_client_wires_its_key_clock_cache_identity_and_retry_policy(monkeypatch) -> None:
    import time

    from sweepbench.client.secrets import KEYS

    monkeypatch.setenv("SWEEPBENCH_WIRED_KEY", "sk-wired-0a1b2c3d4e5f6a7b8c9d")
    hook = lambda err, wait: None
    ep = endpoint(api_key_env="SWEEPBENCH_WIRED_KEY", max_retries=4, backups=3, hedge=True,
                  transport="aiohttp")
    client = ModelClient(ep, backoff_base_s=0.7, backoff_max_s=9.0, retry_after_max_s=33.0,
                         on_retry=hook, cache_url="http://first.invalid/v1/")
    assert "sk-wired-0a1b2c3d4e5f6a7b8c9d" not in KEYS.scrub("x sk-wired-0a1b2c3d4e5f6a7b8c9d")
    assert client._now is time.monotonic  # the wall clock's own function
    assert client._cache_identity == "http://first.invalid/v1/chat/completions\naiohttp"
    assert client._backups == 3
    r = client.retry
    assert (r._name, r.limits, r.latency, r.max_retries, r.backoff_base_s, r.backoff_max_s,
            r.retry_after_max_s, r._on_retry) == ("test-model", client.limits,
                                                  client.stalls.latency, 4, 0.7, 9.0, 33.0, hook)
    assert ModelClient(endpoint(backups=3, hedge=False))._backups == 0  # backups need hedging
    rig = Rig()
    assert rig.client._now == rig.clock.now
    assert rig.client._cache_identity == "http://memory.invalid/v1/chat/completions\nhttp"


class Reports:
    """The limits' outcome reports of a client, each with its arguments (the permit left out)."""

    def __init__(self, limits: EndpointLimits, monkeypatch) -> None:
        self.calls: list[tuple] = []
        for name in ("failed", "succeeded", "rate_limited"):
            real = getattr(limits, name)

            def spy(permit, *args, _name=name, _real=real, **kw):
                self.calls.append((_name, args, kw))
                return _real(permit, *args, **kw)

            monkeypatch.setattr(limits, name, spy)


async def test_a_success_reports_its_size_and_tokens_and_teaches_the_latency(monkeypatch):
    rig = Rig(Answer(body=OK_BODY, delay_s=0.25), max_retries=0)
    reports = Reports(rig.limits, monkeypatch)
    size = len(rig.client.encode(request()))
    for _ in range(20):
        await rig()
    assert reports.calls == [("succeeded", (size, 11, 3), {})] * 20
    stalls = rig.client.stalls
    assert stalls.latency.quantile(0.5) == 0.25 and stalls.sizes.quantile(0.5) == size
    assert rig.client.last_ok_at == rig.clock.now() and rig.client.failing == 0


@pytest.mark.parametrize(("reply", "report"), [
    (status(500, "melting"), ("failed", (), {"down": True, "retry_after": None,
                                             "reason": "HTTP 500: melting"})),
    (status(400, "bad"), ("failed", (), {"down": False, "retry_after": None,
                                         "reason": "HTTP 400: bad"})),
    (status(503, "later", {"Retry-After": "9"}),
     ("failed", (), {"down": True, "retry_after": 9.0, "reason": "HTTP 503: later"})),
    (status(503, "much later", {"Retry-After": "500"}),
     ("failed", (), {"down": True, "retry_after": 33.0, "reason": "HTTP 503: much later"})),
    (status(429, "slow", {"Retry-After": "7"}), ("rate_limited", (7.0,), {})),
    (status(429, "slower", {"Retry-After": "500"}), ("rate_limited", (33.0,), {})),
    (status(429, "no hint"), ("rate_limited", (None,), {})),
])
async def test_each_http_failure_is_reported_to_the_limits_once(reply, report, monkeypatch):
    rig = Rig(reply, max_retries=0, retry_after_max_s=33.0)
    reports = Reports(rig.limits, monkeypatch)
    with pytest.raises(ModelError) as info:
        await rig()
    assert reports.calls == [report]
    assert info.value.failures[0].status == reply.status
    assert rig.client.failing == 1 and rig.client.last_failure == info.value.failures[0]


async def test_transport_failures_are_reported_by_kind(monkeypatch):
    from sweepbench.errors import ConnectionRefused, FatalError, TransportError

    refused = ConnectionRefused("test-model: connection refused by x", endpoint="test-model")
    rig = Rig(refused, OK, refused, TransportError("test-model: reset", endpoint="test-model"),
              FatalError("test-model: odd", endpoint="test-model"), max_retries=0)
    reports = Reports(rig.limits, monkeypatch)
    for _ in range(5):
        try:
            await rig()
        except ModelError:
            pass
    assert reports.calls == [
        ("failed", (), {"down": None}),  # nothing answered there yet: no breaker to open
        ("succeeded", (len(rig.client.encode(request())), 11, 3), {}),
        ("failed", (), {"down": True, "reason": "connection refused by x"}),
        ("failed", (), {"down": True, "reason": "reset"}),
        ("failed", (), {"down": False, "reason": "odd"})]
    assert rig.client.last_failure.status == 0 and rig.client.failing == 3


async def test_an_unreadable_or_oversized_reply_is_reported_as_a_failure(monkeypatch):
    from sweepbench.errors import FatalError, InvalidResponseError

    rig = Rig(Answer(body=b"not json"), max_retries=0)
    reports = Reports(rig.limits, monkeypatch)
    with pytest.raises(InvalidResponseError) as info:
        await rig()
    reason = info.value.failures[0].message
    assert reports.calls == [("failed", (), {"down": True, "reason": reason})]
    assert info.value.failures[0].status == 200

    rig = Rig(Answer(body=b"x" * 11), max_retries=0, max_reply_bytes=10)  # a transport not
    reports = Reports(rig.limits, monkeypatch)  # capping its reads: the client does
    with pytest.raises(FatalError) as info:
        await rig()
    assert str(info.value) == ("test-model: reply from http://memory.invalid/v1/chat/completions "
                               "is larger than max_reply_bytes (10); not read further")
    assert reports.calls == [("failed", (), {"down": False, "reason": (
        "reply from http://memory.invalid/v1/chat/completions is larger than max_reply_bytes "
        "(10); not read further")})]
    assert info.value.failures[0].status == 200  # it was answered
    rig = Rig(Answer(body=OK_BODY), max_retries=0, max_reply_bytes=len(msgspec.json.encode(
        OK_BODY)))
    assert (await rig()).message.content == "hello"  # exactly the cap: read


async def test_a_failures_text_loses_the_endpoints_name_and_is_cut_at_300(monkeypatch):
    rig = Rig(status(400, "x" * 400), max_retries=0)
    with pytest.raises(BadRequestError) as info:
        await rig()
    failure = info.value.failures[0]
    assert failure.message == ("HTTP 400: " + "x" * 400)[:300]
    assert (failure.error, failure.status) == ("BadRequestError", 400)


async def test_the_queue_wait_of_every_attempt_is_summed() -> None:
    limits = EndpointLimits(rpm=60, headroom=1.0, burst_s=1.0, clock=VirtualClock())  # 1/s
    rig = Rig(OK, status(500), OK, limits=limits, max_retries=1)
    assert (await rig()).queue_wait_s == 0.0
    result = await rig()  # each of its two requests waits for the next token
    assert result.statuses == [500, 200] and rig.transport.times == [1000.0, 1001.0, 1002.0]
    assert result.queue_wait_s + result.backoff_s == pytest.approx(2.0)


def test_the_limits_key_strips_slashes_only() -> None:
    assert limits_key(endpoint(base_url="http://h/vX/", model="m")) == "http://h/vX||m"


class OnTheWire:
    """A transport: request ``i`` does ``script[i]`` (the last repeats): "hang" (never
    answers), "ok", or an exception to raise. Records each request's headers and flight."""

    def __init__(self, *script) -> None:
        from sweepbench.client.stalls import FLIGHT

        self.script, self.flight_var = script, FLIGHT
        self.headers: list = []
        self.flights: list = []

    async def post(self, body: bytes, headers):
        step = self.script[min(len(self.headers), len(self.script) - 1)]
        self.headers.append(headers)
        self.flights.append(self.flight_var.get())
        if step == "hang":
            await asyncio.sleep(30)
        if isinstance(step, BaseException):
            raise step
        return 200, {}, msgspec.json.encode(OK_BODY)

    async def aclose(self) -> None:
        pass


def on_the_wire(transport: OnTheWire, **kw) -> ModelClient:
    kw.setdefault("max_retries", 0)
    return ModelClient(endpoint(**kw), transport=transport, backoff_base_s=0.001,
                       backoff_max_s=0.001)


def primed(client: ModelClient) -> ModelClient:
    """Latency known at 10 ms a request: hedge delay 20 ms (hedge_min_s), TTFB budget 10 s."""
    from sweepbench.client.stalls import MIN_SAMPLES

    for _ in range(MIN_SAMPLES):
        client.stalls.latency.add(0.01)
    assert client.stalls.hedge_delay() == 0.02 and client.stalls.ttfb_budget() == 10.0
    return client


async def test_the_key_goes_with_every_request_hedged_or_not(monkeypatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_WIRE_KEY", "k-wire")
    keyed = {"Authorization": "Bearer k-wire"}
    plain = OnTheWire("ok")
    client = on_the_wire(plain, hedge=False, api_key_env="SWEEPBENCH_WIRE_KEY")
    for _ in range(3):
        await client.complete(request())
    assert plain.headers == [keyed] * 3 and client.stalls.requests == 3
    raced = OnTheWire("hang", "ok")
    client = primed(on_the_wire(raced, hedge=True, hedge_min_s=0.02,
                                api_key_env="SWEEPBENCH_WIRE_KEY"))
    result = await client.complete(request())
    assert result.hedge_won and raced.headers == [keyed, keyed]  # the copy carries it too
    assert client.stalls.requests == 1  # first copies only


async def test_a_copy_failing_first_fails_the_attempt_with_no_status() -> None:
    from sweepbench.errors import TransportError

    transport = OnTheWire("hang", TransportError("test-model: reset", endpoint="test-model"))
    client = primed(on_the_wire(transport, hedge=True, hedge_min_s=0.02))
    with pytest.raises(TransportError) as info:
        await client.complete(request())
    assert info.value.statuses == [0] and info.value.attempts == 1


async def test_a_flight_carries_its_size_and_is_off_the_wire_after() -> None:
    transport = OnTheWire("ok")
    client = on_the_wire(transport, hedge=False)
    await client.complete(request())
    flight = transport.flights[0]
    assert flight.size == len(client.encode(request()))
    assert flight.deadline is None and flight.stop() is False


async def test_a_hung_request_is_abandoned_naming_the_endpoint_and_its_budget() -> None:
    from sweepbench.errors import FirstByteTimeout

    client = on_the_wire(OnTheWire("hang"), hedge=False, ttfb_floor_s=0.05,
                         ttfb_ceiling_s=0.05)
    with pytest.raises(FirstByteTimeout) as info:
        await asyncio.wait_for(client.complete(request()), 10)
    assert str(info.value) == ("test-model: no response from http://memory.invalid/v1/chat/"
                               "completions within the time-to-first-byte budget (0.05 s); "
                               "abandoned as hung")
    assert info.value.endpoint == "test-model"


async def test_an_open_breaker_names_the_endpoint() -> None:
    from sweepbench.errors import EndpointUnavailableError

    rig = Rig(status(500, "melting"), max_retries=0, breaker_threshold=1,
              breaker_cooldown_s=60.0, breaker_max_wait_s=0.0)
    with pytest.raises(ServerError):
        await rig()
    with pytest.raises(EndpointUnavailableError) as info:
        await rig()
    assert info.value.endpoint == "test-model" and str(info.value).startswith("test-model: ")


async def test_a_3xx_answer_is_an_error_even_with_a_completion_in_it() -> None:
    rig = Rig(Answer(300, OK_BODY), max_retries=0)
    with pytest.raises(ModelError) as info:
        await rig()
    assert info.value.statuses == [300] and info.value.failures[0].status == 300


async def test_every_429_of_a_call_is_counted() -> None:
    rig = Rig(status(429, headers={"Retry-After": "0"}), status(429, headers={"Retry-After": "0"}),
              OK, max_retries=2)
    result = await rig()
    assert result.statuses == [429, 429, 200] and result.rate_limited == 2


def test_the_back_off_defaults_and_the_key_registered_for_scrubbing(monkeypatch) -> None:
    from sweepbench.client import facade
    from sweepbench.client.secrets import KeyRing

    ring = KeyRing()  # a fresh one: the process's own knows every key of earlier tests
    monkeypatch.setattr(facade, "KEYS", ring)
    client = ModelClient(endpoint(api_key_env="SWEEPBENCH_RING_KEY"))
    assert ring._names == ("SWEEPBENCH_RING_KEY",)
    r = client.retry
    assert (r.backoff_base_s, r.backoff_max_s, r.retry_after_max_s) == (0.5, 30.0, 120.0)


def test_the_base_url_checked_is_the_one_used() -> None:
    with pytest.raises(ConfigError) as info:
        ModelClient(endpoint(base_url="http://h/v1"), base_url="ftp://h/v1")
    assert "ftp://h/v1" in str(info.value)
    client = ModelClient(endpoint(base_url="", name="scripted/oracle"),
                         base_url="http://ref.invalid/v1/")
    assert client.url == "http://ref.invalid/v1/chat/completions"


async def test_a_cache_hit_takes_no_time_and_no_latency(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "cache.db")
    rig = Rig(OK, cache=cache)
    await rig()
    rig.clock.advance(5.0)
    hit = await rig()
    assert hit.from_cache and (hit.latency_s, hit.wall_s, hit.attempts) == (0.0, 0.0, 0)
    cache.close()


async def test_a_missing_key_fails_before_any_request_naming_the_endpoint(monkeypatch) -> None:
    monkeypatch.delenv("SWEEPBENCH_UNSET_KEY", raising=False)
    rig = Rig(api_key_env="SWEEPBENCH_UNSET_KEY")
    with pytest.raises(AuthenticationError) as info:
        await rig()
    assert (info.value.endpoint, info.value.attempts) == ("test-model", 0)
    assert str(info.value) == ("endpoint 'test-model': environment variable "
                               "SWEEPBENCH_UNSET_KEY is not set")


async def test_a_retried_request_carries_the_key_too(monkeypatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_RETRY_KEY", "k-retry")
    rig = Rig(status(500), OK, api_key_env="SWEEPBENCH_RETRY_KEY", hedge=False)
    assert (await rig()).statuses == [500, 200]
    assert rig.transport.headers == [{"Authorization": "Bearer k-retry"}] * 2


async def test_an_unreadable_reply_names_the_url_in_its_failure() -> None:
    rig = Rig(Answer(body=b"not json"), max_retries=0)
    with pytest.raises(ModelError) as info:
        await rig()
    failure = info.value.failures[0]
    assert failure.error == type(info.value).__name__ == "InvalidResponseError"
    assert "http://memory.invalid/v1/chat/completions" in failure.message
    assert not failure.message.startswith("test-model: ")


def test_a_fleets_cache_url_loses_its_slashes_only() -> None:
    client = ModelClient(endpoint(), cache_url="http://first.invalid/vX//")
    assert client._cache_identity == "http://first.invalid/vX/chat/completions\nhttp"


async def test_a_bad_cached_entry_gives_the_cache_up_naming_the_endpoint_and_url(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    rig = Rig(cache=cache)
    await rig()
    cache._db.execute("UPDATE responses SET payload = ?", (b"<html>not a reply</html>",))
    await rig()
    assert cache.broken.startswith("a stored entry is not a response: test-model: ")
    assert "http://memory.invalid/v1/chat/completions" in cache.broken
    cache.close()


def test_the_base_url_loses_its_slashes_only() -> None:
    assert ModelClient(endpoint(base_url="http://h/vX//")).base_url == "http://h/vX"


async def test_every_hung_request_of_a_call_is_counted() -> None:
    from sweepbench.errors import FirstByteTimeout

    client = on_the_wire(OnTheWire("hang"), hedge=False, max_retries=1, ttfb_floor_s=0.05,
                         ttfb_ceiling_s=0.05, timeout_s=5.0)
    with pytest.raises(FirstByteTimeout) as info:
        await asyncio.wait_for(client.complete(request()), 10)
    assert info.value.hung == 2 and info.value.attempts == 2  # 0.05 s, then 0.1 s
