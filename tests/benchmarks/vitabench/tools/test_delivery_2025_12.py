"""The delivery tools in the updated release (upstream 742e240), over the sample world SB-D-004
(a paid order, a delivered one): the renamed searches, ids checked first, ``Error: ...`` answers
that are not errors, orders named in status answers, ``update_time`` stamped by writes, a
cancelled order's note kept; each beside what the November release does instead."""

from __future__ import annotations

import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import RELEASE_TOOLS

from .support import caller, said

TASK = next(t for t in load_tasks(("delivery",), data_dir=None) if t.id == "SB-D-004")
NEW, OLD = RELEASE_TOOLS["2025-12"], RELEASE_TOOLS["2025-11"]
USER, NOW, CREATED = "U900001", "2025-03-14 12:15:00", "2025-03-14 12:01:00"
HOME = "Unit 602, Building 3, Lakeside Gardens, 17 Birch Avenue, Northgate District, Maplebrook"
PAID, DELIVERED = "SB-D-004O01", "SB-H-0001"
call = caller(TASK, NEW)


@pytest.fixture
def db():
    return NEW.new_state(TASK)


def test_the_searches_answer_under_their_new_names_only(db):
    stores = call(db, "delivery_store_search_recommend", keywords=["dumpling"]).content.split("\n")
    assert len(stores) == 4 and stores[0].startswith("Store(name=Lantern Dumpling Bar, store_id=MB-S02")
    assert said(call(db, "delivery_store_search_recommand", keywords=["dumpling"])) == (
        "Error: Tool 'delivery_store_search_recommand' not found.", False)
    assert said(call(db, "delivery_product_search_recommend", keywords=[])) == (
        "Keywords cannot be empty", True)
    assert said(call(db, "delivery_product_search_recommend")) == (
        ("Error: DeliveryTools.delivery_product_search_recommend() missing 1 required positional "
         "argument: 'keywords'"), False)


def test_lookups_check_the_id_then_answer_not_found_as_no_error(db):
    assert said(call(db, "get_delivery_store_info", store_id="")) == ("Store ID cannot be empty", True)
    assert said(call(db, "get_delivery_store_info", store_id="MB-S99")) == ("Error: Store MB-S99 not found", True)
    assert said(call(db, "get_delivery_product_info", product_id=0)) == ("Product ID cannot be empty", True)
    assert said(call(db, "get_delivery_product_info", product_id="P0")) == ("Error: P0 not found", True)
    assert said(call(db, "get_delivery_order_detail", order_id="NOPE")) == ("Error: Order NOPE not found", True)
    assert said(call(db, "get_delivery_store_info", store_id=["MB-S01"])) == (
        "Error: unhashable type: 'list'", False)  # not a lookup that fails: it leaves the tool
    old = OLD.new_state(TASK)
    assert said(call(old, "get_delivery_store_info", OLD, store_id="MB-S99")) == (
        "Error: Store MB-S99 not found", False)
    assert said(call(old, "get_delivery_store_info", OLD, store_id="")) == ("Error: Store  not found", False)


def test_status_names_the_order_and_an_unknown_one_is_no_error(db):
    assert said(call(db, "get_delivery_order_status", order_id=PAID)) == (f"Order {PAID} status: paid", True)
    assert said(call(db, "get_delivery_order_status", order_id=None)) == ("Order ID cannot be empty", True)
    assert said(call(db, "get_delivery_order_status", order_id="X1")) == ("Error: Order X1 not found", True)
    assert call(OLD.new_state(TASK), "get_delivery_order_status", OLD, order_id=PAID).content == "paid"


def test_paying_a_paid_order_names_it_and_its_status(db):
    assert said(call(db, "pay_delivery_order", order_id=DELIVERED)) == (
        f"Order {DELIVERED} is not in `unpaid` status. Current status: delivered", True)
    assert said(call(db, "pay_delivery_order", order_id="")) == ("Order ID cannot be empty", True)
    assert call(OLD.new_state(TASK), "pay_delivery_order", OLD, order_id=DELIVERED).content == \
        "Order is not in `unpaid` status."


def created(db, tools=NEW):
    args = {"user_id": USER, "store_id": "MB-S02", "product_ids": ["MB-S02-P01"], "product_cnts": [1],
            "address": HOME, "dispatch_time": "2025-03-14 12:30:00"}
    before = set(tools.record_ids(db))
    assert call(db, "create_delivery_order", tools, **args).ok
    return next(r for r in tools.record_ids(db) if r not in before)


@pytest.mark.parametrize("tools, stamped", [(NEW, NOW), (OLD, CREATED)])
def test_pay_cancel_and_modify_stamp_the_time_only_in_the_updated_release(tools, stamped):
    for name, args in (("pay_delivery_order", {}), ("modify_delivery_order", {"note": "ring"}),
                       ("cancel_delivery_order", {})):
        db = tools.new_state(TASK)
        assert db.orders[PAID].update_time == CREATED
        db.orders[PAID].status = "unpaid"
        assert call(db, name, tools, order_id=PAID, **args).ok
        assert db.orders[PAID].update_time == stamped, name
    fresh = tools.new_state(TASK)
    order_id = created(fresh, tools)
    assert fresh.orders[order_id].update_time == NOW  # a new order is stamped in both


def test_a_cancelled_order_keeps_its_note_and_a_null_note_is_refused(db):
    order_id = created(db)
    assert said(call(db, "modify_delivery_order", order_id=order_id, note=None)) == (
        "Note cannot be None (use empty string to clear note)", True)
    assert call(db, "cancel_delivery_order", order_id=order_id).content == f"Order {order_id} has been cancelled."
    assert said(call(db, "cancel_delivery_order", order_id=order_id)) == (
        f"Order {order_id} is already cancelled", True)
    assert said(call(db, "modify_delivery_order", order_id=order_id, note="late")) == (
        f"Cannot modify order {order_id} as it is already cancelled", True)
    assert db.orders[order_id].note == ""
    old = OLD.new_state(TASK)
    old_id = created(old, OLD)
    call(old, "cancel_delivery_order", OLD, order_id=old_id)
    assert call(old, "modify_delivery_order", OLD, order_id=old_id, note="late").content == \
        f"Order {old_id} has been modified."
    assert old.orders[old_id].note == "late"


def test_a_blank_address_fails_the_order_as_upstreams_own_call_does(db):
    """The order geocodes through upstream's tool wrapper, which hands back the refusal's text;
    unpacking it as coordinates then fails the call."""
    args = {"user_id": USER, "store_id": "MB-S02", "product_ids": ["MB-S02-P01"], "product_cnts": [1],
            "address": "   ", "dispatch_time": "2025-03-14 12:30:00"}
    assert said(call(db, "create_delivery_order", **args)) == ("Error: too many values to unpack (expected 2)", False)
    assert said(call(db, "create_delivery_order", **{**args, "address": ""})) == ("Location  is empty", True)
