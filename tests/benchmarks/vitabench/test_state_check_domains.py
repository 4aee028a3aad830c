"""The state check over in-store orders, bookings and reservations and travel orders: gold end
states pass, and every single-field change or dropped record fails with a reason naming it."""

from __future__ import annotations

import copy
from pathlib import Path

import msgspec
import pytest

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.vitabench.oracle import gold_plan
from sweepbench.benchmarks.vitabench.state_check import check_vitabench
from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS
from sweepbench.benchmarks.vitabench.tools.db import status_class

SAMPLES = {t.id: t for domain in ("instore", "ota") for t in load_tasks((domain,), data_dir=None)}
OTHER_CLASS = {"unpaid": "paid", "paid": "cancelled", "cancelled": "unpaid"}
KIND = {"orders": "order", "books": "booking", "reservations": "reservation"}


def line(record):
    return record["products"][0]


def later(value):
    return value[:-8] + ("23:59:59" if value[-8:] != "23:59:59" else "00:00:01")


MUTATIONS = {
    "orders": {
        "store_id": lambda o: o.update(store_id="ELSEWHERE"),
        "product_id": lambda o: line(o).update(product_id="P-SOMETHING-ELSE"),
        "quantity": lambda o: line(o).update(quantity=line(o)["quantity"] + 1),
        "status": lambda o: o.update(status=OTHER_CLASS[status_class(o["status"])]),
        "date": lambda o: line(o).update(date="2031-01-01") if line(o).get("date") else None,
    },
    "books": {
        "shop_id": lambda b: b.update(shop_id="ELSEWHERE"),
        "book_time": lambda b: b.update(book_time=later(b["book_time"])),
        "customer_count": lambda b: b.update(customer_count=b["customer_count"] + 1),
        "status": lambda b: b.update(status=OTHER_CLASS[status_class(b["status"])]),
    },
    "reservations": {
        "shop_id": lambda r: r.update(shop_id="ELSEWHERE"),
        "reservation_time": lambda r: r.update(reservation_time=later(r["reservation_time"])),
        "customer_count": lambda r: r.update(customer_count=r["customer_count"] + 1),
        "status": lambda r: r.update(status=OTHER_CLASS[status_class(r["status"])]),
    },
}
# What a tool can change about an initial record, so what the check compares for one.
CHANGEABLE = {"orders": {"status", "date"}, "books": {"status", "book_time", "customer_count"},
              "reservations": {"status", "reservation_time", "customer_count"}}


def gold_final(task, run_plan):
    final, errors = run_plan(task, gold_plan(task))
    assert not errors, (task.key, errors)
    return final


def mutation_misses(task, final):
    """Every (table, record, field) whose change still passes or whose reason does not name it."""
    misses = []
    start = TOOLS.new_state(task)  # ids as the database files them (a few task files key differently)
    for table, fields in MUTATIONS.items():
        initial = getattr(start, table)
        for rid, record in final[table].items():
            changeable = CHANGEABLE[table] - (
                {"date"} if table == "orders" and record["order_type"] not in ("flight", "train") else set())
            for field, mutate in fields.items():
                if rid in initial and field not in changeable:
                    continue
                mutated = copy.deepcopy(final)
                if mutate(mutated[table][rid]) is None and mutated == final:
                    continue
                result = check_vitabench(task, mutated)
                if result.passed or field not in (result.why or ""):
                    misses.append((task.key, table, rid, field, result.why))
            dropped = copy.deepcopy(final)
            del dropped[table][rid]
            result = check_vitabench(task, dropped)
            expected = "missing from the final state" if rid in initial else f"missing {KIND[table]}"
            if result.passed or expected not in result.why:
                misses.append((task.key, table, rid, "drop", result.why))
        for rid, record in list(final[table].items())[:1]:
            extra = copy.deepcopy(final)
            twin = {**copy.deepcopy(record), next(k for k in record if k.endswith("_id")): "X-EXTRA"}
            extra[table]["X-EXTRA"] = twin
            result = check_vitabench(task, extra)
            if result.passed or f"unexpected {KIND[table]} X-EXTRA" not in result.why:
                misses.append((task.key, table, "X-EXTRA", "extra", result.why))
    return misses


def test_sample_gold_states_pass_and_every_mutation_fails(run_plan):
    for task in SAMPLES.values():
        final = gold_final(task, run_plan)
        assert check_vitabench(task, final).passed, task.id
        assert not mutation_misses(task, final)


def test_every_table_and_travel_kind_is_exercised(run_plan):
    finals = [gold_final(t, run_plan) for t in SAMPLES.values()]
    assert all(any(f[table] for f in finals) for table in MUTATIONS)
    kinds = {o["order_type"] for f in finals for o in f["orders"].values()}
    assert kinds == {"instore", "hotel", "attraction", "flight", "train"}


def test_every_mutation_of_a_real_instore_gold_state_fails(shared_data, run_plan):
    tasks = load_tasks(("instore",), data_dir=shared_data)
    episodes = [(t, run_plan(t, gold_plan(t))[0]) for t in tasks]
    passing = [(t, f) for t, f in episodes if check_vitabench(t, f).passed]
    assert len(passing) == len(tasks) - 2  # 10826019 and 10826031 cannot be reached
    assert not [m for t, f in passing for m in mutation_misses(t, f)]


def test_several_products_in_one_expected_instore_order_are_one_order_each(shared_data, run_plan):
    task = next(t for t in load_tasks(("instore",), data_dir=shared_data) if t.id == "10826012")
    final = gold_final(task, run_plan)
    assert check_vitabench(task, final).passed
    squab = [o for o in final["orders"].values() if o["store_id"].endswith("I00002")]
    assert sorted(line(o)["product_id"][-6:] for o in squab) == ["P00007", "P00009"]
    merged = copy.deepcopy(final)
    first, second = (o["order_id"] for o in squab)
    merged["orders"][first]["products"] += merged["orders"].pop(second)["products"]
    assert not check_vitabench(task, merged).passed


def test_a_moved_travel_order_is_judged_on_its_new_date(run_plan):
    task = SAMPLES["SB-O-003"]
    final = gold_final(task, run_plan)
    order = final["orders"]["SB-O-003O01"]
    assert (line(order)["date"], order["status"]) == ("2025-05-02", "paid")
    unmoved = copy.deepcopy(final)
    unmoved["orders"]["SB-O-003O01"] = task.environment["orders"]["SB-O-003O01"]
    assert "order SB-O-003O01: products[0]" in check_vitabench(task, unmoved).why


def test_other_initial_records_must_stay_as_they_were(run_plan):
    task = SAMPLES["SB-I-004"]
    final = gold_final(task, run_plan)
    for table, rid in (("books", "SB-I-004B01"),):
        changed = copy.deepcopy(final)
        changed[table][rid]["status"] = "paid"
        assert f"booking {rid}: status expected 'cancelled'" in check_vitabench(task, changed).why
    other = msgspec.structs.replace(task, evaluation={"expected_states": [{"required_orders": [
        r for r in task.evaluation["expected_states"][0]["required_orders"] if r.get("book_id") != "SB-I-004B01"]}]})
    result = check_vitabench(other, final)
    assert "booking SB-I-004B01 should be unchanged: status" in result.why


def test_single_domain_tasks_run_on_merged_tools_with_tasks_option(shared_data, run_plan):
    tasks = [t for folder in ("delivery", "instore")
             for t in load_tasks(("delivery", "instore", f"tasks={folder}"), data_dir=shared_data)]
    assert {t.domain for t in tasks} == {"delivery,instore,tasks=delivery", "delivery,instore,tasks=instore"}
    assert len(tasks) == 130 and {len(TOOLS.toolkit(t)) for t in tasks} == {36}
    failed = {}
    for task in tasks:
        final, _errors = run_plan(task, gold_plan(task))
        result = check_vitabench(task, final)
        if not result.passed:
            failed[task.id] = result.unreachable
    assert set(failed) == {"80715001", "10826019", "10826031"} and all(failed.values())


def test_old_final_states_without_bookings_still_check(run_plan):
    task = SAMPLES["SB-O-001"]
    final = gold_final(task, run_plan)
    assert check_vitabench(task, {"orders": final["orders"]}).passed


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"  # upstream-format cross-domain and travel files


@pytest.mark.parametrize("domains, lang", [(("delivery", "instore", "ota"), "en"),
                                           (("delivery", "instore", "ota"), "zh"),
                                           (("ota",), "en"), (("ota",), "zh")])
def test_cross_domain_and_travel_files_reach_their_states_on_their_environment(run_plan, domains, lang):
    tasks = load_tasks(domains, data_dir=FIXTURES, lang=lang)
    assert len(tasks) == 2
    for task in tasks:
        kit = TOOLS.toolkit(task)
        assert len(kit) == (66 if len(domains) == 3 else 38)
        assert list(kit.tools)[0] == ("longitude_latitude_to_distance" if len(domains) == 3 else "get_ota_hotel_info")
        final, errors = run_plan(task, gold_plan(task))
        assert check_vitabench(task, final).passed, task.key
        assert errors in ([], ["Error: Shop LK-I20 does not exist"])  # the slip, see below
        for oid, order in final["orders"].items():
            if oid in task.environment["orders"]:
                continue
            wrong = copy.deepcopy(final)
            wrong["orders"][oid]["products"][0]["quantity"] += 1
            assert not check_vitabench(task, wrong).passed, (task.key, oid)


def test_a_cross_domain_task_needs_every_domain_it_was_written_for(run_plan):
    """C-EN-002 buys a flight: in a delivery and in-store environment the travel tools are not
    there (upstream's text for an unknown tool), so its expected state cannot be reached."""
    task = next(t for t in load_tasks(("delivery", "instore"), data_dir=FIXTURES) if t.id == "C-EN-002")
    final, _ = run_plan(task, gold_plan(task))
    result = check_vitabench(task, final)
    assert not result.passed and "missing order for store LK-F01" in result.why
    state = TOOLS.new_state(task)
    assert TOOLS.toolkit(task).call(state, "get_ota_flight_info", '{"flight_id": "LK-F01"}').content == \
        "Error: Tool 'get_ota_flight_info' not found."


def test_a_shop_filed_under_another_key_is_still_reserved_by_that_key(run_plan):
    """The fixture's spa is filed under LK-I02 with the id LK-I20, a slip kept on purpose: the
    shop search fails as upstream's does, the reservation by key works."""
    november = registry.get("vitabench@2025-11")  # the updated release skips such a shop
    task = next(t for t in november.load_tasks(("delivery", "instore", "ota"), data_dir=FIXTURES,
                                               lang="en") if t.id == "C-EN-001")
    state, kit = TOOLS.new_state(task), TOOLS.toolkit(task)
    assert kit.call(state, "instore_shop_search_recommend", '{"keywords": ["spa"]}').content == \
        "Error: Shop LK-I20 does not exist"
    final, errors = run_plan(task, gold_plan(task))  # its look at the shop is that search
    assert errors == ["Error: Shop LK-I20 does not exist"] and check_vitabench(task, final).passed
    assert any(r["shop_id"] == "LK-I02" for r in final["reservations"].values())
