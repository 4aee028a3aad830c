"""Schema migrations of the run store, applied when an older store is opened.

Version 1 keyed episodes by (run id, episode id), where the run id was a hash of the sweep's
config: a store held sweeps, not episodes. Version 2 keys an episode by the hash of what
determines its outcome, which includes the task's *content* and the benchmark's prompt and
tool fingerprint. A version-1 store recorded neither, so its episodes cannot be given the key
a sweep computes today without guessing. The migration is therefore honest rather than
complete:

- every run, episode, journal event and judgment is kept; each episode gets a *legacy* key
  (``EpisodeKey.legacy``), so reports, exports and merges see it, but no sweep will ever
  reuse it as a result or resume its journal (a new sweep runs those episodes again);
- runs keep their config; they have no stored prices (their calls show as unpriced);
- each model call's endpoint is recovered from its role (agent: the episode's model; user:
  the run's user model; judge: the judge in the journal's name).

Version 3 keys the journal by a number given to each episode key in the order the store
first saw it (see the ``events`` view in :mod:`sweepbench.store.schema`). A version-2 store's
keys are numbered in the order of their first journaled event (the old table's rowid: the
order its rows were written) and its rows copied: nothing else changes. A version-1 store
goes to version 4 at once.

Version 4 gives the store an id (:mod:`sweepbench.store.identity`), which tells the store's
WAL file from another database's; nothing else changes.

Version 5 compresses the journal and the records (:mod:`sweepbench.store.codec`): each
benchmark's dictionary is trained from its first journal rows, every journal row compressed
with it, and every record compressed with its episode's journal; then the file is vacuumed so
it shrinks (when the disk has no room for that, the store stays as large, and correct). Every
older version goes through this step.

Version 6 adds the facts reports sum (``fact_texts``, ``call_facts``, ``episode_facts``: see
:mod:`sweepbench.store.schema`), filled once from the journal (decompressed by ``sb_json``:
the connection has :func:`sweepbench.store.codec.register`'s functions) and the records
already stored; nothing else changes. Every older version ends with this step, after the
compression (so the compression's updates do not fire the facts' triggers).

The file is first copied next to itself (``<name>.schema<version>.bak``, written under a
partial name and renamed once whole, so a full disk leaves no partial backup); the conversion
is one transaction, so a failure leaves the store as it was. A store that cannot be migrated
(read-only, no room for the backup) is refused with a message that says what to do.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

import msgspec

from sweepbench.errors import StoreError
from sweepbench.ids import EPISODE_JOURNAL, EpisodeKey, judge_journal
from sweepbench.store.codec import CODEC_TABLE, RECORD, TRAIN_AFTER, Packer, unregistered
from sweepbench.store.facts import facts_row
from sweepbench.store.identity import add_identity
from sweepbench.store.schema import (SCHEMA_VERSION, WRITE_STATEMENTS, create_events,
                                     create_facts, create_schema, fill_call_facts)
from sweepbench.wire import EpisodeRecord

__all__ = ["SCHEMA2_EVENTS", "migrate"]

_V1_TABLES = ("runs", "episodes", "events", "judgments")

SCHEMA2_EVENTS = """CREATE TABLE events (
    episode_key TEXT NOT NULL,
    journal     TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    payload     TEXT NOT NULL,
    ts          REAL NOT NULL,
    run_id      TEXT,
    endpoint    TEXT,
    PRIMARY KEY (episode_key, journal, seq)
)"""
"""Schema 2's journal, the table :func:`_number_events` converts: kept for what compares with
it or writes it (``benchmarks/events_key.py``, the migration's tests)."""


def migrate(c: sqlite3.Connection, path: Path, version: int) -> str:
    """Bring the store on connection ``c`` (autocommit mode) from ``version`` to the current
    schema; returns a one-line note for the user."""
    if version not in (1, 2, 3, 4, 5):
        raise StoreError(f"run store {path} has schema version {version}, which this "
                         f"sweepbench cannot migrate; use the sweepbench that wrote it")
    backup = path.with_name(f"{path.name}.schema{version}.bak")
    _write_backup(c, path, version, backup)
    try:
        c.execute("BEGIN IMMEDIATE")
        if c.execute("PRAGMA user_version").fetchone()[0] != version:  # done by another process
            c.execute("COMMIT")
            return f"run store {path} was migrated by another process"
        counts = {1: _convert, 2: _number_events, 3: _identify, 4: _nothing,
                  5: _nothing}[version](c)
        if version < 5:
            counts.update(_compress(c))
        counts.update(_summarize(c))
        c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        c.execute("COMMIT")
    except BaseException as exc:
        if c.in_transaction:
            c.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise StoreError(
                f"run store {path} has schema version {version} and could not be migrated to "
                f"version {SCHEMA_VERSION} ({exc}); the backup {backup} is untouched; "
                f"{_advice(exc, path, 'the migration')}") from None
        raise
    facts = (f"; the facts reports sum ({counts['calls']} model calls, {counts['episodes']} "
             "finished episodes) filled in once")
    if version == 5:
        return (f"migrated run store {path} from schema 5 to {SCHEMA_VERSION} (backup: "
                f"{backup.name}){facts}; nothing else changed")
    shrunk = _vacuum(c)
    small = (f"; its {counts['rows']} journal rows and {counts['records']} records compressed"
             f"{'' if shrunk is True else ' (the file was not shrunk: ' + str(shrunk) + ')'}")
    return _note(path, version, backup, counts) + small + facts


def _note(path: Path, version: int, backup: Path, counts: dict[str, int]) -> str:
    if version == 4:
        return (f"migrated run store {path} from schema 4 to {SCHEMA_VERSION} (backup: "
                f"{backup.name}): each conversation is stored once, compressed")
    if version == 3:
        return (f"migrated run store {path} from schema 3 to {SCHEMA_VERSION} (backup: "
                f"{backup.name}): the store has an id now, which tells its WAL file from "
                "another's")
    if version == 2:
        return (f"migrated run store {path} from schema 2 to {SCHEMA_VERSION} (backup: "
                f"{backup.name}): the journals of its {counts['keys']} episode keys "
                f"({counts['events']} events) renumbered, and the store given an id (which "
                "tells its WAL file from another's)")
    return (f"migrated run store {path} from schema 1 to {SCHEMA_VERSION} (backup: "
            f"{backup.name}): {counts['kept']} episodes of {counts['runs']} runs kept for "
            "reports; they are never reused by new runs (their task content and prompt "
            "versions were not recorded) and their calls are unpriced")


def _write_backup(c: sqlite3.Connection, path: Path, version: int, backup: Path) -> None:
    """Copy the store to ``backup``, through a partial file renamed into place once whole:
    a failure (a full disk) leaves no partial backup or journal, and an older backup as it
    was."""
    partial = backup.with_name(backup.name + ".partial")
    try:
        dest = sqlite3.connect(partial)
        try:
            c.backup(dest)
        finally:
            dest.close()
        os.replace(partial, backup)
    except (sqlite3.Error, OSError) as exc:
        for leftover in (partial, partial.with_name(partial.name + "-journal")):
            leftover.unlink(missing_ok=True)
        raise StoreError(
            f"run store {path} has schema version {version} and must be migrated to version "
            f"{SCHEMA_VERSION}, but no backup could be written to {backup} ({exc}); "
            f"{_advice(exc, path, 'the backup')}") from None


def _advice(exc: BaseException, path: Path, what: str) -> str:
    """What to do about a failed backup or migration, by its cause."""
    hint = unregistered(exc)
    if hint:
        return hint
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC or "full" in str(exc):
        try:
            need = path.stat().st_size
            free = shutil.disk_usage(path.parent).free
        except OSError:
            return "free some space on its disk and run the command again"
        return (f"{what} needs about {need / 1e6:.1f} MB beside the store and its disk has "
                f"{free / 1e6:.1f} MB free: free some space there and run the command again, "
                "or copy the store to a disk with room and open the copy")
    return ("copy the store to a writable directory and open the copy, or use the "
            "sweepbench that wrote it")


def _convert(c: sqlite3.Connection) -> dict[str, int]:
    for t in _V1_TABLES:
        c.execute(f"ALTER TABLE {t} RENAME TO v1_{t}")
    create_schema(c)
    configs = {r: _decode(cfg) for r, cfg in c.execute("SELECT run_id, config FROM v1_runs")}
    models = {(r, e): m for r, e, m in
              c.execute("SELECT run_id, episode_id, model FROM v1_episodes")}

    def key(run_id: str, journal_id: str) -> str:
        return str(EpisodeKey.legacy("schema1", run_id, _episode_of(journal_id)))

    def journal(journal_id: str) -> str:
        if journal_id.startswith("judge|"):
            _, judge, method, _ = journal_id.split("|", 3)
            return judge_journal(judge, method)
        return EPISODE_JOURNAL

    def endpoint(run_id: str, journal_id: str, role: str | None) -> str | None:
        if journal_id.startswith("judge|"):
            return journal_id.split("|", 3)[1]
        if role == "agent":
            return models.get((run_id, journal_id))
        if role == "user":
            return configs.get(run_id, {}).get("user_model")
        return None

    def run_field(run_id: str, name: str) -> str | None:
        value = configs.get(run_id, {}).get(name)
        return value if isinstance(value, str) else None

    def identity(run_id: str, episode_id: str) -> str:
        return msgspec.json.encode({"legacy": {"schema": 1, "run_id": run_id,
                                               "episode_id": episode_id}}).decode()

    for name, fn, n in (("v1_key", key, 2), ("v1_journal", journal, 1),
                        ("v1_endpoint", endpoint, 3), ("v1_run_field", run_field, 2),
                        ("v1_identity", identity, 2)):
        c.create_function(name, n, fn, deterministic=True)
    c.execute("""INSERT INTO runs (run_id, created_at, finished_at, status, config, config_hash,
                                   prices, info)
                 SELECT run_id, created_at, finished_at, status, config, config_hash, '{}',
                        '{"migrated_from_schema": 1}' FROM v1_runs""")
    c.execute("""INSERT INTO episodes (episode_key, label, model, benchmark, spec, domain,
                     task_id, lang, trial, user_model, user_mode, identity, unreachable, status,
                     termination, record, run_id, started_at, finished_at)
                 SELECT v1_key(run_id, episode_id), episode_id, model, benchmark, NULL, domain,
                        task_id, lang, trial, v1_run_field(run_id, 'user_model'),
                        v1_run_field(run_id, 'user_mode'), v1_identity(run_id, episode_id),
                        NULL, status, termination, record, run_id, started_at, finished_at
                 FROM v1_episodes""")
    c.execute("""INSERT INTO run_episodes (run_id, episode_key, spec)
                 SELECT run_id, v1_key(run_id, episode_id), NULL FROM v1_episodes""")
    c.execute("""INSERT OR IGNORE INTO events (episode_key, journal, seq, kind, payload, ts,
                     run_id, endpoint)
                 SELECT v1_key(run_id, episode_id), v1_journal(episode_id), seq, kind, payload,
                        ts, run_id, CASE kind WHEN 'model_call' THEN v1_endpoint(run_id,
                        episode_id, json_extract(payload, '$.role')) END
                 FROM v1_events""")
    c.execute("""INSERT OR IGNORE INTO judgments (episode_key, judge, method, passed, score,
                     details, created_at, run_id, judge_key)
                 SELECT v1_key(run_id, episode_id), judge, method, passed, score, details,
                        created_at, run_id, '' FROM v1_judgments""")
    counts = {"runs": len(configs), "kept": len(models)}  # "episodes": the facts' (finished)
    for t in _V1_TABLES:
        c.execute(f"DROP TABLE v1_{t}")
    return counts  # the facts: filled by the last step (_summarize)


def _number_events(c: sqlite3.Connection) -> dict[str, int]:
    """Version 2 to 3: the events table becomes event_keys, event_rows and the view."""
    c.execute("ALTER TABLE events RENAME TO v2_events")
    create_events(c)
    c.execute("""INSERT INTO event_keys (episode_key) SELECT episode_key FROM v2_events
                 GROUP BY episode_key ORDER BY min(rowid)""")
    c.execute("""INSERT INTO event_rows (ep, journal, seq, kind, payload, ts, run_id, endpoint)
                 SELECT k.ep, e.journal, e.seq, e.kind, e.payload, e.ts, e.run_id, e.endpoint
                 FROM v2_events e JOIN event_keys k USING (episode_key)
                 ORDER BY k.ep, e.journal, e.seq""")
    counts = {"keys": c.execute("SELECT count(*) FROM event_keys").fetchone()[0],
              "events": c.execute("SELECT count(*) FROM event_rows").fetchone()[0]}
    c.execute("DROP TABLE v2_events")
    return {**counts, **_identify(c)}


def _nothing(c: sqlite3.Connection) -> dict[str, int]:
    """Version 4 to 5 is all in :func:`_compress`, 5 to 6 in :func:`_summarize`."""
    return {}


def _identify(c: sqlite3.Connection) -> dict[str, int]:
    """Version 3 to 4: the store gets its id (see :mod:`sweepbench.store.identity`)."""
    add_identity(c)
    return {}


def _summarize(c: sqlite3.Connection) -> dict[str, int]:
    """Version 5 to 6: the facts reports sum, filled from the journal (``sb_json``) and the
    records."""
    create_facts(c)
    fill_call_facts(c)
    episodes = _fill_episode_facts(c)
    return {"calls": c.execute("SELECT count(*) FROM call_facts").fetchone()[0],
            "episodes": episodes}


_record = msgspec.json.Decoder(EpisodeRecord)


def _fill_episode_facts(c: sqlite3.Connection, batch: int = 2000) -> int:
    """The facts of every stored record (decompressed by ``sb_record``), decoded a batch at
    a time (bounded memory); a record that does not decode gets none (reports say so when they
    read it)."""
    insert = WRITE_STATEMENTS["episode_facts"]
    done, last = 0, ""
    while True:
        rows = c.execute("SELECT episode_key, sb_record(episode_key, record) FROM episodes "
                         "WHERE episode_key > ? AND record IS NOT NULL ORDER BY episode_key "
                         "LIMIT ?",
                         (last, batch)).fetchall()
        if not rows:
            return done
        facts = []
        for key, blob in rows:
            try:
                facts.append(facts_row(key, _record.decode(blob)))
            except (msgspec.DecodeError, TypeError):
                continue
        c.executemany(insert, facts)
        done += len(facts)
        last = rows[-1][0]


_BATCH = 2000


def _compress(c: sqlite3.Connection, train_after: int = TRAIN_AFTER) -> dict[str, int]:
    """Version 4 to 5 (the last step of every migration): the dictionaries, trained from each
    benchmark's first ``train_after`` journal rows (in the order they were written), then every
    journal row (text that is JSON or not; anything else is left as it is) and every record
    compressed."""
    if not c.execute("SELECT 1 FROM sqlite_master WHERE name = 'codec_dicts'").fetchone():
        c.execute(CODEC_TABLE)
    rows = ("SELECT r.rowid, coalesce(e.benchmark, ''), r.payload FROM event_rows r "
            "JOIN event_keys k ON k.ep = r.ep LEFT JOIN episodes e "
            "ON e.episode_key = k.episode_key AND r.journal = '' WHERE r.rowid > ? "
            "ORDER BY r.rowid LIMIT ?")
    samples: dict[str, list[bytes]] = {}
    last = 0
    while batch := c.execute(rows, (last, _BATCH)).fetchall():
        for _, grp, payload in batch:
            if isinstance(payload, str) and len(samples.setdefault(grp, [])) < train_after:
                samples[grp].append(payload.encode("utf-8"))
        last = batch[-1][0]
        if all(len(s) >= train_after for s in samples.values()):
            break
    packer = Packer(c, train_after=train_after)
    for grp, some in samples.items():
        packer.train(grp, some)
    counts = {"rows": 0, "records": 0}
    last = 0
    while batch := c.execute(rows, (last, _BATCH)).fetchall():
        c.executemany("UPDATE event_rows SET payload = ? WHERE rowid = ?",
                      [(packer.payload(grp, p), i) for i, grp, p in batch if isinstance(p, str)])
        counts["rows"] += len(batch)
        last = batch[-1][0]
    records = ("SELECT rowid, episode_key, benchmark, record FROM episodes "
               "WHERE record IS NOT NULL AND rowid > ? ORDER BY rowid LIMIT ?")
    last = 0
    while batch := c.execute(records, (last, _BATCH)).fetchall():
        c.executemany("UPDATE episodes SET record = ? WHERE rowid = ?", [
            (packer.record(key, bench, r.encode("utf-8") if isinstance(r, str) else r), i)
            for i, key, bench, r in batch
            if isinstance(r, str) or isinstance(r, bytes) and r[:1] != bytes((RECORD,))])
        counts["records"] += len(batch)
        last = batch[-1][0]
    return counts


def _vacuum(c: sqlite3.Connection) -> bool | str:
    """Shrink the file to what the compressed store holds: True, or why not."""
    try:
        c.execute("VACUUM")
    except sqlite3.Error as e:
        return str(e)
    return True


def _episode_of(journal_id: str) -> str:
    """The episode id in a version-1 journal id (a judge's is ``judge|J|M|<episode id>``)."""
    return journal_id.split("|", 3)[3] if journal_id.startswith("judge|") else journal_id


def _decode(text: str) -> dict:
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}
