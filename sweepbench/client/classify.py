"""What a server's answer means: an HTTP status and body become the error they are, or a reply.

The error's class is the retry decision, a value the client acts on (the tree is drawn in
:mod:`sweepbench.errors`): a ``RetryableError`` (429, 408, 5xx, a body that cannot be read) is
retried, and a ``RateLimitError`` or a 503 ``ServerError`` carries the server's Retry-After;
a 400/413/422 saying the prompt does not fit is a ``ContextLengthError`` (each server's wording
is in :mod:`sweepbench.client.shapes`); any other 4xx, and an unexpected 1xx/3xx, is fatal.
A 429 that says ``insufficient_quota`` is a ``QuotaExceededError``: waiting does not help.

Server text is untrusted and may echo a key: every configured key, in any form, is scrubbed
from it before it is cut or shown (:data:`~sweepbench.client.secrets.KEYS`), and a 200 reply
holding a key anywhere is refused (:func:`echoes_key`), so no model is ever shown one.
"""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime
from typing import Any

import msgspec

from sweepbench.client.secrets import KEYS
from sweepbench.client.shapes import (
    DecodedReply,
    InBandError,
    ShapeError,
    decode_reply,
    error_text,
    is_context_overflow,
)
from sweepbench.errors import (
    AuthenticationError,
    BadRequestError,
    ContextLengthError,
    FatalError,
    InvalidResponseError,
    ModelError,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    ServerError,
)

__all__ = ["MAX_SERVER_TEXT", "SCRUB_WINDOW", "classify", "echoes_key", "http_error",
           "parse_retry_after", "read_reply", "scrub_error", "server_text"]

MAX_SERVER_TEXT = 400
"""Characters of server text kept in an error message."""
SCRUB_WINDOW = 16_384
"""Server text is scrubbed before any cut; text past this is dropped first."""


def classify(name: str, status: int, headers: Any, shown: str, text: str) -> ModelError:
    """The error for an HTTP ``status`` from endpoint ``name`` whose body says ``text``
    (``shown``: the part of it for the message)."""
    msg = f"{name}: HTTP {status}: {shown}" if shown else f"{name}: HTTP {status}"
    if status == 429:
        if "insufficient_quota" in text:
            return QuotaExceededError(msg, endpoint=name, status=status)
        return RateLimitError(
            msg, endpoint=name, status=status, retry_after=parse_retry_after(headers))
    if status == 408 or status >= 500:
        retry_after = parse_retry_after(headers) if status == 503 else None
        return ServerError(msg, endpoint=name, status=status, retry_after=retry_after)
    if is_context_overflow(status, text):
        return ContextLengthError(msg, endpoint=name, status=status)
    if status == 400:
        return BadRequestError(msg, endpoint=name, status=status)
    if status in (401, 403):
        return AuthenticationError(msg, endpoint=name, status=status)
    if status == 404:
        return NotFoundError(msg, endpoint=name, status=status)
    return FatalError(msg, endpoint=name, status=status)


def http_error(name: str, status: int, headers: Any, payload: bytes) -> ModelError:
    """The error for an answer of ``status`` (not 2xx) with body ``payload``."""
    shown, text = server_text(payload)
    return classify(name, status, headers, shown, text)


def read_reply(name: str, url: str, payload: bytes) -> DecodedReply:
    """A 2xx body read as a reply; an error it carries, a shape that is not a reply, or a
    reply echoing a key raises the ``ModelError`` it is."""
    scrub = KEYS.scrub
    try:
        reply = decode_reply(payload)
    except InBandError as err:
        text = scrub(err.text[:SCRUB_WINDOW])[:MAX_SERVER_TEXT]
        if err.status is not None:  # e.g. an upstream 502 reported inside a 200
            error = classify(name, err.status, None, f"{text} (in a 2xx body)", text)
        else:
            error = InvalidResponseError(f"{name}: a 2xx body carrying an error: {text}",
                                         endpoint=name)
        raise error from None
    except ShapeError as err:
        start = repr(scrub(payload[:SCRUB_WINDOW].decode("utf-8", "replace"))[:80])
        raise InvalidResponseError(
            f"{name}: invalid response from {url}: {scrub(str(err))[:200]}; "
            f"body starts {start}", endpoint=name) from None
    if echoes_key(reply, payload):
        raise FatalError(
            f"{name}: the reply from {url} contains an API key (whole, cut, re-cased "
            "or base64); refused: an endpoint that echoes keys is not shown to any model",
            endpoint=name)
    return reply


def server_text(payload: bytes) -> tuple[str, str]:
    """(what to show, everything to classify by) of an error body: its messages (else its
    type and code), and all its words (see :func:`~sweepbench.client.shapes.error_text`);
    the body's start as text when it is not JSON."""
    try:
        data = msgspec.json.decode(payload)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        data = None
    if isinstance(data, (dict, list, str)):
        text = error_text(data)
        shown = error_text(data, ("message",)) or text
    else:
        text = shown = ""
    if not text:
        text = shown = payload[:SCRUB_WINDOW].decode("utf-8", "replace").strip()
    # keys out first: a cut must never leave a recognisable piece of one
    scrub = KEYS.scrub
    return (scrub(shown[:SCRUB_WINDOW])[:MAX_SERVER_TEXT],
            scrub(text[:SCRUB_WINDOW])[:MAX_SERVER_TEXT])


def scrub_error(err: ModelError) -> str:
    """Scrub ``err``'s message in place (keys in any form); returns the message."""
    text = str(err)
    clean = KEYS.scrub(text)
    if clean != text:
        err.args = (clean, *err.args[1:])
    return clean


def echoes_key(reply: DecodedReply, payload: bytes) -> bool:
    """Whether a 200 reply holds a configured key anywhere: its raw body, or its decoded
    content, reasoning, tool calls, id or model (JSON escapes can hide a key in the raw)."""
    if not KEYS.active:
        return False
    msg = reply.message
    calls = msg.tool_calls or ()
    return KEYS.leaks(payload.decode("utf-8", "replace"), msg.content, msg.reasoning,
                      reply.response_id, reply.model,
                      *(f"{c.function.name} {c.function.arguments}" for c in calls),
                      *((str(msg.reasoning_details),) if msg.reasoning_details else ()))


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date); None when absent/bad."""
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)
