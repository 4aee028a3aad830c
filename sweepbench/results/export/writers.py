"""Exports of a store's episodes (all of them, or one run's selection) that load straight into
pandas, DuckDB and Polars.

- ``export_tables``: the ``episodes``, ``calls`` and ``judgments`` tables
  (:mod:`sweepbench.results.export.tables`: columns, types and meanings in ``COLUMNS``) as
  Parquet (typed: timestamps in UTC, integers, booleans; needs pyarrow, the ``parquet``
  extra), CSV (ISO 8601 timestamps, ``true``/``false``, empty for null) and/or JSONL (one
  object a line, ISO 8601 timestamps, null for null), one file per table and format.
- ``export_results_csv``: the ``episodes`` table alone, as one CSV file.
- ``export_trajectories``: one finished episode a line: its key and label, its record (the
  ``EpisodeRecord`` fields: messages, usage, counters, termination, error) and every
  judgment (judge, method, passed, score, details); ``read_trajectories`` reads the records
  back.

Every writer writes a temporary file next to the target and renames it into place, so a
failed export never leaves a half-written file under the requested name.
"""

from __future__ import annotations

import csv
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Iterator, Mapping

import msgspec
import numpy as np
import orjson

from sweepbench.errors import ReportError, StoreError
from sweepbench.results.export.columns import Coded, Column, Numbers, as_list, length
from sweepbench.results.export.tables import CHUNK, COLUMNS, plan_tables, table_chunks
from sweepbench.results.files import replace_file, replace_text
from sweepbench.results.fmt import iso_utc
from sweepbench.store.runstore import RunStore
from sweepbench.results.selection import EpisodeView, Selection, load_view
from sweepbench.wire import EpisodeRecord

__all__ = ["COLUMNS", "FORMATS", "columns_doc", "export_results_csv", "export_tables",
           "export_trajectories", "read_trajectories"]

FORMATS = ("parquet", "csv", "jsonl")


def _view(store: RunStore, run_id: str | None) -> EpisodeView:
    try:
        return load_view([store], Selection(run_id=run_id))
    except ReportError as exc:
        raise StoreError(str(exc)) from None


def export_trajectories(store: RunStore, run_id: str | None, path: str | Path) -> int:
    """Write the finished episodes (of ``run_id``'s selection, or all) to ``path`` as JSONL,
    each with its key, label, timestamps and judgments; returns how many. Read and written a
    chunk of episodes at a time: memory holds one chunk's records, whatever the store's size."""
    view = _view(store, run_id)

    def write(f: Any) -> int:
        n = 0
        for i in range(0, len(view.rows), CHUNK):
            rows = view.rows[i:i + CHUNK]
            keys = [r["episode_key"] for r in rows]
            by_key = store.records(keys)
            judged: dict[str, list[dict]] = {}
            for j in store.judgments(keys):
                judged.setdefault(j["episode_key"], []).append(
                    {"judge": j["judge"], "method": j["method"], "passed": j["passed"],
                     "score": j["score"], "created_at": iso_utc(j["created_at"]),
                     "details": j["details"]})
            for r in rows:
                key = r["episode_key"]
                if key not in by_key:
                    continue
                line = {"episode_key": key, "episode_label": r["label"],
                        "started_at": iso_utc(r["started_at"]),
                        "finished_at": iso_utc(r["finished_at"]),
                        **msgspec.to_builtins(by_key[key]), "judgments": judged.get(key, [])}
                f.write(orjson.dumps(line).decode("utf-8"))
                f.write("\n")
                n += 1
        return n

    return replace_text(Path(path), write)


def read_trajectories(path: str | Path) -> Iterator[EpisodeRecord]:
    """The records of a JSONL trajectory file; a bad line (not JSON, not a record, not
    UTF-8) raises ValueError naming it."""
    decoder = msgspec.json.Decoder(EpisodeRecord)
    with open(path, "rb") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield decoder.decode(line)
            except (msgspec.DecodeError, UnicodeDecodeError) as e:  # msgspec reads UTF-8
                raise ValueError(f"{path}:{i}: not an EpisodeRecord: {e}") from e


def _value(v: Any, typ: str) -> Any:
    """A cell as its column's type says (bools as details may be counted as numbers;
    timestamps, held as Unix seconds, as datetimes in UTC)."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return None
    if typ == "float64":
        return float(v)
    if typ == "int64":
        return int(v)
    if typ == "bool":
        return bool(v)
    if typ == "timestamp":
        return None if _seconds(v) is None else datetime.fromtimestamp(v, timezone.utc)
    return v


def _seconds(v: Any) -> float | None:
    """A timestamp's Unix seconds, None where it holds no finite number."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return v


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, datetime):
        return iso_utc(v.timestamp()) or ""
    return str(v)


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError as e:
        raise StoreError("Parquet export needs pyarrow: pip install 'sweepbench[parquet]'") from e
    return pyarrow


def _rows(chunk: dict[str, Column], types: dict[str, str]) -> Iterator[list[Any]]:
    """The rows of a chunk, each cell as its column's type says."""
    cols = [(as_list(chunk[c]), t) for c, t in types.items()]
    for row in zip(*(values for values, _ in cols)):
        yield [_value(v, t) for v, (_, t) in zip(row, cols)]


class _Csv:
    def __init__(self, f: IO[str], types: dict[str, str]) -> None:
        self.out, self.types = csv.writer(f), types
        self.out.writerow(list(types))

    def write(self, chunk: dict[str, Column]) -> None:
        self.out.writerows([_text(v) for v in row] for row in _rows(chunk, self.types))


class _Jsonl:
    def __init__(self, f: IO[str], types: dict[str, str]) -> None:
        self.f, self.names = f, list(types)
        self.types = types

    def write(self, chunk: dict[str, Column]) -> None:
        for row in _rows(chunk, self.types):
            self.f.write(orjson.dumps({c: iso_utc(v.timestamp()) if isinstance(v, datetime)
                                       else v for c, v in zip(self.names, row)}).decode("utf-8"))
            self.f.write("\n")


def _ms(seconds: np.ndarray) -> np.ndarray:
    """Unix seconds as whole milliseconds, as a datetime of them holds them (rounded to the
    microsecond half to even, then floored to the millisecond)."""
    frac, whole = np.modf(seconds)
    return (whole.astype(np.int64) * 1_000_000 + np.rint(frac * 1e6).astype(np.int64)) // 1000


class _Parquet:
    """Chunks as Arrow record batches, written as a row group once ``BATCH`` rows gathered."""

    BATCH = 65_536

    def __init__(self, target: Path, types: dict[str, str]) -> None:
        pa = _pyarrow()
        arrow = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(),
                 "bool": pa.bool_(), "timestamp": pa.timestamp("ms", tz="UTC")}
        self.pa, self.types, self.arrow = pa, types, arrow
        self.schema = pa.schema([(c, arrow[t]) for c, t in types.items()])
        self.writer = pa.parquet.ParquetWriter(target, self.schema)
        self.pending: list[Any] = []
        self.rows = 0

    def _array(self, col: Column, typ: str) -> Any:
        pa = self.pa
        if isinstance(col, Coded):
            return pa.array(col.texts, pa.string()).take(pa.array(col.codes))
        if isinstance(col, list):
            if typ != "timestamp":
                return pa.array([_value(v, typ) for v in col], self.arrow[typ])
            seconds = [_seconds(v) for v in col]
            col = Numbers(np.array([0.0 if v is None else v for v in seconds], dtype=np.float64),
                          np.array([v is None for v in seconds], dtype=bool))
        values, null = col
        if typ == "float64" or typ == "timestamp":
            bad = ~np.isfinite(values)
            null = bad if null is None else null | bad
            if typ == "timestamp":
                values = _ms(np.where(null, 0.0, values))
        return pa.array(values, self.arrow[typ], mask=null)

    def write(self, chunk: dict[str, Column]) -> None:
        batch = self.pa.RecordBatch.from_arrays(
            [self._array(chunk[c], t) for c, t in self.types.items()], schema=self.schema)
        self.pending.append(batch)
        self.rows += batch.num_rows
        if self.rows >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        self.writer.write_table(self.pa.Table.from_batches(self.pending, self.schema),
                                row_group_size=self.rows)
        self.pending, self.rows = [], 0

    def close(self) -> None:
        if self.pending:
            self._flush()
        self.writer.close()


def _write_streams(targets: list[tuple[str, Path]], types: dict[str, str],
                   chunks: Iterator[dict[str, Column]]) -> dict[str, int]:
    """Write the rows of ``chunks`` to every (format, path) at once, each through a
    temporary file renamed into place when whole; returns path -> rows."""
    sinks: list[Any] = []
    counts: dict[str, int] = {}

    def stream() -> int:
        n = 0
        for chunk in chunks:
            for sink in sinks:
                sink.write(chunk)
            n += length(chunk[next(iter(types))])
        return n

    def nest(i: int) -> int:
        if i == len(targets):
            return stream()
        fmt_name, path = targets[i]
        if fmt_name == "parquet":
            def write(target: Path) -> int:
                sink = _Parquet(target, types)
                sinks.append(sink)
                n = nest(i + 1)
                sink.close()
                return n
            n = replace_file(path, write)
        else:
            def write_text(f: IO[str]) -> int:
                sinks.append((_Csv if fmt_name == "csv" else _Jsonl)(f, types))
                return nest(i + 1)
            n = replace_text(path, write_text)
        counts[str(path)] = n
        return n

    nest(0)
    return {str(p): counts[str(p)] for _, p in targets}


_WRITERS = {"parquet", "csv", "jsonl"}


def export_tables(store: RunStore, run_id: str | None, out_dir: str | Path,
                  formats: tuple[str, ...] = ("parquet",), *,
                  benchmarks: Mapping[str, Mapping[str, Any]] | None = None
                  ) -> dict[str, int]:
    """Write ``episodes``, ``calls`` and ``judgments`` to ``out_dir`` in each format
    (``episodes.parquet``, ``calls.csv``, ...); returns path -> rows written. Each table is
    written a chunk of episodes at a time, every format at once: memory holds one chunk
    (and one Parquet record batch), whatever the store's size."""
    bad = [f for f in formats if f not in _WRITERS]
    if bad:
        raise ValueError(f"unknown export format(s) {', '.join(bad)}; known: "
                         f"{', '.join(FORMATS)}")
    if "parquet" in formats:
        _pyarrow()  # fail before anything is written
    view = _view(store, run_id)
    plan = plan_tables(store, view, benchmarks)
    written: dict[str, int] = {}
    sums: list = []  # the calls table's sums per episode, for the episodes table
    for name in ("calls", "episodes", "judgments"):
        targets = [(f, Path(out_dir) / f"{name}.{f}") for f in formats]
        written.update(_write_streams(targets, plan.types[name],
                                      table_chunks(store, view, plan, name, benchmarks,
                                                   sums=sums)))
    return {str(Path(out_dir) / f"{name}.{f}"): written[str(Path(out_dir) / f"{name}.{f}")]
            for f in formats for name in ("episodes", "calls", "judgments")}


def export_results_csv(store: RunStore, run_id: str | None, path: str | Path, *,
                       benchmarks: Mapping[str, Mapping[str, Any]] | None = None) -> int:
    """Write the ``episodes`` table (of ``run_id``'s selection, or all) to ``path`` as CSV;
    returns the number of rows."""
    view = _view(store, run_id)
    plan = plan_tables(store, view, benchmarks)
    return _write_streams([("csv", Path(path))], plan.types["episodes"],
                          table_chunks(store, view, plan, "episodes", benchmarks))[str(path)]


def columns_doc() -> str:
    """The columns of every table, as text (``sweepbench export --columns``)."""
    lines = []
    for table, cols in COLUMNS.items():
        lines.append(f"{table}:")
        lines += [f"  {name:<28} {typ:<9} {doc}" for name, typ, doc in cols]
        if table == "episodes":
            lines.append("  judge_<judge>_<method>_passed / _score / _<detail>: one group per "
                         "judge/method pair present (snake_case)")
    return "\n".join(lines)
