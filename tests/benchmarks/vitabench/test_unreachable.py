"""Expected states no tool sequence can reach are detected from the data, not listed by hand."""

from __future__ import annotations

import msgspec

from sweepbench.benchmarks.catalog import load_tasks
from sweepbench.benchmarks.vitabench.state_check import check_vitabench, unreachable
from sweepbench.benchmarks.vitabench.tasks import load_tasks as load_vitabench


def test_samples_are_all_reachable():
    assert all(unreachable(t) is None for t in load_tasks("vitabench:delivery,instore,ota"))


def test_real_instore_tasks_have_two_unreachable_tasks_found_from_the_data(shared_data):
    tasks = load_vitabench(("instore",), data_dir=shared_data)
    found = {t.id: unreachable(t) for t in tasks if unreachable(t)}
    assert found == {
        "10826019": "product S17564420278251374_P00001 is not sold by shop S17564420278251374_I00002",
        "10826031": "shop S17564424237133476_I00003 takes no table bookings",
    }


def test_travel_and_instore_defects_are_named():
    ota = next(t for t in load_tasks("vitabench:ota") if t.id == "SB-O-001")
    state = ota.evaluation["expected_states"][0]
    sold_out = {**state, "required_orders": [{**state["required_orders"][0], "store_id": "RV-H01", "products": [
        {"product_id": "RV-H01-R03", "price": 480, "quantity": 1, "date": "2025-05-01"}]}]}
    wrong_day = {**state, "required_orders": [{**state["required_orders"][0], "products": [
        {"product_id": "RV-H01-R01", "price": 620, "quantity": 1, "date": "2025-06-01"}]}]}
    assert "(0 left)" in unreachable(msgspec.structs.replace(ota, evaluation={"expected_states": [sold_out]}))
    assert "on 2025-06-01 is not sold" in unreachable(
        msgspec.structs.replace(ota, evaluation={"expected_states": [wrong_day]}))
    assert unreachable(msgspec.structs.replace(ota, evaluation={"expected_states": [wrong_day, state]})) is None
    instore = next(t for t in load_tasks("vitabench:instore") if t.id == "SB-I-001")
    state = instore.evaluation["expected_states"][0]
    unpaid = {**state, "required_orders": [{**state["required_orders"][1], "status": "unpaid"}]}
    assert "cannot be unpaid" in unreachable(msgspec.structs.replace(instore, evaluation={"expected_states": [unpaid]}))


def test_real_delivery_tasks_have_exactly_one_unreachable_task(shared_data):
    for lang in ("en", "zh"):
        tasks = load_vitabench(("delivery",), data_dir=shared_data, lang=lang)
        found = {t.id: unreachable(t) for t in tasks if unreachable(t)}
        assert list(found) == ["80715001"]
        assert "S75401753354131701_P99357 is on no menu" in found["80715001"]
        task = next(t for t in tasks if t.id == "80715001")
        result = check_vitabench(task, {"orders": task.environment["orders"]})
        assert not result.passed and result.unreachable and result.why.startswith("unreachable")


def test_a_reachable_failure_is_not_blamed_on_the_data():
    task = next(t for t in load_tasks("vitabench:delivery") if t.id == "SB-D-001")
    result = check_vitabench(task, {"orders": task.environment["orders"]})
    assert not result.passed and result.unreachable is None
