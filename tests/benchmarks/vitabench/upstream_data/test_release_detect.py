"""Each file's word on the release, and the decision over all of them."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from sweepbench.benchmarks.vitabench.release import RELEASES
from sweepbench.benchmarks.vitabench.upstream_data import release_detect
from sweepbench.benchmarks.vitabench.upstream_data.release_detect import (
    RELEASE_TASK_FILES,
    Signal,
    commit_signal,
    decide,
    git_blob_id,
    names_signal,
    task_file_signal,
)
from sweepbench.errors import ReleaseError, ReleaseMixError

OLD, NEW = frozenset({"2025-11"}), frozenset({"2025-12"})


def test_every_release_has_its_task_files_and_facts():
    assert set(RELEASE_TASK_FILES) == set(RELEASES) == set(release_detect._STORE_QUANTITY)
    assert sorted(RELEASE_TASK_FILES["2025-11"]) == sorted(RELEASE_TASK_FILES["2025-12"])


def test_a_blob_id_is_the_one_git_gives():
    assert git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"
    assert git_blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_blob_id_agrees_with_git_hash_object():
    data = "任务 tasks\r\n\x00".encode()
    assert git_blob_id(data) == subprocess.run(
        ["git", "hash-object", "--stdin"], input=data, capture_output=True, check=True
    ).stdout.decode().strip()


def test_a_commit_speaks_only_when_it_is_a_release_commit():
    assert commit_signal("742e240" + "a" * 33) == Signal(".git HEAD", NEW, "commit 742e240")
    assert commit_signal("b0850e5" + "a" * 33) is None
    assert commit_signal(None) is None


def test_tool_names_tell_the_release_and_both_spellings_fit_none():
    assert names_signal("f", {"hotel_search_recommand", "get_x"}) == Signal(
        "f", OLD, "names hotel_search_recommand")
    assert names_signal("f", {"delivery_store_search_recommend"}).fits == NEW
    assert names_signal("f", {"hotel_search_recommand", "hotel_search_recommend"}).fits == set()
    assert names_signal("f", {"hotel_search_recommand",
                              "delivery_store_search_recommend"}).fits == set()
    assert names_signal("f", {"instore_shop_search_recommend"}) is None


def _tasks(*quantities):
    products = [{"product_id": f"P{i}", **({} if q is None else {"quantity": q})}
                for i, q in enumerate(quantities)]
    return [{"id": "T1", "environment": {"stores": {"S1": {"products": products}}}}]


def test_delivery_store_quantities_tell_the_release_of_an_unknown_task_file():
    sig = task_file_signal("a/b.json", "delivery/tasks.json", b"x", _tasks(None, None))
    assert sig == Signal("a/b.json", OLD, "store products without a quantity")
    assert task_file_signal("f", "delivery/tasks_en.json", b"x", _tasks(9999, 5)).fits == NEW
    assert task_file_signal("f", "delivery/tasks.json", b"x", _tasks(9999, None)) == Signal(
        "f", frozenset(), "1 of 2 store products with a quantity")
    assert task_file_signal("f", "delivery/tasks.json", b"x", [{"id": 1}]) is None
    assert task_file_signal("f", "ota/tasks.json", b"x", _tasks(None)) is None


def test_a_task_file_identical_to_a_releases_own_is_that_release(monkeypatch):
    blob = git_blob_id(b"[]")
    monkeypatch.setitem(RELEASE_TASK_FILES, "2025-12",
                        {**RELEASE_TASK_FILES["2025-12"], "ota/tasks.json": blob})
    assert task_file_signal("f", "ota/tasks.json", b"[]", []) == Signal(
        "f", NEW, f"the release's own ota/tasks.json, git blob {blob[:7]}")
    assert task_file_signal("f", "ota/tasks_en.json", b"[]", []) is None


def test_the_decision_is_the_release_every_signal_fits():
    both = frozenset(RELEASES)
    decision = decide("S", [Signal("a", both, "shared"), Signal("b", NEW, "new")], notes=["n"])
    assert (decision.release, decision.matched_by, decision.evidence) == (
        "2025-12", "content", ["a: shared -> 2025-11, 2025-12", "b: new -> 2025-12", "n"])
    assert decide("S", [Signal(".git HEAD", OLD, "commit 96f3b85")]).matched_by == "commit"
    with pytest.raises(ReleaseMixError) as err:
        decide("S", [Signal("a", OLD, "x"), Signal("b", NEW, "y"), Signal("c", frozenset(), "z")])
    assert str(err.value) == ("S: files of different VitaBench releases: 2025-11: a (x); "
                              "2025-12: b (y); no release: c (z)")
    with pytest.raises(ReleaseError) as err:
        decide("S", [])
    assert str(err.value) == ("S: these files fit VitaBench releases 2025-11 and 2025-12 alike "
                              "(no file tells); name the release")
    assert decide("S", [Signal("a", both, "x")], named="2025-11").matched_by == "name"
