"""One episode: agent <-> user <-> tools, until someone ends it.

No I/O happens here: the agent and the user are callables that return a model reply (the
runner's callers journal model calls), and every tool call is reported to ``on_event``. The conversation is
append-only, so consecutive agent requests share a byte-identical prefix (provider prompt
caches hit). The user simulator sees the same conversation mirrored: the agent's words as
``user``, its own as ``assistant``, and no tool traffic.
"""

from __future__ import annotations

import time
from enum import StrEnum
from typing import Any, Awaitable, Callable, Protocol

from ..datasets.task import Task
from ..tools.base import Toolkit
from ..wire import (
    AssistantMessage,
    ChatRequest,
    Message,
    SystemMessage,
    ToolMessage,
    Usage,
    UserMessage,
)
from .prompts import STOP, agent_greeting, agent_system_prompt, user_system_prompt


class TerminationReason(StrEnum):
    USER_STOP = "user_stop"
    AGENT_STOP = "agent_stop"
    MAX_TURNS = "max_turns"
    TOO_MANY_ERRORS = "too_many_errors"
    ERROR = "error"  # a model call failed for good, or the episode could not run


class ModelReply(Protocol):
    message: AssistantMessage
    usage: Usage
    latency_s: float


ModelCall = Callable[[ChatRequest], Awaitable[ModelReply]]
EventSink = Callable[[str, dict[str, Any]], None]


class EpisodeLimits:
    """Bounds that end an episode: exchanges with the user, agent steps, tool errors."""

    def __init__(self, *, max_turns: int = 30, max_agent_steps_per_turn: int = 20,
                 max_tool_errors: int = 10) -> None:
        self.max_turns = max_turns
        self.max_agent_steps_per_turn = max_agent_steps_per_turn
        self.max_tool_errors = max_tool_errors


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
        self.wall_s = 0.0
        self.error: str | None = None
        self.final_state: dict[str, Any] | None = None


class EpisodeFailed(Exception):
    """Raised by a model call that failed for good; ends the episode with ERROR."""


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
) -> EpisodeResult:
    """Run one episode of ``task``; never raises for model or tool misbehaviour."""
    limits = limits or EpisodeLimits(max_turns=task.max_turns)
    emit = on_event or (lambda kind, payload: None)
    meta = meta or {}
    res = EpisodeResult()
    started = time.perf_counter()
    tools = toolkit.specs(tool_descriptions)
    greeting = agent_greeting(task)
    agent_msgs: list[Message] = [SystemMessage(agent_system_prompt(task)), AssistantMessage(greeting)]
    user_msgs: list[Message] = [SystemMessage(user_system_prompt(task)), UserMessage(greeting)]
    res.messages = agent_msgs

    async def call(role: str, fn: ModelCall, messages: list[Message], with_tools: bool) -> AssistantMessage:
        req = ChatRequest(model="", messages=messages[:], tools=tools if with_tools else None,
                          sweepbench={**meta, "role": role})
        try:
            reply = await fn(req)
        except Exception as exc:  # the model client already retried what was retryable
            raise EpisodeFailed(f"{role} model call failed: {exc}") from exc
        if role == "agent":
            res.agent_usage += reply.usage
            res.agent_calls += 1
        else:
            res.user_usage += reply.usage
            res.user_calls += 1
        return reply.message

    async def agent_turn() -> TerminationReason | None:
        """Agent steps until it speaks to the user; a termination reason ends the episode."""
        for _ in range(limits.max_agent_steps_per_turn):
            msg = await call("agent", agent, agent_msgs, True)
            agent_msgs.append(msg)
            if not msg.tool_calls:
                text = msg.content or ""
                user_msgs.append(UserMessage(text))
                return TerminationReason.AGENT_STOP if STOP in text else None
            for tc in msg.tool_calls:
                outcome = toolkit.call(state, tc.function.name, tc.function.arguments)
                res.tool_calls += 1
                res.tool_errors += not outcome.ok
                agent_msgs.append(ToolMessage(tc.id, outcome.content))
                emit("tool_call", {"name": tc.function.name, "arguments": tc.function.arguments,
                                   "ok": outcome.ok, "result": outcome.content})
            if res.tool_errors > limits.max_tool_errors:
                return TerminationReason.TOO_MANY_ERRORS
        return TerminationReason.MAX_TURNS

    try:
        while True:
            text = (await call("user", user, user_msgs, False)).content or ""
            user_msgs.append(AssistantMessage(text))
            agent_msgs.append(UserMessage(text))
            if STOP in text:
                res.termination = TerminationReason.USER_STOP
                break
            res.turns += 1
            if res.turns > limits.max_turns:
                res.termination = TerminationReason.MAX_TURNS
                break
            ended = await agent_turn()
            if ended is not None:
                res.termination = ended
                break
    except EpisodeFailed as exc:
        res.termination = TerminationReason.ERROR
        res.error = str(exc)
    res.final_state = final_state(state)
    res.wall_s = time.perf_counter() - started
    return res
