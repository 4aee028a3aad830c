"""An opt-in, content-addressed cache of model responses, for deterministic re-runs.

The key is a hash of the endpoint's identity (URL and transport, never the API key) and the
exact request body bytes; the value is the raw response body the server sent. A hit is
decoded exactly like a fresh response, so it yields the same message and usage, and no HTTP
call is made. Only successful responses are stored. One SQLite file (WAL), safe to share
between processes; operations are small and run inline on the event loop.

Off by default: a sweep that samples at temperature > 0 wants fresh answers per trial. Use it
for re-running a sweep whose requests are deterministic (scripted models, seeded sampling,
re-judging), or to develop against recorded traffic.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path

__all__ = ["ResponseCache"]


class ResponseCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses ("
            " key TEXT PRIMARY KEY, payload BLOB NOT NULL, created REAL NOT NULL)"
        )
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(identity: str, body: bytes) -> str:
        h = hashlib.sha256(identity.encode())
        h.update(b"\x00")
        h.update(body)
        return h.hexdigest()

    def get(self, key: str) -> bytes | None:
        row = self._db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return bytes(row[0])

    def put(self, key: str, payload: bytes) -> None:
        self._db.execute(
            "INSERT OR IGNORE INTO responses (key, payload, created) VALUES (?, ?, ?)",
            (key, payload, time.time()),
        )

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()
