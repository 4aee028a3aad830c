"""State-check rules that single-field mutations of gold states do not reach: orders the agent
should have left alone, quantities of repeated product lines, one-to-one matching of new
orders."""

from __future__ import annotations

import copy

import msgspec

from sweepbench.benchmarks.vitabench.oracle import gold_plan
from sweepbench.benchmarks.vitabench.state_check import check_vitabench
from sweepbench.benchmarks.vitabench.tasks import load_tasks

SAMPLES = {t.id: t for domain in ("delivery", "ota") for t in load_tasks((domain,), data_dir=None)}


def gold_final(task, run_plan):
    final, errors = run_plan(task, gold_plan(task))
    assert not errors, errors
    assert check_vitabench(task, final).passed
    return final


def with_states(task, *states):
    return msgspec.structs.replace(task, evaluation={"expected_states": list(states)})


def created(task, final):
    return [oid for oid in final["orders"] if oid not in task.environment.get("orders", {})]


def test_a_travel_order_left_alone_must_keep_its_products(run_plan):
    task = SAMPLES["SB-O-006"]  # a flight bought; here the train order SB-O-006O01 is left alone
    final = gold_final(task, run_plan)
    final["orders"]["SB-O-006O01"] = copy.deepcopy(task.environment["orders"]["SB-O-006O01"])
    state = copy.deepcopy(task.evaluation["expected_states"][0])
    state["required_orders"] = [o for o in state["required_orders"] if o.get("order_id") != "SB-O-006O01"]
    unnamed = with_states(task, state)
    assert check_vitabench(unnamed, final).passed
    for field, value in (("date", "2025-05-09"), ("product_id", "TR-G102-S02"), ("quantity", 3)):
        moved = copy.deepcopy(final)
        moved["orders"]["SB-O-006O01"]["products"][0][field] = value
        why = check_vitabench(unnamed, moved).why
        assert why and why.startswith("order SB-O-006O01 should be unchanged: products"), (field, why)
    both = copy.deepcopy(final)
    both["orders"]["SB-O-006O01"]["status"] = "cancelled"
    both["orders"]["SB-O-006O01"]["products"][0]["date"] = "2025-05-09"
    why = check_vitabench(unnamed, both).why
    assert why.startswith("order SB-O-006O01 should be unchanged: status expected 'paid'") and \
        "order SB-O-006O01 should be unchanged: products[0].date" in why


def test_a_delivery_order_left_alone_is_not_judged_on_its_products(run_plan):
    """Only travel orders can have their products changed by a tool; for other orders the
    recorded products are not compared (upstream data often lists them loosely)."""
    task = SAMPLES["SB-D-001"]
    final = gold_final(task, run_plan)
    final["orders"]["SB-H-0001"]["products"][0]["quantity"] = 7
    assert check_vitabench(task, final).passed


def test_quantities_of_repeated_product_lines_are_summed(run_plan):
    task = SAMPLES["SB-D-003"]  # expects 3 x MB-S02-P01 in one line
    final = gold_final(task, run_plan)
    (oid,) = created(task, final)
    products = final["orders"][oid]["products"]
    i = next(k for k, p in enumerate(products) if p["product_id"] == "MB-S02-P01")
    assert products[i]["quantity"] == 3
    split = copy.deepcopy(final)
    line = split["orders"][oid]["products"][i]
    split["orders"][oid]["products"][i:i + 1] = [{**line, "quantity": 2}, {**line, "quantity": 1}]
    assert check_vitabench(task, split).passed
    short = copy.deepcopy(final)
    short["orders"][oid]["products"][i:i + 1] = [{**line, "quantity": 2}, {**line, "quantity": 2}]
    assert "quantity expected 3, got 4" in check_vitabench(task, short).why
    # and the same summing on the expected side
    state = copy.deepcopy(task.evaluation["expected_states"][0])
    want = state["required_orders"][0]["products"]
    j = next(k for k, p in enumerate(want) if p["product_id"] == "MB-S02-P01")
    want[j:j + 1] = [{**want[j], "quantity": 1}, {**want[j], "quantity": 2}]
    assert check_vitabench(with_states(task, state), final).passed


def test_new_orders_are_matched_one_to_one_at_best_not_first_come(run_plan):
    """Two expected orders, one strict (a note) and one loose (no note, so any note): the two
    created orders fit them only one way round, whichever comes first."""
    task = SAMPLES["SB-D-001"]
    final = gold_final(task, run_plan)
    (oid,) = created(task, final)
    state = copy.deepcopy(task.evaluation["expected_states"][0])
    (loose,) = state["required_orders"]
    loose["note"] = ""
    strict = {**copy.deepcopy(loose), "order_id": loose["order_id"] + "-B", "note": "ring twice"}
    for required in ([loose, strict], [strict, loose]):
        for first_noted in (True, False):
            both = copy.deepcopy(final)
            order = both["orders"].pop(oid)
            noted = {**order, "order_id": oid + "-N", "note": "ring twice"}
            plain = {**order, "order_id": oid + "-P", "note": ""}
            pair = (noted, plain) if first_noted else (plain, noted)
            both["orders"].update({o["order_id"]: o for o in pair})
            result = check_vitabench(with_states(task, {**state, "required_orders": required}), both)
            assert result.passed, (required[0]["note"], first_noted, result.why)
    one_noted_too_few = copy.deepcopy(final)
    one_noted_too_few["orders"][oid + "-P"] = {**final["orders"][oid], "order_id": oid + "-P", "note": ""}
    result = check_vitabench(with_states(task, {**state, "required_orders": [loose, strict]}),
                             one_noted_too_few)
    assert not result.passed and "note expected 'ring twice'" in result.why
