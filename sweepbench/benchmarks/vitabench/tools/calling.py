"""How VitaBench's tools are called: upstream's convention, not the framework's default.

Upstream VitaBench validates nothing. It passes the model's JSON object to the tool method as
keyword arguments, so Python decides: a missing or extra argument is CPython's ``TypeError``
text, a wrong type is used as it is (a string where a list is declared is iterated, an int year
misses a table keyed by strings), and an exception raised anywhere in the tool becomes
``"Error: " + str(exception)``. A business rule that refuses the call (upstream's
``assert``) is a plain result with no prefix, which upstream does not count as an error.
Results that are not text are rendered as JSON with every number turned into a string.

The updated release (2025-12) catches most of its own not-found errors and answers
``Error: <why>`` as an ordinary result (:func:`found`); where it does not, the exception
leaves the tool and is an error, as in both releases. Upstream's tools call each other through
the same wrapper that turns a failed assertion into its text, and the caller then works on that
text (:func:`inner`).

Because a model's raw values reach the tools by design, any exception a tool raises is the
model's error text here, as upstream; the tools are written so that this is the only way an
exception leaves them. What upstream cannot do inside one episode, sweepbench decides:
arguments that are not a JSON object end upstream's whole task attempt, here they are an error
the model reads (see docs/benchmarks/vitabench-parity.md).
"""

from __future__ import annotations

import dataclasses
import json
import types
from typing import Any, Callable, TypeVar

from sweepbench.benchmarks.vitabench.tools.schema import upstream_schema
from sweepbench.model_json import ArgumentsError, python_arguments
from sweepbench.tools.base import (
    MAX_ARGUMENT_BYTES,
    CallPolicy,
    Tool,
    ToolKind,
    Toolkit,
    ToolOutcome,
    tool,
)

T = TypeVar("T")

# Keys upstream's dispatcher itself takes (``Environment.make_tool_call(self, tool_name,
# requestor, **arguments)``): an argument with one of these names fails there, with its text.
_DISPATCH = "Environment.make_tool_call()"


class Refused(Exception):
    """A business rule refused the call (upstream's assertion): the model reads the message
    as the result, and it does not count as a tool error."""


def require(condition: Any, message: str) -> None:
    if not condition:
        raise Refused(message)


def found(self: Any, lookup: Callable[..., T], *args: Any) -> T:
    """``lookup(self, *args)``. When it cannot find the record (its ValueError) and the release
    answers by name (``rules.named_answers``), the call ends with the ordinary answer
    ``Error: <why>``; else the ValueError leaves the tool, an error."""
    try:
        return lookup(self, *args)
    except ValueError as exc:
        if self.rules.named_answers:
            raise Refused(f"Error: {exc}") from None
        raise


def inner(fn: Callable[..., T], *args: Any) -> T | str:
    """One tool calling another as upstream's do, through the tool wrapper: a refusal comes back
    as its text, for the caller to work on (and usually fail on) as upstream's does."""
    try:
        return fn(*args)
    except Refused as exc:
        return str(exc)


def tool_of(owner: str) -> Callable[..., Callable]:
    """The ``@tool`` decorator for the tools of upstream's toolkit class ``owner``: CPython
    names a function by its qualified name in argument errors, and the model reads those."""

    def decorator(kind: ToolKind, **options: Any) -> Callable:
        def mark(fn: Callable) -> Callable:
            fn.__qualname__ = f"{owner}.{fn.__name__}"
            return tool(kind, **options)(fn)
        return mark

    return decorator


def renamed(t: Tool, name: str) -> Tool:
    """Tool ``t`` called ``name`` (a release's spelling), its function a copy named so, as
    CPython names it in argument errors; ``t`` keeps its name."""
    fn = t.fn
    copy = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__doc__, copy.__annotations__ = fn.__doc__, fn.__annotations__
    copy.__qualname__ = f"{fn.__qualname__.rpartition('.')[0]}.{name}".lstrip(".")
    return dataclasses.replace(t, name=name, fn=copy)


def to_json_str(value: Any) -> str:
    """Upstream's rendering of a result: text as it is, anything else as JSON whose numbers and
    booleans are strings (``1076.0`` -> ``"1076.0"``)."""
    if isinstance(value, str):
        return value
    return json.dumps(_plain(value), default=str, ensure_ascii=False)


def _plain(value: Any) -> Any:
    if isinstance(value, (str, type(None))):
        return value
    if isinstance(value, (int, float, bool)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    raise TypeError(f"a tool returned {type(value).__name__}, which upstream cannot render")


def _arguments(raw: str | bytes) -> dict[str, Any]:
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "replace")
    if len(raw) > MAX_ARGUMENT_BYTES:
        raise ValueError(f"they are too large ({len(raw)} bytes)")
    if not raw.strip():
        return {}
    try:
        value = python_arguments(raw)
    except ArgumentsError as exc:
        raise ValueError(f"they {str(exc).removeprefix('arguments ')}") from None
    if not isinstance(value, dict):
        raise ValueError(f"they must be a JSON object, got {type(value).__name__}")
    return value


def _dispatch_error(args: dict[str, Any]) -> str | None:
    if "requestor" in args:
        return (f"vita.environment.environment.{_DISPATCH} got multiple values for keyword "
                f"argument 'requestor'")
    clash = next((k for k in args if k in ("self", "tool_name")), None)
    return f"{_DISPATCH} got multiple values for argument '{clash}'" if clash else None


class UpstreamCalls(CallPolicy):
    """Calls and schemas as upstream VitaBench makes them (see the module docstring)."""

    def call(self, toolkit: Toolkit, db: Any, name: str, arguments: str | bytes) -> ToolOutcome:
        try:
            args = _arguments(arguments)
        except ValueError as exc:
            return ToolOutcome(f"Error: arguments for `{name}` are unusable: {exc}", False)
        clash = _dispatch_error(args)
        if clash:
            return ToolOutcome(f"Error: {clash}", False)
        found = toolkit.tools.get(name)
        if found is None:
            return ToolOutcome(f"Error: Tool '{name}' not found.", False)
        try:
            value = found.fn(db, **args)
        except Refused as exc:
            return ToolOutcome(str(exc), True, str(exc))
        except Exception as exc:  # the model's values reach the code by design (see above)
            return ToolOutcome(f"Error: {exc}", False)
        return ToolOutcome(to_json_str(value), True, value)

    def schema(self, t: Tool, description: str | None, arg_descriptions: dict[str, str] | None) -> dict:
        return upstream_schema(t, description, arg_descriptions)


UPSTREAM = UpstreamCalls()
