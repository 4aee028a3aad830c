"""How many bytes does the run store take per episode, and what do its reads cost?

The store is built as ``viewer_latency.py`` builds it (a real scripted sweep with the LLM
judges, its episodes written again through the store's API under other names until the store
holds ``--episodes``): as this sweepbench writes it (schema 6, with the facts reports sum;
since 5 journal rows compressed with a per-benchmark dictionary, each record stored as the
difference from its episode's journal, :mod:`sweepbench.store.codec`). The same store is then rewritten as schema 4 stored it (every
journal payload and record as JSON text, ``hostile_cases/_stores.as_schema_4``) and
vacuumed, which packs its pages tighter than a sweep's writes did: the old figure is, if
anything, smaller than a sweep would leave it.

Reported for both: bytes per episode (the file), the bytes of the journal rows' payloads and
of the records (SQL ``length``), and the seconds to read every record (``records()``), every
model call (``model_calls()``) and one journal per episode for 500 episodes (``events()``);
the reads are checked to return equal objects on both. ``*_ratio``: new over old. Prints one
JSON object last.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "hostile_cases"))
from _stores import as_schema_4
from viewer_latency import grow, seed_store

from sweepbench.store.readonly import ReadOnlyStore


def sizes(path: Path, episodes: int) -> dict:
    db = sqlite3.connect(path)
    try:
        journal = db.execute("SELECT sum(length(payload)) FROM event_rows").fetchone()[0]
        records = db.execute("SELECT sum(length(record)) FROM episodes").fetchone()[0]
    finally:
        db.close()
    return {"bytes_per_episode": round(path.stat().st_size / episodes),
            "journal_bytes_per_episode": round(journal / episodes),
            "record_bytes_per_episode": round(records / episodes)}


def reads(path: Path) -> tuple[dict, dict]:
    """Seconds per read, and what the reads returned (to compare)."""
    with ReadOnlyStore(path) as store:
        t = time.perf_counter()
        records = store.records()
        records_s = time.perf_counter() - t
        t = time.perf_counter()
        calls = store.model_calls()
        calls_s = time.perf_counter() - t
        keys = sorted(records)[:500]
        t = time.perf_counter()
        events = {k: store.events(k) for k in keys}
        events_s = time.perf_counter() - t
        assert not store.damaged, store.damaged
    return ({"records_s": round(records_s, 2), "model_calls_s": round(calls_s, 2),
             "events_500_s": round(events_s, 3)},
            {"records": records, "calls": calls, "events": events})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=5_000)
    ap.add_argument("--models", type=int, default=25)
    ap.add_argument("--quick", action="store_true", help="1,000 episodes")
    ap.add_argument("--keep", metavar="DIR", help="build in DIR and keep it (the seed is reused)")
    opts = ap.parse_args()
    if opts.quick:
        opts.episodes = 1_000
    tmp = Path(opts.keep or tempfile.mkdtemp(prefix="sweepbench-size-"))
    tmp.mkdir(parents=True, exist_ok=True)
    seed = tmp / "seed.sqlite"
    if not seed.exists():
        seed_store(seed)
    new = tmp / f"new-{opts.episodes}.sqlite"
    for p in (new, new.with_name(new.name + "-wal"), new.with_name(new.name + "-shm")):
        p.unlink(missing_ok=True)
    t = time.perf_counter()
    built = grow(seed, new, opts.episodes, opts.models)
    write_s = time.perf_counter() - t
    old = tmp / f"old-{opts.episodes}.sqlite"
    shutil.copyfile(new, old)
    as_schema_4(old)
    n = built["episodes"]
    new_size, old_size = sizes(new, n), sizes(old, n)
    new_reads, new_got = reads(new)
    old_reads, old_got = reads(old)
    assert new_got == old_got, "the reads differ between the two forms"
    result = {
        "episodes": n, "write_s": round(write_s, 1),
        **{f"new_{k}": v for k, v in {**new_size, **new_reads}.items()},
        **{f"old_{k}": v for k, v in {**old_size, **old_reads}.items()},
        "bytes_ratio": round(new_size["bytes_per_episode"] / old_size["bytes_per_episode"], 3),
        "records_s_ratio": round(new_reads["records_s"] / max(old_reads["records_s"], 1e-9), 2),
        "model_calls_s_ratio": round(new_reads["model_calls_s"]
                                     / max(old_reads["model_calls_s"], 1e-9), 2),
        "reads_equal": True,
    }
    if not opts.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
