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
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator, Mapping

import msgspec
import orjson

from sweepbench.errors import ReportError, StoreError
from sweepbench.results.export.tables import COLUMNS, ExportTables, build_tables
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
    each with its key, label, timestamps and judgments; returns how many."""
    view = _view(store, run_id)
    by_key = store.records(view.keys)
    judged: dict[str, list[dict]] = {}
    for j in store.judgments(view.keys):
        judged.setdefault(j["episode_key"], []).append(
            {"judge": j["judge"], "method": j["method"], "passed": j["passed"],
             "score": j["score"], "created_at": iso_utc(j["created_at"]),
             "details": j["details"]})
    rows = [r for r in view.rows if r["episode_key"] in by_key]

    def write(f: Any) -> int:
        for r in rows:
            key = r["episode_key"]
            line = {"episode_key": key, "episode_label": r["label"],
                    "started_at": iso_utc(r["started_at"]),
                    "finished_at": iso_utc(r["finished_at"]),
                    **msgspec.to_builtins(by_key[key]), "judgments": judged.get(key, [])}
            f.write(orjson.dumps(line).decode("utf-8"))
            f.write("\n")
        return len(rows)

    return replace_text(Path(path), write)


def read_trajectories(path: str | Path) -> Iterator[EpisodeRecord]:
    """The records of a JSONL trajectory file; a bad line raises ValueError naming it."""
    decoder = msgspec.json.Decoder(EpisodeRecord)
    with open(path, "rb") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield decoder.decode(line)
            except msgspec.DecodeError as e:
                raise ValueError(f"{path}:{i}: not an EpisodeRecord: {e}") from e


def _value(v: Any, typ: str) -> Any:
    """A cell as its column's type says (bools as details may be counted as numbers)."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return None
    if typ == "float64":
        return float(v)
    if typ == "int64":
        return int(v)
    if typ == "bool":
        return bool(v)
    return v


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, datetime):
        return iso_utc(v.timestamp()) or ""
    return str(v)


def _write_csv(rows: list[dict], types: dict[str, str], path: Path) -> int:
    def write(f: Any) -> int:
        out = csv.writer(f)
        out.writerow(list(types))
        for r in rows:
            out.writerow([_text(_value(r.get(c), t)) for c, t in types.items()])
        return len(rows)

    return replace_text(path, write)


def _write_jsonl(rows: list[dict], types: dict[str, str], path: Path) -> int:
    def write(f: Any) -> int:
        for r in rows:
            obj = {c: _value(r.get(c), t) for c, t in types.items()}
            f.write(orjson.dumps({c: iso_utc(v.timestamp()) if isinstance(v, datetime) else v
                                  for c, v in obj.items()}).decode("utf-8"))
            f.write("\n")
        return len(rows)

    return replace_text(path, write)


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError as e:
        raise StoreError("Parquet export needs pyarrow: pip install 'sweepbench[parquet]'") from e
    return pyarrow


def _write_parquet(rows: list[dict], types: dict[str, str], path: Path) -> int:
    pa = _pyarrow()
    arrow = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(),
             "bool": pa.bool_(), "timestamp": pa.timestamp("ms", tz="UTC")}
    schema = pa.schema([(c, arrow[t]) for c, t in types.items()])
    table = pa.Table.from_pydict({c: [_value(r.get(c), t) for r in rows]
                                  for c, t in types.items()}, schema=schema)
    replace_file(path, lambda target: pa.parquet.write_table(table, target))
    return len(rows)


_WRITERS = {"parquet": _write_parquet, "csv": _write_csv, "jsonl": _write_jsonl}


def _tables(store: RunStore, run_id: str | None,
            benchmarks: Mapping[str, Mapping[str, Any]] | None) -> ExportTables:
    return build_tables(store, _view(store, run_id), benchmarks)


def export_tables(store: RunStore, run_id: str | None, out_dir: str | Path,
                  formats: tuple[str, ...] = ("parquet",), *,
                  benchmarks: Mapping[str, Mapping[str, Any]] | None = None
                  ) -> dict[str, int]:
    """Write ``episodes``, ``calls`` and ``judgments`` to ``out_dir`` in each format
    (``episodes.parquet``, ``calls.csv``, ...); returns path -> rows written."""
    bad = [f for f in formats if f not in _WRITERS]
    if bad:
        raise ValueError(f"unknown export format(s) {', '.join(bad)}; known: "
                         f"{', '.join(FORMATS)}")
    if "parquet" in formats:
        _pyarrow()  # fail before anything is written
    tables = _tables(store, run_id, benchmarks)
    out: dict[str, int] = {}
    for fmt_name in formats:
        for name, rows in tables.rows.items():
            path = Path(out_dir) / f"{name}.{fmt_name}"
            out[str(path)] = _WRITERS[fmt_name](rows, tables.types[name], path)
    return out


def export_results_csv(store: RunStore, run_id: str | None, path: str | Path, *,
                       benchmarks: Mapping[str, Mapping[str, Any]] | None = None) -> int:
    """Write the ``episodes`` table (of ``run_id``'s selection, or all) to ``path`` as CSV;
    returns the number of rows."""
    tables = _tables(store, run_id, benchmarks)
    return _write_csv(tables.rows["episodes"], tables.types["episodes"], Path(path))


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
