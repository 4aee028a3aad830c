"""Each step of a migration (store/migrate.py) at its edges: the note said for each version,
the versions refused, another process first, a failed step rolled back with its advice, the
backup written whole or not at all, the compression's batches and samples, the records it
compresses and those it leaves, the facts of a record that does not decode."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import sys
from collections import namedtuple
from pathlib import Path
from typing import ClassVar

import pytest

from sweepbench.errors import StoreError
from sweepbench.store import migrate as mg
from sweepbench.store.codec import _RECORD_HEAD, RECORD, register
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.store.schema import SCHEMA_VERSION

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "hostile_cases"))
from _stores import MODEL, as_schema_4, garble_record, key, small_store

from tests.store.test_migrate import v1_store, v2_store

_FACTS = ("call_facts_insert", "call_facts_update", "call_facts_delete", "episode_facts_update",
          "episode_facts_journal_update", "episode_facts_journal_delete")


def connect(path: Path) -> sqlite3.Connection:
    """A connection as the store migrates on: autocommit, with the codec's SQL functions."""
    c = sqlite3.connect(path, isolation_level=None)
    register(c)
    return c


def at_version(path: Path, version: int) -> Path:
    """A store of this schema rewritten as ``version`` (3, 4 or 5) had it."""
    if version < 5:
        as_schema_4(path)
    c = sqlite3.connect(path, isolation_level=None)
    try:
        if version == 5:  # schema 6's facts: not in schema 5
            for name in _FACTS:
                c.execute(f"DROP TRIGGER {name}")
            for table in ("call_facts", "episode_facts", "fact_texts"):
                c.execute(f"DROP TABLE {table}")
        if version == 3:
            c.execute("DROP TABLE store_identity")
        c.execute(f"PRAGMA user_version = {version}")
    finally:
        c.close()
    return path


def user_version(path: Path) -> int:
    c = sqlite3.connect(path)
    try:
        return c.execute("PRAGMA user_version").fetchone()[0]
    finally:
        c.close()


def run_migration(path: Path, version: int) -> str:
    c = connect(path)
    try:
        return mg.migrate(c, path, version)
    finally:
        c.close()


FACTS_NOTE = "; the facts reports sum (6 model calls, 3 finished episodes) filled in once"


@pytest.mark.parametrize(("version", "changed"), [
    (4, "each conversation is stored once, compressed"),
    (3, "the store has an id now, which tells its WAL file from another's")])
def test_schema_3_and_4_notes_say_what_changed_and_what_was_compressed(tmp_path, version,
                                                                       changed):
    path = at_version(small_store(tmp_path / "s.sqlite"), version)
    assert run_migration(path, version) == (
        f"migrated run store {path} from schema {version} to {SCHEMA_VERSION} (backup: "
        f"s.sqlite.schema{version}.bak): {changed}; its 6 journal rows and 3 records "
        "compressed" + FACTS_NOTE)
    c = sqlite3.connect(path)
    assert c.execute("SELECT count(*) FROM store_identity").fetchone()[0] == 1
    assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    c.close()


@pytest.mark.parametrize(("version", "make", "note"), [
    (2, v2_store, ("v2.sqlite.schema2.bak): the journals of its 3 episode keys (8 events) "
     "renumbered, and the store given an id (which tells its WAL file from another's); its 8 "
     "journal rows and 0 records compressed; the facts reports sum (8 model calls, 0 "
     "finished episodes) filled in once")),
    (1, v1_store, ("v2.sqlite.schema1.bak): 2 episodes of 2 runs kept for reports; they are "
     "never reused by new runs (their task content and prompt versions were not recorded) "
     "and their calls are unpriced; its 6 journal rows and 2 records compressed; the facts "
     "reports sum (6 model calls, 2 finished episodes) filled in once")),
])
def test_schema_1_and_2_notes_in_full(tmp_path, version, make, note):
    path = tmp_path / "v2.sqlite"
    make(path)
    assert run_migration(path, version) == (
        f"migrated run store {path} from schema {version} to {SCHEMA_VERSION} (backup: "
        + note)


def test_a_v1_episode_of_a_run_never_recorded_has_no_user_model(tmp_path):
    path = tmp_path / "old.sqlite"
    v1_store(path)
    c = sqlite3.connect(path)
    c.execute("INSERT INTO episodes VALUES ('run-z', 'e', 'm', 'vitabench', 'delivery', 'T', "
              "'en', 0, 'done', 'user_stop', NULL, 1.0, 2.0)")
    c.commit()
    c.close()
    assert "3 episodes of 2 runs kept" in run_migration(path, 1)
    c = sqlite3.connect(path)
    assert c.execute("SELECT user_model, user_mode FROM episodes WHERE run_id = 'run-z'"
                     ).fetchall() == [(None, None)]
    c.close()


def test_schema_5_gets_its_facts_and_nothing_else_changes(tmp_path):
    """A schema-5 store's text rows (samples before its dictionary) stay text: the
    compression is not run again over a store that has its dictionary."""
    path = tmp_path / "s.sqlite"
    with RunStore(path, train_after=4) as store:
        store.begin_run("r", {})
        for i in range(4):
            store.episode_started(EpisodeMeta(
                key=key(i), label=f"x{i}", model=MODEL, benchmark="vitabench",
                domain="delivery", task_id=f"T{i}", lang="en", trial=0), run_id="r")
            for seq in range(3):
                store.event(key(i), seq, "model_call", {
                    "role": "agent", "usage": {"prompt_tokens": 100 + seq},
                    "text": "hello world " * (seq + i)}, run_id="r", endpoint=MODEL)
    at_version(path, 5)
    c = sqlite3.connect(path)
    rows = c.execute("SELECT rowid, payload FROM event_rows ORDER BY rowid").fetchall()
    c.close()
    assert {type(p) for _, p in rows} == {str, bytes}  # samples as text, then compressed
    assert run_migration(path, 5) == (
        f"migrated run store {path} from schema 5 to {SCHEMA_VERSION} (backup: "
        "s.sqlite.schema5.bak); the facts reports sum (12 model calls, 0 finished episodes) "
        "filled in once; nothing else changed")
    c = sqlite3.connect(path)
    assert c.execute("SELECT rowid, payload FROM event_rows ORDER BY rowid").fetchall() == rows
    assert c.execute("SELECT count(*) FROM call_facts").fetchone()[0] == 12
    c.close()


@pytest.mark.parametrize("version", [0, 6, 7])
def test_versions_it_cannot_migrate_are_refused_untouched(tmp_path, version):
    path = small_store(tmp_path / "s.sqlite")
    c = connect(path)
    with pytest.raises(StoreError) as e:
        mg.migrate(c, path, version)
    c.close()
    assert str(e.value) == (f"run store {path} has schema version {version}, which this "
                            "sweepbench cannot migrate; use the sweepbench that wrote it")
    assert list(tmp_path.iterdir()) == [path]  # no backup either


def test_a_store_another_process_migrated_meanwhile_is_left_as_it_is(tmp_path):
    path = small_store(tmp_path / "s.sqlite")  # at the current version already
    c = connect(path)
    try:
        assert mg.migrate(c, path, 4) == f"run store {path} was migrated by another process"
        assert not c.in_transaction
    finally:
        c.close()
    assert user_version(path) == SCHEMA_VERSION


@pytest.fixture
def small_disk(monkeypatch, tmp_path):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(0, 0, 1_000_000))


def test_a_failed_step_rolls_back_and_says_what_to_do(tmp_path, monkeypatch, small_disk):
    path = at_version(small_store(tmp_path / "s.sqlite"), 4)
    c = sqlite3.connect(path)
    payloads = c.execute("SELECT payload FROM event_rows ORDER BY rowid").fetchall()
    c.close()

    def full(c):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(mg, "_summarize", full)
    c = connect(path)
    try:
        with pytest.raises(StoreError) as e:
            mg.migrate(c, path, 4)
        assert not c.in_transaction
    finally:
        c.close()
    size = path.stat().st_size / 1e6
    assert str(e.value) == (
        f"run store {path} has schema version 4 and could not be migrated to version "
        f"{SCHEMA_VERSION} (database or disk is full); the backup "
        f"{tmp_path / 's.sqlite.schema4.bak'} is untouched; the migration needs about "
        f"{size:.1f} MB beside the store and its disk has 1.0 MB free: free some space there "
        "and run the command again, or copy the store to a disk with room and open the copy")
    assert e.value.__cause__ is None and e.value.__suppress_context__
    assert user_version(path) == 4
    c = sqlite3.connect(path)
    assert c.execute("SELECT payload FROM event_rows ORDER BY rowid").fetchall() == payloads
    c.close()


def test_an_interrupt_in_a_step_rolls_back_and_goes_on_up(tmp_path, monkeypatch):
    path = at_version(small_store(tmp_path / "s.sqlite"), 4)

    def interrupted(c):
        raise KeyboardInterrupt

    monkeypatch.setattr(mg, "_summarize", interrupted)
    c = connect(path)
    try:
        with pytest.raises(KeyboardInterrupt):
            mg.migrate(c, path, 4)
        assert not c.in_transaction
    finally:
        c.close()
    assert user_version(path) == 4


def test_a_store_not_shrunk_says_why(tmp_path, monkeypatch):
    path = at_version(small_store(tmp_path / "s.sqlite"), 4)
    monkeypatch.setattr(mg, "_vacuum", lambda c: "database or disk is full")
    assert run_migration(path, 4).endswith(
        "; its 6 journal rows and 3 records compressed (the file was not shrunk: database or "
        "disk is full)" + FACTS_NOTE)


def test_vacuum_says_true_or_why_not(tmp_path):
    c = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    c.execute("CREATE TABLE t (x)")
    c.executemany("INSERT INTO t VALUES (?)", [(b"x" * 4000,)] * 50)
    c.execute("DELETE FROM t")
    before = c.execute("PRAGMA page_count").fetchone()[0]
    assert mg._vacuum(c) is True
    assert c.execute("PRAGMA page_count").fetchone()[0] < before
    c.execute("BEGIN")
    assert mg._vacuum(c) == "cannot VACUUM from within a transaction"
    c.close()


def test_a_backup_that_cannot_be_finished_leaves_no_partial_file(tmp_path, monkeypatch,
                                                                small_disk):
    path = at_version(small_store(tmp_path / "s.sqlite"), 4)
    backup = tmp_path / "s.sqlite.schema4.bak"
    seen = []

    def replace(src, dst):  # the copy written whole, its rename fails (and left a journal)
        seen.append((Path(src), Path(dst), Path(src).is_file()))
        Path(f"{src}-journal").write_bytes(b"j")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", replace)
    c = connect(path)
    try:
        with pytest.raises(StoreError) as e:
            mg.migrate(c, path, 4)
    finally:
        c.close()
    assert seen == [(tmp_path / "s.sqlite.schema4.bak.partial", backup, True)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite"]
    size = path.stat().st_size / 1e6
    assert str(e.value) == (
        f"run store {path} has schema version 4 and must be migrated to version "
        f"{SCHEMA_VERSION}, but no backup could be written to {backup} ([Errno 28] No space "
        f"left on device); the backup needs about {size:.1f} MB beside the store and its disk "
        "has 1.0 MB free: free some space there and run the command again, or copy the store "
        "to a disk with room and open the copy")
    assert user_version(path) == 4


# ---- the compression (schema 4 to 5) ------------------------------------------------------

class RecordingPacker(mg.Packer):
    """The codec's Packer, noting what the compression asks of it."""

    made: ClassVar[list[dict]] = []
    trained: ClassVar[list[tuple[str, list[bytes]]]] = []
    records: ClassVar[list[tuple[str, str, bytes]]] = []

    def __init__(self, conn, **kw):
        RecordingPacker.made.append(kw)
        super().__init__(conn, **kw)

    def train(self, grp, samples):
        RecordingPacker.trained.append((grp, list(samples)))
        super().train(grp, samples)

    def record(self, episode_key, benchmark, data):
        RecordingPacker.records.append((episode_key, benchmark, data))
        return super().record(episode_key, benchmark, data)


@pytest.fixture
def recording(monkeypatch):
    for name in ("made", "trained", "records"):
        monkeypatch.setattr(RecordingPacker, name, [])
    monkeypatch.setattr(mg, "Packer", RecordingPacker)
    return RecordingPacker


def payloads(c: sqlite3.Connection) -> list:
    return [p for (p,) in c.execute("SELECT payload FROM event_rows ORDER BY rowid")]


def compress(path: Path, monkeypatch, batch: int, train_after: int):
    monkeypatch.setattr(mg, "_BATCH", batch)
    c = connect(path)
    selects = []
    c.set_trace_callback(lambda sql: selects.append(sql) if "r.payload FROM" in sql else None)
    text = payloads(c)
    c.execute("BEGIN")
    counts = mg._compress(c, train_after=train_after)
    c.execute("COMMIT")
    return c, counts, text, selects


@pytest.mark.parametrize("batch", [3, 4])
def test_each_benchmark_is_trained_on_its_first_rows_read_in_batches(tmp_path, monkeypatch,
                                                                    recording, batch):
    """Two benchmarks' rows and a judge's (no benchmark): each group's first five rows, in the
    order written, whatever the batch; reading stops once every group has them."""
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        store.begin_run("r", {})
        for i in range(12):
            bench = ("vitabench", "t1")[i % 2]
            store.episode_started(EpisodeMeta(
                key=key(i), label=f"x{i}", model=MODEL, benchmark=bench, domain="d",
                task_id=f"T{i}", lang="en", trial=0), run_id="r")
            store.event(key(i), 0, "model_call", {"n": i}, run_id="r")
            if i < 5:
                store.event(key(i), 0, "model_call", {"judge": i}, run_id="r",
                            journal="judge|j|m")
    at_version(path, 4)
    c, counts, text, selects = compress(path, monkeypatch, batch, train_after=5)
    assert counts == {"rows": 17, "records": 0}
    assert recording.made == [{"train_after": 5}]
    c2 = sqlite3.connect(path)
    groups = [(p, b or "") for p, b in c2.execute(
        "SELECT r.payload, e.benchmark FROM event_rows r JOIN event_keys k USING (ep) "
        "LEFT JOIN episodes e ON e.episode_key = k.episode_key AND r.journal = '' "
        "ORDER BY r.rowid")]
    c2.close()
    assert len(groups) == 17 == len(text)
    first = {}
    for (_, grp), payload in zip(groups, text):
        if len(first.setdefault(grp, [])) < 5:
            first[grp].append(payload.encode())
    assert dict(recording.trained) == first and len(recording.trained) == 3
    # the last group's fifth row is the 15th: that batch is the last the sampling reads
    assert len(selects) == -(-15 // batch) + -(-17 // batch) + 1
    c.close()


def test_every_row_is_compressed_across_batches_and_counted(tmp_path, monkeypatch):
    path = at_version(small_store(tmp_path / "s.sqlite", episodes=5), 4)
    c, counts, text, _ = compress(path, monkeypatch, batch=3, train_after=2)
    after = payloads(c)
    c.close()
    assert counts == {"rows": 10, "records": 5} and len(after) == 10
    # too few samples to train on at first: rows stay text until the packer has trained
    assert isinstance(after[-1], bytes)
    c = connect(path)
    assert [r for (r,) in c.execute("SELECT sb_json(payload) FROM event_rows ORDER BY rowid")
            ] == text
    c.close()


def test_records_are_compressed_with_their_journal_and_compressed_ones_left(
        tmp_path, monkeypatch, recording):
    """Records as bytes (as schema 4 stored them) or text are compressed against their
    episode's journal; one already compressed is left as it is."""
    path = small_store(tmp_path / "s.sqlite", episodes=5)
    c = sqlite3.connect(path)
    done = c.execute("SELECT record FROM episodes WHERE episode_key = ?", (key(4),)).fetchone()[0]
    c.close()
    at_version(path, 4)
    c = connect(path)
    plain = dict(c.execute("SELECT episode_key, record FROM episodes"))
    c.execute("UPDATE episodes SET record = ? WHERE episode_key = ?",
              (plain[key(1)].decode(), key(1)))  # text
    c.execute("UPDATE episodes SET record = ? WHERE episode_key = ?", (done, key(4)))
    c.execute("UPDATE episodes SET record = NULL WHERE episode_key = ?", (key(3),))
    c.close()
    assert done[:1] == bytes((RECORD,))
    c, counts, _, _ = compress(path, monkeypatch, batch=3, train_after=400)
    assert counts == {"rows": 10, "records": 4}
    assert recording.records == [(key(i), "vitabench", plain[key(i)]) for i in (0, 1, 2)]
    stored = dict(c.execute("SELECT episode_key, record FROM episodes"))
    assert stored[key(4)] == done and stored[key(3)] is None
    for i in (0, 1, 2):
        tag, _, rows, end = _RECORD_HEAD.unpack_from(stored[key(i)])
        assert (tag, rows, end) == (RECORD, 2, 2)  # with its two journal rows
        assert c.execute("SELECT sb_record(?, ?)", (key(i), stored[key(i)])).fetchone()[0] == (
            plain[key(i)])
    c.close()


def test_a_record_that_does_not_decode_gets_no_facts_and_the_next_ones_do(tmp_path):
    path = small_store(tmp_path / "s.sqlite")
    garble_record(path, key(1))
    at_version(path, 5)
    assert run_migration(path, 5).endswith(
        "(6 model calls, 2 finished episodes) filled in once; nothing else changed")
    c = sqlite3.connect(path)
    assert [k for (k,) in c.execute("SELECT episode_key FROM episode_facts ORDER BY 1")] == [
        key(0), key(2)]
    c.close()
