"""One writer per run store: an OS lock on ``<store>.lock`` that a sweep holds while it runs.

Two sweeps on one store would pay for every call twice and interleave their journals. The lock
is ``flock`` on a side file: the kernel drops it when the holder exits, however it exits
(SIGKILL, power loss of the process), so a stale lock never blocks; the file itself stays
(removing it would let a third process lock a file no one else sees). The holder writes its pid
into it, so a refused process can name who holds the store. A lock that cannot be taken (a
read-only mount, a full disk) is a ``StoreError`` with advice that fits its cause.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from sweepbench.errors import StoreError, StoreLocked

__all__ = ["StoreLock", "lock_path"]


def lock_path(store: str | Path) -> Path:
    store = Path(store)
    return store.with_name(store.name + ".lock")


class StoreLock:
    """``with StoreLock(store_path):`` holds the store or raises :class:`StoreLocked` at once."""

    def __init__(self, store: str | Path) -> None:
        self.store = Path(store)
        self.path = lock_path(self.store)
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            self._acquire()
        except OSError as e:
            raise StoreError(f"cannot lock run store {self.store}: {self.path}: "
                             f"{e.strerror or e}; {_advice(e)}") from e

    def _acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise StoreLocked(f"run store {self.store} is in use by another sweepbench process "
                              f"(pid {holder}); wait for it to finish or stop it, or use "
                              "another --out") from None
        except BaseException:
            os.close(fd)
            raise
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except BaseException:
            os.close(fd)  # drops the lock: nothing holds the store
            raise
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.ftruncate(fd, 0)
            os.close(fd)  # closing drops the flock

    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _advice(e: OSError) -> str:
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return "free some space on its disk and run the command again"
    if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ("a sweep writes to its store: copy the store to a writable place, or use "
                "another --out (report, export and view read it where it is)")
    return "fix the cause and run the command again"
