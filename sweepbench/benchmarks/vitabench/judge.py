"""VitaBench's LLM judge: the task's rubrics and the judge prompts, run by the rubric engine.

The rubrics of a task are its expected states' ``state_rubrics`` (across all expected states)
followed by its ``overall_rubrics``, deduplicated keeping the first occurrence; they are shown
to the judge as ``rubric_0``, ``rubric_1``, ... with their current status.

**The trajectory** is the episode's messages without system messages (the greeting first,
as the agent never saw it), rendered as upstream's evaluator does, one ``[i] role: text``
line per message, numbered from 1 across windows (newlines inside are kept)::

    [1] assistant: Hello, how can I help you?
    [2] user: I'd like some rice noodles delivered.
    [3] assistant: Let me look. delivery_store_search_recommand(keywords=['米线'])
    [4] tool: Store(name=..., store_id=..., ...)

An assistant's tool calls follow its text (one space) as ``name(k=repr(v), ...)``, Python
reprs of the parsed arguments in the model's order (raw text when they are not a JSON
object), several joined by ``.``; a tool result is its output alone. A message with neither
text nor calls is skipped; numbering counts it anyway. The environment line is
``{'system_time': '2025-06-21 11:20:00 Saturday', 'database': []}``, and every rubric starts
as ``Not evaluated yet`` (English in both languages). How replies are read:
:mod:`sweepbench.benchmarks.vitabench.judge_reading`.

The windows, state carrying, retries and scoring are the engine's
(:mod:`sweepbench.judge.rubric`).
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from sweepbench.benchmarks.vitabench.judge_prompts import (
    judge_system_prompt,
    judge_user_prompt,
    retry_nudge,
)
from sweepbench.benchmarks.vitabench.judge_reading import (
    met,
    read_overall,
    read_rubrics,
)
from sweepbench.datasets.task import Task
from sweepbench.judge.rubric import (
    JudgeCall,
    OverallUpdate,
    RubricJudgment,
    RubricUpdate,
    run_rubric_judge,
)
from sweepbench.model_json import ArgumentsError, python_arguments
from sweepbench.wire import AssistantMessage, Message, ToolMessage

__all__ = ["VitaBenchRubricPrompts", "env_info", "judge_episode", "render_trajectory",
           "task_rubrics"]

NOT_JUDGED = "Not evaluated yet"
"""The initial justification of every rubric, in English in both languages as upstream."""
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
    return list(dict.fromkeys(found))


def _call_text(name: str, arguments: str) -> str:
    """``name(k=repr(v), ...)``: upstream shows the parsed arguments as Python reprs."""
    try:
        args = python_arguments(arguments) if arguments else {}
    except ArgumentsError:
        args = arguments
    if isinstance(args, dict):
        return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
    return f"{name}({args})"


def render_trajectory(messages: list[Message], start: int = 0, end: int | None = None, *,
                      max_message_chars: int | None = None) -> str:
    """Lines ``[i] role: text`` for ``messages[start:end]`` (already without system messages).

    ``max_message_chars`` (off by default, upstream never cuts) clips long messages.
    """
    lines = []
    stop = len(messages) if end is None else end
    for i in range(start, stop):
        m = messages[i]
        text: str | None = getattr(m, "content", None)
        if isinstance(m, AssistantMessage) and m.tool_calls:
            calls = ".".join(_call_text(tc.function.name, tc.function.arguments)
                             for tc in m.tool_calls)
            text = f"{text} {calls}" if text else calls
        if text:
            role = "assistant" if isinstance(m, AssistantMessage) else (
                "tool" if isinstance(m, ToolMessage) else "user")
            lines.append(f"[{i + 1}] {role}: {_clip(text, max_message_chars)}")
    return "\n".join(lines)


def _clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + f" …[{len(text) - limit} more characters]"


def env_info(task: Task, lang: str) -> str:
    """The judge's environment line, as upstream: ``str({"system_time": "<time> <weekday>",
    "database": []})`` (the weekday in ``lang``; an empty time when the task has none)."""
    when = str(task.environment.get("time", "") or "")
    system_time = ""
    if when:
        try:
            day = _WEEKDAYS.get(lang, _WEEKDAYS["en"])[
                _dt.datetime.strptime(when, "%Y-%m-%d %H:%M:%S").weekday()]
        except ValueError:
            day = ""
        system_time = f"{when} {day}"
    return str({"system_time": system_time, "database": []})


class VitaBenchRubricPrompts:
    """The engine's :class:`~sweepbench.judge.rubric.RubricPrompts` for one VitaBench task."""

    def __init__(self, task: Task, *, method: str, lang: str, data_dir: str | Path | None,
                 window: int, overlap: int, max_message_chars: int | None = None) -> None:
        self.task, self.data_dir = task, data_dir
        self.lang = lang
        self.rubrics = task_rubrics(task)
        self.not_judged = NOT_JUDGED
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

    def read_rubrics(self, text: str | None, keys: list[str]) -> dict[int, RubricUpdate] | None:
        return read_rubrics(text, keys)

    def read_overall(self, method: str, text: str | None) -> OverallUpdate | None:
        return read_overall(method, text)

    def met(self, verdict: Any) -> bool:
        return met(verdict)


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
