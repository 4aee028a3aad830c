"""The sixteen in-store tools over the sample world (SB-I-003: a paid order, a reservation)."""

from __future__ import annotations

import msgspec
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
    return KIT.call(db, name, msgspec.json.encode(args))


def refused(db, name, message, **args):
    before = msgspec.json.encode(db)
    out = call(db, name, **args)
    assert not out.ok and message in out.content, out.content
    assert msgspec.json.encode(db) == before


def test_search_finds_shops_and_packages(db):
    shops = call(db, "instore_shop_search_recommend", keywords=["hotpot"]).value
    assert shops[0].shop_id == HOTPOT and shops[0].enable_book and not hasattr(shops[0], "products")
    packages = call(db, "instore_product_search_recommend", keywords=["bouldering class"]).value
    assert packages[0].product_id == "MB-I03-P02" and packages[0].shop_id == GYM


def test_an_order_holds_one_package_and_is_paid_once(db):
    order = call(db, "create_instore_product_order", user_id=USER, shop_id=GYM, product_id="MB-I03-P01",
                 quantity=3).value
    assert (order.order_type, order.status, order.total_price, order.create_time) == ("instore", "unpaid", 174, NOW)
    assert order.order_id.startswith("OI") and [p.quantity for p in order.products] == [3]
    assert call(db, "pay_instore_order", order_id=order.order_id).content == "Payment successful"
    refused(db, "pay_instore_order", "not in `unpaid` status", order_id=order.order_id)
    assert call(db, "instore_cancel_order", order_id=order.order_id).ok
    refused(db, "instore_cancel_order", "already cancelled", order_id=order.order_id)


@pytest.mark.parametrize("args, message", [
    ({"user_id": "U1"}, "User ID does not match"),
    ({"shop_id": "MB-I99"}, "Shop MB-I99 does not exist"),
    ({"product_id": "MB-I01-P01"}, "is not sold by shop MB-I03"),
    ({"quantity": 0}, "quantity must be at least 1"),
])
def test_bad_orders_change_nothing(db, args, message):
    refused(db, "create_instore_product_order", message,
            **{"user_id": USER, "shop_id": GYM, "product_id": "MB-I03-P01", **args})


def test_a_booking_with_a_fee_waits_for_payment_and_a_free_one_does_not(db):
    paid_later = call(db, "instore_book", user_id=USER, shop_id=BISTRO, time="2025-04-20 19:00:00",
                      customer_count=2).value
    assert (paid_later.status, paid_later.book_price) == ("unpaid", 30)
    assert call(db, "pay_instore_book", book_id=paid_later.book_id).ok
    assert db.books[paid_later.book_id].status == "paid"
    free = call(db, "instore_book", user_id=USER, shop_id=HOTPOT, time="2025-04-20 18:00:00").value
    assert (free.status, free.customer_count) == ("paid", 1)
    assert call(db, "instore_cancel_book", book_id=free.book_id).ok
    refused(db, "instore_cancel_book", "already cancelled", book_id=free.book_id)
    refused(db, "instore_book", "does not take table bookings", user_id=USER, shop_id=SPA,
            time="2025-04-20 18:00:00")
    refused(db, "instore_book", "not in the format", user_id=USER, shop_id=BISTRO, time="tonight")


def test_reservations_are_made_moved_and_cancelled(db):
    made = call(db, "instore_reservation", user_id=USER, shop_id=SPA, time="2025-04-21 10:00:00",
                customer_count=2).value
    assert made.status == "unconsumed"
    moved = call(db, "instore_modify_reservation", reservation_id=made.reservation_id,
                 time="2025-04-21 11:00:00").value
    assert (moved.reservation_time, moved.customer_count) == ("2025-04-21 11:00:00", 2)  # 0 keeps the size
    assert call(db, "instore_modify_reservation", reservation_id="SB-I-003R01", time="2025-04-21 18:00:00",
                customer_count=3).value.customer_count == 3
    assert call(db, "instore_cancel_reservation", reservation_id=made.reservation_id).ok
    refused(db, "instore_modify_reservation", "already cancelled", reservation_id=made.reservation_id,
            time="2025-04-21 12:00:00")
    refused(db, "instore_modify_reservation", "customer_count must be at least 0",
            reservation_id="SB-I-003R01", time="2025-04-21 12:00:00", customer_count=-1)


def test_listing_and_looking_up_the_users_records(db):
    assert [o.order_id for o in call(db, "get_instore_orders", user_id=USER).value] == ["SB-I-003O01"]
    assert call(db, "get_instore_books", user_id=USER).value == f"User {USER} has no book information."
    assert [r.reservation_id for r in call(db, "get_instore_reservations", user_id=USER).value] == ["SB-I-003R01"]
    one = call(db, "search_instore_reservation", user_id=USER, reservation_id="SB-I-003R01").value
    assert one.shop_id == GYM
    assert [r.reservation_id for r in call(db, "search_instore_reservation", user_id=USER).value] == ["SB-I-003R01"]
    refused(db, "search_instore_book", "Booking B9 not found", user_id=USER, book_id="B9")
    refused(db, "get_instore_orders", "User ID does not match", user_id="U1")


def test_new_ids_are_deterministic_and_distinct():
    ids = []
    for _ in range(2):
        db = TOOLS.new_state(TASK)
        ids.append([call(db, "instore_reservation", user_id=USER, shop_id=SPA, time="2025-04-21 10:00:00").value
                    .reservation_id for _ in range(3)])
    assert ids[0] == ids[1] and len(set(ids[0])) == 3
