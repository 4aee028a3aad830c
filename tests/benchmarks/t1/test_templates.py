"""The 525 templates: Table 4's splits, executable gold, goals that match their gold."""

from __future__ import annotations

import msgspec
import pytest

from sweepbench.benchmarks.t1.data import compose, splits
from sweepbench.benchmarks.t1.data.tasks import catalog_summary, load_tasks
from sweepbench.benchmarks.t1.metrics import reference_outputs
from sweepbench.benchmarks.t1.tools import DOMAIN_TOOLKITS
from sweepbench.errors import TaskError

TABLE4 = {  # split: (templates, tools)
    "attraction": (25, 5), "bar": (25, 5), "cafe": (25, 6), "cruise": (25, 5), "dessert": (25, 8),
    "flight": (25, 5), "food_and_dining": (25, 15), "hotel": (25, 7), "kayak_rental": (25, 6),
    "live_show": (25, 7), "vehicle_rental": (25, 5),
    "attraction+cafe": (20, 11), "attraction+dessert": (20, 13), "food_and_dining+hotel": (20, 22),
    "hotel+vehicle_rental": (20, 12), "live_show+food_and_dining": (20, 22), "vehicle_rental+attraction": (20, 10),
    "attraction+food_and_dining+cafe": (20, 26), "flight+hotel+bar": (20, 17),
    "vehicle_rental+food_and_dining+hotel": (20, 27), "vehicle_rental+hotel+attraction": (20, 17),
    "flight+hotel+vehicle_rental+attraction": (20, 22), "vehicle_rental+hotel+food_and_dining+bar": (20, 32),
    "8-domain": (5, 55), "11-domain": (5, 74),
}
WRITES = {"book": ("book_", "place_"), "order": ("place_",), "status": ("place_",), "modify": ("modify_",),
          "cancel": ("cancel_",)}


def test_table_4(tasks):
    summary = catalog_summary()
    assert summary["total"] == len(tasks) == 525
    assert {name: (v["templates"], v["tools"]) for name, v in summary["splits"].items() if name in TABLE4} == TABLE4
    assert {t: summary["splits"][t]["templates"] for t in ("single", "double", "triple", "quadruple")} == \
        {"single": 275, "double": 120, "triple": 80, "quadruple": 40}
    assert summary["kb"]["restaurants"] == 30167


def test_task_fields(tasks):
    assert len({t.id for t in tasks}) == 525
    for t in tasks:
        split = splits.BY_NAME[t.evaluation["split"]]
        assert t.benchmark == "t1" and t.domain == ",".join(split.domains) and t.lang == "en"
        assert t.max_turns == (50 if split.tier in ("8-domain", "11-domain") else 25)
        assert t.persona["user"]["user_id"] == t.environment["user_id"]
        assert t.instructions.count("\n") >= 2 and t.evaluation["gold_calls"]


def test_goals_that_transact_have_the_call_in_their_gold(tasks):
    for t in tasks:
        gold = [g["tool"] for g in t.evaluation["gold_calls"]]
        for domain, scenario, _ in t.evaluation["journeys"]:
            prefixes = WRITES.get(scenario)
            if prefixes:
                mine = set(DOMAIN_TOOLKITS[domain].tools)
                assert any(g in mine and g.startswith(prefixes) for g in gold), (t.id, domain, scenario)


def test_every_search_the_goal_picks_from_found_something(tasks):
    for t in tasks:
        for g, out in zip(t.evaluation["gold_calls"], reference_outputs(t)):
            assert not out.startswith("Error"), (t.id, g["tool"], out)
            if g["tool"].startswith(("search_", "filter_")):
                assert msgspec.json.decode(out)["total"] > 0, (t.id, g)


def test_goals_name_what_the_gold_picks(tasks):
    for t in tasks:
        for g in t.evaluation["gold_calls"]:
            if g["tool"].startswith(("book_", "place_")):
                picked = [v for k, v in g["arguments"].items() if k.endswith("_id") and k != "user_id"]
                assert all(p in t.instructions for p in picked), (t.id, g)


def test_single_domain_templates_use_every_tool_of_their_domain(tasks):
    for domain, kit in DOMAIN_TOOLKITS.items():
        used = {g["tool"] for t in tasks if t.evaluation["split"] == domain for g in t.evaluation["gold_calls"]}
        assert used == set(kit.tools), (domain, set(kit.tools) - used)


def test_templates_rebuild_identically(kb, tasks):
    users = compose.eligible_users(kb)
    by_id = {t.id: t for t in tasks}
    for split, index in (("bar", 17), ("food_and_dining+hotel", 4), ("11-domain", 2)):
        rebuilt = compose.build_template(kb, kb.seed, splits.BY_NAME[split], index, users)
        assert msgspec.json.encode(rebuilt) == msgspec.json.encode(by_id[rebuilt.id])


@pytest.mark.parametrize("selector,count", [("all", 525), ("", 525), ("single", 275), ("triple", 80),
                                            ("bar", 25), ("hotel,vehicle_rental", 20),
                                            ("vehicle_rental,hotel", 20), ("flight+hotel+bar", 20),
                                            ("8-domain", 5), ("11-domain", 5)])
def test_load_tasks_selectors(tasks, selector, count):
    assert len(load_tasks(selector)) == count


def test_load_tasks_rejects_unknown_splits_and_languages(tasks):
    with pytest.raises(TaskError, match="unknown T1 split"):
        load_tasks("bar,spa")
    with pytest.raises(TaskError, match="English only"):
        load_tasks("bar", lang="zh")
