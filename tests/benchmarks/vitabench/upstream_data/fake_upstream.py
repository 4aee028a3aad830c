"""A small tree shaped like upstream VitaBench's repository, for the data-import tests.

Only the shape is upstream's (where files live, how the schema sources name their variables, how
tools are decorated, the task files' layout); every text, tool and task here is made up.
"""

from __future__ import annotations

import json
from pathlib import Path

from sweepbench.benchmarks.vitabench.release import RELEASES

STORE_SEARCH = {"2025-11": "delivery_store_search_recommand",
                "2025-12": "delivery_store_search_recommend"}
HOTEL_SEARCH = {"2025-11": "hotel_search_recommand", "2025-12": "hotel_search_recommend"}
TEMPLATE = (b"agent_system_prompt_en: |\n  Be helpful. {policy}\n"
            b"agent_system_prompt_zh: |\n  Z {policy}\n")
LICENSE = b"MIT License\n\nmade up for a test\n"

_SCHEMA = '''"""Made-up schema source; importing it would fail (the importer must only parse it)."""
from vita_is_not_installed import create_tool_schema_manager

{prefix}_ZH = {zh!r}

{prefix}_EN = {en!r}

_schema_manager = create_tool_schema_manager("x", {prefix}_ZH, {prefix}_EN)
'''

_TOOLS = '''from vita_is_not_installed import is_tool, ToolType


class Tools:
{methods}
    def helper(self):
        return None
'''


def entry(text: str, **args: str) -> dict:
    return {"description": text, "preconditions": f"pre {text}", "postconditions": f"post {text}",
            "args": dict(args), "returns": f"returns {text}", "tool_type": "READ"}


def descriptions(release: str) -> dict[str, dict[str, dict]]:
    """What the fake schema sources hold, as the data dir's file should hold it."""
    tools = {
        "delivery": {"get_store": entry("a store", store_id="id"),
                     STORE_SEARCH[release]: entry("find stores", keywords="words")},
        "instore": {"get_shop": entry("a shop", shop_id="id")},
        "ota": {HOTEL_SEARCH[release]: entry("find hotels", city="city")},
        "general": {"get_time": entry("the time")},
    }
    return {d: {"zh": {n: {**e, "description": "中文 " + e["description"]} for n, e in t.items()},
                "en": t} for d, t in tools.items()}


def write_schema(path: Path, prefix: str, zh: object, en: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_SCHEMA.format(prefix=prefix, zh=zh, en=en), encoding="utf-8")


def write_tools(path: Path, names: list[str]) -> None:
    methods = "".join(f"    @is_tool(ToolType.READ)\n    def {n}(self):\n        return ''\n\n"
                      for n in names)
    path.write_text(_TOOLS.format(methods=methods), encoding="utf-8")


def tasks(release: str, lang: str) -> list[dict]:
    """Two delivery tasks whose store products have a quantity in the updated release only."""
    product = {"product_id": "P1", "name": "noodles" if lang == "en" else "面", "price": 12}
    if release == "2025-12":
        product["quantity"] = 9999
    return [{"id": f"T{i}", "instructions": "order lunch", "user_scenario": {},
             "environment": {"stores": {"S1": {"store_id": "S1", "products": [product]}}},
             "evaluation_criteria": {}} for i in (1, 2)]


def task_bytes(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=4).encode("utf-8")


def write_git_head(root: Path, commit: str) -> None:
    """A ``.git`` whose HEAD is branch main at ``commit`` (no objects: only HEAD is read)."""
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "refs" / "heads" / "main").write_text(commit + "\n")


def release_commit(release: str) -> str:
    """A full hash that starts with the release's commit."""
    short = RELEASES[release].commit
    return short + "0" * (40 - len(short))


def make_checkout(root: Path, release: str = "2025-12", *, git: bool = False) -> Path:
    """The fake repository at ``release`` in ``root`` (with a ``.git`` at the release's
    commit when ``git``); returns ``root``."""
    desc = descriptions(release)
    domains = root / "src" / "vita" / "domains"
    for domain in ("delivery", "instore", "ota"):
        write_schema(domains / domain / "tools_schema.py", "TOOL_DESCRIPTIONS",
                     desc[domain]["zh"], desc[domain]["en"])
        write_tools(domains / domain / "tools.py", list(desc[domain]["en"]))
    write_schema(root / "src" / "vita" / "environment" / "toolkit_schema.py",
                 "TOOLKIT_TOOL_DESCRIPTIONS", desc["general"]["zh"], desc["general"]["en"])
    prompts = root / "src" / "vita" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "agent_system_prompt.yaml").write_bytes(TEMPLATE)
    (prompts / "__init__.py").write_text("")
    data = root / "data" / "vita" / "domains"
    for rel, value in {"delivery/tasks.json": tasks(release, "zh"),
                       "delivery/tasks_en.json": tasks(release, "en"),
                       "instore/tasks_en.json": [{"id": 7, "instructions": "book"}]}.items():
        (data / rel).parent.mkdir(parents=True, exist_ok=True)
        (data / rel).write_bytes(task_bytes(value))
    (root / "LICENSE").write_bytes(LICENSE)
    if git:
        write_git_head(root, release_commit(release))
    return root
