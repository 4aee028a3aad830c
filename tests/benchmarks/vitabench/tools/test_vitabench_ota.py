"""The thirty travel tools over the sample world (SB-O-004: a paid two-seat train order)."""

from __future__ import annotations

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS

TASKS = {t.id: t for t in load_tasks(("ota",), data_dir=None)}
TASK = TASKS["SB-O-004"]
KIT = TOOLS.toolkit(TASK)
USER, TRAIN_ORDER = "U920004", "SB-O-004O01"


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


def stock(db, table, seller, product):
    return next(p.quantity for p in getattr(db, table)[seller].products if p.product_id == product)


def test_searches_filter_by_city_and_rank_by_keywords(db):
    hotels = call(db, "hotel_search_recommand", city_name="Riverton", key_words=["budget", "parking"]).value
    assert hotels[0].hotel_id == "RV-H02" and not hasattr(hotels[0], "products")
    assert "No hotels found" in call(db, "hotel_search_recommand", city_name="Zzyzx").content
    assert call(db, "attractions_search_recommend", city_name="Riverton", key_words=["shark"]).value[0] \
        .attraction_id == "RV-A01"
    assert [f.flight_number for f in call(db, "flight_search_recommend", departure="Maplebrook",
                                          destination="Riverton").value] == ["MB3101"]
    assert [t.train_number for t in call(db, "train_ticket_search", departure="Maplebrook",
                                         destination="Riverton", date="2025-05-03").value] == ["G102"]
    assert "No trains" in call(db, "train_ticket_search", departure="Maplebrook", destination="Riverton",
                                date="2025-06-01").content
    refused(db, "train_ticket_search", "not in the format", departure="a", destination="b", date="May 3")


def test_buying_draws_stock_and_a_refusal_changes_nothing(db):
    order = call(db, "create_attraction_order", attraction_id="RV-A01", ticket_id="RV-A01-T01", user_id=USER,
                 date="2025-05-02", quantity=3).value
    assert (order.order_type, order.status, order.total_price, order.products[0].date) == (
        "attraction", "unpaid", 360, "2025-05-02")
    assert order.order_id.startswith("OO") and stock(db, "attractions", "RV-A01", "RV-A01-T01") == 47
    refused(db, "create_attraction_order", "no product RV-A01-T01 on 2025-05-03", attraction_id="RV-A01",
            ticket_id="RV-A01-T01", user_id=USER, date="2025-05-03", quantity=1)
    refused(db, "create_attraction_order", "Insufficient inventory", attraction_id="RV-A02",
            ticket_id="RV-A02-T01", user_id=USER, date="2025-05-02", quantity=21)
    refused(db, "create_hotel_order", "No available rooms", hotel_id="RV-H01", room_id="RV-H01-R03", user_id=USER)
    refused(db, "create_hotel_order", "has no product", hotel_id="RV-H01", room_id="RV-H02-R01", user_id=USER)
    refused(db, "create_flight_order", "greater than 0", flight_id="FL-MB3101", seat_id="FL-MB3101-S01",
            user_id=USER, date="2025-05-01", quantity=-2)
    room = call(db, "create_hotel_order", hotel_id="RV-H02", room_id="RV-H02-R01", user_id=USER).value
    assert room.products[0].quantity == 1 and room.products[0].room_type == "Standard queen room"


def test_pay_and_cancel_check_the_order_type_and_status(db):
    refused(db, "pay_flight_order", "is not a flight order", order_id=TRAIN_ORDER)
    refused(db, "pay_train_order", "must be unpaid", order_id=TRAIN_ORDER)
    assert call(db, "cancel_train_order", order_id=TRAIN_ORDER, user_id=USER).content.endswith("refund amount: 320.0")
    refused(db, "cancel_train_order", "already in cancelled status", order_id=TRAIN_ORDER, user_id=USER)


def test_a_cheaper_date_keeps_the_order_paid_and_moves_the_seats(db):
    out = call(db, "modify_train_order", order_id=TRAIN_ORDER, user_id=USER, new_date="2025-05-03")
    assert out.content == "Modification successful, price difference: -40.0, refunded"
    order = db.orders[TRAIN_ORDER]
    assert (order.status, order.total_price, order.products[0].product_id) == ("paid", 280, "TR-G102-S03")
    assert stock(db, "trains", "TR-G102", "TR-G102-S01") == 42 and stock(db, "trains", "TR-G102", "TR-G102-S03") == 38
    refused(db, "modify_train_order", "does not have Second class seats", order_id=TRAIN_ORDER, user_id=USER,
            new_date="2025-05-09")
    refused(db, "modify_train_order", "Insufficient Second class seats", order_id=TRAIN_ORDER, user_id=USER,
            new_date="2025-05-02")


def test_a_dearer_date_leaves_the_difference_to_pay():
    task = TASKS["SB-O-003"]
    db = TOOLS.new_state(task)
    out = KIT.call(db, "modify_flight_order", msgspec.json.encode(
        {"order_id": "SB-O-003O01", "user_id": "U920003", "new_date": "2025-05-02"}))
    assert "need to pay additional amount: 70" in out.content
    assert db.orders["SB-O-003O01"].status == "unpaid"
    assert KIT.call(db, "pay_flight_order", b'{"order_id": "SB-O-003O01"}').ok


def test_order_searches_and_details(db):
    assert [o.order_id for o in call(db, "search_train_order", user_id=USER).value] == [TRAIN_ORDER]
    assert call(db, "search_train_order", user_id=USER, status="unpaid").content == "No train orders found"
    assert call(db, "search_train_order", user_id=USER, date="2025-05-01", status=None).value[0].order_id == TRAIN_ORDER
    assert call(db, "search_hotel_order", user_id=USER).content == "No hotel orders found"
    assert call(db, "get_train_order_detail", order_id=TRAIN_ORDER).value.store_id == "TR-G102"
    refused(db, "get_hotel_order_detail", "is not a hotel order", order_id=TRAIN_ORDER)
    refused(db, "get_ota_hotel_info", "hotel RV-H09 not found", hotel_id="RV-H09")
    assert len(call(db, "get_ota_flight_info", flight_id="FL-MB3101").value.products) == 4


def test_nearby_finds_venues_of_every_domain_and_geocoding_knows_stations(db):
    near = call(db, "get_nearby", longitude=121.4801, latitude=31.2304, range=1500).value
    assert {getattr(v, "hotel_id", None) or getattr(v, "attraction_id", None) for v in near} == {"RV-H01", "RV-A01"}
    assert call(db, "address_to_longitude_latitude", address="Riverton South Railway Station").value == [121.4297, 31.155]
