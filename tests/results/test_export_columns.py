"""The export's calls and episodes tables built as arrays from the store's facts: each call
priced as ``results.cost.call_cost`` prices it, each episode's sums those of a loop over its
calls, and the same files whether the facts or the journals are read (odd calls included:
negative counts, hedged copies, cache hits, unpriced endpoints, payloads that do not
decode); and the column kinds of ``results.export.columns`` at their edges."""

from __future__ import annotations

import filecmp
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from sweepbench.results.cost import call_cost, prices_by_run, role_of
from sweepbench.results.export.columns import Coded, Numbers, as_list, coded, length
from sweepbench.results.export.writers import export_tables
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.reads import StoreReads

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_report_facts import odd_store  # noqa: E402


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def odd(tmp_path) -> Path:
    odd_store(tmp_path / "odd.sqlite")
    return tmp_path / "odd.sqlite"


def test_every_call_is_the_stores_call_at_call_costs_price(odd, tmp_path):
    with ReadOnlyStore(odd) as store:
        assert store.has_facts
        export_tables(store, None, tmp_path / "out", ("jsonl",))
        assert sum("does not decode" in d for d in store.damaged) == 2  # left out, and said
        calls = store.model_calls()
        times = store.model_call_times()
        prices = prices_by_run(store.runs())
    rows = _lines(tmp_path / "out" / "calls.jsonl")
    assert len(rows) == len(calls) > 100
    assert any(c.stalls for c in calls) and any(c.attempts == 0 for c in calls)
    for row, c, (seq, ts) in zip(rows, calls, times):
        _, judge, method = (c.journal.split("|", 2) + ["", ""])[:3] if c.journal else (
            "", None, None)
        assert (row["episode_key"], row["source"], row["judge"], row["judge_method"],
                row["seq"], row["run_id"], row["endpoint"], row["role"], row["prompt_tokens"],
                row["cached_prompt_tokens"], row["completion_tokens"], row["latency_s"],
                row["attempts"], row["http_statuses"]) == (
            c.episode_key, role_of(c), judge or None, method or None, seq, c.run_id,
            c.endpoint, c.role, c.prompt_tokens, c.cached_prompt_tokens, c.completion_tokens,
            c.latency_s, c.attempts, c.statuses)
        assert row["cost_usd"] == call_cost(c, prices).cost  # exactly: same arithmetic
        assert row["ts"].endswith("Z") and abs(
            datetime.fromisoformat(row["ts"][:-1] + "+00:00").timestamp() - ts) < 1e-3


def test_an_episodes_sums_are_a_loop_over_its_calls(odd, tmp_path):
    """The oracle: the loop the episodes table ran over its calls before it was arrays."""
    with ReadOnlyStore(odd) as store:
        export_tables(store, None, tmp_path / "out", ("jsonl",))
        calls = store.model_calls()
        prices = prices_by_run(store.runs())
    want: dict[str, dict] = {}
    for c in calls:
        e = want.setdefault(c.episode_key, {"priced": 0, "unpriced": 0, "agent": 0.0,
                                            "user": 0.0, "judge": 0.0, "jp": 0, "jc": 0,
                                            "retries": 0, "n": 0, "sum": 0.0, "max": 0.0})
        cost, src = call_cost(c, prices).cost, role_of(c)
        if cost is None:
            e["unpriced"] += 1
        else:
            e[src] += cost
            e["priced"] += 1
        if src == "judge":
            e["jp"] += c.prompt_tokens
            e["jc"] += c.completion_tokens
        else:
            e["retries"] += max(0, (c.attempts or 1) - 1)
            if src == "agent" and c.latency_s is not None:
                e["n"] += 1
                e["sum"] += c.latency_s
                e["max"] = max(e["max"], c.latency_s)
    rows = _lines(tmp_path / "out" / "episodes.jsonl")
    assert {r["episode_key"] for r in rows} == set(want)
    for r in rows:
        e = want[r["episode_key"]]
        priced = e["priced"] > 0
        assert (r["cost_agent_usd"], r["cost_user_usd"], r["cost_judge_usd"]) == (
            (e["agent"], e["user"], e["judge"]) if priced else (None, None, None))
        assert r["cost_total_usd"] == (e["agent"] + e["user"] + e["judge"] if priced else None)
        assert (r["unpriced_calls"], r["judge_prompt_tokens"], r["judge_completion_tokens"],
                r["retries"]) == (e["unpriced"], e["jp"], e["jc"], e["retries"])
        assert (r["agent_latency_mean_s"], r["agent_latency_max_s"]) == (
            (e["sum"] / e["n"], e["max"]) if e["n"] else (None, None))


def test_the_facts_and_the_journals_give_the_same_files(odd, tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", reason="the parquet extra installs pyarrow")
    import pyarrow.parquet as pq

    formats = ("parquet", "csv", "jsonl")
    with ReadOnlyStore(odd) as store:
        export_tables(store, None, tmp_path / "facts", formats)
    with monkeypatch.context() as m:
        m.setattr(StoreReads, "has_facts", property(lambda self: False))
        with ReadOnlyStore(odd) as store:
            export_tables(store, None, tmp_path / "journals", formats)
    for table in ("episodes", "calls", "judgments"):
        for fmt in ("csv", "jsonl"):
            assert filecmp.cmp(tmp_path / "facts" / f"{table}.{fmt}",
                               tmp_path / "journals" / f"{table}.{fmt}", shallow=False), table
        assert pq.read_table(tmp_path / "facts" / f"{table}.parquet").equals(
            pq.read_table(tmp_path / "journals" / f"{table}.parquet")), table


def test_parquet_timestamps_are_the_milliseconds_a_datetime_holds(tmp_path):
    """Vectorised: Unix seconds rounded to the microsecond half to even, then floored to the
    millisecond, as pyarrow converts a ``datetime``."""
    pa = pytest.importorskip("pyarrow", reason="the parquet extra installs pyarrow")

    from sweepbench.results.export.writers import _ms

    seconds = [1764300000.1239, 1764300000.0004995, 1764300000.9999996, 0.0, -0.0015,
               1.0000005, 1764312345.6785, 2.5e-7]
    want = pa.array([datetime.fromtimestamp(s, timezone.utc) for s in seconds],
                    pa.timestamp("ms", tz="UTC")).cast(pa.int64()).to_pylist()
    assert _ms(np.array(seconds)).tolist() == want


# the column kinds of results/export/columns.py, at their edges


def test_coded_gives_each_rows_text_by_its_code():
    col = Coded(np.array([2, 0, 0, 1, 2]), ["a", None, "c"])
    assert col.tolist() == ["c", "a", "a", None, "c"]
    assert as_list(col) == ["c", "a", "a", None, "c"]
    assert length(col) == 5  # the rows, not the texts


def test_numbers_are_null_where_the_mask_says_and_nowhere_without_one():
    values = np.array([1.5, -2.0, 0.0, 7.25])
    assert Numbers(values).tolist() == [1.5, -2.0, 0.0, 7.25]
    assert Numbers(values, np.array([False, True, True, False])).tolist() == [1.5, None, None,
                                                                              7.25]
    ints = Numbers(np.array([3, 0, -1], dtype=np.int64), np.array([False, False, True]))
    assert ints.tolist() == [3, 0, None] and type(ints.tolist()[0]) is int
    assert as_list(Numbers(values)) == [1.5, -2.0, 0.0, 7.25]
    assert length(Numbers(values)) == length(Numbers(values, np.zeros(4, bool))) == 4


def test_a_list_column_is_itself():
    col = ["x", None, 3]
    assert as_list(col) is col and length(col) == 3 and length([]) == 0


def test_coded_numbers_texts_in_their_order_of_first_appearance():
    col = coded(["b", "a", "b", None, "a", "c"])
    assert col.texts == ["b", "a", None, "c"]
    assert col.codes.tolist() == [0, 1, 0, 2, 1, 3] and col.codes.dtype.name == "int64"
    assert col.tolist() == ["b", "a", "b", None, "a", "c"]
    empty = coded([])
    assert empty.texts == [] and empty.codes.tolist() == [] and length(empty) == 0
