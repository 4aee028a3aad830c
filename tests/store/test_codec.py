"""The compressed store (schema 5, store.codec): a real sweep's store read through every
reader returns what the same store as schema 4 (all JSON text) returns, and what it returns
once migrated; merges of compressed stores with dictionaries of their own; an interrupted
sweep continued from a compressed journal; the migration's backup; damaged and hostile
compressed values."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from sweepbench.cli import main
from sweepbench.errors import StoreError
from sweepbench.store import codec
from sweepbench.store.codec import MAX_DECODED, RECORD, Damaged, Unpacker
from sweepbench.store.merge import merge_stores
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.runstore import RunStore
from sweepbench.store.schema import SCHEMA_VERSION
from sweepbench.wire import EpisodeRecord, UserMessage
from tests.support import call_facts, interrupt_and_continue

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "hostile_cases"))
from _stores import (
    as_schema_4,
    garble_compressed_event,
    garble_event,
    key,
    small_store,
    zstd_bomb_event,
)


def _sweep(path: Path, *extra: str) -> Path:
    """A real scripted sweep with the LLM judges (about 150 episodes: enough rows for the
    journal and record dictionaries at their default thresholds)."""
    assert main(["run", "--trials", "2", "--judge-model", "scripted/judge", "--no-progress",
                 "--out", str(path), *extra]) == 0
    return path


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    with pytest.MonkeyPatch.context() as mp:  # a record dictionary for each benchmark too
        mp.setattr(codec, "RECORDS_AFTER", 10)
        return _sweep(tmp_path_factory.mktemp("swept") / "s.sqlite")


def everything(path: Path) -> dict:
    """What every reader returns for the store at ``path`` (read-only, as report reads)."""
    with ReadOnlyStore(path) as s:
        keys = [r["episode_key"] for r in s.episode_rows()]
        run_id = s.latest_run_id()
        out = {
            "runs": s.runs(), "selection": s.run_selection(run_id), "specs": s.specs(),
            "status": s.episode_status(), "rows": s.episode_rows(),
            "run_rows": s.episode_rows(run_id), "call_counts": sorted(s.call_counts()),
            "journaled": s.journaled_calls(keys), "identities": s.identities(),
            "records": s.records(), "some_records": s.records(keys[::7]),
            "episodes": s.episodes(run_id), "model_calls": s.model_calls(),
            "some_calls": s.model_calls(keys[::5]), "call_times": s.model_call_times(),
            "spans": s.call_spans(), "judgments": s.judgments(),
            "journals": {k: {j: (s.events(k, journal=j), s.events(k, journal=j, raw=True),
                                 s.events(k, journal=j, kind="model_call"))
                             for j in s.journals(k)} for k in keys},
        }
        assert s.damaged == []
    return out


def _forms(path: Path) -> dict[str, int]:
    """How many journal rows and records are stored as text and as blobs, and the
    dictionaries' ids."""
    db = sqlite3.connect(path)
    try:
        forms = dict(db.execute(
            "SELECT 'rows_' || typeof(payload), count(*) FROM event_rows GROUP BY 1 UNION ALL "
            "SELECT 'records_' || typeof(record), count(*) FROM episodes GROUP BY 1").fetchall())
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'codec_dicts'").fetchone():
            forms["dicts"] = {i for (i,) in db.execute("SELECT id FROM codec_dicts")}
        return forms
    finally:
        db.close()


def test_a_sweeps_store_reads_the_same_compressed_as_text_and_migrated(swept, tmp_path):
    forms = _forms(swept)
    # a mixed store: the rows before the dictionaries as text, the rest compressed
    assert forms["rows_blob"] > forms["rows_text"] > 0
    assert len(forms["dicts"]) == 4  # each benchmark's journal dictionary, and record one
    assert forms["records_blob"] == len(everything(swept)["records"])
    old = as_schema_4(shutil.copyfile(swept, tmp_path / "old.sqlite"))
    assert set(_forms(old)) == {"rows_text", "records_blob"}  # bytes, as schema 4 wrote them
    migrated = shutil.copyfile(old, tmp_path / "migrated.sqlite")
    with RunStore(migrated, create=False) as s:
        assert s.migrated and f"from schema 4 to {SCHEMA_VERSION}" in s.migrated
    assert _forms(migrated).get("rows_text", 0) == 0  # the migration compresses every row
    new, text, after = everything(swept), everything(old), everything(migrated)
    assert new == text
    assert after == text
    facts = []  # the facts (schema 6): as the sweep wrote them, and as the migration filled them
    for path in (swept, migrated):
        with sqlite3.connect(path) as db:
            facts.append((call_facts(db), db.execute(
                "SELECT * FROM episode_facts ORDER BY episode_key").fetchall()))
        db.close()
    assert facts[0][0] and facts[0][1] and facts[1] == facts[0]
    assert old.stat().st_size > 2.5 * migrated.stat().st_size


def test_reports_of_the_two_forms_are_the_same(swept, tmp_path, capsys):
    old = as_schema_4(shutil.copyfile(swept, tmp_path / "old.sqlite"))
    reports = []
    for path in (swept, old):
        assert main(["report", str(path), "--json"]) == 0
        reports.append(capsys.readouterr().out.replace(str(path), "STORE"))
    assert reports[0] == reports[1]


def test_the_migration_keeps_a_backup_of_the_text_store(swept, tmp_path):
    old = as_schema_4(shutil.copyfile(swept, tmp_path / "old.sqlite"))
    before = everything(old)
    with RunStore(old, create=False) as s:
        assert s.migrated and "backup: old.sqlite.schema4.bak" in s.migrated
    backup = tmp_path / "old.sqlite.schema4.bak"
    with sqlite3.connect(backup) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 4
    db.close()
    assert set(_forms(backup)) == {"rows_text", "records_blob"}  # as it was: text rows
    assert _forms(old).get("rows_text", 0) == 0
    assert everything(backup) == before == everything(old)


def test_merged_compressed_stores_read_as_their_inputs(swept, tmp_path):
    other = _sweep(tmp_path / "other.sqlite", "--seed", "7")
    out = tmp_path / "out.sqlite"
    merge_stores(out, [swept, other])
    assert _forms(out)["dicts"] == _forms(swept)["dicts"] | _forms(other)["dicts"]
    assert _forms(swept)["dicts"] != _forms(other)["dicts"]  # each store trained its own
    merged, a, b = everything(out), everything(swept), everything(other)
    assert merged["records"] == {**b["records"], **a["records"]}
    assert len(merged["records"]) > len(a["records"])
    for k, journals in merged["journals"].items():
        assert journals == (a if k in a["journals"] else b)["journals"][k]
    assert merged["judgments"] == sorted(
        a["judgments"] + [j for j in b["judgments"] if j["episode_key"] not in a["records"]],
        key=lambda j: (j["episode_key"], j["judge"], j["method"]))


async def test_an_interrupted_sweep_continues_from_its_compressed_journal(tmp_path, interrupt):
    def compressed(path: Path) -> None:  # the journals to continue are compressed
        running = [k for k, v in ReadOnlyStore(path).episode_status().items()
                   if v == "running"]
        with sqlite3.connect(path) as db:
            assert db.execute(
                f"SELECT count(*) FROM events WHERE typeof(payload) = 'blob' AND episode_key "
                f"IN ({','.join('?' * len(running))})", running).fetchone()[0] > 0
        db.close()

    # compressed from the 21st row on
    assert await interrupt_and_continue(tmp_path, interrupt, compressed, train_after=20) is None


# ---- damaged and hostile compressed values ------------------------------------------------

def test_a_flipped_bit_in_a_compressed_row_is_damaged_and_said_so(tmp_path):
    path = small_store(tmp_path / "s.sqlite")
    garble_compressed_event(path, key(1))
    with ReadOnlyStore(path) as store:
        assert [(c.episode_key, c.role) for c in store.model_calls()] == [
            (key(0), "user"), (key(0), "agent"), (key(1), "user"), (key(2), "user"),
            (key(2), "agent")]
        with pytest.raises(StoreError, match=r"journal '' row #1 does not decode \(compressed "
                                             r"and damaged: zstd: .*\); the journal cannot be "
                                             "replayed past it"):
            store.events(key(1))
        assert sorted(store.records()) == [key(0), key(2)]  # its record needs that row
    assert any("ep-0001: its record does not decode" in line for line in store.damaged)


@pytest.mark.parametrize("declared", [True, False])
def test_a_zstd_bomb_in_a_row_is_refused_before_it_is_decoded(tmp_path, declared):
    path = small_store(tmp_path / "s.sqlite")
    zstd_bomb_event(path, key(1), size=4 * MAX_DECODED, declared=declared)
    with sqlite3.connect(path) as db:
        bomb = db.execute("SELECT payload FROM events WHERE episode_key = ? AND seq = 0",
                          (key(1),)).fetchone()[0]
    db.close()
    assert len(bomb) < 100_000
    with pytest.raises(Damaged, match=f"at most {MAX_DECODED} bytes are read"):
        Unpacker(lambda _: None).payload(bomb)
    with ReadOnlyStore(path) as store:
        with pytest.raises(StoreError, match="does not decode"):
            store.events(key(1))
        assert len(store.model_calls()) == 5


def test_a_record_whose_dictionary_is_gone_is_left_out_and_said_so(tmp_path):
    path = small_store(tmp_path / "s.sqlite")
    with sqlite3.connect(path) as db:
        blob = db.execute("SELECT record FROM episodes WHERE episode_key = ?",
                          (key(1),)).fetchone()[0]
        assert blob[:1] == bytes((RECORD,))
        db.execute("UPDATE episodes SET record = ? WHERE episode_key = ?",
                   (blob[:1] + (12345).to_bytes(8, "little", signed=True) + blob[9:], key(1)))
    db.close()
    with ReadOnlyStore(path) as store:
        assert sorted(store.records()) == [key(0), key(2)]
        assert store.damaged == [("episode ep-0001: its record does not decode (its "
                                  "compression dictionary 12345 is not in the store): left out")]


async def test_the_viewer_shows_the_same_pages_of_both_forms(swept, tmp_path):
    """Episode pages (record, journal, judges' journals) and a text search, which reads the
    records, answer the same whether the store is compressed or text."""
    from aiohttp.test_utils import TestClient, TestServer

    from sweepbench.view.server import build_app

    (tmp_path / "text").mkdir()
    old = as_schema_4(shutil.copyfile(swept, tmp_path / "text" / "s.sqlite"))
    with ReadOnlyStore(swept) as s:
        keys = [r["episode_key"] for r in s.episode_rows()][::9]
    pages = []
    for path in (swept, old):
        async with TestClient(TestServer(build_app([path]), host="127.0.0.1")) as client:
            got = []
            for k in keys:
                resp = await client.get("/api/episode", params={"store": "s", "id": k})
                assert resp.status == 200
                got.append(await resp.json())
            for q in ("order", "hotel", "nothing like this"):
                resp = await client.get("/api/episodes", params={"store": "s", "q": q})
                assert resp.status == 200
                got.append(await resp.json())
            pages.append(got)
    assert pages[0] == pages[1]
    assert all(p["messages"] for p in pages[0][:len(keys)])
    assert pages[0][len(keys)]["rows"]  # the search found something


def test_a_dictionary_is_the_same_for_the_same_rows(tmp_path):
    """Trained from the same first rows, two stores hold the same dictionary under the same
    id (what merge relies on to copy dictionaries without renumbering)."""
    ids = []
    for name in ("a", "b"):
        with RunStore(tmp_path / f"{name}.sqlite", train_after=50) as store:
            for i in range(60):
                store.event(f"ep-{i}", 0, "tool_call", {"name": "search", "arguments": i,
                                                        "result": f"order {i % 7} noodles"})
        with sqlite3.connect(tmp_path / f"{name}.sqlite") as db:
            ids.append(db.execute("SELECT id, grp, dict FROM codec_dicts").fetchall())
        db.close()
    assert len(ids[0]) == 1 and ids[0] == ids[1]


def test_a_record_compressed_after_its_journal_was_damaged_survives_a_merge(tmp_path):
    """A store migrated with a journal row damaged already: the record is compressed against
    the rows before it, which a merge keeps, so the merged record still decodes."""
    path = as_schema_4(small_store(tmp_path / "s.sqlite"))
    garble_event(path, key(1))
    with RunStore(path, create=False) as store:
        assert store.migrated and sorted(store.records()) == [key(0), key(1), key(2)]
    out = tmp_path / "out.sqlite"
    assert merge_stores(out, [path])["journal_rows_left_out"] == 1
    with ReadOnlyStore(out) as store:
        assert sorted(store.records()) == [key(0), key(1), key(2)]
        assert [e["seq"] for e in store.events(key(1))] == [0]
        assert store.damaged == []


def test_records_are_whole_when_the_writer_kept_none_of_their_rows(tmp_path, monkeypatch):
    """The writer keeps the rows it wrote for their episode's record, within ``KEPT_BYTES``;
    a record whose rows it let go reads them back from the journal."""
    monkeypatch.setattr(codec, "KEPT_BYTES", 300)  # about two rows: most episodes lose theirs
    written = {}
    with RunStore(tmp_path / "s.sqlite", train_after=5) as store:
        for i in range(6):  # interleaved, as episodes in flight
            meta = {"key": key(i), "label": f"m|vitabench:delivery:en:T{i}|0", "model": "m",
                    "benchmark": "vitabench", "domain": "delivery", "task_id": f"T{i}",
                    "trial": 0}
            store.episode_started(meta, run_id="r")
        for seq in range(4):
            for i in range(6):
                store.event(key(i), seq, "tool_call", {"name": "find", "result": f"{i}-{seq}"})
        for i in range(6):
            written[key(i)] = EpisodeRecord(
                run_id="r", model="m", benchmark="vitabench", domain="delivery",
                task_id=f"T{i}", trial=0, termination="agent_done",
                messages=[UserMessage(f"{i}-{seq}") for seq in range(4)])
            store.episode_finished(key(i), written[key(i)])
        store.flush_sync()
        assert store.records() == written and store.damaged == []


def test_a_record_written_again_in_the_same_store_reads_back(tmp_path):
    """An episode retried by the store that wrote it: its second record is compressed against
    all of its journal, the rows written before the first record included (the writer keeps
    only what it wrote since; the store keeps the first payload of a seq written again), and
    both records' episodes read back whole."""
    def text(i: int, seq: int) -> str:
        return f"{i}-{seq}: noodles with extra chilli, a side of rice and two spring rolls"

    def record(i: int, n: int, termination: str) -> EpisodeRecord:
        return EpisodeRecord(run_id="r", model="m", benchmark="vitabench", domain="delivery",
                             task_id=f"T{i}", trial=0, termination=termination,
                             messages=[UserMessage(text(i, seq)) for seq in range(n)])

    with RunStore(tmp_path / "s.sqlite", train_after=3) as store:
        for i in range(3):
            meta = {"key": key(i), "label": f"m|vitabench:delivery:en:T{i}|0", "model": "m",
                    "benchmark": "vitabench", "domain": "delivery", "task_id": f"T{i}",
                    "trial": 0}
            store.episode_started(meta, run_id="r")
            for seq in range(3):
                store.event(key(i), seq, "tool_call", {"result": text(i, seq)})
            store.episode_finished(key(i), record(i, 3, "error"))
            if i == 1:
                store.flush_sync()  # one retried in a later transaction, the others in one
            store.episode_started(meta, run_id="r")
            for seq in range(5):  # three seqs again (not stored), then two more
                store.event(key(i), seq, "tool_call", {"result": "!" + text(i, seq)})
            store.episode_finished(key(i), record(i, 5, "agent_done"))
        store.flush_sync()
        assert store.records() == {key(i): record(i, 5, "agent_done") for i in range(3)}
        assert store.damaged == []
        assert [e["payload"]["result"][:4] for e in store.events(key(2))] == [
            "2-0:", "2-1:", "2-2:", "!2-3", "!2-4"]
