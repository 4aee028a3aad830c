"""Tool schemas shaped as upstream VitaBench sends them.

Upstream builds a pydantic model named ``parameters`` from each tool's signature and flattens
``Optional[X]`` to X. So every property has a ``title`` (its name, words capitalized), an
optional type shows only the inner type (a ``Literal`` then shows as a plain string), a default
is shown, ``required`` is left out when nothing is, and there is no ``additionalProperties``.
A parameter has a description only when one is given under its exact name.
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any, Literal, Union

from sweepbench.tools.base import Tool

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _json_type(annotation: Any) -> dict[str, Any]:
    """``{"type", "items"?, "enum"?}`` of a non-optional annotation."""
    origin = typing.get_origin(annotation)
    if origin is list:
        (item,) = typing.get_args(annotation) or (Any,)
        return {"items": _json_type(item), "type": "array"}
    if origin is Literal:
        return {"enum": list(typing.get_args(annotation)), "type": "string"}
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}
    return {}


def _optional_inner(annotation: Any) -> Any | None:
    """X for ``Optional[X]`` / ``X | None``; None when the annotation is not optional."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(inner) < len(typing.get_args(annotation)) and len(inner) == 1:
            return inner[0]
    return None


def _property(name: str, annotation: Any, default: Any, description: str | None) -> dict[str, Any]:
    prop: dict[str, Any] = {}
    if default is not inspect.Parameter.empty:
        prop["default"] = default
    if description is not None:
        prop["description"] = description
    inner = _optional_inner(annotation)
    if inner is None:
        prop.update(_json_type(annotation))
        prop["title"] = name.title().replace("_", " ")
        return dict(sorted(prop.items()))
    prop["title"] = name.title().replace("_", " ")
    flat = _json_type(inner)  # the optional's first branch, without its enum
    if "type" in flat:
        prop["type"] = flat["type"]
    if "items" in flat:
        prop["items"] = flat["items"]
    return prop


def upstream_schema(t: Tool, description: str | None, arg_descriptions: dict[str, str] | None) -> dict:
    """The OpenAI function schema of ``t``. Without ``description`` the tool's own texts are
    used; with it, only ``arg_descriptions`` describe parameters (by exact name)."""
    if description is None:
        description, arg_descriptions = t.description, t.arg_descriptions
    hints = typing.get_type_hints(t.fn)
    params = list(inspect.signature(t.fn).parameters.values())[1:]  # the first is the state
    properties = {p.name: _property(p.name, hints.get(p.name, Any), p.default,
                                    (arg_descriptions or {}).get(p.name)) for p in params}
    parameters: dict[str, Any] = {"properties": properties}
    required = [p.name for p in params if p.default is inspect.Parameter.empty]
    if required:
        parameters["required"] = required
    parameters.update(title="parameters", type="object")
    return {"type": "function",
            "function": {"name": t.name, "description": description, "parameters": parameters}}
