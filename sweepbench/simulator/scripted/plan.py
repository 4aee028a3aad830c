"""Gold plans: the ground-truth tool-call sequence a scripted agent follows.

A plan is a list of steps. An argument may refer to the output of an earlier step (a new
order's id, say) with ``{"$from_step": i, "$field": "order_id"}``; it is resolved from what that
step actually returned in the conversation, so the scripted agent reads results like a model
would instead of predicting generated ids.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import Struct, field


class Step(Struct, kw_only=True):
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    note: str = ""  # what the step is for, said to the user by the scripted agent


class UnresolvedReference(Exception):
    """A step refers to an output that is missing or not JSON (an earlier step failed)."""


def _lookup(output: str, path: str) -> Any:
    try:
        value: Any = msgspec.json.decode(output)
    except msgspec.DecodeError:
        raise UnresolvedReference(f"output is not JSON: {output[:80]!r}") from None
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise UnresolvedReference(f"no `{path}` in step output")
    return value


def resolve(arguments: Any, outputs: list[str | None]) -> Any:
    """Replace ``$from_step`` references in ``arguments`` with values from ``outputs``."""
    if isinstance(arguments, dict):
        if "$from_step" in arguments:
            i = arguments["$from_step"]
            if i >= len(outputs) or outputs[i] is None:
                raise UnresolvedReference(f"step {i} has no output")
            return _lookup(outputs[i], arguments.get("$field", ""))
        return {k: resolve(v, outputs) for k, v in arguments.items()}
    if isinstance(arguments, list):
        return [resolve(v, outputs) for v in arguments]
    return arguments
