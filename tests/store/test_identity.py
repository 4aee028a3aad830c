"""A WAL file beside a store that is not its own (another store's, of the same schema, or
another database's) is refused before SQLite applies it, naming both files; the store's own
WAL, left by a killed run, is applied as always."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from sweepbench.errors import StoreError
from sweepbench.store.identity import _wal_ids, main_identity
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.runstore import RunStore
from sweepbench.store.schema import SCHEMA_VERSION
from sweepbench.view.queries import StoreReader

ROOT = Path(__file__).resolve().parents[2]


def _store(path: Path, run_id: str) -> Path:
    with RunStore(path) as store:
        store.begin_run(run_id, {"models": ["m"]})
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _foreign_wal(source: Path, into: Path) -> None:
    """Copy ``source``'s WAL, as it is while a run writes, beside ``into``."""
    with RunStore(source) as other:
        other.begin_run("theirs", {"models": ["other"]})
        other.flush_sync()
        shutil.copyfile(source.with_name(source.name + "-wal"), into.with_name(into.name + "-wal"))


def test_another_stores_wal_of_the_same_schema_is_refused_and_the_store_is_kept(tmp_path):
    ours = _store(tmp_path / "ours.sqlite", "mine")
    before = _digest(ours)
    _foreign_wal(_store(tmp_path / "theirs.sqlite", "theirs-0"), ours)
    wal = tmp_path / "ours.sqlite-wal"
    own_id = main_identity(ours)[0].split(":")[1][:12]
    with pytest.raises(StoreError) as info:
        RunStore(ours)
    message = str(info.value)
    assert message.startswith(f"run store {ours}: the WAL file beside it, {wal}, is another "
                              "store's (id ")
    assert f", this one's {own_id}); SQLite would show its contents" in message
    assert message.endswith(f"Nothing was read or written: move {wal} (and ours.sqlite-shm, "
                            "if any) out of the folder, then run the command again")
    assert _digest(ours) == before and wal.exists()
    wal.rename(tmp_path / "aside-wal")
    with RunStore(ours, create=False) as store:
        assert [r["run_id"] for r in store.runs()] == ["mine"]


def test_a_wal_of_another_database_is_refused(tmp_path):
    ours = _store(tmp_path / "ours.sqlite", "mine")
    other = sqlite3.connect(tmp_path / "other.sqlite", isolation_level=None)
    other.execute("PRAGMA journal_mode = WAL")
    other.execute("CREATE TABLE t (x)")
    other.execute("INSERT INTO t VALUES (1)")
    shutil.copyfile(tmp_path / "other.sqlite-wal", tmp_path / "ours.sqlite-wal")
    other.close()
    with pytest.raises(StoreError, match=r"is not this store's \(its commits never wrote the "
                                         r"store's id"):
        RunStore(ours)


KILLED = """
import os, sys
from sweepbench.store.runstore import RunStore
store = RunStore(sys.argv[1], create=False)
store.begin_run("after", {"models": ["m"]})
store.flush_sync()
os._exit(0)  # killed: the WAL stays, with the writer's commits only
"""


def test_the_stores_own_wal_left_by_a_killed_run_is_applied(tmp_path):
    ours = _store(tmp_path / "ours.sqlite", "before")
    subprocess.run([sys.executable, "-c", KILLED, str(ours)], check=True, cwd=ROOT,
                   env={"PYTHONPATH": str(ROOT)}, timeout=60)
    assert (tmp_path / "ours.sqlite-wal").stat().st_size > 32
    with RunStore(ours, create=False) as store:
        assert [r["run_id"] for r in store.runs()] == ["before", "after"]


def test_a_schema_3_store_gets_an_id_when_migrated_and_keeps_it(tmp_path):
    ours = _store(tmp_path / "ours.sqlite", "mine")
    c = sqlite3.connect(ours)
    c.execute("DROP TABLE store_identity")
    c.execute("PRAGMA user_version = 3")
    c.close()
    assert main_identity(ours) is None
    with RunStore(ours, create=False) as store:
        assert store.migrated == (
            f"migrated run store {ours} from schema 3 to {SCHEMA_VERSION} (backup: "
            "ours.sqlite.schema3.bak): the store has an id now, which tells its WAL file from "
            "another's; its 0 journal rows and 0 records compressed; the facts reports sum "
            "(0 model calls, 0 finished episodes) filled in once")
        assert [r["run_id"] for r in store.runs()] == ["mine"]
    first = main_identity(ours)
    assert first is not None and first[0].startswith("sweepbench-store:")
    RunStore(ours).close()
    assert main_identity(ours) == first


def test_report_export_and_view_refuse_another_stores_wal_too(tmp_path):
    ours = _store(tmp_path / "ours.sqlite", "mine")
    _foreign_wal(_store(tmp_path / "theirs.sqlite", "theirs-0"), ours)
    with pytest.raises(StoreError, match="is another store's"):
        ReadOnlyStore(ours)
    with pytest.raises(StoreError, match="is another store's"):
        StoreReader(ours)


def test_a_wal_in_use_by_an_open_connection_is_not_checked(tmp_path):
    """A program with the store open (here: this process, not sweepbench's writer) shares its
    WAL as SQLite does: it is in use, not left over."""
    ours = _store(tmp_path / "ours.sqlite", "mine")
    other = sqlite3.connect(ours, isolation_level=None)
    other.execute("DELETE FROM runs")  # a commit that does not write the store's id
    try:
        with RunStore(ours, create=False) as store:
            assert store.runs() == []
    finally:
        other.close()
    with RunStore(ours, create=False) as store:  # closed: checkpointed, nothing left over
        assert store.runs() == []


def test_a_new_store_has_its_id_in_the_main_file_before_any_checkpoint_of_its_writer(tmp_path):
    """Else a store killed in its first second (before the checkpointer's first pass) could
    not tell its WAL from another's."""
    path = tmp_path / "new.sqlite"
    with RunStore(path, checkpoint_every_s=3600) as store:
        first = main_identity(path)
        assert first is not None and first[0].startswith("sweepbench-store:")
        assert store.writer_stats["checkpoints"] == 0


# ---- the WAL read raw: header checks, commits, generations, the id in each frame -------------

_SALT = (7, 9)
_ID_A = b"sweepbench-store:" + b"a" * 32


def raw_wal(tmp_path, frames, *, page_size=512, magic=0x377F0682):
    """A WAL file: its header, then ``frames`` of (page, db_size, salts, body)."""
    data = struct.pack(">8I", magic, 3007000, page_size, 0, *_SALT, 0, 0)
    for page, db_size, salts, body in frames:
        data += struct.pack(">6I", page, db_size, *salts, 0, 0) + body.ljust(page_size, b"\0")
    path = tmp_path / "w.sqlite-wal"
    path.write_bytes(data)
    return path, data[:32]


@pytest.mark.parametrize(("page_size", "magic", "read"), [
    (512, 0x377F0682, True), (1024, 0x377F0683, True), (256, 0x377F0682, False),
    (1000, 0x377F0682, False), (1024, 0x12345678, False)])
def test_a_wal_header_is_read_only_with_its_magic_and_a_power_of_two_page(
        tmp_path, page_size, magic, read):
    path, header = raw_wal(tmp_path, [(2, 1, _SALT, _ID_A)], page_size=page_size, magic=magic)
    assert _wal_ids(path, 2) == ((header, 1, [_ID_A]) if read else None)


def test_only_committed_frames_count_and_each_frame_of_the_page_is_read(tmp_path):
    path, header = raw_wal(tmp_path, [
        (2, 0, _SALT, _ID_A), (3, 0, _SALT, b""), (2, 5, _SALT, b"no id here"),  # commit 1
        (2, 0, _SALT, _ID_A)])  # not committed
    assert _wal_ids(path, 2) == (header, 3, [_ID_A, None])
    none_committed, _ = raw_wal(tmp_path, [(2, 0, _SALT, _ID_A)])
    assert _wal_ids(none_committed, 2) is None


def test_a_frame_of_an_older_generation_ends_the_wal_where_sqlite_ends_it(tmp_path):
    path, header = raw_wal(tmp_path, [(2, 1, _SALT, _ID_A), (2, 1, (1, 1), b"")])
    assert _wal_ids(path, 2) == (header, 1, [_ID_A])
