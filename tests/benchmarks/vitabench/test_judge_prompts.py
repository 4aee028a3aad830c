"""Judge prompts: upstream templates from the data dir, the project's own otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweepbench.benchmarks.vitabench.judge import judge_episode
from sweepbench.benchmarks.vitabench.judge_prompts import (
    JUDGE_TEMPLATE_NAMES,
    judge_system_prompt,
    load_upstream_prompts,
    upstream_prompts_dir,
)
from sweepbench.datasets.task import Task
from sweepbench.wire import AssistantMessage, Usage, UserMessage


def task(lang="en"):
    return Task(id="t", benchmark="vitabench", domain="delivery", lang=lang,
                instructions="INSTRUCTION-TEXT", environment={"time": "2025-06-21 11:20:00"},
                evaluation={"overall_rubrics": ["r0", "r1"]})


class Recorder:
    def __init__(self):
        self.requests = []

    async def __call__(self, req):
        self.requests.append(req)

        class R:
            message = AssistantMessage('[{"rubric_idx": "rubric_0", "meetExpectation": true}]')
            usage = Usage()
        return R()


MSGS = [AssistantMessage("hi"), UserMessage("order noodles")] * 7  # 14 messages: 2 windows


@pytest.mark.parametrize("method", list(JUDGE_TEMPLATE_NAMES))
def test_upstream_templates_load_for_every_method(shared_data, method):
    prompts = load_upstream_prompts(shared_data)
    assert set(JUDGE_TEMPLATE_NAMES.values()) <= set(prompts)
    fields = {"env_info": "- Current time: X", "user_instruction": "INSTR", "window_idx": 2,
              "total_windows": 3, "window_size": 10, "overlap": 2}
    for lang in ("en", "zh"):
        text, source = judge_system_prompt(method, lang, data_dir=shared_data, fields=fields)
        assert source == "upstream" and "INSTR" in text and "- Current time: X" in text
        assert text.strip() == prompts[JUDGE_TEMPLATE_NAMES[method]][lang].format(**fields).strip()
    assert load_upstream_prompts(shared_data) is prompts  # parsed once, cached


async def test_judge_uses_upstream_in_the_task_language(shared_data):
    rec = Recorder()
    res = await judge_episode(task("en"), MSGS, call=rec, data_dir=shared_data)
    assert res.template == "upstream" and res.windows == 2
    system = rec.requests[1].messages[0].content
    assert "User Complete Instruction" in system and "INSTRUCTION-TEXT" in system
    assert "window 2 (out of 2" in system
    assert "2025-06-21 11:20:00 Saturday" in system
    rec = Recorder()
    res = await judge_episode(task("zh"), MSGS, call=rec, data_dir=shared_data)
    system = rec.requests[0].messages[0].content
    assert res.lang == "zh" and "用户完整指令" in system and "星期六" in system
    rec = Recorder()
    res = await judge_episode(task("zh"), MSGS, call=rec, data_dir=shared_data, lang="en")
    assert res.lang == "en" and "User Complete Instruction" in rec.requests[0].messages[0].content


async def test_own_templates_without_a_data_dir():
    rec = Recorder()
    res = await judge_episode(task("en"), MSGS, call=rec, data_dir=None, window=8, overlap=3)
    assert res.template == "sweepbench"
    system = rec.requests[0].messages[0].content
    assert "INSTRUCTION-TEXT" in system and "windows of 8 messages" in system
    assert "share 3 messages" in system and "window 1 of 3" in system
    assert '"rubric_idx": "rubric_0"' in system  # the reply format shown, braces unescaped
    for method in JUDGE_TEMPLATE_NAMES:
        for lang in ("en", "zh"):
            text, source = judge_system_prompt(method, lang, data_dir=None, fields={
                "env_info": "E", "user_instruction": "U", "window_idx": 1, "total_windows": 1,
                "window_size": 10, "overlap": 2})
            assert source == "sweepbench" and "U" in text and "{" in text and "meetExpectation" in text


def test_data_dir_may_be_the_vitabench_folder(shared_data):
    assert upstream_prompts_dir(shared_data) == upstream_prompts_dir(shared_data / "vitabench")
    assert upstream_prompts_dir(None) is None
    assert upstream_prompts_dir(shared_data / "nowhere") is None


async def test_broken_upstream_files_fall_back_to_own(tmp_path: Path):
    prompts = tmp_path / "vitabench" / "upstream" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "sliding_window_eval_template.yaml").write_text("english: [unclosed\n")
    (prompts / "full_trajectory_eval_template.yaml").write_text(
        "english: |-\n  Judge {user_instruction} with {an_unknown_field}\n")
    (prompts / "full_trajectory_no_rubrics_eval_template.yaml").write_text("- just a list\n")
    (prompts / "sliding_window_eval_no_rubrics_eval_template.yaml").write_text(
        "english: |-\n  MINE {user_instruction} w{window_idx}/{total_windows} {env_info}\n")
    for method, want in [("sliding", "sweepbench"), ("full", "sweepbench"),
                         ("full_no_rubrics", "sweepbench"), ("sliding_no_rubrics", "upstream")]:
        rec = Recorder()
        res = await judge_episode(task("en"), MSGS, call=rec, method=method, data_dir=tmp_path)
        assert res.template == want, method
    assert rec.requests[0].messages[0].content.startswith("MINE INSTRUCTION-TEXT w1/2")
    # a language the file lacks falls back too
    rec = Recorder()
    res = await judge_episode(task("zh"), MSGS, call=rec, method="sliding_no_rubrics",
                              data_dir=tmp_path)
    assert res.template == "sweepbench"
