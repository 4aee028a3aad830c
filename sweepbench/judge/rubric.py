"""The rubric judge engine: sliding windows over a trajectory, rubric states carried between
windows, retries of unreadable replies (the VitaBench paper's §3.3 judge, Appendix E, and its
Table 5 variants). What the judge reads (rubrics, prompts, how a trajectory is rendered) comes
from the benchmark as a :class:`RubricPrompts`; the engine only decides what to ask when.

**Windows** are ``window`` consecutive messages, the next starting ``window - overlap`` later,
the last one ending at the last message (25 messages, w=10, δ=2: [0,10), [8,18), [16,25)); a
trajectory of at most ``window`` messages is one window; an empty one has none. As upstream,
windows count messages, not user/agent exchanges.

**State** is one entry per rubric (``rubric_idx``, ``rubric``, ``justification``,
``meetExpectation``), false and not judged at first, carried from window to window: the judge
sees the entries as it last wrote them and answers with updates. How a reply is read, and how
a written verdict becomes met or not, is the benchmark's (``RubricPrompts.read_rubrics`` /
``read_overall`` / ``met``); :class:`LenientReading` is a forgiving default (matching by
key, text or position, see :mod:`sweepbench.judge.parsing`). A rubric a reply does not
update keeps its entry.

**Recovery**: a reply the benchmark cannot read is retried up to ``retries`` times with a
short note asking for the JSON; a model call that raises counts as a failed attempt too. A
window still unreadable after that is recorded as unjudged, the entries keep their previous
values, and the judgment says how many windows were unjudged. A judgment with any unjudged
window has no verdict (``passed`` and ``score`` None, ``unjudged`` says why): a window the
judge never read could have changed every rubric, so its carried-over "not met" is not a 0.
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
from typing import Any, NamedTuple, Protocol

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
    "KEEP",
    "METHODS",
    "JudgeReply",
    "LenientReading",
    "OverallUpdate",
    "RubricJudgment",
    "RubricPrompts",
    "RubricResult",
    "RubricUpdate",
    "WindowOutcome",
    "make_windows",
    "run_rubric_judge",
]

METHODS = ("sliding", "full", "sliding_no_rubrics", "full_no_rubrics")
KEEP: Any = msgspec.UNSET
"""In an update: leave this part of the carried state as it is."""


class JudgeReply(Protocol):
    message: AssistantMessage
    usage: Usage


JudgeCall = Callable[[ChatRequest], Awaitable[JudgeReply]]


class RubricUpdate(NamedTuple):
    """What one reply says of one rubric: its justification and its verdict as written."""

    justification: Any = KEEP
    verdict: Any = KEEP


class OverallUpdate(NamedTuple):
    """What one reply of a no-rubric method says: the new evaluation (``{"justification",
    "meetExpectation", ...}``, KEEP: unchanged) and the new memory (sliding)."""

    evaluation: Any = KEEP
    memory: Any = KEEP


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
    passed: bool | None
    """None: unjudged (see ``unjudged``)."""
    score: float | None
    """Fraction of rubrics met (no-rubric methods: 1.0 or 0.0); None: unjudged."""
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
    unjudged: str | None = None
    """Why there is no verdict: the windows the judge never answered readably, and the last
    failure; None when every window was judged."""

    def finish(self) -> RubricJudgment:
        """No verdict when any window went unjudged."""
        if self.unjudged_windows:
            last = next(o.error for o in reversed(self.window_log) if not o.judged)
            self.passed = self.score = None
            self.unjudged = (f"no readable judge output in {self.unjudged_windows} of "
                             f"{self.windows} window(s): {last}")
        return self


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
    """What a benchmark supplies to the engine: its rubrics, the words of its prompts, and how
    it reads the judge's replies."""

    lang: str
    source: str
    """Where the prompts come from (e.g. "upstream" templates or the project's own)."""
    rubrics: list[str]
    not_judged: str
    """The justification a rubric shows before any window has judged it."""

    def system(self, method: str, window_idx: int, total_windows: int) -> str:
        """The judge's system prompt for window ``window_idx`` (1-based) of ``total_windows``."""

    def user(self, method: str, *, content: str, rubrics: list[dict[str, Any]] | None = None,
             memory: Any = "", evaluation: dict[str, Any] | None = None) -> str:
        """The judge's input: the rendered window and the state carried so far."""

    def render(self, convo: list[Message], start: int, end: int) -> str:
        """``convo[start:end]`` as the judge reads it (numbering global across windows)."""

    def retry_nudge(self) -> str:
        """Appended after an unreadable reply before asking again."""

    def read_rubrics(self, text: str | None, keys: list[str]) -> dict[int, RubricUpdate] | None:
        """Updates by rubric position from one reply ({}: none); None: the reply is unreadable."""

    def read_overall(self, method: str, text: str | None) -> OverallUpdate | None:
        """The update of a no-rubric method's reply; None: unreadable."""

    def met(self, verdict: Any) -> bool:
        """Whether a verdict as the judge wrote it (carried in the state) means met."""


class LenientReading:
    """A forgiving way to read replies (:mod:`sweepbench.judge.parsing`): entries matched by
    key, rubric text or position; verdicts as booleans; a reply without any verdict is
    unreadable. For benchmarks that have no reading rules of their own."""

    rubrics: list[str]

    def read_rubrics(self, text: str | None, keys: list[str]) -> dict[int, RubricUpdate] | None:
        verdicts = parse_rubric_verdicts(text, keys, self.rubrics)
        if not any(v.met is not None for v in verdicts.values()):
            return None
        return {i: RubricUpdate(v.reasoning if v.reasoning.strip() else KEEP,
                                KEEP if v.met is None else v.met) for i, v in verdicts.items()}

    def read_overall(self, method: str, text: str | None) -> OverallUpdate | None:
        verdict = parse_overall_verdict(text)
        if verdict is None:
            return None
        evaluation = {"justification": verdict.reasoning, "meetExpectation": verdict.met}
        return OverallUpdate(evaluation, KEEP if verdict.memory is None else verdict.memory)

    def met(self, verdict: Any) -> bool:
        return verdict is True


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
        states = [{"rubric_idx": keys[i], "rubric": rubrics[i], "justification": not_judged,
                   "meetExpectation": False} for i in range(len(rubrics))]
        set_in: list[int | None] = [None] * len(rubrics)

        for k, (start, end) in enumerate(ranges):
            user = prompts.user(method, rubrics=[dict(st) for st in states],
                                content=prompts.render(convo, start, end))
            s = session_for(k)
            updates, outcome = await s.ask(user, lambda text: prompts.read_rubrics(text, keys),
                                           window=k, windows=len(ranges), method=method,
                                           start=start, end=end)
            account(s, outcome)
            for i, update in (updates or {}).items():
                if update.justification is not KEEP:
                    states[i]["justification"] = update.justification
                if update.verdict is not KEEP:
                    before = prompts.met(states[i]["meetExpectation"])
                    states[i]["meetExpectation"] = update.verdict
                    if prompts.met(update.verdict) != before:
                        set_in[i] = k
        met = [prompts.met(st["meetExpectation"]) for st in states]
        result.rubrics = [RubricResult(rubric=r, met=met[i],
                                       reasoning=_reason(states[i]["justification"], not_judged),
                                       window=set_in[i]) for i, r in enumerate(rubrics)]
        result.score = sum(met) / len(met)
        result.passed = all(met)
        if not convo:
            result.note = "empty trajectory: nothing to judge"
        return result.finish()

    # the no-rubric variants: one evaluation, carried (with the judge's memory) across windows
    evaluation: dict[str, Any] = {"justification": not_judged, "meetExpectation": False}
    memory: Any = ""
    for k, (start, end) in enumerate(ranges):
        user = prompts.user(method, content=prompts.render(convo, start, end), memory=memory,
                            evaluation=evaluation)
        s = session_for(k)
        overall, outcome = await s.ask(user, lambda text: prompts.read_overall(method, text),
                                       window=k, windows=len(ranges), method=method,
                                       start=start, end=end)
        account(s, outcome)
        if overall is not None:
            if overall.evaluation is not KEEP:
                evaluation = overall.evaluation
            if overall.memory is not KEEP:
                memory = overall.memory
    verdict = prompts.met(evaluation.get("meetExpectation"))
    result.passed = verdict
    result.score = 1.0 if verdict else 0.0
    result.reasoning = _reason(evaluation.get("justification"), not_judged)
    if not convo:
        result.note = "empty trajectory: nothing to judge"
    return result.finish()


def _reason(justification: Any, not_judged: str) -> str:
    if justification is None or justification == not_judged:
        return ""
    return justification if isinstance(justification, str) else str(justification)
