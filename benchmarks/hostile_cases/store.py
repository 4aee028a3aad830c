"""The run store's attacks: a WAL file that is not the store's (point 2), damaged stores (4),
read-only mounts and full disks (5). Stores are built with the store API (``_stores``); mounts
are real, in a child process (``_mounts``)."""

from __future__ import annotations

import hashlib
import io
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from unittest import mock

import _mounts
from _base import Attack
from _stores import (
    garble_compressed_event,
    garble_event,
    garble_record,
    key,
    small_store,
    truncate,
    zstd_bomb_event,
)

from sweepbench.cli import main
from sweepbench.errors import StoreError
from sweepbench.store.merge import merge_stores
from sweepbench.store.runstore import RunStore


def _cli(*argv: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of a command run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _said(text: str, tmp: Path) -> str:
    """A message for the table: the attack's temporary folder left out."""
    return text.strip().replace(f"{tmp}/", "")[:160]


def _one_line(err: str) -> bool:
    return err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- 2: a WAL file that is not the store's ----------------------------------------------

def _wal_of_another_store(tmp: Path) -> tuple[str, bool]:
    ours = small_store(tmp / "ours.sqlite")
    before = _digest(ours)
    theirs = small_store(tmp / "theirs.sqlite", run_id="theirs")
    with RunStore(theirs) as other:  # its WAL as it is while a run writes
        other.begin_run("theirs-2", {"models": ["x"]})
        other.flush_sync()
        shutil.copyfile(tmp / "theirs.sqlite-wal", tmp / "ours.sqlite-wal")
    code, _, err = _cli("report", str(ours))
    held = (code == 2 and _one_line(err) and "is another store's" in err
            and str(tmp / "ours.sqlite-wal") in err and _digest(ours) == before)
    return _said(err, tmp), held


def _wal_of_another_database(tmp: Path) -> tuple[str, bool]:
    ours = small_store(tmp / "ours.sqlite")
    before = _digest(ours)
    other = sqlite3.connect(tmp / "other.sqlite", isolation_level=None)
    other.execute("PRAGMA journal_mode = WAL")
    other.execute("CREATE TABLE runs (run_id TEXT)")
    other.execute("INSERT INTO runs VALUES ('impostor')")
    shutil.copyfile(tmp / "other.sqlite-wal", tmp / "ours.sqlite-wal")
    other.close()
    try:
        RunStore(ours, create=False).close()
    except StoreError as e:
        return _said(str(e), tmp), "is not this store's" in str(e) and _digest(ours) == before
    return "opened", False


_KILLED = ("import os, sys\nfrom sweepbench.store.runstore import RunStore\n"
           "s = RunStore(sys.argv[1], create=False)\ns.begin_run('after', {})\n"
           "s.flush_sync()\nos._exit(0)\n")


def _own_wal_after_a_kill(tmp: Path) -> tuple[str, bool]:
    ours = small_store(tmp / "ours.sqlite")
    subprocess.run([sys.executable, "-c", _KILLED, str(ours)], check=True, cwd=_mounts.ROOT,
                   env={"PYTHONPATH": str(_mounts.ROOT)}, timeout=60)
    with RunStore(ours, create=False) as store:
        runs = [r["run_id"] for r in store.runs()]
    return f"runs {runs}", runs == ["r1", "after"]


# ---- 4: damaged stores -------------------------------------------------------------------

def _report_around(damage: Callable[[Path, str], None]) -> Callable:
    def attack(tmp: Path) -> tuple[str, bool]:
        store = small_store(tmp / "s.sqlite")
        damage(store, key(1))
        code, out, err = _cli("report", str(store))
        return (f"exit {code}; {_said(err, tmp)}",
                code == 0 and "ep-0001" in err and "left out" in err and "scripted/oracle" in out)
    return attack


def _compressed_row_damaged(tmp: Path) -> tuple[str, bool]:
    store = small_store(tmp / "s.sqlite")
    garble_compressed_event(store, key(1))
    code, out, err = _cli("report", str(store))
    try:
        with RunStore(store, create=False) as s:  # what a run continuing the episode reads
            s.events(key(1))
        said = "read"
    except StoreError as e:
        said = str(e)
    return (f"report exit {code}; journal: {_said(said, tmp)}",
            code == 0 and "ep-0001" in err and "left out" in err and "scripted/oracle" in out
            and "does not decode (compressed and damaged: zstd: " in said)


def _zstd_bomb(tmp: Path) -> tuple[str, bool]:
    store = small_store(tmp / "s.sqlite")
    zstd_bomb_event(store, key(1), size=1 << 30)  # 1 GiB of zeros in about 40 KB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    code, out, err = _cli("report", str(store))
    try:
        with RunStore(store, create=False) as s:
            s.events(key(1))
        said = "read"
    except StoreError as e:
        said = str(e)
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    took = time.perf_counter() - started
    return ((f"report exit {code}; peak RSS grew {grew_mb:.0f} MB in {took:.1f} s; journal: "
             f"{_said(said, tmp)}"),
            code == 0 and "left out" in err and "scripted/oracle" in out and grew_mb < 100
            and "bytes are read" in said)


def _truncated_report(tmp: Path) -> tuple[str, bool]:
    store = small_store(tmp / "s.sqlite", episodes=40)
    truncate(store)
    code, _, err = _cli("report", str(store))
    return _said(err, tmp), code == 2 and _one_line(err) and "is damaged (SQLite: " in err


def _merge_damaged_record(tmp: Path) -> tuple[str, bool]:
    store = small_store(tmp / "s.sqlite")
    garble_record(store, key(1))
    out = tmp / "out.sqlite"
    counts = merge_stores(out, [store])
    code, _, err = _cli("report", str(out))
    return (f"{counts.get('records_left_out')} left out; report of output: exit {code}",
            counts.get("records_left_out") == 1 and code == 0 and err == "")


def _merge_truncated_input(tmp: Path) -> tuple[str, bool]:
    good, bad = small_store(tmp / "a.sqlite"), small_store(tmp / "b.sqlite", episodes=40)
    truncate(bad)
    code, _, err = _cli("merge", str(tmp / "out.sqlite"), str(good), str(bad))
    return (_said(err, tmp), code == 2 and _one_line(err) and "is damaged" in err
            and "nothing was merged" in err and not (tmp / "out.sqlite").exists())


# ---- 5: disks and mounts -----------------------------------------------------------------

def _read_only(argv: list[str], ok: Callable[[subprocess.CompletedProcess], bool]) -> Callable:
    def attack(tmp: Path) -> tuple[str, bool]:
        folder = tmp / "archive"
        folder.mkdir()
        store = small_store(folder / "s.sqlite")
        done = _mounts.python("-m", "sweepbench.cli", *[a.format(store=store) for a in argv],
                              folder=folder, read_only=True)
        if done is None:
            return "skipped: no way to make a folder read-only here", True
        return (f"exit {done.returncode}; {_said(done.stderr or done.stdout[:60], tmp)}",
                ok(done) and "Traceback" not in done.stderr)
    return attack


_VIEW = ("import sys\nfrom pathlib import Path\n"
         "from sweepbench.view.server import build_app, prepare\n"
         "prepare([Path(sys.argv[1])], print)\nbuild_app([Path(sys.argv[1])])\nprint('served')\n")


def _view_read_only(tmp: Path) -> tuple[str, bool]:
    folder = tmp / "archive"
    folder.mkdir()
    store = small_store(folder / "s.sqlite")
    done = _mounts.python("-c", _VIEW, str(store), folder=folder, read_only=True)
    if done is None:
        return "skipped: no way to make a folder read-only here", True
    return (f"exit {done.returncode}; {_said(done.stderr or done.stdout, tmp)}",
            done.returncode == 0 and done.stdout == "served\n")


def _full_disk_at_the_lock(tmp: Path) -> tuple[str, bool]:
    full = OSError(28, "No space left on device")
    with mock.patch("sweepbench.store.lock.os.pwrite", side_effect=full):
        code, _, err = _cli("run", "--out", str(tmp / "s.sqlite"), "--no-progress", "--limit",
                            "1")
    return _said(err, tmp), code == 2 and _one_line(err) and "free some space" in err


_MIGRATE = ("import os, sys\nfrom sweepbench.errors import StoreError\n"
            "from sweepbench.store.runstore import RunStore\n"
            "try:\n    RunStore(sys.argv[1], create=False).close()\n    print('migrated')\n"
            "except StoreError as e:\n    print(e)\n"
            "print(sorted(os.listdir(os.path.dirname(sys.argv[1]))))\n")


def _migration_on_a_full_disk(tmp: Path) -> tuple[str, bool]:
    folder = tmp / "disk"
    folder.mkdir()
    store = small_store(folder / "s.sqlite", episodes=60)
    db = sqlite3.connect(store)
    db.execute("DROP TABLE store_identity")
    db.execute("PRAGMA user_version = 3")
    db.close()
    size = store.stat().st_size
    done = _mounts.python("-c", _MIGRATE, str(store), folder=folder,
                          disk_kb=(size + size // 2) // 1024)
    if done is None:
        return "skipped: no way to make a small disk here", True
    lines = done.stdout.splitlines()
    return (_said(" / ".join(lines), tmp)[-160:], len(lines) == 2 and "free some space" in lines[0]
            and lines[1] == "['s.sqlite']")


ATTACKS = [
    Attack(2, "WAL of another store (same schema) beside a store", "refused naming both "
           "files; store unchanged", _wal_of_another_store),
    Attack(2, "WAL of another SQLite database beside a store", "refused; store unchanged",
           _wal_of_another_database),
    Attack(2, "the store's own WAL left by a killed run", "applied: the killed run's commit "
           "is there", _own_wal_after_a_kill),
    Attack(4, "an episode record that does not decode", "report goes on, lists it (exit 0)",
           _report_around(garble_record)),
    Attack(4, "a journal row that does not decode", "report goes on, lists it (exit 0)",
           _report_around(garble_event)),
    Attack(4, "a compressed journal row with a bit flipped", "report goes on, lists it "
           "(exit 0); the journal's reader says 'compressed and damaged'",
           _compressed_row_damaged),
    Attack(4, "a zstd bomb in a compressed journal row (1 GiB of zeros)", "refused before "
           "decoding (peak RSS grows < 100 MB); report goes on, lists it", _zstd_bomb),
    Attack(4, "a truncated store file", "report: 'is damaged (SQLite: ...)', one line, exit 2",
           _truncated_report),
    Attack(4, "merge of a store with an undecodable record", "left out with a count; output "
           "reports cleanly", _merge_damaged_record),
    Attack(4, "merge with a truncated input", "refused before writing: no output file",
           _merge_truncated_input),
    Attack(5, "report of a store on a read-only mount", "works, exit 0",
           _read_only(["report", "{store}", "--json"], lambda d: d.returncode == 0)),
    Attack(5, "export of a store on a read-only mount", "works, exit 0",
           _read_only(["export", "{store}", "--csv", "/dev/null"], lambda d: d.returncode == 0)),
    Attack(5, "view of a store on a read-only mount", "the viewer opens it (what `view` does "
           "before serving)", _view_read_only),
    Attack(5, "run into a store on a read-only mount", "one line with advice, exit 2",
           _read_only(["run", "--out", "{store}", "--no-progress", "--limit", "1"],
                      lambda d: d.returncode == 2 and d.stderr.startswith(
                          "error: cannot lock run store") and d.stderr.count("\n") == 1)),
    Attack(5, "a full disk when the run takes the store's lock", "one line with advice, "
           "exit 2", _full_disk_at_the_lock),
    Attack(5, "a migration on a full disk (real small tmpfs)", "one line with the room "
           "needed; no partial backup", _migration_on_a_full_disk),
]
