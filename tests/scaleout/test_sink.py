"""A worker's store: the state check of a finished episode is made on the worker, and a check
that raises (or gives what JSON cannot hold) is left to the driver, which records why."""

from __future__ import annotations

import msgspec

from sweepbench.scaleout.messages import Report
from sweepbench.scaleout.sink import ForwardingStore


class _Record(msgspec.Struct):
    termination: str = "done"


def _finished(judge, *, task="task"):
    sink = ForwardingStore(judge=judge)
    if task is not None:
        sink.tasks["k"] = task
    sink.episode_finished("k", _Record())
    (done,) = sink.take(Report()).finished
    return sink, done


def test_the_state_check_travels_with_the_record():
    seen = []

    def judge(task, record):
        seen.append((task, record.termination))
        return {"passed": True, "score": 1.0, "details": {"tool_f1": 0.5}}

    sink, done = _finished(judge)
    assert seen == [("task", "done")]
    assert msgspec.json.decode(done.state) == {"passed": True, "score": 1.0,
                                               "details": {"tool_f1": 0.5}}
    assert msgspec.json.decode(done.record) == {"termination": "done"}
    assert sink.tasks == {}  # the task is let go with the episode


def test_a_check_that_raises_or_does_not_encode_is_left_to_the_driver():
    def raises(task, record):
        raise KeyError("no gold plan")

    assert _finished(raises)[1].state is None
    assert _finished(lambda t, r: {"details": object()})[1].state is None


def test_no_task_or_no_judge_no_state():
    assert _finished(lambda t, r: {"passed": True}, task=None)[1].state is None
    assert _finished(None)[1].state is None
