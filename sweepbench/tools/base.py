"""The tools framework: plain functions become model-callable tools.

A tool is a function ``fn(db, **arguments)``. Its signature is the argument schema and its
docstring the description, so what the model sees cannot drift from the code. Arguments
arrive as untrusted JSON text; they are decoded and validated by msgspec against a Struct built
from the signature. Any problem the model caused (unknown tool, malformed JSON, missing, extra
or wrong-typed arguments, a ``ToolError`` raised by the tool) becomes a clear error string for
the model and the episode continues. Any other exception is a bug and propagates. That is the
default :class:`CallPolicy`; a toolkit may be given another (how calls are run and tools are
described), for a benchmark whose published harness does it differently.
"""

from __future__ import annotations

import inspect
import re
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal

import msgspec

from sweepbench.errors import ToolError
from sweepbench.model_json import MAX_DEPTH, deeper_than
from sweepbench.wire import ToolSpec

ToolKind = Literal["read", "write", "general"]

_TOOL_ATTR = "__sweepbench_tool__"
MAX_ARGUMENT_BYTES = 64 * 1024


def tool(kind: ToolKind, *, name: str | None = None, feeds: Iterable[str] = ()) -> Callable:
    """Mark a function as a tool. ``feeds``: tools whose inputs this tool's output provides."""

    def mark(fn: Callable) -> Callable:
        setattr(fn, _TOOL_ATTR, {"kind": kind, "name": name or fn.__name__, "feeds": tuple(feeds)})
        return fn

    return mark


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call produced: the text the model reads, and whether it was an error."""

    content: str
    ok: bool
    value: Any = None


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {arg: description})."""
    doc = inspect.cleandoc(doc or "")
    parts = re.split(r"^\s*Args:\s*$", doc, maxsplit=1, flags=re.M)
    description = parts[0].strip()
    args: dict[str, str] = {}
    if len(parts) == 2:
        body = re.split(r"^\s*(Returns|Raises):\s*$", parts[1], maxsplit=1, flags=re.M)[0]
        current = None
        for line in body.splitlines():
            m = re.match(r"^\s*(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", line)
            if m:
                current = m.group(1)
                args[current] = m.group(3).strip()
            elif current and line.strip():
                args[current] += " " + line.strip()
    return description, args


@dataclass
class Tool:
    name: str
    fn: Callable[..., Any]
    kind: ToolKind
    domain: str
    description: str
    arg_descriptions: dict[str, str]
    args_type: type
    feeds: tuple[str, ...] = ()
    _decoder: msgspec.json.Decoder = field(init=False, repr=False)
    _fields: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._decoder = msgspec.json.Decoder(self.args_type)
        self._fields = tuple(f for f in self.args_type.__struct_fields__)

    @classmethod
    def from_function(cls, fn: Callable, domain: str) -> "Tool":
        meta = getattr(fn, _TOOL_ATTR)
        hints = typing.get_type_hints(fn)
        params = list(inspect.signature(fn).parameters.values())[1:]  # first one is the db
        fields = []
        for p in params:
            ann = hints.get(p.name, Any)
            if p.default is inspect.Parameter.empty:
                fields.append((p.name, ann))
            else:
                fields.append((p.name, ann, p.default))
        args_type = msgspec.defstruct(
            f"{meta['name']}_arguments", fields, kw_only=True, forbid_unknown_fields=True
        )
        description, arg_desc = _parse_docstring(fn.__doc__ or "")
        return cls(
            name=meta["name"], fn=fn, kind=meta["kind"], domain=domain,
            description=description, arg_descriptions=arg_desc, args_type=args_type,
            feeds=meta["feeds"],
        )

    def schema(self, description: str | None = None, arg_descriptions: dict[str, str] | None = None) -> dict:
        """The OpenAI function schema; descriptions may be overridden (e.g. by upstream text)."""
        _, defs = msgspec.json.schema_components([self.args_type], ref_template="#/$defs/{name}")
        params = dict(defs[self.args_type.__name__])
        params.pop("title", None)
        arg_desc = {**self.arg_descriptions, **(arg_descriptions or {})}
        props = {}
        for pname, pschema in params.get("properties", {}).items():
            pschema = dict(pschema)
            if pname in arg_desc:
                pschema["description"] = arg_desc[pname]
            props[pname] = pschema
        params["properties"] = props
        params.setdefault("required", [])
        params["additionalProperties"] = False
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": description if description is not None else self.description,
                "parameters": params,
            },
        }

    def decode_arguments(self, arguments: str | bytes) -> dict[str, Any]:
        """Validate raw JSON arguments; raises ToolError with a model-readable message."""
        if isinstance(arguments, str):
            arguments = arguments.encode("utf-8", "replace")
        if len(arguments) > MAX_ARGUMENT_BYTES:
            raise ToolError(f"arguments for `{self.name}` are too large ({len(arguments)} bytes)")
        if not arguments.strip():
            arguments = b"{}"
        if deeper_than(arguments, MAX_DEPTH):
            raise ToolError(f"arguments for `{self.name}` nest deeper than {MAX_DEPTH} levels")
        try:
            parsed = self._decoder.decode(arguments)
        except msgspec.ValidationError as exc:
            raise ToolError(f"invalid arguments for `{self.name}`: {exc}") from None
        except msgspec.DecodeError as exc:
            raise ToolError(f"arguments for `{self.name}` are not valid JSON: {exc}") from None
        return {f: getattr(parsed, f) for f in self._fields}


class Toolkit:
    """A set of tools over one database type; toolkits merge for cross-domain tasks (the
    merged toolkit keeps the first one's call policy)."""

    def __init__(self, tools: Iterable[Tool] = (), *, policy: CallPolicy | None = None) -> None:
        self.tools: dict[str, Tool] = {}
        self.policy = policy or STRICT
        # (descriptions, specs): one list per description set, the same object every episode,
        # so its JSON can be encoded and hashed once.
        self._specs: list[tuple[Any, list[ToolSpec]]] = []
        for t in tools:
            self.add(t)

    @classmethod
    def from_module(cls, module: Any, domain: str, *, policy: CallPolicy | None = None) -> "Toolkit":
        fns = [v for v in vars(module).values() if callable(v) and hasattr(v, _TOOL_ATTR)]
        fns.sort(key=lambda f: f.__code__.co_firstlineno)
        return cls((Tool.from_function(f, domain) for f in fns), policy=policy)

    def add(self, t: Tool) -> None:
        if t.name in self.tools and self.tools[t.name].fn is not t.fn:
            raise ValueError(f"tool name clash: {t.name} ({self.tools[t.name].domain} vs {t.domain})")
        self.tools[t.name] = t
        self._specs.clear()

    def merge(self, *others: "Toolkit") -> "Toolkit":
        merged = Toolkit(self.tools.values(), policy=self.policy)
        for other in others:
            for t in other.tools.values():
                merged.add(t)
        return merged

    def __len__(self) -> int:
        return len(self.tools)

    def __contains__(self, name: str) -> bool:
        return name in self.tools

    def schemas(self, descriptions: dict[str, dict] | None = None) -> list[dict]:
        """OpenAI tool schemas; ``descriptions`` maps a tool name to {"description", "args"}."""
        out = []
        for t in self.tools.values():
            d = (descriptions or {}).get(t.name) or {}
            out.append(self.policy.schema(t, d.get("description"), d.get("args")))
        return out

    def specs(self, descriptions: dict[str, dict] | None = None) -> list[ToolSpec]:
        """The schemas as wire ToolSpecs, built once per description set (treat as read-only)."""
        for known, specs in self._specs:
            if known is descriptions:
                return specs
        specs = [ToolSpec(function=s["function"]) for s in self.schemas(descriptions)]
        if len(self._specs) >= 16:  # providers should return cached dicts; never grow unbounded
            self._specs.pop(0)
        self._specs.append((descriptions, specs))
        return specs

    def call(self, db: Any, name: str, arguments: str | bytes) -> ToolOutcome:
        """Execute one tool call from the model; never raises for model-caused errors."""
        return self.policy.call(self, db, name, arguments)


class CallPolicy:
    """How a toolkit runs the model's calls and describes its tools.

    This default is the framework's convention: arguments are validated by msgspec against the
    tool's signature, results are rendered as JSON, and ``ToolError`` is the model's error. A
    benchmark whose published harness calls tools another way (upstream VitaBench passes raw
    arguments and prints Python text) gives its toolkits its own subclass.
    """

    def call(self, toolkit: Toolkit, db: Any, name: str, arguments: str | bytes) -> ToolOutcome:
        t = toolkit.tools.get(name)
        if t is None:
            known = ", ".join(sorted(toolkit.tools)[:80])
            return ToolOutcome(f"Error: unknown tool `{name}`. Available tools: {known}", False)
        try:
            kwargs = t.decode_arguments(arguments)
            value = t.fn(db, **kwargs)
        except ToolError as exc:
            return ToolOutcome(f"Error: {exc}", False)
        return ToolOutcome(render(value), True, value)

    def schema(self, t: Tool, description: str | None, arg_descriptions: dict[str, str] | None) -> dict:
        """The OpenAI function schema of ``t``; descriptions may be overridden."""
        return t.schema(description, arg_descriptions)


STRICT = CallPolicy()


def render(value: Any) -> str:
    """Tool results are text for the model: strings pass through, the rest becomes JSON."""
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value).decode()
