"""Upstream's tool descriptions, as data: ``<data_dir>/vitabench/upstream/tool_descriptions.json``.

The file holds, per domain and language, each tool's description, preconditions,
postconditions and argument texts. Models upstream read the three texts together, so they are
joined into one description here. A few argument names in the file differ from the code's
(the code is what real tasks call): they are mapped, and texts for arguments a tool does not
have are dropped, so a description never names a parameter the schema lacks.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import orjson

from sweepbench.tools.base import Toolkit

# (tool, name in the description file) -> parameter name in the code
RENAMED = {
    ("get_delivery_product_info", "food_id"): "product_id",
    ("create_delivery_order", "food_ids"): "product_ids",
    ("create_delivery_order", "food_cnts"): "product_cnts",
    ("create_hotel_order", "product_id"): "room_id",
}
_LABELS = {"en": ("Preconditions", "Postconditions"), "zh": ("前置条件", "后置条件")}


def _file(data_dir: Path | None) -> Path | None:
    if data_dir is None:
        return None
    for root in (data_dir / "vitabench", data_dir):
        path = root / "upstream" / "tool_descriptions.json"
        if path.is_file():
            return path
    return None


@lru_cache(maxsize=8)
def _load(path: Path, lang: str) -> dict[str, dict]:
    """{tool: {"description", "args"}} over all domains of the file, in one language."""
    raw = orjson.loads(path.read_bytes())
    before, after = _LABELS.get(lang, _LABELS["en"])
    out: dict[str, dict] = {}
    for domain in raw.values() if isinstance(raw, dict) else ():
        entries = domain.get(lang) if isinstance(domain, dict) else None
        for name, d in (entries or {}).items():
            if not isinstance(d, dict) or not isinstance(d.get("description"), str):
                continue
            text = d["description"].strip()
            for label, key in ((before, "preconditions"), (after, "postconditions")):
                if isinstance(d.get(key), str) and d[key].strip():
                    text += f"\n{label}: {d[key].strip()}"
            args = d.get("args") if isinstance(d.get("args"), dict) else {}
            out[name] = {"description": text,
                         "args": {RENAMED.get((name, a), a): str(v) for a, v in args.items()}}
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
        if name in table:
            params = set(t.args_type.__struct_fields__)
            out[name] = {"description": table[name]["description"],
                         "args": {a: v for a, v in table[name]["args"].items() if a in params}}
    return out
