"""The twelve delivery tools, over the sample world (task SB-D-004: a paid order, a delivered one)."""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS
from sweepbench.benchmarks.vitabench.tools.db import TIME_FORMAT, Order, distance_m

TASK = next(t for t in load_tasks(("delivery",), data_dir=None) if t.id == "SB-D-004")
KIT = TOOLS.toolkit(TASK)
USER, NOW = "U900001", "2025-03-14 12:15:00"
HOME = "Unit 602, Building 3, Lakeside Gardens, 17 Birch Avenue, Northgate District, Maplebrook"
PAID, DELIVERED = "SB-D-004O01", "SB-H-0001"


@pytest.fixture
def db():
    return TOOLS.new_state(TASK)


def call(db, name, **args):
    return KIT.call(db, name, msgspec.json.encode(args))


def order_args(**overrides):
    args = {"user_id": USER, "store_id": "MB-S02", "product_ids": ["MB-S02-P01", "MB-S02-P03"],
                "product_cnts": [2, 1], "address": HOME, "dispatch_time": "2025-03-14 12:30:00",
                "attributes": ["Pan-fried"], "note": "No chopsticks"}
    return {**args, **overrides}


def snapshot(db):
    return msgspec.json.encode(db)


def test_distance_to_time_is_25_minutes_plus_distance():
    assert call(None, "delivery_distance_to_time", distance=0).value == 25.0
    assert call(None, "delivery_distance_to_time", distance=1000.9).value == 32.0  # int(1000.9) m


def test_store_info_lists_the_menu(db):
    store = call(db, "get_delivery_store_info", store_id="MB-S04").value
    assert store.name == "Honeycomb Bakery" and len(store.products) == 3
    out = call(db, "get_delivery_store_info", store_id="MB-S99")
    assert not out.ok and "Store MB-S99 not found" in out.content


def test_product_info(db):
    assert call(db, "get_delivery_product_info", product_id="MB-S04-P02").value.attributes == ["Hot", "Iced"]
    out = call(db, "get_delivery_product_info", product_id="nope")
    assert not out.ok and "nope not found" in out.content


def test_store_search_ranks_by_keywords_and_omits_menus(db):
    out = call(db, "delivery_store_search_recommand", keywords=["dumpling"])
    assert out.value[0].store_id == "MB-S02" and len(out.value) == 4
    assert '"products"' not in out.content
    assert not call(db, "delivery_store_search_recommand", keywords="dumpling").ok  # not a list


def test_product_search_ranks_across_stores(db):
    found = call(db, "delivery_product_search_recommand", keywords=["chocolate", "cake"]).value
    assert found[0].product_id == "MB-S04-P03" and len(found) == 12


def test_create_order(db):
    out = call(db, "create_delivery_order", **order_args())
    assert out.ok, out.content
    o = out.value
    assert o.order_id.startswith("OT") and db.orders[o.order_id] is o
    assert (o.status, o.user_id, o.store_id, o.note) == ("unpaid", USER, "MB-S02", "No chopsticks")
    assert [(p.product_id, p.quantity, p.attributes) for p in o.products] == [
        ("MB-S02-P01", 2, "Pan-fried"), ("MB-S02-P03", 1, "")]  # missing attributes padded
    assert o.total_price == 2 * 28.0 + 6.0
    assert o.create_time == o.update_time == NOW
    assert o.location.address == HOME and o.location.longitude == 120.1601
    minutes = round(25 + int(distance_m(120.1601, 30.2810, 120.1702, 30.2655)) * 0.00651)
    assert o.shipping_time == minutes > 25
    arrival = datetime(2025, 3, 14, 12, 30) + timedelta(minutes=minutes)
    assert o.delivery_time == arrival.strftime(TIME_FORMAT)


def test_create_order_takes_null_for_the_optional_attributes_and_note(db):
    o = call(db, "create_delivery_order", **order_args(attributes=None, note=None)).value
    assert [p.attributes for p in o.products] == ["", ""] and o.note == ""


def test_new_order_ids_are_a_function_of_the_episode(db):
    first = call(db, "create_delivery_order", **order_args()).value.order_id
    second = call(db, "create_delivery_order", **order_args()).value.order_id
    again = TOOLS.new_state(TASK)
    assert first != second
    replay = [call(again, "create_delivery_order", **order_args()).value.order_id for _ in range(2)]
    assert replay == [first, second]


@pytest.mark.parametrize("overrides, message", [
    ({"user_id": "U000002"}, "User ID does not match"),
    ({"user_id": ""}, "User ID cannot be empty"),
    ({"store_id": "MB-S99"}, "Store MB-S99 not found"),
    ({"product_ids": ["MB-S02-P01", "ghost"]}, "['ghost'] not found"),
    ({"product_ids": [], "product_cnts": []}, "product_ids is empty"),
    ({"product_cnts": [1]}, "positive count for each product"),
    ({"product_cnts": [1, 0]}, "positive count for each product"),
    ({"address": "  "}, "address is empty"),
    ({"address": "qqqq xxxx zzzz"}, "not found for address"),
    ({"dispatch_time": "2025-03-14 12:30"}, "yyyy-mm-dd HH:MM:SS"),
    ({"dispatch_time": "2025-03-14 12:14:59"}, "must not be earlier than now"),
    ({"product_cnts": [1, "2"]}, "Expected `int`"),
])
def test_create_order_rejects_bad_input_and_changes_nothing(db, overrides, message):
    before = snapshot(db)
    out = call(db, "create_delivery_order", **order_args(**overrides))
    assert not out.ok and message in out.content
    assert snapshot(db) == before


def test_pay_order(db):
    oid = call(db, "create_delivery_order", **order_args()).value.order_id
    assert call(db, "pay_delivery_order", order_id=oid).content == "Payment successful"
    assert db.orders[oid].status == "paid"
    again = call(db, "pay_delivery_order", order_id=oid)
    assert not again.ok and "not in `unpaid` status" in again.content


@pytest.mark.parametrize("tool", ["pay_delivery_order", "cancel_delivery_order", "get_delivery_order_status",
                                  "get_delivery_order_detail"])
def test_order_tools_reject_unknown_and_foreign_orders(db, tool):
    db.orders["HOTEL-1"] = msgspec.structs.replace(db.orders[PAID], order_id="HOTEL-1", order_type="hotel")
    before = snapshot(db)
    assert "Order nope not found" in call(db, tool, order_id="nope").content
    assert "is not a delivery order" in call(db, tool, order_id="HOTEL-1").content
    assert "Order ID cannot be empty" in call(db, tool, order_id="").content
    assert snapshot(db) == before


def test_order_status(db):
    assert call(db, "get_delivery_order_status", order_id=DELIVERED).content == "delivered"


def test_cancel_order(db):
    assert call(db, "cancel_delivery_order", order_id=PAID).content == f"Order {PAID} has been cancelled."
    assert db.orders[PAID].status == "cancelled"
    again = call(db, "cancel_delivery_order", order_id=PAID)
    assert not again.ok and "already cancelled" in again.content


def test_modify_order_note(db):
    assert call(db, "modify_delivery_order", order_id=PAID, note="Ring twice").ok
    assert db.orders[PAID].note == "Ring twice" and db.orders[PAID].status == "paid"
    assert not call(db, "modify_delivery_order", order_id="nope", note="x").ok


def test_search_orders_by_status(db):
    assert call(db, "search_delivery_orders", user_id=USER).content == "No delivery orders available"
    paid = call(db, "search_delivery_orders", user_id=USER, status="paid").value
    assert [o.order_id for o in paid] == [PAID]
    assert not hasattr(paid[0], "products")  # a summary; the detail tool gives the rest
    assert "User ID does not match" in call(db, "search_delivery_orders", user_id="U1").content
    assert not call(db, "search_delivery_orders", user_id=USER, status="lost").ok


def test_order_detail(db):
    detail = call(db, "get_delivery_order_detail", order_id=PAID).value
    assert isinstance(detail, Order) and detail.products[0].product_id == "MB-S01-P02"
