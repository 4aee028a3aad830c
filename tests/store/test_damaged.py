"""Damaged stores: a record or journal row that does not decode is left out and listed, and
report, export, view and merge go on around it (a record is stored as the difference from its
episode's journal, store.codec, so a damaged row of that journal leaves the record out too); a file SQLite cannot read is called damaged,
with SQLite's words, and merge refuses it before writing anything."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from sweepbench.cli import main
from sweepbench.errors import StoreError
from sweepbench.store.codec import register
from sweepbench.store.merge import merge_stores
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.runstore import RunStore
from sweepbench.view.server import build_app

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "hostile_cases"))
from _stores import garble_event, garble_record, key, small_store, truncate

ADVICE = ("restore it from a backup, or copy what SQLite can still read into a new file "
          "(sqlite3 STORE .recover | sqlite3 NEW) and use that")
RECORD = "episode ep-0001: its record does not decode (JSON is malformed: invalid character " \
         "(byte 22)): left out"
EVENT = "episode ep-0001: journal '' row #1 (a model call) does not decode: left out"
EVENT_RECORD = ("episode ep-0001: its record does not decode (it is stored as the difference "
                "from its journal's first 2 rows, which no longer give it back: the record or "
                "one of those rows is damaged; zstd: decompression error: Data corruption "
                "detected): left out")


@pytest.fixture
def bad_record(tmp_path: Path) -> Path:
    path = small_store(tmp_path / "rec.sqlite")
    garble_record(path, key(1))
    return path


@pytest.fixture
def bad_event(tmp_path: Path) -> Path:
    path = small_store(tmp_path / "ev.sqlite")
    garble_event(path, key(1))
    return path


def test_reads_leave_out_an_undecodable_record_and_list_it(bad_record):
    with ReadOnlyStore(bad_record) as store:
        assert sorted(store.records()) == [key(0), key(2)]
        assert len(store.model_calls()) == 6
        assert store.damaged == [RECORD]


def test_reads_leave_out_an_undecodable_journal_row_and_list_it(bad_event):
    with ReadOnlyStore(bad_event) as store:
        calls = store.model_calls()
        assert [(c.episode_key, c.role) for c in calls] == [
            (key(0), "user"), (key(0), "agent"), (key(1), "user"), (key(2), "user"),
            (key(2), "agent")]
        assert len(store.model_call_times()) == 5
        assert store.damaged == [EVENT]
        with pytest.raises(StoreError) as info:  # a replay must not skip a call
            store.events(key(1))
    assert str(info.value) == (
        f"run store {bad_event}: episode ep-0001: journal '' row #1 does not decode (Input "
        "data was truncated); the journal cannot be replayed past it")


@pytest.mark.parametrize(("fixture", "lines"), [("bad_record", [RECORD]),
                                               ("bad_event", [EVENT, EVENT_RECORD])])
def test_report_and_export_go_on_around_a_damaged_record_and_list_it(
        fixture, lines, request, tmp_path, capsys):
    path = request.getfixturevalue(fixture)
    assert main(["report", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["damaged"] == [f"run store {path}: {line}" for line in lines]
    entry = report["benchmarks"]["vitabench"]["models"]["scripted/oracle"]
    assert (entry["state"], entry["profile"]["episodes"]) == (2 / 3, 2)  # verdicts: all 3
    assert err == "".join(f"warning: run store {path}: {line}\n" for line in lines)
    tables = tmp_path / "tables"
    assert main(["export", str(path), "--tables", str(tables), "--format", "jsonl"]) == 0
    calls = 6 if fixture == "bad_record" else 5
    assert len((tables / "calls.jsonl").read_text().splitlines()) == calls
    said = capsys.readouterr().err.splitlines()
    assert said[:3] == [f"3 rows -> {tables / 'episodes.jsonl'}",
                        f"{calls} rows -> {tables / 'calls.jsonl'}",
                        f"3 rows -> {tables / 'judgments.jsonl'}"]
    assert sorted(said[3:]) == sorted(f"warning: run store {path}: {line}" for line in lines)


async def test_the_viewer_shows_a_damaged_record_as_it_is_stored(bad_record):
    async with TestClient(TestServer(build_app([bad_record]), host="127.0.0.1")) as client:
        resp = await client.get("/api/episode", params={"store": "rec", "id": key(1)})
        assert resp.status == 200
        page = await resp.json()
        resp = await client.get("/api/summary", params={"store": "rec"})
        assert resp.status == 200
    assert page["record"] == {"undecodable": '{"run_id": "r1", "mod\ufffd\x00'}
    assert page["messages"] == [] and page["episode"]["status"] == "done"


def test_merge_copies_a_damaged_records_episode_unfinished_and_counts_it(bad_record, tmp_path):
    out = tmp_path / "out.sqlite"
    assert merge_stores(out, [bad_record]) == {
        "runs": 1, "run_episodes": 3, "episodes": 3, "events": 6, "judgments": 2,
        "records_left_out": 1}
    with RunStore(out, create=False) as store:
        assert store.episode_status() == {key(0): "done", key(1): "running", key(2): "done"}
        assert [e["seq"] for e in store.events(key(1))] == [0, 1]  # its journal, to continue
        assert sorted(store.records()) == [key(0), key(2)] and store.damaged == []


def test_merge_keeps_each_journal_up_to_its_first_undecodable_row(bad_event, tmp_path):
    db = sqlite3.connect(bad_event)
    register(db)  # the journal's triggers decode payloads with sb_json
    db.execute("INSERT INTO events VALUES (?, '', 2, 'tool_call', '{}', 1.0, 'r1', NULL)",
               (key(1),))
    db.commit()
    db.close()
    out = tmp_path / "out.sqlite"
    assert merge_stores(out, [bad_event]) == {  # its record needs row 1: copied unfinished
        "runs": 1, "run_episodes": 3, "episodes": 3, "events": 5, "judgments": 2,
        "journal_rows_left_out": 2, "records_left_out": 1}
    with ReadOnlyStore(out) as store:
        assert [e["seq"] for e in store.events(key(1))] == [0]
        assert store.episode_status()[key(1)] == "running"


def test_merge_says_what_it_left_out(bad_record, tmp_path, capsys):
    out = tmp_path / "out.sqlite"
    assert main(["merge", str(out), str(bad_record)]) == 0
    assert capsys.readouterr().err == (
        f"merged 1 stores into {out}: 1 runs, 3 run_episodes, 3 episodes, 6 events, 2 "
        "judgments\nwarning: left out what does not decode: 1 episode records (their episodes "
        "are copied unfinished: a run continues them from their journals) and 0 journal rows "
        "(each journal is kept up to its first such row)\n")


@pytest.fixture
def truncated(tmp_path: Path) -> Path:
    path = small_store(tmp_path / "cut.sqlite", episodes=40)
    truncate(path)
    return path


def test_a_truncated_store_is_called_damaged_by_report_export_and_view(truncated, tmp_path,
                                                                        capsys):
    line = (f"error: run store {truncated} is damaged (SQLite: database disk image is "
            f"malformed); {ADVICE}\n")
    assert main(["report", str(truncated)]) == 2
    assert capsys.readouterr().err == line
    assert main(["export", str(truncated), "--csv", str(tmp_path / "o.csv")]) == 2
    assert capsys.readouterr().err == line
    assert main(["view", str(truncated), "--port", "0"]) == 2
    assert capsys.readouterr().err == line


def test_merge_refuses_a_truncated_input_before_writing_anything(truncated, tmp_path):
    good = small_store(tmp_path / "good.sqlite", run_id="r0")
    out = tmp_path / "out.sqlite"
    with pytest.raises(StoreError) as info:
        merge_stores(out, [good, truncated])
    assert str(info.value) == (f"merge input: run store {truncated} is damaged (SQLite: "
                               f"database disk image is malformed); {ADVICE}; nothing was merged")
    assert not out.exists()


def test_a_store_with_a_garbled_header_is_called_damaged_and_other_files_not_a_store(
        tmp_path, capsys):
    path = small_store(tmp_path / "s.sqlite")
    data = bytearray(path.read_bytes())
    data[:16] = b"garbage garbage!"
    path.write_bytes(bytes(data))
    assert main(["report", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: run store {path} is damaged (SQLite: file is not a database); {ADVICE}\n")
    notes = tmp_path / "notes.sqlite"
    notes.write_text("not a database\n" * 10)
    assert main(["report", str(notes)]) == 2
    assert capsys.readouterr().err == (
        f"error: {notes} is not a sweepbench run store (SQLite: file is not a database); if it "
        f"was one, it is damaged: {ADVICE}\n")


def test_a_judgment_that_does_not_decode_is_left_out_and_listed(tmp_path):
    path = small_store(tmp_path / "j.sqlite")
    db = sqlite3.connect(path)
    db.execute("UPDATE judgments SET details = '{\"why\": ' WHERE episode_key = ?", (key(2),))
    db.commit()
    db.close()
    with ReadOnlyStore(path) as store:
        assert [j["episode_key"] for j in store.judgments()] == [key(0), key(1)]
        assert store.damaged == ["episode ep-0002: its judgment by state/state does not decode "
                                 "(Input data was truncated): left out"]
