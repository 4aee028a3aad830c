"""What the call journal keeps of each model call (reasoning, usage, finish reason, waits,
failed attempts), and failed calls journaled too (issue 15)."""

from __future__ import annotations

import msgspec
import pytest

from sweepbench.errors import ServerError
from sweepbench.store.runstore import RunStore
from sweepbench.client.facade import ModelClient
from sweepbench.runner.journal import CallJournal
from sweepbench.client.limits import EndpointLimits
from sweepbench.client.transports.memory import Answer, MemoryTransport, VirtualClock, completion
from sweepbench.config import Endpoint
from sweepbench.wire import AssistantMessage, ChatRequest, UserMessage, message_list_decoder

REASONING_BODY = completion(
    "The earliest flight is CA1831.", reasoning_content="Sort by departure: CA1831 07:30, ...",
    usage={"prompt_tokens": 3120, "completion_tokens": 512, "total_tokens": 3632,
           "prompt_tokens_details": {"cached_tokens": 2944},
           "completion_tokens_details": {"reasoning_tokens": 461}})


def rig(*replies, **kw) -> ModelClient:
    clock = VirtualClock()
    ep = Endpoint(name="m", base_url="http://memory.invalid/v1", **kw)
    return ModelClient(ep, transport=MemoryTransport(*replies, clock=clock),
                       limits=EndpointLimits.for_endpoint(ep, clock=clock),
                       backoff_base_s=0.001, backoff_max_s=0.01)


def journal(recorded=None):
    events: list[tuple[str, dict]] = []
    j = CallJournal(emit=lambda kind, payload: events.append(
        (kind, msgspec.json.decode(msgspec.json.encode(payload)))), recorded=recorded)
    return j, events


def req(text: str = "hi") -> ChatRequest:
    return ChatRequest(model="", messages=[UserMessage(text)])


async def test_live_call_payload_has_reasoning_usage_waits_and_failures() -> None:
    client = rig(Answer(500, {"error": {"message": "boom"}}), Answer(body=REASONING_BODY))
    j, events = journal()
    seen = []
    result = await j.caller("agent", client.complete, seen.append)(req())
    [(kind, p)] = events
    assert kind == "model_call" and seen == [result]
    assert p["message"]["reasoning"] == "Sort by departure: CA1831 07:30, ..."
    assert p["usage"] == {"prompt_tokens": 3120, "completion_tokens": 512,
                          "cached_prompt_tokens": 2944, "reasoning_tokens": 461}
    assert p["finish_reason"] == "stop" and p["attempts"] == 2 and p["statuses"] == [500, 200]
    assert p["failures"] == [{"error": "ServerError", "status": 500, "message": "HTTP 500: boom"}]
    assert p["latency_s"] == 0.0 and p["queue_wait_s"] == 0.0  # in-memory: instant answers
    assert p["backoff_s"] > 0 and p["wall_s"] == pytest.approx(p["backoff_s"])


async def test_failed_call_is_journaled_with_its_attempts_and_reasons() -> None:
    client = rig(Answer(500, {"error": {"message": "boom"}}), max_retries=2)
    j, events = journal()
    seen = []
    with pytest.raises(ServerError):
        await j.caller("user", client.complete, seen.append)(req())
    [(kind, p)] = events
    assert kind == "model_call" and "message" not in p and isinstance(seen[0], ServerError)
    assert p["error"] == "ServerError" and p["status"] == 500 and p["attempts"] == 3
    assert p["statuses"] == [500, 500, 500] and len(p["failures"]) == 3
    assert p["error_message"] == "m: HTTP 500: boom"
    assert p["failures"][0] == {"error": "ServerError", "status": 500, "message": "HTTP 500: boom"}


async def test_resume_re_emits_a_failed_call_then_asks_again() -> None:
    # recorded: call 1 answered (cut short), call 2 failed (the episode ended in error)
    first, events = journal()
    caller = first.caller("agent", rig(Answer(body=completion("one", finish_reason="length")),
                                       Answer(500, {"error": {"message": "down"}}),
                                       max_retries=0).complete)
    await caller(req("a"))
    with pytest.raises(ServerError):
        await caller(ChatRequest(model="", messages=[UserMessage("a"), UserMessage("b")]))
    recorded = [p for kind, p in events]
    assert "error" in recorded[1]

    # resumed (--retry-errors): call 1 replays, the failure is re-emitted, call 2 goes live
    resumed, events2 = journal(recorded)
    live = rig(Answer(body=completion("two")))
    caller = resumed.caller("agent", live.complete)
    replayed = await caller(req("a"))
    assert replayed.message.content == "one" and replayed.truncated  # finish_reason kept
    result = await caller(ChatRequest(model="", messages=[UserMessage("a"), UserMessage("b")]))
    assert result.message.content == "two" and resumed.replayed == 1
    assert [p.get("error") for _, p in events2] == [None, "ServerError", None]
    assert events2[:2] == [("model_call", recorded[0]), ("model_call", recorded[1])]


async def test_reasoning_reaches_the_store(tmp_path) -> None:
    client = rig(Answer(body=REASONING_BODY))
    with RunStore(tmp_path / "s.sqlite") as store:
        store.begin_run("r", {})
        seq = 0

        def emit(kind, payload):
            nonlocal seq
            store.event("e1", seq, kind, msgspec.json.encode(payload))
            seq += 1

        j = CallJournal(emit=emit)
        await j.caller("agent", client.complete)(req())
        await store.flush()
        [event] = store.events("e1", kind="model_call")
    payload = event["payload"]
    assert payload["message"]["reasoning"].startswith("Sort by departure")
    assert payload["usage"]["reasoning_tokens"] == 461
    # and an episode record's messages keep it through a round trip
    [back] = message_list_decoder.decode(msgspec.json.encode([AssistantMessage(
        "x", reasoning="why", reasoning_details=[{"type": "reasoning.encrypted"}])]))
    assert back.reasoning == "why" and back.reasoning_details == [{"type": "reasoning.encrypted"}]


@pytest.mark.asyncio
async def test_request_hash_is_the_same_through_a_conversation_or_a_plain_caller() -> None:
    """The hash a Conversation's spliced bytes give is the one stored journals hold (plain
    encoding), reasoning that the endpoint strips included (issue 12)."""
    from sweepbench.wire import FunctionCall, SystemMessage, ToolCall, ToolMessage, ToolSpec

    n = 6
    replies = [completion(f"reply {i}", reasoning_content="thought") for i in range(n)]
    via_conv, conv_events = journal()
    via_plain, plain_events = journal()
    client = rig(*replies)
    plain = rig(*replies)
    conv_call = via_conv.caller("agent", client.conversation())
    plain_call = via_plain.caller("agent", plain.complete)
    tools = [ToolSpec(function={"name": "f"})]
    messages = [SystemMessage("sys"), UserMessage("u")]
    for i in range(n):
        request = ChatRequest(model="", messages=messages[:], tools=tools)
        reply = await conv_call(request)
        await plain_call(request)
        messages += [reply.message, ToolMessage(f"c{i}", "out"),
                     AssistantMessage(None, [ToolCall(f"c{i}", FunctionCall("f", "{}"))],
                                      reasoning="r"), UserMessage(f"next {i}")]
    hashes = [p["request_hash"] for _, p in conv_events]
    assert hashes == [p["request_hash"] for _, p in plain_events]
    assert len(set(hashes)) == n


# ---- stalls: hung and hedged requests of a call (issue 12) -------------------------------

def _reply(**kw):  # noqa: ANN003, ANN202
    from types import SimpleNamespace
    return SimpleNamespace(message=AssistantMessage("ok"), usage=None, latency_s=0.1, **kw)


@pytest.mark.parametrize("hung,hedged", [(1, 0), (0, 2), (3, 1)])
def test_a_call_with_hung_or_hedged_requests_journals_its_stalls(hung, hedged) -> None:
    from sweepbench.runner.journal import call_payload
    payload = call_payload("agent", "d", _reply(hung=hung, hedged=hedged))
    assert payload["stalls"] == {"hung": hung, "hedged": hedged}
    only = {k: v for k, v in (("hung", hung), ("hedged", hedged)) if v}  # an absent count is 0
    assert call_payload("agent", "d", _reply(**only))["stalls"] == {"hung": hung, "hedged": hedged}
    detail = {"hung": hung, "hedged": hedged, "hedge_won": True, "hedge_usage": None}
    assert call_payload("agent", "d", _reply(hung=hung, hedged=hedged, stalls=detail)
                        )["stalls"] == detail  # the outcome's own account, when it has one


def test_a_call_without_stalls_journals_no_stalls_key() -> None:
    from sweepbench.runner.journal import call_payload
    assert "stalls" not in call_payload("agent", "d", _reply())
    assert "stalls" not in call_payload("agent", "d", _reply(hung=0, hedged=0, stalls={"x": 1}))


def test_a_failed_call_journals_the_requests_that_hung_before_it_failed() -> None:
    from sweepbench.runner.journal import error_payload
    err = ServerError("m: 500", status=500)
    err.hung, err.hedged = 2, 0
    assert error_payload("agent", "d", err)["stalls"] == {"hung": 2, "hedged": 0}
    assert "stalls" not in error_payload("agent", "d", ServerError("m: 500", status=500))
