"""Combine run stores: the shards of one sweep (``--shard i/n``) into one store.

Rows are copied with SQLite's ATTACH, table by table; a run present in several inputs must
carry the same config hash (the same sweep), or the merge refuses and says which. Episodes
and events that appear in several inputs keep the first copy, finished beating unfinished.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sweepbench.errors import StoreError
from sweepbench.results.store import RunStore


def merge_stores(out: str | Path, inputs: list[str | Path]) -> dict[str, int]:
    """Merge ``inputs`` into ``out`` (created if missing); returns rows per table in ``out``."""
    out = Path(out)
    if not inputs:
        raise StoreError("merge needs at least one input store")
    for p in inputs:
        if Path(p).resolve() == out.resolve():
            raise StoreError(f"{p} is the output store; name another output")
        RunStore(p, create=False).close()  # validates: a run store, a schema we read
    RunStore(out).close()  # creates the schema
    db = sqlite3.connect(out, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        for p in inputs:
            db.execute("ATTACH DATABASE ? AS src", (str(Path(p).resolve()),))
            try:
                _check_runs(db, p)
                db.execute("BEGIN")
                db.execute("INSERT OR IGNORE INTO runs SELECT * FROM src.runs")
                # finished episodes replace unfinished copies; otherwise the first copy stays
                db.execute("""INSERT INTO episodes SELECT * FROM src.episodes WHERE true
                              ON CONFLICT(run_id, episode_id) DO UPDATE SET
                              status = excluded.status, termination = excluded.termination,
                              record = excluded.record, finished_at = excluded.finished_at
                              WHERE episodes.status = 'running' AND excluded.status != 'running'""")
                db.execute("INSERT OR IGNORE INTO events SELECT * FROM src.events")
                db.execute("INSERT OR IGNORE INTO judgments SELECT * FROM src.judgments")
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            finally:
                db.execute("DETACH DATABASE src")
        return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("runs", "episodes", "events", "judgments")}
    finally:
        db.close()


def _check_runs(db: sqlite3.Connection, path: str | Path) -> None:
    clash = db.execute("""SELECT r.run_id FROM src.runs r JOIN main.runs m USING (run_id)
                          WHERE r.config_hash != m.config_hash""").fetchall()
    if clash:
        ids = ", ".join(r[0] for r in clash)
        raise StoreError(f"{path}: run(s) {ids} have a different config than the stores merged "
                         "so far; they are not shards of one sweep")
