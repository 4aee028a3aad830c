"""The VitaBench toolkit as a whole: which tools, their kinds and schemas, and upstream's names."""

from __future__ import annotations

import json

import msgspec
import pytest

from sweepbench.datasets.task import TaskError
from sweepbench.datasets.vitabench import load_tasks
from sweepbench.tools.registry import benchmark_tools
from sweepbench.tools.vitabench import TOOLS

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
    assert benchmark_tools("vitabench") is TOOLS


def test_a_delivery_task_gets_8_general_and_12_delivery_tools_of_upstreams_kinds():
    kit = TOOLS.toolkit(TASK)
    domains = [t.domain for t in kit.tools.values()]
    assert (domains.count("general"), domains.count("delivery"), len(kit)) == (8, 12, 20)
    assert {name: t.kind for name, t in kit.tools.items()} == KINDS


def test_unknown_domains_are_a_task_error():
    with pytest.raises(TaskError, match="no VitaBench tools for domain ota"):
        TOOLS.toolkit(msgspec.structs.replace(TASK, domain="delivery,ota"))


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


def test_names_match_upstreams_tool_descriptions(shared_data):
    """Upstream's description file names three product arguments ``food_*`` while its code (and
    so the schema models see) says ``product_*``; we follow the code. Nothing else differs."""
    upstream = json.loads((shared_data / "vitabench" / "upstream" / "tool_descriptions.json").read_text())
    described = {name: set(d["args"]) for domain in ("general", "delivery")
                 for name, d in upstream[domain]["en"].items()}
    ours = {name: set(t.schema()["function"]["parameters"]["properties"])
            for name, t in TOOLS.toolkit(TASK).tools.items()}
    assert set(described) == set(ours)
    mismatched = {name: (described[name] - ours[name], ours[name] - described[name])
                  for name in ours if described[name] != ours[name]}
    assert mismatched == {
        "get_delivery_product_info": ({"food_id"}, {"product_id"}),
        "create_delivery_order": ({"food_ids", "food_cnts"}, {"product_ids", "product_cnts"}),
    }
    upstream_kinds = {name: d["tool_type"].lower().replace("generic", "general")
                      for name, d in upstream["delivery"]["en"].items()}
    assert upstream_kinds == {name: KINDS[name] for name in upstream_kinds}
