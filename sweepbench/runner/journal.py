"""The per-episode call journal: what makes an episode resumable at turn level.

Every model call an episode makes goes through a journal caller. A live call is journaled
(response, usage, a hash of the request): emitted to the episode's event log in order, which
the store commits within its commit interval (``store.writer.COMMIT_EVERY_S``). The episode
does not wait for that commit: what was emitted is committed in order, so a store always
holds a prefix of each episode's log. A stop (Ctrl-C, SIGTERM, the end) commits everything;
a hard kill loses the answers of the last interval as well as the requests in flight.
When an interrupted episode is resumed, the same episode code runs again: tools re-execute
(they are deterministic), and each model call is answered from the journal as long as the
request matches the recorded one byte for byte (by hash); the first call not on record goes
live. So no journaled model call is ever paid for twice, and a request that no longer matches
its record (prompts, tools or code changed) stops the episode with a clear reason instead of
mixing old answers into a new conversation.

The request hash is built incrementally: messages are append-only within an episode, so each
call hashes only the messages added since the previous call of the same role. When the call
goes to a client ``Conversation``, the hash reads the bytes its body splicer encoded for the
request (the same bytes ``wire.encoder`` gives), so each message is encoded once.

A ``model_call`` event holds what the store, the profile and the viewer need of a call: the
reply (its reasoning text inside the message), usage (reasoning tokens included), the
``finish_reason``, latency from the send, queue wait and back-off apart, and every failed
attempt with its reason (and, for a model with several ways in, the ``replica`` that
answered and each failed attempt's). A call that fails for good is journaled too, as a ``model_call``
event with an ``error`` (its class, ``error_message``, attempts and their reasons) and no
reply ``message``, so
failed requests are counted wherever calls are. On resume such an entry is re-emitted (the
event log keeps its numbering) and the call it stands for is made live again.
"""

from __future__ import annotations

import hashlib
from typing import Any, Awaitable, Callable

import msgspec

from sweepbench.errors import ModelError, ResumeMismatch
from sweepbench.memo import IdentityMemo
from sweepbench.client.body import SplicingEncoder
from sweepbench.client.shapes import TRUNCATED
from sweepbench.wire import AssistantMessage, ChatRequest, Usage, encoder


class Replayed(msgspec.Struct):
    """A model reply served from the journal (what the episode loop needs of a reply)."""

    message: AssistantMessage
    usage: Usage
    latency_s: float
    attempts: int = 0
    finish_reason: str | None = None

    @property
    def truncated(self) -> bool:
        return self.finish_reason in TRUNCATED


def call_payload(role: str, digest: str, result: Any) -> dict[str, Any]:
    """The ``model_call`` event of a live call (a ``CallResult``, or any reply-like)."""
    g = getattr
    return {
        "role": role, "request_hash": digest, "message": result.message,
        "usage": result.usage, "finish_reason": g(result, "finish_reason", None),
        "latency_s": result.latency_s, "queue_wait_s": g(result, "queue_wait_s", 0.0),
        "backoff_s": g(result, "backoff_s", 0.0), "wall_s": g(result, "wall_s", None),
        "attempts": g(result, "attempts", 1), "statuses": g(result, "statuses", None),
        "failures": g(result, "failures", None) or [],
        **_stalls(result),
        **({"replica": g(result, "replica")} if g(result, "replica", "") else {}),
    }


def error_payload(role: str, digest: str, err: ModelError) -> dict[str, Any]:
    """The ``model_call`` event of a call that failed for good (``error`` set, no message)."""
    return {
        "role": role, "request_hash": digest, "error": type(err).__name__,
        "status": err.status, "error_message": str(err), "attempts": err.attempts,
        "statuses": err.statuses, "failures": err.failures,
        **_stalls(err),
    }


def _stalls(outcome: Any) -> dict[str, Any]:
    """``stalls``: the call's hung (TTFB-abandoned) and hedged requests, when it had any
    (see :mod:`sweepbench.client.stalls`); hedge copies that lost are never journaled."""
    hung, hedged = getattr(outcome, "hung", 0), getattr(outcome, "hedged", 0)
    if not (hung or hedged):
        return {}
    stalls = getattr(outcome, "stalls", None)
    return {"stalls": stalls if stalls is not None else {"hung": hung, "hedged": hedged}}


class _RequestHasher:
    """Hash of (messages, tools) that grows with the conversation in O(new messages)."""

    def __init__(self, splicer: SplicingEncoder | None = None) -> None:
        self._h = hashlib.blake2b(digest_size=16)
        self._n = 0
        self._splicer = splicer

    def digest(self, req: ChatRequest) -> str:
        msgs = req.messages
        if len(msgs) < self._n:  # not append-only: hash from scratch
            self._h, self._n = hashlib.blake2b(digest_size=16), 0
        h, splicer = self._h, self._splicer
        if splicer is not None:  # the bytes the request body is spliced from
            splicer.sync(msgs)
            for i in range(self._n, len(msgs)):
                h.update(splicer.plain(i))
                h.update(b"\x1e")
        else:
            for m in msgs[self._n:]:
                h.update(encoder.encode(m))
                h.update(b"\x1e")
        self._n = len(msgs)
        h = self._h.copy()
        if req.tools:
            h.update(_TOOLS_DIGESTS.get(req.tools, _tools_digest))
        return h.hexdigest()


def _tools_digest(tools: list) -> bytes:
    return hashlib.blake2b(encoder.encode(tools), digest_size=16).digest()


_TOOLS_DIGESTS: IdentityMemo[list, bytes] = IdentityMemo(64)
"""A tools list's hash, once per list object for the whole process: a toolkit hands every
episode the same list, and encoding it (several KB) per episode was a cost of its own."""


class CallJournal:
    """Journals one episode's model calls and replays recorded ones on resume.

    ``emit(kind, payload)`` appends to the episode's event log (the runner numbers events);
    ``recorded`` holds the payloads of the episode's earlier ``model_call`` events, in order.
    """

    def __init__(self, *, emit: Callable[[str, dict[str, Any]], None],
                 recorded: list[dict[str, Any]] | None = None) -> None:
        self.emit = emit
        self.recorded = recorded or []
        self.calls = 0
        self.replayed = 0
        self._cursor = 0  # next entry of ``recorded``
        self._hashers: dict[str, _RequestHasher] = {}

    def caller(self, role: str, complete: Callable[[ChatRequest], Awaitable[Any]],
               observe: Callable[[Any], None] | None = None):
        """A ModelCall for ``role`` that goes through the journal; ``observe(outcome)`` is
        told about every live (not replayed) call, e.g. for progress: its result, or the
        ``ModelError`` it failed with."""
        if role not in self._hashers:
            splicer = getattr(complete, "encoder", None)  # a client Conversation's
            self._hashers[role] = _RequestHasher(
                splicer if isinstance(splicer, SplicingEncoder) else None)
        hasher = self._hashers[role]

        async def call(req: ChatRequest):
            digest = hasher.digest(req)
            self.calls += 1
            recorded = self.recorded
            while self._cursor < len(recorded) and "error" in recorded[self._cursor]:
                self.emit("model_call", recorded[self._cursor])  # a failure: asked again
                self._cursor += 1
            if self._cursor < len(recorded):
                self._cursor += 1
                return self._replay(self._cursor - 1, role, digest)
            try:
                result = await complete(req)
            except ModelError as err:
                self.emit("model_call", error_payload(role, digest, err))
                if observe is not None:
                    observe(err)
                raise
            self.emit("model_call", call_payload(role, digest, result))
            if observe is not None:
                observe(result)
            return result

        return call

    def _replay(self, index: int, role: str, digest: str) -> Replayed:
        rec = self.recorded[index]
        if rec.get("role") != role or rec.get("request_hash") != digest:
            raise ResumeMismatch(
                f"recorded call #{index} ({rec.get('role')}) does not match the {role} request "
                "made now (prompts, tools or code changed since it was recorded); the episode "
                "is not continued with mixed answers")
        self.replayed += 1
        # Re-emitted under the same sequence number, so the event log keeps its numbering
        # (the store keeps the first payload of a sequence number).
        self.emit("model_call", rec)
        message = msgspec.convert(rec["message"], AssistantMessage)
        usage = msgspec.convert(rec.get("usage") or {}, Usage)
        finish = rec.get("finish_reason")
        return Replayed(message, usage, float(rec.get("latency_s") or 0.0),
                        int(rec.get("attempts") or 0),
                        finish if isinstance(finish, str) else None)
