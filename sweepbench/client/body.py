"""Request bodies: how a ChatRequest becomes the exact bytes sent, and splicing them cheaply.

:class:`BodyTemplate` holds one endpoint's encoding rules (model name, defaults, extra_body,
whether the ``sweepbench`` field survives); :meth:`BodyTemplate.plain` encodes a request in
one go. Within an episode the messages only ever grow, so re-encoding the whole conversation
for every call makes client CPU per call grow with its length. A :class:`SplicingEncoder`
(one per conversation) encodes each message once, keeps the bytes, and builds the body as::

    {"model":M,"messages":[  +  m0,m1,...,mn  +  ]  +  ,"tools":T  +  ,"temperature":...}
    '------ head ---------'    '- cached ---'          '- per tools -'  '---- tail ----'

byte-identical to :meth:`BodyTemplate.plain` (msgspec's encoding of the same request).

An endpoint's template also shapes what is sent (``Endpoint`` fields): ``tool_choice`` goes
with every request that offers tools; the completion budget goes as ``max_tokens`` or
``max_completion_tokens``; an assistant message's stored reasoning is left out unless the
endpoint sends it back (``send_reasoning``, under ``reasoning_field``, with OpenRouter's
``reasoning_details`` as received), and an assistant message without content can be sent with
``assistant_empty_content`` ("" for servers that reject null). A benchmark whose reference
sends reasoning back says so in the request (``ChatRequest.resend_reasoning``, a field name):
then each assistant message with reasoning text carries it under that name, and nothing else
(an endpoint that sends reasoning back itself keeps its own shape, which its server needs).
Messages are recognised by position and object identity: the encoder holds a reference to
each one it encoded, so identities stay valid. Messages must not be mutated in place after
they were sent (the episode never does); a conversation that diverges (a message at some
position is a different object) is re-encoded from that position on. Tool arrays are encoded
once per list object, shared by every conversation of the template (a small LRU), so a runner
that reuses one ``tools`` list per toolkit pays for it once.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sweepbench.memo import IdentityMemo
from sweepbench.wire import AssistantMessage, ChatRequest, Message, ToolSpec, encoder

__all__ = ["OVERRIDABLE", "BodyTemplate", "SplicingEncoder"]

OVERRIDABLE = ("tool_choice", "temperature", "max_tokens", "max_completion_tokens", "seed")
_TOOLS_CACHE = 64
_BUDGET_FIELDS = ("max_tokens", "max_completion_tokens")
_AFTER_TOOLS = ChatRequest.__struct_fields__.index("tools") + 1  # the fields a tail is made of


class BodyTemplate:
    """One endpoint's rules for turning a ChatRequest into the JSON body it is sent as.

    ``defaults`` fill request fields left unset (``tool_choice`` only where the request has
    tools); a field named in ``extra_body`` is dropped from the request (extra_body wins) and
    ``extra_body`` is appended last. ``budget_field`` is the name the completion budget is
    sent as. ``reasoning_field`` (None: only where a request's ``resend_reasoning`` asks)
    names the field the endpoint wants stored reasoning sent back as; ``empty_content``
    (None: left out) is sent for assistant messages without content.
    """

    def __init__(self, *, model: str, keep_sweepbench: bool = False,
                 defaults: dict[str, Any] | None = None,
                 extra_body: dict[str, Any] | None = None, budget_field: str = "max_tokens",
                 reasoning_field: str | None = None,
                 empty_content: str | None = None) -> None:
        extra_body = extra_body or {}
        if budget_field not in _BUDGET_FIELDS:
            raise ValueError(f"budget field must be one of {', '.join(_BUDGET_FIELDS)}, "
                             f"got {budget_field!r}")
        self.model = model
        self.keep_sweepbench = keep_sweepbench
        self.defaults = {k: v for k, v in (defaults or {}).items() if v is not None}
        self.dropped = frozenset(k for k in OVERRIDABLE if k in extra_body)
        self.budget_field = budget_field
        self.reasoning_field = reasoning_field
        self.empty_content = empty_content
        extra = encoder.encode(extra_body)[1:-1] if extra_body else b""
        self.extra_fragment = b"," + extra if extra else b""
        self.head = b'{"model":' + encoder.encode(model) + b',"messages":['
        self._empty = self.head + b"]"
        self._tools: IdentityMemo[list[ToolSpec], bytes] = IdentityMemo(_TOOLS_CACHE)
        self.tools_encoded = 0

    @classmethod
    def for_endpoint(cls, endpoint: Any) -> BodyTemplate:
        """The template of a config ``Endpoint`` (its request-shaping fields)."""
        budget = endpoint.max_tokens or None
        # the reference server's doubles need the task; a model named scripted/... is one of
        # them, under whatever endpoint name (vllm/scripted/oracle against `sweepbench serve`)
        keep = endpoint.scripted or endpoint.model_name.startswith("scripted/")
        return cls(
            model=endpoint.model_name, keep_sweepbench=keep,
            defaults={"temperature": endpoint.temperature, "max_tokens": budget,
                      "tool_choice": endpoint.tool_choice},
            extra_body=endpoint.extra_body, budget_field=endpoint.max_tokens_field,
            reasoning_field=endpoint.reasoning_field if endpoint.send_reasoning else None,
            empty_content=endpoint.assistant_empty_content)

    def _changes(self, request: ChatRequest) -> dict[str, Any]:
        changes: dict[str, Any] = {"model": self.model}
        if not self.keep_sweepbench and request.sweepbench is not None:
            changes["sweepbench"] = None
        if request.resend_reasoning is not None:  # a rule for the messages, not a field
            changes["resend_reasoning"] = None
        defaults = self.defaults
        for name in OVERRIDABLE:
            if name in self.dropped:
                changes[name] = None
            elif name in defaults and getattr(request, name) is None:
                if name != "tool_choice" or request.tools:
                    changes[name] = defaults[name]
        if self.budget_field == "max_completion_tokens":  # the budget under the other name
            budget = changes.get("max_tokens", request.max_tokens)
            changes["max_tokens"] = None
            if "max_completion_tokens" not in self.dropped \
                    and request.max_completion_tokens is None:
                changes["max_completion_tokens"] = budget
        return changes

    def needs_shaping(self, m: Message) -> bool:
        """Whether ``m`` is not sent as stored (reasoning to strip or rename, empty content)."""
        return type(m) is AssistantMessage and (
            m.reasoning is not None or m.reasoning_details is not None
            or (m.content is None and self.empty_content is not None)
            or (m.tool_calls is not None and self.reasoning_field is not None))

    def encode_message(self, m: Message, resend: str | None = None) -> bytes:
        """One message as this endpoint is sent it (``resend``: the request's
        ``resend_reasoning``)."""
        if not self.needs_shaping(m):
            return encoder.encode(m)
        assert isinstance(m, AssistantMessage)
        out: dict[str, Any] = {"role": "assistant"}
        content = m.content if m.content is not None else self.empty_content
        if content is not None:
            out["content"] = content
        if m.tool_calls is not None:
            out["tool_calls"] = m.tool_calls
        if self.reasoning_field is not None:
            # DeepSeek's thinking mode wants it on every tool-call turn, even when empty
            if m.reasoning is not None or m.tool_calls:
                out[self.reasoning_field] = m.reasoning or ""
            if m.reasoning_details is not None:
                out["reasoning_details"] = m.reasoning_details
        elif resend is not None and m.reasoning:
            out[resend] = m.reasoning
        return encoder.encode(out)

    def _finish(self, body: bytes) -> bytes:
        if self.extra_fragment:
            return body[:-1] + self.extra_fragment + b"}"
        return body

    def plain(self, request: ChatRequest) -> bytes:
        """The body for ``request``, encoded from scratch."""
        changes = self._changes(request)
        if any(self.needs_shaping(m) for m in request.messages):
            resend = request.resend_reasoning
            changes["messages"] = [msgspec.Raw(self.encode_message(m, resend))
                                   for m in request.messages]
        body = encoder.encode(msgspec.structs.replace(request, **changes))
        return self._finish(body)

    def tail(self, request: ChatRequest) -> bytes:
        """Everything after the messages and tools: ``,"temperature":...}`` (or ``}``)."""
        changes = self._changes(request)
        changes.update(messages=[], tools=None)
        small = encoder.encode(msgspec.structs.replace(request, **changes))
        assert small.startswith(self._empty), small[:80]
        return self._finish(small[len(self._empty):])

    def tools_bytes(self, tools: list[ToolSpec]) -> bytes:
        """``tools`` encoded, once per list object (LRU of recent lists)."""
        return self._tools.get(tools, self._encode_tools)

    def _encode_tools(self, tools: list[ToolSpec]) -> bytes:
        self.tools_encoded += 1
        return encoder.encode(tools)

    def splicer(self) -> SplicingEncoder:
        return SplicingEncoder(self)


class SplicingEncoder:
    """Bodies for one append-only conversation; each message is encoded once.

    ``messages_encoded`` counts message encodings (for tests and profiles). The bytes kept
    follow the last request's ``resend_reasoning`` (:meth:`sync` alone, as the call journal
    calls it, keeps it); a request that changes it re-encodes from the first message it
    changes.
    """

    def __init__(self, template: BodyTemplate) -> None:
        self.template = template
        self.messages_encoded = 0
        self._refs: list[Message] = []
        self._offsets: list[int] = []  # where message i starts in _joined (before its comma)
        self._joined = bytearray()
        self._tail_key: tuple | None = None
        self._tail_bytes = b""
        self._resend: str | None = None

    def _common_prefix(self, messages: list[Message]) -> int:
        refs = self._refs
        n = min(len(messages), len(refs))
        # Append-only fast path: the last message we know is still where we left it.
        if n and n == len(refs) and messages[n - 1] is refs[n - 1] and messages[0] is refs[0]:
            return n
        i = 0
        while i < n and messages[i] is refs[i]:
            i += 1
        return i

    def sync(self, messages: list[Message]) -> None:
        """Encode what is new in ``messages`` (the first half of :meth:`encode`)."""
        keep = self._common_prefix(messages)
        if keep < len(self._refs):
            self._forget(keep)
        joined, t, resend = self._joined, self.template, self._resend
        for m in messages[keep:]:
            self._offsets.append(len(joined))
            if self._refs:
                joined += b","
            joined += t.encode_message(m, resend)
            self._refs.append(m)
            self.messages_encoded += 1

    def _forget(self, keep: int) -> None:
        """Drop the bytes of message ``keep`` and after."""
        del self._joined[self._offsets[keep]:]
        del self._refs[keep:]
        del self._offsets[keep:]

    def _resend_as(self, resend: str | None) -> None:
        """Follow a request's ``resend_reasoning``: forget from the first message it shapes
        (one with reasoning text, unless the endpoint sends reasoning back in its own way)."""
        self._resend = resend
        if self.template.reasoning_field is None:
            for i, m in enumerate(self._refs):
                if type(m) is AssistantMessage and m.reasoning:
                    self._forget(i)
                    break

    def plain(self, i: int) -> bytes | bytearray:
        """Message ``i`` of the conversation last synced, as ``wire.encoder`` encodes it (the
        bytes already spliced unless this endpoint shapes the message): what the call
        journal hashes, so a message is encoded once per call, not twice."""
        m = self._refs[i]
        if self.template.needs_shaping(m):
            return encoder.encode(m)
        offsets = self._offsets
        end = offsets[i + 1] if i + 1 < len(offsets) else len(self._joined)
        return self._joined[offsets[i] + (1 if i else 0):end]  # a copy: joined may grow

    def _tail(self, request: ChatRequest) -> bytes:
        """The template's tail, made again only when the JSON of the fields after the tools
        changed (the tail is made of that JSON and whether the request offers tools)."""
        rest = msgspec.structs.astuple(request)[_AFTER_TOOLS:]
        key = (bool(request.tools), encoder.encode(rest))
        if key != self._tail_key:
            self._tail_bytes = self.template.tail(request)
            self._tail_key = key
        return self._tail_bytes

    def encode(self, request: ChatRequest) -> bytes:
        if request.resend_reasoning != self._resend:
            self._resend_as(request.resend_reasoning)
        self.sync(request.messages)
        t = self.template
        tools = (b',"tools":' + t.tools_bytes(request.tools)
                 if request.tools is not None else b"")
        return b"".join((t.head, self._joined, b"]", tools, self._tail(request)))
