"""One sweep per store: a second process is refused at once, naming the store and the holder's
pid; the lock dies with its holder (SIGKILL), so it never blocks a later run. A model listed
twice is a config error."""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sweepbench.errors import ConfigError, StoreError, StoreLocked
from sweepbench.config import load_config
from sweepbench.store.lock import StoreLock, lock_path


def _cli(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "sweepbench.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def test_second_holder_is_refused_naming_store_and_pid(tmp_path: Path) -> None:
    store = tmp_path / "runs" / "s.sqlite"
    with StoreLock(store):
        assert lock_path(store).read_text().strip() == str(os.getpid())
        with pytest.raises(StoreLocked) as info:
            StoreLock(store).acquire()
        assert str(store) in str(info.value) and f"pid {os.getpid()}" in str(info.value)
    with StoreLock(store):  # released: free again
        pass


def test_lock_file_is_the_store_name_with_lock_appended(tmp_path: Path) -> None:
    assert lock_path(tmp_path / "s.sqlite") == tmp_path / "s.sqlite.lock"
    assert lock_path(str(tmp_path / "s")) == tmp_path / "s.lock"


def test_lock_creates_every_missing_parent_directory(tmp_path: Path) -> None:
    store = tmp_path / "a" / "b" / "s.sqlite"
    with StoreLock(store):
        assert lock_path(store).read_text() == f"{os.getpid()}\n"


def test_lock_file_is_created_readable_by_all_and_writable_by_its_owner(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        with StoreLock(tmp_path / "s.sqlite") as lock:
            assert lock.path.stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(old)


def test_a_released_lock_file_names_no_holder(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    with StoreLock(store):
        pass
    assert lock_path(store).read_bytes() == b""


def test_release_without_acquire_does_nothing(tmp_path: Path) -> None:
    lock = StoreLock(tmp_path / "s.sqlite")
    lock.release()
    assert not lock_path(tmp_path / "s.sqlite").exists()


def _held_by_another_with(path: Path, content: bytes) -> int:
    """An fd of this process holding ``path``'s flock, as a foreign holder would."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, content)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


@pytest.mark.parametrize("content, named", [
    (b"", "unknown"),  # the holder between truncating the file and writing its pid
    (b"\xff12\n", "\ufffd12"),  # not ASCII: replaced, not an error
    (b"9" * 40, "9" * 32),  # at most 32 bytes of it
])
def test_refusal_names_what_the_lock_file_holds(tmp_path: Path, content: bytes,
                                                named: str) -> None:
    store = tmp_path / "s.sqlite"
    fd = _held_by_another_with(lock_path(store), content)
    try:
        with pytest.raises(StoreLocked) as info:
            StoreLock(store).acquire()
    finally:
        os.close(fd)
    assert str(info.value) == (f"run store {store} is in use by another sweepbench process "
                               f"(pid {named}); wait for it to finish or stop it, or use "
                               "another --out")


def _acquire_fails(path: Path) -> StoreError:
    """The StoreError a lock on ``path`` fails with; checked to leave no file open and no
    lock held."""
    before = set(os.listdir("/proc/self/fd"))
    lock = StoreLock(path)
    with pytest.raises(StoreError) as info:
        lock.acquire()
    assert set(os.listdir("/proc/self/fd")) == before and lock._fd is None
    return info.value


def test_a_failing_flock_closes_the_file_and_raises_its_own_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_locks(fd: int, op: int) -> None:
        raise OSError(errno.ENOLCK, "no locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    error = _acquire_fails(tmp_path / "s.sqlite")
    assert str(error) == (f"cannot lock run store {tmp_path / 's.sqlite'}: "
                          f"{tmp_path / 's.sqlite.lock'}: no locks available; fix the "
                          "cause and run the command again")
    assert error.__cause__.errno == errno.ENOLCK


def test_a_full_disk_while_locking_is_a_store_error_with_advice_and_no_lock_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int, data: bytes, offset: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "pwrite", full)
    error = _acquire_fails(tmp_path / "s.sqlite")
    assert str(error) == (f"cannot lock run store {tmp_path / 's.sqlite'}: "
                          f"{tmp_path / 's.sqlite.lock'}: No space left on device; free "
                          "some space on its disk and run the command again")
    monkeypatch.undo()
    with StoreLock(tmp_path / "s.sqlite"):  # the failed attempt holds nothing
        pass


def test_a_read_only_mount_while_locking_says_to_copy_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def read_only(path, flags, mode=0o777):  # noqa: ANN001 - as the kernel answers on one
        if str(path).endswith(".lock") and flags & (os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(StoreError) as info:
        StoreLock(tmp_path / "s.sqlite").acquire()
    assert str(info.value) == (f"cannot lock run store {tmp_path / 's.sqlite'}: "
                               f"{tmp_path / 's.sqlite.lock'}: Read-only file system; a sweep "
                               "writes to its store: copy the store to a writable place, or use "
                               "another --out (report, export and view read it where it is)")


def test_running_sweep_refuses_a_second_and_sigkill_frees_the_store(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    args = ("run", "--out", str(store), "--no-progress", "--latency", "0.2", "--trials", "2",
            "--json")
    holder = _cli(*args)
    deadline = time.monotonic() + 60
    while not (lock_path(store).exists() and lock_path(store).read_text().strip()):
        assert holder.poll() is None and time.monotonic() < deadline, holder.communicate()
        time.sleep(0.05)
    try:
        t0 = time.monotonic()
        second = subprocess.run([sys.executable, "-m", "sweepbench.cli", *args],
                                capture_output=True, text=True, timeout=60)
        took = time.monotonic() - t0
        assert second.returncode == 2, second.stderr
        assert f"pid {holder.pid}" in second.stderr and str(store) in second.stderr
        assert "in use" in second.stderr and "Traceback" not in second.stderr
        assert took < 10  # refused at once (the interpreter's start-up aside)
        assert holder.poll() is None  # the holder is untouched
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate()
    after = subprocess.run([sys.executable, "-m", "sweepbench.cli", *args[:-1], "--latency",
                            "0", "--json"], capture_output=True, text=True, timeout=600)
    assert after.returncode == 0, after.stderr  # the dead holder's lock did not survive it


@pytest.mark.parametrize("models", [["scripted/oracle", "scripted/oracle"],
                                    ["scripted/oracle", "scripted/noisy:0.3", "scripted/oracle"]])
def test_model_listed_twice_is_a_config_error(models: list[str]) -> None:
    with pytest.raises(ConfigError, match="'scripted/oracle' listed more than once"):
        load_config(None, {"models": models})


def test_model_listed_twice_on_the_command_line(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "sweepbench.cli", "run", "--model",
                           "scripted/oracle", "--model", "scripted/oracle", "--out",
                           str(tmp_path / "s.sqlite"), "--no-progress"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "listed more than once" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "s.sqlite").exists()
