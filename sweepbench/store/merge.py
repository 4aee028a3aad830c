"""Combine run stores: shards of one sweep (``--shard i/n``), or stores grown apart.

Everything is kept: every run (with its config and prices), every run's selection, and every
episode of every input. An episode is one key; when several inputs hold it, one copy wins
whole (a finished copy beats an unfinished one, else the copy already in the output): its
row, its journal (the episode's and its judges') and its judgments come from that input
only, so two executions of one episode are never mixed. Inputs of an older schema are
migrated when opened (see :mod:`sweepbench.store.migrate`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sweepbench.errors import StoreError
from sweepbench.store.identity import TOUCH
from sweepbench.store.runstore import RunStore

_TABLES = ("runs", "run_episodes", "episodes", "events", "judgments")


def merge_stores(out: str | Path, inputs: list[str | Path]) -> dict[str, int]:
    """Merge ``inputs`` into ``out`` (created if missing); returns rows per table in ``out``."""
    out = Path(out)
    if not inputs:
        raise StoreError("merge needs at least one input store")
    for p in inputs:
        if Path(p).resolve() == out.resolve():
            raise StoreError(f"{p} is the output store; name another output")
        RunStore(p, create=False).close()  # validates (a store, a schema we read); migrates
    RunStore(out).close()  # creates the schema
    db = sqlite3.connect(out, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        for p in inputs:
            db.execute("ATTACH DATABASE ? AS src", (str(Path(p).resolve()),))
            try:
                db.execute("BEGIN")
                db.execute(TOUCH)  # every transaction writes the store's id (store.identity)
                _merge_one(db)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            finally:
                db.execute("DETACH DATABASE src")
        return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in _TABLES}
    finally:
        db.close()


_RANK = "CASE {0}.status WHEN 'done' THEN 0 WHEN 'error' THEN 1 ELSE 2 END"
# An input's journals (its events view's rows), in the order of its keys' numbers: the view's
# trigger numbers a key new to the output as it comes, so the output numbers them in the same
# order (the order the input's episodes started), and each journal's rows arrive in key order.
_JOURNALS = ("SELECT k.episode_key, r.journal, r.seq, r.kind, r.payload, r.ts, r.run_id, "
             "r.endpoint FROM src.event_keys k JOIN src.event_rows r ON r.ep = k.ep")
_IN_ORDER = " ORDER BY r.ep, r.journal, r.seq"


def _merge_one(db: sqlite3.Connection) -> None:
    db.execute("INSERT OR IGNORE INTO runs SELECT * FROM src.runs")
    db.execute("INSERT OR IGNORE INTO run_episodes SELECT * FROM src.run_episodes")
    # the keys this input brings: new ones, and ones whose copy here is less finished
    db.execute("CREATE TEMP TABLE wins (episode_key TEXT PRIMARY KEY)")
    try:
        db.execute(f"""INSERT INTO wins SELECT s.episode_key FROM src.episodes s
                       LEFT JOIN main.episodes m USING (episode_key)
                       WHERE m.episode_key IS NULL OR {_RANK.format('s')} < {_RANK.format('m')}""")
        for table in ("episodes", "events", "judgments"):
            db.execute(f"DELETE FROM main.{table} "
                       "WHERE episode_key IN (SELECT episode_key FROM wins)")
            if table == "events":
                db.execute(f"INSERT INTO main.events {_JOURNALS} "
                           f"WHERE k.episode_key IN (SELECT episode_key FROM wins){_IN_ORDER}")
            else:
                db.execute(f"INSERT INTO main.{table} SELECT * FROM src.{table} "
                           "WHERE episode_key IN (SELECT episode_key FROM wins)")
        # journals of episodes that exist in neither table (an episode never started here)
        db.execute(f"""INSERT OR IGNORE INTO main.events {_JOURNALS}
                       WHERE NOT EXISTS (SELECT 1 FROM main.episodes m
                                         WHERE m.episode_key = k.episode_key){_IN_ORDER}""")
    finally:
        db.execute("DROP TABLE temp.wins")

