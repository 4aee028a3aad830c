"""The VitaBench toolkit as a whole: which tools, their kinds and schemas, and upstream's names."""

from __future__ import annotations

import json
from collections import Counter

import msgspec
import pytest

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS
from sweepbench.benchmarks.vitabench.tools.graph import edges, graph_stats
from sweepbench.errors import TaskError

TASK = load_tasks(("delivery",), data_dir=None)[0]

# Upstream's tool types (environment/toolkit.py, domains/delivery/tools.py); GENERIC -> general.
KINDS = {
    "longitude_latitude_to_distance": "general", "weather": "general",
    "address_to_longitude_latitude": "general", "get_date_holiday_info": "general",
    "get_holiday_date": "general", "get_user_historical_behaviors": "read",
    "get_user_all_orders": "read", "get_nearby": "read",
    "delivery_distance_to_time": "general", "get_delivery_store_info": "read",
    "get_delivery_product_info": "read", "delivery_store_search_recommand": "read",
    "delivery_product_search_recommand": "read", "create_delivery_order": "write",
    "pay_delivery_order": "write", "get_delivery_order_status": "read",
    "cancel_delivery_order": "write", "modify_delivery_order": "write",
    "search_delivery_orders": "read", "get_delivery_order_detail": "read",
}


def test_registry_serves_vitabench():
    benchmark = registry.get("vitabench@2025-11")
    assert benchmark.name == "vitabench@2025-11"
    assert benchmark.toolkit(TASK) is TOOLS.toolkit(TASK)
    assert registry.get("vitabench").name == "vitabench@2025-12"  # a bare name: the current


def test_a_delivery_task_gets_8_general_and_12_delivery_tools_of_upstreams_kinds():
    kit = TOOLS.toolkit(TASK)
    domains = [t.domain for t in kit.tools.values()]
    assert (domains.count("general"), domains.count("delivery"), len(kit)) == (8, 12, 20)
    assert {name: t.kind for name, t in kit.tools.items()} == KINDS


def test_unknown_domains_are_a_task_error():
    with pytest.raises(TaskError, match="no VitaBench tools for domain cinema"):
        TOOLS.toolkit(msgspec.structs.replace(TASK, domain="delivery,cinema"))


def test_every_tool_and_parameter_is_described():
    for schema in TOOLS.toolkit(TASK).schemas():
        fn = schema["function"]
        assert fn["description"], fn["name"]
        assert all(p.get("description") for p in fn["parameters"]["properties"].values()), fn["name"]


def test_final_state_is_plain_json_of_all_orders():
    state = TOOLS.new_state(TASK)
    final = TOOLS.final_state(state)
    assert set(final["orders"]) == set(state.orders)
    assert json.loads(json.dumps(final)) == final
    assert TOOLS.descriptions(TASK, None) is None


def upstream_descriptions(shared_data):
    return json.loads((shared_data / "vitabench" / "upstream" / "tool_descriptions.json").read_text())


def test_all_66_tools_by_domain():
    kit = TOOLS.all_tools()
    domains = Counter(t.domain for t in kit.tools.values())
    assert (len(kit), domains) == (66, Counter(delivery=12, instore=16, ota=30, general=8))


def test_names_parameters_and_kinds_match_upstream(shared_data):
    """Upstream's description file names some arguments differently from its code (which is
    what models see and real tasks call); we follow the code. Nothing else differs."""
    upstream = upstream_descriptions(shared_data)
    described = {name: set(d["args"]) for domain in upstream.values() for name, d in domain["en"].items()}
    ours = {name: set(t.args_type.__struct_fields__) for name, t in TOOLS.all_tools().tools.items()}
    assert set(described) == set(ours)
    mismatched = {name: (described[name] - ours[name], ours[name] - described[name])
                  for name in ours if described[name] != ours[name]}
    assert mismatched == {
        "get_delivery_product_info": ({"food_id"}, {"product_id"}),
        "create_delivery_order": ({"food_ids", "food_cnts"}, {"product_ids", "product_cnts"}),
        "create_hotel_order": ({"product_id"}, {"room_id"}),
    }
    upstream_kinds = {name: d["tool_type"].lower().replace("generic", "general")
                      for domain in ("delivery", "instore", "ota") for name, d in upstream[domain]["en"].items()}
    assert upstream_kinds == {name: TOOLS.all_tools().tools[name].kind for name in upstream_kinds}
    assert {name: t.kind for name, t in TOOLS.all_tools().tools.items() if name in KINDS} == KINDS


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_descriptions_come_from_upstream_in_the_task_language(shared_data, lang):
    task = msgspec.structs.replace(TASK, domain="delivery,instore,ota", lang=lang)
    found = TOOLS.descriptions(task, shared_data)
    upstream = upstream_descriptions(shared_data)
    assert set(found) == set(TOOLS.all_tools().tools)
    for name, d in found.items():
        assert "\n\nPreconditions:\n    - " in d["description"], name  # English labels in every language
        assert set(d["args"]) <= set(TOOLS.all_tools().tools[name].args_type.__struct_fields__), name
    entry = upstream["instore"][lang]["instore_book"]
    assert found["instore_book"]["description"] == (
        f"{entry['description']}\n\nPreconditions:\n    - {entry['preconditions']}\nPostconditions:\n    - "
        f"{entry['postconditions']}")
    assert found["get_user_all_orders"]["description"].endswith(
        "\n\nArgs:\n\nReturns:\n    " + upstream["general"][lang]["get_user_all_orders"]["returns"])
    # only arguments the file names exactly are described, as upstream sends them
    assert not {"product_ids", "product_cnts"} & set(found["create_delivery_order"]["args"])
    assert ("room_id" in found["create_hotel_order"]["args"]) is (lang == "zh")
    assert TOOLS.descriptions(task, shared_data) is found  # one object: tool specs are built once
    only_delivery = TOOLS.descriptions(msgspec.structs.replace(TASK, lang=lang), shared_data / "vitabench")
    assert set(only_delivery) == set(TOOLS.toolkit(TASK).tools)


def test_schemas_are_the_ones_upstream_sent(shared_data):
    """Every recorded request's ``tools`` (golden/requests) equals ours, order and key order too."""
    for path in sorted((shared_data / "vitabench" / "golden" / "requests").glob("*.jsonl")):
        body = next(json.loads(line)["body"] for line in path.open() if json.loads(line)["body"].get("tools"))
        domain = ("delivery,instore" if path.name.startswith("cross") else
                  "delivery" if "delivery" in path.name else "instore")
        task = msgspec.structs.replace(TASK, domain=domain, lang="zh" if "_zh_" in path.name else "en")
        ours = TOOLS.toolkit(task).schemas(TOOLS.descriptions(task, shared_data))
        assert json.dumps(ours, ensure_ascii=False) == json.dumps(body["tools"], ensure_ascii=False), path.name


def test_tool_order_is_upstreams():
    single = list(TOOLS.toolkit(TASK).tools)
    assert single[:2] == ["delivery_distance_to_time", "get_delivery_store_info"] and single[-1] == "get_nearby"
    merged = list(TOOLS.toolkit(msgspec.structs.replace(TASK, domain="instore,delivery")).tools)
    assert merged[:8] == single[-8:] and merged[8] == "instore_shop_search_recommend"
    assert merged[24] == "delivery_distance_to_time" and len(merged) == 36


def test_schema_shape_is_pydantics():
    fn = {s["function"]["name"]: s["function"] for s in TOOLS.all_tools().schemas()}
    order = fn["create_delivery_order"]["parameters"]
    assert order["title"] == "parameters" and "additionalProperties" not in order
    assert order["required"] == ["user_id", "store_id", "product_ids", "product_cnts", "address", "dispatch_time"]
    assert list(order["properties"]["attributes"]) == ["default", "description", "title", "type", "items"]
    assert order["properties"]["product_cnts"]["items"] == {"type": "integer"}
    assert order["properties"]["product_ids"]["title"] == "Product Ids"
    status = fn["search_delivery_orders"]["parameters"]["properties"]["status"]
    assert (status["type"], status["default"], "enum" in status) == ("string", "unpaid", False)
    assert fn["get_user_all_orders"]["parameters"] == {"properties": {}, "title": "parameters", "type": "object"}


def test_without_the_file_the_code_describes_itself(tmp_path):
    assert TOOLS.descriptions(TASK, tmp_path) is None
    for schema in TOOLS.all_tools().schemas():
        fn = schema["function"]
        assert fn["description"], fn["name"]
        assert all(p.get("description") for p in fn["parameters"]["properties"].values()), fn["name"]


PAPER_TABLE_6 = {"instore": (24, 68), "delivery": (20, 50), "ota": (38, 309), "delivery,instore,ota": (66, 512)}


@pytest.mark.parametrize("domains", list(PAPER_TABLE_6))
def test_dependency_graph_is_declared_for_every_tool_and_near_table_6(domains):
    kit = TOOLS.toolkit(msgspec.structs.replace(TASK, domain=domains))
    tools, paper_edges = PAPER_TABLE_6[domains]
    stats = graph_stats(kit)
    assert len(kit) == tools
    assert stats["density"] == round(stats["edges"] / (tools * (tools - 1)), 4)
    assert 0.6 * paper_edges <= stats["edges"] <= 1.5 * paper_edges
    assert all(a in kit and b in kit and a != b for a, b in edges(kit))


def test_some_dependencies_the_paper_names():
    pairs = set(edges(TOOLS.all_tools()))
    assert {("get_delivery_order_detail", "modify_delivery_order"), ("create_delivery_order", "pay_delivery_order"),
            ("instore_book", "pay_instore_book"), ("get_ota_flight_info", "create_flight_order"),
            ("address_to_longitude_latitude", "get_nearby"), ("get_user_all_orders", "modify_train_order"),
            } <= pairs
    assert ("pay_delivery_order", "cancel_delivery_order") not in pairs


def test_graph_stats_are_served_with_the_tools():
    kit = TOOLS.toolkit(msgspec.structs.replace(TASK, domain="delivery,instore,ota"))
    assert kit is TOOLS.all_tools() and TOOLS.graph_stats(kit) == graph_stats(kit)


def test_episodes_of_one_task_share_the_prepared_stores_table_but_no_records():
    from sweepbench.benchmarks.vitabench.tools import state as state_module

    a, b = TOOLS.new_state(TASK), TOOLS.new_state(TASK)
    # prepared once per task's table: the second episode found it in the memo
    table = TASK.environment["stores"]
    prepared = state_module._prepare_stores(table)
    assert state_module._prepare_stores(table) is prepared
    assert all(isinstance(p["attributes"], str)
               for s in prepared.values() for p in s.get("products", ()))
    # each episode converted its own records from it: a change in one is not in the other
    sid = next(iter(a.stores))
    assert a.stores[sid] is not b.stores[sid]
    product = a.stores[sid].products[0]
    product.price = -1.0
    a.stores[sid].tags.append("changed by episode a")
    assert b.stores[sid].products[0].price != -1.0
    assert "changed by episode a" not in b.stores[sid].tags
    assert "changed by episode a" not in (table[sid].get("tags") or [])
    assert TOOLS.new_state(TASK).stores[sid].products[0].price != -1.0
