"""The export's writers (``results.export.writers``) at their edges: each cell as its type
says in CSV, JSONL and Parquet (nulls, non-finite numbers, timestamps from lists and arrays),
Parquet's row groups, every format written at once and returned in a fixed order, the
refusals' exact words, the trajectories a chunk at a time, and the columns' text."""

from __future__ import annotations

import builtins
import csv
import io
import json
import warnings
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from sweepbench.errors import StoreError
from sweepbench.results.export import writers as writers_mod
from sweepbench.results.export.columns import Coded, Numbers
from sweepbench.results.export.tables import COLUMNS
from sweepbench.results.export.writers import (
    _Csv,
    _Jsonl,
    _rows,
    _seconds,
    _text,
    _value,
    _write_streams,
    columns_doc,
    export_tables,
    export_trajectories,
    read_trajectories,
)
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import EpisodeRecord, Usage

TYPES = {"s": "string", "i": "int64", "f": "float64", "b": "bool", "t": "timestamp"}


def test_a_value_is_its_columns_type_and_non_finite_is_null():
    assert _value(None, "float64") is None and _value(None, "string") is None
    for bad in (float("nan"), float("inf"), float("-inf")):
        for typ in TYPES.values():
            assert _value(bad, typ) is None, (bad, typ)
    assert _value(3, "float64") == 3.0 and type(_value(3, "float64")) is float
    assert _value(True, "float64") == 1.0 and type(_value(True, "float64")) is float
    assert _value(2.0, "int64") == 2 and type(_value(2.0, "int64")) is int
    assert _value(True, "int64") == 1 and type(_value(True, "int64")) is int
    assert _value(1, "bool") is True and _value(0, "bool") is False and _value(0.0, "bool") is False
    assert _value(0, "timestamp") == datetime(1970, 1, 1, tzinfo=UTC)
    assert _value(86400.5, "timestamp") == datetime(1970, 1, 2, 0, 0, 0, 500000, tzinfo=UTC)
    assert _value("2026", "timestamp") is None and _value(True, "timestamp") is None
    assert _value("x", "string") == "x" and _value(7, "string") == 7


def test_seconds_are_finite_numbers_only():
    assert _seconds(1.5) == 1.5 and _seconds(3) == 3 and _seconds(0) == 0
    for bad in (True, False, "1", None, float("nan"), float("inf"), [1]):
        assert _seconds(bad) is None, bad


def test_text_cells():
    assert _text(None) == "" and _text(True) == "true" and _text(False) == "false"
    assert _text(datetime(2026, 11, 23, 15, 2, 42, 848000, tzinfo=UTC)) == \
        "2026-11-23T15:02:42.848Z"
    assert _text(0) == "0" and _text(1.5) == "1.5" and _text("a,b") == "a,b"


def _chunk() -> dict:
    return {"s": Coded(np.array([1, 0, 2]), [None, "a", "b,c"]),
            "i": Numbers(np.array([1, 2, 3]), np.array([False, True, False])),
            "f": [0.5, float("nan"), None],
            "b": [True, None, 0],
            "t": Numbers(np.array([0.0, -np.inf, 86400.25]), np.array([False, True, False]))}


def test_rows_are_cells_as_their_types_say():
    assert list(_rows(_chunk(), TYPES)) == [
        ["a", 1, 0.5, True, datetime(1970, 1, 1, tzinfo=UTC)],
        [None, None, None, None, None],
        ["b,c", 3, None, False, datetime(1970, 1, 2, 0, 0, 0, 250000, tzinfo=UTC)],
    ]


def test_csv_and_jsonl_cells():
    f = io.StringIO()
    sink = _Csv(f, TYPES)
    sink.write(_chunk())
    assert f.getvalue() == ("s,i,f,b,t\r\n"
                            "a,1,0.5,true,1970-01-01T00:00:00.000Z\r\n"
                            ",,,,\r\n"
                            '"b,c",3,,false,1970-01-02T00:00:00.250Z\r\n')
    f = io.StringIO()
    sink = _Jsonl(f, TYPES)
    sink.write(_chunk())
    sink.write({c: v[:0] if isinstance(v, list) else
                (Coded(v.codes[:0], v.texts) if isinstance(v, Coded) else Numbers(v.values[:0]))
                for c, v in _chunk().items()})  # an empty chunk writes nothing
    assert f.getvalue() == (
        '{"s":"a","i":1,"f":0.5,"b":true,"t":"1970-01-01T00:00:00.000Z"}\n'
        '{"s":null,"i":null,"f":null,"b":null,"t":null}\n'
        '{"s":"b,c","i":3,"f":null,"b":false,"t":"1970-01-02T00:00:00.250Z"}\n')


def test_parquet_cells_nulls_and_row_groups(tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet", reason="the parquet extra installs pyarrow")
    monkeypatch.setattr(writers_mod._Parquet, "BATCH", 4)
    types = {**TYPES, "tl": "timestamp", "fl": "float64", "il": "int64", "sl": "string",
             "bn": "bool", "fn": "float64", "nl": "string", "nc": "string", "fi": "float64"}

    def chunk() -> dict:
        return {**_chunk(), "tl": [86400.5, None, float("nan")], "fl": [1, None, float("-inf")],
                "il": [2.0, None, True], "sl": ["x", None, "y"],
                "bn": Numbers(np.array([True, False, True]), np.array([False, False, True])),
                "fn": Numbers(np.array([1.5, np.nan, np.inf])), "nl": [None, None, None],
                "nc": Coded(np.array([0, 0, 0]), [None]), "fi": Numbers(np.array([1, 2, 3]))}

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no cast of a null's NaN or infinity to an integer
        written = _write_streams([("parquet", tmp_path / "t.parquet")], types,
                                 iter([chunk(), chunk(), chunk()]))
    assert written == {str(tmp_path / "t.parquet"): 9}
    meta = pq.ParquetFile(tmp_path / "t.parquet").metadata
    # a row group once 4 rows gathered: after the second chunk (6), then the last 3 at close
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [6, 3]
    table = pq.read_table(tmp_path / "t.parquet")
    assert [str(t) for t in table.schema.types] == [
        "string", "int64", "double", "bool", "timestamp[ms, tz=UTC]", "timestamp[ms, tz=UTC]",
        "double", "int64", "string", "bool", "double", "string", "string", "double"]
    rows = table.to_pylist()[:3]
    assert rows == [
        {"s": "a", "i": 1, "f": 0.5, "b": True, "t": datetime(1970, 1, 1, tzinfo=UTC),
         "tl": datetime(1970, 1, 2, 0, 0, 0, 500000, tzinfo=UTC), "fl": 1.0, "il": 2,
         "sl": "x", "bn": True, "fn": 1.5, "nl": None, "nc": None, "fi": 1.0},
        {"s": None, "i": None, "f": None, "b": None, "t": None, "tl": None, "fl": None,
         "il": None, "sl": None, "bn": False, "fn": None, "nl": None, "nc": None, "fi": 2.0},
        {"s": "b,c", "i": 3, "f": None, "b": False,
         "t": datetime(1970, 1, 2, 0, 0, 0, 250000, tzinfo=UTC), "tl": None, "fl": None,
         "il": 1, "sl": "y", "bn": None, "fn": None, "nl": None, "nc": None, "fi": 3.0},
    ]
    assert table.to_pylist()[3:6] == rows


def test_every_format_at_once_each_renamed_into_place(tmp_path):
    pytest.importorskip("pyarrow", reason="the parquet extra installs pyarrow")
    targets = [("csv", tmp_path / "a" / "t.csv"), ("parquet", tmp_path / "t.parquet"),
               ("jsonl", tmp_path / "t.jsonl")]
    written = _write_streams(targets, {"i": "int64"},
                             iter([{"i": [1, 2]}, {"i": Numbers(np.array([3]))}]))
    assert list(written.items()) == [(str(p), 3) for _, p in targets]
    assert (tmp_path / "a" / "t.csv").read_bytes() == b"i\r\n1\r\n2\r\n3\r\n"
    assert (tmp_path / "t.jsonl").read_text() == '{"i":1}\n{"i":2}\n{"i":3}\n'
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "t.csv", "t.jsonl", "t.parquet"]

    def broken():
        yield {"i": [1]}
        raise RuntimeError("disk gone")

    with pytest.raises(RuntimeError):
        _write_streams([("csv", tmp_path / "b.csv"), ("parquet", tmp_path / "b.parquet")],
                       {"i": "int64"}, broken())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "t.jsonl", "t.parquet"]


def _meta(key: str, trial: int = 0) -> EpisodeMeta:
    return EpisodeMeta(key=key, label=f"m|t1:hotel:en:{key}|{trial}", model="m",
                       benchmark="t1", domain="hotel", task_id=key, lang="en", trial=trial)


def _record(task: str) -> EpisodeRecord:
    return EpisodeRecord(run_id="r", model="m", benchmark="t1", domain="hotel", task_id=task,
                         trial=0, termination="user_stop", turns=1, wall_s=0.5,
                         agent_usage=Usage(10, 2))


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {}, prices={"m": {"input": 1.0}})
        for key in ("k0", "k1", "k2"):
            s.select("r", [_meta(key)])
            s.episode_started(_meta(key), run_id="r")
        s.episode_finished("k0", _record("k0"))
        s.episode_finished("k2", _record("k2"))
        s.judgment("k0", judge="state", method="state", passed=True, score=1.0,
                   details={"f1": 0.5})
        s.judgment("k0", judge="J", method="likert", passed=None, score=0.25, details={})
        s.judgment("k1", judge="state", method="state", passed=False, score=0.0, details={})
        s.event("k0", 0, "model_call", {"role": "agent", "usage": {"prompt_tokens": 10}},
                run_id="r", endpoint="m")
        s.flush_sync()
        yield s


@pytest.mark.parametrize("chunk", [1, 2, 900])
def test_trajectories_a_chunk_at_a_time(store, tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(writers_mod, "CHUNK", chunk)
    path = tmp_path / "traj.jsonl"
    assert export_trajectories(store, None, path) == 2  # k1 still runs: no record
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["episode_key"] for line in lines] == ["k0", "k2"]
    first = lines[0]
    assert list(first)[:4] == ["episode_key", "episode_label", "started_at", "finished_at"]
    assert list(first)[-1] == "judgments"
    assert first["episode_label"] == "m|t1:hotel:en:k0|0" and first["task_id"] == "k0"
    assert first["started_at"].endswith("Z") and first["finished_at"].endswith("Z")
    assert first["turns"] == 1 and first["wall_s"] == 0.5
    assert [(j["judge"], j["method"], j["passed"], j["score"], j["details"])
            for j in first["judgments"]] == [("J", "likert", None, 0.25, {}),
                                             ("state", "state", True, 1.0, {"f1": 0.5})]
    assert all(j["created_at"].endswith("Z") for j in first["judgments"])
    assert list(first["judgments"][0]) == ["judge", "method", "passed", "score", "created_at",
                                           "details"]
    assert lines[1]["judgments"] == []
    assert [r.task_id for r in read_trajectories(path)] == ["k0", "k2"]


def test_a_trajectory_file_read_back_names_its_bad_line(tmp_path):
    good = json.dumps({"run_id": "r", "model": "m", "benchmark": "t1", "domain": "d",
                       "task_id": "t", "trial": 0, "termination": "user_stop"})
    path = tmp_path / "t.jsonl"
    path.write_text(f"{good}\n\n   \n{good}\n")
    assert [r.task_id for r in read_trajectories(path)] == ["t", "t"]  # blank lines skipped
    path.write_text(f"{good}\n\n[1]\n")
    records = read_trajectories(path)
    assert next(records).task_id == "t"
    with pytest.raises(ValueError, match=r"^" + str(path).replace(".", r"\.") +
                       r":3: not an EpisodeRecord: Expected `object`, got `array`$") as err:
        next(records)
    assert err.value.__cause__ is not None


def test_an_unknown_run_is_a_store_error_of_its_own(store, tmp_path):
    with pytest.raises(StoreError) as err:
        export_trajectories(store, "nope", tmp_path / "x.jsonl")
    assert str(err.value).startswith("no run 'nope' in ") and str(err.value).endswith(
        "(runs: r)")
    assert err.value.__cause__ is None and err.value.__suppress_context__
    assert not (tmp_path / "x.jsonl").exists()


def test_unknown_formats_are_refused_before_anything_is_written(store, tmp_path):
    with pytest.raises(ValueError) as err:
        export_tables(store, None, tmp_path / "out", ("csv", "xlsx", "json"))
    assert str(err.value) == "unknown export format(s) xlsx, json; known: parquet, csv, jsonl"
    assert not (tmp_path / "out").exists()


def test_parquet_without_pyarrow_is_refused_before_anything_is_written(store, tmp_path,
                                                                       monkeypatch):
    real = builtins.__import__

    def no_pyarrow(name, *a, **kw):
        if name.startswith("pyarrow"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(StoreError) as err:
        export_tables(store, None, tmp_path / "out", ("csv", "parquet"))
    assert str(err.value) == "Parquet export needs pyarrow: pip install 'sweepbench[parquet]'"
    assert isinstance(err.value.__cause__, ImportError)
    assert not (tmp_path / "out").exists()


def test_export_tables_returns_each_file_in_format_then_table_order(store, tmp_path):
    written = export_tables(store, None, tmp_path, ("jsonl", "csv"))
    assert list(written.items()) == [
        (str(tmp_path / f"{t}.{f}"), n) for f in ("jsonl", "csv")
        for t, n in (("episodes", 3), ("calls", 1), ("judgments", 3))]
    header = (tmp_path / "episodes.csv").read_text().splitlines()[0].split(",")
    assert header[:len(COLUMNS["episodes"])] == [n for n, _, _ in COLUMNS["episodes"]]
    assert header[len(COLUMNS["episodes"]):] == [
        "judge_j_likert_passed", "judge_j_likert_score", "judge_state_state_passed",
        "judge_state_state_score", "judge_state_state_f1"]


def test_export_tables_writes_parquet_unless_told_otherwise(store, tmp_path):
    pytest.importorskip("pyarrow", reason="the parquet extra installs pyarrow")
    assert export_tables(store, "r", tmp_path) == {
        str(tmp_path / f"{t}.parquet"): n
        for t, n in (("episodes", 3), ("calls", 1), ("judgments", 3))}
    assert sorted(p.name for p in tmp_path.glob("*.parquet")) == [
        "calls.parquet", "episodes.parquet", "judgments.parquet"]
    assert not list(tmp_path.glob("*.csv")) and not list(tmp_path.glob("*.jsonl"))


def test_the_columns_text():
    lines = columns_doc().splitlines()
    n = {t: len(cols) for t, cols in COLUMNS.items()}
    assert lines[0] == "episodes:"
    assert lines[1] == "  episode_key                  string    the episode's key in the store " \
                       "(join key)"
    assert lines[n["episodes"] + 1] == (
        "  judge_<judge>_<method>_passed / _score / _<detail>: one group per judge/method pair "
        "present (snake_case)")
    assert lines[n["episodes"] + 2] == "calls:"
    assert lines[n["episodes"] + 2 + n["calls"] + 1] == "judgments:"
    assert len(lines) == 3 + 1 + sum(n.values())
    assert lines[-1] == ("  details_json                 string    the judgment's details "
                         "(rubrics, metrics, reasons), JSON")


def test_a_trajectory_line_that_is_not_utf8_is_named_too(tmp_path):
    good = json.dumps({"run_id": "r", "model": "m", "benchmark": "t1", "domain": "d",
                       "task_id": "t", "trial": 0, "termination": "user_stop"})
    path = tmp_path / "t.jsonl"
    path.write_bytes(good.encode() + b'\n{"run_id": "\xff"}\n')
    records = read_trajectories(path)
    assert next(records).task_id == "t"
    with pytest.raises(ValueError, match=r":2: not an EpisodeRecord: 'utf-8' codec can't "
                                         r"decode byte 0xff"):
        next(records)


@pytest.mark.parametrize("sizes, groups", [([2, 2, 3, 3, 3], [4, 6, 3]), ([3, 3, 3, 3], [6, 6]),
                                           ([5], [5]), ([1, 1], [2])])
def test_parquet_row_groups_close_once_a_batch_gathered(tmp_path, monkeypatch, sizes, groups):
    pq = pytest.importorskip("pyarrow.parquet", reason="the parquet extra installs pyarrow")
    monkeypatch.setattr(writers_mod._Parquet, "BATCH", 4)
    chunks = iter([{"i": list(range(n))} for n in sizes])
    _write_streams([("parquet", tmp_path / "t.parquet")], {"i": "int64"}, chunks)
    meta = pq.ParquetFile(tmp_path / "t.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == groups


def test_milliseconds_are_a_datetimes_floored():
    seconds = [0.9989994, 0.0009995, 1.0000005, 2.5e-7, 0.999, 12.3456789]
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    want = [(datetime.fromtimestamp(s, UTC) - epoch) // timedelta(milliseconds=1)
            for s in seconds]
    assert want == [998, 1, 1000, 0, 999, 12345]
    assert writers_mod._ms(np.array(seconds)).tolist() == want


BENCH = {"t1": {"headline": "likert", "headline_label": "the judge's Likert"}}


def test_export_tables_and_the_results_csv_take_the_benchmarks_headlines(store, tmp_path):
    export_tables(store, None, tmp_path, ("jsonl",), benchmarks=BENCH)
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [(r["headline"], r["headline_judge"], r["headline_method"], r["passed"])
            for r in rows] == [("the judge's Likert", None, "likert", None)] * 3
    judged = [json.loads(line) for line in (tmp_path / "judgments.jsonl").read_text().splitlines()]
    assert [(j["judge"], j["headline"]) for j in judged] == [
        ("J", False), ("state", False), ("state", False)]  # not the state check's any more
    n = writers_mod.export_results_csv(store, None, tmp_path / "r.csv", benchmarks=BENCH)
    with open(tmp_path / "r.csv", newline="", encoding="utf-8") as f:
        csv_rows = list(csv.DictReader(f))
    assert n == 3 and [(r["headline"], r["headline_method"]) for r in csv_rows] == [
        ("the judge's Likert", "likert")] * 3
    assert list(csv_rows[0]) == [c for c, _, _ in COLUMNS["episodes"]] + [
        "judge_j_likert_passed", "judge_j_likert_score", "judge_state_state_passed",
        "judge_state_state_score", "judge_state_state_f1"]


def test_export_tables_of_one_run_reads_the_calls_once(store, tmp_path, monkeypatch):
    from sweepbench.results.export import tables as tables_mod

    store.begin_run("r2", {})
    other = _meta("x9")
    store.select("r2", [other])
    store.episode_started(other, run_id="r2")
    store.flush_sync()
    reads = []
    real = tables_mod.read_calls
    monkeypatch.setattr(tables_mod, "read_calls", lambda s, keys, p: reads.append(keys) or
                        real(s, keys, p))
    written = export_tables(store, "r", tmp_path, ("csv",))
    assert written[str(tmp_path / "episodes.csv")] == 3  # x9 is r2's
    assert reads == [["k0", "k1", "k2"]]  # the episodes table took the calls table's sums
    assert export_tables(store, None, tmp_path / "all", ("csv",))[
        str(tmp_path / "all" / "episodes.csv")] == 4


def test_trajectories_read_a_chunk_of_keys_at_a_time(store, tmp_path, monkeypatch):
    monkeypatch.setattr(writers_mod, "CHUNK", 2)
    asked = []
    for name in ("records", "judgments"):
        real = getattr(store, name)
        monkeypatch.setattr(store, name, lambda keys=None, _r=real, _n=name: (
            asked.append((_n, keys)), _r(keys))[1])
    assert export_trajectories(store, None, tmp_path / "t.jsonl") == 2
    assert asked == [("records", ["k0", "k1"]), ("judgments", ["k0", "k1"]),
                     ("records", ["k2"]), ("judgments", ["k2"])]
