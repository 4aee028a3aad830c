"""Shared wire types: the single source of truth for JSON on disk and over HTTP.

Messages follow the OpenAI chat-completions shape, tagged by ``role`` so that a list of
mixed messages decodes straight into the right Struct. Everything the run store writes and
everything the model client sends or receives is one of these types.
"""

from __future__ import annotations

from typing import Any, Literal, Union

import msgspec
from msgspec import Struct, field


class FunctionCall(Struct, omit_defaults=True):
    """The function half of a tool call; ``arguments`` is raw JSON text from the model."""

    name: str
    arguments: str = "{}"


class ToolCall(Struct, omit_defaults=True):
    id: str
    function: FunctionCall
    type: str = "function"


class SystemMessage(Struct, tag_field="role", tag="system", omit_defaults=True):
    content: str


class UserMessage(Struct, tag_field="role", tag="user", omit_defaults=True):
    content: str


class AssistantMessage(Struct, tag_field="role", tag="assistant", omit_defaults=True):
    content: str | None = None
    tool_calls: list[ToolCall] | None = None


class ToolMessage(Struct, tag_field="role", tag="tool", omit_defaults=True):
    tool_call_id: str
    content: str
    name: str | None = None


Message = Union[SystemMessage, UserMessage, AssistantMessage, ToolMessage]


class Usage(Struct, omit_defaults=True):
    """Token usage of one model call (or a sum of calls)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_prompt_tokens + other.cached_prompt_tokens,
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
    seed: int | None = None
    # Scripted reference models read the episode's identity from here; the client sends it
    # only to scripted endpoints, real endpoints never see it.
    sweepbench: dict[str, Any] | None = None


class PromptTokensDetails(Struct, omit_defaults=True):
    cached_tokens: int | None = None


class WireUsage(Struct, omit_defaults=True):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    prompt_tokens_details: PromptTokensDetails | None = None
    cache_read_input_tokens: int | None = None

    def to_usage(self) -> Usage:
        cached = 0
        if self.prompt_tokens_details is not None and self.prompt_tokens_details.cached_tokens:
            cached = self.prompt_tokens_details.cached_tokens
        elif self.cache_read_input_tokens:
            cached = self.cache_read_input_tokens
        return Usage(self.prompt_tokens, self.completion_tokens, cached)


class Choice(Struct, omit_defaults=True):
    message: AssistantMessage
    index: int = 0
    finish_reason: str | None = None


class ChatResponse(Struct, omit_defaults=True):
    choices: list[Choice]
    id: str = ""
    object: str = "chat.completion"
    created: int = 0
    model: str = ""
    usage: WireUsage | None = None


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
