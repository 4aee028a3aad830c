"""One toolkit per VitaBench release: the same tools under each release's names (three renamed
in 2025-12), upstream's descriptions for them from either release's file, the same dependency
graph, and a state that carries the release for the tools to read."""

from __future__ import annotations

import json

import msgspec
import pytest

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.vitabench.release import RELEASES
from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import RELEASE_TOOLS, TOOLS, tools_for
from sweepbench.benchmarks.vitabench.tools.graph import edges

TASK = load_tasks(("delivery",), data_dir=None)[0]
NEW, OLD = RELEASE_TOOLS["2025-12"], RELEASE_TOOLS["2025-11"]
RENAMED = {"delivery_store_search_recommand": "delivery_store_search_recommend",
           "delivery_product_search_recommand": "delivery_product_search_recommend",
           "hotel_search_recommand": "hotel_search_recommend"}


def test_each_release_has_its_tools_and_the_benchmark_serves_them():
    assert TOOLS is OLD and tools_for(RELEASES["2025-12"]) is NEW
    assert registry.get("vitabench@2025-12").toolkit(TASK) is NEW.toolkit(TASK)
    assert registry.get("vitabench@2025-11").toolkit(TASK) is OLD.toolkit(TASK)
    assert registry.get("vitabench").toolkit(TASK) is NEW.toolkit(TASK)  # the current release
    assert NEW.new_state(TASK).rules is RELEASES["2025-12"] and OLD.new_state(TASK).rules is RELEASES["2025-11"]


def test_the_updated_release_renames_three_tools_in_place():
    old, new = list(OLD.all_tools().tools), list(NEW.all_tools().tools)
    assert [RENAMED.get(name, name) for name in old] == new and len(new) == 66
    assert set(old) - set(new) == set(RENAMED) and set(new) - set(old) == set(RENAMED.values())
    assert list(NEW.toolkit(TASK).tools)[3:5] == list(RENAMED.values())[:2]


@pytest.mark.parametrize("tools, missing", [(NEW, "delivery_store_search_recommand"),
                                            (OLD, "delivery_store_search_recommend")])
def test_the_other_releases_spelling_is_an_unknown_tool(tools, missing):
    out = tools.toolkit(TASK).call(tools.new_state(TASK), missing, '{"keywords": ["noodle"]}')
    assert (out.content, out.ok) == (f"Error: Tool '{missing}' not found.", False)


def test_both_releases_draw_the_same_dependency_graph():
    renamed = {tuple(RENAMED.get(name, name) for name in pair) for pair in edges(OLD.all_tools())}
    assert renamed == set(edges(NEW.all_tools())) and len(renamed) > 400


@pytest.mark.parametrize("tools", [NEW, OLD])
def test_either_releases_file_describes_either_releases_tools(tools, shared_data, shared_data_v2):
    task = msgspec.structs.replace(TASK, domain="delivery,instore,ota", lang="zh")
    from_v1, from_v2 = tools.descriptions(task, shared_data), tools.descriptions(task, shared_data_v2)
    assert set(from_v1) == set(from_v2) == set(tools.all_tools().tools)
    assert from_v1 == from_v2


def test_schemas_are_the_ones_upstreams_updated_release_sent(shared_data_v2):
    """Every recorded request's ``tools`` of 742e240 (golden/requests) equals ours."""
    paths = sorted((shared_data_v2 / "vitabench" / "golden" / "requests").glob("*.jsonl"))
    for path in paths:
        body = next(json.loads(line)["body"] for line in path.open() if json.loads(line)["body"].get("tools"))
        domain = ("delivery,instore" if path.name.startswith("cross") else
                  "delivery" if "delivery" in path.name or "toolerr" in path.name else "instore")
        task = msgspec.structs.replace(TASK, domain=domain, lang="zh" if "_zh_" in path.name else "en")
        ours = NEW.toolkit(task).schemas(NEW.descriptions(task, shared_data_v2))
        assert json.dumps(ours, ensure_ascii=False) == json.dumps(body["tools"], ensure_ascii=False), path.name
    assert len(paths) == 17
