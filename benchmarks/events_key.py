"""The events table's key: what it costs the store's writer per journaled row.

A sweep journals its events interleaved across the episodes in flight. The events table's
primary key starts with the episode's key, a content hash, so the episodes in flight sit
far apart in the key's index and each row lands on an index page of its own. This replays
the same synthetic rows (``--rows`` of them, ``--batch`` per commit, ``--episodes`` episodes
in flight at a time, each ending after ``--events`` rows and a new one starting in its place)
into a fresh SQLite file under the store's own table definition, insert statement and
journal settings (WAL, ``synchronous=NORMAL``, no automatic checkpoint), three ways:

- ``hash``: episode keys as the store makes them (``ep-`` and 32 hex digits);
- ``start_order``: the same table, keys numbered in the order the episodes start (what an
  episode number given at start would do to the index: the episodes in flight side by side);
- ``no_key``: the table without its primary key (and the insert without its conflict clause):
  the floor, which the store cannot have (resume re-sends events and relies on the key to
  ignore the copies; reads of an episode's events use it).

Prints per way the CPU time per row (process time of the inserts and commits) and the WAL
bytes per row, medians over ``--runs``, and their ratios to ``hash``, as one JSON object
last. The gap between ``hash`` and ``start_order`` is what renumbering the key could give
back; it is not a claim about a whole sweep (``benchmarks/throughput.py`` measures that).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from sweepbench.results.store import _SCHEMA, _SQL

WAYS = ("hash", "start_order", "no_key")


def _events_ddl(with_key: bool) -> tuple[str, str]:
    """The store's events table and its event insert, with or without the primary key."""
    match = re.search(r"CREATE TABLE events \(.*?\n\);", _SCHEMA, re.S)
    if match is None:
        raise SystemExit("no events table in sweepbench.results.store._SCHEMA")
    ddl, insert = match.group(0), _SQL["event"]
    if not with_key:
        ddl = re.sub(r",\s*PRIMARY KEY \([^)]*\)", "", ddl)
        insert = re.sub(r"ON CONFLICT \([^)]*\) DO NOTHING", "", insert)
    return ddl, insert


def _rows(way: str, n: int, in_flight: int, per_episode: int, seed: int) -> list[tuple]:
    """``n`` event rows of episodes interleaved ``in_flight`` at a time (the same draw for
    every way; only the episode keys differ)."""
    rng = random.Random(seed)
    live = list(range(in_flight))
    started = in_flight
    seqs: dict[int, int] = {}
    payload = "x" * 700  # about a journaled model call's or tool call's JSON
    rows = []
    for _ in range(n):
        slot = rng.randrange(in_flight)
        episode = live[slot]
        seq = seqs.get(episode, 0)
        seqs[episode] = seq + 1
        if seq + 1 >= per_episode:  # it ends; the next episode takes its place
            live[slot], started = started, started + 1
        key = (f"{episode:012d}" if way == "start_order"
               else "ep-" + hashlib.blake2b(str(episode).encode(), digest_size=16).hexdigest())
        rows.append((key, "", seq, "model_call", payload, 0.0, "run", "endpoint"))
    return rows


def replay(way: str, rows: list[tuple], batch: int, path: Path) -> tuple[float, float]:
    """(CPU µs per row, WAL bytes per row) of inserting ``rows`` ``batch`` per commit."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    ddl, insert = _events_ddl(with_key=way != "no_key")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA wal_autocheckpoint = 0")  # the store checkpoints on a thread of its own
    db.execute(ddl)
    cpu0 = time.process_time()
    for i in range(0, len(rows), batch):
        db.execute("BEGIN")
        db.executemany(insert, rows[i:i + batch])
        db.execute("COMMIT")
    cpu = time.process_time() - cpu0
    wal = os.path.getsize(f"{path}-wal")
    db.close()
    return cpu / len(rows) * 1e6, wal / len(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10,000 rows, 2 runs")
    ap.add_argument("--rows", type=int, help="rows replayed per run (default 28,500)")
    ap.add_argument("--batch", type=int, default=34,
                    help="rows per commit (default 34: a full-size throughput run's)")
    ap.add_argument("--episodes", type=int, default=256, help="episodes in flight")
    ap.add_argument("--events", type=int, default=14, help="rows per episode")
    ap.add_argument("--runs", type=int, help="repetitions per way, interleaved (default 3)")
    args = ap.parse_args()
    n = args.rows or (10_000 if args.quick else 28_500)
    runs = args.runs or (2 if args.quick else 3)
    rows = {way: _rows(way, n, args.episodes, args.events, seed=0) for way in WAYS}
    got: dict[str, list[tuple[float, float]]] = {way: [] for way in WAYS}
    with tempfile.TemporaryDirectory(prefix="sweepbench-events-key-") as tmp:
        for _ in range(runs):
            for way in WAYS:
                got[way].append(replay(way, rows[way], args.batch, Path(tmp) / "events.sqlite"))
    cpu = {way: statistics.median(c for c, _ in got[way]) for way in WAYS}
    wal = {way: statistics.median(w for _, w in got[way]) for way in WAYS}
    print(json.dumps({
        "rows": n, "batch": args.batch, "episodes_in_flight": args.episodes,
        "rows_per_episode": args.events, "runs": runs,
        "cpu_us_per_row": {way: round(cpu[way], 2) for way in WAYS},
        "cpu_us_per_row_runs": {way: [round(c, 2) for c, _ in got[way]] for way in WAYS},
        "wal_bytes_per_row": {way: round(wal[way]) for way in WAYS},
        "cpu_ratio_vs_hash": {way: round(cpu[way] / cpu["hash"], 3) for way in WAYS},
        "wal_ratio_vs_hash": {way: round(wal[way] / wal["hash"], 3) for way in WAYS},
        # the share of the key's cost (hash over no key) a start-ordered key gives back
        "start_order_recovers": round((cpu["hash"] - cpu["start_order"])
                                      / max(cpu["hash"] - cpu["no_key"], 1e-9), 3),
    }))


if __name__ == "__main__":
    main()
