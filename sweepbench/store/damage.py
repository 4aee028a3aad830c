"""What to call a store SQLite cannot read: damaged (a store whose file is broken), not a
store (a file of something else), or on a path sweepbench may not write; and what to do.

SQLite says ``file is not a database`` both for a text file and for a store whose header was
overwritten, and ``database disk image is malformed`` for a truncated or garbled store. The
file's bytes tell them apart: SQLite's magic (or a zeroed header) means a database that was
whole once, and the text of the store's schema in its first pages means a store.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sweepbench.errors import StoreError

__all__ = ["DAMAGED_ADVICE", "is_damaged", "open_error", "read_only_error"]

DAMAGED_ADVICE = ("restore it from a backup, or copy what SQLite can still read into a new "
                  "file (sqlite3 STORE .recover | sqlite3 NEW) and use that")
_MAGIC = b"SQLite format 3\x00"
_DAMAGE = ("SQLITE_CORRUPT", "SQLITE_NOTADB")


def is_damaged(e: sqlite3.Error) -> bool:
    """Whether SQLite's error says the file's contents are broken."""
    name = getattr(e, "sqlite_errorname", "")
    return name.startswith(_DAMAGE) or "malformed" in str(e) or "not a database" in str(e)


def read_only_error(e: sqlite3.Error) -> bool:
    """Whether SQLite's error says it may not write (or create) the file or its neighbours."""
    return getattr(e, "sqlite_errorname", "") in ("SQLITE_READONLY", "SQLITE_CANTOPEN",
                                                  "SQLITE_PERM") or "readonly" in str(e)


_SCHEMA_TEXT = (b"CREATE TABLE episodes", b"CREATE TABLE event_rows")


def _start(path: Path, n: int) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return b""


def open_error(path: Path, e: sqlite3.Error, what: str = "cannot open") -> StoreError:
    """The one-line error for a store SQLite could not open or read."""
    if is_damaged(e):
        head = _start(path, 72)
        if (not head.startswith(_MAGIC) and head.strip(b"\x00")
                and not any(t in _start(path, 1 << 20) for t in _SCHEMA_TEXT)):
            return StoreError(f"{path} is not a sweepbench run store (SQLite: {e}); if it was "
                              f"one, it is damaged: {DAMAGED_ADVICE}")
        return StoreError(f"run store {path} is damaged (SQLite: {e}); {DAMAGED_ADVICE}")
    if getattr(e, "sqlite_errorname", "") == "SQLITE_FULL" or "disk is full" in str(e):
        return StoreError(f"{what} run store {path}: {e}; free some space on its disk and run "
                          "the command again")
    return StoreError(f"{what} run store {path}: {e}")
