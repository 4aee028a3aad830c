"""VitaBench's rubric-based sliding-window judge (paper §3.3, Appendix E) and its Table 5 variants.

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

**Windows** are ``window`` consecutive messages, the next starting ``window - overlap`` later,
the last one ending at the last message (25 messages, w=10, δ=2: [0,10), [8,18), [16,25)); a
trajectory of at most ``window`` messages is one window; an empty one has none. As upstream,
windows count messages, not user/agent exchanges.

**State** is one status per rubric, all false at first, carried from window to window: the
judge sees the statuses (and its last justifications) and answers with updated ones. A rubric
the reply does not mention, or mentions without a readable boolean, keeps its status; a
satisfied rubric turns false again only when a later window's reply explicitly says false.

**Recovery**: a reply that cannot be read (no verdict for any rubric) is retried up to
``retries`` times with a short note asking for the JSON; a model call that raises counts as a
failed attempt too. A window still unreadable after that is recorded as unjudged, the
statuses keep their previous values, and the judgment says how many windows were unjudged.
Nothing here raises for model misbehaviour.

**Score**: ``passed`` is all-or-nothing (every rubric met); ``score`` is the fraction met. A
task without rubrics passes with no calls and a note (as upstream).

Methods (Table 5): ``sliding`` (the paper's judge), ``full`` (the whole trajectory in one call,
with rubrics), ``sliding_no_rubrics`` (windows, one overall verdict, the judge's own memory
carried forward), ``full_no_rubrics`` (one call, one overall verdict). The no-rubric methods
report ``score`` 1.0 or 0.0 and no per-rubric results.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import msgspec
import orjson
from msgspec import Struct, field

from sweepbench.benchmarks.vitabench.judge_prompts import (
    judge_system_prompt,
    judge_user_prompt,
    retry_nudge,
)
from sweepbench.datasets.task import Task
from sweepbench.judge.parsing import parse_overall_verdict, parse_rubric_verdicts
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    Message,
    SystemMessage,
    ToolMessage,
    Usage,
    UserMessage,
)

__all__ = [
    "METHODS",
    "JudgeReply",
    "RubricJudgment",
    "RubricResult",
    "WindowOutcome",
    "judge_episode",
    "make_windows",
    "render_trajectory",
    "task_rubrics",
]

METHODS = ("sliding", "full", "sliding_no_rubrics", "full_no_rubrics")
_NOT_JUDGED = {"en": "Not evaluated yet", "zh": "尚未评估"}
_WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "zh": ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"),
}


class JudgeReply(Protocol):
    message: AssistantMessage
    usage: Usage


JudgeCall = Callable[[ChatRequest], Awaitable[JudgeReply]]


class RubricResult(Struct, kw_only=True):
    rubric: str
    met: bool
    reasoning: str = ""
    window: int | None = None
    """0-based window whose verdict set the final status; None if it never changed."""


class WindowOutcome(Struct, kw_only=True):
    index: int
    start: int
    end: int
    """Message range [start, end) over the trajectory (system messages excluded)."""
    judged: bool
    attempts: int
    error: str | None = None
    """Why the last failed attempt failed (unreadable reply, or the call's error)."""


class RubricJudgment(Struct, kw_only=True):
    method: str
    passed: bool
    score: float
    """Fraction of rubrics met (no-rubric methods: 1.0 or 0.0)."""
    rubrics: list[RubricResult] = field(default_factory=list)
    windows: int = 0
    unjudged_windows: int = 0
    calls: int = 0
    """Judge replies received (retries included)."""
    usage: Usage = field(default_factory=Usage)
    reasoning: str = ""
    """The overall justification (no-rubric methods)."""
    template: str = "sweepbench"
    """Where the judge prompt came from: "upstream" (data dir) or "sweepbench" (own)."""
    lang: str = "en"
    window_log: list[WindowOutcome] = field(default_factory=list)
    note: str | None = None


# ---- pieces ---------------------------------------------------------------------------------


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


def make_windows(n: int, window: int = 10, overlap: int = 2) -> list[tuple[int, int]]:
    """[start, end) ranges over ``n`` messages; ValueError for a window that cannot slide."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    if not 0 <= overlap < window:
        raise ValueError(f"overlap must be in [0, window), got overlap={overlap}, window={window}")
    if n <= 0:
        return []
    out = []
    start = 0
    while True:
        end = min(start + window, n)
        out.append((start, end))
        if end >= n:
            return out
        start += window - overlap


def _compact_args(arguments: str) -> str:
    try:
        return orjson.dumps(orjson.loads(arguments)).decode()
    except orjson.JSONDecodeError:
        return arguments


def _clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + f" …[{len(text) - limit} more characters]"


def _conversation(messages: list[Any]) -> list[Message]:
    """Wire messages without system messages; dicts (from JSON) are converted first."""
    if messages and not all(isinstance(m, (SystemMessage, UserMessage, AssistantMessage,
                                           ToolMessage)) for m in messages):
        messages = msgspec.convert(messages, list[Message])
    return [m for m in messages if not isinstance(m, SystemMessage)]


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


# ---- the judge ------------------------------------------------------------------------------


class _Session:
    """Calls the judge for one episode: request building, retries, accounting."""

    def __init__(self, call: JudgeCall, *, system: str, lang: str, retries: int,
                 meta: dict[str, Any], temperature: float | None, max_tokens: int | None) -> None:
        self.call = call
        self.system = system
        self.lang = lang
        self.retries = retries
        self.meta = meta
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.calls = 0
        self.usage = Usage()

    async def ask(self, user: str, read: Callable[[str | None], Any], *, window: int,
                  windows: int, method: str, start: int, end: int) -> tuple[Any, WindowOutcome]:
        """``read(reply_text)`` of the first readable reply, or None after all attempts."""
        messages: list[Message] = [SystemMessage(self.system), UserMessage(user)]
        error = None
        attempt = 0
        for attempt in range(1, self.retries + 2):
            req = ChatRequest(model="", messages=list(messages), temperature=self.temperature,
                              max_tokens=self.max_tokens,
                              sweepbench={**self.meta, "role": "judge", "method": method,
                                          "window": window, "windows": windows,
                                          "attempt": attempt - 1})
            try:
                reply = await self.call(req)
            except Exception as exc:  # noqa: BLE001 - the client already retried what it could
                error = f"judge call failed: {type(exc).__name__}: {exc}"
                continue
            self.calls += 1
            self.usage += reply.usage
            text = reply.message.content
            result = read(text)
            if result is not None:
                return result, WindowOutcome(index=window, start=start, end=end, judged=True,
                                             attempts=attempt)
            snippet = (text or "").strip().replace("\n", " ")[:120]
            error = f"unreadable judge reply: {snippet!r}" if snippet else "empty judge reply"
            messages += [AssistantMessage(text or ""), UserMessage(retry_nudge(self.lang))]
        return None, WindowOutcome(index=window, start=start, end=end, judged=False,
                                   attempts=attempt, error=error)


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

    ``call`` sends a ChatRequest to the judge model (the request's ``sweepbench`` field carries
    ``role="judge"``, the method, the window index and count, the attempt, and ``meta``).
    ``lang`` (en/zh) defaults to the task's language; ``data_dir`` supplies the upstream
    templates. Raises ValueError only for bad arguments (method, window, overlap, retries).
    """
    if method not in METHODS:
        raise ValueError(f"unknown judge method {method!r}; known: {', '.join(METHODS)}")
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    make_windows(1, window, overlap)  # validates window and overlap for every method
    lang = lang or task.lang
    lang = lang if lang in ("en", "zh") else "en"
    convo = _conversation(messages)
    sliding = method.startswith("sliding")
    ranges = make_windows(len(convo), window, overlap) if sliding else (
        [(0, len(convo))] if convo else [])
    fields = {"env_info": env_info(task, lang), "user_instruction": task.instructions,
              "window_idx": 1, "total_windows": max(1, len(ranges)), "window_size": window,
              "overlap": overlap}
    _, source = judge_system_prompt(method, lang, data_dir=data_dir, fields=fields)
    result = RubricJudgment(method=method, passed=False, score=0.0, template=source, lang=lang,
                            windows=len(ranges))

    def session_for(k: int) -> _Session:
        system, _ = judge_system_prompt(method, lang, data_dir=data_dir,
                                        fields={**fields, "window_idx": k + 1})
        return _Session(call, system=system, lang=lang, retries=retries, meta=meta or {},
                        temperature=temperature, max_tokens=max_tokens)

    def account(s: _Session, outcome: WindowOutcome) -> None:
        result.calls += s.calls
        result.usage += s.usage
        result.window_log.append(outcome)
        result.unjudged_windows += not outcome.judged

    if method in ("sliding", "full"):
        rubrics = task_rubrics(task)
        if not rubrics:
            result.passed, result.score, result.windows = True, 1.0, 0
            result.note = "task has no rubrics to judge"
            return result
        keys = [f"rubric_{i}" for i in range(len(rubrics))]
        met = [False] * len(rubrics)
        why = [_NOT_JUDGED[lang]] * len(rubrics)
        set_in: list[int | None] = [None] * len(rubrics)

        def read(text: str | None) -> Any:
            verdicts = parse_rubric_verdicts(text, keys, rubrics)
            return verdicts if any(v.met is not None for v in verdicts.values()) else None

        for k, (start, end) in enumerate(ranges):
            states = [{"rubric_idx": keys[i], "rubric": rubrics[i], "justification": why[i],
                       "meetExpectation": met[i]} for i in range(len(rubrics))]
            user = judge_user_prompt(
                method, rubrics=states,
                content=render_trajectory(convo, start, end, max_message_chars=max_message_chars))
            s = session_for(k)
            verdicts, outcome = await s.ask(user, read, window=k, windows=len(ranges),
                                            method=method, start=start, end=end)
            account(s, outcome)
            for i, v in (verdicts or {}).items():
                if v.reasoning.strip():
                    why[i] = v.reasoning
                if v.met is not None and v.met != met[i]:
                    met[i], set_in[i] = v.met, k
        result.rubrics = [RubricResult(rubric=r, met=met[i],
                                       reasoning="" if why[i] == _NOT_JUDGED[lang] else why[i],
                                       window=set_in[i]) for i, r in enumerate(rubrics)]
        result.score = sum(met) / len(met)
        result.passed = all(met)
        if not convo:
            result.note = "empty trajectory: nothing to judge"
        return result

    # the no-rubric variants: one verdict, carried (with the judge's memory) across windows
    verdict, reasoning, memory = False, _NOT_JUDGED[lang], ""
    for k, (start, end) in enumerate(ranges):
        user = judge_user_prompt(
            method, content=render_trajectory(convo, start, end,
                                              max_message_chars=max_message_chars),
            memory=memory, evaluation={"justification": reasoning, "meetExpectation": verdict})
        s = session_for(k)
        overall, outcome = await s.ask(user, parse_overall_verdict, window=k,
                                       windows=len(ranges), method=method, start=start, end=end)
        account(s, outcome)
        if overall is not None:
            verdict = overall.met
            reasoning = overall.reasoning or reasoning
            memory = overall.memory if overall.memory is not None else memory
    result.passed = verdict
    result.score = 1.0 if verdict else 0.0
    result.reasoning = "" if reasoning == _NOT_JUDGED[lang] else reasoning
    if not convo:
        result.note = "empty trajectory: nothing to judge"
    return result
