"""Upstream's tool descriptions, read from its schema sources by parsing, never by running them.

Upstream keeps each domain's descriptions as two dict literals in
``src/vita/domains/<domain>/tools_schema.py`` (``TOOL_DESCRIPTIONS_ZH`` / ``_EN``), and the
general tools' in ``src/vita/environment/toolkit_schema.py`` (``TOOLKIT_TOOL_DESCRIPTIONS_ZH`` /
``_EN``). A checkout is untrusted, so only those literals are read (``ast.literal_eval``);
nothing in it is imported or run. The result has the shape ``tools/descriptions.py`` reads,
``{domain: {"zh": {tool: entry}, "en": {...}}}``, each entry as upstream wrote it (its keys and
their order too), so the JSON written from it is upstream's descriptions and nothing else.

The tools a domain's code defines (methods decorated ``@is_tool`` in ``tools.py``) are read
the same way: they tell the code's release when the schema and the code disagree.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import msgspec

from sweepbench.benchmarks.vitabench.tools.state import DOMAINS
from sweepbench.errors import SourceError

__all__ = ["GENERAL", "LANGS", "encode", "schema_sources", "tool_descriptions", "tool_functions"]

GENERAL = "general"
"""The key of the tools every domain has (upstream's toolkit) in the descriptions file."""
LANGS = {"zh": "_ZH", "en": "_EN"}
"""Language -> the suffix of the variable holding its descriptions, in the order written."""
_TEXT_FIELDS = ("description", "preconditions", "postconditions", "returns", "tool_type")


def schema_sources() -> dict[str, tuple[str, str]]:
    """Domain -> (source path in a checkout, variable name without its language suffix), in
    the order the descriptions file lists them."""
    out = {d: (f"src/vita/domains/{d}/tools_schema.py", "TOOL_DESCRIPTIONS") for d in DOMAINS}
    out[GENERAL] = ("src/vita/environment/toolkit_schema.py", "TOOLKIT_TOOL_DESCRIPTIONS")
    return out


def _parse(path: Path, rel: str) -> ast.Module:
    try:
        return ast.parse(path.read_bytes().decode("utf-8"), filename=rel)
    except UnicodeDecodeError as exc:
        raise SourceError(f"{rel}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except SyntaxError as exc:
        raise SourceError(f"{rel}: not Python (line {exc.lineno}: {exc.msg})") from None
    except (RecursionError, MemoryError):
        raise SourceError(f"{rel}: nested too deeply to parse") from None


def _assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """Top-level ``NAME = value`` (and annotated) assignments; the last one of a name wins."""
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name):
            found[target.id] = value
    return found


def _json_value(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_value(v) for k, v in value.items())
    return False


def _check_entry(where: str, entry: Any) -> None:
    if not isinstance(entry, dict):
        raise SourceError(f"{where}: should be a dict, got {type(entry).__name__}")
    if not isinstance(entry.get("description"), str):
        raise SourceError(f"{where}: has no description text")
    for key in _TEXT_FIELDS:
        if key in entry and not isinstance(entry[key], str):
            raise SourceError(f"{where}: {key} should be text, got {type(entry[key]).__name__}")
    args = entry.get("args", {})
    if not isinstance(args, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in args.items()):
        raise SourceError(f"{where}: args should map argument names to texts")
    odd = [k for k, v in entry.items() if not isinstance(k, str) or not _json_value(v)]
    if odd:
        raise SourceError(f"{where}: {odd[0]!r} is not a JSON value")


def _literal(rel: str, name: str, node: ast.expr | None) -> dict[str, dict]:
    if node is None:
        raise SourceError(f"{rel}: defines no {name}")
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as exc:
        raise SourceError(f"{rel}: {name} (line {node.lineno}) is not a plain literal: "
                          f"{str(exc) or type(exc).__name__}") from None
    if not isinstance(value, dict):
        raise SourceError(f"{rel}: {name} (line {node.lineno}) should be a dict of tools, "
                          f"got {type(value).__name__}")
    for tool, entry in value.items():
        if not isinstance(tool, str) or not tool:
            raise SourceError(f"{rel}: {name} has a tool named {tool!r} (not a name)")
        _check_entry(f"{rel}: {name}[{tool!r}]", entry)
    return value


def read_schema(path: Path, rel: str, variable: str) -> dict[str, dict[str, dict]]:
    """``{lang: {tool: entry}}`` from one schema source (``rel`` names it in errors)."""
    found = _assignments(_parse(path, rel))
    return {lang: _literal(rel, variable + suffix, found.get(variable + suffix))
            for lang, suffix in LANGS.items()}


def tool_descriptions(root: Path) -> dict[str, dict[str, dict[str, dict]]] | None:
    """The descriptions of every domain from a checkout at ``root``; None when it has none of
    the schema sources (a dataset release). Some present and some missing is a SourceError:
    a partial file would give the model upstream's texts for some tools only."""
    sources = schema_sources()
    missing = [rel for rel, _ in sources.values() if not (root / rel).is_file()]
    if len(missing) == len(sources):
        return None
    if missing:
        raise SourceError(f"{root}: the tool descriptions are incomplete: "
                          f"{', '.join(missing)} missing")
    return {domain: read_schema(root / rel, rel, variable)
            for domain, (rel, variable) in sources.items()}


def _is_tool_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
    return name == "is_tool"


def tool_functions(path: Path, rel: str) -> set[str]:
    """The names of the functions in ``path`` decorated ``@is_tool`` (upstream's tools)."""
    return {node.name for node in ast.walk(_parse(path, rel))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any(_is_tool_decorator(d) for d in node.decorator_list)}


def encode(descriptions: dict[str, Any]) -> bytes:
    """The descriptions as JSON, laid out as the data dir's file is (one-space indent, text as
    UTF-8, no final newline): the same bytes for the same descriptions."""
    return msgspec.json.format(msgspec.json.encode(descriptions), indent=1)
