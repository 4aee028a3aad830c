"""Disks and mounts: a store on a read-only mount is reported, exported and viewed where it
is (no lock file, no WAL writes); a run there, a lock on a full disk and a migration on a full
disk end in one line with advice, leave nothing partial behind, and exit 2.

Real mounts, in a child process (benchmarks/hostile_cases/_mounts.py): as root a read-only
bind mount or a small tmpfs in a mount namespace of the child's own; otherwise chmod, and the
full-disk cases skip."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import quote

import pytest

from sweepbench.cli import main
from sweepbench.errors import OlderStoreError, StoreError
from sweepbench.store import readonly
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.schema import APPLICATION_ID, READABLE_SINCE, SCHEMA_VERSION

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "hostile_cases"))
import _mounts
from _stores import small_store

CLI = ("-m", "sweepbench.cli")


def _on_read_only(folder: Path, *argv: str) -> subprocess.CompletedProcess:
    done = _mounts.python(*CLI, *argv, folder=folder, read_only=True)
    if done is None:
        pytest.skip("no way to make a folder read-only here")
    return done


def _killed_after(store: Path, run_id: str) -> None:
    """A run of ``run_id`` into ``store`` killed after its commit: its WAL and -shm stay."""
    code = ("import os, sys\nfrom sweepbench.store.runstore import RunStore\n"
            "s = RunStore(sys.argv[1], create=False)\n"
            "s.begin_run(sys.argv[2], {'models': ['m']}, info={'command': 'run'})\n"
            "s.flush_sync()\nos._exit(0)\n")
    subprocess.run([sys.executable, "-c", code, str(store), run_id], check=True,
                   cwd=_mounts.ROOT, env={"PYTHONPATH": str(_mounts.ROOT)}, timeout=60)


VIEW = """
import sys
from pathlib import Path
from sweepbench.view.queries import StoreReader
from sweepbench.view.server import build_app, prepare
prepare([Path(sys.argv[1])], print)  # what `sweepbench view` does before it serves
build_app([Path(sys.argv[1])])
print([r["run_id"] for r in StoreReader(sys.argv[1]).runs()])
"""


def test_report_export_and_view_read_a_store_on_a_read_only_mount(tmp_path):
    folder = tmp_path / "archive"
    folder.mkdir()
    store = small_store(folder / "s.sqlite")
    out = tmp_path / "out.csv"
    done = _on_read_only(folder, "report", str(store), "--json")
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["runs"] == ["r1"]
    done = _on_read_only(folder, "export", str(store), "--csv", str(out))
    assert (done.returncode, done.stderr) == (0, f"3 rows -> {out}\n")
    view = _mounts.python("-c", VIEW, str(store), folder=folder, read_only=True)
    assert (view.returncode, view.stdout, view.stderr) == (0, "['r1']\n", "")
    assert sorted(p.name for p in folder.iterdir()) == ["s.sqlite"]


def test_a_killed_runs_wal_is_read_on_a_read_only_mount(tmp_path):
    folder = tmp_path / "archive"
    folder.mkdir()
    store = small_store(folder / "s.sqlite")
    _killed_after(store, "after")
    done = _on_read_only(folder, "report", str(store), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["runs"] == ["r1", "after"]


def test_a_wal_without_its_shm_on_a_read_only_mount_says_to_copy_both(tmp_path):
    folder = tmp_path / "archive"
    folder.mkdir()
    store = small_store(folder / "s.sqlite")
    _killed_after(store, "after")
    (folder / "s.sqlite-shm").unlink()
    done = _on_read_only(folder, "report", str(store))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: cannot read run store {store} where it is: its WAL "
                                  "file s.sqlite-wal holds commits SQLite reads only with a "
                                  "s.sqlite-shm file, which it cannot create there (")
    assert done.stderr.endswith("copy s.sqlite and s.sqlite-wal together to a writable place "
                                "and read the copy\n")
    assert len(done.stderr.splitlines()) == 1


def test_a_run_into_a_store_on_a_read_only_mount_is_one_line(tmp_path):
    folder = tmp_path / "archive"
    folder.mkdir()
    store = small_store(folder / "s.sqlite")
    done = _on_read_only(folder, "run", "--out", str(store), "--no-progress", "--limit", "1",
                         "--no-preflight")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr in (
        f"error: cannot lock run store {store}: {store}.lock: {why}; a sweep writes to its "
        "store: copy the store to a writable place, or use another --out (report, export and "
        "view read it where it is)\n" for why in ("Read-only file system", "Permission denied"))


def test_reading_where_the_store_may_be_written_leaves_no_files_behind(tmp_path):
    store = small_store(tmp_path / "s.sqlite")
    with ReadOnlyStore(store) as s:
        assert [r["run_id"] for r in s.runs()] == ["r1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite"]


def test_a_full_disk_at_the_lock_ends_a_run_in_one_line(tmp_path, monkeypatch, capsys):
    def full(fd: int, data: bytes, offset: int) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("sweepbench.store.lock.os.pwrite", full)
    store = tmp_path / "s.sqlite"
    assert main(["run", "--out", str(store), "--no-progress", "--limit", "1"]) == 2
    assert capsys.readouterr().err == (
        f"error: cannot lock run store {store}: {store}.lock: No space left on device; free "
        "some space on its disk and run the command again\n")


MIGRATE = """
import os, sys
from sweepbench.errors import StoreError
from sweepbench.store.runstore import RunStore
try:
    RunStore(sys.argv[1], create=False).close()
    print("migrated")
except StoreError as e:
    print(e)
print(sorted(os.listdir(os.path.dirname(sys.argv[1]))))
"""


def test_a_migration_on_a_full_disk_leaves_no_partial_backup_and_says_how_much_room(tmp_path):
    folder = tmp_path / "disk"
    folder.mkdir()
    store = small_store(folder / "s.sqlite", episodes=60)
    db = sqlite3.connect(store)
    db.execute("DROP TABLE store_identity")
    db.execute("PRAGMA user_version = 3")  # a store of schema 3: migrated on open
    db.close()
    size = store.stat().st_size
    done = _mounts.python("-c", MIGRATE, str(store), folder=folder,
                          disk_kb=(size + size // 2) // 1024)
    if done is None:
        pytest.skip("no way to make a small disk here")
    message, listing = done.stdout.splitlines()
    assert message.startswith(f"run store {store} has schema version 3 and must be migrated "
                              f"to version {SCHEMA_VERSION}, but no backup could be written to "
                              f"{store}.schema3.bak (database or disk is full); the backup "
                              f"needs about {size / 1e6:.1f} MB beside the store and its disk "
                              "has ")
    assert message.endswith(" MB free: free some space there and run the command again, or "
                            "copy the store to a disk with room and open the copy")
    assert listing == "['s.sqlite']"


def test_a_store_of_schema_3_is_read_as_it_is(tmp_path, capsys):
    store = small_store(tmp_path / "s.sqlite")
    db = sqlite3.connect(store)
    db.execute("DROP TABLE store_identity")
    db.execute("PRAGMA user_version = 3")
    db.close()
    assert main(["report", str(store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == ["r1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite"]  # no migration, no backup
    db = sqlite3.connect(store)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 3
    db.close()


def test_a_full_disk_when_the_store_opens_is_one_line_with_advice(tmp_path, monkeypatch, capsys):
    def full(path: Path, busy_timeout: float) -> sqlite3.Connection:  # SQLite, out of room
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr("sweepbench.store.runstore._connect", full)
    store = tmp_path / "s.sqlite"
    assert main(["run", "--out", str(store), "--no-progress", "--limit", "1"]) == 2
    assert capsys.readouterr().err == (
        f"error: cannot open run store {store}: database or disk is full; free some space on "
        "its disk and run the command again\n")


# ---- in this process: which connection is tried, and why each falls through ------------------

def _error(message: str, name: str) -> sqlite3.Error:
    e = sqlite3.OperationalError(message)
    e.sqlite_errorname = name
    return e


READ_ONLY = _error("attempt to write a readonly database", "SQLITE_READONLY")
DAMAGED = _error("database disk image is malformed", "SQLITE_CORRUPT")
REAL_OPEN = readonly._open


def tried(monkeypatch, tmp_path, refuse: dict[str, sqlite3.Error], wal: bytes | None = None):
    """A small store; ``_open`` raising ``refuse[mode]`` for the modes in it: (the result of
    connect_read_only or its error, the modes tried in order)."""
    path = small_store(tmp_path / "s.sqlite", episodes=1)
    if wal is not None:
        (tmp_path / "s.sqlite-wal").write_bytes(wal)
    modes: list[str] = []
    prefix = f"file:{quote(str(path.resolve()))}?"

    def spy(uri: str):
        assert uri.startswith(prefix)
        mode = uri[len(prefix):]
        modes.append(mode)
        if mode in refuse:
            raise refuse[mode]
        return REAL_OPEN(uri)

    monkeypatch.setattr(readonly, "_open", spy)
    try:
        got = readonly.connect_read_only(path)
    except StoreError as e:
        got = e
    return path, got, modes


def test_a_store_that_may_be_written_is_read_as_any_reader_reads_it(monkeypatch, tmp_path):
    _, conn, modes = tried(monkeypatch, tmp_path, {})
    assert modes == ["mode=rw"]
    assert conn.execute("PRAGMA query_only").fetchone()[0] == 1
    seen: list[int] = []  # the viewer reads it from its own threads
    reader = threading.Thread(target=lambda: seen.append(
        conn.execute("SELECT count(*) FROM episodes").fetchone()[0]))
    reader.start()
    reader.join()
    assert seen == [1]
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("DELETE FROM episodes")
    conn.close()


def test_a_read_only_place_falls_back_to_mode_ro_then_immutable(monkeypatch, tmp_path):
    _, conn, modes = tried(monkeypatch, tmp_path, {"mode=rw": READ_ONLY})
    assert modes == ["mode=rw", "mode=ro"] and isinstance(conn, sqlite3.Connection)
    conn.close()
    for i, wal in enumerate((None, b"")):  # no WAL, or an empty one: nothing is left out
        (tmp_path / str(i)).mkdir()
        _, conn, modes = tried(monkeypatch, tmp_path / str(i), {
            "mode=rw": READ_ONLY, "mode=ro": READ_ONLY}, wal=wal)
        assert modes == ["mode=rw", "mode=ro", "immutable=1"]
        conn.close()


def test_a_wal_that_cannot_be_read_there_says_to_copy_both_files(monkeypatch, tmp_path):
    path, e, modes = tried(monkeypatch, tmp_path, {"mode=rw": READ_ONLY, "mode=ro": READ_ONLY},
                           wal=b"x")  # one byte is a WAL SQLite would look at
    assert modes == ["mode=rw", "mode=ro"]
    assert str(e) == (
        f"cannot read run store {path} where it is: its WAL file s.sqlite-wal holds commits "
        f"SQLite reads only with a s.sqlite-shm file, which it cannot create there ({READ_ONLY}); "
        "copy s.sqlite and s.sqlite-wal together to a writable place and read the copy")
    assert e.__cause__ is READ_ONLY


@pytest.mark.parametrize("refuse", [{"mode=rw": DAMAGED},
                                    {"mode=rw": READ_ONLY, "mode=ro": DAMAGED},
                                    {"mode=rw": READ_ONLY, "mode=ro": READ_ONLY,
                                     "immutable=1": DAMAGED}])
def test_any_other_error_on_the_way_is_the_stores_own_error(monkeypatch, tmp_path, refuse):
    path, e, modes = tried(monkeypatch, tmp_path, refuse)
    assert modes == list(refuse)  # it stops at the first error that is not about writing
    assert str(e).startswith(f"run store {path} is damaged (SQLite: {DAMAGED})")
    assert e.__cause__ is DAMAGED


def test_a_connection_that_cannot_read_the_file_is_closed(monkeypatch, tmp_path):
    closed: list[bool] = []
    real_connect = sqlite3.connect

    def connect(*args, **kw):
        conn = real_connect(*args, **kw)

        class Watched:
            def execute(self, sql):
                return conn.execute(sql)

            def close(self):
                closed.append(True)
                conn.close()
        return Watched()

    monkeypatch.setattr(readonly.sqlite3, "connect", connect)
    (tmp_path / "t.sqlite").write_bytes(b"not a database at all, only text " * 40)
    with pytest.raises(sqlite3.DatabaseError):
        readonly._open(f"file:{quote(str(tmp_path / 't.sqlite'))}?mode=rw")
    assert closed == [True]


def _store_with(tmp_path, app_id: int, version: int) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / f"{app_id}-{version}.sqlite")
    conn.execute(f"PRAGMA application_id = {app_id}")
    conn.execute(f"PRAGMA user_version = {version}")
    return conn


@pytest.mark.parametrize("version", [READABLE_SINCE, SCHEMA_VERSION])
def test_the_schemas_read_as_they_are_are_from_readable_since_to_this_one(tmp_path, version):
    readonly.check_readable(tmp_path / "s", _store_with(tmp_path, APPLICATION_ID, version))


def test_other_files_and_schemas_are_refused_in_their_own_words(tmp_path):
    p = tmp_path / "s"
    with pytest.raises(StoreError) as info:
        readonly.check_readable(p, _store_with(tmp_path, APPLICATION_ID + 1, SCHEMA_VERSION))
    assert str(info.value) == f"{p} is an SQLite file but not a sweepbench run store"
    with pytest.raises(StoreError) as info:
        readonly.check_readable(p, _store_with(tmp_path, APPLICATION_ID, SCHEMA_VERSION + 1))
    assert str(info.value) == (f"run store {p} has schema version {SCHEMA_VERSION + 1}; this "
                               f"sweepbench reads version {SCHEMA_VERSION} (upgrade sweepbench)")
    with pytest.raises(OlderStoreError) as info:
        readonly.check_readable(p, _store_with(tmp_path, APPLICATION_ID, READABLE_SINCE - 1))
    assert str(info.value) == (f"run store {p} has schema version {READABLE_SINCE - 1} and must "
                               f"be migrated to version {SCHEMA_VERSION} before it is read")
    closed = _store_with(tmp_path, APPLICATION_ID, SCHEMA_VERSION)
    closed.close()
    with pytest.raises(StoreError) as info:
        readonly.check_readable(p, closed)
    assert str(info.value) == f"cannot open run store {p}: Cannot operate on a closed database."


def test_a_path_that_is_no_file_is_said_so(tmp_path):
    with pytest.raises(StoreError, match=f"^run store {tmp_path / 'none'} does not exist$"):
        ReadOnlyStore(tmp_path / "none")
    with pytest.raises(StoreError, match=f"^run store {tmp_path} is not a file$"):
        ReadOnlyStore(tmp_path)


def test_a_file_that_is_no_store_is_refused_and_its_connection_closed(tmp_path, monkeypatch):
    conns: list[sqlite3.Connection] = []
    real = readonly.connect_read_only
    monkeypatch.setattr(readonly, "connect_read_only", lambda p: conns.append(real(p)) or conns[-1])
    other = _store_with(tmp_path, 7, 1)
    other.execute("CREATE TABLE t (x)")
    other.commit()
    other.close()
    with pytest.raises(StoreError) as info:
        ReadOnlyStore(tmp_path / "7-1.sqlite")
    assert str(info.value) == f"{tmp_path / '7-1.sqlite'} is an SQLite file but not a sweepbench run store"
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        conns[0].execute("SELECT 1")


def test_a_read_only_store_reads_and_closes_as_a_context_manager(tmp_path):
    path = small_store(tmp_path / "s.sqlite", episodes=1)
    with ReadOnlyStore(path) as store:
        assert store.migrated is None and store.path == path
        assert [r["run_id"] for r in store.runs()] == ["r1"]
    with pytest.raises(StoreError, match=f"^run store {path} is closed$"):
        store.runs()
