"""Shared wire types: the single source of truth for JSON on disk and over HTTP.

Messages follow the OpenAI chat-completions shape, tagged by ``role`` so that a list of
mixed messages decodes straight into the right Struct. Everything the run store writes and
everything the model client sends or receives is one of these types.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import msgspec
from msgspec import Meta, Struct, field


class FunctionCall(Struct, omit_defaults=True):
    """The function half of a tool call; ``arguments`` is raw JSON text from the model."""

    name: str
    arguments: str = "{}"


class ToolCall(Struct, tag_field="type", tag="function", omit_defaults=True):
    """A function tool call. ``"type": "function"`` is always written (servers that validate
    requests strictly, e.g. with OpenAI's own types, require it) and optional when read."""

    id: str
    function: FunctionCall
    extra_content: dict[str, Any] | None = None
    """Provider data to send back untouched (Gemini's ``google.thought_signature``)."""


class SystemMessage(Struct, tag_field="role", tag="system", omit_defaults=True):
    content: str


class UserMessage(Struct, tag_field="role", tag="user", omit_defaults=True):
    content: str


class AssistantMessage(Struct, tag_field="role", tag="assistant", omit_defaults=True):
    """A model's reply. ``reasoning`` (the reply's thinking text, whatever field the server
    put it in) and ``reasoning_details`` (OpenRouter's opaque, possibly signed blocks) are
    stored with the message; a request carries them back only for endpoints that ask for it
    (``Endpoint.send_reasoning``, see :mod:`sweepbench.client.body`)."""

    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    reasoning: str | None = None
    reasoning_details: list[Any] | None = None


class ToolMessage(Struct, tag_field="role", tag="tool", omit_defaults=True):
    tool_call_id: str
    content: str
    name: str | None = None


Message = Union[SystemMessage, UserMessage, AssistantMessage, ToolMessage]


class Usage(Struct, omit_defaults=True):
    """Token usage of one model call (or a sum of calls).

    ``completion_tokens`` always includes ``reasoning_tokens`` (OpenAI, DeepSeek, OpenRouter
    report them that way; where a server counts hidden thinking only in ``total_tokens``, as
    Gemini's compatible endpoint does, the decoder adds it), so output cost is
    ``completion_tokens`` times the output price and reasoning is never counted twice.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_prompt_tokens + other.cached_prompt_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )


# ---- chat-completions request / response (the subset we use) ----------------------------


class ToolSpec(Struct):
    """An OpenAI tool schema: ``{"type": "function", "function": {...}}``."""

    function: dict[str, Any]
    type: str = "function"


class ChatRequest(Struct, omit_defaults=True):
    model: str
    messages: list[Message]
    tools: list[ToolSpec] | None = None
    tool_choice: str | dict[str, Any] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    seed: int | None = None
    resend_reasoning: str | None = None
    """A benchmark's own rule, never sent as a field: each assistant message's reasoning text
    goes back with it under this name (VitaBench's updated release re-sends it as
    ``reasoning_content``), whatever the endpoint's settings; see :mod:`sweepbench.client.body`."""
    # Scripted reference models read the episode's identity from here; the client sends it
    # only to scripted endpoints, real endpoints never see it.
    sweepbench: dict[str, Any] | None = None


MAX_TOKEN_COUNT = 100_000_000
"""Any usage counter above this is not a count (1e8: two orders above any context window)."""

Count = Annotated[int, Meta(ge=0, le=MAX_TOKEN_COUNT)]
"""A token counter as servers send it: a non-negative integer of sane size."""


class PromptTokensDetails(Struct, omit_defaults=True):
    cached_tokens: Count | None = None


class CompletionTokensDetails(Struct, omit_defaults=True):
    reasoning_tokens: Count | None = None


class WireUsage(Struct, omit_defaults=True):
    """``usage`` as the servers send it; every counter may be absent or null."""

    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    total_tokens: Count | None = None
    prompt_tokens_details: PromptTokensDetails | None = None
    completion_tokens_details: CompletionTokensDetails | None = None
    cache_read_input_tokens: Count | None = None  # LiteLLM / Anthropic-style gateways
    prompt_cache_hit_tokens: Count | None = None  # DeepSeek

    def to_usage(self) -> Usage:
        prompt = self.prompt_tokens or 0
        completion = self.completion_tokens or 0
        cached = None
        if self.prompt_tokens_details is not None:
            cached = self.prompt_tokens_details.cached_tokens
        if cached is None:
            cached = self.cache_read_input_tokens
        if cached is None:
            cached = self.prompt_cache_hit_tokens
        reasoning = None
        if self.completion_tokens_details is not None:
            reasoning = self.completion_tokens_details.reasoning_tokens
        if reasoning is None and self.total_tokens is not None \
                and self.prompt_tokens is not None and self.completion_tokens is not None:
            hidden = self.total_tokens - prompt - completion
            if hidden > 0:  # thinking counted only in the total (Gemini): billed as output
                reasoning, completion = hidden, completion + hidden
        return Usage(prompt, completion, min(cached or 0, prompt), reasoning or 0)


class WireFunction(Struct):
    name: str | None = None
    arguments: str | dict[str, Any] | None = None


class WireToolCall(Struct):
    """A tool call as servers send it: id may be missing, arguments an object, and the
    llama.cpp docs' legacy shape has ``name``/``arguments`` without a ``function`` wrapper."""

    id: str | None = None
    type: str | None = None
    function: WireFunction | None = None
    name: str | None = None
    arguments: str | dict[str, Any] | None = None
    extra_content: dict[str, Any] | None = None


class WireMessage(Struct):
    """The reply message as servers send it (normalised by :mod:`sweepbench.client.shapes`)."""

    role: Literal["assistant"] | None = None
    content: str | list[Any] | None = None
    reasoning: str | None = None  # vLLM >= 0.11, Ollama, OpenRouter
    reasoning_content: str | None = None  # DeepSeek, SGLang, llama.cpp, older vLLM
    reasoning_details: list[Any] | None = None  # OpenRouter
    tool_calls: list[WireToolCall] | None = None
    function_call: WireFunction | None = None  # OpenAI's legacy single call


class Choice(Struct):
    message: WireMessage
    index: int | None = 0
    finish_reason: str | None = None


class ChatResponse(Struct):
    """A chat-completions response body. ``choices`` is optional only so that a 200 carrying
    an ``error`` object (OpenRouter, proxies) is reported with the server's own words."""

    choices: list[Choice] | None = None
    id: str | None = None
    model: str | None = None
    usage: WireUsage | None = None
    error: Any = None


# ---- episode record ----------------------------------------------------------------------


class EpisodeRecord(Struct, kw_only=True, omit_defaults=True):
    """One finished (or failed) episode, as stored and exported."""

    run_id: str
    model: str
    benchmark: str
    domain: str
    task_id: str
    lang: str = "en"
    trial: int
    termination: str
    messages: list[Message] = field(default_factory=list)
    agent_usage: Usage = field(default_factory=Usage)
    user_usage: Usage = field(default_factory=Usage)
    agent_calls: int = 0
    user_calls: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    turns: int = 0
    steps: int = 0
    """Messages as VitaBench's upstream counts steps (each message one; an agent message with
    its tool results two)."""
    wall_s: float = 0.0
    error: str | None = None
    final_state: dict[str, Any] | None = None


encoder = msgspec.json.Encoder()
message_list_decoder = msgspec.json.Decoder(list[Message])
chat_request_decoder = msgspec.json.Decoder(ChatRequest)
chat_response_decoder = msgspec.json.Decoder(ChatResponse)

Role = Literal["system", "user", "assistant", "tool"]
