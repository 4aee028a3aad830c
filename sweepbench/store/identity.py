"""A store's identity, and the check that the WAL file beside it is its own.

SQLite applies whatever valid ``-wal`` file sits beside a database: a WAL carries no mark of
the database it belongs to. One from another store (files copied after a kill, a sync tool,
a restored backup) would show that store's runs, and its first checkpoint would write them
into this one. So each store (schema 4 on) keeps a random id in its table ``store_identity``,
and every transaction sweepbench commits updates that row: every WAL a store writes holds the
id's page with its id. Before SQLite opens a store (:func:`check_wal`), the id is read from
the main file alone (SQLite's ``immutable=1`` ignores the WAL) and the WAL's committed frames
are read raw (its format: https://www.sqlite.org/fileformat2.html#walformat): a WAL whose
frames hold that page with another id, or whose commits never wrote the page, is another
database's, and the store is refused before anything reads or writes it. A WAL another
connection has open is in use, not left over, and is not looked at.

A store of schema 3 or older has no id until it is migrated; its WAL cannot be checked.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import sqlite3
import struct
from pathlib import Path
from urllib.parse import quote

from sweepbench.errors import StoreError

__all__ = ["IDENTITY_TABLE", "TOUCH", "add_identity", "check_wal", "main_identity"]

IDENTITY_TABLE = """CREATE TABLE store_identity (
    id      TEXT NOT NULL,
    commits INTEGER NOT NULL DEFAULT 0
)"""
TOUCH = "UPDATE store_identity SET commits = commits + 1"
"""What every write transaction runs, so that the WAL holds the id's page (see above)."""

_PREFIX = "sweepbench-store:"
_ID = re.compile(rb"sweepbench-store:[0-9a-f]{32}")
_WAL_MAGIC = (0x377F0682, 0x377F0683)
_WAL_HEADER = 32
_FRAME_HEADER = 24
_DMS, _FLOCK = 128, "@hhqqi4x"  # the -shm byte every connection read-locks; struct flock


def add_identity(c: sqlite3.Connection) -> str:
    """Create the identity table with a new random id, in the connection's transaction."""
    store_id = _PREFIX + secrets.token_hex(16)
    c.execute(IDENTITY_TABLE)
    c.execute("INSERT INTO store_identity (id) VALUES (?)", (store_id,))
    return store_id


def main_identity(path: Path) -> tuple[str, int] | None:
    """(id, the page holding it) as the main file alone has them, ignoring any WAL; None when
    the file has none (an older schema, a store never checkpointed) or cannot say."""
    uri = f"file:{quote(str(path.resolve()))}?immutable=1"
    try:
        c = sqlite3.connect(uri, uri=True)
    except sqlite3.Error:
        return None
    try:
        root = c.execute("SELECT rootpage FROM sqlite_schema WHERE type = 'table' "
                         "AND name = 'store_identity'").fetchone()
        row = c.execute("SELECT id FROM store_identity LIMIT 1").fetchone() if root else None
    except sqlite3.Error:  # damaged, or a page torn by a checkpoint running now: open says
        return None
    finally:
        c.close()
    if not row or not isinstance(row[0], str):
        return None
    return row[0], root[0]


def _wal_ids(wal: Path, page: int) -> tuple[bytes, int, list[bytes | None]] | None:
    """(the WAL's header, its committed frames, the id in each committed frame of ``page``);
    None when SQLite would apply nothing of it (empty, no valid header, no commit)."""
    with open(wal, "rb") as f:
        header = f.read(_WAL_HEADER)
        if len(header) < _WAL_HEADER:
            return None
        magic, _version, page_size, _ckpt, salt1, salt2 = struct.unpack(">6I", header[:24])
        if magic not in _WAL_MAGIC or page_size < 512 or page_size & (page_size - 1):
            return None  # page size 65536 is stored as 1: not written by sweepbench's SQLite
        committed, seen, frames = 0, [], 0
        pending: list[bytes | None] = []
        while True:
            head = f.read(_FRAME_HEADER)
            if len(head) < _FRAME_HEADER:
                break
            number, db_size, s1, s2 = struct.unpack(">4I", head[:16])
            if (s1, s2) != (salt1, salt2):
                break  # an older generation's frame: SQLite stops here too
            if number == page:
                found = _ID.search(f.read(page_size))
                pending.append(found.group(0) if found else None)
            else:
                f.seek(page_size, 1)
            frames += 1
            if db_size:  # a commit frame: what came before it counts
                committed, seen, pending = frames, seen + pending, []
    return (header, committed, seen) if committed else None


def _in_use(path: Path) -> bool:
    """Whether a connection (of any process, this one's too) has the store open: each holds
    a read lock on byte 128 of its ``-shm`` file (SQLite's unix VFS, "DMS") while open. Asked
    with an open-file-description lock, which sees the process's own locks and leaves them
    be."""
    try:
        fd = os.open(path.with_name(path.name + "-shm"), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        got = fcntl.fcntl(fd, fcntl.F_OFD_GETLK,
                          struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, _DMS, 1, 0))
        return struct.unpack(_FLOCK, got)[0] != fcntl.F_UNLCK
    except OSError:
        return False
    finally:
        os.close(fd)


def check_wal(path: Path) -> None:
    """Refuse the store at ``path`` when the WAL beside it belongs to another database;
    reads files only, so the store and its WAL stay as they are. A WAL in use (a sweep
    running, another program with the store open) is not looked at: whoever opened the
    store applied it already, and SQLite shares it as it is."""
    wal = path.with_name(path.name + "-wal")
    try:
        if wal.stat().st_size <= _WAL_HEADER:
            return
    except OSError:
        return
    if _in_use(path):
        return
    own = main_identity(path)
    if own is None:
        return
    store_id, page = own
    for _ in range(5):  # the WAL may start over (a running sweep's checkpoint) while read
        try:
            found = _wal_ids(wal, page)
            with open(wal, "rb") as f:
                again = f.read(_WAL_HEADER)
        except OSError:
            return  # unreadable: SQLite's open says so
        if found is None:
            return
        header, _committed, ids = found
        if again == header:
            break
    else:
        return
    latest = ids[-1] if ids else None
    if latest == store_id.encode():
        return
    whose = (f"another store's (id {latest.decode()[len(_PREFIX):][:12]}, this one's "
             f"{store_id[len(_PREFIX):][:12]})" if latest else
             "not this store's (its commits never wrote the store's id: another database's, or "
             "left by a program other than sweepbench that changed the store and did not "
             "close it)")
    raise StoreError(
        f"run store {path}: the WAL file beside it, {wal}, is {whose}; SQLite would show its "
        f"contents as this store's and copy them into it. Nothing was read or written: move "
        f"{wal} (and {path.name}-shm, if any) out of the folder, then run the command again")
