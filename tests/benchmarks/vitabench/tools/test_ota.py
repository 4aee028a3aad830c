"""The thirty travel tools over the sample world (SB-O-001: hotels, attractions, a flight, a
train): upstream's texts and its stock and order changes."""

from __future__ import annotations

import json

import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS

TASKS = {t.id: t for t in load_tasks(("ota",), data_dir=None)}
TASK = TASKS["SB-O-001"]
KIT = TOOLS.toolkit(TASK)
USER, NOW = "U920001", "2025-04-25 20:00:00"


@pytest.fixture
def db():
    return TOOLS.new_state(TASK)


def call(db, name, **args):
    return KIT.call(db, name, json.dumps(args))


def make(db, name, **args):
    before = set(TOOLS.record_ids(db))
    out = call(db, name, **args)
    return out, next((r for r in TOOLS.record_ids(db) if r not in before), None)


def test_info_prints_the_seller_with_its_products_and_unknown_ones_are_no_tool_error(db):
    hotel = call(db, "get_ota_hotel_info", hotel_id="RV-H01").content.split("\n")
    assert hotel[0].startswith("Hotel Info:") and hotel[1].startswith(
        "Hotel(hotel_id=RV-H01, hotel_name=Riverton Grand Riverside Hotel, score=4.7, star_rating=5, "
        "location=address='1 Embankment Road, Central District, Riverton' longitude=121.4801 latitude=31.2304, ")
    assert hotel[-1] == "HotelProduct(room_type=Twin room, date=2025-05-01, price=480.0, quantity=0, room_id=RV-H01-R03))"
    unknown = call(db, "get_ota_train_info", train_id="NOPE")
    assert (unknown.content, unknown.ok) == ("Error: train NOPE not found", True)
    assert call(db, "get_ota_hotel_info", hotel_id="").content == "Hotel ID cannot be empty"


def test_searches(db):
    hotels = call(db, "hotel_search_recommand", city_name="Riverton", key_words=["pool"]).content.split("\n")
    assert [h.split(",")[0] for h in hotels] == ["Hotel(hotel_id=RV-H01", "Hotel(hotel_id=RV-H02"]
    assert call(db, "hotel_search_recommand", city_name="Atlantis").content == \
        call(db, "hotel_search_recommand", city_name="Riverton").content  # the city filter is lenient
    sights = call(db, "attractions_search_recommend", city_name="Riverton", key_words=["aquarium"]).content
    assert sights.split("\n")[0].endswith("opening_hours=09:00-18:00, ")
    assert call(db, "flight_search_recommend", departure="X", destination="Y").content == \
        "No flights found matching the criteria"
    trains = call(db, "train_ticket_search", departure="Maplebrook", destination="Riverton", date="2025-05-01")
    assert len(trains.content.split("\n")) == 2  # one line per seat product on that date, as upstream
    assert call(db, "train_ticket_search", departure="a", destination="b", date="2025/05/01").content == \
        "Date format is incorrect, correct format is %Y-%m-%d"


def test_hotel_orders_take_one_room_and_an_unknown_room_makes_an_empty_order(db):
    out, oid = make(db, "create_hotel_order", hotel_id="RV-H01", room_id="RV-H01-R01", user_id=USER)
    assert out.content == (
        f"Order(order_id:{oid}, order_type:hotel, user_id:{USER}, hotel_id:RV-H01, total_price:620.0, "
        f"create_time:{NOW}, update_time:{NOW}, status:unpaid, products:[HotelProduct(room_type=Deluxe king "
        "room, date=2025-05-01, price=620.0, quantity=1, room_id=RV-H01-R01)])")
    assert db.hotels["RV-H01"].products[0].quantity == 2
    empty, eid = make(db, "create_hotel_order", hotel_id="RV-H01", room_id="NOROOM", user_id=USER)
    assert empty.content.endswith("total_price:0.0, create_time:2025-04-25 20:00:00, update_time:2025-04-25 "
                                  "20:00:00, status:unpaid, products:[])") and eid
    assert call(db, "create_hotel_order", hotel_id="RV-H01", room_id="RV-H01-R03", user_id=USER).content == \
        "No available rooms at the moment"
    missing = call(db, "create_hotel_order", hotel_id="RV-H09", room_id="x", user_id=USER)
    assert (missing.content, missing.ok) == ("Error: hotel RV-H09 not found", False)


def test_pay_search_detail_and_cancel_without_restocking(db):
    _, oid = make(db, "create_hotel_order", hotel_id="RV-H01", room_id="RV-H01-R01", user_id=USER)
    assert call(db, "pay_flight_order", order_id=oid).content == "Payment successful"  # any kind, as upstream
    assert call(db, "pay_hotel_order", order_id=oid).content == "Order status must be unpaid"
    listed = call(db, "search_hotel_order", user_id=USER, date="2025-05-01").content
    assert listed.startswith(f"Order(order_id:{oid}, ") and listed.endswith("status:paid, ")
    assert call(db, "search_hotel_order", user_id=USER, status="unpaid").content == ""
    assert call(db, "get_flight_order_detail", order_id=oid).content == "Order type is not a flight order"
    assert call(db, "cancel_hotel_order", order_id=oid, user_id=USER).content == \
        "Cancellation successful, refund amount: 620.0"
    assert call(db, "cancel_hotel_order", order_id=oid, user_id=USER).content == \
        "Order is already in cancelled status"
    assert db.hotels["RV-H01"].products[0].quantity == 2


def test_a_user_without_hotel_orders_cannot_search_them(db):
    out = call(db, "search_hotel_order", user_id=USER)
    assert (out.content, out.ok) == ("Error: User does not exist or has no order records", False)
    assert call(db, "search_flight_order", user_id=USER).content == ""


def test_tickets_and_seats_draw_stock_and_cancelling_an_unpaid_order_refunds_an_int_zero(db):
    out, oid = make(db, "create_attraction_order", attraction_id="RV-A01", ticket_id="RV-A01-T01",
                    user_id=USER, date="2025-05-02", quantity=2)
    assert "total_price:240.0" in out.content and db.attractions["RV-A01"].products[0].quantity == 48
    assert call(db, "create_attraction_order", attraction_id="RV-A01", ticket_id="RV-A01-T01", user_id=USER,
                date="2099-01-01", quantity=2).content == \
        "The attraction does not have the specified ticket on the specified date"
    assert call(db, "create_attraction_order", attraction_id="RV-A01", ticket_id="RV-A01-T01", user_id=USER,
                date="2025-05-02", quantity=9999).content == "Insufficient ticket inventory for the specified date"
    assert call(db, "cancel_attraction_order", order_id=oid, user_id=USER).content == \
        "Cancellation successful, refund amount: 0"


def test_a_flight_moves_only_once_paid_and_a_dearer_date_leaves_it_unpaid(db):
    _, oid = make(db, "create_flight_order", flight_id="FL-MB3101", seat_id="FL-MB3101-S01", user_id=USER,
                  date="2025-05-01", quantity=1)
    move = {"order_id": oid, "user_id": USER, "new_date": "2025-05-02"}
    assert call(db, "modify_flight_order", **move).content == "Only paid orders can be modified"
    call(db, "pay_flight_order", order_id=oid)
    assert call(db, "modify_flight_order", **move).content == \
        "Modification successful, need to pay additional amount: 70.0, please pay as soon as possible"
    seats = {p.product_id: p.quantity for p in db.flights["FL-MB3101"].products}
    assert (seats["FL-MB3101-S01"], seats["FL-MB3101-S03"]) == (9, 8)
    detail = call(db, "get_flight_order_detail", order_id=oid).content
    assert "total_price:610.0" in detail and "status:unpaid" in detail and "seat_id=FL-MB3101-S03" in detail
    assert TOOLS.final_state(db)["orders"][oid]["products"] == [
        {"product_id": "FL-MB3101-S03", "price": 610.0, "quantity": 1, "attributes": "", "date": "2025-05-02"}]


def test_unknown_orders_are_errors(db):
    for name, args in (("pay_train_order", {}), ("cancel_train_order", {"user_id": USER}),
                       ("modify_train_order", {"user_id": USER, "new_date": "2025-05-01"})):
        out = call(db, name, order_id="NOPE", **args)
        assert (out.content, out.ok) == ("Error: Order NOPE not found", False), name
