"""How the run store keeps its large payloads small: journal rows and episode records.

A conversation is stored once. The journal (``event_rows.payload``) holds every model reply
and tool result as the episode makes them; an episode's record holds the same messages again.
So a record is compressed with its episode's own journal (the payloads of journal ``""`` with
a seq below the one it names, as they were when it was written, up to the first that is not
JSON) as a zstd raw-content dictionary: the messages the journal holds become back-references
of a few bytes. What remains (the system prompt, the task's first message, the record's own
fields) is mostly in the benchmark's record dictionary, trained from its first
``RECORDS_AFTER`` records (group ``record:<benchmark>``), which goes before the journal in the
raw content. A journal row is compressed with a zstd dictionary of its benchmark, trained from the store's
own first ``TRAIN_AFTER`` payloads of that benchmark (``zstandard.train_dictionary``) and kept
in the store (table ``codec_dicts``, keyed by a hash of its bytes, so merging two stores
copies their dictionaries without renumbering anything). Until a benchmark's dictionary
exists its rows are stored as JSON text, as before.

Stored values tell their form by their first byte: JSON text (a row or record of an older
store, or one written before its dictionary) starts with ``{``; a compressed one is a BLOB
starting with ``PAYLOAD`` or ``RECORD``, then the dictionary's id, then (a record) how many
journal rows it was compressed with and the seq after the last, then one zstd frame that
declares its size and carries a checksum. So old and new rows sit side by side in one store,
and readers return the same JSON either way.

A compressed value that does not decode (a torn write, a flipped bit, a missing dictionary)
is ``Damaged``; one that declares more than ``MAX_DECODED`` bytes (a zstd bomb) is refused
before anything is allocated. Readers turn these into the store's usual "does not decode"
errors and left-out lines.

The writer's side (:class:`Packer`) runs on the store's writer thread, inside the transaction
that writes the rows, so a record is compressed against the journal rows the store really
holds (a resumed episode's earlier rows included), and a dictionary is committed with the
first rows that need it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct
from collections.abc import Callable

import msgspec
import zstandard as zstd

try:  # Python 3.14's zstd, whose dictionaries load as a prefix: see Packer.record
    from compression import zstd as prefixed  # type: ignore[import-not-found]
except ImportError:  # its backport
    from backports import zstd as prefixed  # type: ignore[import-not-found,no-redef]

__all__ = ["CODEC_TABLE", "MAX_DECODED", "PAYLOAD", "PREFIX_LEVEL", "RECORD", "RECORDS_AFTER",
           "TRAIN_AFTER", "Damaged", "Packer", "Unpacker", "journal_prefix", "register",
           "unregistered"]

CODEC_TABLE = """CREATE TABLE codec_dicts (
    id    INTEGER PRIMARY KEY,
    grp   TEXT NOT NULL,
    dict  BLOB NOT NULL
)"""
"""Compression dictionaries: id (the first 8 bytes of the dictionary's blake2b, signed), the
group it was trained for (a benchmark's name, ``""`` for journals of unknown episodes), its
bytes."""

PAYLOAD = 0x01
RECORD = 0x02
_PAYLOAD_HEAD = struct.Struct("<Bq")  # tag, dictionary id (0: none)
_RECORD_HEAD = struct.Struct("<BqII")  # tag, dictionary id, journal rows, seq after the last
LEVEL = 1
"""zstd level of journal rows: against level 3, 0.5-0.7 µs less of the writer's CPU a call in a
sweep (0.2 a row in isolation, where the dictionary's tables stay in the cache) for rows 5%
larger (``benchmarks/LOG.md``, 2026-11-28, issue 43's CPU bar)."""
RECORD_LEVEL = 1
"""zstd level of records: against level 3 it takes about a third less of the writer's CPU
(records are the larger part of it) for 7% larger records (``benchmarks/LOG.md``,
2026-11-28)."""
PREFIX_LEVEL = 2
"""zstd level of records compressed with their content as a prefix (see Packer.record), with
matches of at least ``PREFIX_MIN_MATCH`` bytes: 21 µs a record against level 3's 26 (its
default matches), for records 7% larger; level 1 made them 15% larger (``benchmarks/LOG.md``,
2026-11-28)."""
PREFIX_MIN_MATCH = 7
"""A record's messages are its journal's, long runs of the prefix: shorter matches (zstd's 5
or 6 at these levels) cost more searching and made level 2's records 5-10% larger."""
KEPT_BYTES = 32 << 20
"""The most bytes of journal rows the writer keeps in memory, as it wrote them, for the
records of their episodes (see :meth:`Packer.record`); the oldest episodes' go first."""
TRAIN_AFTER = 400
"""Journal payloads of a benchmark kept as text before its dictionary is trained from them."""
RECORDS_AFTER = 100
"""Records of a benchmark before the dictionary of what records hold beyond their journal (the
system prompt, the task's first message) is trained from them (group ``record:<benchmark>``)."""
DICT_SIZE = 32 << 10
RECORD_DICT_SIZE = 16 << 10
"""A record dictionary is raw content the writer indexes again for every record: at 16 KB
records came out as small as at 32 KB (532 and 533 bytes) in 25% less time."""
TRAIN_F = 18
"""log2 of the entries of zstd's frequency table when it trains a dictionary (its default,
20, is a 4 MB table that training fills and clears: about 7 ms a dictionary against 1.4,
for rows 1.5% larger; a store trains two per benchmark, inside the sweep that fills it)."""
MAX_DECODED = 64 << 20
"""The most bytes one stored value may decode to; larger values are stored as text."""

_PREFIXED = {prefixed.CompressionParameter.compression_level: PREFIX_LEVEL,
             prefixed.CompressionParameter.min_match: PREFIX_MIN_MATCH,
             prefixed.CompressionParameter.checksum_flag: 1}
_ANY_ROW = "SELECT 1 FROM event_rows WHERE ep = ? AND journal = '' LIMIT 1"
_JOURNAL_PREFIX = ("SELECT seq, payload FROM event_rows WHERE ep = (SELECT ep FROM event_keys "
                   "WHERE episode_key = ?) AND journal = '' ORDER BY seq")


class Damaged(ValueError):
    """A stored compressed value that does not decode: says why."""


def _dict_id(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little", signed=True)


def _frame(data: bytes, dctx: zstd.ZstdDecompressor) -> bytes:
    """One zstd frame decoded, refused before decoding when it declares too much."""
    try:
        size = zstd.frame_content_size(data)
    except zstd.ZstdError as e:
        raise Damaged(f"compressed and damaged: not a zstd frame ({e})") from None
    if size < 0 or size > MAX_DECODED:
        raise Damaged(f"compressed and damaged: declares {'no' if size < 0 else size} decoded "
                      f"bytes (at most {MAX_DECODED} bytes are read)")
    try:
        return dctx.decompress(data, max_output_size=MAX_DECODED)
    except zstd.ZstdError as e:
        raise Damaged(f"compressed and damaged: zstd: {e}") from None


_is_json = msgspec.json.Decoder(msgspec.Raw).decode
"""Raises ``msgspec.DecodeError`` unless its bytes are one JSON value (builds nothing)."""


def _is(value: object, tag: int) -> bool:
    return isinstance(value, (bytes, bytearray)) and value[:1] == bytes((tag,))


class Unpacker:
    """Decodes stored values; ``load(id)`` gives a dictionary's bytes (or None). Not
    thread-safe: one per connection, used under its lock."""

    def __init__(self, load: Callable[[int], bytes | None]) -> None:
        self._load = load
        self._dctx: dict[int, zstd.ZstdDecompressor] = {0: zstd.ZstdDecompressor()}
        self._dicts: dict[int, bytes] = {0: b""}

    def _dict(self, dict_id: int) -> bytes:
        if dict_id not in self._dicts:
            data = self._load(dict_id)
            if data is None:
                raise Damaged(f"its compression dictionary {dict_id} is not in the store")
            self._dicts[dict_id] = data
        return self._dicts[dict_id]

    def payload(self, value: object) -> bytes:
        """A journal payload's JSON bytes (text rows as they are). Raises ``Damaged``."""
        if isinstance(value, str):
            return value.encode("utf-8")
        if not _is(value, PAYLOAD) or len(value) < _PAYLOAD_HEAD.size:
            raise Damaged("neither JSON text nor a compressed payload")
        _, dict_id = _PAYLOAD_HEAD.unpack_from(value)
        dctx = self._dctx.get(dict_id)
        if dctx is None:
            try:
                dctx = zstd.ZstdDecompressor(
                    dict_data=zstd.ZstdCompressionDict(self._dict(dict_id)))
                dctx.memory_size()  # loads the dictionary: a damaged one fails here
            except zstd.ZstdError as e:
                raise Damaged(f"its compression dictionary {dict_id} is damaged ({e})") from None
            self._dctx[dict_id] = dctx
        return _frame(value[_PAYLOAD_HEAD.size:], dctx)

    def record(self, value: object, journal: Callable[[], list[tuple[int, object]]]) -> bytes:
        """A record's JSON bytes; ``journal()`` gives its episode's journal ``""`` rows
        (seq, payload) in seq order, asked only for a compressed record."""
        if not _is(value, RECORD):
            return value.encode("utf-8") if isinstance(value, str) else value  # type: ignore
        if len(value) < _RECORD_HEAD.size:
            raise Damaged("a compressed record cut short")
        _, dict_id, rows, end = _RECORD_HEAD.unpack_from(value)
        prefix = [p for s, p in journal() if s < end]
        if len(prefix) != rows:
            raise Damaged(f"it was compressed with {rows} journal rows and the journal has "
                          f"{len(prefix)} of them")
        content = self._dict(dict_id) + b"".join(map(self.payload, prefix))
        dctx = zstd.ZstdDecompressor(dict_data=zstd.ZstdCompressionDict(
            content, dict_type=zstd.DICT_TYPE_RAWCONTENT)) if content else self._dctx[0]
        try:
            return _frame(value[_RECORD_HEAD.size:], dctx)
        except Damaged as e:
            if not rows:
                raise
            why = str(e).removeprefix("compressed and damaged: ")
            raise Damaged(f"it is stored as the difference from its journal's first {rows} "
                          f"rows, which no longer give it back: the record or one of those "
                          f"rows is damaged; {why}") from None


def journal_prefix(conn: sqlite3.Connection, episode_key: str,
                   schema: str = "main") -> Callable[[], list[tuple[int, object]]]:
    """What :meth:`Unpacker.record` asks for, read on ``conn`` (in database ``schema``)."""
    sql = _JOURNAL_PREFIX.replace("event_rows", f"{schema}.event_rows").replace(
        "event_keys", f"{schema}.event_keys")
    return lambda: conn.execute(sql, (episode_key,)).fetchall()


def _loader(conn: sqlite3.Connection, schema: str = "main") -> Callable[[int], bytes | None]:
    def load(dict_id: int) -> bytes | None:
        try:
            row = conn.execute(f"SELECT dict FROM {schema}.codec_dicts WHERE id = ?",
                               (dict_id,)).fetchone()
        except sqlite3.OperationalError:  # a store older than the table
            return None
        return row[0] if row else None
    return load


def register(conn: sqlite3.Connection, schema: str = "main") -> Unpacker:
    """An Unpacker reading dictionaries on ``conn``, and the SQL functions queries use:
    ``sb_json(payload)`` (a journal payload's JSON text, NULL where it does not decode) and
    ``sb_record(episode_key, record)`` (a record's JSON bytes, NULL where it does not)."""
    unpacker = Unpacker(_loader(conn, schema))

    last: tuple[object, str | None] = (None, None)  # the last value decoded and its text:
    # the facts' trigger (:mod:`sweepbench.store.schema`) asks for one payload a few times

    def sb_json(value: object) -> str | None:
        nonlocal last
        if isinstance(value, str):
            return value
        seen = last  # one tuple, replaced whole
        if value == seen[0]:
            return seen[1]
        try:
            text = unpacker.payload(value).decode("utf-8")
        except (Damaged, UnicodeDecodeError):
            text = None
        last = (value, text)
        return text

    def sb_record(key: str, value: object) -> object:
        if not _is(value, RECORD):
            return value
        try:
            return unpacker.record(value, journal_prefix(conn, key, schema))
        except Damaged:
            return None

    conn.create_function("sb_json", 1, sb_json, deterministic=True)
    conn.create_function("sb_record", 2, sb_record)
    return unpacker


def unregistered(exc: BaseException) -> str | None:
    """What to do, when ``exc`` is SQLite saying that a connection without :func:`register`'s
    functions wrote the journal (the facts' trigger, :mod:`sweepbench.store.schema`, decodes
    each model call's payload with ``sb_json``); None for any other error."""
    if isinstance(exc, sqlite3.OperationalError) and "no such function: sb_" in str(exc):
        return ("the store's journal can only be written on a connection with sweepbench's "
                "SQL functions (sweepbench.store.codec.register(conn)), which decode the "
                "compressed payloads the journal's triggers read")
    return None


class Packer:
    """The writer's side, on the writer's connection ``conn`` (its thread only): compresses
    journal rows and records inside the transaction that writes them, trains and stores
    dictionaries. ``train_after``: payloads of a benchmark before its dictionary."""

    def __init__(self, conn: sqlite3.Connection, *, train_after: int = TRAIN_AFTER,
                 records_after: int | None = None) -> None:
        self._conn = conn
        self._after = {"": train_after,
                       "record:": RECORDS_AFTER if records_after is None else records_after}
        self._unpacker = Unpacker(_loader(conn))
        self._samples: dict[str, list[bytes]] = {}
        self._compressors: dict[str, tuple[bytes, zstd.ZstdCompressor]] = {}
        self._records: dict[str, tuple[int, bytes]] = {}  # record:<benchmark> -> id, bytes
        try:
            stored = conn.execute("SELECT grp, id FROM codec_dicts ORDER BY rowid").fetchall()
        except sqlite3.OperationalError:  # no table: a store migrated later
            stored = []
        for grp, dict_id in stored:
            if grp not in self._compressors and grp not in self._records:
                self._use(grp, dict_id, self._unpacker._dict(dict_id))
        self._record_cctx = zstd.ZstdCompressor(level=RECORD_LEVEL, write_checksum=True)
        # episode key -> seq -> (the value stored, its JSON) of the journal rows written here,
        # until the episode's record: what record() need not decompress and check again
        self._kept: dict[str, dict[int, tuple[object, bytes]]] = {}
        self._kept_bytes = 0
        # the episodes whose journal the store held no row of before the first one kept here:
        # all of it is kept, and their records need not read it back (see record())
        self._whole: set[str] = set()
        self._evicted: set[str] = set()  # episodes whose kept rows went (see KEPT_BYTES)

    def _use(self, grp: str, dict_id: int, data: bytes) -> None:
        if grp.startswith("record:"):  # raw content before the journal's: see record()
            self._records[grp] = (dict_id, data)
            return
        d = zstd.ZstdCompressionDict(data)
        d.precompute_compress(level=LEVEL)
        # a bytearray head makes each stored value a bytearray: Python's sqlite3 binds one as
        # it is, and a bytes through its adapter lookup (0.4 against 0.1 µs, LOG 2026-11-28)
        self._compressors[grp] = (bytearray(_PAYLOAD_HEAD.pack(PAYLOAD, dict_id)),
                                  zstd.ZstdCompressor(dict_data=d, write_checksum=True))

    def _sample(self, grp: str, raw: bytes) -> None:
        """One more sample towards ``grp``'s dictionary, trained once there are enough."""
        samples = self._samples.setdefault(grp, [])
        samples.append(raw)
        if len(samples) >= self._after["record:" if grp.startswith("record:") else ""]:
            self._train(grp, samples)

    def train(self, grp: str, samples: list[bytes]) -> None:
        """Train and store ``grp``'s dictionary from ``samples`` (unless it has one)."""
        if grp not in self._compressors:
            self._train(grp, samples)

    def _train(self, grp: str, samples: list[bytes]) -> None:
        try:
            size = RECORD_DICT_SIZE if grp.startswith("record:") else DICT_SIZE
            d = zstd.train_dictionary(size, samples, k=64, d=8, f=TRAIN_F, threads=0)
        except zstd.ZstdError:  # too few or too alike to train on: keep trying with more
            return
        data = d.as_bytes()
        dict_id = _dict_id(data)
        self._conn.execute("INSERT OR IGNORE INTO codec_dicts (id, grp, dict) VALUES (?, ?, ?)",
                           (dict_id, grp, data))
        self._samples.pop(grp, None)
        self._use(grp, dict_id, data)

    def row(self, episode_key: str, ep: int | None, journal: str, seq: int, grp: str,
            data: bytes | str) -> bytearray | str:
        """A journal row's payload (JSON the store checked) as it is stored (see ``payload``);
        an episode's own rows (its journal ``""``, episode number ``ep``) are kept for its
        record."""
        packing = self._compressors.get(grp)
        if packing is not None and type(data) is bytes and len(data) <= MAX_DECODED:
            stored: bytearray | str = packing[0] + packing[1].compress(data)  # the usual row
        else:
            stored = self.payload(grp, data)
        if journal == "":
            raw = data if type(data) is bytes else data.encode("utf-8")
            kept = self._kept.get(episode_key)
            if kept is None:
                kept = self._kept[episode_key] = {}
                # none stored yet: all its rows will be these (this run of writes is not
                # inserted yet, so rows kept here and let go are remembered apart)
                if (ep is not None and episode_key not in self._evicted
                        and self._conn.execute(_ANY_ROW, (ep,)).fetchone() is None):
                    self._whole.add(episode_key)
            if seq not in kept:  # a seq written again (a replay): the first one is stored
                kept[seq] = (stored, raw)
                self._kept_bytes += len(raw)
                if self._kept_bytes > KEPT_BYTES:
                    self._let_go()
        return stored

    def _let_go(self) -> None:
        """The oldest episodes' kept rows let go, until they hold ``KEPT_BYTES`` at most."""
        while self._kept_bytes > KEPT_BYTES and self._kept:
            key = next(iter(self._kept))
            self._whole.discard(key)
            self._evicted.add(key)
            self._kept_bytes -= sum(len(raw) for _, raw in self._kept.pop(key).values())

    def payload(self, grp: str, data: bytes | str) -> bytearray | str:
        """A journal payload as it is stored: compressed once its group has a dictionary, else
        text (a sample towards the dictionary)."""
        packing = self._compressors.get(grp)
        if packing is None:
            self._sample(grp, data.encode("utf-8") if isinstance(data, str) else data)
            return data if isinstance(data, str) else data.decode("utf-8")
        head, cctx = packing
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if len(raw) > MAX_DECODED:
            return raw.decode("utf-8")
        return head + cctx.compress(raw)

    def record(self, episode_key: str, benchmark: str, data: bytes) -> bytes | bytearray:
        """A record as it is stored: compressed with its benchmark's record dictionary and its
        episode's journal as it stands in this transaction, up to its first row that is not
        JSON (a damaged row; a merge copies a journal up to there, so the record never needs
        what a merge leaves out). An episode whose rows this writer kept from its first on
        (none stored before: see ``row``) is not read back: its kept rows are its journal."""
        if len(data) > MAX_DECODED:
            return data
        grp = f"record:{benchmark}"
        dict_id, known = self._records.get(grp, (0, b""))
        if not dict_id:
            self._sample(grp, data)
        used: list[bytes] = []
        end = 0
        kept = self._kept.pop(episode_key, {})
        self._kept_bytes -= sum(len(raw) for _, raw in kept.values())
        self._evicted.discard(episode_key)
        if episode_key in self._whole:  # the journal is what was kept: JSON the store checked
            self._whole.discard(episode_key)
            seqs = sorted(kept)
            used = [kept[seq][1] for seq in seqs]
            end = seqs[-1] + 1 if seqs else 0
            rows: list[tuple[int, object]] = []
        else:
            rows = journal_prefix(self._conn, episode_key)()
        for seq, payload in rows:
            mine = kept.get(seq)
            if mine is not None and mine[0] == payload:  # the row as written here: JSON
                plain = mine[1]
            else:  # written before (a resumed episode), or another row kept its seq
                try:
                    plain = self._unpacker.payload(payload)
                    _is_json(plain)
                except (Damaged, msgspec.DecodeError):
                    break
            used.append(plain)
            end = seq + 1
        content = b"".join([known, *used])
        head = bytearray(_RECORD_HEAD.pack(RECORD, dict_id, len(used), end))  # see _use
        if len(content) >= 8:  # shorter is no dictionary to zstd
            # The content as a prefix: the same frame format a raw-content dictionary gives
            # (it is read with one), without zstd first building that dictionary's own tables
            # (see PREFIX_LEVEL).
            return head + prefixed.ZstdCompressor(
                options=_PREFIXED, zstd_dict=prefixed.ZstdDict(content, is_raw=True).as_prefix
            ).compress(data, prefixed.ZstdCompressor.FLUSH_FRAME)
        cctx = self._record_cctx
        if content:
            cctx = zstd.ZstdCompressor(level=RECORD_LEVEL, write_checksum=True, dict_data=(
                zstd.ZstdCompressionDict(content, dict_type=zstd.DICT_TYPE_RAWCONTENT)))
        return head + cctx.compress(data)
