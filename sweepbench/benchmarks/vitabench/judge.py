"""VitaBench's LLM judge: the task's rubrics and the judge prompts, run by the rubric engine.

The rubrics of a task are its expected states' ``state_rubrics`` (across all expected states)
followed by its ``overall_rubrics``, deduplicated keeping the first occurrence; they are shown
to the judge as ``rubric_0``, ``rubric_1``, ... with their current status.

**The trajectory** is the episode's messages without system messages (the prompts are not the
conversation), numbered from 1 ("rounds" ``[i]``). Each message is one line (newlines inside
are kept)::

    [1] assistant: Hello! How can I help you today?
    [2] user: I'd like some rice noodles delivered.
    [3] assistant: Let me look. | tool call: search_stores({"keyword": "rice noodles"})
    [4] tool (search_stores): [{"store_id": ...}]

An assistant's tool calls follow its text (if any) as ``tool call: name(arguments)`` with the
arguments as compact JSON (raw text when they are not JSON); a tool result is labelled with
the name of the call it answers, and starts with "tool" as the judge prompt says. A message
with neither text nor calls is skipped; numbering counts it anyway, so round numbers are
stable across windows.

The windows, state carrying, retries and scoring are the engine's
(:mod:`sweepbench.judge.rubric`).
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

import orjson

from sweepbench.benchmarks.vitabench.judge_prompts import (
    judge_system_prompt,
    judge_user_prompt,
    retry_nudge,
)
from sweepbench.datasets.task import Task
from sweepbench.judge.rubric import JudgeCall, RubricJudgment, run_rubric_judge
from sweepbench.wire import AssistantMessage, Message, ToolMessage, UserMessage

__all__ = ["VitaBenchRubricPrompts", "env_info", "judge_episode", "render_trajectory",
           "task_rubrics"]

_NOT_JUDGED = {"en": "Not evaluated yet", "zh": "尚未评估"}
_WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "zh": ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"),
}


def task_rubrics(task: Task) -> list[str]:
    """State rubrics of every expected state, then overall rubrics; deduplicated, in order."""
    ev = task.evaluation if isinstance(task.evaluation, dict) else {}
    found: list[str] = []
    states = ev.get("expected_states") or []
    for state in states if isinstance(states, list) else []:
        rubrics = state.get("state_rubrics") if isinstance(state, dict) else None
        found += [r for r in rubrics or [] if isinstance(r, str)]
    overall = ev.get("overall_rubrics") or []
    found += [r for r in overall if isinstance(r, str)] if isinstance(overall, list) else []
    seen: set[str] = set()
    out = []
    for r in found:
        if r.strip() and r not in seen:
            seen.add(r)
            out.append(r)
    return out


def _compact_args(arguments: str) -> str:
    try:
        return orjson.dumps(orjson.loads(arguments)).decode()
    except orjson.JSONDecodeError:
        return arguments


def _clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + f" …[{len(text) - limit} more characters]"


def render_trajectory(messages: list[Message], start: int = 0, end: int | None = None, *,
                      max_message_chars: int | None = None) -> str:
    """Lines ``[i] role: text`` for ``messages[start:end]`` (already without system messages)."""
    names = {tc.id: tc.function.name for m in messages
             if isinstance(m, AssistantMessage) and m.tool_calls for tc in m.tool_calls}
    lines = []
    stop = len(messages) if end is None else end
    for i in range(start, stop):
        m = messages[i]
        if isinstance(m, AssistantMessage):
            parts = [m.content.strip()] if m.content and m.content.strip() else []
            parts += [f"tool call: {tc.function.name}({_compact_args(tc.function.arguments)})"
                      for tc in m.tool_calls or []]
            body, label = " | ".join(parts), "assistant"
        elif isinstance(m, ToolMessage):
            name = m.name or names.get(m.tool_call_id)
            body, label = m.content, f"tool ({name})" if name else "tool"
        elif isinstance(m, UserMessage):
            body, label = m.content, "user"
        else:  # pragma: no cover - system messages are filtered out
            continue
        if body.strip():
            lines.append(f"[{i + 1}] {label}: {_clip(body, max_message_chars)}")
    return "\n".join(lines)


def env_info(task: Task, lang: str) -> str:
    """The judge's view of the environment: the task's clock, with its weekday."""
    when = str(task.environment.get("time", "")).strip()
    if not when:
        return "- Current time: unknown" if lang != "zh" else "- 当前时间：未知"
    try:
        day = _WEEKDAYS.get(lang, _WEEKDAYS["en"])[_dt.datetime.fromisoformat(when).weekday()]
        when = f"{when} {day}"
    except ValueError:
        pass
    return f"- 当前时间：{when}" if lang == "zh" else f"- Current time: {when}"


class VitaBenchRubricPrompts:
    """The engine's :class:`~sweepbench.judge.rubric.RubricPrompts` for one VitaBench task."""

    def __init__(self, task: Task, *, method: str, lang: str, data_dir: str | Path | None,
                 window: int, overlap: int, max_message_chars: int | None = None) -> None:
        self.task, self.data_dir = task, data_dir
        self.lang = lang
        self.rubrics = task_rubrics(task)
        self.not_judged = _NOT_JUDGED[lang]
        self.max_message_chars = max_message_chars
        self.fields = {"env_info": env_info(task, lang), "user_instruction": task.instructions,
                       "window_idx": 1, "total_windows": 1, "window_size": window,
                       "overlap": overlap}
        _, self.source = judge_system_prompt(method, lang, data_dir=data_dir, fields=self.fields)

    def system(self, method: str, window_idx: int, total_windows: int) -> str:
        text, _ = judge_system_prompt(
            method, self.lang, data_dir=self.data_dir,
            fields={**self.fields, "window_idx": window_idx, "total_windows": total_windows})
        return text

    def user(self, method: str, **parts: Any) -> str:
        return judge_user_prompt(method, **parts)

    def render(self, convo: list[Message], start: int, end: int) -> str:
        return render_trajectory(convo, start, end, max_message_chars=self.max_message_chars)

    def retry_nudge(self) -> str:
        return retry_nudge(self.lang)


async def judge_episode(
    task: Task,
    messages: list[Message],
    *,
    call: JudgeCall,
    method: str = "sliding",
    window: int = 10,
    overlap: int = 2,
    data_dir: str | Path | None = None,
    lang: str | None = None,
    retries: int = 2,
    meta: dict[str, Any] | None = None,
    temperature: float | None = 0.0,
    max_tokens: int | None = None,
    max_message_chars: int | None = None,
) -> RubricJudgment:
    """Judge one episode's trajectory against ``task``'s rubrics with ``method``.

    ``lang`` (en/zh) defaults to the task's language; ``data_dir`` supplies the upstream
    templates. Raises ValueError only for bad arguments (method, window, overlap, retries).
    """
    lang = lang or task.lang
    lang = lang if lang in ("en", "zh") else "en"
    prompts = VitaBenchRubricPrompts(task, method=method, lang=lang, data_dir=data_dir,
                                     window=window, overlap=overlap,
                                     max_message_chars=max_message_chars)
    return await run_rubric_judge(prompts, messages, call=call, method=method, window=window,
                                  overlap=overlap, retries=retries, meta=meta,
                                  temperature=temperature, max_tokens=max_tokens)
