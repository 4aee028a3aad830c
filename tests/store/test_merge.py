"""Merging run stores: what it refuses (no input, the output named as an input, an input that
is not there), and a failing input leaving the output as the inputs before it made it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sweepbench.errors import StoreError
from sweepbench.store import merge
from sweepbench.store.merge import merge_stores
from sweepbench.store.runstore import RunStore

CONFIG = {"models": ["scripted/oracle"], "trials": 1}


def _store(path: Path, run_id: str, key: str) -> Path:
    """A store with one run that selected and started one episode, with one event."""
    meta = {"key": key, "label": f"scripted/oracle|vitabench:delivery:en:{key}|0",
            "model": "scripted/oracle", "benchmark": "vitabench", "domain": "delivery",
            "task_id": key, "trial": 0}
    with RunStore(path) as store:
        store.begin_run(run_id, CONFIG)
        store.select(run_id, [meta])
        store.episode_started(meta, run_id=run_id)
        store.event(key, 0, "model_call", {"n": 1}, run_id=run_id)
    return path


def _rows(path: Path) -> dict[str, list[str]]:
    db = sqlite3.connect(path)
    try:
        return {"runs": [r for (r,) in db.execute("SELECT run_id FROM runs ORDER BY run_id")],
                "episodes": [k for (k,) in db.execute(
                    "SELECT episode_key FROM episodes ORDER BY episode_key")],
                "events": [k for (k,) in db.execute(
                    "SELECT episode_key FROM events ORDER BY episode_key")]}
    finally:
        db.close()


def test_merge_without_inputs_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as info:
        merge_stores(tmp_path / "out.sqlite", [])
    assert str(info.value) == "merge needs at least one input store"
    assert not (tmp_path / "out.sqlite").exists()


def test_the_output_named_as_an_input_is_refused_by_its_name(tmp_path: Path) -> None:
    out = _store(tmp_path / "out.sqlite", "r", "ep-a")
    same = tmp_path / "." / "out.sqlite"
    with pytest.raises(StoreError) as info:
        merge_stores(out, [same])
    assert str(info.value) == f"{same} is the output store; name another output"


def test_a_missing_input_is_refused_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "missing.sqlite"
    with pytest.raises(StoreError) as info:
        merge_stores(tmp_path / "out.sqlite", [missing])
    assert str(info.value) == (f"merge input: run store {missing} does not exist; nothing was "
                               "merged")
    assert not missing.exists() and not (tmp_path / "out.sqlite").exists()


def test_an_input_failing_midway_leaves_the_output_as_the_inputs_before_it_made_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = _store(tmp_path / "a.sqlite", "ra", "ep-a")
    b = _store(tmp_path / "b.sqlite", "rb", "ep-b")
    out = tmp_path / "out.sqlite"
    real, calls = merge._merge_one, []

    def fails_on_the_second_input(db: sqlite3.Connection) -> dict[str, int]:
        left = real(db)  # everything of the input is written, then the merge fails
        calls.append(db)
        if len(calls) == 2:
            raise RuntimeError("disk gone")
        return left

    monkeypatch.setattr(merge, "_merge_one", fails_on_the_second_input)
    with pytest.raises(RuntimeError, match="^disk gone$"):
        merge_stores(out, [a, b])
    assert _rows(out) == {"runs": ["ra"], "episodes": ["ep-a"], "events": ["ep-a"]}
    monkeypatch.undo()
    assert merge_stores(out, [b]) == {"runs": 2, "run_episodes": 2, "episodes": 2, "events": 2,
                                      "judgments": 0}
    assert _rows(out) == {"runs": ["ra", "rb"], "episodes": ["ep-a", "ep-b"],
                          "events": ["ep-a", "ep-b"]}
