"""The typed view of a task's data (what the oracle and the check reason over), its repairs,
and how expected orders tie to initial ones."""

from __future__ import annotations

import copy
import typing

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools.db import (
    STATUS_CLASS,
    Database,
    OrderStatus,
    Store,
)
from sweepbench.benchmarks.vitabench.tools.expected import expected_states
from sweepbench.errors import TaskError

TASK = next(t for t in load_tasks(("delivery",), data_dir=None) if t.id == "SB-D-004")
ORDER = TASK.environment["orders"]["SB-D-004O01"]


def with_env(**changes):
    return msgspec.structs.replace(TASK, environment={**copy.deepcopy(TASK.environment), **changes})


def with_expected(required, optional=()):
    states = [{"required_orders": required, "optional_orders": list(optional)}]
    return msgspec.structs.replace(TASK, evaluation={"expected_states": states})


def order(**changes):
    return {**copy.deepcopy(ORDER), **changes}


def test_builds_a_typed_database_in_the_task_language():
    db = Database.from_task(msgspec.structs.replace(TASK, lang="zh"))
    assert isinstance(db.stores["MB-S01"], Store) and db.stores["MB-S01"].products[0].price == 32.0
    assert (db.time, db.user_id, db.lang) == ("2025-03-14 12:15:00", "U900001", "zh")
    assert db.orders["SB-D-004O01"].products[0].attributes == "Regular portion"


def test_repairs_the_published_slips_in_orders():
    raw = order(products=[
        {"product_id": "MB-S01-P02", "price": "24.00", "quantity": 1, "attribute": "Large portion"},
        {"product_id": "MB-S01-P03", "price": 8, "quantity": 1, "attributes": ["a", "b"]}])
    db = Database.from_task(with_env(orders={"SB-D-004O01": raw}))
    products = db.orders["SB-D-004O01"].products
    assert [(p.price, p.attributes) for p in products] == [(24.0, "Large portion"), (8.0, "a, b")]


def test_a_store_is_known_by_the_key_it_is_filed_under():
    stores = copy.deepcopy(TASK.environment["stores"])
    stores["MB-S01"]["store_id"] = "MB-S01-TYPO"
    assert Database.from_task(with_env(stores=stores)).stores["MB-S01"].store_id == "MB-S01"


@pytest.mark.parametrize("changes, field", [
    ({"time": "14/03/2025 12:15"}, "environment.time"),
    ({"time": None}, "environment.time"),
    ({"user_id": ""}, "environment.user_id"),
    ({"stores": {"MB-S01": {"store_id": "MB-S01", "name": "x", "score": "high", "location": None}}},
     "environment.stores.MB-S01.score"),
    ({"orders": []}, "environment.orders is not an object"),
    ({"orders": {"a": order(products=[{"product_id": "p", "quantity": "many"}])}},
     "environment.orders[0].products[0].quantity"),
    ({"weather": [{"city": "Maplebrook", "datetime": "March 14"}]}, "environment.weather[0].datetime"),
])
def test_a_bad_environment_names_the_task_and_the_field(changes, field):
    with pytest.raises(TaskError) as err:
        Database.from_task(with_env(**changes))
    assert "SB-D-004" in str(err.value) and field in str(err.value)


def test_an_order_is_known_by_the_key_it_is_filed_under():
    """As the tools know it (upstream looks records up by key): in-store task 10826054 files
    order 10826054S001 under 10826035S001."""
    db = Database.from_task(with_env(orders={"KEY-1": order(order_id="FIELD-1")}))
    assert list(db.orders) == ["KEY-1"] and db.orders["KEY-1"].order_id == "KEY-1"


def test_every_status_has_a_class():
    assert set(STATUS_CLASS) == set(typing.get_args(OrderStatus))
    assert set(STATUS_CLASS.values()) == {"unpaid", "paid", "cancelled"}


def ties(task):
    db = Database.from_task(task)
    state = expected_states(task, db.orders)[0]
    return [(e.order.order_id, e.initial_id) for e in state.required], state.replaced


def test_an_expected_order_with_an_initial_id_and_its_goods_is_that_order():
    assert ties(with_expected([order(status="cancelled")])) == ([("SB-D-004O01", "SB-D-004O01")], [])


def test_attribute_text_does_not_break_the_tie():
    """The English files translate one order's attributes differently in its two copies."""
    changed = order(products=[{**ORDER["products"][0], "attributes": "Normal portion"}])
    assert ties(with_expected([changed])) == ([("SB-D-004O01", "SB-D-004O01")], [])


def test_same_id_store_and_creation_time_is_the_order_even_with_other_goods():
    changed = order(products=[{**ORDER["products"][0], "quantity": 5}])
    assert ties(with_expected([changed])) == ([("SB-D-004O01", "SB-D-004O01")], [])


def test_other_goods_and_a_later_creation_time_make_a_replacement():
    changed = order(products=[{**ORDER["products"][0], "quantity": 5}], create_time="2025-03-14 12:20:00")
    assert ties(with_expected([changed])) == ([("SB-D-004O01", None)], ["SB-D-004O01"])


def test_an_initial_order_under_another_id_is_found_by_goods_and_creation_time():
    renamed = order(order_id="SB-D-004T02", status="cancelled")
    replacement = order(store_id="MB-S04", create_time="2025-03-14 12:20:00")
    assert ties(with_expected([replacement, renamed])) == (
        [("SB-D-004O01", None), ("SB-D-004T02", "SB-D-004O01")], [])


def test_orders_pasted_into_a_products_list_are_lifted_out():
    nested = order(order_id="N1", store_id="MB-S04", create_time="2025-03-14 12:20:00")
    outer = order(products=[*ORDER["products"], nested])
    assert ties(with_expected([outer]))[0] == [("SB-D-004O01", "SB-D-004O01"), ("N1", None)]


@pytest.mark.parametrize("evaluation, field", [
    ({"expected_states": {"required_orders": []}}, "expected_states is not a list"),
    ({"expected_states": [{"required_orders": [{"order_id": "x"}]}]},
     "evaluation_criteria.expected_states[0].required_orders"),
    ({"expected_states": [{"optional_orders": "none"}]}, "expected_states[0].optional_orders is not a list"),
])
def test_a_bad_expected_state_names_the_task_and_the_field(evaluation, field):
    with pytest.raises(TaskError) as err:
        expected_states(msgspec.structs.replace(TASK, evaluation=evaluation), {})
    assert "SB-D-004" in str(err.value) and field in str(err.value)
