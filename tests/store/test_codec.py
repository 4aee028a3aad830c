"""The compressed store (schema 5, store.codec): a real sweep's store read through every
reader returns what the same store as schema 4 (all JSON text) returns, and what it returns
once migrated; merges of compressed stores with dictionaries of their own; an interrupted
sweep continued from a compressed journal; the migration's backup; damaged and hostile
compressed values."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import sys
from pathlib import Path

import msgspec
import pytest
import zstandard

from sweepbench.cli import main
from sweepbench.errors import StoreError
from sweepbench.store import codec
from sweepbench.store.codec import (
    MAX_DECODED,
    PAYLOAD,
    RECORD,
    Damaged,
    Packer,
    Unpacker,
    journal_prefix,
    register,
    unregistered,
)
from sweepbench.store.merge import merge_stores
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.runstore import RunStore
from sweepbench.store.schema import SCHEMA_VERSION, create_schema
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
    # 2.6x on a quiet machine; under load (other processes on both cores) the migrated store
    # came out some 25 pages larger (2.49x, the same text store), so the bound leaves room
    assert old.stat().st_size > 2.4 * migrated.stat().st_size


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


# ---- the codec's parts, value by value -------------------------------------------------------


def _db() -> sqlite3.Connection:
    """An empty store's tables in memory, with the SQL functions the journal's triggers use."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    register(db)
    create_schema(db)
    return db


def _rows(n: int, width: int = 40) -> list[bytes]:
    return [msgspec.json.encode({"name": "find", "result": f"order {i % 7} " + "noodles " * width,
                                 "i": i}) for i in range(n)]


def test_a_dictionarys_id_is_the_first_eight_bytes_of_its_blake2b_signed():
    data = b"some dictionary bytes"
    digest = hashlib.blake2b(data, digest_size=8).digest()
    assert codec._dict_id(data) == int.from_bytes(digest, "little", signed=True)
    assert codec._dict_id(b"\x00") != codec._dict_id(b"\x01")
    assert any(codec._dict_id(bytes([i])) < 0 for i in range(16))  # signed: SQLite's INTEGER


def test_a_frame_is_read_up_to_max_decoded_bytes_and_refused_beyond(monkeypatch):
    frame = zstandard.ZstdCompressor().compress(b"x" * 100)
    dctx = zstandard.ZstdDecompressor()
    monkeypatch.setattr(codec, "MAX_DECODED", 100)
    assert codec._frame(frame, dctx) == b"x" * 100
    monkeypatch.setattr(codec, "MAX_DECODED", 99)
    with pytest.raises(Damaged, match=r"^compressed and damaged: declares 100 decoded bytes "
                                      r"\(at most 99 bytes are read\)$"):
        codec._frame(frame, dctx)
    unsized = zstandard.ZstdCompressor(write_content_size=False).compress(b"y" * 10)
    with pytest.raises(Damaged, match=r"declares no decoded bytes \(at most 99 bytes"):
        codec._frame(unsized, dctx)
    with pytest.raises(Damaged, match=r"^compressed and damaged: not a zstd frame \("):
        codec._frame(b"not a frame at all", dctx)
    monkeypatch.setattr(codec, "MAX_DECODED", 100)
    with pytest.raises(Damaged, match=r"^compressed and damaged: zstd: "):
        codec._frame(frame[:-3] + b"\x00\x00\x00", dctx)  # its checksum or end torn


def test_tags_tell_stored_forms_apart():
    assert codec._is(b"\x01abc", PAYLOAD) and codec._is(bytearray(b"\x01"), PAYLOAD)
    assert not codec._is(b"\x02abc", PAYLOAD) and codec._is(b"\x02", RECORD)
    assert not codec._is("\x01abc", PAYLOAD) and not codec._is(b"", PAYLOAD)
    assert not codec._is(None, RECORD)


def test_the_unpacker_reads_text_plain_frames_and_dictionary_frames():
    data = b'{"a": 1}'
    unpacker = Unpacker(lambda _: None)
    assert unpacker.payload('{"a": 1}') == data
    plain = bytes([PAYLOAD]) + (0).to_bytes(8, "little") + zstandard.ZstdCompressor(
        write_checksum=True).compress(data)
    assert unpacker.payload(plain) == data
    with pytest.raises(Damaged, match="^neither JSON text nor a compressed payload$"):
        unpacker.payload(b"\x05" + plain[1:])
    with pytest.raises(Damaged, match="^neither JSON text nor a compressed payload$"):
        unpacker.payload(plain[:8])  # a head cut short
    with pytest.raises(Damaged, match="^its compression dictionary 7 is not in the store$"):
        unpacker.payload(bytes([PAYLOAD]) + (7).to_bytes(8, "little") + plain[9:])
    samples = _rows(400)
    trained = zstandard.train_dictionary(4096, samples, k=64, d=8)
    asked = []

    def load(dict_id: int) -> bytes | None:
        asked.append(dict_id)
        return {5: trained.as_bytes(), 6: b"\x37\xa4\x30\xec broken"}.get(dict_id)

    unpacker = Unpacker(load)
    packed = bytes([PAYLOAD]) + (5).to_bytes(8, "little") + zstandard.ZstdCompressor(
        dict_data=trained).compress(samples[3])
    assert unpacker.payload(packed) == samples[3]
    assert unpacker.payload(packed) == samples[3] and asked == [5]  # loaded once
    with pytest.raises(Damaged, match="^its compression dictionary 6 is damaged"):
        unpacker.payload(bytes([PAYLOAD]) + (6).to_bytes(8, "little") + plain[9:])


def test_sql_functions_decode_once_and_say_null_where_a_value_does_not_decode():
    db = _db()
    packer = Packer(db, train_after=10)
    for i, row in enumerate(_rows(12)):
        packer.payload("b", row)
    stored = packer.payload("b", _rows(13)[12])
    assert codec._is(stored, PAYLOAD)
    assert db.execute("SELECT sb_json(?)", (bytes(stored),)).fetchone()[0] == _rows(13)[12].decode()
    assert db.execute("SELECT sb_json(?)", ("text",)).fetchone()[0] == "text"
    assert db.execute("SELECT sb_json(?)", (b"\x01broken",)).fetchone()[0] is None
    assert db.execute("SELECT sb_json(?), sb_json(?)", (bytes(stored), bytes(stored))
                      ).fetchone() == (_rows(13)[12].decode(),) * 2
    assert db.execute("SELECT sb_record('k', ?)", ("plain",)).fetchone()[0] == "plain"
    assert db.execute("SELECT sb_record('k', ?)", (b"\x02short",)).fetchone()[0] is None
    db.close()


def test_unregistered_says_what_to_do_only_for_a_missing_sb_function():
    hint = unregistered(sqlite3.OperationalError("no such function: sb_json"))
    assert hint is not None and "codec.register(conn)" in hint
    assert unregistered(sqlite3.OperationalError("no such function: other")) is None
    assert unregistered(sqlite3.OperationalError("database is locked")) is None
    assert unregistered(ValueError("no such function: sb_json")) is None


def test_the_packer_trains_after_exactly_train_after_samples_and_stores_the_dictionary():
    db = _db()
    packer = Packer(db, train_after=30)
    rows = _rows(31)
    for row in rows[:29]:
        assert packer.payload("b", row) == row.decode()  # text until the dictionary
    assert db.execute("SELECT count(*) FROM codec_dicts").fetchone()[0] == 0
    assert packer.payload("b", rows[29].decode()) == rows[29].decode()  # the 30th: trained
    (dict_id, grp, data), = db.execute("SELECT id, grp, dict FROM codec_dicts").fetchall()
    assert grp == "b" and dict_id == codec._dict_id(data)
    stored = packer.payload("b", rows[30])
    assert type(stored) is bytearray  # bound by sqlite3 without its adapter lookup
    assert stored[:9] == bytes([PAYLOAD]) + dict_id.to_bytes(8, "little", signed=True)
    assert Unpacker(codec._loader(db)).payload(bytes(stored)) == rows[30]
    assert packer.payload("b", rows[30].decode())[:9] == stored[:9]  # text in, compressed out
    packer.train("b", _rows(40)[::-1])  # has one: kept
    assert db.execute("SELECT count(*) FROM codec_dicts").fetchone()[0] == 1
    other = Packer(db, train_after=30)  # a later writer uses the stored dictionary at once
    assert other.payload("b", rows[0])[:9] == stored[:9]
    assert other.payload("c", rows[0]) == rows[0].decode()
    db.close()


def test_a_payload_beyond_max_decoded_stays_text(monkeypatch):
    db = _db()
    packer = Packer(db, train_after=20)
    rows = _rows(21)
    for row in rows[:20]:
        packer.payload("b", row)
    monkeypatch.setattr(codec, "MAX_DECODED", len(rows[20]))
    assert codec._is(packer.payload("b", rows[20]), PAYLOAD)
    assert codec._is(packer.row("k", None, "j", 0, "b", rows[20]), PAYLOAD)
    monkeypatch.setattr(codec, "MAX_DECODED", len(rows[20]) - 1)
    assert packer.payload("b", rows[20]) == rows[20].decode()
    assert packer.row("k", None, "j", 1, "b", rows[20]) == rows[20].decode()
    db.close()


def _episode(db: sqlite3.Connection, key: str) -> int:
    db.execute("INSERT INTO event_keys (episode_key) VALUES (?)", (key,))
    return db.execute("SELECT ep FROM event_keys WHERE episode_key = ?", (key,)).fetchone()[0]


def _write(db: sqlite3.Connection, packer: Packer, key: str, ep: int, seq: int, data: bytes,
           journal: str = "") -> None:
    stored = packer.row(key, ep, journal, seq, "b", data)
    db.execute("INSERT OR IGNORE INTO event_rows VALUES (?, ?, ?, 'tool_call', ?, 1.0, 'r', NULL)",
               (ep, journal, seq, stored))


def test_a_record_is_its_frame_against_its_journal_with_a_head_that_says_so():
    db = _db()
    packer = Packer(db, train_after=10, records_after=1000)
    rows = _rows(14)
    for row in rows[:10]:
        packer.payload("b", row)  # the journal's dictionary
    ep = _episode(db, "k")
    for seq, row in enumerate(rows[10:]):
        _write(db, packer, "k", ep, seq, row)
    _write(db, packer, "k", ep, 0, rows[0], journal="judge")  # another journal: not content
    data = b'{"messages": ' + b"[" + b",".join(rows[10:]) + b"]}"
    stored = packer.record("k", "bench", data)
    tag, dict_id, n, end = codec._RECORD_HEAD.unpack_from(stored)
    assert (tag, dict_id, n, end) == (RECORD, 0, 4, 4)
    assert len(stored) < len(data) // 4  # the journal's messages are back-references
    unpacker = Unpacker(codec._loader(db))
    assert unpacker.record(bytes(stored), journal_prefix(db, "k")) == data
    # read back (not kept: another writer's rows) it is the same
    assert Packer(db, train_after=10).record("k", "bench", data)[:codec._RECORD_HEAD.size] == (
        stored[:codec._RECORD_HEAD.size])
    with pytest.raises(Damaged, match="^it was compressed with 4 journal rows and the journal "
                                      "has 3 of them$"):
        unpacker.record(bytes(stored), lambda: journal_prefix(db, "k")()[:3])
    with pytest.raises(Damaged, match="^a compressed record cut short$"):
        unpacker.record(bytes(stored[:codec._RECORD_HEAD.size - 1]), list)
    assert unpacker.record("text", list) == b"text"
    assert unpacker.record(b"{}", list) == b"{}"
    db.close()


def test_a_record_without_content_and_one_with_little():
    db = _db()
    packer = Packer(db, train_after=10, records_after=1000)
    data = b'{"messages": []}'
    stored = packer.record("none", "bench", data)  # no journal, no dictionary
    assert codec._RECORD_HEAD.unpack_from(stored) == (RECORD, 0, 0, 0)
    unpacker = Unpacker(codec._loader(db))
    assert unpacker.record(bytes(stored), list) == data
    ep = _episode(db, "short")
    db.execute("INSERT INTO event_rows VALUES (?, '', 0, 'm', '{}', 1.0, 'r', NULL)", (ep,))
    stored = packer.record("short", "bench", b'{"m": {}}')  # 2 bytes of content: no prefix
    assert codec._RECORD_HEAD.unpack_from(stored) == (RECORD, 0, 1, 1)
    assert unpacker.record(bytes(stored), journal_prefix(db, "short")) == b'{"m": {}}'
    db.close()


def test_records_train_their_dictionary_after_records_after_and_use_it():
    db = _db()
    packer = Packer(db, train_after=1000, records_after=40)
    records = [msgspec.json.encode({"system": "You are a delivery agent. " * 20, "task": i,
                                    "messages": [f"hello {i}"]}) for i in range(41)]
    for data in records[:39]:
        assert codec._RECORD_HEAD.unpack_from(packer.record("x", "bench", data))[1] == 0
    assert db.execute("SELECT count(*) FROM codec_dicts").fetchone()[0] == 0
    packer.record("x", "bench", records[39])
    (dict_id, grp), = db.execute("SELECT id, grp FROM codec_dicts").fetchall()
    assert grp == "record:bench"
    stored = packer.record("x", "bench", records[40])
    assert codec._RECORD_HEAD.unpack_from(stored)[1] == dict_id
    assert Unpacker(codec._loader(db)).record(bytes(stored), list) == records[40]
    # read as raw content, not as the trained dictionary it is (whose repeat offsets differ
    # from raw content's 1, 4 and 8): a run at the start is an offset-1 repeat
    run = b"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz" + records[7]
    assert Unpacker(codec._loader(db)).record(bytes(packer.record("y", "bench", run)), list
                                              ) == run
    later = Packer(db, train_after=1000, records_after=40)  # loads it; trains no other
    assert codec._RECORD_HEAD.unpack_from(later.record("y", "bench", records[0]))[1] == dict_id
    db.close()


def test_a_record_beyond_max_decoded_is_stored_as_it_is(monkeypatch):
    db = _db()
    packer = Packer(db, train_after=10)
    data = b'{"messages": ["' + b"x" * 50 + b'"]}'
    monkeypatch.setattr(codec, "MAX_DECODED", len(data))
    assert codec._is(packer.record("k", "bench", data), RECORD)
    monkeypatch.setattr(codec, "MAX_DECODED", len(data) - 1)
    assert packer.record("k", "bench", data) is data
    db.close()


def test_kept_rows_are_let_go_oldest_episode_first_beyond_kept_bytes(monkeypatch):
    db = _db()
    packer = Packer(db, train_after=1000)
    rows = [b'{"r": "' + bytes([97 + i]) * 16 + b'"}' for i in range(6)]  # 25 bytes each
    monkeypatch.setattr(codec, "KEPT_BYTES", 75)
    eps = {k: _episode(db, k) for k in ("a", "b")}
    for seq in range(2):
        _write(db, packer, "a", eps["a"], seq, rows[seq])
    _write(db, packer, "b", eps["b"], 0, rows[2])
    assert packer._kept_bytes == 75 and set(packer._kept) == {"a", "b"}  # at the limit: kept
    _write(db, packer, "b", eps["b"], 0, rows[3])  # a seq again: the first one stays kept
    assert packer._kept_bytes == 75
    _write(db, packer, "b", eps["b"], 1, rows[4])  # one byte over: "a" goes, all of it
    assert set(packer._kept) == {"b"} and packer._kept_bytes == 50
    assert packer._evicted == {"a"} and packer._whole == {"b"}
    # both records decode: "a" reads its journal back, "b" is what was kept
    unpacker = Unpacker(codec._loader(db))
    for k in ("a", "b"):
        data = b'{"k": "' + k.encode() + b'"}'
        assert unpacker.record(bytes(packer.record(k, "bench", data)), journal_prefix(db, k)
                               ) == data
    assert packer._kept == {} and packer._kept_bytes == 0 and packer._evicted == set()
    db.close()


def test_the_journal_prefix_reads_another_schema():
    db = _db()
    db.execute("ATTACH ':memory:' AS other")
    db.execute("CREATE TABLE other.event_keys (ep INTEGER PRIMARY KEY, episode_key TEXT)")
    db.execute("CREATE TABLE other.event_rows (ep, journal, seq, payload)")
    db.execute("INSERT INTO other.event_keys VALUES (3, 'k')")
    db.executemany("INSERT INTO other.event_rows VALUES (3, ?, ?, ?)",
                   [("", 1, "b"), ("", 0, "a"), ("j", 2, "x")])
    assert journal_prefix(db, "k", "other")() == [(0, "a"), (1, "b")]
    assert journal_prefix(db, "k")() == []
    db.close()


def test_an_empty_frame_reads_as_no_bytes():
    frame = zstandard.ZstdCompressor().compress(b"")
    assert zstandard.frame_content_size(frame) == 0
    assert codec._frame(frame, zstandard.ZstdDecompressor()) == b""


def test_a_value_of_a_head_alone_is_not_a_frame():
    unpacker = Unpacker(lambda _: None)
    head = bytes([PAYLOAD]) + (0).to_bytes(8, "little")
    with pytest.raises(Damaged, match="^compressed and damaged: not a zstd frame"):
        unpacker.payload(head)
    record_head = codec._RECORD_HEAD.pack(RECORD, 0, 0, 0)
    with pytest.raises(Damaged, match="^compressed and damaged: not a zstd frame"):
        unpacker.record(record_head, list)


def test_unregistered_says_exactly_what_to_do():
    assert unregistered(sqlite3.OperationalError("no such function: sb_record")) == (
        "the store's journal can only be written on a connection with sweepbench's SQL "
        "functions (sweepbench.store.codec.register(conn)), which decode the compressed "
        "payloads the journal's triggers read")


def _store_with_record(path: Path) -> tuple[str, bytes]:
    """A store file with one compressed journal and its compressed record."""
    db = sqlite3.connect(path, isolation_level=None)
    register(db)
    create_schema(db)
    packer = Packer(db, train_after=10, records_after=1000)
    rows = _rows(14)
    for row in rows[:10]:
        packer.payload("b", row)
    ep = _episode(db, "k")
    for seq, row in enumerate(rows[10:]):
        _write(db, packer, "k", ep, seq, row)
    data = b'{"messages": [' + b",".join(rows[10:]) + b"]}"
    db.execute("INSERT INTO episodes (episode_key, label, model, benchmark, domain, task_id, "
               "trial, status, record, started_at) VALUES ('k', 'l', 'm', 'b', 'd', 't', 0, "
               "'done', ?, 1.0)", (bytes(packer.record("k", "b", data)),))
    db.close()
    return "k", data


def test_sql_functions_read_the_schema_they_were_registered_for(tmp_path):
    _, data = _store_with_record(tmp_path / "s.sqlite")
    db = sqlite3.connect(":memory:")
    db.execute("ATTACH ? AS src", (str(tmp_path / "s.sqlite"),))
    register(db, "src")
    texts = [t for (t,) in db.execute("SELECT sb_json(payload) FROM src.event_rows "
                                      "WHERE journal = '' ORDER BY seq")]
    assert texts == [r.decode() for r in _rows(14)[10:]]
    assert db.execute("SELECT sb_record(episode_key, record) FROM src.episodes").fetchone()[0] \
        == data
    db.close()
    db = sqlite3.connect(tmp_path / "s.sqlite")
    register(db)
    assert db.execute("SELECT sb_record(episode_key, record) FROM episodes").fetchone()[0] == data
    assert db.execute("SELECT sb_record('other', record) FROM episodes").fetchone()[0] is None
    db.close()


def test_a_damaged_record_says_whether_its_journal_was_part_of_it(tmp_path):
    key_, _ = _store_with_record(tmp_path / "s.sqlite")
    db = sqlite3.connect(tmp_path / "s.sqlite")
    blob = db.execute("SELECT record FROM episodes").fetchone()[0]
    unpacker = Unpacker(codec._loader(db))
    torn = blob[:-6] + b"\x00" * 6
    with pytest.raises(Damaged) as e:
        unpacker.record(torn, journal_prefix(db, key_))
    assert str(e.value).startswith(
        "it is stored as the difference from its journal's first 4 rows, which no longer give "
        "it back: the record or one of those rows is damaged; zstd: ")
    alone = codec._RECORD_HEAD.pack(RECORD, 0, 0, 0) + zstandard.ZstdCompressor(
        write_checksum=True).compress(b'{"a": 1}')
    with pytest.raises(Damaged, match="^compressed and damaged: zstd: "):
        unpacker.record(alone[:-4] + b"\x00" * 4, list)
    db.close()


def test_a_packer_reads_a_store_without_dictionaries_and_uses_a_groups_first_one():
    db = sqlite3.connect(":memory:", isolation_level=None)
    register(db)
    assert Packer(db).payload("b", b'{"a": 1}') == '{"a": 1}'  # no codec_dicts table yet
    db.close()
    db = _db()
    first = zstandard.train_dictionary(4096, _rows(200), k=64, d=8).as_bytes()
    second = zstandard.train_dictionary(4096, _rows(200, 20), k=64, d=8).as_bytes()
    for data in (first, second):  # two stores merged: two dictionaries of one group
        db.execute("INSERT INTO codec_dicts VALUES (?, 'b', ?)", (codec._dict_id(data), data))
    stored = Packer(db).payload("b", _rows(1)[0])
    assert stored[1:9] == codec._dict_id(first).to_bytes(8, "little", signed=True)
    db.close()


def test_rows_and_their_frames_as_the_writer_makes_them():
    db = _db()
    packer = Packer(db, train_after=20)
    rows = _rows(22)
    for row in rows[:20]:
        packer.payload("b", row)
    (data,) = db.execute("SELECT dict FROM codec_dicts").fetchone()
    assert data == zstandard.train_dictionary(codec.DICT_SIZE, rows[:20], k=64, d=8,
                                              f=codec.TRAIN_F, threads=0).as_bytes()
    assert "b" not in packer._samples
    ep = _episode(db, "k")
    stored = packer.row("k", ep, "", 0, "b", rows[20].decode())  # text in
    frame = zstandard.get_frame_parameters(bytes(stored[9:]))
    assert frame.has_checksum and frame.dict_id == zstandard.ZstdCompressionDict(data).dict_id()
    assert Unpacker(codec._loader(db)).payload(bytes(stored)) == rows[20]
    db.execute("INSERT INTO event_rows VALUES (?, '', 0, 'tool_call', ?, 1.0, 'r', NULL)",
               (ep, stored))
    record = packer.record("k", "b", b'{"m": [' + rows[20] + b"]}")  # the kept row: bytes
    assert Unpacker(codec._loader(db)).record(bytes(record), journal_prefix(db, "k")) == (
        b'{"m": [' + rows[20] + b"]}")
    db.close()


def test_dictionaries_train_per_group_and_records_at_their_own_size():
    db = _db()
    packer = Packer(db, train_after=10, records_after=60)
    for row in _rows(9):
        packer.payload("b", row)
    for row in _rows(5):
        packer.payload("c", row)
    assert db.execute("SELECT count(*) FROM codec_dicts").fetchone()[0] == 0
    records = [msgspec.json.encode({"system": f"You deliver food in city {i % 9}. " * 30,
                                    "task": i, "notes": "lunch " * (i % 13),
                                    "log": [f"order {j * i} of {j % 5} noodles and {i * j % 7} "
                                            f"rolls to street {j + i}" for j in range(40)]})
               for i in range(60)]  # enough for 32 KB: a record dictionary is 16
    for data in records:
        packer.record("x", "bench", data)
    (data,) = db.execute("SELECT dict FROM codec_dicts WHERE grp = 'record:bench'").fetchone()
    assert data == zstandard.train_dictionary(codec.RECORD_DICT_SIZE, records, k=64, d=8,
                                              f=codec.TRAIN_F, threads=0).as_bytes()
    assert len(data) == codec.RECORD_DICT_SIZE < codec.DICT_SIZE
    fresh = Packer(_db(), train_after=1000)
    fresh.train("z", _rows(40))  # migrate's way: samples given, none of its own
    assert "z" in fresh._compressors
    db.close()


def test_kept_rows_let_go_stop_at_kept_bytes_and_count_what_stays(monkeypatch):
    db = _db()
    packer = Packer(db, train_after=1000)
    monkeypatch.setattr(codec, "KEPT_BYTES", 50)
    rows = [b'{"r": "' + bytes([97 + i]) * 16 + b'"}' for i in range(3)]  # 25 bytes each
    for i, k in enumerate("abc"):
        _write(db, packer, k, _episode(db, k), 0, rows[i])
    assert set(packer._kept) == {"b", "c"} and packer._kept_bytes == 50
    db.close()


def test_a_record_after_a_retry_reads_its_journal_back():
    """A record's episode is whole once; started again, its new rows sit on rows stored
    before (one of its seqs written again, the stored one being the first)."""
    db = _db()
    packer = Packer(db, train_after=1000)
    ep = _episode(db, "k")
    unpacker = Unpacker(codec._loader(db))
    _write(db, packer, "k", ep, 0, b'{"first": "noodles with rice and chilli"}')
    first = b'{"m": ["noodles with rice and chilli"]}'
    assert unpacker.record(bytes(packer.record("k", "b", first)), journal_prefix(db, "k")) == first
    _write(db, packer, "k", ep, 0, b'{"again": "dumplings, not what is stored"}')
    _write(db, packer, "k", ep, 1, b'{"second": "spring rolls and tea, twice over"}')
    # it names what the store does not hold too: compressed against the rows written again,
    # not the stored ones, it would not decode
    second = (b'{"m": ["noodles with rice and chilli", "spring rolls and tea, twice over"], '
              b'"not": "dumplings, not what is stored"}')
    stored = packer.record("k", "b", second)
    assert codec._RECORD_HEAD.unpack_from(stored)[2:] == (2, 2)
    assert unpacker.record(bytes(stored), journal_prefix(db, "k")) == second
    db.close()


def _prefixed(content: bytes, data: bytes) -> bytes:
    return codec.prefixed.ZstdCompressor(
        options=codec._PREFIXED, zstd_dict=codec.prefixed.ZstdDict(content, is_raw=True).as_prefix
    ).compress(data, codec.prefixed.ZstdCompressor.FLUSH_FRAME)


def test_a_records_frame_is_the_prefix_compression_of_its_content():
    db = _db()
    packer = Packer(db, train_after=1000, records_after=1000)
    for key_, row in (("eight", b'{"a":12}'), ("seven", b'{"a":1}'), ("long", _rows(1)[0])):
        ep = _episode(db, key_)
        _write(db, packer, key_, ep, 0, row)
        data = (b'{"m": [' + row + b'], "XXXX": "XXXXXXXXXXXXXXXX", "log": '
                + msgspec.json.encode([f"order {i} of noodles, {i * 7 % 13} rolls"
                                       for i in range(30)]) + b"}")
        stored = packer.record(key_, "b", data)
        frame = bytes(stored[codec._RECORD_HEAD.size:])
        if len(row) >= 8:  # the content as a prefix
            assert frame == _prefixed(row, data), key_
        else:  # too short for one: a raw-content dictionary
            assert frame == zstandard.ZstdCompressor(
                level=codec.RECORD_LEVEL, write_checksum=True, dict_data=zstandard.
                ZstdCompressionDict(row, dict_type=zstandard.DICT_TYPE_RAWCONTENT)).compress(data)
        assert Unpacker(codec._loader(db)).record(bytes(stored), journal_prefix(db, key_)) == data
    data = msgspec.json.encode({"notes": "lunch " * 40, "log": [
        f"order {i} of noodles, {i * 7 % 13} spring rolls" for i in range(30)]})
    assert packer.record("none", "b", data)[codec._RECORD_HEAD.size:] == zstandard.ZstdCompressor(
        level=codec.RECORD_LEVEL, write_checksum=True).compress(data)
    db.close()


def test_a_journal_dictionary_is_dict_size_and_a_record_one_record_dict_size():
    db = _db()
    packer = Packer(db, train_after=400)
    rows = [msgspec.json.encode({"name": "find", "i": i, "result": [
        f"order {j * i} of {j % 5} noodles and {i * j % 7} rolls to street {j + i}"
        for j in range(12)]}) for i in range(400)]  # enough for 32 KB
    for row in rows:
        packer.payload("b", row)
    (data,) = db.execute("SELECT dict FROM codec_dicts WHERE grp = 'b'").fetchone()
    assert len(data) == codec.DICT_SIZE > codec.RECORD_DICT_SIZE
    db.close()
