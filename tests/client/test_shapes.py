"""Provider response shapes, one test per fixture (``tests/fixtures/providers/``, written from
each server's docs and source, plus bodies captured from a real llama-cpp-python server).

Every 2xx fixture goes through the client (in-memory transport) and must decode to the
fixture's content, reasoning, tool calls and usage; every malformed one must fail with an
``InvalidResponseError`` naming the endpoint and what is wrong; every error body must be
classified: a context overflow as ``ContextLengthError`` (never retried), anything else not.
A fixture's ``expect`` uses null for "absent in the body"; our Usage stores 0 for those.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from sweepbench.config import Endpoint
from sweepbench.errors import (
    BadRequestError,
    ContextLengthError,
    InvalidResponseError,
    ModelError,
    RetryableError,
    ServerError,
)
from sweepbench.client.facade import ModelClient
from sweepbench.client.shapes import ShapeError, decode_reply, error_text, is_context_overflow
from sweepbench.client.transports.memory import Answer, MemoryTransport, VirtualClock
from sweepbench.client.limits import EndpointLimits
from sweepbench.wire import AssistantMessage, ChatRequest, ToolMessage, UserMessage

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "providers"
ALL = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.json"))}
REPLIES = sorted(n for n, f in ALL.items() if f["status"] == 200 and f["tier"] != "reject")
REJECTS = sorted(n for n, f in ALL.items() if f["tier"] == "reject")
ERRORS = sorted(n for n, f in ALL.items() if f["status"] != 200)

# What our message must name for each malformed body (the place or the thing that is wrong).
REJECT_SAYS = {
    "reject_body_is_list": "Expected `object`, got `array`",
    "reject_body_not_json": "not a JSON object",
    "reject_choices_empty": "`choices` is empty",
    "reject_choices_missing": "no `choices`",
    "reject_choices_null": "no `choices`",
    "reject_content_int": "$.choices[0].message.content",
    "reject_content_object": "$.choices[0].message.content",
    "reject_custom_tool_call": "tool call 0 has type 'custom'",
    "reject_error_object_with_200": "Provider returned error",
    "reject_message_missing": "missing required field `message` - at `$.choices[0]`",
    "reject_message_null": "$.choices[0].message",
    "reject_role_not_assistant": "$.choices[0].message.role",
    "reject_tool_call_args_array": "$.choices[0].message.tool_calls[0].function.arguments",
    "reject_tool_call_args_number": "$.choices[0].message.tool_calls[0].function.arguments",
    "reject_tool_call_empty_name": "tool call 0 has an empty function name",
    "reject_tool_call_no_function": "tool call 0 has no `function` object",
    "reject_tool_call_no_function_name": "tool call 0 has no function name",
    "reject_tool_calls_not_list": "$.choices[0].message.tool_calls",
    "reject_usage_absurd": "<= 100000000 - at `$.usage.prompt_tokens`",
    "reject_usage_float": "$.usage.prompt_tokens",
    "reject_usage_negative": ">= 0 - at `$.usage.prompt_tokens`",
    "reject_usage_string": "$.usage.prompt_tokens",
}


def payload(fixture: dict) -> bytes:
    body = fixture["body"]
    return body.encode() if isinstance(body, str) else json.dumps(body).encode()


def client(*replies: Answer, **kw) -> tuple[ModelClient, MemoryTransport]:
    clock = VirtualClock()
    ep = Endpoint(name="prov-ep", base_url="http://provider.invalid/v1", **kw)
    transport = MemoryTransport(*replies, clock=clock)
    return ModelClient(ep, transport=transport, limits=EndpointLimits.for_endpoint(
        ep, clock=clock), backoff_base_s=0.001, backoff_max_s=0.01), transport


def _args(text: str):
    """Arguments compared as JSON; text the model cut short stays text (the tool layer says
    it is invalid)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def request() -> ChatRequest:
    return ChatRequest(model="m", messages=[UserMessage("hi")])


def test_the_fixtures_are_all_here() -> None:
    assert len(ALL) == 112 and len(REPLIES) == 63 and len(REJECTS) == 22 and len(ERRORS) == 27
    assert set(REJECT_SAYS) == set(REJECTS)


@pytest.mark.parametrize("name", REPLIES)
async def test_reply_decodes(name: str) -> None:
    fx = ALL[name]
    exp, body = fx["expect"], fx["body"]
    c, _ = client(Answer(body=payload(fx)))
    result = await c.complete(request())
    msg = result.message

    assert msg.content == exp["content"]
    assert msg.reasoning == exp["reasoning"]
    calls = msg.tool_calls or []
    assert [(tc.function.name, _args(tc.function.arguments)) for tc in calls] == \
        [(tc["name"], _args(tc["arguments"])) for tc in exp["tool_calls"]]
    ids = [tc.id for tc in calls]
    assert all(ids) and len(set(ids)) == len(ids)  # present and unique, whatever was sent
    if "tool_call_ids" in exp:
        assert ids == exp["tool_call_ids"]
    if exp.get("synthesize_ids") or exp.get("unique_ids"):  # the same body, the same ids
        again, _ = client(Answer(body=payload(fx)))
        assert [tc.id for tc in (await again.complete(request())).message.tool_calls] == ids

    usage = body.get("usage") or {}
    hidden = 0  # thinking counted only in total_tokens (Gemini): added to the completion
    if exp["reasoning_tokens"] is None and all(
            isinstance(usage.get(k), int) for k in ("total_tokens", "prompt_tokens",
                                                    "completion_tokens")):
        hidden = max(0, usage["total_tokens"] - usage["prompt_tokens"]
                     - usage["completion_tokens"])
    assert hidden == 0 or name.startswith("gemini")
    u = result.usage
    assert u.prompt_tokens == (exp["prompt_tokens"] or 0)
    assert u.completion_tokens == (exp["completion_tokens"] or 0) + hidden
    assert u.cached_prompt_tokens == (exp["cached_tokens"] or 0)
    assert u.reasoning_tokens == (exp["reasoning_tokens"] or 0) + hidden
    assert result.finish_reason == exp["finish_reason"]
    assert result.truncated is exp["truncated"]


def test_opaque_fields_survive_for_send_back() -> None:
    gemini = decode_reply(payload(ALL["gemini_compat_tool"])).message
    assert gemini.tool_calls[0].extra_content == {
        "google": {"thought_signature": "CuIBAdHtim9sZ3Jh1+fixtureonlyQWERTY=="}}
    assert gemini.tool_calls[1].extra_content is None
    router = decode_reply(payload(ALL["openrouter_reasoning"])).message
    assert router.reasoning_details == ALL["openrouter_reasoning"]["body"]["choices"][0][
        "message"]["reasoning_details"]


async def test_sent_back_as_received() -> None:
    # the tool loop's next request carries Gemini's signature always, OpenRouter's
    # reasoning_details when the endpoint sends reasoning back
    for name, send in (("gemini_compat_tool", False), ("openrouter_reasoning", True)):
        fx = ALL[name]
        c, transport = client(Answer(body=payload(fx)), send_reasoning=send)
        first = await c.complete(request())
        followup = ChatRequest(model="m", messages=[
            UserMessage("hi"), first.message,
            *(ToolMessage(tc.id, "ok") for tc in first.message.tool_calls)])
        await c.complete(followup)
        sent = transport.bodies[1]["messages"][1]
        got = fx["body"]["choices"][0]["message"]
        if name == "gemini_compat_tool":
            assert sent["tool_calls"][0]["extra_content"] == got["tool_calls"][0]["extra_content"]
            assert "reasoning_content" not in sent
        else:
            assert sent["reasoning_details"] == got["reasoning_details"]
            assert sent["reasoning_content"] == got["reasoning"]


@pytest.mark.parametrize("name", REJECTS)
async def test_malformed_reply_is_a_clear_error_naming_the_endpoint(name: str) -> None:
    fx = ALL[name]
    c, transport = client(Answer(body=payload(fx)), max_retries=1)
    with pytest.raises(ModelError) as info:
        await c.complete(request())
    text = str(info.value)
    assert text.startswith("prov-ep: ")
    assert REJECT_SAYS[name] in text
    if name == "reject_error_object_with_200":  # code 502 inside: an upstream failure
        assert isinstance(info.value, ServerError) and "HTTP 502" in text
    else:
        assert isinstance(info.value, InvalidResponseError)
        assert "http://provider.invalid/v1/chat/completions" in text
    assert transport.count == 2  # retryable: a flaky proxy may answer properly next time
    with pytest.raises(ShapeError):
        decode_reply(payload(fx))


@pytest.mark.parametrize("name", ERRORS)
async def test_error_body_is_classified(name: str) -> None:
    fx = ALL[name]
    exp, status = fx["expect"], fx["status"]
    c, transport = client(Answer(status, payload(fx)), max_retries=3)
    with pytest.raises(ModelError) as info:
        await c.complete(request())
    err = info.value
    assert (type(err) is ContextLengthError) is exp["context_overflow"]
    assert is_context_overflow(status, error_text(fx["body"])) is exp["context_overflow"]
    assert str(err).startswith(f"prov-ep: HTTP {status}: ")
    if exp["context_overflow"] or status == 400:
        assert isinstance(err, (ContextLengthError, BadRequestError))
        assert transport.count == 1  # never retried
    else:
        assert isinstance(err, RetryableError) and transport.count == 4
    message = error_text(fx["body"], ("message",))
    if message:
        assert message[:60] in str(err)  # the server's own words
    else:  # llama-cpp-python's 500 with an empty message still says something
        assert str(err) == "prov-ep: HTTP 500: internal_server_error"


def test_usage_bounds_and_hidden_reasoning() -> None:
    def usage(**u):
        body = {"choices": [{"message": {"role": "assistant", "content": "x"}}], "usage": u}
        return decode_reply(msgspec.json.encode(body)).usage

    assert usage(prompt_tokens=100_000_000).prompt_tokens == 100_000_000
    for bad in (100_000_001, -1, 10**12):
        with pytest.raises(ShapeError, match="prompt_tokens"):
            usage(prompt_tokens=bad)
    with pytest.raises(ShapeError, match="reasoning_tokens"):
        usage(completion_tokens_details={"reasoning_tokens": -3})
    u = usage(prompt_tokens=10, completion_tokens=5, total_tokens=40)
    assert (u.completion_tokens, u.reasoning_tokens) == (30, 25)
    u = usage(prompt_tokens=10, completion_tokens=50, total_tokens=60,
              completion_tokens_details={"reasoning_tokens": 30})
    assert (u.completion_tokens, u.reasoning_tokens) == (50, 30)  # already inside: not added
    assert usage(prompt_tokens=10, prompt_cache_hit_tokens=99).cached_prompt_tokens == 10


def test_content_parts_and_inline_thoughts() -> None:
    def msg(content) -> AssistantMessage:
        body = {"choices": [{"message": {"content": content}}]}
        return decode_reply(msgspec.json.encode(body)).message

    parts = msg([{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]},
                 {"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}},
                 {"type": "text", "text": "b"}])
    assert (parts.content, parts.reasoning) == ("a\nb", "hmm")
    with pytest.raises(ShapeError, match=r"content\[0\]"):
        msg([3])
    thought = msg("<thought>plan</thought>answer")
    assert (thought.content, thought.reasoning) == ("answer", "plan")
    assert msg("no <thought>inline</thought> here").reasoning is None


def test_an_error_in_a_2xx_body_is_read_in_its_own_words():
    from sweepbench.client.shapes import InBandError, decode_reply

    with pytest.raises(InBandError) as err:
        decode_reply(b'{"error": {"message": "Overloaded", "type": "server_error", "code": 503}}')
    assert (str(err.value), err.value.status) == (
        "a 2xx carrying an error: Overloaded | server_error | code 503", 503)
    with pytest.raises(InBandError) as err:
        decode_reply(b'{"error": "rate limited"}')
    assert (str(err.value), err.value.status) == ("a 2xx carrying an error: rate limited", None)


def _reply_with(field: str, depth: int) -> bytes:
    deep = "[" * depth + "]" * depth
    return (f'{{"choices": [{{"message": {{"role": "assistant", "content": "x", '
            f'"{field}": {deep}}}}}]}}').encode()


def test_a_body_nested_deeper_than_any_reader_goes_is_no_reply():
    # reasoning_details nested 500 deep decode (msgspec reaches ~1,000) and would be stored,
    # for every later reader (viewer, exports) to recurse on at a deeper stack
    with pytest.raises(ShapeError, match="^JSON nested deeper than 128 levels$"):
        decode_reply(_reply_with("reasoning_details", 500))
    assert decode_reply(_reply_with("reasoning_details", 120)).message.content == "x"
    # arguments sent as an object (Ollama) are kept as compact text, for the tools to judge
    args = "[" * 64 + "]" * 64
    body = ('{"choices": [{"message": {"tool_calls": [{"function": {"name": "f", "arguments": '
            f'{{"a": {args}}}}}}}]}}}}]}}').encode()
    assert decode_reply(body).message.tool_calls[0].function.arguments == f'{{"a":{args}}}'


# ---- decode_reply at its edges (unit tests, exact values) ------------------------------------

def _decode(message: dict, **body) -> object:
    return decode_reply(msgspec.json.encode({"choices": [{"message": message}], **body}))


def test_content_parts_each_kind_read_exactly() -> None:
    thinking = [{"type": "thinking", "thinking": "first"},
                {"type": "thinking", "thinking": ["no dict", {"type": "x"}, {"text": 5},
                                                  {"text": "second"}]},
                {"type": "thinking", "thinking": 7}]
    texts = ["bare", {"type": "text", "text": "typed"}, {"type": "text", "text": 9},
             {"type": "image_url", "text": "a caption, not the answer"}]
    msg = _decode({"content": [*thinking, *texts]}).message
    assert (msg.content, msg.reasoning) == ("bare\ntyped", "first\nsecond")
    with pytest.raises(ShapeError) as err:
        _decode({"content": ["ok", 3]})
    assert str(err.value) == "message.content[1] is int, not a part object"


def test_reasoning_sources_in_order() -> None:
    details = [{"type": "reasoning.text", "text": "t"}, {"type": "reasoning.summary", "summary": "s"},
               {"type": "reasoning.encrypted", "text": "hidden"}, {"type": "reasoning.text", "text": ""},
               {"type": "reasoning.text", "text": 5}, "not a dict"]
    assert _decode({"content": "x", "reasoning_details": details}).message.reasoning == "t\ns"
    # a reasoning field wins over the details, which are kept as sent
    msg = _decode({"content": "x", "reasoning": "r", "reasoning_details": details}).message
    assert (msg.reasoning, msg.reasoning_details) == ("r", details)
    assert _decode({"content": "x", "reasoning_details": []}).message.reasoning is None
    thought = _decode({"content": " \n<thought>plan</thought> answer"}).message
    assert (thought.content, thought.reasoning) == ("answer", "plan")


def test_tool_call_ids_replaced_from_the_body_digest() -> None:
    calls = [{"function": {"name": "a", "arguments": "{}"}},
             {"id": "x", "function": {"name": "b", "arguments": ""}},
             {"id": "x", "function": {"name": "c"}}, {"id": "", "name": "d", "arguments": {"k": 1}}]
    body = msgspec.json.encode({"choices": [{"message": {"tool_calls": calls}}]})
    import hashlib
    digest = hashlib.blake2b(body, digest_size=6).hexdigest()
    got = decode_reply(body).message.tool_calls
    assert [(c.id, c.function.name, c.function.arguments) for c in got] == [
        (f"call_{digest}_0", "a", "{}"), ("x", "b", "{}"), (f"call_{digest}_2", "c", "{}"),
        (f"call_{digest}_3", "d", '{"k":1}')]
    with pytest.raises(ShapeError) as err:
        _decode({"tool_calls": [{"type": "custom", "function": {"name": "a"}}]})
    assert str(err.value) == "tool call 0 has type 'custom'; only function tools are supported"


def test_undecodable_bodies_say_why_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ShapeError) as err:
        decode_reply(b'{"choices": [{"message": {"content": "abc\xff"}}]}')
    assert str(err.value) == "invalid UTF-8 at byte 3"
    for body, says in ((b'{"id": "r"}', "no `choices` in the body"),
                       (b'{"choices": null}', "no `choices` in the body"),
                       (b'{"choices": []}', "`choices` is empty")):
        with pytest.raises(ShapeError) as err:
            decode_reply(body)
        assert str(err.value) == says
    # past the depth check (taken away here), the decoder's own recursion limit is a ShapeError
    from sweepbench.client import shapes
    monkeypatch.setattr(shapes, "deeper_than", lambda payload, depth: False)
    with pytest.raises(ShapeError) as err:
        decode_reply(b'{"x": ' + b"[" * 200_000 + b"]" * 200_000 + b"}")
    assert str(err.value) == "JSON nested too deeply"


@pytest.mark.parametrize("code, status", [(399, None), (400, 400), (599, 599), (600, None),
                                          ("502", None), (True, None)])
def test_in_band_error_status_only_a_4xx_or_5xx_code(code, status) -> None:
    from sweepbench.client.shapes import InBandError

    with pytest.raises(InBandError) as err:
        decode_reply(msgspec.json.encode({"error": {"message": "m", "code": code}}))
    assert err.value.status == status


def test_in_band_error_without_words_shows_the_object() -> None:
    from sweepbench.client.shapes import InBandError

    error = {"detail": "d" * 300}
    with pytest.raises(InBandError) as err:
        decode_reply(msgspec.json.encode({"error": error}))
    assert err.value.text == repr(error)[:200] and len(err.value.text) == 200


def test_the_choice_of_index_0_and_the_ids() -> None:
    def choice(index, text):
        return {"index": index, "message": {"content": text}}

    body = {"id": "chatcmpl-1", "model": "m-1", "choices": [choice(1, "one"), choice(0, "zero")]}
    reply = decode_reply(msgspec.json.encode(body))
    assert (reply.message.content, reply.response_id, reply.model) == ("zero", "chatcmpl-1", "m-1")
    reply = decode_reply(msgspec.json.encode({"choices": [choice(2, "two"), choice(1, "one")]}))
    assert (reply.message.content, reply.response_id, reply.model) == ("two", "", "")
