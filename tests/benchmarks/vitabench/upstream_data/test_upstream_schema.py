"""Tool descriptions are read out of upstream's schema sources by parsing, and written in the
data dir's layout."""

from __future__ import annotations

import json

import orjson
import pytest

from sweepbench.benchmarks.vitabench.upstream_data.upstream_schema import (
    encode,
    read_schema,
    schema_sources,
    tool_descriptions,
    tool_functions,
)
from sweepbench.errors import SourceError

from .fake_upstream import descriptions, entry, make_checkout, write_schema


def test_the_sources_are_read_in_the_files_order_without_running_them(tmp_path):
    src = make_checkout(tmp_path, "2025-11")  # each source imports a module that is not there
    assert list(schema_sources()) == ["delivery", "instore", "ota", "general"]
    assert tool_descriptions(src) == descriptions("2025-11")
    value = tool_descriptions(src)
    assert list(value["delivery"]) == ["zh", "en"]
    assert list(value["delivery"]["en"]["get_store"]) == [
        "description", "preconditions", "postconditions", "args", "returns", "tool_type"]


def test_a_tree_without_schema_sources_has_no_descriptions(tmp_path):
    assert tool_descriptions(tmp_path) is None


def test_the_json_is_laid_out_as_the_data_dirs_file():
    value = {"d": {"zh": {"t": {"description": "说明 \u2028 \"q\"", "args": {}}}}}
    assert encode(value) == json.dumps(value, ensure_ascii=False, indent=1).encode()


@pytest.mark.parametrize(("zh", "message"), [
    ("[]", "TOOL_DESCRIPTIONS_ZH (line 3) should be a dict of tools, got list"),
    ("{'t': 'text'}", "TOOL_DESCRIPTIONS_ZH['t']: should be a dict, got str"),
    ("{'t': {'args': {}}}", "TOOL_DESCRIPTIONS_ZH['t']: has no description text"),
    ("{'t': {'description': 'd', 'returns': 3}}",
     "TOOL_DESCRIPTIONS_ZH['t']: returns should be text, got int"),
    ("{'t': {'description': 'd', 'args': {'a': 1}}}",
     "TOOL_DESCRIPTIONS_ZH['t']: args should map argument names to texts"),
    ("{'t': {'description': 'd', 'extra': {1, 2}}}",
     "TOOL_DESCRIPTIONS_ZH['t']: 'extra' is not a JSON value"),
    ("{'': {'description': 'd'}}", "TOOL_DESCRIPTIONS_ZH has a tool named '' (not a name)"),
    ("{'t': {'description': f'{x}'}}", "TOOL_DESCRIPTIONS_ZH (line 3) is not a plain literal"),
])
def test_a_malformed_schema_literal_is_refused_naming_file_and_tool(tmp_path, zh, message):
    path = tmp_path / "tools_schema.py"
    path.write_text(f"import x\n\nTOOL_DESCRIPTIONS_ZH = {zh}\nTOOL_DESCRIPTIONS_EN = {{}}\n")
    with pytest.raises(SourceError) as err:
        read_schema(path, "s.py", "TOOL_DESCRIPTIONS")
    assert str(err.value).startswith(f"s.py: {message}")


def test_a_source_missing_a_language_or_not_text_is_refused(tmp_path):
    path = tmp_path / "tools_schema.py"
    write_schema(path, "TOOL_DESCRIPTIONS", {"t": entry("t")}, {})
    path.write_text(path.read_text().replace("TOOL_DESCRIPTIONS_EN =", "OTHER ="))
    with pytest.raises(SourceError, match="^s.py: defines no TOOL_DESCRIPTIONS_EN$"):
        read_schema(path, "s.py", "TOOL_DESCRIPTIONS")
    path.write_bytes(b"X = '\xff'\n")
    with pytest.raises(SourceError, match=r"^s.py: not UTF-8 text \(invalid start byte at byte 5"):
        read_schema(path, "s.py", "TOOL_DESCRIPTIONS")
    path.write_text("X = " + "[" * 200_000 + "]" * 200_000 + "\n")
    with pytest.raises(SourceError, match="^s.py: "):
        read_schema(path, "s.py", "TOOL_DESCRIPTIONS")


def test_the_tools_are_the_functions_decorated_is_tool(tmp_path):
    path = tmp_path / "tools.py"
    path.write_text("class T:\n    @is_tool(ToolType.READ)\n    def a(self): ...\n"
                    "    @tools.is_tool\n    async def b(self): ...\n"
                    "    @other\n    def c(self): ...\n    def d(self): ...\n")
    assert tool_functions(path, "tools.py") == {"a", "b"}


def test_the_shared_descriptions_survive_a_round_trip_through_schema_sources(
        tmp_path, shared_root):
    """The shared data dirs' files, written back as schema sources (Python literals) and read
    again, give the same bytes: the layout and the parsing lose nothing upstream has."""
    for name in ("data", "data-v2"):
        shared = shared_root.parent / name / "vitabench" / "upstream" / "tool_descriptions.json"
        if not shared.is_file():
            pytest.skip(f"shared data is not at {shared}")
        value = orjson.loads(shared.read_bytes())
        root = tmp_path / name
        for domain, (rel, variable) in schema_sources().items():
            write_schema(root / rel, variable, value[domain]["zh"], value[domain]["en"])
        assert encode(tool_descriptions(root)) == shared.read_bytes()
