"""VitaBench's benchmark object on its scoring paths: the state check's verdict as a judgment,
the judge's verdict with the check's riding along for the scripted double only."""

from __future__ import annotations

import msgspec

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.vitabench.oracle import gold_plan
from sweepbench.benchmarks.vitabench.state_check import check_vitabench
from sweepbench.wire import AssistantMessage, EpisodeRecord, Usage, UserMessage

BENCH = registry.get("vitabench")
TASK = next(t for t in BENCH.load_tasks(("delivery",), data_dir=None, lang="en")
            if t.evaluation.get("overall_rubrics"))


def record(final_state) -> EpisodeRecord:
    return EpisodeRecord(run_id="r", model="m", benchmark="vitabench", domain="delivery",
                         task_id=TASK.id, trial=0, termination="user_stop",
                         messages=[AssistantMessage("Hello"), UserMessage("noodles, please")],
                         final_state=final_state)


def test_check_is_the_state_check_as_a_judgment(run_plan):
    final, _ = run_plan(TASK, gold_plan(TASK))
    assert BENCH.check(TASK, record(final)) == {"passed": True, "score": 1.0,
                                               "details": {"why": None, "unreachable": None}}
    failed = BENCH.check(TASK, record({"orders": {}}))
    expected = msgspec.to_builtins(check_vitabench(TASK, {"orders": {}}))
    assert expected.pop("passed") is False
    assert failed == {"passed": False, "score": 0.0, "details": expected}
    assert failed["details"]["why"]


class Recorder:
    def __init__(self, text: str) -> None:
        self.text, self.requests = text, []

    async def __call__(self, req):
        self.requests.append(req)

        class Reply:
            message, usage, latency_s = AssistantMessage(self.text), Usage(3, 1), 0.0
        return Reply()


async def test_judge_verdict_with_the_check_riding_along(run_plan):
    final, _ = run_plan(TASK, gold_plan(TASK))
    call = Recorder('{"justification": "fine", "meetExpectation": true}')
    judged = await BENCH.judge(TASK, record(final), "full_no_rubrics", call, data_dir=None)
    assert (judged["passed"], judged["score"]) == (True, 1.0)
    assert "passed" not in judged["details"] and "score" not in judged["details"]
    assert judged["details"]["method"] == "full_no_rubrics" and judged["details"]["calls"] == 1
    assert call.requests[0].sweepbench["reference_verdict"] is True

    call = Recorder('{"justification": "no", "meetExpectation": false}')
    judged = await BENCH.judge(TASK, record({"orders": {}}), "full_no_rubrics", call, data_dir=None)
    assert (judged["passed"], judged["score"]) == (False, 0.0)
    assert call.requests[0].sweepbench["reference_verdict"] is False

    await BENCH.judge(TASK, record(None), "full_no_rubrics", call, data_dir=None)
    assert call.requests[-1].sweepbench["reference_verdict"] is None
