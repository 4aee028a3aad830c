"""A small stored run for the viewer's tests: a tiny sweep through ``sweepbench.cli.main``
(scripted agents, user and judge on the built-in reference server), plus one planted episode
whose every text field is HTML and script, to prove the page shows it as text."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from sweepbench.cli import main
from sweepbench.ids import STATE_JUDGE, EpisodeId, JudgeMethod, TaskKey
from sweepbench.results.store import RunStore
from sweepbench.wire import AssistantMessage, FunctionCall, ToolCall, ToolMessage, UserMessage

SWEEP = ["run", "--benchmark", "vitabench:delivery", "--benchmark", "t1:flight+hotel+bar",
         "--limit", "3", "--trials", "2", "--model", "scripted/oracle",
         "--model", "scripted/noisy:0.3", "--judge-model", "scripted/judge", "--no-progress"]

# Each would run or fetch something if the page ever parsed store text as HTML.
XSS_SCRIPT = "<script>window.__xss = 1; alert(1)</script>"
XSS_IMG = '<img src=x onerror="window.__xss = 2; alert(2)">'
DONE = "Done " + XSS_IMG + XSS_SCRIPT
PLANTED_MODEL = 'planted/<img src=x onerror="window.__xss=6">'


def plant(path: Path, run_id: str) -> str:
    """Add an episode whose messages, tool call, result, error and verdict are markup."""
    with RunStore(path, create=False) as store:
        model_eid, template = store.episode_records(run_id)[0]
        task = EpisodeId.parse(model_eid).task
        eid = str(EpisodeId(PLANTED_MODEL, TaskKey(task.benchmark, task.domain, task.lang,
                                                    task.id), 0))
        messages = [
            AssistantMessage("Hello! " + XSS_SCRIPT),
            UserMessage("My order " + XSS_IMG),
            AssistantMessage(None, tool_calls=[ToolCall("c0", FunctionCall(
                "<b>bold_tool</b>", '{"q": "<script>alert(3)</script>"}'))]),
            ToolMessage("c0", '<iframe src="javascript:alert(4)"></iframe>'),
            AssistantMessage(DONE),
        ]
        record = msgspec.structs.replace(
            template, model=PLANTED_MODEL, trial=0, messages=messages, termination="error",
            error="model call failed: <svg onload=alert(5)>")
        store.episode_started(run_id, eid, model=PLANTED_MODEL, benchmark=task.benchmark,
                              domain=task.domain, task_id=task.id, lang=task.lang, trial=0)
        store.event(run_id, eid, 0, "model_call", {
            "role": "agent", "message": {"role": "assistant", "content": DONE},
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}, "latency_s": 0.25,
            "attempts": 1})
        store.episode_finished(eid, record)
        store.judgment(run_id, eid, judge=STATE_JUDGE, method=JudgeMethod.STATE, passed=False,
                       score=0.0, details={"why": "order <img src=x onerror=alert(7)> differs"})
        store.flush_sync()
    return eid


@pytest.fixture(scope="session")
def stored_run(tmp_path_factory) -> dict:
    """{"path", "run_id", "planted"}: the tiny sweep's store with the planted episode."""
    path = tmp_path_factory.mktemp("view") / "tiny.sqlite"
    assert main([*SWEEP, "--out", str(path)]) == 0
    with RunStore(path, create=False) as store:
        run_id = store.latest_run_id()
    return {"path": path, "run_id": run_id, "planted": plant(path, run_id)}
