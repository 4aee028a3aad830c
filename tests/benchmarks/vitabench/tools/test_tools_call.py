"""``sweepbench tools call``: call sequences run from fresh states, references to created
records resolved, one JSON line out per sequence, bad lines named and skipped."""

from __future__ import annotations

import json
from pathlib import Path

from sweepbench.cli import main

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
ORDER = {"user_id": "U900001", "store_id": "MB-S04", "product_ids": ["MB-S04-P01"], "product_cnts": [1],
         "address": "Maplebrook Community Clinic, 40 Elm Street, Old Town, Maplebrook",
         "dispatch_time": "2025-03-14 12:30:00"}


def run(tmp_path, capsys, lines, *extra):
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    code = main(["tools", "call", str(path), *extra])
    captured = capsys.readouterr()
    return code, [json.loads(line) for line in captured.out.splitlines()], captured.err


def test_a_sequence_runs_from_a_fresh_state_with_references_to_what_it_created(tmp_path, capsys):
    seq = {"key": "k1", "domain": "delivery", "lang": "en", "task_id": "SB-D-004", "seq": "ignored", "calls": [
        {"tool": "create_delivery_order", "args": ORDER},
        {"tool": "pay_delivery_order", "args": {"order_id": {"$ref_step": 0}}},
        {"tool": "pay_delivery_order", "args": {"order_id": {"$ref_step": 1}}}]}
    code, (first, again), err = run(tmp_path, capsys, [seq, seq], "--release", "2025-11")
    assert code == 0 and not err and first == again  # each from a fresh state: same ids, same text
    (new,) = first["results"][0]["created"]
    assert first["key"] == "k1" and first["results"][0]["content"].startswith(f"Order(order_id:{new}, ")
    assert [r["content"] for r in first["results"][1:]] == ["Payment successful", "Error: Order MISSING_REF not found"]
    assert [r["error"] for r in first["results"]] == [False, False, True]
    assert [r["created"] for r in first["results"][1:]] == [[], []]
    assert first["final_state"]["orders"][new]["status"] == "paid"
    assert set(first["final_state"]) == {"orders", "books", "reservations"}


def test_a_release_is_named_and_each_call_says_whether_it_was_upstreams_error(tmp_path, capsys):
    seq = {"key": "r", "domain": "delivery", "task_id": "SB-D-004", "calls": [
        {"tool": "pay_delivery_order", "args": {"order_id": "NOPE"}},
        {"tool": "delivery_store_search_recommend", "args": {"keywords": []}},
        {"tool": "delivery_store_search_recommand", "args": {"keywords": ["x"]}}]}
    code, (out,), _ = run(tmp_path, capsys, [seq], "--benchmark", "vitabench@2025-12")
    assert code == 0 and [(r["content"], r["error"]) for r in out["results"]] == [
        ("Error: Order NOPE not found", False), ("Keywords cannot be empty", False),
        ("Error: Tool 'delivery_store_search_recommand' not found.", True)]
    code, (old,), _ = run(tmp_path, capsys, [seq], "--benchmark", "vitabench@2025-11")
    assert [(r["content"], r["error"]) for r in old["results"][:2]] == [
        ("Error: Order NOPE not found", True),
        ("Error: Tool 'delivery_store_search_recommend' not found.", True)]
    assert old["results"][2]["content"].startswith("Store(name=") and old["results"][2]["error"] is False


def test_a_composition_runs_a_cross_domain_task_in_the_merged_environment(tmp_path, capsys):
    seq = {"key": "x", "domain": "delivery,instore,ota", "lang": "zh", "task_id": "C-ZH-002", "calls": [
        {"tool": "get_ota_flight_info", "args": {"flight_id": "LK-F01"}},
        {"tool": "get_delivery_store_info", "args": {"store_id": "LK-S02"}}]}
    code, (out,), _ = run(tmp_path, capsys, [seq], "--data-dir", str(FIXTURES))
    assert code == 0
    assert out["results"][0]["content"].startswith("Flight Info:\nFlight(flight_id=LK-F01, flight_number=LK210")
    assert out["results"][1]["content"].startswith("Store(name=晨光面包房, store_id=LK-S02")


def test_bad_lines_are_named_and_the_rest_still_runs(tmp_path, capsys):
    good = {"key": "ok", "domain": "ota", "task_id": "SB-O-001", "calls": [
        {"tool": "get_ota_hotel_info", "args": {"hotel_id": "RV-H02"}}]}
    code, outs, err = run(tmp_path, capsys, [
        "not json", {"domain": "ota"}, {"domain": "ota", "task_id": "NOPE", "calls": []},
        {"domain": "ota", "task_id": "SB-O-001", "calls": [{"args": {}}]},
        {"domain": "ota", "task_id": "SB-O-001", "calls": [{"tool": "x", "args": {"a": {"$ref_step": 3}}}]},
        {"domain": "cinema", "task_id": "1", "calls": []}, good])
    assert code == 1 and [o["key"] for o in outs] == ["ok"]
    assert outs[0]["results"][0]["content"].startswith("Hotel Info:\nHotel(hotel_id=RV-H02")
    lines = err.replace("\n", " ")
    for number, needle in ((1, "Expecting value"), (2, "missing task_id, calls"), (3, "no task 'NOPE'"),
                           (4, "calls[0] should be an object with a `tool` name"),
                           (5, "calls[0].args: {\"$ref_step\": i} must name an earlier call"),
                           (6, "no built-in VitaBench sample tasks for 'cinema'")):
        assert f"line {number}: {needle}" in lines, (number, err)


def test_the_listing_still_works(capsys):
    assert main(["tools", "--benchmark", "vitabench:ota", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert len(listing["tools"]) == 38 and listing["tools"][0]["name"] == "get_ota_hotel_info"
