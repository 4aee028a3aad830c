"""One episode: agent <-> user <-> tools, until someone (or a limit) ends it.

No I/O happens here: the agent and the user are callables that return a model reply (the
runner's callers journal model calls), and every tool call is reported to ``on_event``. The
conversation is append-only, so consecutive agent requests share a byte-identical prefix
(provider prompt caches hit). The user simulator sees the same conversation mirrored: the
agent's words as ``user``, its own as ``assistant``, and no tool traffic. What differs between
benchmarks (prompts, greeting and who sees it, request fields, limits and how steps count,
which replies are valid, what stops an episode) is the :class:`EpisodeProtocol`'s.
"""

from __future__ import annotations

import time
from typing import Any, Awaitable, Callable, Protocol

import msgspec

from sweepbench.datasets.task import Task
from sweepbench.errors import ContextLengthError, TaskError
from sweepbench.ids import TerminationReason
from sweepbench.simulator.prompts import (
    STOP,
    agent_greeting,
    agent_system_prompt,
    user_system_prompt,
)
from sweepbench.tools.base import Toolkit
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    Message,
    SystemMessage,
    ToolMessage,
    Usage,
    UserMessage,
)


class ModelReply(Protocol):
    message: AssistantMessage
    usage: Usage
    latency_s: float


ModelCall = Callable[[ChatRequest], Awaitable[ModelReply]]
EventSink = Callable[[str, dict[str, Any]], None]


MAX_TOOL_CALLS_PER_MESSAGE = 64
"""Tool calls one agent reply may ask for. Models ask for a handful; a reply asking for
thousands would have each answered and re-sent in every later request (10,000 calls grew
request bodies to 10 MB in five turns), so the episode ends there instead."""


class EpisodeLimits:
    """Bounds that end an episode; None switches a bound off.

    ``max_turns`` counts exchanges with the user, ``max_agent_steps_per_turn`` agent replies
    between two user messages, ``max_tool_errors`` failed tool calls tolerated (the episode
    ends after the batch of results that exceeds it, before the agent is asked again).
    ``max_steps`` counts messages as VitaBench's upstream does: each user message, each agent
    message and each batch of tool results is one step (the opening greeting is none); the
    check runs after every step and wins over a stop said in that same step, while a batch
    that exhausts both budgets ends as too many errors (upstream checks errors last).
    ``token_limit`` bounds the agent's tokens (prompt + completion summed over its calls),
    checked after each agent reply; ``time_limit_s`` the episode's wall-clock seconds,
    checked before each model call, so a call in flight is never cut (its usage is
    journaled like any other's). Either ends the episode as a failure.
    ``max_tool_calls_per_message``: an agent reply asking for more ends the episode as
    ``too_many_tool_calls`` before any of them runs (a failure, with the count as its error).
    """

    def __init__(self, *, max_turns: int | None = 30, max_agent_steps_per_turn: int | None = 40,
                 max_tool_errors: int | None = 10, max_steps: int | None = None,
                 token_limit: int | None = None, time_limit_s: float | None = None,
                 max_tool_calls_per_message: int | None = MAX_TOOL_CALLS_PER_MESSAGE) -> None:
        self.max_turns = max_turns
        self.max_agent_steps_per_turn = max_agent_steps_per_turn
        self.max_tool_errors = max_tool_errors
        self.max_steps = max_steps
        self.token_limit = token_limit
        self.time_limit_s = time_limit_s
        self.max_tool_calls_per_message = max_tool_calls_per_message


class EpisodeResult:
    """What an episode produced, before judging."""

    def __init__(self) -> None:
        self.termination: TerminationReason = TerminationReason.ERROR
        self.messages: list[Message] = []
        self.agent_usage = Usage()
        self.user_usage = Usage()
        self.agent_calls = 0
        self.user_calls = 0
        self.tool_calls = 0
        self.tool_errors = 0
        self.turns = 0
        self.steps = 0
        self.wall_s = 0.0
        self.error: str | None = None
        self.final_state: dict[str, Any] | None = None


def history_messages(task: Task) -> list[Message]:
    """The task's ``message_history`` as wire messages (system messages dropped: each side
    gets its own system prompt); a malformed history is a TaskError naming the task."""
    if not task.message_history:
        return []
    try:
        messages = msgspec.convert(task.message_history, list[Message])
    except msgspec.ValidationError as exc:
        raise TaskError(f"task {task.id}: message_history is malformed: {exc}") from None
    return [m for m in messages if not isinstance(m, SystemMessage)]


def mirrored(agent_view: list[Message]) -> list[Message]:
    """The user simulator's view of the conversation: roles swapped, no tool traffic."""
    out: list[Message] = []
    for m in agent_view:
        if isinstance(m, UserMessage):
            out.append(AssistantMessage(m.content))
        elif isinstance(m, AssistantMessage) and m.content:
            out.append(UserMessage(m.content))
    return out


class EpisodeFailed(Exception):
    """Raised by a model call that failed for good; ends the episode with ``reason``."""

    def __init__(self, message: str,
                 reason: TerminationReason = TerminationReason.ERROR) -> None:
        super().__init__(message)
        self.reason = reason


class EpisodeContext:
    """What a protocol hook may see and do during an episode."""

    def __init__(self, task: Task, state: Any, agent_msgs: list[Message], user_msgs: list[Message],
                 ask: Callable[[str, list[Message]], Awaitable[AssistantMessage]]) -> None:
        self.task, self.state = task, state
        self.agent_msgs, self.user_msgs = agent_msgs, user_msgs
        self.ask = ask  # ask(role, messages): one call to the referee model (no tools)
        self.agent_started = False  # once true, agent messages may only be appended

    def user_texts(self) -> list[str]:
        return [m.content for m in self.agent_msgs if isinstance(m, UserMessage)]


class EpisodeProtocol:
    """A benchmark's conventions for an episode: prompts, limits, and hooks between turns.

    The default is a plain conversation: the project's own prompts and greeting (which the
    agent sees as its own first message), requests with no parameters of their own, tool
    results without tool names, every agent reply accepted, and the agent's ``###STOP###``
    ending the episode only in a reply without tool calls. A protocol object belongs to one
    episode (it may keep per-episode state).

    A ``solo`` protocol has a user who speaks once (its prompt says to give the whole
    instruction at once): an agent reply with text and no stop ends the episode
    (``agent_done``), as nobody would answer it.
    """

    solo = False
    agent_sees_greeting = True
    """False: the greeting opens the user's and the judge's view, not the agent's."""
    agent_attempts = 1
    """Tries per agent reply; replies ``valid_agent_reply`` refuses are dropped unseen, and
    the episode ends with ``invalid_agent_message`` when every try was refused."""
    name_tool_results = False
    """Tool results carry the name of the tool that produced them."""

    def limits(self, task: Task, *, max_turns: int | None = None, max_tool_errors: int = 10,
               max_steps: int | None = None) -> EpisodeLimits:
        """The episode's bounds from the sweep's settings (None: the benchmark's default)."""
        return EpisodeLimits(max_turns=max_turns or task.max_turns,
                             max_tool_errors=max_tool_errors, max_steps=max_steps)

    def greeting(self, ctx: EpisodeContext) -> str | None:
        """The agent's opening line (None: the user speaks first)."""
        return agent_greeting(ctx.task)

    def agent_system_prompt(self, ctx: EpisodeContext) -> str:
        """Built just before the agent's first call, so a hook may shape it first."""
        return agent_system_prompt(ctx.task)

    def user_system_prompt(self, ctx: EpisodeContext) -> str:
        return user_system_prompt(ctx.task)

    def request_params(self, role: str, *, with_tools: bool) -> dict[str, Any]:
        """Request fields for ``role``'s calls (e.g. temperature, tool_choice)."""
        return {}

    def valid_agent_reply(self, msg: AssistantMessage) -> bool:
        return True

    def agent_history_message(self, msg: AssistantMessage) -> AssistantMessage:
        """How an agent reply is written into the conversation the agent sees next."""
        return msg

    def user_stops(self, text: str) -> bool:
        return STOP in text

    def agent_stops(self, msg: AssistantMessage) -> bool:
        return not msg.tool_calls and STOP in (msg.content or "")

    async def after_user_message(self, ctx: EpisodeContext, text: str) -> "TerminationReason | None":
        """Runs after each user message, before the agent answers; may end the episode."""
        return None


async def run_episode(
    task: Task,
    *,
    agent: ModelCall,
    user: ModelCall,
    toolkit: Toolkit,
    state: Any,
    final_state: Callable[[Any], dict[str, Any]],
    tool_descriptions: dict[str, dict] | None = None,
    limits: EpisodeLimits | None = None,
    meta: dict[str, Any] | None = None,
    on_event: EventSink | None = None,
    protocol: EpisodeProtocol | None = None,
    referee: ModelCall | None = None,
    request_params: dict[str, dict[str, Any]] | None = None,
) -> EpisodeResult:
    """Run one episode of ``task``; never raises for model or tool misbehaviour.

    ``referee`` answers the protocol's own calls (T1's domain classifier and exit check);
    it defaults to the user-simulator model, and its calls count with the user's.
    ``request_params`` ({role: {field: value}}) override the protocol's request fields
    (an endpoint's own settings). ``limits`` default to the protocol's.
    """
    protocol = protocol or EpisodeProtocol()
    limits = limits or protocol.limits(task)
    referee = referee or user
    emit = on_event or (lambda kind, payload: None)
    meta = {**(meta or {}), **({"solo": True} if protocol.solo else {})}
    overrides = request_params or {}
    res = EpisodeResult()
    started = time.perf_counter()
    tools = toolkit.specs(tool_descriptions)
    history = history_messages(task)  # a task may start mid-conversation
    agent_msgs: list[Message] = list(history)
    user_msgs: list[Message] = mirrored(history)  # system prompts come lazily
    res.messages = agent_msgs

    async def call(role: str, fn: ModelCall, messages: list[Message], with_tools: bool) -> AssistantMessage:
        elapsed = time.perf_counter() - started
        if limits.time_limit_s is not None and elapsed >= limits.time_limit_s:
            raise EpisodeFailed(f"the episode ran {elapsed:.3g} s, past its time limit of "
                                f"{limits.time_limit_s:g} s", TerminationReason.TIME_LIMIT)
        params = {**protocol.request_params(role, with_tools=with_tools),
                  **overrides.get(role, {})}
        req = ChatRequest(model="", messages=messages[:], tools=tools if with_tools else None,
                          sweepbench={**meta, "role": role}, **params)
        try:
            reply = await fn(req)
        except ContextLengthError as exc:  # never retried: the prompt only grows
            raise EpisodeFailed(f"{role} model call failed: {exc}",
                                TerminationReason.CONTEXT_OVERFLOW) from exc
        except Exception as exc:  # the model client already retried what was retryable
            raise EpisodeFailed(f"{role} model call failed: {exc}") from exc
        if role == "agent":
            res.agent_usage += reply.usage
            res.agent_calls += 1
        else:
            res.user_usage += reply.usage
            res.user_calls += 1
        if getattr(reply, "truncated", False):  # cut short: not an answer to act on
            if role == "agent":
                messages.append(reply.message)  # the record shows where it stopped
            raise EpisodeFailed(f"{role} reply cut short (finish_reason "
                                f"{reply.finish_reason!r})", TerminationReason.TRUNCATED)
        used = res.agent_usage.prompt_tokens + res.agent_usage.completion_tokens
        if role == "agent" and limits.token_limit is not None and used > limits.token_limit:
            messages.append(reply.message)  # the record shows the reply that went over
            raise EpisodeFailed(f"the agent used {used} tokens, past its token limit of "
                                f"{limits.token_limit}", TerminationReason.TOKEN_LIMIT)
        return reply.message

    async def ask(role: str, messages: list[Message]) -> AssistantMessage:
        return await call(role, referee, messages, False)

    ctx = EpisodeContext(task, state, agent_msgs, user_msgs, ask)
    user_msgs.insert(0, SystemMessage(protocol.user_system_prompt(ctx)))
    opening: list[Message] = []
    if not history and (greeting := protocol.greeting(ctx)) is not None:
        opening = [AssistantMessage(greeting)]
        user_msgs.append(UserMessage(greeting))
        if protocol.agent_sees_greeting:
            agent_msgs += opening
            opening = []

    def step_limit() -> bool:
        """One more step; True when that used up the episode's step budget."""
        res.steps += 1
        return limits.max_steps is not None and res.steps >= limits.max_steps

    async def agent_reply() -> AssistantMessage | None:
        for _ in range(max(1, protocol.agent_attempts)):
            msg = await call("agent", agent, agent_msgs, True)
            if protocol.valid_agent_reply(msg):
                return protocol.agent_history_message(msg)
        return None

    async def agent_turn() -> TerminationReason | None:
        """Agent steps until it speaks to the user; a termination reason ends the episode."""
        if not ctx.agent_started:
            agent_msgs.insert(0, SystemMessage(protocol.agent_system_prompt(ctx)))
            ctx.agent_started = True
        n = 0
        while limits.max_agent_steps_per_turn is None or n < limits.max_agent_steps_per_turn:
            n += 1
            msg = await agent_reply()
            if msg is None:
                return TerminationReason.INVALID_AGENT_MESSAGE
            agent_msgs.append(msg)
            stops = protocol.agent_stops(msg)
            if step_limit():
                return TerminationReason.MAX_STEPS
            if stops:
                return TerminationReason.AGENT_STOP
            if not msg.tool_calls:
                text = msg.content or ""
                user_msgs.append(UserMessage(text))
                # solo: nobody would answer, so a reply to the user ends the work
                return TerminationReason.AGENT_DONE if protocol.solo else None
            cap = limits.max_tool_calls_per_message
            if cap is not None and len(msg.tool_calls) > cap:
                raise EpisodeFailed(f"the agent asked for {len(msg.tool_calls)} tool calls in one "
                                    f"message (at most {cap}); none were run",
                                    TerminationReason.TOO_MANY_TOOL_CALLS)
            for tc in msg.tool_calls:
                outcome = toolkit.call(state, tc.function.name, tc.function.arguments)
                res.tool_calls += 1
                res.tool_errors += not outcome.ok
                name = tc.function.name if protocol.name_tool_results else None
                agent_msgs.append(ToolMessage(tc.id, outcome.content, name))
                emit("tool_call", {"name": tc.function.name, "arguments": tc.function.arguments,
                                   "ok": outcome.ok, "result": outcome.content})
            out_of_steps = step_limit()
            if limits.max_tool_errors is not None and res.tool_errors > limits.max_tool_errors:
                return TerminationReason.TOO_MANY_ERRORS
            if out_of_steps:
                return TerminationReason.MAX_STEPS
        return TerminationReason.MAX_TURNS

    async def conversation() -> TerminationReason:
        """User and agent take turns until one of them, or a limit, ends it."""
        while True:
            text = (await call("user", user, user_msgs, False)).content or ""
            user_msgs.append(AssistantMessage(text))
            agent_msgs.append(UserMessage(text))
            stops = protocol.user_stops(text)
            if step_limit():
                return TerminationReason.MAX_STEPS
            if stops:
                return TerminationReason.USER_STOP
            res.turns += 1
            if limits.max_turns is not None and res.turns > limits.max_turns:
                return TerminationReason.MAX_TURNS
            ended = await protocol.after_user_message(ctx, text) or await agent_turn()
            if ended is not None:
                return ended

    try:
        res.termination = await conversation()
    except EpisodeFailed as exc:
        res.termination = exc.reason
        res.error = str(exc)
    if not ctx.agent_started:  # the record always starts with the agent's system prompt
        agent_msgs.insert(0, SystemMessage(protocol.agent_system_prompt(ctx)))
    if opening:  # the record is the whole conversation: the greeting the agent did not see too
        res.messages = agent_msgs[:1] + opening + agent_msgs[1:]
    res.final_state = final_state(state)
    res.wall_s = time.perf_counter() - started
    return res
