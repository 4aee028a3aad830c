"""The journal's key: what it costs the store's writer per journaled row.

A sweep journals its events interleaved across the episodes in flight. Schema 2 keyed its
events table by (episode key, journal, seq), and the episode key is a content hash, so the
episodes in flight sat far apart in the key's index and each row landed on an index page of
its own. Schema 3 numbers each key the first time the store sees it (the order episodes
start) and keys the rows by that number, so the episodes in flight sit side by side. This
replays the same synthetic rows (``--rows`` of them, ``--batch`` per commit, ``--episodes``
episodes in flight at a time, each ending after ``--events`` rows and a new one starting in
its place) into a fresh SQLite file under the journal settings of the store (WAL,
``synchronous=NORMAL``, no automatic checkpoint), three ways:

- ``store``: the store's own tables and write statements (``_EVENT_TABLES``, ``_SQL``): a
  key's numbering written in the same commit as, and before, its episode's first row;
- ``hash``: schema 2's events table and insert, keys as the store makes them (``ep-`` and 32
  hex digits): what the store did before;
- ``no_key``: that table without its primary key (and the insert without its conflict
  clause): the floor, which the store cannot have (resume re-sends events and relies on the
  key to ignore the copies; reads of an episode's events use it).

Prints per way the CPU time per row (process time of the inserts and commits) and the WAL
bytes per row, medians over ``--runs``, and their ratios to ``hash``, as one JSON object
last. It is not a claim about a whole sweep (``benchmarks/throughput.py`` measures that).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import re
import sqlite3
import statistics
import tempfile
import time
from operator import itemgetter
from pathlib import Path

from sweepbench.store.migrate import SCHEMA2_EVENTS
from sweepbench.store.schema import EVENT_TABLES as _EVENT_TABLES
from sweepbench.store.schema import WRITE_STATEMENTS as _SQL

WAYS = ("store", "hash", "no_key")

# schema 2's event insert, as the store had it (its table: SCHEMA2_EVENTS)
_V2_INSERT = """INSERT INTO events (episode_key, journal, seq, kind, payload, ts, run_id, endpoint)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (episode_key, journal, seq) DO NOTHING"""


def _ddl(way: str) -> tuple[list[str], dict[str, str]]:
    """The tables of a way and its write statements by op ("event_key", "event")."""
    if way == "store":
        return ([t for t in _EVENT_TABLES.split(";") if t.strip()],
                {op: _SQL[op] for op in ("event_key", "event")})
    if way == "hash":
        return [SCHEMA2_EVENTS], {"event": _V2_INSERT}
    return ([re.sub(r",\s*PRIMARY KEY \([^)]*\)", "", SCHEMA2_EVENTS)],
            {"event": re.sub(r"ON CONFLICT \([^)]*\) DO NOTHING", "", _V2_INSERT)})


def _rows(way: str, n: int, in_flight: int, per_episode: int, seed: int) -> list[tuple]:
    """``n`` event writes (op, row) of episodes interleaved ``in_flight`` at a time (the same
    draw for every way), the ``store`` way's with its key's numbering before an episode's first
    row (the store queues it when the episode starts)."""
    rng = random.Random(seed)
    live = list(range(in_flight))
    started = in_flight
    seqs: dict[int, int] = {}
    payload = "x" * 700  # about a journaled model call's or tool call's JSON
    writes = []
    for _ in range(n):
        slot = rng.randrange(in_flight)
        episode = live[slot]
        seq = seqs.get(episode, 0)
        seqs[episode] = seq + 1
        if seq + 1 >= per_episode:  # it ends; the next episode takes its place
            live[slot], started = started, started + 1
        key = "ep-" + hashlib.blake2b(str(episode).encode(), digest_size=16).hexdigest()
        if seq == 0 and way == "store":
            writes.append(("event_key", (key,)))
        writes.append(("event", (key, "", seq, "model_call", payload, 0.0, "run", "endpoint")))
    return writes


def replay(way: str, writes: list[tuple], batch: int, path: Path) -> tuple[float, float]:
    """(CPU µs per row, WAL bytes per row) of the writes, ``batch`` rows per commit, each run
    of one op in one executemany (as the store's writer does)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    tables, sql = _ddl(way)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA wal_autocheckpoint = 0")  # the store checkpoints on a thread of its own
    for ddl in tables:
        db.execute(ddl)
    rows = sum(op == "event" for op, _ in writes)
    cpu0 = time.process_time()
    i = 0
    while i < len(writes):  # ``batch`` event rows a commit, with the numberings among them
        j, events = i, 0
        while j < len(writes) and (events < batch or writes[j][0] != "event"):
            events += writes[j][0] == "event"
            j += 1
        db.execute("BEGIN")
        for op, group in itertools.groupby(writes[i:j], key=itemgetter(0)):
            db.executemany(sql[op], [w[1] for w in group])
        db.execute("COMMIT")
        i = j
    cpu = time.process_time() - cpu0
    wal = os.path.getsize(f"{path}-wal")
    db.close()
    return cpu / rows * 1e6, wal / rows


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
        # the share of the hashed key's cost (over no key) the store's numbered key gives back
        "store_recovers": round((cpu["hash"] - cpu["store"])
                                / max(cpu["hash"] - cpu["no_key"], 1e-9), 3),
    }))


if __name__ == "__main__":
    main()
