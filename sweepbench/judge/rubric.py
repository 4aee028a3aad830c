"""The rubric judge engine: sliding windows over a trajectory, rubric states carried between
windows, retries of unreadable replies (the VitaBench paper's §3.3 judge, Appendix E, and its
Table 5 variants). What the judge reads (rubrics, prompts, how a trajectory is rendered) comes
from the benchmark as a :class:`RubricPrompts`; the engine only decides what to ask when.

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

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import msgspec
from msgspec import Struct, field

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
    "RubricPrompts",
    "RubricResult",
    "WindowOutcome",
    "make_windows",
    "run_rubric_judge",
]

METHODS = ("sliding", "full", "sliding_no_rubrics", "full_no_rubrics")


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


def _conversation(messages: list[Any]) -> list[Message]:
    """Wire messages without system messages; dicts (from JSON) are converted first."""
    if messages and not all(isinstance(m, (SystemMessage, UserMessage, AssistantMessage,
                                           ToolMessage)) for m in messages):
        messages = msgspec.convert(messages, list[Message])
    return [m for m in messages if not isinstance(m, SystemMessage)]


# ---- the judge ------------------------------------------------------------------------------


class _Session:
    """Calls the judge for one episode: request building, retries, accounting."""

    def __init__(self, call: JudgeCall, *, system: str, nudge: str, retries: int,
                 meta: dict[str, Any], temperature: float | None, max_tokens: int | None) -> None:
        self.call = call
        self.system = system
        self.nudge = nudge
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
            messages += [AssistantMessage(text or ""), UserMessage(self.nudge)]
        return None, WindowOutcome(index=window, start=start, end=end, judged=False,
                                   attempts=attempt, error=error)


class RubricPrompts(Protocol):
    """What a benchmark supplies to the engine: its rubrics and the words of its prompts."""

    lang: str
    source: str
    """Where the prompts come from (e.g. "upstream" templates or the project's own)."""
    rubrics: list[str]
    not_judged: str
    """The justification a rubric shows before any window has judged it."""

    def system(self, method: str, window_idx: int, total_windows: int) -> str:
        """The judge's system prompt for window ``window_idx`` (1-based) of ``total_windows``."""

    def user(self, method: str, *, content: str, rubrics: list[dict[str, Any]] | None = None,
             memory: str | None = None, evaluation: dict[str, Any] | None = None) -> str:
        """The judge's input: the rendered window and the state carried so far."""

    def render(self, convo: list[Message], start: int, end: int) -> str:
        """``convo[start:end]`` as the judge reads it (numbering global across windows)."""

    def retry_nudge(self) -> str:
        """Appended after an unreadable reply before asking again."""


async def run_rubric_judge(
    prompts: RubricPrompts,
    messages: list[Message],
    *,
    call: JudgeCall,
    method: str = "sliding",
    window: int = 10,
    overlap: int = 2,
    retries: int = 2,
    meta: dict[str, Any] | None = None,
    temperature: float | None = 0.0,
    max_tokens: int | None = None,
) -> RubricJudgment:
    """Judge one trajectory against ``prompts.rubrics`` with ``method``.

    ``call`` sends a ChatRequest to the judge model (the request's ``sweepbench`` field carries
    ``role="judge"``, the method, the window index and count, the attempt, and ``meta``).
    Raises ValueError only for bad arguments (method, window, overlap, retries).
    """
    if method not in METHODS:
        raise ValueError(f"unknown judge method {method!r}; known: {', '.join(METHODS)}")
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    make_windows(1, window, overlap)  # validates window and overlap for every method
    lang, not_judged = prompts.lang, prompts.not_judged
    convo = _conversation(messages)
    sliding = method.startswith("sliding")
    ranges = make_windows(len(convo), window, overlap) if sliding else (
        [(0, len(convo))] if convo else [])
    result = RubricJudgment(method=method, passed=False, score=0.0, template=prompts.source,
                            lang=lang, windows=len(ranges))

    def session_for(k: int) -> _Session:
        return _Session(call, system=prompts.system(method, k + 1, max(1, len(ranges))),
                        nudge=prompts.retry_nudge(), retries=retries, meta=meta or {},
                        temperature=temperature, max_tokens=max_tokens)

    def account(s: _Session, outcome: WindowOutcome) -> None:
        result.calls += s.calls
        result.usage += s.usage
        result.window_log.append(outcome)
        result.unjudged_windows += not outcome.judged

    if method in ("sliding", "full"):
        rubrics = prompts.rubrics
        if not rubrics:
            result.passed, result.score, result.windows = True, 1.0, 0
            result.note = "task has no rubrics to judge"
            return result
        keys = [f"rubric_{i}" for i in range(len(rubrics))]
        met = [False] * len(rubrics)
        why = [not_judged] * len(rubrics)
        set_in: list[int | None] = [None] * len(rubrics)

        def read(text: str | None) -> Any:
            verdicts = parse_rubric_verdicts(text, keys, rubrics)
            return verdicts if any(v.met is not None for v in verdicts.values()) else None

        for k, (start, end) in enumerate(ranges):
            states = [{"rubric_idx": keys[i], "rubric": rubrics[i], "justification": why[i],
                       "meetExpectation": met[i]} for i in range(len(rubrics))]
            user = prompts.user(method, rubrics=states, content=prompts.render(convo, start, end))
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
                                       reasoning="" if why[i] == not_judged else why[i],
                                       window=set_in[i]) for i, r in enumerate(rubrics)]
        result.score = sum(met) / len(met)
        result.passed = all(met)
        if not convo:
            result.note = "empty trajectory: nothing to judge"
        return result

    # the no-rubric variants: one verdict, carried (with the judge's memory) across windows
    verdict, reasoning, memory = False, not_judged, ""
    for k, (start, end) in enumerate(ranges):
        user = prompts.user(method, content=prompts.render(convo, start, end), memory=memory,
                            evaluation={"justification": reasoning, "meetExpectation": verdict})
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
    result.reasoning = "" if reasoning == not_judged else reasoning
    if not convo:
        result.note = "empty trajectory: nothing to judge"
    return result
