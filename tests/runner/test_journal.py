"""The call journal on its own (no sweep): what is journaled, what a resume replays, when a
recorded call no longer matches the request, and the request hash."""

from __future__ import annotations

import msgspec
import pytest

from sweepbench.errors import ResumeMismatch, ServerError
from sweepbench.runner.journal import CallJournal, Replayed, _RequestHasher
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    SystemMessage,
    ToolSpec,
    Usage,
    UserMessage,
)


class Reply(msgspec.Struct):
    message: AssistantMessage
    usage: Usage
    latency_s: float = 0.25
    finish_reason: str | None = "stop"
    attempts: int = 1


def tool(name: str) -> ToolSpec:
    return ToolSpec({"name": name, "parameters": {"type": "object", "properties": {}}})


TOOLS = [tool("search"), tool("pay")]


class Model:
    """A live model that answers ``reply-N`` and counts what it was asked."""

    def __init__(self) -> None:
        self.asked: list[ChatRequest] = []

    async def __call__(self, req: ChatRequest) -> Reply:
        self.asked.append(req)
        n = len(self.asked)
        return Reply(AssistantMessage(f"reply-{n}"), Usage(prompt_tokens=10 * n, completion_tokens=n))


class Run:
    """One run of an episode's journal; ``events`` is its event log as the store would keep it."""

    def __init__(self, recorded: list[dict] | None = None) -> None:
        self.events: list[dict] = []
        self.returned_at: list[int] = []  # the events logged when each call returned
        self.journal = CallJournal(emit=self._emit, recorded=recorded)

    def _emit(self, kind: str, payload: dict) -> None:
        assert kind == "model_call"
        self.events.append(msgspec.json.decode(msgspec.json.encode(payload)))


def conversation(turns: int, *, tools=None, system: str = "You are an agent.") -> list[ChatRequest]:
    """The agent's requests of an episode of ``turns`` turns (each one longer than the last)."""
    msgs: list = [SystemMessage(system)]
    out = []
    for i in range(turns):
        msgs = [*msgs, UserMessage(f"user turn {i}")]
        out.append(ChatRequest(model="m", messages=list(msgs), tools=tools))
        msgs = [*msgs, AssistantMessage(f"reply-{i + 1}")]
    return out


async def play(run: Run, model: Model, requests: list[ChatRequest], role: str = "agent") -> list:
    call = run.journal.caller(role, model)
    replies = []
    for r in requests:
        replies.append(await call(r))
        run.returned_at.append(len(run.events))
    return replies


async def test_a_resume_replays_every_recorded_call_once_then_goes_live() -> None:
    model = Model()
    first = Run()
    requests = conversation(5, tools=TOOLS)
    await play(first, model, requests[:3])
    assert len(model.asked) == 3 and first.journal.calls == 3 and first.journal.replayed == 0
    assert first.returned_at == [1, 2, 3]  # each call journaled before the episode acts on it

    second = Run(first.events)
    replies = await play(second, model, requests)
    assert len(model.asked) == 5  # only the two calls not on record went live
    assert [r.message.content for r in replies] == [f"reply-{i}" for i in range(1, 6)]
    assert all(isinstance(r, Replayed) for r in replies[:3])
    assert second.journal.calls == 5 and second.journal.replayed == 3
    assert second.events[:3] == first.events  # re-emitted as recorded, each once
    assert len(second.events) == 5 and second.returned_at == [1, 2, 3, 4, 5]


async def test_two_resumes_in_a_row_journal_every_call_once_and_ask_none_twice() -> None:
    model = Model()
    requests = conversation(6)
    runs = [Run()]
    await play(runs[0], model, requests[:2])  # interrupted after two calls
    runs.append(Run(runs[-1].events))
    await play(runs[-1], model, requests[:4])  # resumed, interrupted again after four
    runs.append(Run(runs[-1].events))
    await play(runs[-1], model, requests)  # resumed to the end
    assert [r.messages for r in model.asked] == [r.messages for r in requests]
    assert [r.journal.replayed for r in runs] == [0, 2, 4]
    final = runs[-1].events
    assert len(final) == 6 and len({e["request_hash"] for e in final}) == 6
    assert [e["message"]["content"] for e in final] == [f"reply-{i}" for i in range(1, 7)]


async def test_a_replayed_reply_keeps_usage_latency_attempts_and_finish_reason() -> None:
    async def cut_short(req: ChatRequest) -> Reply:
        return Reply(AssistantMessage("partial"), Usage(prompt_tokens=7, completion_tokens=3),
                     latency_s=1.5, finish_reason="length", attempts=3)

    first = Run()
    (req,) = conversation(1)
    live = await play(first, cut_short, [req])
    second = Run(first.events)
    (again,) = await play(second, Model(), [req])
    assert again == Replayed(AssistantMessage("partial"), Usage(prompt_tokens=7, completion_tokens=3),
                             1.5, 3, "length")
    assert again.truncated and again.message == live[0].message


@pytest.mark.parametrize("damage, expected", [
    ({"usage": None, "latency_s": None, "attempts": None}, (Usage(), 0.0, 0, "stop")),
    ({"finish_reason": 7}, (Usage(prompt_tokens=10, completion_tokens=1), 0.25, 1, None)),
])
async def test_a_record_with_missing_fields_still_replays(damage, expected) -> None:
    first = Run()
    (req,) = conversation(1)
    await play(first, Model(), [req])
    second = Run([{**first.events[0], **damage}])
    (again,) = await play(second, Model(), [req])
    assert (again.usage, again.latency_s, again.attempts, again.finish_reason) == expected
    assert not again.truncated and again.message.content == "reply-1"


async def test_a_changed_prompt_stops_the_episode_instead_of_mixing_answers() -> None:
    model = Model()
    first = Run()
    await play(first, model, conversation(2))
    second = Run(first.events)
    call = second.journal.caller("agent", model)
    changed = conversation(2, system="You are a careful agent.")
    with pytest.raises(ResumeMismatch) as info:
        await call(changed[0])
    assert str(info.value).startswith("recorded call #0 (agent) does not match the agent request")
    assert len(model.asked) == 2 and second.journal.replayed == 0


async def test_a_changed_later_message_is_caught_at_that_call() -> None:
    model = Model()
    first = Run()
    requests = conversation(3)
    await play(first, model, requests)
    second = Run(first.events)
    call = second.journal.caller("agent", model)
    await call(requests[0])
    msgs = list(requests[1].messages)
    msgs[-1] = UserMessage("user turn 1, said differently")
    with pytest.raises(ResumeMismatch, match=r"recorded call #1 \(agent\)"):
        await call(ChatRequest(model="m", messages=msgs))
    assert len(model.asked) == 3 and second.journal.replayed == 1


@pytest.mark.parametrize("tools_now", [[tool("search")], [*TOOLS, tool("refund")], None,
                                       [tool("pay"), tool("search")]])
async def test_a_changed_tool_set_does_not_resume_on_old_answers(tools_now) -> None:
    model = Model()
    first = Run()
    await play(first, model, conversation(1, tools=TOOLS))
    second = Run(first.events)
    with pytest.raises(ResumeMismatch):
        await play(second, model, conversation(1, tools=tools_now))
    assert len(model.asked) == 1


async def test_the_same_tools_in_a_new_list_resume() -> None:
    first = Run()
    await play(first, Model(), conversation(2, tools=TOOLS))
    second = Run(first.events)
    again = [tool("search"), tool("pay")]
    await play(second, Model(), conversation(2, tools=again))
    assert second.journal.replayed == 2


async def test_a_call_of_another_role_does_not_replay_this_roles_record() -> None:
    model = Model()
    first = Run()
    (req,) = conversation(1)
    await play(first, model, [req], role="agent")
    second = Run(first.events)
    with pytest.raises(ResumeMismatch, match=r"#0 \(agent\) does not match the user request"):
        await play(second, model, [req], role="user")


async def test_each_journaled_hash_is_that_of_the_request_alone() -> None:
    """Roles interleave and a conversation may restart shorter; the hash still depends on the
    request only (messages and tools), never on what the journal saw before."""
    first = Run()
    agent = first.journal.caller("agent", Model())
    user = first.journal.caller("user", Model())
    a = conversation(3, tools=TOOLS)
    u = conversation(2, system="You are the user.")
    sent = [a[0], u[0], a[1], u[1], a[2], a[0]]
    for r, call in zip(sent, (agent, user, agent, user, agent, agent)):
        await call(r)
    assert [e["request_hash"] for e in first.events] == [_RequestHasher().digest(r) for r in sent]
    assert [e["role"] for e in first.events] == ["agent", "user"] * 2 + ["agent"] * 2


def test_the_request_hash_tells_requests_apart() -> None:
    def h(req: ChatRequest) -> str:
        return _RequestHasher().digest(req)

    base = conversation(2, tools=TOOLS)[1]
    same = ChatRequest(model="m", messages=list(base.messages), tools=list(TOOLS))
    assert h(base) == h(same)
    assert len(h(base)) == 32 and int(h(base), 16) >= 0
    variants = [
        ChatRequest(model="m", messages=base.messages[:-1], tools=TOOLS),
        ChatRequest(model="m", messages=[*base.messages, UserMessage("")], tools=TOOLS),
        ChatRequest(model="m", messages=base.messages, tools=TOOLS[:1]),
        ChatRequest(model="m", messages=base.messages),
        ChatRequest(model="m", messages=[*base.messages[:-1], UserMessage("user turn 9")], tools=TOOLS),
    ]
    assert len({h(base), *map(h, variants)}) == 1 + len(variants)


async def test_a_recorded_failure_is_re_emitted_and_the_call_asked_again() -> None:
    async def down(req: ChatRequest) -> Reply:
        raise ServerError("HTTP 500: down", status=500)

    first = Run()
    seen = []
    (req,) = conversation(1)
    with pytest.raises(ServerError):
        await first.journal.caller("agent", down, seen.append)(req)
    assert first.events[0]["error"] == "ServerError" and "message" not in first.events[0]
    assert len(first.events) == 1 and isinstance(seen[0], ServerError)

    model = Model()
    second = Run(first.events)
    seen2 = []
    (reply,) = [await second.journal.caller("agent", model, seen2.append)(req)]
    assert reply.message.content == "reply-1" and len(model.asked) == 1
    assert second.events[0] == first.events[0] and second.events[1]["message"]["content"] == "reply-1"
    assert seen2 == [reply] and second.journal.replayed == 0


async def test_observe_hears_live_calls_only() -> None:
    model = Model()
    first = Run()
    requests = conversation(2)
    await play(first, model, requests[:1])
    second = Run(first.events)
    seen = []
    call = second.journal.caller("agent", model, seen.append)
    await call(requests[0])
    assert seen == []
    live = await call(requests[1])
    assert seen == [live]


def test_a_live_calls_event_holds_what_the_result_has_and_defaults_for_the_rest() -> None:
    from types import SimpleNamespace

    from sweepbench.runner.journal import call_payload

    bare = SimpleNamespace(message=AssistantMessage("hi"), usage=Usage(), latency_s=0.5)
    assert call_payload("agent", "h1", bare) == {
        "role": "agent", "request_hash": "h1", "message": bare.message, "usage": bare.usage,
        "finish_reason": None, "latency_s": 0.5, "queue_wait_s": 0.0, "backoff_s": 0.0,
        "wall_s": None, "attempts": 1, "statuses": None, "failures": []}
    full = SimpleNamespace(message=AssistantMessage("hi"), usage=Usage(), latency_s=0.5,
                           finish_reason="length", queue_wait_s=1.5, backoff_s=2.5, wall_s=4.5,
                           attempts=3, statuses=[500, 429, 200], failures=["f1", "f2"])
    payload = call_payload("user", "h2", full)
    assert {k: payload[k] for k in ("role", "request_hash", "finish_reason", "queue_wait_s",
                                     "backoff_s", "wall_s", "attempts", "statuses", "failures")} == {
        "role": "user", "request_hash": "h2", "finish_reason": "length", "queue_wait_s": 1.5,
        "backoff_s": 2.5, "wall_s": 4.5, "attempts": 3, "statuses": [500, 429, 200],
        "failures": ["f1", "f2"]}
    # a fleet's call says which replica answered; a call of one way in says nothing
    routed = SimpleNamespace(**vars(full), replica="http://r2/v1")
    assert call_payload("agent", "h3", routed)["replica"] == "http://r2/v1"
    assert "replica" not in call_payload("agent", "h3", SimpleNamespace(**vars(full), replica=""))
    assert "replica" not in payload


async def test_a_failed_call_is_journaled_under_its_role_and_request_hash() -> None:
    async def down(req: ChatRequest) -> Reply:
        raise ServerError("HTTP 503: busy", status=503)

    run = Run()
    (req,) = conversation(1, tools=TOOLS)
    with pytest.raises(ServerError):
        await run.journal.caller("user", down)(req)
    (event,) = run.events
    assert (event["role"], event["request_hash"]) == ("user", _RequestHasher().digest(req))
    assert (event["error"], event["status"], event["error_message"]) == ("ServerError", 503, "HTTP 503: busy")


async def test_tools_changed_within_an_episode_change_the_hash() -> None:
    run = Run()
    call = run.journal.caller("agent", Model())
    first, second = conversation(2, tools=TOOLS)
    second = ChatRequest(model="m", messages=second.messages, tools=[tool("refund")])
    third = ChatRequest(model="m", messages=[*second.messages, UserMessage("more")], tools=TOOLS)
    for r in (first, second, third):
        await call(r)
    assert [e["request_hash"] for e in run.events] == [_RequestHasher().digest(r) for r in (first, second, third)]


def test_a_tools_list_is_encoded_once_for_every_episode_that_shares_it(monkeypatch) -> None:
    """A toolkit hands every episode the same list: its hash is worked out once, not once per
    episode's hasher, and stays the hash of its content."""
    import sweepbench.runner.journal as journal

    encoded = []

    class Counting:
        def encode(self, obj):
            encoded.append(obj)
            return msgspec.json.encode(obj)

    monkeypatch.setattr(journal, "encoder", Counting())
    shared = [tool("refund"), tool("lookup")]
    req = ChatRequest(model="m", messages=[UserMessage("hi")], tools=shared)
    digests = [_RequestHasher().digest(req) for _ in range(5)]  # five episodes
    assert sum(o is shared for o in encoded) == 1
    copy = ChatRequest(model="m", messages=[UserMessage("hi")], tools=list(shared))
    assert _RequestHasher().digest(copy) == digests[0] == digests[4]  # the content's hash
    other = ChatRequest(model="m", messages=[UserMessage("hi")], tools=[tool("refund")])
    assert _RequestHasher().digest(other) != digests[0]


async def test_a_failure_in_the_middle_of_the_record_does_not_hide_what_follows() -> None:
    calls = {"n": 0}

    async def flaky(req: ChatRequest) -> Reply:
        calls["n"] += 1
        if calls["n"] == 2:
            raise ServerError("HTTP 500: down", status=500)
        return Reply(AssistantMessage(f"live-{calls['n']}"), Usage())

    requests = conversation(3)
    first = Run()
    call = first.journal.caller("agent", flaky)
    await call(requests[0])
    with pytest.raises(ServerError):
        await call(requests[1])
    second = Run(first.events)  # resumed: the failed call is asked again and answered
    await play(second, flaky, requests[:2])
    assert [("error" in e) for e in second.events] == [False, True, False]
    model = Model()
    third = Run(second.events)  # resumed again: both answers replay, the failure is re-emitted
    replies = await play(third, model, requests)
    assert [r.message.content for r in replies] == ["live-1", "live-3", "reply-1"]
    assert len(model.asked) == 1 and third.journal.replayed == 2
    assert third.events[:3] == second.events


async def test_a_mismatch_says_which_call_and_why_the_episode_stops() -> None:
    first = Run()
    await play(first, Model(), conversation(1))
    second = Run(first.events)
    with pytest.raises(ResumeMismatch) as info:
        await play(second, Model(), conversation(1, system="Another prompt."))
    assert str(info.value) == (
        "recorded call #0 (agent) does not match the agent request made now (prompts, tools or "
        "code changed since it was recorded); the episode is not continued with mixed answers")
