"""Expected states over every kind of record, and the repairs of the published slips they need."""

from __future__ import annotations

import copy

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools.db import Database
from sweepbench.benchmarks.vitabench.tools.expected import expected_states
from sweepbench.errors import TaskError

SAMPLES = {t.id: t for domain in ("instore", "ota") for t in load_tasks((domain,), data_dir=None)}
TASK = SAMPLES["SB-I-003"]


def with_required(task, records):
    return msgspec.structs.replace(task, evaluation={"expected_states": [{"required_orders": records}]})


def states(task):
    return expected_states(task, Database.from_task(task))


def test_records_are_sorted_into_orders_bookings_and_reservations_and_tied_to_initial_ones():
    state, = states(TASK)
    assert [(e.order.order_id, e.initial_id) for e in state.required] == [
        ("SB-I-003O01", "SB-I-003O01"), ("SB-I-003T01", None)]
    assert [(e.reservation.reservation_id, e.initial_id) for e in state.reservations] == [("SB-I-003R01", "SB-I-003R01")]
    assert state.books == []


def test_a_booking_filed_as_a_reservation_is_a_booking_and_times_get_their_seconds():
    slip = {"reservation_id": "X1", "shop_id": "MB-I02", "book_time": "2025-04-20 19:00", "customer_id": "U910003",
            "customer_count": 2, "book_price": 30, "status": "paid", "update_time": ""}
    short = {"reservation_id": "X2", "shop_id": "MB-I01", "reservation_time": "2025-04-21 10:30",
             "customer_id": "U910003", "customer_count": 1, "status": "paid", "update_time": ""}
    state, = states(with_required(TASK, [slip, short]))
    assert [(b.book.book_id, b.book.book_time, b.initial_id) for b in state.books] == [("X1", "2025-04-20 19:00:00", None)]
    assert [r.reservation.reservation_time for r in state.reservations] == ["2025-04-21 10:30:00"]


def test_a_new_instore_order_of_several_products_is_expected_as_one_order_per_product():
    order = copy.deepcopy(TASK.evaluation["expected_states"][0]["required_orders"][2])
    order["products"] = [{"product_id": "MB-I03-P01", "price": 58, "quantity": 2},
                         {"product_id": "MB-I03-P02", "price": 98, "quantity": 1}]
    state, = states(with_required(TASK, [order]))
    assert [([p.product_id for p in e.order.products], e.order.total_price) for e in state.required] == [
        (["MB-I03-P01"], 116), (["MB-I03-P02"], 98)]


def test_a_record_of_no_known_kind_is_a_task_error():
    with pytest.raises(TaskError, match=r"required_orders\[0\] is neither an order, a booking nor a reservation"):
        states(with_required(TASK, [{"shop_id": "MB-I01"}]))


def test_catalogues_take_ids_from_their_keys_and_bad_ones_name_the_field():
    task = SAMPLES["SB-O-001"]
    hotels = copy.deepcopy(task.environment["hotels"])
    hotels["RV-H01"]["hotel_id"] = "TYPO"
    env = {**task.environment, "hotels": hotels}
    assert Database.from_task(msgspec.structs.replace(task, environment=env)).hotels["RV-H01"].hotel_id == "RV-H01"
    hotels["RV-H01"]["products"][0]["price"] = "cheap"
    with pytest.raises(TaskError, match=r"environment\.hotels\.RV-H01"):
        Database.from_task(msgspec.structs.replace(task, environment=env))
