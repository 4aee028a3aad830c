"""The response cache in a whole `sweepbench run`: the run store (or any file that cannot be a
cache) is a one-line setup error before any episode; a cache that breaks is said once, naming
it, and every episode still finishes by asking the endpoint (none charged to the model)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path


def _run(tmp: Path, cache: Path, out: str) -> subprocess.CompletedProcess:
    config = tmp / "sweep.toml"
    config.write_text(f'response_cache = "{cache}"\n', encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "sweepbench.cli", "run", "--config", str(config), "--benchmark",
         "t1:flight+hotel+bar", "--limit", "2", "--trials", "2", "--model", "scripted/oracle",
         "--out", str(tmp / out), "--no-progress"],
        capture_output=True, text=True, timeout=300, check=False)


def _episodes(store: Path) -> dict[str, int]:
    with sqlite3.connect(store) as db:
        return dict(db.execute("SELECT status, count(*) FROM episodes GROUP BY status"))


def test_the_run_store_as_cache_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = _run(tmp_path, tmp_path / "s.sqlite", "s.sqlite")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        f"error: response cache {tmp_path / 's.sqlite'} is the run store: give the cache a "
        "file of its own (response_cache)"]
    with sqlite3.connect(tmp_path / "s.sqlite") as db:  # no table added, no episode run
        assert "responses" not in {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        assert db.execute("SELECT count(*) FROM episodes").fetchone() == (0,)


def test_a_text_file_as_cache_is_one_line_and_exit_2(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n" * 300)
    proc = _run(tmp_path, notes, "s.sqlite")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        f"error: response cache {notes} cannot be used as a cache: file is not a database"]


def test_a_corrupted_cache_is_said_once_and_every_episode_finishes(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    assert _run(tmp_path, cache, "first.sqlite").returncode == 0
    with sqlite3.connect(cache) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert db.execute("SELECT count(*) FROM responses").fetchone()[0] > 0
    data = bytearray(cache.read_bytes())
    data[4096:] = b"\xa5" * (len(data) - 4096)
    cache.write_bytes(bytes(data))
    proc = _run(tmp_path, cache, "second.sqlite")
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stderr.splitlines() if "response cache" in line] == [
        f"response cache {cache} failed (database disk image is malformed): not used any "
        "more; calls go to their endpoints"]
    assert _episodes(tmp_path / "second.sqlite") == {"done": 4}
