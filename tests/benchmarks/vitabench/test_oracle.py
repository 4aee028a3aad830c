"""The VitaBench gold plan reaches every reachable expected state; a corrupted step never does."""

from __future__ import annotations

import json
import random

import pytest

from sweepbench.benchmarks.vitabench.oracle import corrupt, gold_plan
from sweepbench.benchmarks.vitabench.state_check import check_vitabench
from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS

SAMPLES = {t.id: t for t in load_tasks(("delivery",), data_dir=None)}
OTHER_SAMPLES = [*load_tasks(("instore",), data_dir=None), *load_tasks(("ota",), data_dir=None)]
# Published tasks whose expected state no tool calls can reach, and the product that is missing.
UNREACHABLE = {"80715001": "S75401753354131701_P99357"}  # ordered product is on no store's menu


def real_tasks(shared_data):
    return [t for lang in ("en", "zh") for t in load_tasks(("delivery",), data_dir=shared_data, lang=lang)]


def test_gold_plan_reaches_every_sample_state(run_plan):
    for task in SAMPLES.values():
        final, errors = run_plan(task, gold_plan(task))
        result = check_vitabench(task, final)
        assert not errors and result.passed, (task.id, errors, result.why)


def test_gold_plan_reaches_every_real_state_in_both_languages(shared_data, run_plan):
    failures = {}
    for task in real_tasks(shared_data):
        final, errors = run_plan(task, gold_plan(task))
        result = check_vitabench(task, final)
        if task.id in UNREACHABLE:
            assert not result.passed and UNREACHABLE[task.id] in errors[0]
        elif errors or not result.passed:
            failures[task.key] = (errors, result.why)
    assert not failures


def test_new_orders_are_paid_through_the_id_their_creation_returns():
    task = SAMPLES["SB-D-002"]
    plan = gold_plan(task)
    assert [s.tool for s in plan] == [
        "get_delivery_store_info", "create_delivery_order", "pay_delivery_order"]
    create = plan[1].arguments
    assert (create["dispatch_time"], create["attributes"], create["note"]) == (
        "2025-03-14 12:10:00", ["No dressing", "No ice"], "Peanut allergy: no nuts please")
    # ids are a function of the user and the creation count: the plan knows the one it will get
    order_id = plan[2].arguments["order_id"]
    kit, state = TOOLS.toolkit(task), TOOLS.new_state(task)
    created = kit.call(state, "create_delivery_order", json.dumps(create))
    assert created.content.startswith(f"Order(order_id:{order_id}, order_type:delivery,")
    assert kit.call(state, "pay_delivery_order", json.dumps(plan[2].arguments)).content == "Payment successful"


def test_unpaid_orders_are_left_unpaid_and_initial_orders_are_settled_by_id():
    assert [s.tool for s in gold_plan(SAMPLES["SB-D-006"])] == [
        "get_delivery_store_info", "create_delivery_order", "pay_delivery_order",
        "get_delivery_store_info", "create_delivery_order"]
    cancel = gold_plan(SAMPLES["SB-D-004"])
    assert [(s.tool, s.arguments) for s in cancel] == [
        ("get_delivery_order_detail", {"order_id": "SB-D-004O01"}),
        ("cancel_delivery_order", {"order_id": "SB-D-004O01"})]
    modify = gold_plan(SAMPLES["SB-D-005"])[1]
    assert (modify.tool, modify.arguments["note"]) == (
        "modify_delivery_order", "Please leave it with the security desk")


def corrupted_runs(tasks, run_plan):
    """(task key, step, seed, check result) for every step of every gold plan, corrupted."""
    for task in tasks:
        plan = gold_plan(task)
        for i, step in enumerate(plan):
            for seed in (0, 1):
                spoiled = corrupt(step, random.Random(seed), task)
                final, _ = run_plan(task, plan[:i] + [spoiled] + plan[i + 1:])
                yield task.key, i, seed, check_vitabench(task, final)


def test_corrupting_any_sample_step_fails_the_check(run_plan):
    passed = [run[:3] for run in corrupted_runs(SAMPLES.values(), run_plan) if run[3].passed]
    assert not passed


def test_corrupting_any_real_step_fails_the_check(shared_data, run_plan):
    tasks = [t for t in real_tasks(shared_data) if t.id not in UNREACHABLE]
    passed = [run[:3] for run in corrupted_runs(tasks, run_plan) if run[3].passed]
    assert not passed


@pytest.mark.parametrize("step", range(3))
def test_corruption_is_a_function_of_the_rng(step):
    task = SAMPLES["SB-D-003"]
    plan_step = gold_plan(task)[step]
    assert corrupt(plan_step, random.Random(7), task) == corrupt(plan_step, random.Random(7), task)
    assert corrupt(plan_step, random.Random(7), task) != plan_step


def test_gold_plan_reaches_every_instore_and_travel_sample_state(run_plan):
    for task in OTHER_SAMPLES:
        final, errors = run_plan(task, gold_plan(task))
        result = check_vitabench(task, final)
        assert not errors and result.passed, (task.id, errors, result.why)


def test_gold_plan_reaches_every_reachable_real_instore_state(shared_data, run_plan):
    failures = {}
    for task in load_tasks(("instore",), data_dir=shared_data):
        final, _errors = run_plan(task, gold_plan(task))
        result = check_vitabench(task, final)
        if not result.passed:
            failures[task.id] = result.unreachable
    assert set(failures) == {"10826019", "10826031"} and all(failures.values())


def test_travel_plans_re_date_then_pay_the_difference():
    plan = gold_plan(next(t for t in OTHER_SAMPLES if t.id == "SB-O-003"))
    assert [(s.tool, s.arguments.get("new_date")) for s in plan] == [
        ("get_flight_order_detail", None), ("modify_flight_order", "2025-05-02"), ("pay_flight_order", None)]
    cheaper = gold_plan(next(t for t in OTHER_SAMPLES if t.id == "SB-O-004"))
    assert [s.tool for s in cheaper][:2] == ["get_train_order_detail", "modify_train_order"]
    assert "pay_train_order" not in [s.tool for s in cheaper[:3]]


def test_bookings_are_paid_only_when_they_cost_something():
    fee = [s.tool for s in gold_plan(next(t for t in OTHER_SAMPLES if t.id == "SB-I-002"))]
    free = [s.tool for s in gold_plan(next(t for t in OTHER_SAMPLES if t.id == "SB-I-004"))]
    assert fee[-2:] == ["instore_book", "pay_instore_book"] and free[-1] == "instore_book"
    assert free[:2] == ["search_instore_book", "instore_cancel_book"]


def test_corrupting_any_instore_or_travel_step_fails_the_check(run_plan):
    passed = [run[:3] for run in corrupted_runs(OTHER_SAMPLES, run_plan) if run[3].passed]
    assert not passed


def test_corrupting_any_real_instore_step_fails_the_check(shared_data, run_plan):
    tasks = [t for t in load_tasks(("instore",), data_dir=shared_data) if t.id not in ("10826019", "10826031")]
    passed = [run[:3] for run in corrupted_runs(tasks, run_plan) if run[3].passed]
    assert not passed
