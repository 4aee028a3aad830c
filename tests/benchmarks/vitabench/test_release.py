"""A VitaBench release is chosen by name: ``vitabench@2025-11`` / ``vitabench@2025-12``, each an
object of its own that names itself (and so its tasks) with its release."""

from __future__ import annotations

import pytest

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.catalog import BenchmarkSpec, load_tasks
from sweepbench.benchmarks.vitabench.release import CURRENT, RELEASES, release, releases_naming
from sweepbench.errors import ConfigError, TaskError


def test_each_release_is_one_object_named_after_it():
    old, new = registry.get("vitabench@2025-11"), registry.get("vitabench@2025-12")
    assert (old.name, old.release, new.name, new.release) == (
        "vitabench@2025-11", "2025-11", "vitabench@2025-12", "2025-12")
    assert registry.get("vitabench@2025-11") is old
    assert old.rules is RELEASES["2025-11"] and new.rules is RELEASES["2025-12"]


def test_the_rules_differ_where_upstream_changed_them():
    old, new = RELEASES["2025-11"], RELEASES["2025-12"]
    assert old.search_top_k == {"delivery": 100, "instore": 1000, "ota": 100}
    assert new.search_top_k == {"delivery": 50, "instore": 50, "ota": 50}
    assert old.tool_renames == {} and new.tool_renames["hotel_search_recommand"] == \
        "hotel_search_recommend"
    assert (old.commit, new.commit, CURRENT) == ("96f3b85", "742e240", "2025-12")
    assert release(None) is new


def test_a_spec_names_the_release_and_its_tasks_carry_it():
    spec = BenchmarkSpec.parse(" VitaBench@2025-11:delivery ")
    assert (spec.benchmark, spec.domains, str(spec)) == (
        "vitabench@2025-11", ("delivery",), "vitabench@2025-11:delivery")
    task = load_tasks(spec)[0]
    assert task.benchmark == "vitabench@2025-11"
    assert task.key.startswith("vitabench@2025-11:delivery:en:")


def test_an_unknown_release_or_a_benchmark_without_releases_is_a_clear_error():
    with pytest.raises(ConfigError, match="unknown VitaBench release '1999'; known: 2025-11, 2025-12"):
        BenchmarkSpec.parse("vitabench@1999:delivery")
    with pytest.raises(TaskError, match="t1 has no releases to choose from"):
        BenchmarkSpec.parse("t1@2025-11")
    with pytest.raises(TaskError, match="unknown benchmark 'nope@2025-11'"):
        BenchmarkSpec.parse("nope@2025-11")


def test_a_renamed_tools_spelling_tells_the_release_and_other_names_fit_both():
    assert releases_naming({"delivery_store_search_recommand", "get_user_info"}) == ["2025-11"]
    assert releases_naming({"hotel_search_recommend"}) == ["2025-12"]
    assert releases_naming({"get_user_info"}) == ["2025-11", "2025-12"]
    assert releases_naming({"hotel_search_recommend", "hotel_search_recommand"}) == []
