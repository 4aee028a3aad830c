"""How VitaBench's tools are called: upstream's convention (raw arguments, Python's own errors,
refusals as plain answers, numbers rendered as strings), next to the framework's default."""

from __future__ import annotations

import json

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS
from sweepbench.benchmarks.vitabench.tools.calling import (
    Refused,
    found,
    inner,
    renamed,
    require,
    to_json_str,
)
from sweepbench.tools.base import STRICT, Tool, Toolkit, tool

TASK = next(t for t in load_tasks(("delivery",), data_dir=None) if t.id == "SB-D-004")
KIT = TOOLS.toolkit(TASK)


def call(name, args, task=TASK):
    state = TOOLS.new_state(task)
    raw = args if isinstance(args, (str, bytes)) else json.dumps(args)
    return TOOLS.toolkit(task).call(state, name, raw)


@pytest.mark.parametrize("name, args, text", [
    ("no_such_tool", {"x": 1}, "Error: Tool 'no_such_tool' not found."),
    ("get_delivery_store_info", {},
     "Error: DeliveryTools.get_delivery_store_info() missing 1 required positional argument: 'store_id'"),
    ("longitude_latitude_to_distance", {"longitude1": 1, "latitude1": 2},
     "Error: ToolKitBase.longitude_latitude_to_distance() missing 2 required positional arguments: "
     "'longitude2' and 'latitude2'"),
    ("get_user_all_orders", {"user_id": "U900001"},
     "Error: ToolKitBase.get_user_all_orders() got an unexpected keyword argument 'user_id'"),
    ("get_delivery_order_detail", {"order_id": "x", "self": 1},
     "Error: Environment.make_tool_call() got multiple values for argument 'self'"),
    ("get_delivery_order_detail", {"requestor": "user"},
     "Error: vita.environment.environment.Environment.make_tool_call() got multiple values for "
     "keyword argument 'requestor'"),
])
def test_missing_extra_and_unknown_are_cpythons_texts(name, args, text):
    out = call(name, args)
    assert (out.content, out.ok) == (text, False)


@pytest.mark.parametrize("name, args, text", [
    ("search_delivery_orders", {"user_id": "U900001", "status": "finished"}, "No delivery orders available"),
    ("get_holiday_date", {"year": 2025, "holiday_name": "National Day"}, "Holiday data for year 2025 not found"),
    ("delivery_distance_to_time", {"distance": "1000"},
     "distance value type should be float or int, but get <class 'str'>"),
])
def test_wrong_types_are_used_as_they_are(name, args, text):
    out = call(name, args)
    assert (out.content, out.ok) == (text, True)


def test_a_string_where_a_list_is_declared_is_iterated_as_python_does():
    assert call("delivery_store_search_recommand", {"keywords": "Lantern"}).content == call(
        "delivery_store_search_recommand", {"keywords": ["Lan", "tern"]}).content
    bad = call("create_delivery_order", {"user_id": "U900001", "store_id": "MB-S01", "product_ids": "MB-S01-P01",
                                         "product_cnts": [1], "address": "x", "dispatch_time": "y"})
    assert (bad.content, bad.ok) == ("Error: M not found", False)


def test_exceptions_become_error_texts_and_refusals_plain_answers():
    raised = call("longitude_latitude_to_distance",
                  {"longitude1": "1", "latitude1": 2, "longitude2": 3, "latitude2": 4})
    assert (raised.content, raised.ok) == ("Error: must be real number, not str", False)
    compared = call("get_nearby", {"longitude": 120.1, "latitude": 30.2, "range": "1000"})
    assert compared.content == "Error: '<=' not supported between instances of 'float' and 'str'"
    refused = call("create_delivery_order", {"user_id": "U999", "store_id": "MB-S01", "product_ids": [],
                                             "product_cnts": [], "address": "x", "dispatch_time": "y"})
    assert (refused.content, refused.ok) == ("User ID does not match", True)


@pytest.mark.parametrize("raw, needle", [
    ('{"order_id": ', "not valid JSON"),
    ("[1, 2]", "must be a JSON object, got list"),
    ("null", "must be a JSON object, got NoneType"),
    (b"\xff\xfe", "not valid JSON"),
    ('{"order_id": ' + "[" * 10_000 + "]" * 10_000 + "}", "they nest deeper than 64 levels"),
    ('{"order_id": "\\ud800"}', "they are not valid JSON: Input data was truncated"),
    ('{"order_id": NaN}', "they are not valid JSON: JSON is malformed: invalid character"),
])
def test_arguments_that_are_no_json_object_are_an_error_the_model_reads(raw, needle):
    out = call("get_delivery_order_detail", raw)
    assert not out.ok and out.content.startswith("Error: arguments for `get_delivery_order_detail`")
    assert needle in out.content
    out.content.encode("utf-8")  # a lone surrogate never reaches a tool, nor its answer


def test_empty_arguments_are_no_arguments():
    assert call("get_user_all_orders", "").ok and call("get_user_all_orders", "  ").ok


def test_results_that_are_not_text_render_their_numbers_as_strings():
    assert call("longitude_latitude_to_distance", {"longitude1": 120.1, "latitude1": 30.2,
                                                   "longitude2": 120.1, "latitude2": 30.2}).content == '"0.0"'
    assert call("delivery_distance_to_time", {"distance": 20000}).content == '"155.0"'
    assert to_json_str([102.7, 25]) == '["102.7", "25"]'
    assert to_json_str({"a": [True, None, "中"]}) == '{"a": ["True", null, "中"]}'


def test_the_framework_default_is_unchanged_for_other_toolkits():
    @tool("read")
    def add(db: dict, a: int, b: int = 1) -> dict:
        """Add."""
        return {"sum": a + b}

    kit = Toolkit([Tool.from_function(add, "math")])
    assert kit.policy is STRICT
    assert kit.call({}, "add", '{"a": 2}').content == '{"sum":3}'
    assert "Expected `int`, got `str`" in kit.call({}, "add", '{"a": "2"}').content
    assert kit.call({}, "nope", "{}").content.startswith("Error: unknown tool `nope`")
    schema = kit.schemas()[0]["function"]["parameters"]
    assert schema["additionalProperties"] is False and "title" not in schema
    assert KIT.merge(kit).policy is KIT.policy


def test_new_ids_are_deterministic_per_episode_and_skip_ids_in_use():
    args = {"user_id": "U900001", "store_id": "MB-S01", "product_ids": ["MB-S01-P01"], "product_cnts": [1],
            "address": "Maplebrook Community Clinic, 40 Elm Street, Old Town, Maplebrook",
            "dispatch_time": "2025-03-14 12:30:00"}
    first, again = call("create_delivery_order", args), call("create_delivery_order", args)
    assert first.content == again.content
    state = TOOLS.new_state(TASK)
    ids = [KIT.call(state, "create_delivery_order", json.dumps(args)).content.split(",")[0][15:]
           for _ in range(2)]
    assert ids[0] != ids[1] and all(i.startswith("OT") and len(i) == 12 for i in ids)
    taken = {**TASK.environment["orders"], ids[0]: TASK.environment["orders"]["SB-D-004O01"]}
    busy = msgspec.structs.replace(TASK, environment={**TASK.environment, "orders": taken})
    assert call("create_delivery_order", args, busy).content.split(",")[0][15:] == ids[1]


class _Rules:
    def __init__(self, named_answers: bool) -> None:
        self.named_answers = named_answers


class _State:
    def __init__(self, named_answers: bool) -> None:
        self.rules = _Rules(named_answers)


def _missing(state, key):
    raise ValueError(f"Order {key} not found")


def test_found_makes_a_failed_lookup_an_answer_only_where_the_release_does():
    with pytest.raises(Refused, match="^Error: Order X not found$"):
        found(_State(True), _missing, "X")
    with pytest.raises(ValueError, match="^Order X not found$"):
        found(_State(False), _missing, "X")
    assert found(_State(True), lambda state, key: key * 2, "ab") == "abab"


def test_inner_hands_a_refusal_back_as_its_text():
    def refusing(state):
        require(False, "Address cannot be empty")

    assert inner(refusing, None) == "Address cannot be empty"
    assert inner(lambda state, x: [x, x], None, 1) == [1, 1]
    with pytest.raises(KeyError):
        inner(lambda state: {}["k"], None)


def test_a_renamed_tool_is_named_so_in_cpythons_argument_errors():
    old = KIT.tools["delivery_store_search_recommand"]
    new = renamed(old, "delivery_store_search_recommend")
    assert (new.name, old.name, new.kind, new.domain) == (
        "delivery_store_search_recommend", "delivery_store_search_recommand", "read", "delivery")
    assert new.fn is not old.fn and new.fn.__doc__ == old.fn.__doc__
    with pytest.raises(TypeError, match=r"^DeliveryTools\.delivery_store_search_recommend\(\) missing 1"):
        new.fn(None)
    with pytest.raises(TypeError, match=r"^DeliveryTools\.delivery_store_search_recommand\(\) missing 1"):
        old.fn(None)
    assert new.schema()["function"]["name"] == "delivery_store_search_recommend"
