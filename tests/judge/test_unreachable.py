"""Expected states no tool sequence can reach are detected from the data, not listed by hand."""

from __future__ import annotations

from sweepbench.datasets.catalog import load_tasks
from sweepbench.datasets.vitabench import load_tasks as load_vitabench
from sweepbench.judge.state_check import check_vitabench, unreachable


def test_samples_are_all_reachable():
    assert all(unreachable(t) is None for t in load_tasks("vitabench:delivery"))


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
