"""An opt-in, content-addressed cache of model responses, for deterministic re-runs.

The key is a hash of the endpoint's identity (URL and transport, never the API key) and the
exact request body bytes; the value is the raw response body the server sent. A hit is
decoded exactly like a fresh response, so it yields the same message and usage, and no HTTP
call is made. Only successful responses are stored. One SQLite file (WAL), safe to share
between processes; operations are small and run inline on the event loop.

Off by default: a sweep that samples at temperature > 0 wants fresh answers per trial. Use it
for re-running a sweep whose requests are deterministic (scripted models, seeded sampling,
re-judging), or to develop against recorded traffic.

The cache is an aid, never a cause of failure: a file that cannot be a cache (not SQLite,
another database such as the run store) is a :class:`ConfigError` naming it when it is
opened; a read or write that fails later (a corrupted page, a full disk, an entry that is not
a response) is logged once, naming the cache, and from then on every call goes to its endpoint
as if there were no cache. A model is never charged with the cache's fault.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import time
from pathlib import Path

from sweepbench.errors import ConfigError

__all__ = ["ResponseCache"]

log = logging.getLogger(__name__)

TABLE = "responses"


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return a.samefile(b)
    except OSError:  # either one does not exist (yet)
        return False


class ResponseCache:
    """The cache at ``path``; ``not_at``: the run store's path, refused as the cache."""

    def __init__(self, path: str | Path, *, not_at: str | Path | None = None) -> None:
        self.path = Path(path)
        self.where = f"response cache {self.path}"
        self.hits = 0
        self.misses = 0
        self.broken: str | None = None  # why the cache was given up on, once it was
        if not_at is not None and _same_file(self.path, Path(not_at)):
            raise ConfigError(f"{self.where} is the run store: give the cache a file of its "
                              "own (response_cache)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"{self.where} cannot be opened: {exc}") from None
        try:
            self._open()
        except (OSError, sqlite3.Error) as exc:
            self._db.close()
            raise ConfigError(f"{self.where} cannot be used as a cache: {exc}") from None
        except ConfigError:
            self._db.close()
            raise

    def _open(self) -> None:
        db = self._db
        tables = [r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        others = [t for t in tables if t != TABLE]
        if others:  # adding a table to someone else's database would be a silent change
            shown = ", ".join(others[:4]) + (", ..." if len(others) > 4 else "")
            raise ConfigError(f"{self.where} is another database (tables {shown}), not a "
                              "response cache: give the cache a file of its own")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} ("
                   " key TEXT PRIMARY KEY, payload BLOB NOT NULL, created REAL NOT NULL)")

    def fail(self, why: object) -> None:
        """Give the cache up for the rest of the process, saying so once, naming it."""
        if self.broken is None:
            self.broken = str(why)
            log.warning("%s failed (%s): not used any more; calls go to their endpoints",
                        self.where, self.broken)

    @staticmethod
    def key(identity: str, body: bytes) -> str:
        h = hashlib.sha256(identity.encode())
        h.update(b"\x00")
        h.update(body)
        return h.hexdigest()

    def get(self, key: str) -> bytes | None:
        """The stored response, or None (a miss, or a cache given up on)."""
        row = None
        if self.broken is None:
            try:
                row = self._db.execute(f"SELECT payload FROM {TABLE} WHERE key = ?",
                                       (key,)).fetchone()
            except sqlite3.Error as exc:
                self.fail(exc)
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return bytes(row[0])

    def put(self, key: str, payload: bytes) -> None:
        if self.broken is not None:
            return
        try:
            self._db.execute(
                f"INSERT OR IGNORE INTO {TABLE} (key, payload, created) VALUES (?, ?, ?)",
                (key, payload, time.time()),
            )
        except sqlite3.Error as exc:
            self.fail(exc)

    def __len__(self) -> int:
        return self._db.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0]

    def close(self) -> None:
        self._db.close()
