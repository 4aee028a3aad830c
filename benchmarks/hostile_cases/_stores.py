"""Small run stores built with the store API (no sweep), and the damage done to them, for the
store's attacks and tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import zstandard as zstd

from sweepbench.store.codec import PAYLOAD, journal_prefix, register
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import AssistantMessage, EpisodeRecord, Usage, UserMessage

MODEL = "scripted/oracle"


def key(i: int) -> str:
    return f"ep-{i:04d}"


def small_store(path: Path, run_id: str = "r1", episodes: int = 3) -> Path:
    """A store with one run of ``episodes`` finished VitaBench delivery episodes (keys
    ``ep-0000``...), each with a record, two journaled model calls and a state verdict
    (even ones pass)."""
    with RunStore(path) as store:
        store.begin_run(run_id, {"models": [MODEL], "trials": 1},
                        prices={MODEL: {"input": 1.0, "cached_input": 0.5, "output": 2.0}},
                        info={"command": "run"})
        for i in range(episodes):
            task = f"T{i}"
            meta = EpisodeMeta(key=key(i), label=f"{MODEL}|vitabench:delivery:en:{task}|0",
                               model=MODEL, benchmark="vitabench", domain="delivery",
                               task_id=task, lang="en", trial=0)
            store.select(run_id, [meta])
            store.episode_started(meta, run_id=run_id)
            for seq, role in enumerate(("user", "agent")):
                store.event(key(i), seq, "model_call",
                            {"role": role, "usage": {"prompt_tokens": 100,
                                                     "completion_tokens": 10}},
                            run_id=run_id, endpoint=MODEL)
            store.episode_finished(key(i), EpisodeRecord(
                run_id=run_id, model=MODEL, benchmark="vitabench", domain="delivery",
                task_id=task, lang="en", trial=0, termination="user_stop",
                messages=[UserMessage("order noodles"), AssistantMessage("done")],
                agent_usage=Usage(100, 10), user_usage=Usage(100, 10), agent_calls=1,
                user_calls=1, turns=1, wall_s=1.0))
            store.judgment(key(i), judge="state", method="state", passed=i % 2 == 0,
                           score=1.0 if i % 2 == 0 else 0.0, details={}, run_id=run_id)
    return path


def _write(path: Path, sql: str, params: tuple) -> None:
    db = sqlite3.connect(path)
    register(db)  # the journal's triggers decode payloads with sb_json
    try:
        db.execute(sql, params)
        db.commit()
    finally:
        db.close()  # checkpointed: no WAL left beside the store


def garble_record(path: Path, episode: str) -> None:
    """The episode's record becomes bytes that are not JSON (a bit flip, a torn write)."""
    _write(path, "UPDATE episodes SET record = ? WHERE episode_key = ?",
           (b'{"run_id": "r1", "mod\xff\x00', episode))


def garble_event(path: Path, episode: str, seq: int = 1) -> None:
    """One of the episode's journal rows becomes text that is not JSON."""
    _write(path, "UPDATE event_rows SET payload = ? WHERE seq = ? AND ep = "
           "(SELECT ep FROM event_keys WHERE episode_key = ?)", ('{"role": "agent", "usa', seq,
                                                                  episode))


def as_schema_4(path: Path) -> Path:
    """Rewrite a store as schema 4 had it (every journal payload JSON text, every record
    uncompressed JSON, no dictionaries): what an older sweepbench wrote, for migrations and
    comparisons."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        unpacker = register(db)
        db.execute("BEGIN")
        for name in ("call_facts_insert", "call_facts_update", "call_facts_delete",
                     "episode_facts_update", "episode_facts_journal_update",
                     "episode_facts_journal_delete"):  # schema 6's facts: not in schema 4
            db.execute(f"DROP TRIGGER IF EXISTS {name}")
        for table in ("call_facts", "episode_facts", "fact_texts"):
            db.execute(f"DROP TABLE IF EXISTS {table}")
        rows = db.execute("SELECT rowid, payload FROM event_rows").fetchall()
        records = db.execute("SELECT rowid, episode_key, record FROM episodes "
                             "WHERE record IS NOT NULL").fetchall()
        db.executemany("UPDATE episodes SET record = ? WHERE rowid = ?", [
            (unpacker.record(r, journal_prefix(db, key)), i) for i, key, r in records])
        db.executemany("UPDATE event_rows SET payload = ? WHERE rowid = ?",
                       [(unpacker.payload(p).decode(), i) for i, p in rows])
        db.execute("DROP TABLE codec_dicts")
        db.execute("PRAGMA user_version = 4")
        db.execute("COMMIT")
        db.execute("VACUUM")
    finally:
        db.close()
    return path


def garble_compressed_event(path: Path, episode: str, seq: int = 1) -> None:
    """One of the episode's journal rows becomes a compressed payload with a bit flipped in
    its zstd frame (the store's own form, damaged)."""
    frame = bytearray(zstd.ZstdCompressor(write_checksum=True).compress(
        b'{"role": "agent", "usage": {"prompt_tokens": 100, "completion_tokens": 10}}'))
    frame[len(frame) // 2] ^= 0x40
    _set_payload(path, episode, seq, _compressed(bytes(frame)))


def zstd_bomb_event(path: Path, episode: str, seq: int = 0, size: int = 1 << 30,
                    declared: bool = True) -> None:
    """One of the episode's journal rows becomes a compressed payload a few KB long that
    decodes to ``size`` zero bytes (declaring that size in its frame, or not)."""
    chunks = zstd.ZstdCompressor(write_content_size=declared).compressobj(
        size=size if declared else -1)
    zeros = bytes(1 << 20)
    frame = b"".join(chunks.compress(zeros) for _ in range(size >> 20)) + chunks.flush()
    _set_payload(path, episode, seq, _compressed(frame))


def _compressed(frame: bytes) -> bytes:
    """A journal payload in the store's compressed form, without a dictionary."""
    return bytes((PAYLOAD,)) + (0).to_bytes(8, "little") + frame


def _set_payload(path: Path, episode: str, seq: int, value: bytes) -> None:
    _write(path, "UPDATE event_rows SET payload = ? WHERE seq = ? AND ep = "
           "(SELECT ep FROM event_keys WHERE episode_key = ?)", (value, seq, episode))


def truncate(path: Path, keep: float = 0.5) -> None:
    """Cut the file short (a copy interrupted, a full disk)."""
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep) // 4096 * 4096])
