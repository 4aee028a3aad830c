"""A run store opened for reading only: what ``report``, ``export`` and ``view`` use, so that a
store on a read-only mount (an archive) or in a folder sweepbench may not write is read where
it is, with no lock file, no WAL writes and nothing migrated.

Every connection is ``query_only``. Where the file may be written it is opened as any SQLite
reader opens it, so that the last connection to close tidies the WAL away as always (a
``mode=ro`` connection would leave ``-wal`` and ``-shm`` files behind). Elsewhere ``mode=ro``
reads a WAL store, its WAL included, but only when it can open (or create) the ``-shm`` file
beside it; on a read-only folder without one it cannot open the file at all. A store with no
WAL to read (closed cleanly) is then opened ``immutable=1``, which reads the main file alone.
A store whose WAL holds commits but has no ``-shm`` cannot be read there: the message says to
copy both files to a writable place.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from sweepbench.errors import OlderStoreError, StoreError
from sweepbench.store.damage import open_error, read_only_error
from sweepbench.store.identity import check_wal
from sweepbench.store.reads import StoreReads
from sweepbench.store.schema import APPLICATION_ID, READABLE_SINCE, SCHEMA_VERSION

__all__ = ["ReadOnlyStore", "connect_read_only"]


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the store at ``path`` (an existing file) once its WAL is
    known to be its own; a ``StoreError`` that says why when there is none."""
    check_wal(path)
    uri = f"file:{quote(str(path.resolve()))}"
    try:
        return _open(f"{uri}?mode=rw")
    except sqlite3.Error as e:
        if not read_only_error(e):
            raise open_error(path, e) from e
    try:
        return _open(f"{uri}?mode=ro")
    except sqlite3.Error as e:
        if not read_only_error(e):
            raise open_error(path, e) from e
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise StoreError(
                f"cannot read run store {path} where it is: its WAL file {wal.name} holds "
                f"commits SQLite reads only with a {path.name}-shm file, which it cannot create "
                f"there ({e}); copy {path.name} and {wal.name} together to a writable place "
                "and read the copy") from e
    try:
        return _open(f"{uri}?immutable=1")
    except sqlite3.Error as e:
        raise open_error(path, e) from e


def _open(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the file
    except BaseException:
        conn.close()
        raise
    return conn


def check_readable(path: Path, conn: sqlite3.Connection) -> None:
    """Refuse a file that is not a run store, or a store of a schema not read as it is
    (``OlderStoreError``: an older one, which a writable open migrates)."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as e:
        raise open_error(path, e) from e
    if app_id != APPLICATION_ID:
        raise StoreError(f"{path} is an SQLite file but not a sweepbench run store")
    if version > SCHEMA_VERSION:
        raise StoreError(f"run store {path} has schema version {version}; this sweepbench "
                         f"reads version {SCHEMA_VERSION} (upgrade sweepbench)")
    if version < READABLE_SINCE:
        raise OlderStoreError(f"run store {path} has schema version {version} and must be "
                              f"migrated to version {SCHEMA_VERSION} before it is read")


class ReadOnlyStore(StoreReads):
    """The reads of :class:`~sweepbench.store.reads.StoreReads` over a read-only connection.
    ``with ReadOnlyStore(path) as store:``; raises ``OlderStoreError`` for a store that must
    be migrated first (a writable :class:`~sweepbench.store.runstore.RunStore` does it)."""

    migrated: str | None = None  # never: read as it is

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not path.exists():
            raise StoreError(f"run store {path} does not exist")
        if not path.is_file():
            raise StoreError(f"run store {path} is not a file")
        conn = connect_read_only(path)
        try:
            check_readable(path, conn)
        except BaseException:
            conn.close()
            raise
        super().__init__(path, conn)

    def close(self) -> None:
        self.close_reads()

    def __enter__(self) -> ReadOnlyStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
