"""The sixteen in-store tools over the sample world (SB-I-003: a paid order, a reservation):
upstream's texts, and upstream's state changes (the catalogue package an order shares)."""

from __future__ import annotations

import json

import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS

TASKS = {t.id: t for t in load_tasks(("instore",), data_dir=None)}
TASK = TASKS["SB-I-003"]
KIT = TOOLS.toolkit(TASK)
USER, NOW = "U910003", "2025-04-20 09:00:00"
SPA, BISTRO, GYM, HOTPOT = "MB-I01", "MB-I02", "MB-I03", "MB-I04"


@pytest.fixture
def db():
    return TOOLS.new_state(TASK)


def call(db, name, **args):
    return KIT.call(db, name, json.dumps(args))


def make(db, name, **args):
    """(outcome, id of the record the call created)."""
    before = set(TOOLS.record_ids(db))
    out = call(db, name, **args)
    new = [r for r in TOOLS.record_ids(db) if r not in before]
    return out, (new[0] if new else None)


def test_searches_rank_every_shop_and_package(db):
    shops = call(db, "instore_shop_search_recommend", keywords=["hotpot"]).content.split("\n")
    assert len(shops) == 4 and shops[0].startswith(f"Shop(shop_name=Golden Ladle Hotpot, shop_id={HOTPOT}, ")
    assert shops[0].endswith("enable_book=True, book_price=0.0, enable_reservation=False)")
    packages = call(db, "instore_product_search_recommend", keywords=["bouldering class"]).content.split("\n")
    assert len(packages) == 10
    assert packages[0] == (f"ShopProduct(shop_id={GYM}, product_id=MB-I03-P02, name=Beginner bouldering class, "
                           "price=98.0, quantity=10, tags=['Class', 'Beginner', 'Coach'])")


def test_buying_sets_the_catalogue_package_quantity_which_every_order_of_it_shows(db):
    first, one = make(db, "create_instore_product_order", user_id=USER, shop_id=GYM, product_id="MB-I03-P01",
                      quantity=3)
    assert first.content == (
        f"Order(order_id:{one}, order_type:instore, user_id:{USER}, shop_id:{GYM}, total_price:174.0, "
        f"create_time:{NOW}, update_time:{NOW}, status:unpaid, products:[ShopProduct(shop_id={GYM}, "
        "product_id=MB-I03-P01, name=Single entry pass, price=58.0, quantity=3, tags=['Entry', 'Single'])])")
    call(db, "create_instore_product_order", user_id=USER, shop_id=GYM, product_id="MB-I03-P01", quantity=2)
    final = TOOLS.final_state(db)["orders"]
    assert final[one]["products"][0]["quantity"] == 2 and final[one]["total_price"] == 174.0
    assert "quantity=2" in call(db, "instore_product_search_recommend", keywords=["Single entry"]).content


@pytest.mark.parametrize("args, text, ok", [
    ({"user_id": "U1"}, "User ID does not match", True),
    ({"shop_id": "MB-I99"}, "Shop does not exist", True),
    ({"product_id": "MB-I01-P01"}, "Product does not exist", True),
    ({"quantity": 0}, "Quantity must be greater than 0", True),
    ({"quantity": "2"}, "Error: '>' not supported between instances of 'str' and 'int'", False),
])
def test_order_refusals(db, args, text, ok):
    out = call(db, "create_instore_product_order", **{"user_id": USER, "shop_id": GYM,
                                                      "product_id": "MB-I03-P01", **args})
    assert (out.content, out.ok) == (text, ok)


def test_pay_and_cancel_orders_set_the_update_time(db):
    _, order_id = make(db, "create_instore_product_order", user_id=USER, shop_id=GYM, product_id="MB-I03-P02")
    assert call(db, "pay_instore_order", order_id=order_id).content == "Payment successful"
    assert call(db, "pay_instore_order", order_id=order_id).content == \
        f"Order {order_id} is not in `unpaid` status."
    assert call(db, "instore_cancel_order", order_id=order_id).content == f"Order {order_id} is cancelled."
    assert call(db, "instore_cancel_order", order_id=order_id).content == f"Order {order_id} is already cancelled."
    assert call(db, "pay_instore_order", order_id="nope").content == "Error: Order nope not found"
    assert call(db, "pay_instore_order", order_id="").content == "Order ID cannot be empty"


def test_bookings_are_unpaid_when_they_cost_something(db):
    paid, book = make(db, "instore_book", user_id=USER, shop_id=BISTRO, time="2025-04-20 19:00:00",
                      customer_count=2)
    assert paid.content == (f"BookInfo(book_id={book},shop_id={BISTRO}, book_time=2025-04-20 19:00:00, "
                            f"customer_id={USER}, customer_count=2, book_price=30.0, status=unpaid")
    assert call(db, "pay_instore_book", book_id=book).content == "Payment successful"
    assert call(db, "pay_instore_book", book_id=book).content == f"BookInfo {book} is not in `unpaid` status."
    free = call(db, "instore_book", user_id=USER, shop_id=HOTPOT, time="2025-4-20 19:00:00")
    assert free.content.endswith("customer_count=1, book_price=0.0, status=paid")  # unpadded time passes
    assert call(db, "instore_cancel_book", book_id=book).content == f"BookInfo {book} is cancelled."
    assert call(db, "instore_cancel_book", book_id="nope").content == "Error: BookInfo nope not found"


@pytest.mark.parametrize("args, text", [
    ({"shop_id": SPA}, "Shop does not support table booking"),
    ({"customer_count": 0}, "Number of customers for table booking must be greater than 0"),
    ({"time": ""}, "Table booking time cannot be empty"),
    ({"time": "tonight"}, "Table booking time format is incorrect, correct format is %Y-%m-%d %H:%M:%S"),
])
def test_booking_refusals(db, args, text):
    out = call(db, "instore_book", **{"user_id": USER, "shop_id": BISTRO, "time": "2025-04-20 19:00:00", **args})
    assert (out.content, out.ok) == (text, True)


def test_reservations_need_no_reservation_flag_and_a_change_without_count_sets_it_to_zero(db):
    made, rid = make(db, "instore_reservation", user_id=USER, shop_id=BISTRO, time="2025-04-21 10:00:00",
                     customer_count=3)
    assert made.content == (f"ReservationInfo(reservation_id={rid},shop_id={BISTRO}, "
                            f"reservation_time=2025-04-21 10:00:00, customer_id={USER}, customer_count=3, "
                            "status=unconsumed")
    moved = call(db, "instore_modify_reservation", reservation_id=rid, time="2025-04-21 11:00:00")
    assert moved.content.endswith("reservation_time=2025-04-21 11:00:00, customer_id=U910003, "
                                  "customer_count=0, status=unconsumed")
    assert call(db, "instore_cancel_reservation", reservation_id=rid).content == \
        f"ReservationInfo {rid} is cancelled."
    assert call(db, "instore_modify_reservation", reservation_id=rid, time="2025-04-21 12:00:00").content == \
        f"ReservationInfo {rid} is already cancelled."
    assert call(db, "instore_cancel_reservation", reservation_id="nope").content == \
        "Error: ReservationInfo nope not found"


def test_listings_and_lookups_of_the_users_records(db):
    assert call(db, "get_instore_books", user_id=USER).content == f"User {USER} has no book information."
    assert call(db, "get_instore_orders", user_id=USER).content.startswith("Order(order_id:SB-I-003O01, ")
    assert call(db, "get_instore_reservations", user_id=USER).content.startswith(
        "ReservationInfo(reservation_id=SB-I-003R01,")
    assert call(db, "search_instore_reservation", user_id=USER).content == \
        call(db, "get_instore_reservations", user_id=USER).content
    assert call(db, "search_instore_book", user_id=USER, book_id=None).content == \
        f"User {USER} has no book information."
    other = TOOLS.new_state(TASKS["SB-I-004"])
    book_id = next(iter(other.books))
    other.user_id = "U-OTHER"
    assert KIT.call(other, "search_instore_book", json.dumps({"user_id": "U-OTHER", "book_id": book_id})).content \
        == f"BookInfo {book_id} is not belong to user U-OTHER."
    assert call(db, "get_instore_orders", user_id="").content == "User ID cannot be empty"
