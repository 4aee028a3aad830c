"""Body splicing: byte-identical to msgspec's encoding, and O(new messages) work per call."""

from __future__ import annotations

import random

import msgspec
import pytest

from sweepbench.client.body import BodyTemplate
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    FunctionCall,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
    encoder,
)

TEXTS = ["", "hi", 'quote " and \\ backslash', "ünïcödé 日本語 🚀", "line\nbreak\ttab",
         "</script>", "\u2028\u2029", "x" * 300]


def random_message(rng: random.Random, i: int) -> Message:
    kind = rng.randrange(4)
    text = rng.choice(TEXTS) + str(i)
    if kind == 0:
        return UserMessage(text)
    if kind == 1:
        calls = None
        if rng.random() < 0.5:
            calls = [ToolCall(id=f"call_{i}_{k}", function=FunctionCall(
                name=f"tool_{k}", arguments=msgspec.json.encode({"q": text, "n": k}).decode()))
                for k in range(rng.randrange(1, 3))]
        return AssistantMessage(content=None if calls and rng.random() < 0.5 else text,
                                tool_calls=calls)
    if kind == 2:
        return ToolMessage(tool_call_id=f"call_{i}", content=text,
                           name="tool" if rng.random() < 0.3 else None)
    return SystemMessage(text)


def random_tools(rng: random.Random) -> list[ToolSpec]:
    return [ToolSpec(function={"name": f"t{k}", "description": rng.choice(TEXTS),
                               "parameters": {"type": "object", "properties": {
                                   "a": {"type": "string"}}, "required": ["a"]}})
            for k in range(rng.randrange(0, 4))]


TEMPLATES = {
    "plain": dict(model="gpt-x"),
    "defaults": dict(model="m", defaults={"temperature": 0.2, "max_tokens": 64}),
    "extra": dict(model="m", defaults={"temperature": 0.2, "max_tokens": 64},
                  extra_body={"max_tokens": 9, "top_p": 0.5, "reasoning": {"effort": "low"}}),
    "scripted": dict(model="scripted/oracle", keep_sweepbench=True),
    "odd-model": dict(model='we"ird","messages":[]'),
}


@pytest.mark.parametrize("name", list(TEMPLATES))
@pytest.mark.parametrize("seed", range(8))
def test_spliced_body_is_byte_identical(name: str, seed: int) -> None:
    rng = random.Random(seed)
    template = BodyTemplate(**TEMPLATES[name])
    splicer = template.splicer()
    tools = random_tools(rng) if rng.random() < 0.7 else None
    messages: list[Message] = [SystemMessage("You are an agent.")]
    for i in range(25):
        for _ in range(rng.randrange(1, 4)):
            messages.append(random_message(rng, i))
        req = ChatRequest(
            model="ignored", messages=messages[:], tools=tools,
            temperature=rng.choice([None, 0.0, 0.7]), max_tokens=rng.choice([None, 5]),
            seed=rng.choice([None, 3]),
            sweepbench=rng.choice([None, {"role": "agent", "trial": i}]))
        spliced = splicer.encode(req)
        assert spliced == template.plain(req)
        msgspec.json.decode(spliced)  # valid JSON
        if name == "plain":  # no endpoint rules: exactly msgspec's encoding of the request
            expected = msgspec.structs.replace(req, model="gpt-x", sweepbench=None)
            assert spliced == encoder.encode(expected)


def test_plain_template_matches_msgspec_of_request() -> None:
    req = ChatRequest(model="m", messages=[UserMessage("hi")], tools=[],
                      temperature=0.5, seed=1)
    assert BodyTemplate(model="m").plain(req) == encoder.encode(req)
    assert BodyTemplate(model="m").splicer().encode(req) == encoder.encode(req)


def test_each_message_is_encoded_once_per_conversation(monkeypatch) -> None:
    template = BodyTemplate(model="m", defaults={"temperature": 0.1})
    splicer = template.splicer()
    tools = [ToolSpec(function={"name": "f"})]
    messages: list[Message] = [SystemMessage("sys")]
    rng = random.Random(1)
    per_call: list[int] = []
    for i in range(200):
        messages.append(random_message(rng, i))
        before = splicer.messages_encoded
        splicer.encode(ChatRequest(model="", messages=messages[:], tools=tools))
        per_call.append(splicer.messages_encoded - before)
    assert per_call[0] == 2 and set(per_call[1:]) == {1}  # only the new message each call
    assert splicer.messages_encoded == len(messages)
    assert template.tools_encoded == 1

    # count every call into msgspec: constant per call, however long the conversation
    calls = {"n": 0}
    real = encoder.encode

    class Counting:
        def encode(self, obj):
            calls["n"] += 1
            return real(obj)

    import sweepbench.client.body as body_mod

    monkeypatch.setattr(body_mod, "encoder", Counting())
    counts = []
    for i in range(50):
        messages.append(UserMessage(f"more {i}"))
        calls["n"] = 0
        splicer.encode(ChatRequest(model="", messages=messages[:], tools=tools))
        counts.append(calls["n"])
    assert max(counts) <= 2  # the new message + the small tail


def test_tools_encoded_once_per_list_across_conversations() -> None:
    template = BodyTemplate(model="m")
    tools = [ToolSpec(function={"name": "f"})]
    for _ in range(5):
        template.splicer().encode(ChatRequest(model="", messages=[UserMessage("a")],
                                              tools=tools))
    assert template.tools_encoded == 1
    other = [ToolSpec(function={"name": "g"})]
    body = template.splicer().encode(ChatRequest(model="", messages=[], tools=other))
    assert b'"g"' in body and template.tools_encoded == 2


def test_diverging_conversation_is_re_encoded_from_the_divergence() -> None:
    template = BodyTemplate(model="m")
    splicer = template.splicer()
    a = [SystemMessage("s"), UserMessage("1"), AssistantMessage("2"), UserMessage("3")]
    splicer.encode(ChatRequest(model="", messages=a))
    assert splicer.messages_encoded == 4
    b = a[:2] + [AssistantMessage("other"), UserMessage("x"), UserMessage("y")]
    req = ChatRequest(model="", messages=b)
    assert splicer.encode(req) == template.plain(req)
    assert splicer.messages_encoded == 7  # three re-encoded from position 2
    short = ChatRequest(model="", messages=b[:1])
    assert splicer.encode(short) == template.plain(short)
    empty = ChatRequest(model="", messages=[])
    assert splicer.encode(empty) == template.plain(empty)
    fresh = ChatRequest(model="", messages=[UserMessage("new")])
    assert splicer.encode(fresh) == template.plain(fresh)


# ---- what an endpoint's template shapes (issue 15) ------------------------------------------


def _turn(reasoning=None, details=None, content=None) -> list[Message]:
    call = ToolCall("c1", FunctionCall("f", "{}"))
    return [SystemMessage("s"), UserMessage("u"),
            AssistantMessage(content, [call], reasoning=reasoning, reasoning_details=details),
            ToolMessage("c1", "r"), AssistantMessage("done", reasoning="because")]


SHAPED = {
    "strip": dict(model="m"),
    "send-back": dict(model="m", reasoning_field="reasoning_content"),
    "ollama": dict(model="m", reasoning_field="reasoning", empty_content=""),
    "budget": dict(model="m", defaults={"max_tokens": 64, "tool_choice": "auto"},
                   budget_field="max_completion_tokens"),
}


@pytest.mark.parametrize("name", list(SHAPED))
@pytest.mark.parametrize("reasoning", [None, "r1"])
def test_shaped_bodies_are_spliced_identically(name: str, reasoning) -> None:
    template = BodyTemplate(**SHAPED[name])
    splicer = template.splicer()
    messages = _turn(reasoning, [{"type": "reasoning.text", "text": "t"}] if reasoning else None)
    for n in range(2, len(messages) + 1):
        req = ChatRequest(model="", messages=messages[:n],
                          tools=[ToolSpec(function={"name": "f"})] if n % 2 else None)
        assert splicer.encode(req) == template.plain(req)


def test_reasoning_is_stripped_unless_sent_back() -> None:
    req = ChatRequest(model="", messages=_turn("thought", [{"type": "reasoning.text"}]))
    strip = msgspec.json.decode(BodyTemplate(model="m").plain(req))["messages"]
    assert strip[2] == {"role": "assistant", "tool_calls": [  # "type" always sent
        {"id": "c1", "function": {"name": "f", "arguments": "{}"}, "type": "function"}]}
    assert strip[4] == {"role": "assistant", "content": "done"}
    back = msgspec.json.decode(BodyTemplate(model="m", reasoning_field="reasoning_content",
                                            empty_content="").plain(req))["messages"]
    assert back[2]["content"] == "" and back[2]["reasoning_content"] == "thought"
    assert back[2]["reasoning_details"] == [{"type": "reasoning.text"}]
    assert back[4] == {"role": "assistant", "content": "done", "reasoning_content": "because"}


def test_tool_choice_and_budget_defaults() -> None:
    template = BodyTemplate(model="m", defaults={"max_tokens": 64, "tool_choice": "auto"})
    with_tools = ChatRequest(model="", messages=[UserMessage("u")],
                             tools=[ToolSpec(function={"name": "f"})])
    body = msgspec.json.decode(template.plain(with_tools))
    assert body["tool_choice"] == "auto" and body["max_tokens"] == 64
    assert "tool_choice" not in msgspec.json.decode(
        template.plain(ChatRequest(model="", messages=[UserMessage("u")])))
    mine = msgspec.structs.replace(with_tools, tool_choice="none")
    assert msgspec.json.decode(template.plain(mine))["tool_choice"] == "none"
    extra = BodyTemplate(model="m", defaults={"tool_choice": "auto"},
                         extra_body={"tool_choice": "required"})
    raw = extra.plain(with_tools)
    assert raw.count(b'"tool_choice"') == 1 and msgspec.json.decode(raw)["tool_choice"] == \
        "required"  # extra_body wins, once
    with pytest.raises(ValueError, match="budget field"):
        BodyTemplate(model="m", budget_field="max_output_tokens")


# ---- bytes shared with the call journal, and the cached tail (issue 12) ---------------------


@pytest.mark.parametrize("name", list(TEMPLATES) + [f"shaped-{n}" for n in SHAPED])
@pytest.mark.parametrize("seed", range(4))
def test_plain_bytes_are_each_message_as_the_wire_encoder_gives_it(name: str, seed: int) -> None:
    rng = random.Random(seed)
    kwargs = SHAPED[name[7:]] if name.startswith("shaped-") else TEMPLATES[name]
    splicer = BodyTemplate(**kwargs).splicer()
    messages: list[Message] = [SystemMessage("s")] + _turn("why", [{"type": "reasoning.text"}])
    for i in range(20):
        messages.append(random_message(rng, i))
        if rng.random() < 0.2:  # a conversation that diverges is re-synced from there
            messages = messages[:rng.randrange(1, len(messages))] + [UserMessage(f"new {i}")]
        splicer.sync(messages[:])
        assert [splicer.plain(k) for k in range(len(messages))] == [
            encoder.encode(m) for m in messages]


def test_tail_follows_every_change_of_the_fields_after_the_messages() -> None:
    template = BodyTemplate(model="m", keep_sweepbench=True)
    splicer = template.splicer()
    messages: list[Message] = [UserMessage("a")]
    tools = [ToolSpec(function={"name": "f"})]
    for fields in ({}, {"temperature": 1}, {"temperature": 1.0}, {"temperature": 1.0},
                   {"seed": 3, "tool_choice": "auto"}, {"tool_choice": {"type": "function"}},
                   {"sweepbench": {"trial": 1}}, {"sweepbench": {"trial": 1.0}},
                   {"sweepbench": {"trial": 2}}, {}):
        for with_tools in (tools, tools, None, [], []):
            messages.append(UserMessage("more"))
            req = ChatRequest(model="", messages=messages[:], tools=with_tools, **fields)
            assert splicer.encode(req) == template.plain(req)
    for value in (1, 1.0, -0.0, 0.0, 0, 1):  # equal in Python, not in JSON
        for tail in ({"temperature": value}, {"sweepbench": {"trial": value}}):
            req = ChatRequest(model="", messages=messages[:], tools=tools, **tail)
            assert splicer.encode(req) == template.plain(req)


# ---- reasoning sent back by a benchmark's rule (VitaBench's updated release) -----------------


@pytest.mark.parametrize("name", list(SHAPED) + ["scripted"])
def test_a_request_that_resends_reasoning_is_spliced_identically(name: str) -> None:
    template = BodyTemplate(**(TEMPLATES[name] if name == "scripted" else SHAPED[name]))
    splicer = template.splicer()
    messages = _turn("r1", [{"type": "reasoning.text", "text": "t"}])
    for n, resend in enumerate([None, "reasoning_content", "reasoning_content", None,
                                "reasoning", "reasoning_content"] * 2):
        messages = messages + [AssistantMessage(f"a{n}", reasoning=f"why {n}" if n % 2 else "")]
        req = ChatRequest(model="", messages=messages[:], resend_reasoning=resend)
        assert splicer.encode(req) == template.plain(req)
        assert b"resend_reasoning" not in template.plain(req)


def test_resent_reasoning_goes_on_each_message_that_has_some_and_nowhere_else() -> None:
    messages = _turn("thought", [{"type": "reasoning.text"}]) + [AssistantMessage("x",
                                                                                 reasoning="")]
    req = ChatRequest(model="", messages=messages, resend_reasoning="reasoning_content")
    body = BodyTemplate(model="m").plain(req)
    sent = msgspec.json.decode(body)["messages"]
    assert sent[2] == {"role": "assistant", "tool_calls": [
        {"id": "c1", "function": {"name": "f", "arguments": "{}"}, "type": "function"}],
        "reasoning_content": "thought"}  # after tool_calls, as upstream adds it; no details
    assert sent[4] == {"role": "assistant", "content": "done", "reasoning_content": "because"}
    assert sent[5] == {"role": "assistant", "content": "x"}
    assert body.count(b"reasoning") == 2
    # an endpoint that sends reasoning back itself keeps its own shape
    ollama = msgspec.json.decode(BodyTemplate(**SHAPED["ollama"]).plain(req))["messages"]
    assert ollama[2] == {"role": "assistant", "content": "", "tool_calls": sent[2]["tool_calls"],
                         "reasoning": "thought", "reasoning_details": [{"type": "reasoning.text"}]}


def test_turning_resent_reasoning_on_re_encodes_from_the_first_message_with_some() -> None:
    template = BodyTemplate(model="m")
    splicer = template.splicer()
    messages: list[Message] = [SystemMessage("s"), UserMessage("u"), AssistantMessage("a")]
    splicer.encode(ChatRequest(model="", messages=messages[:]))
    splicer.encode(ChatRequest(model="", messages=messages[:], resend_reasoning="r"))
    assert splicer.messages_encoded == 3  # nothing it shapes: nothing re-encoded
    messages += [AssistantMessage("b", reasoning="why"), UserMessage("v")]
    splicer.encode(ChatRequest(model="", messages=messages[:], resend_reasoning="r"))
    assert splicer.messages_encoded == 5
    req = ChatRequest(model="", messages=messages[:])
    assert splicer.encode(req) == template.plain(req) and b"why" not in splicer.encode(req)
    assert splicer.messages_encoded == 7  # from the message with reasoning on
    # the call journal syncs messages alone: the last request's rule holds, the journal's
    # bytes are the messages as stored
    splicer.encode(ChatRequest(model="", messages=messages[:], resend_reasoning="r"))
    messages.append(AssistantMessage("c", reasoning="more"))
    splicer.sync(messages[:])
    assert splicer.messages_encoded == 10
    assert [splicer.plain(k) for k in range(len(messages))] == [encoder.encode(m)
                                                                 for m in messages]
    req = ChatRequest(model="", messages=messages[:], resend_reasoning="r")
    assert splicer.encode(req) == template.plain(req) and splicer.messages_encoded == 10
    assert msgspec.json.decode(splicer.encode(req))["messages"][5]["r"] == "more"


def test_a_scripted_model_keeps_its_task_field_under_any_endpoint_name() -> None:
    """``vllm/scripted/oracle`` against ``sweepbench serve``: the model sent is one of the
    reference server's doubles, which need the task; a real model's request never has it."""
    from sweepbench.config import Endpoint

    req = ChatRequest(model="", messages=[UserMessage("hi")], sweepbench={"task": "t"})
    double = Endpoint(name="vllm/scripted/oracle", base_url="http://127.0.0.1:8000/v1",
                      model="scripted/oracle")
    real = Endpoint(name="vllm/Qwen/Qwen3-8B", base_url="http://127.0.0.1:8000/v1",
                    model="Qwen/Qwen3-8B")
    assert b'"sweepbench":{"task":"t"}' in BodyTemplate.for_endpoint(double).plain(req)
    assert b'"sweepbench"' not in BodyTemplate.for_endpoint(real).plain(req)


# ---- the template's rules at their edges (unit tests, exact bytes) ---------------------------


def _call_turn(content=None, reasoning=None) -> AssistantMessage:
    return AssistantMessage(content, [ToolCall("c1", FunctionCall("f", "{}"))], reasoning=reasoning)


def test_an_endpoints_fields_become_its_template() -> None:
    from sweepbench.config import Endpoint

    ep = Endpoint(name="ep", base_url="http://127.0.0.1:8000/v1", model="org/m", temperature=0.5,
                  max_tokens=99, tool_choice="auto", extra_body={"top_k": 5},
                  max_tokens_field="max_completion_tokens", send_reasoning=True,
                  reasoning_field="reasoning", assistant_empty_content="")
    req = ChatRequest(model="", messages=[_call_turn()], tools=[ToolSpec(function={"name": "f"})])
    assert BodyTemplate.for_endpoint(ep).plain(req) == (
        b'{"model":"org/m","messages":[{"role":"assistant","content":"","tool_calls":[{"type":'
        b'"function","id":"c1","function":{"name":"f","arguments":"{}"}}],"reasoning":""}],'
        b'"tools":[{"function":{"name":"f"},"type":"function"}],"tool_choice":"auto",'
        b'"temperature":0.5,"max_completion_tokens":99,"top_k":5}')
    # reasoning_field is only sent back where send_reasoning says so; no budget: none sent
    plain = Endpoint(name="ep", base_url="http://127.0.0.1:8000/v1", model="m",
                     reasoning_field="reasoning")
    req = ChatRequest(model="", messages=[_call_turn("a", reasoning="why")])
    assert BodyTemplate.for_endpoint(plain).plain(req) == (
        b'{"model":"m","messages":[{"role":"assistant","content":"a","tool_calls":[{"type":'
        b'"function","id":"c1","function":{"name":"f","arguments":"{}"}}]}]}')


def test_the_budget_sent_as_max_completion_tokens() -> None:
    template = BodyTemplate(model="m", defaults={"max_tokens": 64},
                            budget_field="max_completion_tokens")
    msgs = [UserMessage("u")]
    cases = [({}, b',"max_completion_tokens":64}'), ({"max_tokens": 8}, b',"max_completion_tokens":8}'),
             ({"max_completion_tokens": 5}, b',"max_completion_tokens":5}'),
             ({"max_tokens": 8, "max_completion_tokens": 5}, b',"max_completion_tokens":5}')]
    for fields, end in cases:
        body = template.plain(ChatRequest(model="", messages=msgs, **fields))
        assert body == b'{"model":"m","messages":[{"role":"user","content":"u"}]' + end
    none = BodyTemplate(model="m", budget_field="max_completion_tokens")
    assert none.plain(ChatRequest(model="", messages=msgs)) == \
        b'{"model":"m","messages":[{"role":"user","content":"u"}]}'
    extra = BodyTemplate(model="m", defaults={"max_tokens": 64}, budget_field="max_completion_tokens",
                         extra_body={"max_completion_tokens": 7})
    assert extra.plain(ChatRequest(model="", messages=msgs)) == \
        b'{"model":"m","messages":[{"role":"user","content":"u"}],"max_completion_tokens":7}'
    with pytest.raises(ValueError) as err:
        BodyTemplate(model="m", budget_field="max_output_tokens")
    assert str(err.value) == ("budget field must be one of max_tokens, max_completion_tokens, "
                              "got 'max_output_tokens'")


def test_which_messages_need_shaping() -> None:
    plain, empty = BodyTemplate(model="m"), BodyTemplate(model="m", empty_content="")
    back = BodyTemplate(model="m", reasoning_field="reasoning_content")
    call = _call_turn("a")
    cases = [(plain, AssistantMessage("a"), False), (empty, AssistantMessage("a"), False),
             (plain, AssistantMessage(None, [call.tool_calls[0]]), False),
             (empty, AssistantMessage(None, [call.tool_calls[0]]), True),
             (back, AssistantMessage("a"), False), (plain, call, False), (back, call, True),
             (plain, AssistantMessage("a", reasoning_details=[{}]), True),
             (plain, AssistantMessage("a", reasoning=""), True), (back, UserMessage("u"), False)]
    assert [t.needs_shaping(m) for t, m, _ in cases] == [want for _, _, want in cases]


def test_tool_arrays_are_kept_for_the_last_64_lists() -> None:
    template = BodyTemplate(model="m")
    lists = [[ToolSpec(function={"name": f"f{i}"})] for i in range(65)]
    for tools in lists:
        template.tools_bytes(tools)
    template.tools_bytes(lists[-1])
    assert template.tools_encoded == 65
    template.tools_bytes(lists[0])  # the least recently used, dropped
    assert template.tools_encoded == 66


@pytest.mark.parametrize("seed", range(6))
def test_conversations_that_reorder_or_drop_messages_are_spliced_identically(seed: int) -> None:
    """Any list of known messages, in any order, encodes as from scratch (the append-only
    shortcut must not take a list whose first and last messages are where they were)."""
    rng = random.Random(seed)
    pool = [random_message(rng, i) for i in range(5)]
    template = BodyTemplate(model="m")
    splicer = template.splicer()
    for _ in range(40):
        messages = [rng.choice(pool) for _ in range(rng.randrange(1, 6))]
        req = ChatRequest(model="", messages=messages)
        assert splicer.encode(req) == template.plain(req)
    a, b, c, x, z = pool
    for before, after in (([a, b, c, x], [a, z, c]), ([a, b, c], [a, c, z]), ([a, b, c], [a, z, b]),
                          ([a, b, c], [x, a, c]), ([a, b, c], [x, b, c]), ([a, b, c], [b, z, c])):
        splicer.encode(ChatRequest(model="", messages=before))
        req = ChatRequest(model="", messages=after)
        assert splicer.encode(req) == template.plain(req), (before, after)
