"""The store's reads: what the queries return from committed rows."""

from __future__ import annotations

from sweepbench.store.runstore import RunStore


def test_call_spans_count_each_runs_model_calls_and_their_first_and_last_time(tmp_path):
    with RunStore(tmp_path / "s.db") as store:
        store.event("e1", 0, "model_call", {"role": "agent"}, run_id="r1")
        store.event("e1", 1, "tool_call", {}, run_id="r1")  # not a call
        store.event("e2", 0, "model_call", {"role": "agent"}, run_id="r1")
        store.event("e2", 1, "model_call", {"role": "user"}, run_id="r2")
        store.event("e3", 0, "model_call", {"role": "agent"})  # no run: not counted
        store.flush_sync()
        spans = store.call_spans()
        ts = {(e["run_id"], e["seq"], k): e["ts"] for k in ("e1", "e2", "e3")
              for e in store.events(k) if e["kind"] == "model_call"}
    r1 = [t for (r, _, _), t in ts.items() if r == "r1"]
    assert spans == {"r1": (2, min(r1), max(r1)), "r2": (1, ts["r2", 1, "e2"], ts["r2", 1, "e2"])}
