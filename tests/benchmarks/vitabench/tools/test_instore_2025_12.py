"""The in-store tools in the updated release (upstream 742e240), over the sample world SB-I-003
(a paid order, a reservation): every argument checked before any lookup, integer counts, unknown
records answered ``Error: ...`` (no error), refusals naming the shop, product or status; each
beside what the November release does instead."""

from __future__ import annotations

import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import RELEASE_TOOLS

from .support import caller, said

TASK = next(t for t in load_tasks(("instore",), data_dir=None) if t.id == "SB-I-003")
NEW, OLD = RELEASE_TOOLS["2025-12"], RELEASE_TOOLS["2025-11"]
USER = "U910003"
SPA, BISTRO, GYM = "MB-I01", "MB-I02", "MB-I03"
ORDER, RESERVATION = "SB-I-003O01", "SB-I-003R01"
call = caller(TASK, NEW)


@pytest.fixture
def db():
    return NEW.new_state(TASK)


@pytest.mark.parametrize("args, new, old", [
    ({"shop_id": "MB-I99"}, ("Error: Shop MB-I99 does not exist", True), ("Shop does not exist", True)),
    ({"shop_id": ""}, ("Shop ID cannot be empty", True), ("Shop does not exist", True)),
    ({"product_id": "MB-I01-P01"}, (f"Product MB-I01-P01 does not exist in shop {GYM}", True),
     ("Product does not exist", True)),
    ({"product_id": ""}, ("Product ID cannot be empty", True), ("Product does not exist", True)),
    ({"quantity": 2.0}, ("Quantity must be an integer", True), None),
    ({"quantity": "2"}, ("Quantity must be an integer", True),
     ("Error: '>' not supported between instances of 'str' and 'int'", False)),
    ({"quantity": 0}, ("Quantity must be greater than 0", True), ("Quantity must be greater than 0", True)),
])
def test_ordering_a_package_checks_in_the_updated_order(args, new, old):
    args = {"user_id": USER, "shop_id": GYM, "product_id": "MB-I03-P01", **args}
    assert said(call(NEW.new_state(TASK), "create_instore_product_order", **args)) == new
    if old is not None:
        assert said(call(OLD.new_state(TASK), "create_instore_product_order", OLD, **args)) == old


def test_unknown_records_are_answers_and_refusals_name_the_status(db):
    for name, key in (("pay_instore_order", "order_id"), ("instore_cancel_order", "order_id")):
        assert said(call(db, name, **{key: "nope"})) == ("Error: Order nope not found", True)
    for name in ("pay_instore_book", "instore_cancel_book"):
        assert said(call(db, name, book_id="nope")) == ("Error: BookInfo nope not found", True)
    assert said(call(db, "instore_cancel_reservation", reservation_id="nope")) == (
        "Error: ReservationInfo nope not found", True)
    assert said(call(db, "pay_instore_order", order_id=ORDER)) == (
        f"Order {ORDER} is not in `unpaid` status. Current status: paid", True)
    old = OLD.new_state(TASK)
    assert said(call(old, "pay_instore_order", OLD, order_id="nope")) == ("Error: Order nope not found", False)
    assert call(old, "pay_instore_order", OLD, order_id=ORDER).content == f"Order {ORDER} is not in `unpaid` status."
    # the lookups the updated release did not change still fail the call
    assert said(call(db, "search_instore_book", user_id=USER, book_id="nope")) == (
        "Error: BookInfo nope not found", False)


def test_a_paid_booking_names_its_status(db):
    made = call(db, "instore_book", user_id=USER, shop_id=BISTRO, time="2025-04-20 19:00:00", customer_count=2)
    book = next(iter(db.books))
    assert made.content.endswith("customer_count=2, book_price=30.0, status=unpaid")
    assert call(db, "pay_instore_book", book_id=book).content == "Payment successful"
    assert call(db, "pay_instore_book", book_id=book).content == \
        f"BookInfo {book} is not in `unpaid` status. Current status: paid"


@pytest.mark.parametrize("args, new, old", [
    ({"shop_id": SPA}, f"Shop {SPA} does not support table booking", "Shop does not support table booking"),
    ({"shop_id": "MB-I99"}, "Error: Shop MB-I99 does not exist", "Shop does not exist"),
    ({"shop_id": "", "time": ""}, "Shop ID cannot be empty", "Shop does not exist"),
    ({"time": "", "customer_count": 0}, "Table booking time cannot be empty",
     "Number of customers for table booking must be greater than 0"),
    ({"customer_count": 2.0, "time": "tonight"}, "Customer count must be an integer",
     "Table booking time format is incorrect, correct format is %Y-%m-%d %H:%M:%S"),
])
def test_booking_checks_in_the_updated_order(args, new, old):
    args = {"user_id": USER, "shop_id": BISTRO, "time": "2025-04-20 19:00:00", **args}
    out_new = call(NEW.new_state(TASK), "instore_book", **args)
    out_old = call(OLD.new_state(TASK), "instore_book", OLD, **args)
    assert (said(out_new), said(out_old)) == ((new, True), (old, True))


def test_true_is_an_integer_party_of_one(db):
    booked = call(db, "instore_book", user_id=USER, shop_id=BISTRO, time="2025-04-20 19:00:00",
                  customer_count=True)
    assert booked.content.endswith("customer_count=1, book_price=30.0, status=unpaid")


@pytest.mark.parametrize("args, new, old", [
    ({"shop_id": "MB-I99"}, "Error: Shop MB-I99 does not exist", "Shop does not exist"),
    ({"time": ""}, "Reservation time cannot be empty",
     "Reservation time format is incorrect, correct format is %Y-%m-%d %H:%M:%S"),
    ({"customer_count": 1.5}, "Customer count must be an integer", None),
    ({"time": "soon", "customer_count": 0}, "Number of customers for reservation must be greater than 0",
     "Reservation time format is incorrect, correct format is %Y-%m-%d %H:%M:%S"),
])
def test_reserving_checks_in_the_updated_order(args, new, old):
    args = {"user_id": USER, "shop_id": GYM, "time": "2025-04-21 10:00:00", **args}
    assert said(call(NEW.new_state(TASK), "instore_reservation", **args)) == (new, True)
    if old is not None:
        assert said(call(OLD.new_state(TASK), "instore_reservation", OLD, **args)) == (old, True)


def test_a_reservation_change_is_checked_before_the_reservation_is_looked_up(db):
    assert said(call(db, "instore_modify_reservation", reservation_id="nope", time="bad")) == (
        "Reservation time format is incorrect, correct format is %Y-%m-%d %H:%M:%S", True)
    assert said(call(db, "instore_modify_reservation", reservation_id="nope", time="2025-04-21 10:00:00")) == (
        "Error: ReservationInfo nope not found", True)
    assert said(call(db, "instore_modify_reservation", reservation_id=RESERVATION, time="2025-04-21 10:00:00",
                     customer_count="2")) == ("Customer count must be an integer", True)
    old = OLD.new_state(TASK)
    assert said(call(old, "instore_modify_reservation", OLD, reservation_id="nope", time="bad")) == (
        "Error: ReservationInfo nope not found", False)
    moved = call(db, "instore_modify_reservation", reservation_id=RESERVATION, time="2025-04-21 10:00:00")
    assert moved.content.endswith("reservation_time=2025-04-21 10:00:00, customer_id=U910003, "
                                  "customer_count=0, status=unconsumed")
