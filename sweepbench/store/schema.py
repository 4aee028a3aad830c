"""The run store's on-disk format: its tables, the statements that write them, its version.

One SQLite file per store. Episodes, not runs, are the unit: an episode is keyed by its
``EpisodeKey`` (the hash of what determines its outcome, see :mod:`sweepbench.ids`), so a
store accumulates episodes across invocations and a second sweep that selects a stored
episode reuses it. Tables (schema version in ``PRAGMA user_version``; an older store is
migrated on open, see :mod:`sweepbench.store.migrate`):

- ``runs``: one row per invocation (``run``, ``judge``, an import): run_id, created_at,
  finished_at, status, config (canonical JSON), config_hash, prices (endpoint -> input /
  cached_input / output dollars per million tokens, as configured when it ran), info (JSON:
  the benchmarks' headline methods, the command, a spend cap reached).
- ``run_episodes``: (run_id, episode_key) -> spec: the episodes a run selected, stored or not.
- ``episodes``: episode_key -> label (``model|task key|trial``), model, benchmark, spec,
  domain, task_id, lang, trial, user_model, user_mode, identity (JSON), unreachable (why no
  agent can pass the task, or NULL), status ('running' | 'done' | 'error'), termination,
  record (msgspec JSON of ``EpisodeRecord``), run_id (the run that last started or finished
  it), started_at, finished_at.
- ``events``: (episode_key, journal, seq) -> kind, payload (JSON text), ts, run_id (the run
  that wrote it), endpoint (the endpoint a ``model_call`` went to). The journal is ``""`` for
  the episode's own calls and ``judge|<judge>|<method>`` for a judge's. Append-only: writing
  an existing seq again is a no-op, so a replay may re-send safely. A view (read it, insert
  into it, delete from it like a table) over ``event_keys`` (ep -> episode_key: each key
  numbered in the order the store first saw it, which is the order episodes start) and
  ``event_rows`` (keyed by (ep, journal, seq)), so that the rows of the episodes in flight
  are written side by side in the key's index (version 3).
- ``store_identity``: one row, the store's random id and a count of the transactions that
  wrote it: every write transaction updates it, so that a WAL file beside the store can be
  told to be its own (:mod:`sweepbench.store.identity`; version 4).
- ``codec_dicts``: id -> grp, dict: the zstd dictionaries journal rows are compressed with
  (version 5). From version 5 a journal payload and a record are JSON text or a compressed
  BLOB, and a record is compressed with its episode's journal, so a conversation is stored
  once (:mod:`sweepbench.store.codec`).
- ``fact_texts``, ``call_facts`` and ``episode_facts`` (version 6): what reports sum, so that
  they never decode a transcript (see :data:`FACT_TABLES`).
- ``judgments``: (episode_key, judge, method) -> passed, score, details (JSON), created_at,
  run_id, judge_key (what the judge was: its endpoint identity). Re-judging with the same
  judge and method replaces; other pairs sit side by side; starting an episode again (a
  retry) deletes its judgments, which judged the record it replaces.

Timestamps are Unix seconds (float), taken when the write is enqueued. Configs, prices and
infos are stored as canonical JSON (:func:`canonical_json`), so a config's hash
(:func:`config_hash`) is the same however its keys were ordered.
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Any

import msgspec

from sweepbench.store.codec import CODEC_TABLE
from sweepbench.store.identity import add_identity

__all__ = ["APPLICATION_ID", "CALL_FACTS_ODD", "EPISODE_STATUSES", "EVENT_TABLES", "FACT_TABLES",
           "READABLE_SINCE",
           "SCHEMA_VERSION",
           "VIEW_INDEXES", "WRITE_STATEMENTS", "canonical_json", "config_hash",
           "create_events", "create_facts", "create_schema", "fill_call_facts"]

SCHEMA_VERSION = 6
READABLE_SINCE = 3
"""The oldest schema read as it is, without a migration (4 only adds the store's id, 5 a
table of compression dictionaries that an older store's rows do not need, 6 the facts reports
sum, which reports of an older store do without, reading its transcripts)."""
APPLICATION_ID = 0x53574250  # "SWBP": marks the file as a sweepbench run store

EPISODE_STATUSES = ("running", "done", "error")

_SCHEMA = """
CREATE TABLE runs (
    run_id      TEXT PRIMARY KEY,
    created_at  REAL NOT NULL,
    finished_at REAL,
    status      TEXT NOT NULL,
    config      TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    prices      TEXT NOT NULL DEFAULT '{}',
    info        TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE run_episodes (
    run_id      TEXT NOT NULL,
    episode_key TEXT NOT NULL,
    spec        TEXT,
    PRIMARY KEY (run_id, episode_key)
);
CREATE TABLE episodes (
    episode_key TEXT PRIMARY KEY,
    label       TEXT NOT NULL,
    model       TEXT NOT NULL,
    benchmark   TEXT NOT NULL,
    spec        TEXT,
    domain      TEXT NOT NULL,
    task_id     TEXT NOT NULL,
    lang        TEXT,
    trial       INTEGER NOT NULL,
    user_model  TEXT,
    user_mode   TEXT,
    identity    TEXT NOT NULL DEFAULT '{}',
    unreachable TEXT,
    status      TEXT NOT NULL CHECK (status IN ('running', 'done', 'error')),
    termination TEXT,
    record      BLOB,
    run_id      TEXT,
    started_at  REAL NOT NULL,
    finished_at REAL
);
CREATE INDEX episodes_by_model ON episodes (model, benchmark, domain, task_id, trial);
CREATE INDEX episodes_by_label ON episodes (label);
CREATE TABLE judgments (
    episode_key TEXT NOT NULL,
    judge       TEXT NOT NULL,
    method      TEXT NOT NULL,
    passed      INTEGER CHECK (passed IN (0, 1)),
    score       REAL,
    details     TEXT NOT NULL,
    created_at  REAL NOT NULL,
    run_id      TEXT,
    judge_key   TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (episode_key, judge, method)
)
"""

# The journal (see the module docstring): an episode's key is numbered the first time the
# store sees it, and its events are keyed by that number, so the episodes in flight sit side
# by side in the key's index (a content hash leading the key put each row on a page of its
# own). ``events`` is a view with the columns of schema 2's table; writing through it
# (INSERT [OR IGNORE], DELETE) goes through its triggers, which number a new key. The
# writer's insert does not: it names the number's row, which the store writes first.
EVENT_TABLES = """
CREATE TABLE event_keys (
    ep          INTEGER PRIMARY KEY,
    episode_key TEXT NOT NULL UNIQUE
);
CREATE TABLE event_rows (
    ep          INTEGER NOT NULL,
    journal     TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    payload     TEXT NOT NULL,
    ts          REAL NOT NULL,
    run_id      TEXT,
    endpoint    TEXT,
    PRIMARY KEY (ep, journal, seq)
)
"""
# Statements with statements inside: a tuple, not split on ";". The insert trigger numbers
# a key with NOT EXISTS rather than OR IGNORE, which an INSERT OR REPLACE through the view
# would override (and renumber the key, orphaning its rows); a key keeps its number when its
# rows are deleted.
_EVENTS_VIEW = (
    """CREATE VIEW events AS
       SELECT k.episode_key AS episode_key, r.journal AS journal, r.seq AS seq, r.kind AS kind,
              r.payload AS payload, r.ts AS ts, r.run_id AS run_id, r.endpoint AS endpoint
       FROM event_keys k JOIN event_rows r ON r.ep = k.ep""",
    """CREATE TRIGGER events_insert INSTEAD OF INSERT ON events BEGIN
           INSERT INTO event_keys (episode_key) SELECT NEW.episode_key
           WHERE NOT EXISTS (SELECT 1 FROM event_keys WHERE episode_key = NEW.episode_key);
           INSERT INTO event_rows (ep, journal, seq, kind, payload, ts, run_id, endpoint)
           VALUES ((SELECT ep FROM event_keys WHERE episode_key = NEW.episode_key),
                   NEW.journal, NEW.seq, NEW.kind, NEW.payload, NEW.ts, NEW.run_id,
                   NEW.endpoint);
       END""",
    """CREATE TRIGGER events_delete INSTEAD OF DELETE ON events BEGIN
           DELETE FROM event_rows
           WHERE ep = (SELECT ep FROM event_keys WHERE episode_key = OLD.episode_key)
             AND journal = OLD.journal AND seq = OLD.seq;
       END""",
)

# Version 6: the facts reports sum, beside the journal and the records they come from, so that
# a report reads a few numbers per call and per episode instead of decoding transcripts.
#
# ``call_facts``: one row per journaled model call, written by a trigger on ``event_rows`` (so
# every way a row is written fills it: merge, imports, migrations; the store's writer writes
# it itself from the payload before compressing it, :mod:`sweepbench.store.call_facts`, and
# the trigger skips a row whose facts are there), each field as
# the transcript-based read (``StoreReads.model_calls``) extracts and sanitises it from the
# payload: a number only when the payload holds a number (token counts >= 0, cached at most
# the prompt), a text only when it is a text or JSON, ``failures`` NULL when it is ``[]``.
# Run, endpoint, role and statuses are ids of ``fact_texts`` (a reader fetches numbers only);
# the rare texts (stalls, replica, failures) are kept as they are, in a partial index with
# the rows whose payload does not decode (``valid`` 0: reports leave them out and say so).
# Deleting a journal row deletes its facts; changing or deleting a row of an episode's own
# journal deletes the episode's facts (its record is compressed against that journal).
#
# ``episode_facts``: one row per finished episode, from its record (written with it by the
# store; deleted when the episode starts again): its counts (turns, steps, calls, tool calls
# and errors), wall time, the agent's and the user's usage, and the error text of an episode
# that ended in error.
FACT_TABLES = """
CREATE TABLE IF NOT EXISTS fact_texts (
    id          INTEGER PRIMARY KEY,
    text        TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS call_facts (
    ep          INTEGER NOT NULL,
    journal     TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    valid       INTEGER NOT NULL,
    run_id      INTEGER,
    endpoint    INTEGER,
    ts          REAL,
    role        INTEGER,
    prompt      INTEGER,
    completion  INTEGER,
    cached      INTEGER,
    latency_s   REAL,
    attempts    INTEGER,
    statuses    INTEGER,
    stalls      TEXT,
    replica     TEXT,
    failures    TEXT,
    PRIMARY KEY (ep, journal, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS call_facts_odd ON call_facts (ep, journal, seq)
    WHERE NOT valid OR stalls IS NOT NULL OR replica IS NOT NULL OR failures IS NOT NULL;
CREATE TABLE IF NOT EXISTS episode_facts (
    episode_key     TEXT PRIMARY KEY,
    turns           INTEGER NOT NULL,
    steps           INTEGER NOT NULL,
    agent_calls     INTEGER NOT NULL,
    user_calls      INTEGER NOT NULL,
    tool_calls      INTEGER NOT NULL,
    tool_errors     INTEGER NOT NULL,
    wall_s          REAL NOT NULL,
    agent_prompt    INTEGER NOT NULL,
    agent_completion INTEGER NOT NULL,
    agent_cached    INTEGER NOT NULL,
    agent_reasoning INTEGER NOT NULL,
    user_prompt     INTEGER NOT NULL,
    user_completion INTEGER NOT NULL,
    user_cached     INTEGER NOT NULL,
    user_reasoning  INTEGER NOT NULL,
    error           TEXT
) WITHOUT ROWID
"""
CALL_FACTS_ODD = ("(NOT {0}.valid OR {0}.stalls IS NOT NULL OR {0}.replica IS NOT NULL OR "
                  "{0}.failures IS NOT NULL)")
"""The calls the partial index ``call_facts_odd`` holds (format with the table's alias):
payloads that do not decode, and the rare fields."""


_DECODED = ("(SELECT {0}ep AS ep, {0}journal AS journal, {0}seq AS seq, {0}ts AS ts, "
            "{0}run_id AS run_id, {0}endpoint AS endpoint, sb_json({0}payload) AS payload{1} "
            "LIMIT -1 OFFSET 0) r")
"""A journal row with its payload as JSON text (``sb_json``, :func:`sweepbench.store.codec.
register`: compressed rows decompressed, NULL where they do not decode). Not flattened into
the statement that reads it (OFFSET), so each payload is decoded once however many fields are
extracted from it."""


def _call_facts(source: str) -> tuple[str, ...]:
    """The statements that write the facts of the journal rows ``source`` selects (``NEW``
    in the trigger, every model call in a migration), as an alias ``r`` of :data:`_DECODED`:
    its texts numbered in ``fact_texts``, then its row, each field as
    ``StoreReads.model_calls`` reads it (NULL where the payload does not decode)."""
    decoded = (_DECODED.format("NEW.", "") if source == "NEW" else
               _DECODED.format("", " FROM event_rows WHERE kind = 'model_call'"))
    row = "r"
    valid = f"(typeof({row}.payload) = 'text' AND json_valid({row}.payload))"

    def x(path: str) -> str:  # reads._field: never extracted from a payload that does not decode
        return f"CASE WHEN {valid} THEN json_extract({row}.payload, '$.{path}') END"

    def num(path: str, kind: str) -> str:  # reads._num: NULL unless a number
        return (f"CASE WHEN typeof({x(path)}) IN ('integer', 'real') "
                f"THEN CAST({x(path)} AS {kind}) END")

    def text(path: str) -> str:
        return f"CASE WHEN typeof({x(path)}) = 'text' THEN {x(path)} END"

    def tokens(path: str) -> str:
        return f"max(0, coalesce({num(path, 'INTEGER')}, 0))"

    def code(value: str) -> str:
        return f"(SELECT id FROM fact_texts WHERE text = {value})"

    # the run and the endpoint are columns: no payload decoded for them
    texts = [(f"INSERT OR IGNORE INTO fact_texts (text) SELECT NEW.{v} "
              f"WHERE NEW.{v} IS NOT NULL") if source == "NEW" else
             (f"INSERT OR IGNORE INTO fact_texts (text) SELECT {v} FROM event_rows "
              f"WHERE kind = 'model_call' AND {v} IS NOT NULL") for v in ("run_id", "endpoint")]
    texts += [f"INSERT OR IGNORE INTO fact_texts (text) SELECT {v} FROM {decoded} "
              f"WHERE {v} IS NOT NULL" for v in (text("role"), text("statuses"))]
    return (*texts,
            (f"INSERT OR REPLACE INTO call_facts SELECT {row}.ep, {row}.journal, {row}.seq, "
             f"{valid}, {code(f'{row}.run_id')}, {code(f'{row}.endpoint')}, {row}.ts, "
             f"{code(text('role'))}, {tokens('usage.prompt_tokens')}, "
             f"{tokens('usage.completion_tokens')}, "
             f"min({tokens('usage.cached_prompt_tokens')}, {tokens('usage.prompt_tokens')}), "
             f"{num('latency_s', 'REAL')}, {num('attempts', 'INTEGER')}, "
             f"{code(text('statuses'))}, {text('stalls')}, {text('replica')}, "
             f"CASE WHEN {text('failures')} != '[]' THEN {text('failures')} END "
             f"FROM {decoded}"))


_CALL_FACTS_TRIGGERS = (
    # the store's writer writes a call's facts itself, before the row (store.call_facts)
    f"""CREATE TRIGGER IF NOT EXISTS call_facts_insert AFTER INSERT ON event_rows
        WHEN NEW.kind = 'model_call' AND NOT EXISTS (SELECT 1 FROM call_facts
            WHERE ep = NEW.ep AND journal = NEW.journal AND seq = NEW.seq) BEGIN
           {"; ".join(_call_facts("NEW"))};
       END""",
    f"""CREATE TRIGGER IF NOT EXISTS call_facts_update AFTER UPDATE OF payload ON event_rows
        WHEN NEW.kind = 'model_call' BEGIN
           {"; ".join(_call_facts("NEW"))};
       END""",
    # a record written again (or changed outside the store) takes its facts with it: the
    # store writes a finished record's facts right after it; a reader without them reads
    # the record itself
    """CREATE TRIGGER IF NOT EXISTS episode_facts_update AFTER UPDATE OF record ON episodes
       BEGIN
           DELETE FROM episode_facts WHERE episode_key = OLD.episode_key;
       END""",
    # a record is stored compressed against its episode's own journal (store.codec): a row of
    # it changed or deleted outside the store may leave the record undecodable, so the
    # episode's facts go and a reader reads (and judges) the record itself
    """CREATE TRIGGER IF NOT EXISTS episode_facts_journal_update AFTER UPDATE OF payload
       ON event_rows WHEN NEW.journal = '' BEGIN
           DELETE FROM episode_facts WHERE episode_key =
               (SELECT episode_key FROM event_keys WHERE ep = NEW.ep);
       END""",
    """CREATE TRIGGER IF NOT EXISTS episode_facts_journal_delete AFTER DELETE ON event_rows
       WHEN OLD.journal = '' BEGIN
           DELETE FROM episode_facts WHERE episode_key =
               (SELECT episode_key FROM event_keys WHERE ep = OLD.ep);
       END""",
    """CREATE TRIGGER IF NOT EXISTS call_facts_delete AFTER DELETE ON event_rows
       WHEN OLD.kind = 'model_call' BEGIN
           DELETE FROM call_facts WHERE ep = OLD.ep AND journal = OLD.journal AND seq = OLD.seq;
       END""",
)


def fill_call_facts(c: sqlite3.Connection) -> None:
    """Facts for every journaled model call already stored (a migration's backfill; ``c``
    has :func:`sweepbench.store.codec.register`'s functions)."""
    for stmt in _call_facts("event_rows"):
        c.execute(stmt)


# What readers filter, group and page by without touching the record blobs (which sit
# before started_at in a row, so reading past them means reading their overflow pages): the
# viewer's episode lists, in their order, and its leaderboards (covering; the columns after
# episode_key also decide which identity of a (model, task, trial) is the newest), each
# episode's verdicts by judge and method (covering: what lists and leaderboards join), and
# the runs that selected an episode.
VIEW_INDEXES = (
    ("episodes_view", "episodes (model, benchmark, domain, task_id, trial, episode_key, status, "
                      "termination, lang, user_model, user_mode, started_at, unreachable)"),
    ("judgments_by_episode", "judgments (episode_key, judge, method, passed, score)"),
    ("run_episodes_by_episode", "run_episodes (episode_key, run_id)"),
)

# Write statements, keyed by the op name the store puts on its writer's queue
# (:mod:`sweepbench.store.writer`).
WRITE_STATEMENTS: dict[str, str] = {
    # Re-beginning an existing run marks it running again; created_at and config stay.
    "begin_run": """
        INSERT INTO runs (run_id, created_at, finished_at, status, config, config_hash, prices,
                          info)
        VALUES (?, ?, NULL, 'running', ?, ?, ?, ?)
        ON CONFLICT (run_id) DO UPDATE SET status = 'running', finished_at = NULL,
            prices = excluded.prices, info = excluded.info
    """,
    "finish_run": "UPDATE runs SET status = ?, finished_at = ?, info = json_patch(info, ?) "
                  "WHERE run_id = ?",
    "select": """
        INSERT INTO run_episodes (run_id, episode_key, spec) VALUES (?, ?, ?)
        ON CONFLICT (run_id, episode_key) DO NOTHING
    """,
    # A stored episode selected under another name (a renamed endpoint with the same identity)
    # takes the name it is selected by now; its unreachability is what the code says now.
    "relabel": """
        UPDATE episodes SET model = ?, label = ?, spec = coalesce(spec, ?), unreachable = ?
        WHERE episode_key = ?
    """,
    # Starting an episode again (resume, retry) resets its outcome; its journal is kept and its
    # judgments, which judged the record being replaced, are deleted (see "clear_judgments").
    "episode_started": """
        INSERT INTO episodes (episode_key, label, model, benchmark, spec, domain, task_id, lang,
                              trial, user_model, user_mode, identity, unreachable, status,
                              run_id, started_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)
        ON CONFLICT (episode_key) DO UPDATE SET
            label = excluded.label, model = excluded.model, spec = coalesce(episodes.spec,
            excluded.spec), unreachable = excluded.unreachable, status = 'running',
            termination = NULL, record = NULL, run_id = excluded.run_id,
            started_at = excluded.started_at, finished_at = NULL
    """,
    "clear_judgments": "DELETE FROM judgments WHERE episode_key = ?",
    "clear_facts": "DELETE FROM episode_facts WHERE episode_key = ?",
    "episode_facts": "INSERT OR REPLACE INTO episode_facts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                     "?, ?, ?, ?, ?, ?, ?, ?)",
    # Upsert, so a finish without a start is not lost (its columns then come from the record).
    "episode_finished": """
        INSERT INTO episodes (episode_key, label, model, benchmark, domain, task_id, lang,
                              trial, status, termination, record, run_id, started_at,
                              finished_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (episode_key) DO UPDATE SET
            status = excluded.status, termination = excluded.termination,
            record = excluded.record, run_id = excluded.run_id,
            finished_at = excluded.finished_at
    """,
    # A key's number, given the first time this store's process sees the key (it keeps the
    # number it has); written before the key's first event (see "event").
    "event_key": "INSERT OR IGNORE INTO event_keys (episode_key) VALUES (?)",
    # Straight into the rows, not through the view's trigger: the key is numbered already.
    "event": """
        INSERT INTO event_rows (ep, journal, seq, kind, payload, ts, run_id, endpoint)
        VALUES ((SELECT ep FROM event_keys WHERE episode_key = ?), ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (ep, journal, seq) DO NOTHING
    """,
    "judgment": """
        INSERT INTO judgments (episode_key, judge, method, passed, score, details, created_at,
                               run_id, judge_key)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (episode_key, judge, method) DO UPDATE SET
            passed = excluded.passed, score = excluded.score, details = excluded.details,
            created_at = excluded.created_at, run_id = excluded.run_id,
            judge_key = excluded.judge_key
    """,
}


def canonical_json(obj: Any) -> bytes:
    """Compact JSON with sorted keys: the same value always gives the same bytes."""
    try:
        return msgspec.json.encode(obj, order="sorted")
    except (TypeError, msgspec.EncodeError) as e:
        raise TypeError(f"not JSON-serialisable: {e}") from e


def config_hash(config: Any) -> str:
    """sha256 (hex) of the canonical JSON of a run config."""
    return hashlib.sha256(canonical_json(config)).hexdigest()


def create_schema(c: sqlite3.Connection) -> None:
    """The current schema's tables, in the connection's open transaction."""
    for stmt in filter(str.strip, _SCHEMA.split(";")):  # executescript() would commit
        c.execute(stmt)
    create_events(c)
    create_facts(c)
    add_identity(c)
    c.execute(CODEC_TABLE)
    c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def create_events(c: sqlite3.Connection) -> None:
    """The journal's tables, its ``events`` view and the view's triggers."""
    for stmt in (*filter(str.strip, EVENT_TABLES.split(";")), *_EVENTS_VIEW):
        c.execute(stmt)


def create_facts(c: sqlite3.Connection) -> None:
    """The facts reports sum (version 6) and the triggers that keep ``call_facts``."""
    for stmt in (*filter(str.strip, FACT_TABLES.split(";")), *_CALL_FACTS_TRIGGERS):
        c.execute(stmt)
