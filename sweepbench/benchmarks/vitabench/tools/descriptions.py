"""Upstream's tool descriptions, as data: ``<data_dir>/vitabench/upstream/tool_descriptions.json``.

The file holds, per domain and language, each tool's description, preconditions,
postconditions, argument texts and return text. Upstream turns them into a docstring and
parses it back, so the model reads ``description``, then ``Preconditions:`` and
``Postconditions:`` (English labels in every language) as one text; a tool without arguments
also shows the empty ``Args:`` section and its ``Returns:`` text. An argument is described only
when the file names it exactly as the tool's parameter (upstream's file uses other names for
three parameters, which therefore go without a description, as upstream sends them). A tool
a release renamed (``Release.tool_renames``) takes its entry under either spelling, so each
release's file serves both.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import orjson

from sweepbench.benchmarks.vitabench.release import RELEASES
from sweepbench.tools.base import Toolkit

# a tool's name -> its other spelling in some release
_OTHER_SPELLING = {name: other for rules in RELEASES.values()
                   for old, new in rules.tool_renames.items()
                   for name, other in ((old, new), (new, old))}


def _file(data_dir: Path | None) -> Path | None:
    if data_dir is None:
        return None
    for root in (data_dir / "vitabench", data_dir):
        path = root / "upstream" / "tool_descriptions.json"
        if path.is_file():
            return path
    return None


def upstream_text(entry: dict) -> str:
    """The description upstream's docstring round trip produces from one file entry."""
    text = (f"{entry['description']}\n\nPreconditions:\n    - {entry.get('preconditions', '')}"
            f"\nPostconditions:\n    - {entry.get('postconditions', '')}")
    if not entry.get("args"):
        text += f"\n\nArgs:\n\nReturns:\n    {entry.get('returns', '')}"
    return text


@lru_cache(maxsize=8)
def _load(path: Path, lang: str) -> dict[str, dict]:
    """{tool: {"description", "args"}} over all domains of the file, in one language."""
    raw = orjson.loads(path.read_bytes())
    out: dict[str, dict] = {}
    for domain in raw.values() if isinstance(raw, dict) else ():
        entries = domain.get(lang) if isinstance(domain, dict) else None
        for name, d in (entries or {}).items():
            if not isinstance(d, dict) or not isinstance(d.get("description"), str):
                continue
            args = d.get("args") if isinstance(d.get("args"), dict) else {}
            out[name] = {"description": upstream_text(d),
                         "args": {str(a): str(v) for a, v in args.items()}}
    return out


def descriptions_for(kit: Toolkit, lang: str, data_dir: Path | None) -> dict[str, dict] | None:
    """The descriptions of ``kit``'s tools, or None without a (readable) file. The same object
    for the same arguments, so ``Toolkit.specs`` builds each description set once: read-only."""
    path = _file(data_dir)
    if path is None:
        return None
    return _for_kit(kit, lang, path)


@lru_cache(maxsize=64)
def _for_kit(kit: Toolkit, lang: str, path: Path) -> dict[str, dict] | None:
    try:
        table = _load(path, lang)
    except orjson.JSONDecodeError:
        return None
    out = {}
    for name, t in kit.tools.items():
        entry = table.get(name) or table.get(_OTHER_SPELLING.get(name, ""))
        if entry is not None:
            params = set(t.args_type.__struct_fields__)
            out[name] = {"description": entry["description"],
                         "args": {a: v for a, v in entry["args"].items() if a in params}}
    return out
