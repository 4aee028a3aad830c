"""JSON a model wrote, read safely: one bound on nesting for every reader of model output.

A model can send any JSON: tool-call arguments nested 10,000 deep, numbers no float holds
(``1e400``), ``NaN``, lone surrogates (``"\\ud800"``). Decoders and everything that walks a
decoded value (``repr``, ``json.dumps``, orjson, rich) recurse, and Python's recursion
limit is reached somewhere between 250 and 1,000 levels depending on who is on the stack,
so a deep value that one reader survives crashes the next. The defence is one limit checked
where model JSON is read, before anything recurses:

- tool-call ``arguments`` (a JSON string the model wrote) deeper than :data:`MAX_DEPTH` are
  malformed arguments: the tool answers an error the model sees, scorers count the call with
  no arguments, exports and the viewer show the text as written;
- a reply body deeper than :data:`MAX_BODY_DEPTH` (the wrapper's few levels plus arguments
  sent as an object) is not a reply at all (``client.shapes`` refuses it), so nothing deeper
  ever reaches the store.

:func:`parse_arguments` is the one decoder for arguments (msgspec: it refuses ``NaN``, numbers
out of range and lone surrogates as malformed too, so no reader gets a string it cannot write
back as UTF-8); :func:`python_arguments` is the same for readers that must produce the values
Python's ``json.loads`` does (VitaBench's upstream tools and renderings).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import msgspec

__all__ = ["MAX_BODY_DEPTH", "MAX_DEPTH", "ArgumentsError", "check_depth", "deeper_than",
           "parse_arguments", "python_arguments"]

MAX_DEPTH = 64
"""Deepest tool-call arguments read (no tool schema nests past a handful of levels)."""
MAX_BODY_DEPTH = 128
"""Deepest reply body read: :data:`MAX_DEPTH` plus room for the chat-completions wrapper."""

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKETS = re.compile(rb"[\[\]{}]")


class ArgumentsError(ValueError):
    """Model-sent JSON that cannot be read; the message says why, in words a model reads."""


def deeper_than(text: str | bytes, limit: int) -> bool:
    """Whether ``text``'s arrays and objects nest more than ``limit`` levels (``{}`` is one).

    Brackets inside strings do not count. Linear in the text, never recursive."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if data.count(b"[") + data.count(b"{") <= limit:  # the common case: nothing to scan
        return False
    depth = 0
    for m in _BRACKETS.finditer(_STRING.sub(b"", data)):
        depth += 1 if m.group() in (b"[", b"{") else -1
        if depth > limit:
            return True
    return False


def check_depth(text: str | bytes, limit: int = MAX_DEPTH) -> None:
    """ArgumentsError when ``text`` nests deeper than ``limit``."""
    if deeper_than(text, limit):
        raise ArgumentsError(f"arguments nest deeper than {limit} levels")


def parse_arguments(text: str | bytes) -> Any:
    """The JSON value of tool-call arguments, or ArgumentsError saying why not."""
    return _read(text, msgspec.json.decode)


def python_arguments(text: str | bytes) -> Any:
    """As :func:`parse_arguments`, the value built by Python's ``json.loads`` (``1e400`` is
    ``inf``, as upstream VitaBench reads it) once msgspec has found the text well-formed."""
    return _read(text, _python_loads)


def _python_loads(text: str | bytes) -> Any:
    msgspec.json.decode(text, type=msgspec.Raw)  # refuses NaN and lone surrogates
    return json.loads(text)


def _read(text: str | bytes, decode: Callable[[str | bytes], Any]) -> Any:
    check_depth(text)
    try:
        return decode(text)
    except (msgspec.DecodeError, ValueError) as exc:  # ValueError: an int of 4,300+ digits
        raise ArgumentsError(f"arguments are not valid JSON: {exc}") from None
    except (RecursionError, UnicodeError) as exc:  # deep despite the check (a caller's stack)
        raise ArgumentsError(f"arguments cannot be read: {type(exc).__name__}") from None
