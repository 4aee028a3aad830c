"""Columnar tables and the byte-exact file format the T1 knowledge base is cached in.

A table is a set of equal-length numpy columns. Text that repeats (types, brands, cities'
neighbourhoods) is stored as integer codes plus a vocabulary; free text (names) as one UTF-8
blob plus offsets. Row ids are numbers rendered through a per-table format (``FL048``,
``CFE-A5E036``), kept sorted, so an id is found by binary search and "the lowest id" is
"the first row".

The file is a magic line, a JSON header (sorted keys) and the raw column bytes, so the same
tables always serialise to the same bytes: the digest of the file is the identity of the
knowledge base. Loading maps the bytes into read-only arrays without copying.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import orjson

MAGIC = b"SWEEPBENCH-T1-KB\n"
ALIGN = 64


@dataclass(frozen=True)
class IdFormat:
    """How a row's integer id becomes text: prefix + zero-padded decimal or hex digits."""

    prefix: str
    width: int
    hex: bool = False

    def render(self, number: int) -> str:
        return f"{self.prefix}{number:0{self.width}{'X' if self.hex else 'd'}}"

    def parse(self, text: str) -> int | None:
        text = text.strip().upper()
        if not text.startswith(self.prefix.upper()):
            return None
        digits = text[len(self.prefix):]
        if not digits or len(digits) > 12:
            return None
        try:
            return int(digits, 16 if self.hex else 10)
        except ValueError:
            return None


@dataclass
class Table:
    """One table. ``arrays`` holds every column; categorical columns hold codes into ``vocab``."""

    name: str
    n: int
    id_format: IdFormat
    arrays: dict[str, np.ndarray]
    vocab: dict[str, tuple[str, ...]] = field(default_factory=dict)
    text: tuple[str, ...] = ()
    _codes: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)

    def __getitem__(self, column: str) -> np.ndarray:
        return self.arrays[column]

    def __contains__(self, column: str) -> bool:
        return column in self.arrays or column in self.text

    def ident(self, row: int) -> str:
        return self.id_format.render(int(self.arrays["id"][row]))

    def find(self, ident: str) -> int | None:
        """The row of an id such as ``FL048``; None when there is no such row."""
        number = self.id_format.parse(ident) if isinstance(ident, str) else None
        if number is None:
            return None
        ids = self.arrays["id"]
        row = int(np.searchsorted(ids, number))
        return row if row < self.n and int(ids[row]) == number else None

    def string(self, column: str, row: int) -> str:
        """The text of a categorical or free-text column at ``row``."""
        if column in self.vocab:
            return self.vocab[column][int(self.arrays[column][row])]
        offsets = self.arrays[f"{column}.offsets"]
        blob = self.arrays[f"{column}.blob"]
        return blob[int(offsets[row]):int(offsets[row + 1])].tobytes().decode()

    def code(self, column: str, value: str) -> int | None:
        """The code of a vocabulary value, matched case-insensitively; None when unknown."""
        codes = self._codes.get(column)
        if codes is None:
            codes = {v.casefold(): i for i, v in enumerate(self.vocab[column])}
            self._codes[column] = codes
        return codes.get(" ".join(value.split()).casefold()) if isinstance(value, str) else None


def make_table(name: str, id_format: IdFormat, ids: np.ndarray, columns: dict[str, object],
               vocab: dict[str, tuple[str, ...]] | None = None) -> Table:
    """Build a table; list-of-str columns not in ``vocab`` become free text."""
    vocab = dict(vocab or {})
    n = len(ids)
    order = np.argsort(ids, kind="stable")
    if not np.array_equal(order, np.arange(n)):
        raise ValueError(f"{name}: ids must be generated in ascending order")
    arrays: dict[str, np.ndarray] = {"id": np.ascontiguousarray(ids, dtype=np.int64)}
    text = []
    for col, values in columns.items():
        if isinstance(values, np.ndarray):
            arrays[col] = np.ascontiguousarray(values)
            length = len(values)
        else:
            encoded = [str(v).encode() for v in values]  # type: ignore[union-attr]
            sizes = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
            arrays[f"{col}.offsets"] = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            arrays[f"{col}.blob"] = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
            text.append(col)
            length = len(encoded)
        if length != n:
            raise ValueError(f"{name}.{col}: {length} values for {n} rows")
    return Table(name, n, id_format, arrays, vocab, tuple(text))


def _pad(size: int) -> int:
    return -size % ALIGN


def serialise(meta: dict, tables: dict[str, Table]) -> bytes:
    """Tables to bytes; equal tables give equal bytes."""
    header: dict = {"meta": meta, "tables": {}}
    chunks: list[bytes] = []
    offset = 0
    for tname in sorted(tables):
        t = tables[tname]
        cols = {}
        for col in sorted(t.arrays):
            a = np.ascontiguousarray(t.arrays[col])
            raw = a.tobytes()
            cols[col] = [a.dtype.str, list(a.shape), offset, len(raw)]
            chunks.append(raw + b"\0" * _pad(len(raw)))
            offset += len(raw) + _pad(len(raw))
        header["tables"][tname] = {
            "n": t.n, "id": [t.id_format.prefix, t.id_format.width, t.id_format.hex],
            "columns": cols, "vocab": {k: list(v) for k, v in sorted(t.vocab.items())},
            "text": list(t.text),
        }
    head = orjson.dumps(header, option=orjson.OPT_SORT_KEYS)
    prefix = MAGIC + len(head).to_bytes(8, "little") + head
    return prefix + b"\0" * _pad(len(prefix)) + b"".join(chunks)


class FormatError(ValueError):
    """A cache file that is not a knowledge base of this format (stale, truncated, foreign)."""


def deserialise(data: bytes) -> tuple[dict, dict[str, Table]]:
    """Bytes to (meta, tables); the arrays are read-only views of ``data``."""
    if not data.startswith(MAGIC):
        raise FormatError("not a T1 knowledge-base file")
    at = len(MAGIC)
    size = int.from_bytes(data[at:at + 8], "little")
    try:
        header = orjson.loads(data[at + 8:at + 8 + size])
    except orjson.JSONDecodeError as exc:
        raise FormatError(f"corrupt header: {exc}") from None
    base = at + 8 + size
    base += _pad(base)
    tables = {}
    for tname, spec in header["tables"].items():
        arrays = {}
        for col, (dtype, shape, off, nbytes) in spec["columns"].items():
            if base + off + nbytes > len(data):
                raise FormatError(f"truncated file (table {tname}, column {col})")
            dt = np.dtype(dtype)
            arrays[col] = np.frombuffer(data, dtype=dt, count=nbytes // dt.itemsize,
                                        offset=base + off).reshape(shape)
        prefix, width, is_hex = spec["id"]
        tables[tname] = Table(tname, spec["n"], IdFormat(prefix, width, is_hex), arrays,
                              {k: tuple(v) for k, v in spec["vocab"].items()}, tuple(spec["text"]))
    return header["meta"], tables


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
