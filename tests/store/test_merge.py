"""Merging run stores: what it refuses (no input, the output named as an input, an input that
is not there), and a failing input leaving the output as the inputs before it made it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sweepbench.errors import StoreError
from sweepbench.store import merge
from sweepbench.store.damage import DAMAGED_ADVICE
from sweepbench.store.merge import merge_stores
from sweepbench.store.runstore import RunStore
from sweepbench.wire import EpisodeRecord

CONFIG = {"models": ["scripted/oracle"], "trials": 1}


def _start(store: RunStore, run_id: str, key: str) -> None:
    """Run ``run_id`` selects and starts episode ``key``."""
    meta = {"key": key, "label": f"scripted/oracle|vitabench:delivery:en:{key}|0",
            "model": "scripted/oracle", "benchmark": "vitabench", "domain": "delivery",
            "task_id": key, "trial": 0}
    store.begin_run(run_id, CONFIG)
    store.select(run_id, [meta])
    store.episode_started(meta, run_id=run_id)


def _store(path: Path, run_id: str, key: str) -> Path:
    """A store with one run that selected and started one episode, with one event."""
    with RunStore(path) as store:
        _start(store, run_id, key)
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


# ---- which copy of an episode wins, and that it wins whole ---------------------------------

def _copy(path: Path, run_id: str, status: str, tag: str, key: str = "ep-x") -> Path:
    """A store whose one episode ``key`` is ``status`` ("running", "error" or "done"), with a
    journal of rows tagged ``tag`` (one row more when finished) and, when finished, a record
    and a judgment of this copy's own."""
    with RunStore(path) as store:
        _start(store, run_id, key)
        store.event(key, 0, "message", {"from": tag}, run_id=run_id)
        if status != "running":
            store.event(key, 1, "message", {"from": tag}, run_id=run_id)
            store.episode_finished(key, EpisodeRecord(
                run_id=run_id, model="scripted/oracle", benchmark="vitabench",
                domain="delivery", task_id=key, trial=0,
                termination="error" if status == "error" else "user_stop"))
            store.judgment(key, judge="state", method="state", passed=status == "done",
                           score=1.0, details={"from": tag}, run_id=run_id)
    return path


def _episode(path: Path, key: str = "ep-x") -> tuple:
    """(status, record's run, journal's tags, judgments' tags) of ``key`` in ``path``."""
    with RunStore(path, create=False) as store:
        record = store.records([key]).get(key)
        return (store.episode_status()[key], record and record.run_id,
                [e["payload"]["from"] for e in store.events(key)],
                [j["details"]["from"] for j in store.judgments([key])])


@pytest.mark.parametrize("better, worse", [("done", "error"), ("done", "running"),
                                           ("error", "running")])
def test_the_more_finished_copy_wins_whole_whichever_input_brings_it(
        tmp_path: Path, better: str, worse: str) -> None:
    good = _copy(tmp_path / "good.sqlite", "rg", better, "good")
    poor = _copy(tmp_path / "poor.sqlite", "rp", worse, "poor")
    want = (better, "rg", ["good", "good"], ["good"])
    for name, inputs in (("ab.sqlite", [poor, good]), ("ba.sqlite", [good, poor])):
        out = tmp_path / name
        counts = merge_stores(out, inputs)
        assert _episode(out) == want, name
        assert counts == {"runs": 2, "run_episodes": 2, "episodes": 1, "events": 2,
                          "judgments": 1}, name


@pytest.mark.parametrize("status", ["running", "error", "done"])
def test_of_two_copies_as_finished_the_one_merged_first_is_kept(tmp_path: Path,
                                                                 status: str) -> None:
    first = _copy(tmp_path / "first.sqlite", "r1", status, "first")
    second = _copy(tmp_path / "second.sqlite", "r2", status, "second")
    out = tmp_path / "out.sqlite"
    merge_stores(out, [first, second])
    rows = 1 if status == "running" else 2
    assert _episode(out) == (status, None if status == "running" else "r1", ["first"] * rows,
                             [] if status == "running" else ["first"])


def test_a_journal_without_an_episode_row_is_copied_once(tmp_path: Path) -> None:
    """Journal rows of an episode that was never started in its store (written by hand here)
    come along, in order, and a second merge of the same input adds nothing."""
    path = _store(tmp_path / "a.sqlite", "ra", "ep-a")
    with RunStore(path) as store:
        for seq in range(3):
            store.event("ep-orphan", seq, "message", {"from": f"o{seq}"}, run_id="ra")
    out = tmp_path / "out.sqlite"
    assert merge_stores(out, [path]) == {"runs": 1, "run_episodes": 1, "episodes": 1,
                                         "events": 4, "judgments": 0}
    assert merge_stores(out, [path])["events"] == 4
    with RunStore(out, create=False) as store:
        assert [e["payload"]["from"] for e in store.events("ep-orphan")] == ["o0", "o1", "o2"]


class _Checked:
    """A read-only connection double whose quick_check answers ``rows`` or raises ``error``."""

    def __init__(self, rows: list[str] | None = None, error: Exception | None = None) -> None:
        self.rows, self.error, self.sql, self.closed = rows, error, [], False

    def execute(self, sql: str) -> list[tuple[str]]:
        self.sql.append(sql)
        if self.error is not None:
            raise self.error
        return [(r,) for r in self.rows]

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("answer, shown", [
    ({"rows": ["row 3 missing from index a", "page 7: btreeInitPage() returns error code 11"]},
     "row 3 missing from index a; page 7: btreeInitPage() returns error code 11"),
    ({"error": sqlite3.DatabaseError("database disk image is malformed")},
     "database disk image is malformed"),
])
def test_an_input_quick_check_finds_damaged_is_refused_with_sqlites_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: dict, shown: str) -> None:
    """What SQLite's quick_check (three problems at most) says, or its error, joined into the
    refusal; the connection closed either way."""
    path, check = tmp_path / "in.sqlite", _Checked(**answer)
    monkeypatch.setattr(merge, "connect_read_only", lambda p: check if p == path else None)
    with pytest.raises(StoreError) as info:
        merge._check_whole(path)
    assert str(info.value) == (f"merge input: run store {path} is damaged (SQLite: {shown}); "
                               f"{DAMAGED_ADVICE}; nothing was merged")
    assert check.sql == ["PRAGMA quick_check(3)"] and check.closed


def test_an_input_quick_check_finds_whole_is_merged(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    check = _Checked(["ok"])
    monkeypatch.setattr(merge, "connect_read_only", lambda p: check)
    assert merge._check_whole(tmp_path / "in.sqlite") is None
    assert check.closed


def test_what_is_left_out_is_counted_over_every_input(tmp_path: Path) -> None:
    """Two inputs, each with a record that does not decode: both counted."""
    inputs = []
    for name in ("a", "b"):
        path = _copy(tmp_path / f"{name}.sqlite", f"r{name}", "done", name, key=f"ep-{name}")
        with sqlite3.connect(path) as db:
            db.execute("UPDATE episodes SET record = ? WHERE episode_key = ?",
                       (b'{"run_id": "r1", "mod\xff\x00', f"ep-{name}"))
        db.close()
        inputs.append(path)
    out = tmp_path / "out.sqlite"
    assert merge_stores(out, inputs) == {"runs": 2, "run_episodes": 2, "episodes": 2,
                                         "events": 4, "judgments": 0, "records_left_out": 2}
    assert _episode(out, "ep-a")[0] == _episode(out, "ep-b")[0] == "running"
