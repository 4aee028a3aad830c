"""A small store for the viewer's tests, grown by three sweeps through ``sweepbench.cli.main``
(scripted agents, user and judge on the built-in reference server), as a store grows:

1. both scripted agents on VitaBench delivery and a T1 split, two trials, judged by the
   judge double, with prices for the noisy agent and the judge (stored with the run);
2. the noisy agent again on one VitaBench task with another seed: a new identity of a
   stored (model, task, trial), which supersedes the older one;
3. the oracle on one VitaBench task with the neutral user: the same model under a second
   user mode, a leaderboard row of its own;

plus one planted episode whose every text field is HTML and script (to prove the page shows
it as text), on a task it marks unreachable.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from sweepbench.cli import main
from sweepbench.ids import STATE_JUDGE, EpisodeId, EpisodeKey, JudgeMethod, TaskKey
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import AssistantMessage, FunctionCall, ToolCall, ToolMessage, UserMessage

COMMON = ["run", "--judge-model", "scripted/judge", "--no-progress"]
SWEEPS = [
    ["--benchmark", "vitabench:delivery", "--benchmark", "t1:flight+hotel+bar", "--limit", "3",
     "--trials", "2", "--model", "scripted/oracle", "--model", "scripted/noisy:0.3"],
    ["--benchmark", "vitabench:delivery", "--limit", "1", "--trials", "1",
     "--model", "scripted/noisy:0.3", "--seed", "7"],
    ["--benchmark", "vitabench:delivery", "--limit", "1", "--trials", "1",
     "--model", "scripted/oracle", "--user-mode", "neutral"],
]
PRICES = """
[[endpoints]]
name = "scripted/noisy:0.3"
price_input_per_mtok = 2.0
price_cached_input_per_mtok = 0.5
price_output_per_mtok = 8.0

[[endpoints]]
name = "scripted/judge"
price_input_per_mtok = 1.0
price_output_per_mtok = 4.0
"""
UNREACHABLE = "planted: the task asks for a dish no shop sells"

# Each would run or fetch something if the page ever parsed store text as HTML.
XSS_SCRIPT = "<script>window.__xss = 1; alert(1)</script>"
XSS_IMG = '<img src=x onerror="window.__xss = 2; alert(2)">'
DONE = "Done " + XSS_IMG + XSS_SCRIPT
PLANTED_MODEL = 'planted/<img src=x onerror="window.__xss=6">'


def plant(path: Path, run_id: str, model: str = PLANTED_MODEL,
          messages: list | None = None) -> str:
    """Add an episode whose messages, tool call, result, error and verdict are markup (or
    whose messages are ``messages``, its journal's one reply the last of them); the run
    selected it, as a sweep's episodes are. Returns its key."""
    with RunStore(path, create=False) as store:
        # a VitaBench episode's (the unreachable reason is about a dish), whichever ran first
        template = next(r for r in store.records().values() if r.benchmark == "vitabench@2025-12")
        task = TaskKey(template.benchmark, template.domain, template.lang, template.task_id)
        label = str(EpisodeId(model, task, 0))
        key = str(EpisodeKey.of({"planted": label}))
        meta = EpisodeMeta(key=key, label=label, model=model, benchmark=task.benchmark,
                           domain=task.domain, task_id=task.id, lang=task.lang, trial=0,
                           user_model="scripted/user", user_mode="default",
                           identity={"planted": label}, unreachable=UNREACHABLE)
        messages = messages or [
            AssistantMessage("Hello! " + XSS_SCRIPT),
            UserMessage("My order " + XSS_IMG),
            AssistantMessage(None, tool_calls=[ToolCall("c0", FunctionCall(
                "<b>bold_tool</b>", '{"q": "<script>alert(3)</script>"}'))]),
            ToolMessage("c0", '<iframe src="javascript:alert(4)"></iframe>'),
            AssistantMessage(DONE),
        ]
        record = msgspec.structs.replace(
            template, model=model, trial=0, messages=messages, termination="error",
            error="model call failed: <svg onload=alert(5)>")
        store.select(run_id, [meta])
        store.episode_started(meta, run_id=run_id)
        store.event(key, 0, "model_call", {
            "role": "agent", "message": messages[-1],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}, "latency_s": 0.25,
            "attempts": 1}, run_id=run_id, endpoint=model)
        store.episode_finished(key, record, run_id=run_id)
        store.judgment(key, judge=STATE_JUDGE, method=JudgeMethod.STATE, passed=False,
                       score=0.0, details={"why": "order <img src=x onerror=alert(7)> differs"},
                       run_id=run_id)
        store.flush_sync()
    return key


@pytest.fixture(scope="session")
def stored_run(tmp_path_factory) -> dict:
    """{"path", "runs" (oldest first), "run_id" (the first), "planted"}: the store above."""
    tmp = tmp_path_factory.mktemp("view")
    path = tmp / "tiny.sqlite"
    (tmp / "prices.toml").write_text(PRICES)
    for i, sweep in enumerate(SWEEPS):
        prices = ["--config", str(tmp / "prices.toml")] if i == 0 else []
        assert main([*COMMON, *sweep, *prices, "--out", str(path)]) == 0
    with RunStore(path, create=False) as store:
        runs = [r["run_id"] for r in store.runs()]
    return {"path": path, "runs": runs, "run_id": runs[0], "planted": plant(path, runs[0])}
