"""Combine run stores: shards of one sweep (``--shard i/n``), or stores grown apart.

Everything is kept: every run (with its config and prices), every run's selection, and every
episode of every input. An episode is one key; when several inputs hold it, one copy wins
whole (a finished copy beats an unfinished one, else the copy already in the output): its
row, its journal (the episode's and its judges') and its judgments come from that input
only, so two executions of one episode are never mixed. Inputs of an older schema are
migrated when opened (see :mod:`sweepbench.store.migrate`).

Damaged inputs: a file SQLite finds damaged (truncated, garbled) is refused before anything
is written. A record that does not decode is not copied: its episode is copied as unfinished
(no record, no judgments), so a run continues it from its journal without paying for its calls
again; a journal is copied up to its first row that does not decode. Both are counted.

Compressed rows (:mod:`sweepbench.store.codec`) are copied as they are, with the dictionaries
of their input (keyed by a hash of their bytes, so two stores' dictionaries never collide);
a record refers to its episode's journal, which comes from the same input.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec

from sweepbench.errors import StoreError
from sweepbench.store.codec import Damaged, journal_prefix, register
from sweepbench.store.damage import DAMAGED_ADVICE
from sweepbench.store.identity import TOUCH
from sweepbench.store.readonly import connect_read_only
from sweepbench.store.runstore import RunStore
from sweepbench.wire import EpisodeRecord

_TABLES = ("runs", "run_episodes", "episodes", "events", "judgments")


def merge_stores(out: str | Path, inputs: list[str | Path]) -> dict[str, int]:
    """Merge ``inputs`` into ``out`` (created if missing); returns rows per table in ``out``,
    and, when some were left out because they do not decode, ``records_left_out`` and
    ``journal_rows_left_out``."""
    out = Path(out)
    if not inputs:
        raise StoreError("merge needs at least one input store")
    for p in inputs:
        if Path(p).resolve() == out.resolve():
            raise StoreError(f"{p} is the output store; name another output")
        try:
            RunStore(p, create=False).close()  # validates (a store, a schema we read); migrates
        except StoreError as e:
            raise StoreError(f"merge input: {e}; nothing was merged") from None
        _check_whole(Path(p))
    RunStore(out).close()  # creates the schema
    db = sqlite3.connect(out, isolation_level=None)
    unpacker = register(db)  # sb_json; dictionaries read from the output, copied there first

    def record_ok(schema: str, key: str, blob: bytes | str | None) -> int:
        """Whether an episode's record decodes (no record, an unfinished episode, does)."""
        if blob is None:
            return 1
        try:
            _record_decoder.decode(unpacker.record(blob, journal_prefix(db, key, schema)))
        except (msgspec.DecodeError, TypeError, Damaged):
            return 0
        return 1

    db.create_function("sb_record_ok", 3, record_ok)
    left = {"records_left_out": 0, "journal_rows_left_out": 0}
    try:
        db.execute("PRAGMA journal_mode=WAL")
        for p in inputs:
            db.execute("ATTACH DATABASE ? AS src", (str(Path(p).resolve()),))
            try:
                db.execute("BEGIN")
                db.execute(TOUCH)  # every transaction writes the store's id (store.identity)
                for name, n in _merge_one(db).items():
                    left[name] += n
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            finally:
                db.execute("DETACH DATABASE src")
        counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in _TABLES}
        return {**counts, **{k: n for k, n in left.items() if n}}
    finally:
        db.close()


def _check_whole(path: Path) -> None:
    """Refuse an input SQLite finds damaged (a truncated or garbled file) before anything is
    written: its pages cannot be copied whole."""
    c = connect_read_only(path)  # opened just now by the store: no error expected
    try:
        problems = [r[0] for r in c.execute("PRAGMA quick_check(3)")]
    except sqlite3.Error as e:
        problems = [str(e)]
    finally:
        c.close()
    if problems != ["ok"]:
        raise StoreError(f"merge input: run store {path} is damaged (SQLite: "
                         f"{'; '.join(problems)}); {DAMAGED_ADVICE}; nothing was merged")


_record_decoder = msgspec.json.Decoder(EpisodeRecord)


# A copy whose record does not decode ranks as unfinished: it is copied as one (no record,
# no judgments), and a run continues it from its journal.
_RANK = ("CASE WHEN NOT sb_record_ok('{1}', {0}.episode_key, {0}.record) THEN 2 "
         "WHEN {0}.status = 'done' THEN 0 WHEN {0}.status = 'error' THEN 1 ELSE 2 END")
_EPISODE_COLUMNS = ("episode_key, label, model, benchmark, spec, domain, task_id, lang, trial, "
                    "user_model, user_mode, identity, unreachable, status, termination, "
                    "record, run_id, started_at, finished_at")
_AS_UNFINISHED = (_EPISODE_COLUMNS.replace(
    "status, termination, record", "'running', NULL, NULL").replace("finished_at", "NULL"))
_BAD = "NOT coalesce(json_valid(sb_json(r.payload)), 0)"
# A journal is copied up to its first row that does not decode: a journal holds a prefix of
# an episode's calls, never a gap.
_BEFORE_CUT = ("NOT EXISTS (SELECT 1 FROM temp.cut c WHERE c.ep = r.ep AND c.journal = r.journal "
               "AND r.seq >= c.seq)")
# An input's journals (its events view's rows), in the order of its keys' numbers: the view's
# trigger numbers a key new to the output as it comes, so the output numbers them in the same
# order (the order the input's episodes started), and each journal's rows arrive in key order.
_JOURNALS = ("SELECT k.episode_key, r.journal, r.seq, r.kind, r.payload, r.ts, r.run_id, "
             "r.endpoint FROM src.event_keys k JOIN src.event_rows r ON r.ep = k.ep")
_IN_ORDER = " ORDER BY r.ep, r.journal, r.seq"


def _merge_one(db: sqlite3.Connection) -> dict[str, int]:
    """Merge the attached input ``src``; returns what was left out because it does not
    decode."""
    db.execute("INSERT OR IGNORE INTO runs SELECT * FROM src.runs")
    db.execute("INSERT OR IGNORE INTO run_episodes SELECT * FROM src.run_episodes")
    db.execute("INSERT OR IGNORE INTO codec_dicts SELECT * FROM src.codec_dicts")
    # the keys this input brings: new ones, and ones whose copy here is less finished
    db.execute("CREATE TEMP TABLE wins (episode_key TEXT PRIMARY KEY, whole INTEGER)")
    db.execute("CREATE TEMP TABLE cut (ep INTEGER, journal TEXT, seq INTEGER)")
    try:
        db.execute(f"""INSERT INTO wins SELECT s.episode_key,
                           sb_record_ok('src', s.episode_key, s.record)
                       FROM src.episodes s LEFT JOIN main.episodes m USING (episode_key)
                       WHERE m.episode_key IS NULL
                          OR {_RANK.format('s', 'src')} < {_RANK.format('m', 'main')}""")
        db.execute(f"INSERT INTO cut SELECT r.ep, r.journal, min(r.seq) FROM src.event_rows r "
                   f"WHERE {_BAD} GROUP BY r.ep, r.journal")
        for table in ("episodes", "events", "judgments", "episode_facts"):
            db.execute(f"DELETE FROM main.{table} "
                       "WHERE episode_key IN (SELECT episode_key FROM wins)")
            if table == "events":
                db.execute(f"INSERT INTO main.events {_JOURNALS} "
                           f"WHERE k.episode_key IN (SELECT episode_key FROM wins) "
                           f"AND {_BEFORE_CUT}{_IN_ORDER}")
            elif table == "episodes":
                for whole, columns in ((1, _EPISODE_COLUMNS), (0, _AS_UNFINISHED)):
                    db.execute(f"INSERT INTO main.episodes ({_EPISODE_COLUMNS}) "
                               f"SELECT {columns} FROM src.episodes WHERE episode_key IN "
                               f"(SELECT episode_key FROM wins WHERE whole = {whole})")
            else:  # judgments (and facts) of a record left out are of what is gone
                db.execute(f"INSERT INTO main.{table} SELECT * FROM src.{table} "
                           "WHERE episode_key IN (SELECT episode_key FROM wins WHERE whole)")
        # journals of episodes that exist in neither table (an episode never started here)
        db.execute(f"""INSERT OR IGNORE INTO main.events {_JOURNALS}
                       WHERE NOT EXISTS (SELECT 1 FROM main.episodes m
                                         WHERE m.episode_key = k.episode_key)
                       AND {_BEFORE_CUT}{_IN_ORDER}""")
        records = db.execute("SELECT count(*) FROM wins WHERE NOT whole").fetchone()[0]
        rows = db.execute(
            "SELECT count(*) FROM src.event_rows r JOIN src.event_keys k ON k.ep = r.ep "
            f"WHERE NOT {_BEFORE_CUT} AND (k.episode_key IN (SELECT episode_key FROM wins) "
            "OR NOT EXISTS (SELECT 1 FROM src.episodes s WHERE s.episode_key = k.episode_key))"
        ).fetchone()[0]
        return {"records_left_out": records, "journal_rows_left_out": rows}
    finally:
        db.execute("DROP TABLE temp.wins")
        db.execute("DROP TABLE temp.cut")

