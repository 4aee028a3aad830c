"""The twelve delivery tools, over the sample world (task SB-D-004: a paid order, a delivered
one): upstream's texts, checks in upstream's order, and upstream's state changes."""

from __future__ import annotations

import copy
import json

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS

TASK = next(t for t in load_tasks(("delivery",), data_dir=None) if t.id == "SB-D-004")
KIT = TOOLS.toolkit(TASK)
USER, NOW = "U900001", "2025-03-14 12:15:00"
HOME = "Unit 602, Building 3, Lakeside Gardens, 17 Birch Avenue, Northgate District, Maplebrook"
PAID, DELIVERED = "SB-D-004O01", "SB-H-0001"
CROISSANT = ("StoreProduct(store_name=Honeycomb Bakery, store_id=MB-S04, product_name=Honey butter croissant, "
             "product_id=MB-S04-P01, attributes=, quantity=0, price=12.0, tags=")


@pytest.fixture
def db():
    return TOOLS.new_state(TASK)


def call(db, name, **args):
    return KIT.call(db, name, json.dumps(args))


def order_args(**overrides):
    args = {"user_id": USER, "store_id": "MB-S02", "product_ids": ["MB-S02-P01", "MB-S02-P03"],
            "product_cnts": [2, 1], "address": HOME, "dispatch_time": "2025-03-14 12:30:00",
            "attributes": ["Pan-fried"], "note": "No chopsticks"}
    return {**args, **overrides}


def test_distance_to_time_is_25_minutes_plus_distance(db):
    assert call(db, "delivery_distance_to_time", distance=0).content == '"25.0"'
    assert call(db, "delivery_distance_to_time", distance=1000.9).content == '"32.0"'  # int(1000.9) m


def test_store_info_prints_the_store_then_its_menu_one_product_a_line(db):
    text = call(db, "get_delivery_store_info", store_id="MB-S04").content
    head, *menu = text.split("\n")
    assert head.startswith("Store(name=Honeycomb Bakery, store_id=MB-S04, score=")
    assert ", products=StoreProduct(store_name=Honeycomb Bakery" in head and len(menu) == 2
    assert menu[0].startswith("StoreProduct(") and menu[0].endswith(")") and "attributes=Hot, Iced" in menu[0]
    out = call(db, "get_delivery_store_info", store_id="MB-S99")
    assert (out.content, out.ok) == ("Error: Store MB-S99 not found", False)


def test_product_info_shows_the_last_ordered_line_of_a_product(db):
    assert call(db, "get_delivery_product_info", product_id="MB-S04-P01").content.startswith(CROISSANT)
    assert call(db, "get_delivery_product_info", product_id="nope").content == "Error: nope not found"
    call(db, "create_delivery_order", **order_args(store_id="MB-S04", product_ids=["MB-S04-P01"],
                                                  product_cnts=[3], attributes=None))
    ordered = call(db, "get_delivery_product_info", product_id="MB-S04-P01").content
    assert "quantity=3, price=12.0" in ordered  # upstream replaces the catalogue entry
    assert "quantity=0, price=12.0" in call(db, "get_delivery_store_info", store_id="MB-S04").content


def test_searches_rank_every_store_and_product_in_short_form(db):
    stores = call(db, "delivery_store_search_recommand", keywords=["dumpling"]).content.split("\n")
    assert len(stores) == 4 and stores[0].startswith("Store(name=Lantern Dumpling Bar, store_id=MB-S02")
    assert all("products=" not in s for s in stores)
    products = call(db, "delivery_product_search_recommand", keywords=["crois", "sant"]).content.split("\n")
    assert len(products) == 12 and products[0].startswith(CROISSANT)


def test_a_store_filed_under_another_key_breaks_every_store_search():
    """Upstream ranks stores by their id field, then looks them up by key (task 20711002)."""
    stores = copy.deepcopy(TASK.environment["stores"])
    stores["MB-S03"]["store_id"] = "MB-S33"
    task = msgspec.structs.replace(TASK, environment={**TASK.environment, "stores": stores})
    state = TOOLS.new_state(task)
    found = KIT.call(state, "delivery_store_search_recommand", '{"keywords": ["noodle"]}')
    assert (found.content, found.ok) == ("Error: Store MB-S33 not found", False)
    assert "store_id=MB-S33" in KIT.call(state, "get_delivery_store_info", '{"store_id": "MB-S03"}').content


def test_create_order_prints_the_new_order(db):
    out = call(db, "create_delivery_order", **order_args())
    order_id = TOOLS.record_ids(db)[-1]
    assert out.ok and out.content == (
        f"Order(order_id:{order_id}, order_type:delivery, user_id:{USER}, store_id:MB-S02, "
        "dispatch_time:2025-03-14 12:30:00, shipping_time:38.0, delivery_time:2025-03-14 13:08:00, "
        f"total_price:62.0, create_time:{NOW}, update_time:{NOW}, note:No chopsticks, status:unpaid, "
        "products:[StoreProduct(store_name=Lantern Dumpling Bar, store_id=MB-S02, product_name=Pork and chive "
        "dumplings (12 pieces), product_id=MB-S02-P01, attributes=Pan-fried, quantity=2, price=28.0, "
        "tags=['Best seller']), StoreProduct(store_name=Lantern Dumpling Bar, store_id=MB-S02, "
        "product_name=Hot soy milk, product_id=MB-S02-P03, attributes=, quantity=1, price=6.0, tags=['Drink'])])")
    final = TOOLS.final_state(db)["orders"][order_id]
    assert final["location"] == [HOME, 120.1601, 30.281] and final["total_price"] == 62.0


def test_totals_are_not_rounded_and_a_null_note_prints_none(db):
    out = call(db, "create_delivery_order", **order_args(store_id="MB-S01", product_ids=["MB-S01-P01"],
                                                         product_cnts=[1], attributes=["Mild"], note=None))
    assert "note:None" in out.content
    three = call(db, "create_delivery_order", **order_args(product_ids=["MB-S03-P01"] * 3, product_cnts=[1] * 3,
                                                           attributes=[]))
    assert "total_price:114.0" in three.content  # any store's products, as upstream
    state = TOOLS.new_state(msgspec.structs.replace(TASK, environment={**TASK.environment, "stores": {
        **TASK.environment["stores"], "MB-S04": {**TASK.environment["stores"]["MB-S04"], "products": [
            {**TASK.environment["stores"]["MB-S04"]["products"][0], "price": 28.9}]}}}))
    odd = KIT.call(state, "create_delivery_order", json.dumps(order_args(
        store_id="MB-S04", product_ids=["MB-S04-P01"], product_cnts=[3], attributes=None)))
    assert "total_price:86.69999999999999" in odd.content


@pytest.mark.parametrize("overrides, text, ok", [
    ({"user_id": "U1"}, "User ID does not match", True),
    ({"user_id": ""}, "User ID cannot be empty", True),
    ({"store_id": "MB-S99"}, "Store MB-S99 not found", True),
    ({"product_ids": ["ghost"], "product_cnts": [1]}, "Error: ghost not found", False),
    ({"address": ""}, "Location  is empty", True),
    ({"product_cnts": [1]}, "product_cnts [1] list is invalid", True),
    ({"product_cnts": [2, 0]}, "product_cnts [2, 0] list is invalid", True),
    ({"product_cnts": ["2", 1]}, "Error: '>' not supported between instances of 'str' and 'int'", False),
    ({"address": "qqqq zzzz xxxx"}, "Error: Longitude and latitude not found for address qqqq zzzz xxxx", False),
    ({"dispatch_time": "2025-03-14 12:30"},
     "dispatch_time 2025-03-14 12:30 time format is invalid, yyyy-mm-dd HH:MM:SS required", True),
    ({"dispatch_time": "2025-03-14 12:00:00"}, "dispatch_time 2025-03-14 12:00:00 must be in the future", True),
    ({"product_cnts": [1.5, 1]},
     "Error: 1 validation error for StoreProduct\nquantity\n  Input should be a valid integer, got a number "
     "with a fractional part [type=int_from_float, input_value=1.5, input_type=float]\n    For further "
     "information visit https://errors.pydantic.dev/2.14/v/int_from_float", False),
])
def test_create_order_refusals_are_upstreams(db, overrides, text, ok):
    out = call(db, "create_delivery_order", **order_args(**overrides))
    assert (out.content, out.ok) == (text, ok)
    assert len(TOOLS.final_state(db)["orders"]) == 2


def test_a_string_of_attributes_is_sliced_into_characters(db):
    out = call(db, "create_delivery_order", **order_args(attributes="Steamed"))
    assert "attributes=S, quantity=2" in out.content and "attributes=t, quantity=1" in out.content


def test_pay_cancel_and_modify_do_not_touch_update_time(db):
    order_id = (call(db, "create_delivery_order", **order_args()), TOOLS.record_ids(db)[-1])[1]
    before = TOOLS.final_state(db)["orders"][order_id]["update_time"]
    assert call(db, "pay_delivery_order", order_id=order_id).content == "Payment successful"
    assert call(db, "pay_delivery_order", order_id=order_id).content == "Order is not in `unpaid` status."
    assert call(db, "modify_delivery_order", order_id=order_id, note="Ring twice").content == \
        f"Order {order_id} has been modified."
    assert call(db, "get_delivery_order_status", order_id=order_id).content == "paid"
    assert call(db, "cancel_delivery_order", order_id=order_id).content == f"Order {order_id} has been cancelled."
    again = call(db, "cancel_delivery_order", order_id=order_id)
    assert (again.content, again.ok) == (f"Order {order_id} is already cancelled", True)
    final = TOOLS.final_state(db)["orders"][order_id]
    assert (final["status"], final["note"], final["update_time"]) == ("cancelled", "Ring twice", before)


def test_lookups_of_unknown_orders_are_errors(db):
    for name in ("pay_delivery_order", "get_delivery_order_status", "cancel_delivery_order",
                 "get_delivery_order_detail"):
        out = call(db, name, order_id="OTnope")
        assert (out.content, out.ok) == ("Error: Order OTnope not found", False), name
    assert call(db, "get_delivery_order_detail", order_id="").content == "Order ID cannot be empty"
    assert call(db, "pay_delivery_order", order_id=None).content == "Error: 'list' object has no attribute 'status'"


def test_search_orders_lists_short_forms_of_one_status(db):
    paid = call(db, "search_delivery_orders", user_id=USER, status="paid").content
    assert paid.startswith(f"Order(order_id:{PAID}, order_type:delivery, user_id:{USER}, store_id:")
    assert paid.endswith("status:paid, ") and "\n" not in paid
    assert call(db, "search_delivery_orders", user_id=USER).content == "No delivery orders available"
    assert call(db, "search_delivery_orders", user_id="U2").content == "User ID does not match"
    detail = call(db, "get_delivery_order_detail", order_id=DELIVERED).content
    assert detail.startswith(f"Order(order_id:{DELIVERED}, ") and ", note:, status:delivered, products:[{" in detail
