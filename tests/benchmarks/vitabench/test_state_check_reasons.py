"""What the state check says when it fails (the reason is what a user reads to see why an
episode failed), and the loose ends of its rules: what it does not compare, every problem
reported, null fields, attribute order, unreachable states."""

from __future__ import annotations

import copy

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.oracle import gold_plan
from sweepbench.benchmarks.vitabench.state_check import check_vitabench
from sweepbench.benchmarks.vitabench.tasks import load_tasks

SAMPLES = {t.id: t for domain in ("delivery", "instore", "ota")
           for t in load_tasks((domain,), data_dir=None)}


@pytest.fixture
def gold(run_plan):
    def final(task_id: str) -> dict:
        task = SAMPLES[task_id]
        state, errors = run_plan(task, gold_plan(task))
        assert not errors and check_vitabench(task, state).passed
        return state

    return final


def new_ids(task_id: str, final: dict, table: str = "orders") -> list[str]:
    return [k for k in final[table] if k not in SAMPLES[task_id].environment.get(table, {})]


def expected(task_id: str) -> dict:
    return copy.deepcopy(SAMPLES[task_id].evaluation["expected_states"][0])


def with_states(task_id: str, *states, environment: dict | None = None):
    task = SAMPLES[task_id]
    return msgspec.structs.replace(task, evaluation={"expected_states": list(states)},
                                   environment=environment or task.environment)


def why(task, final) -> str:
    result = check_vitabench(task, final)
    assert result.passed is False
    return result.why


# ---- reasons --------------------------------------------------------------------------------


def test_a_wrong_new_order_is_named_with_its_closest_match_and_every_field(gold) -> None:
    final = gold("SB-D-001")
    (oid,) = new_ids("SB-D-001", final)
    final["orders"][oid].update(order_type="instore", store_id="MB-S03")
    assert why(SAMPLES["SB-D-001"], final) == (
        f"order SB-D-001T01 (closest: {oid}): order_type expected 'delivery', got 'instore', "
        "store_id expected 'MB-S02', got 'MB-S03'")


@pytest.mark.parametrize("task_id, table, kind, time", [("SB-I-002", "books", "booking", "book_time"),
                                                        ("SB-I-001", "reservations", "reservation",
                                                         "reservation_time")])
def test_a_wrong_new_booking_or_reservation_names_each_field(gold, task_id, table, kind, time) -> None:
    final = gold(task_id)
    (rid,) = new_ids(task_id, final, table)
    record = final[table][rid]
    want = next(r for r in expected(task_id)["required_orders"] if r.get(time))
    record.update(shop_id="MB-I09", customer_count=record["customer_count"] + 1,
                  **{time: "2025-04-30 09:00:00"})
    key = "book_id" if table == "books" else "reservation_id"
    assert why(SAMPLES[task_id], final) == (
        f"{kind} {want[key]} (closest: {rid}): shop_id expected {want['shop_id']!r}, got 'MB-I09', "
        f"{time} expected {want[time]!r}, got '2025-04-30 09:00:00', "
        f"customer_count expected {want['customer_count']}, got {want['customer_count'] + 1}")


def test_missing_and_unexpected_records_are_described_by_shop_and_goods(gold) -> None:
    final = gold("SB-O-001")
    (oid,) = new_ids("SB-O-001", final)
    order = final["orders"].pop(oid)
    assert why(SAMPLES["SB-O-001"], final) == "missing order for store RV-H01 (1 x RV-H01-R01 on 2025-05-01)"
    final["orders"][oid] = order
    final["orders"]["OT-EXTRA"] = {**order, "order_id": "OT-EXTRA", "store_id": "RV-H02"}
    assert why(SAMPLES["SB-O-001"], final) == \
        "unexpected order OT-EXTRA (store RV-H02 (1 x RV-H01-R01 on 2025-05-01))"

    final = gold("SB-D-002")
    (oid,) = new_ids("SB-D-002", final)
    del final["orders"][oid]
    assert why(SAMPLES["SB-D-002"], final) == ("missing order for store MB-S03 (1 x MB-S03-P01 "
                                               "[No dressing], 1 x MB-S03-P03 [No ice])")
    final = gold("SB-I-002")
    (bid,) = new_ids("SB-I-002", final, "books")
    del final["books"][bid]
    assert why(SAMPLES["SB-I-002"], final) == "missing booking for shop MB-I02"


def test_product_reasons_name_the_line_and_what_differs(gold) -> None:
    final = gold("SB-D-002")
    (oid,) = new_ids("SB-D-002", final)
    products = final["orders"][oid]["products"]
    products[0]["attributes"] = "Extra   hot, no dressing"
    products += [{**products[1], "product_id": "MB-S03-P09"}, {**products[1], "product_id": "MB-S03-P08"}]
    assert why(SAMPLES["SB-D-002"], final) == (
        f"order SB-D-002T01 (closest: {oid}): products[0].attributes expected 'No dressing', "
        "got 'extra hot, no dressing', products: unexpected MB-S03-P08, MB-S03-P09")

    final = gold("SB-O-001")
    (oid,) = new_ids("SB-O-001", final)
    final["orders"][oid]["products"][0]["date"] = "2025-05-03"
    assert why(SAMPLES["SB-O-001"], final) == (
        f"order SB-O-001T01 (closest: {oid}): products[0].date expected '2025-05-01', got '2025-05-03'")


def test_a_travel_order_not_moved_reports_the_missing_and_the_unexpected_seat(gold) -> None:
    final = gold("SB-O-003")
    final["orders"]["SB-O-003O01"] = copy.deepcopy(SAMPLES["SB-O-003"].environment["orders"]["SB-O-003O01"])
    assert why(SAMPLES["SB-O-003"], final) == (
        "order SB-O-003O01: products[0].product_id FL-MB3101-S03 missing; "
        "order SB-O-003O01: products: unexpected FL-MB3101-S01")


def test_repeated_expected_lines_are_reported_once_and_later_lines_still_checked(gold) -> None:
    final = gold("SB-D-003")
    (oid,) = new_ids("SB-D-003", final)
    state = expected("SB-D-003")
    want = state["required_orders"][0]["products"]  # 3 x P01, 2 x P03, 1 x P02
    want[:1] = [{**want[0], "quantity": 1}, {**want[0], "quantity": 2}]
    have = final["orders"][oid]["products"]
    for p in have:
        p["quantity"] = {"MB-S02-P01": 1, "MB-S02-P03": 5}.get(p["product_id"], p["quantity"])
    assert why(with_states("SB-D-003", state), final) == (
        f"order SB-D-003T01 (closest: {oid}): products[0].quantity expected 3, got 1, "
        "products[2].quantity expected 2, got 5")


def test_the_closest_created_record_is_named_and_the_other_is_unexpected(gold) -> None:
    final = gold("SB-D-001")
    (oid,) = new_ids("SB-D-001", final)
    order = final["orders"].pop(oid)
    final["orders"]["OT-FAR"] = {**order, "order_id": "OT-FAR", "store_id": "MB-S04", "status": "cancelled"}
    final["orders"]["OT-NEAR"] = {**order, "order_id": "OT-NEAR", "status": "cancelled"}
    assert why(SAMPLES["SB-D-001"], final) == (
        "order SB-D-001T01 (closest: OT-NEAR): status expected 'processed' (class paid), "
        "got 'cancelled'; unexpected order OT-FAR (store MB-S04 (1 x MB-S02-P02))")


@pytest.mark.parametrize("which", [0, 1])
def test_a_wrong_order_is_reported_whichever_expected_order_it_was(gold, which) -> None:
    final = gold("SB-D-006")  # two new orders expected
    oid = new_ids("SB-D-006", final)[which]
    final["orders"][oid]["products"][0]["quantity"] += 5
    assert f"(closest: {oid}): products[0].quantity expected" in why(SAMPLES["SB-D-006"], final)


def test_every_missing_order_is_reported(gold) -> None:
    final = gold("SB-D-006")
    for oid in new_ids("SB-D-006", final):
        del final["orders"][oid]
    reasons = sorted(why(SAMPLES["SB-D-006"], final).split("; "))
    assert reasons == ["missing order for store MB-S01 (1 x MB-S01-P01 [Medium spicy], 1 x MB-S01-P03)",
                       "missing order for store MB-S04 (2 x MB-S04-P03)"]


def test_every_problem_is_reported_not_only_the_last(gold) -> None:
    env = copy.deepcopy(SAMPLES["SB-D-004"].environment)
    env["orders"]["SB-H-0002"] = {**env["orders"]["SB-H-0001"], "order_id": "SB-H-0002"}
    task = with_states("SB-D-004", expected("SB-D-004"), environment=env)
    final = gold("SB-D-004")
    final["orders"]["SB-H-0002"] = copy.deepcopy(env["orders"]["SB-H-0002"])
    assert check_vitabench(task, final).passed
    for oid in ("SB-H-0001", "SB-D-004O01", "SB-H-0002"):
        final["orders"][oid]["status"] = "unpaid"
    assert why(task, final) == (
        "order SB-H-0001 should be unchanged: status expected 'delivered' (class paid), got 'unpaid'; "
        "order SB-D-004O01: status expected 'cancelled' (class cancelled), got 'unpaid'; "
        "order SB-H-0002 should be unchanged: status expected 'delivered' (class paid), got 'unpaid'")


def test_a_changed_booking_is_reported_beside_an_order_problem(gold) -> None:
    state = expected("SB-I-004")
    state["required_orders"] = [r for r in state["required_orders"] if r.get("book_id") != "SB-I-004B01"]
    final = gold("SB-I-004")
    (oid,) = new_ids("SB-I-004", final)
    final["orders"][oid]["products"][0]["quantity"] = 2
    reasons = why(with_states("SB-I-004", state), final).split("; ")
    assert reasons[0].startswith(f"order SB-I-004T02 (closest: {oid}): products[0].quantity")
    assert reasons[1] == "booking SB-I-004B01 should be unchanged: status expected 'paid' (class paid), got 'cancelled'"


def test_the_reason_is_that_of_the_expected_state_with_fewest_problems(gold) -> None:
    final = gold("SB-D-001")
    (oid,) = new_ids("SB-D-001", final)
    near = expected("SB-D-001")
    near["required_orders"][0]["status"] = "cancelled"
    far = copy.deepcopy(near)  # two orders expected, ids sorting before the near one's
    far["required_orders"][0]["order_id"] = "SB-D-001T00"
    far["required_orders"].append({**far["required_orders"][0], "order_id": "SB-D-001T00b"})
    reason = (f"order SB-D-001T01 (closest: {oid}): status expected 'cancelled' (class cancelled), "
              "got 'paid'")
    for states in ([far, near], [near, far]):
        assert why(with_states("SB-D-001", *states), final) == reason


# ---- what is not compared, and loose input ---------------------------------------------------


def test_an_empty_expected_note_leaves_the_agents_note_free(gold) -> None:
    final = gold("SB-D-001")
    (oid,) = new_ids("SB-D-001", final)
    final["orders"][oid]["note"] = "ring twice"
    assert check_vitabench(SAMPLES["SB-D-001"], final).passed
    final = gold("SB-D-007")  # names SB-H-0001 with an empty note
    final["orders"]["SB-H-0001"]["note"] = "left at the door"
    assert check_vitabench(SAMPLES["SB-D-007"], final).passed


def test_null_notes_and_times_in_the_final_state_read_as_empty(gold) -> None:
    final = gold("SB-D-001")
    for order in final["orders"].values():
        order.update(note=None, dispatch_time=None, delivery_time=None)
    assert check_vitabench(SAMPLES["SB-D-001"], final).passed


def test_counts_given_as_text_are_read_as_numbers(gold) -> None:
    final = gold("SB-I-002")
    for record in final["books"].values():
        record["customer_count"] = str(record["customer_count"])
    for order in final["orders"].values():
        for p in order["products"]:
            p["quantity"] = str(p["quantity"])
    assert check_vitabench(SAMPLES["SB-I-002"], final).passed


def test_attributes_compare_as_a_set_of_parts_whatever_the_separator(gold) -> None:
    final = gold("SB-D-006")
    oid = next(k for k in new_ids("SB-D-006", final) if final["orders"][k]["store_id"] == "MB-S01")
    final["orders"][oid]["products"][0]["attributes"] = "Medium spicy"
    state = expected("SB-D-006")
    line = state["required_orders"][0]["products"][0]
    for separator in (",", "，", "、", ";", "；"):
        line["attributes"] = f" ,medium SPICY{separator}"
        assert check_vitabench(with_states("SB-D-006", state), final).passed, separator
    line["attributes"] = "Medium, spicy"
    assert not check_vitabench(with_states("SB-D-006", state), final).passed


@pytest.mark.parametrize("table, rid, task_id", [("reservations", "SB-I-003R01", "SB-I-003"),
                                                 ("books", "SB-I-004B01", "SB-I-004")])
def test_an_initial_booking_or_reservation_is_not_judged_on_its_shop(gold, table, rid, task_id) -> None:
    """No tool moves a booking to another shop; its shop is the database's, not the agent's."""
    final = gold(task_id)
    final[table][rid]["shop_id"] = "MB-I09"
    assert check_vitabench(SAMPLES[task_id], final).passed  # named by the expected state
    state = expected(task_id)
    state["required_orders"] = [r for r in state["required_orders"]
                                if rid not in (r.get("book_id"), r.get("reservation_id"))]
    unnamed = copy.deepcopy(final)
    unnamed[table][rid] = {**SAMPLES[task_id].environment[table][rid], "shop_id": "MB-I09"}
    result = check_vitabench(with_states(task_id, state), unnamed)
    assert result.why is None or "shop_id" not in result.why


# ---- no verdict to give -----------------------------------------------------------------------


def test_an_unreachable_expected_state_is_named_as_the_datas_defect(gold) -> None:
    state = expected("SB-D-001")
    state["required_orders"][0]["products"][0]["product_id"] = "MB-S02-P99"
    result = check_vitabench(with_states("SB-D-001", state), gold("SB-D-001"))
    assert result.passed is False
    assert result.unreachable == "product MB-S02-P99 is on no menu of store MB-S02"
    assert result.why.startswith("unreachable expected state (product MB-S02-P99 is on no menu "
                                 "of store MB-S02): order SB-D-001T01 (closest: ")


def test_checks_that_cannot_run_fail_with_their_reason() -> None:
    task = SAMPLES["SB-D-001"]
    cases = [
        (msgspec.structs.replace(task, evaluation={}), {"orders": {}},
         "task has no expected state to check"),
        (task, {"books": {}}, "no final state: the episode ended before one was recorded"),
        (task, [], "no final state: the episode ended before one was recorded"),
    ]
    for t, final, reason in cases:
        assert check_vitabench(t, final) == type(check_vitabench(t, final))(False, reason)
    broken = msgspec.structs.replace(task, environment={**task.environment, "time": "soon"})
    result = check_vitabench(broken, {"orders": {}})
    assert result.passed is False and result.why.startswith("task cannot be checked: ")
    result = check_vitabench(task, {"orders": {"x": {"order_id": 1}}})
    assert result.passed is False and result.why.startswith("final state is malformed: ")
