"""What OpenAI-compatible servers answer, read into our wire types: replies and error bodies.

Servers that call themselves OpenAI-compatible differ in the details (fixtures for each, written
from their docs, are in ``tests/fixtures/providers/``): ``content`` may be a string, null or a
list of text parts (llama.cpp, Mistral); the reasoning text comes as ``reasoning`` (vLLM,
Ollama, OpenRouter), ``reasoning_content`` (DeepSeek, SGLang, llama.cpp), ``reasoning_details``
(OpenRouter), ``thinking`` parts (Mistral) or inline ``<thought>`` tags (Gemini); tool calls
may lack ids or repeat them, carry arguments as a JSON object (Ollama's native shape) or come
as OpenAI's legacy ``function_call``; usage counters may be absent or null, the cached part
is named three ways, and Gemini counts thinking only in ``total_tokens``. A body nested
deeper than :data:`sweepbench.model_json.MAX_BODY_DEPTH` is refused before it is decoded.

:func:`decode_reply` turns all of these into one :class:`DecodedReply` and raises :class:`ShapeError`
(a plain message; the client adds the endpoint) for what it cannot understand. Tool-call ids
that are missing, empty or repeated are replaced deterministically (a digest of the response
body and the call's position), so a resumed episode sees the same ids.

:func:`error_text` and :func:`is_context_overflow` read error bodies (an ``{"error": {...}}``
object, vLLM/SGLang's flat ``{"object": "error", ...}``, or Gemini's array of them) and tell a
prompt that does not fit the model's context from other 4xx, by the wording each server uses.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import msgspec

from sweepbench.model_json import MAX_BODY_DEPTH, deeper_than
from sweepbench.wire import (
    AssistantMessage,
    FunctionCall,
    ToolCall,
    Usage,
    WireMessage,
    WireToolCall,
    chat_response_decoder,
    encoder,
)

__all__ = ["TRUNCATED", "DecodedReply", "InBandError", "ShapeError", "decode_reply", "error_text",
           "is_context_overflow"]

TRUNCATED = frozenset({
    "length", "max_tokens", "model_context_window_exceeded",  # cut by max_tokens / the window
    "content_filter",  # filtered mid-answer
    "insufficient_system_resource", "abort", "error",  # interrupted server-side
})
"""``finish_reason`` values meaning the reply was cut short (DeepSeek, SGLang, OpenRouter
name theirs)."""


class ShapeError(ValueError):
    """A response body we cannot read as a chat completion; the message says what and where."""


class InBandError(ShapeError):
    """A 2xx whose body is an error object (OpenRouter mid-generation, proxies); ``status`` is
    the error's own HTTP-like ``code`` when it has one (e.g. 502), else None."""

    def __init__(self, text: str, status: int | None) -> None:
        super().__init__(f"a 2xx carrying an error: {text}")
        self.text, self.status = text, status


class DecodedReply(msgspec.Struct, kw_only=True):
    """One decoded chat completion."""

    message: AssistantMessage
    usage: Usage
    finish_reason: str | None = None
    response_id: str = ""
    model: str = ""


def decode_reply(payload: bytes) -> DecodedReply:
    """The reply in ``payload`` (a 2xx body), or :class:`ShapeError`."""
    if deeper_than(payload, MAX_BODY_DEPTH):  # every reader downstream would recurse on it
        raise ShapeError(f"JSON nested deeper than {MAX_BODY_DEPTH} levels")
    try:
        resp = chat_response_decoder.decode(payload)
    except msgspec.ValidationError as err:
        raise ShapeError(f"unexpected shape ({err})") from None
    except msgspec.DecodeError as err:
        raise ShapeError(f"not a JSON object ({err})") from None
    except UnicodeDecodeError as err:  # a string that is not UTF-8
        raise ShapeError(f"invalid UTF-8 at byte {err.start}") from None
    except RecursionError:  # JSON nested deeper than the decoder goes
        raise ShapeError("JSON nested too deeply") from None
    if resp.choices is None:
        if resp.error is not None:
            err = resp.error
            code = err.get("code") if isinstance(err, dict) else None
            status = code if type(code) is int and 400 <= code < 600 else None
            raise InBandError(error_text(err) or repr(err)[:200], status)
        raise ShapeError("no `choices` in the body")
    if not resp.choices:
        raise ShapeError("`choices` is empty")
    choice = resp.choices[0]
    if choice.index:  # servers put index 0 first; look only if this one does not
        choice = next((c for c in resp.choices if not c.index), choice)
    return DecodedReply(message=_message(choice.message, payload),
                 usage=resp.usage.to_usage() if resp.usage is not None else Usage(),
                 finish_reason=choice.finish_reason, response_id=resp.id or "",
                 model=resp.model or "")


# ---- the message ----------------------------------------------------------------------------

_THOUGHT = re.compile(r"\s*<thought>(.*?)</thought>\s*", re.S)


def _message(msg: WireMessage, payload: bytes) -> AssistantMessage:
    content = msg.content
    thinking = None
    if content is not None and type(content) is not str:
        content, thinking = _content(content)
    reasoning = msg.reasoning or msg.reasoning_content or thinking
    if not reasoning and msg.reasoning_details:
        reasoning = _details_text(msg.reasoning_details)
    if not reasoning and content and content.lstrip().startswith("<thought>"):
        m = _THOUGHT.match(content)
        if m:  # Gemini with include_thoughts: the thought summary inline, first
            reasoning, content = m.group(1), content[m.end():]
    raw_calls = msg.tool_calls
    if raw_calls is None and msg.function_call is not None:
        raw_calls = [WireToolCall(function=msg.function_call)]
    calls = _tool_calls(raw_calls, payload) if raw_calls else None
    return AssistantMessage(content, calls, reasoning or None, msg.reasoning_details or None)


def _content(content: list[Any]) -> tuple[str, str | None]:
    """(text, thinking) from a list of parts."""
    texts: list[str] = []
    thinking: list[str] = []
    for i, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
        elif not isinstance(part, dict):
            raise ShapeError(f"message.content[{i}] is {type(part).__name__}, not a part object")
        elif part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "thinking":  # Mistral's reasoning models
            inner = part.get("thinking")
            if isinstance(inner, str):
                thinking.append(inner)
            elif isinstance(inner, list):
                thinking += [p["text"] for p in inner
                             if isinstance(p, dict) and isinstance(p.get("text"), str)]
        # other part types (images, audio, refusals) carry no text for us
    return "\n".join(texts), "\n".join(thinking) or None


def _details_text(details: list[Any] | None) -> str | None:
    """The readable text of OpenRouter's ``reasoning_details`` (encrypted blocks have none)."""
    if not details:
        return None
    texts = [d.get("text") or d.get("summary") for d in details if isinstance(d, dict)
             and d.get("type") in ("reasoning.text", "reasoning.summary")]
    return "\n".join(t for t in texts if isinstance(t, str) and t) or None


def _tool_calls(raw: list[WireToolCall], payload: bytes) -> list[ToolCall]:
    calls: list[ToolCall] = []
    seen: set[str] = set()
    digest = ""
    for i, tc in enumerate(raw):
        if tc.type not in (None, "function"):
            raise ShapeError(f"tool call {i} has type {tc.type!r}; only function tools are "
                             "supported")
        fn = tc.function
        if fn is None:
            if tc.name is None:
                raise ShapeError(f"tool call {i} has no `function` object")
            fn_name, args = tc.name, tc.arguments  # llama.cpp docs' flat legacy shape
        else:
            fn_name, args = fn.name, fn.arguments
        if fn_name is None:
            raise ShapeError(f"tool call {i} has no function name")
        if not fn_name.strip():
            raise ShapeError(f"tool call {i} has an empty function name")
        if args is None or args == "":
            args = "{}"
        elif type(args) is not str:  # an object (Ollama's native shape): as compact JSON
            args = encoder.encode(args).decode()
        call_id = tc.id
        if not call_id or call_id in seen:
            if not digest:
                digest = hashlib.blake2b(payload, digest_size=6).hexdigest()
            call_id = f"call_{digest}_{i}"
        seen.add(call_id)
        calls.append(ToolCall(call_id, FunctionCall(fn_name, args),
                              extra_content=tc.extra_content))
    return calls


# ---- error bodies ---------------------------------------------------------------------------

OVERFLOW_PATTERNS = (
    r"context_length_exceeded",  # OpenAI's code; llama-cpp-python
    r"exceed_context_size_error",  # llama.cpp's type
    r"maximum context length",  # OpenAI, vLLM, DeepSeek, OpenRouter, SGLang
    r"context length is only",  # vLLM (renderer)
    r"longer than the maximum model length",  # vLLM (input processor)
    r"is longer than the model's context length",  # SGLang, Together
    r"exceeds? the available context size",  # llama.cpp
    r"larger than the max context size",  # llama.cpp
    r"prompt is longer than the context length",  # Ollama without context shift
    r"input length exceeds the context length",  # Ollama
    r"prompt is too long",  # Anthropic
    r"exceed context limit",  # Anthropic (input + max_tokens)
    r"input token count .* exceeds the maximum number of tokens",  # Gemini
    r"exceeds the context window",  # OpenAI (newer wording)
    r"context window exceeds limit",  # MiniMax
    r"reduce the length of the messages",  # OpenAI / DeepSeek / Groq
)
_OVERFLOW = re.compile("|".join(f"(?:{p})" for p in OVERFLOW_PATTERNS), re.I | re.S)
_OVERFLOW_STATUSES = (400, 413, 422)


def error_text(body: Any, keys: tuple[str, ...] = ("message", "type", "code", "status")) -> str:
    """The words of an error body: every ``message``/``type``/``code``/``status`` string (or
    only ``keys``), from ``{"error": {...}}``, a flat error object, a bare string, or a list
    of them."""
    items = body if isinstance(body, list) else [body]
    out: list[str] = []
    for item in items:
        err = item.get("error", item) if isinstance(item, dict) else item
        if isinstance(err, str):
            out.append(err)
        elif isinstance(err, dict):
            for key in keys:
                value = err.get(key)
                if isinstance(value, str) and value and value not in out:
                    out.append(value)
                elif isinstance(value, int) and not isinstance(value, bool) and key == "code":
                    out.append(f"code {value}")
    return " | ".join(out)


def is_context_overflow(status: int, text: str) -> bool:
    """Whether an error (its status and :func:`error_text`) says the prompt does not fit."""
    return status in _OVERFLOW_STATUSES and _OVERFLOW.search(text) is not None
