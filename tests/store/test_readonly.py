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
from pathlib import Path

import pytest

from sweepbench.cli import main
from sweepbench.store.readonly import ReadOnlyStore

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
                              f"to version 5, but no backup could be written to "
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
