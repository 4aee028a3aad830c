"""The travel tools in the updated release (upstream 742e240's ``domains/ota/tools.py``; no
golden traces cover them), over the sample world SB-O-001 and variants of it: the renamed hotel
search, the new argument checks, ``Error: ...`` answers that are not errors, searches' failures
answered ``Error searching ...``, refusals naming the order, seller, date, stock and status,
``No ... orders found`` for empty order searches; each beside the November release's answer."""

from __future__ import annotations

import copy
import json

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import RELEASE_TOOLS

from .support import said

TASK = next(t for t in load_tasks(("ota",), data_dir=None) if t.id == "SB-O-001")
NEW, OLD = RELEASE_TOOLS["2025-12"], RELEASE_TOOLS["2025-11"]
USER, NOW = "U920001", "2025-04-25 20:00:00"


@pytest.fixture
def db():
    return NEW.new_state(TASK)


def call(db, name, tools=NEW, task=TASK, **args):
    return tools.toolkit(task).call(db, name, json.dumps(args))


def made(db, name, tools=NEW, **args):
    before = set(db.orders)
    assert call(db, name, tools, **args).ok
    return next(k for k in db.orders if k not in before)


def test_the_hotel_search_is_renamed_and_wants_keywords(db):
    hotels = call(db, "hotel_search_recommend", city_name="Riverton", key_words=["pool"]).content
    assert [h.split(",")[0] for h in hotels.split("\n")] == ["Hotel(hotel_id=RV-H01", "Hotel(hotel_id=RV-H02"]
    assert said(call(db, "hotel_search_recommand", city_name="Riverton")) == (
        "Error: Tool 'hotel_search_recommand' not found.", False)
    assert said(call(db, "hotel_search_recommend", city_name="Riverton")) == (
        "Error searching hotels: Keywords cannot be empty", True)
    assert said(call(db, "hotel_search_recommend", city_name="Riverton", key_words=[])) == (
        "Error searching hotels: Keywords cannot be empty", True)
    assert said(call(db, "hotel_search_recommend", city_name="Riverton", key_words=[" "])) == (
        "All key words must be non-empty strings", True)
    assert said(call(db, "hotel_search_recommend", city_name="Riverton", key_words="pool")) == (
        "Key words must be a list", True)
    assert said(call(db, "hotel_search_recommend", city_name=5)) == ("City name must be a string", True)
    assert said(call(db, "hotel_search_recommend", city_name="")) == ("City name cannot be empty", True)
    assert call(db, "hotel_search_recommend", city_name="Zzqx", key_words=["pool"]).content == \
        "No hotels found matching the criteria."
    old = OLD.new_state(TASK)
    assert call(old, "hotel_search_recommand", OLD, city_name="Zzqx", key_words=["pool"]).content == \
        "No hotels found matching the criteria. Please check if the city name is correct and try again."


def test_attraction_and_flight_searches_check_their_arguments(db):
    assert said(call(db, "attractions_search_recommend", city_name="Riverton", key_words=[])) == (
        "Key words cannot be empty", True)
    assert said(call(db, "attractions_search_recommend", city_name="Riverton", key_words=["a", 2])) == (
        "All key words must be non-empty strings", True)
    assert call(db, "attractions_search_recommend", city_name="Qqq", key_words=["a"]).content == \
        "No attractions found matching the criteria."
    assert said(call(db, "flight_search_recommend", departure="X", destination=["Y"])) == (
        "Destination city must be a string", True)
    assert call(db, "flight_search_recommend", departure="X", destination="Y").content == (
        "No flights found matching the criteria. Please check if the departure and destination "
        "cities are correct.")


def test_a_seller_filed_under_another_key_is_an_answer_not_an_error():
    hotels = copy.deepcopy(TASK.environment["hotels"])
    hotels["ALIAS"] = {**hotels["RV-H02"], "hotel_id": "RV-H02-ID"}
    task = msgspec.structs.replace(TASK, environment={**TASK.environment, "hotels": hotels})
    args = {"city_name": "Riverton", "key_words": ["pool"]}
    assert said(call(NEW.new_state(task), "hotel_search_recommend", task=task, **args)) == (
        "Error searching hotels: 'RV-H02-ID'", True)
    assert said(call(OLD.new_state(task), "hotel_search_recommand", OLD, task, **args)) == (
        "Error: 'RV-H02-ID'", False)


def test_a_hotel_order_needs_a_room_the_hotel_has(db):
    assert said(call(db, "create_hotel_order", hotel_id="RV-H01", room_id="NOROOM", user_id=USER)) == (
        "Room NOROOM not found in hotel RV-H01", True)
    assert said(call(db, "create_hotel_order", hotel_id="RV-H01", room_id="", user_id=USER)) == (
        "Room ID cannot be empty", True)
    assert said(call(db, "create_hotel_order", hotel_id="RV-H01", room_id="RV-H01-R03", user_id=USER)) == (
        "No available rooms at the moment for room RV-H01-R03", True)
    assert said(call(db, "create_hotel_order", hotel_id="RV-H09", room_id="x", user_id=USER)) == (
        "Error: hotel RV-H09 not found", True)
    assert not db.orders
    old = OLD.new_state(TASK)
    assert call(old, "create_hotel_order", OLD, hotel_id="RV-H01", room_id="NOROOM", user_id=USER).content.endswith(
        "status:unpaid, products:[])")


@pytest.mark.parametrize("args, new, old", [
    ({"date": ""}, "Date cannot be empty",
     "The attraction does not have the specified ticket on the specified date"),
    ({"quantity": 2.0}, "Quantity must be an integer", None),
    ({"date": "2025/05/02"}, "Date format is incorrect, correct format is %Y-%m-%d",
     "The attraction does not have the specified ticket on the specified date"),
    ({"date": "2025-05-03"}, "The attraction RV-A01 does not have ticket RV-A01-T01 on date 2025-05-03",
     "The attraction does not have the specified ticket on the specified date"),
    ({"quantity": 51}, ("Insufficient ticket inventory for the specified date 2025-05-02. Available: 50, "
                        "Requested: 51"), "Insufficient ticket inventory for the specified date"),
    ({"attraction_id": "NOPE"}, "Error: attraction NOPE not found", None),
])
def test_buying_tickets_names_what_is_missing(args, new, old):
    args = {"attraction_id": "RV-A01", "ticket_id": "RV-A01-T01", "user_id": USER, "date": "2025-05-02",
            "quantity": 2, **args}
    assert said(call(NEW.new_state(TASK), "create_attraction_order", **args)) == (new, True)
    if old is not None:
        assert said(call(OLD.new_state(TASK), "create_attraction_order", OLD, **args)) == (old, True)


def test_seats_name_the_flight_or_train(db):
    assert call(db, "create_flight_order", flight_id="FL-MB3101", seat_id="FL-MB3101-S02", user_id=USER,
                date="2025-05-01", quantity=3).content == (
        "Insufficient seat inventory for the specified date 2025-05-01. Available: 2, Requested: 3")
    assert call(db, "create_train_order", train_id="TR-G102", seat_id="TR-G102-S01", user_id=USER,
                date="2025-05-02", quantity=1).content == \
        "The train TR-G102 does not have seat TR-G102-S01 on date 2025-05-02"
    assert said(call(db, "create_train_order", train_id="TR-NOPE", seat_id="S", user_id=USER,
                     date="2025-05-01", quantity=1)) == ("Error: train TR-NOPE not found", True)


def test_paying_checks_the_kind_and_names_the_status(db):
    order_id = made(db, "create_hotel_order", hotel_id="RV-H01", room_id="RV-H01-R01", user_id=USER)
    assert call(db, "pay_flight_order", order_id=order_id).content == f"Order {order_id} is not a flight order"
    assert call(db, "pay_hotel_order", order_id=order_id).content == "Payment successful"
    assert call(db, "pay_hotel_order", order_id=order_id).content == \
        "Order status must be unpaid. Current status: paid"
    assert said(call(db, "pay_train_order", order_id="NOPE")) == ("Error: Order NOPE not found", True)
    old = OLD.new_state(TASK)
    old_id = made(old, "create_hotel_order", OLD, hotel_id="RV-H01", room_id="RV-H01-R01", user_id=USER)
    assert call(old, "pay_flight_order", OLD, order_id=old_id).content == "Payment successful"
    assert said(call(old, "pay_train_order", OLD, order_id="NOPE")) == ("Error: Order NOPE not found", False)


def test_order_searches_say_when_nothing_matches(db):
    assert said(call(db, "search_hotel_order", user_id=USER)) == (
        f"No hotel orders found for user {USER} with status paid", True)
    assert call(db, "search_train_order", user_id=USER, date="2025-05-01", status=None).content == \
        f"No train orders found for user {USER} on date 2025-05-01"
    old = OLD.new_state(TASK)
    assert said(call(old, "search_hotel_order", OLD, user_id=USER)) == (
        "Error: User does not exist or has no order records", False)
    assert said(call(old, "search_train_order", OLD, user_id=USER)) == ("", True)


def test_details_and_cancellations_name_the_order(db):
    order_id = made(db, "create_attraction_order", attraction_id="RV-A01", ticket_id="RV-A01-T02",
                    user_id=USER, date="2025-05-02", quantity=3)
    assert call(db, "get_train_order_detail", order_id=order_id).content == \
        f"Order {order_id} is not a train order"
    assert said(call(db, "get_hotel_order_detail", order_id="NOPE")) == ("Error: Order NOPE not found", True)
    assert call(db, "cancel_hotel_order", order_id=order_id, user_id=USER).content == \
        f"Order {order_id} is not a hotel order"
    assert call(db, "cancel_attraction_order", order_id=order_id, user_id=USER).content == \
        "Cancellation successful, refund amount: 0"
    assert call(db, "cancel_attraction_order", order_id=order_id, user_id=USER).content == \
        f"Order {order_id} is already cancelled"
    old = OLD.new_state(TASK)
    old_id = made(old, "create_attraction_order", OLD, attraction_id="RV-A01", ticket_id="RV-A01-T02",
                  user_id=USER, date="2025-05-02", quantity=3)
    assert call(old, "get_train_order_detail", OLD, order_id=old_id).content == "Order type is not a train order"
    call(old, "cancel_attraction_order", OLD, order_id=old_id, user_id=USER)
    assert call(old, "cancel_attraction_order", OLD, order_id=old_id, user_id=USER).content == \
        "Order is already in cancelled status"


def test_moving_a_train_names_the_stock_and_rewords_the_result(db):
    order_id = made(db, "create_train_order", train_id="TR-G102", seat_id="TR-G102-S01", user_id=USER,
                    date="2025-05-01", quantity=2)
    move = {"order_id": order_id, "user_id": USER}
    assert call(db, "modify_train_order", **move, new_date="2025-05-03").content == \
        "Only paid orders can be modified. Current status: unpaid"
    call(db, "pay_train_order", order_id=order_id)
    assert call(db, "modify_train_order", **move, new_date="2025-05-02").content == \
        "Insufficient Second class seat inventory for new date 2025-05-02. Available: 0, Required: 2"
    assert call(db, "modify_train_order", **move, new_date="2025-05-03").content == \
        "Modification successful, price difference: -40.0, refunded."
    assert call(db, "modify_flight_order", **move, new_date="2025-05-03").content == \
        f"Order {order_id} is not a flight order"
    assert db.orders[order_id].update_time == NOW


def test_moving_a_flight_keeps_the_november_result_texts(db):
    order_id = made(db, "create_flight_order", flight_id="FL-MB3101", seat_id="FL-MB3101-S01", user_id=USER,
                    date="2025-05-01", quantity=2)
    call(db, "pay_flight_order", order_id=order_id)
    assert call(db, "modify_flight_order", order_id=order_id, user_id=USER, new_date="2025-05-02").content == \
        "Modification successful, need to pay additional amount: 140.0, please pay as soon as possible"
    assert call(db, "modify_flight_order", order_id=order_id, user_id=USER, new_date="2025-05-01").content == \
        "Only paid orders can be modified. Current status: unpaid"


def test_orders_of_the_task_file_name_their_owner_and_seller():
    line = {"product_id": "X", "price": 160, "quantity": 1, "date": "2025-05-01", "seat_type": "Second class"}
    orders = {oid: {"order_id": oid, "order_type": "train", "user_id": user, "store_id": store,
                    "total_price": 160, "create_time": "2025-04-20 11:00:00", "status": "paid",
                    "products": [line]}
              for oid, user, store in (("T2", USER, "TR-GONE"), ("T3", "U777", "TR-G102"))}
    task = msgspec.structs.replace(TASK, environment={**TASK.environment, "orders": orders})
    db = NEW.new_state(task)
    move = {"user_id": USER, "new_date": "2025-05-03"}
    assert said(call(db, "modify_train_order", task=task, order_id="T2", **move)) == (
        "Error: train TR-GONE not found", True)
    assert call(db, "modify_train_order", task=task, order_id="T3", **move).content == \
        f"Order T3 does not belong to user {USER}"
    assert call(db, "cancel_train_order", task=task, order_id="T3", user_id=USER).content == \
        f"Order T3 does not belong to user {USER}"
    old = OLD.new_state(task)
    assert said(call(old, "modify_train_order", OLD, task, order_id="T2", **move)) == ("Error: 'TR-GONE'", False)
    assert call(old, "cancel_train_order", OLD, task, order_id="T3", user_id=USER).content == \
        "Cancellation successful, refund amount: 160.0"
