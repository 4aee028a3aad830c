"""``results/row_codes.py``: each episode row's status and texts as codes into tables numbered
in the order the values first come."""

from __future__ import annotations

from sweepbench.results.row_codes import ERROR, RUNNING, RowCodes


def _row(key: str, status: str, name: str, bench: str, domain: str, lang: str,
         task: str) -> dict:
    return {"episode_key": key, "status": status, "name": name, "benchmark": bench,
            "domain": domain, "lang": lang, "task_id": task}


def test_each_row_is_coded_into_tables_in_first_come_order():
    rows = [_row("e3", "running", "B", "vb", "delivery", "en", "t1"),
            _row("e1", "done", "A", "t1", "flights", "zh", "t1"),
            _row("e2", "error", "B", "vb", "delivery", "zh", "t1"),
            _row("e0", "done", "A", "vb", "ota", "en", "t2")]
    codes = RowCodes.of(rows)
    assert codes.keys == ["e3", "e1", "e2", "e0"]
    assert codes.status.dtype.name == "int8"
    assert codes.status.tolist() == [RUNNING, 0, ERROR, 0] == [2, 0, 1, 0]
    assert (codes.names, codes.name.tolist()) == (["B", "A"], [0, 1, 0, 1])
    assert (codes.benches, codes.bench.tolist()) == (["vb", "t1"], [0, 1, 0, 0])
    assert (codes.domains, codes.domain.tolist()) == (["delivery", "flights", "ota"],
                                                      [0, 1, 0, 2])
    # the task's key holds benchmark, domain, language and task id: each tells tasks apart
    assert codes.tasks == ["vb:delivery:en:t1", "t1:flights:zh:t1", "vb:delivery:zh:t1",
                           "vb:ota:en:t2"]
    assert codes.task.tolist() == [0, 1, 2, 3]
    assert codes.index() == {"e3": 0, "e1": 1, "e2": 2, "e0": 3}


def test_no_rows_give_empty_codes():
    codes = RowCodes.of([])
    assert codes.keys == [] and codes.status.tolist() == [] and codes.names == []
    assert codes.task.tolist() == [] and codes.index() == {}
