"""The delivery and in-store keyword searches in both releases: how many they show (100 / 1000
in November, 50 after), equal texts kept apart in the updated release, its keyword checks, and
its answers when there is nothing to show or a record cannot be found by its own id."""

from __future__ import annotations

import copy
import json

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import RELEASE_TOOLS

DELIVERY = next(t for t in load_tasks(("delivery",), data_dir=None) if t.id == "SB-D-004")
INSTORE = next(t for t in load_tasks(("instore",), data_dir=None) if t.id == "SB-I-003")
NEW, OLD = RELEASE_TOOLS["2025-12"], RELEASE_TOOLS["2025-11"]
SEARCH = {NEW: "delivery_store_search_recommend", OLD: "delivery_store_search_recommand"}


def with_stores(stores):
    return msgspec.structs.replace(DELIVERY, environment={**DELIVERY.environment, "stores": stores})


def call(tools, task, name, **args):
    return tools.toolkit(task).call(tools.new_state(task), name, json.dumps(args))


def clones(n):
    """The sample stores and ``n`` copies of one, each under its own id, all with one text."""
    stores = copy.deepcopy(DELIVERY.environment["stores"])
    for i in range(n):
        stores[f"C{i:02}"] = {**copy.deepcopy(stores["MB-S01"]), "store_id": f"C{i:02}", "products": []}
    return with_stores(stores)


def store_ids(text):
    return [line.split("store_id=")[1].split(",")[0] for line in text.split("\n")]


def test_november_shows_100_and_collapses_equal_texts():
    ids = store_ids(call(OLD, clones(60), SEARCH[OLD], keywords=["noodle"]).content)
    assert len(ids) == 64 and ids.count("C59") == 61  # MB-S01 and its 60 copies all stand for C59


def test_the_updated_release_shows_50_each_once():
    ids = store_ids(call(NEW, clones(60), SEARCH[NEW], keywords=["noodle"]).content)
    assert len(ids) == 50 and len(set(ids)) == 50 and ids[:3] == ["MB-S01", "C00", "C01"]


def test_instore_shows_50_not_1000():
    shops = copy.deepcopy(INSTORE.environment["shops"])
    for i in range(60):
        shops[f"X{i:02}"] = {**copy.deepcopy(shops["MB-I01"]), "shop_id": f"X{i:02}", "shop_name": f"Spa {i}",
                             "products": []}
    task = msgspec.structs.replace(INSTORE, environment={**INSTORE.environment, "shops": shops})
    assert len(call(NEW, task, "instore_shop_search_recommend", keywords=["spa"]).content.split("\n")) == 50
    assert len(call(OLD, task, "instore_shop_search_recommend", keywords=["spa"]).content.split("\n")) == 64


@pytest.mark.parametrize("keywords, text", [
    ([], "Keywords cannot be empty"),
    (None, "Keywords cannot be empty"),
    ("noodle", "Keywords must be a list"),
    ({"a": 1}, "Keywords must be a list"),
    (["noodle", " "], "All keywords must be non-empty strings"),
    ([1], "All keywords must be non-empty strings"),
])
def test_the_updated_release_checks_the_keywords(keywords, text):
    out = call(NEW, DELIVERY, SEARCH[NEW], keywords=keywords)
    assert (out.content, out.ok) == (text, True)


def test_november_joins_whatever_it_is_given():
    assert call(OLD, DELIVERY, SEARCH[OLD], keywords=[]).content.count("\n") == 3  # every store
    out = call(OLD, DELIVERY, SEARCH[OLD], keywords=None)
    assert (out.content, out.ok) == ("Error: can only join an iterable", False)


def test_nothing_to_rank_and_nothing_found_are_answers():
    empty = with_stores({})
    assert call(NEW, empty, SEARCH[NEW], keywords=["a"]).content == "No stores available"
    assert call(NEW, empty, "delivery_product_search_recommend", keywords=["a"]).content == "No products available"
    assert call(OLD, empty, SEARCH[OLD], keywords=["a"]).content == ""
    alias = with_stores({"ALIAS": {**copy.deepcopy(DELIVERY.environment["stores"]["MB-S01"]), "store_id": "MB-S01-ID"}})
    out = call(NEW, alias, SEARCH[NEW], keywords=["a"])
    assert (out.content, out.ok) == ("No stores found matching the keywords", True)
    old = call(OLD, alias, SEARCH[OLD], keywords=["a"])
    assert (old.content, old.ok) == ("Error: Store MB-S01-ID not found", False)


def test_a_store_filed_under_another_key_is_left_out_of_the_updated_list():
    stores = copy.deepcopy(DELIVERY.environment["stores"])
    stores["MB-S03"]["store_id"] = "MB-S33"
    out = call(NEW, with_stores(stores), SEARCH[NEW], keywords=["noodle"])
    assert out.ok and len(out.content.split("\n")) == 3 and "MB-S33" not in out.content
