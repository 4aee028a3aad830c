"""The VitaBench episode as upstream runs it (meituan-longcat/vitabench, its orchestrator).

- The conversation opens with upstream's greeting, which the user simulator and the judge
  see and the agent does not: the agent's first request is its system prompt and the user's
  first words.
- Requests: temperature 0.0 for agent and user, ``tool_choice: "auto"`` with the tools (an
  endpoint's own settings override these).
- The agent's earlier tool calls are shown to it as upstream re-sends them: the arguments
  parsed and written again by Python's ``json.dumps`` (``{"keywords": ["\\u5976\\u8336"]}``);
  tool results carry the tool's name.
- Steps: every message is one step except an agent message with tool calls and its results,
  which are two; the episode ends at ``max_steps`` (300), checked after each step and winning
  over a stop in that step. No turn limit (unless configured).
- Tool errors (the updated release, ``Release.tool_errors_count``): each tool message flagged
  as an error counts, and the episode ends as ``too_many_errors`` right after the tool step
  whose failures bring the count to ``max_errors`` (10), before the agent is asked again
  (when that step also reaches ``max_steps``, too many errors wins: upstream checks it last).
  The November release has no error budget.
- Tool calls per reply: at most 64 (sweepbench's own cap, as for every benchmark; upstream
  has none, and no upstream task comes near it); a reply asking for more ends the episode
  as ``too_many_tool_calls``, none of its calls run, scored 0 without judging.
- Reasoning (the updated release, ``Release.resend_reasoning``): every agent request sends
  each earlier assistant message's reasoning text back on it, as ``reasoning_content``; the
  user simulator and the judge never see it. Upstream re-sends only what a reply carried as
  ``reasoning_content``; sweepbench stores a reply's reasoning whichever field held it
  (``reasoning``, thinking blocks too) and sends that.
- An agent reply with neither text nor tool calls is dropped unseen and asked for again, up to
  three tries in all; then the episode ends with ``invalid_agent_message``.
- The user ends with ``###STOP###``, ``###TRANSFER###`` or ``###OUT-OF-SCOPE###``; the agent
  with ``###STOP###`` anywhere in its reply (its tool calls are then not run).

Modes: ``default``; ``neutral`` (persona attributes removed, sweepbench's own ablation);
``solo`` (a dummy user says the whole instruction once, the agent works alone; a reply to the
user without ``###STOP###`` ends it as ``agent_done``, where upstream's attempt crashes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from sweepbench.benchmarks.vitabench import prompts as vitabench_prompts
from sweepbench.benchmarks.vitabench.release import Release
from sweepbench.datasets.task import Task
from sweepbench.ids import TerminationReason
from sweepbench.model_json import ArgumentsError, python_arguments
from sweepbench.simulator.episode import EpisodeContext, EpisodeLimits, EpisodeProtocol
from sweepbench.wire import AssistantMessage

MODES = ("default", "neutral", "solo")
MAX_STEPS = 300
"""Upstream's ``--max-steps`` default."""
AGENT_ATTEMPTS = 3
REASONING_FIELD = "reasoning_content"
"""The field upstream's updated release sends an assistant message's reasoning back as."""
USER_STOPS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
PREMATURE = frozenset({TerminationReason.TOO_MANY_ERRORS, TerminationReason.MAX_STEPS,
                       TerminationReason.INVALID_AGENT_MESSAGE, TerminationReason.MAX_TURNS,
                       TerminationReason.TOO_MANY_TOOL_CALLS})
"""Terminations upstream scores 0 without judging (``max_turns`` and ``too_many_tool_calls``,
sweepbench's own limits, count the same way)."""


def resent_arguments(arguments: str) -> str:
    """Tool-call arguments as upstream re-sends them: ``json.dumps(json.loads(raw) or {})``.

    Python's own ``json`` on purpose: its default separators and ASCII escapes are the bytes
    upstream's agent reads. Arguments that are not a JSON object stay as the model wrote them
    (upstream's attempt would crash on them; sweepbench shows the tool error instead), and so
    do numbers Python reads as infinite (``1e400``), which upstream writes back as
    ``Infinity``, not JSON.
    """
    try:
        value = python_arguments(arguments) if arguments else {}
        return json.dumps(value, allow_nan=False) if isinstance(value, dict) else arguments
    except (ArgumentsError, ValueError):
        return arguments


class VitaBenchProtocol(EpisodeProtocol):
    agent_sees_greeting = False
    agent_attempts = AGENT_ATTEMPTS
    name_tool_results = True

    def __init__(self, data_dir: Path | None, mode: str, *, rules: Release) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown user mode {mode!r}; known: {', '.join(MODES)}")
        self.data_dir, self.mode, self.rules = data_dir, mode, rules
        self.solo = mode == "solo"

    def limits(self, task: Task, *, max_turns: int | None = None, max_tool_errors: int = 10,
               max_steps: int | None = None) -> EpisodeLimits:
        """Upstream's: ``max_steps`` (300 by default), and where the release counts tool
        errors ``max_tool_errors`` as its ``max_errors``. Upstream ends the episode when the
        count reaches it, the loop when the count exceeds its budget: the budget is one less
        (0 and 1 both end at the first failed call)."""
        errors = max(max_tool_errors - 1, 0) if self.rules.tool_errors_count else None
        return EpisodeLimits(max_turns=max_turns, max_agent_steps_per_turn=None,
                             max_tool_errors=errors, max_steps=max_steps or MAX_STEPS)

    def greeting(self, ctx: EpisodeContext) -> str:
        return vitabench_prompts.GREETING["zh" if ctx.task.lang == "zh" else "en"]

    def agent_system_prompt(self, ctx: EpisodeContext) -> str:
        return vitabench_prompts.agent_system_prompt(ctx.task, data_dir=self.data_dir, mode=self.mode)

    def user_system_prompt(self, ctx: EpisodeContext) -> str:
        if self.solo:
            return vitabench_prompts.dummy_user_system_prompt(ctx.task, data_dir=self.data_dir)
        return vitabench_prompts.user_system_prompt(ctx.task, data_dir=self.data_dir,
                                                    neutral=self.mode == "neutral")

    def request_params(self, role: str, *, with_tools: bool) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": 0.0}
        if with_tools:
            params["tool_choice"] = "auto"
        if role == "agent" and self.rules.resend_reasoning:
            params["resend_reasoning"] = REASONING_FIELD
        return params

    def valid_agent_reply(self, msg: AssistantMessage) -> bool:
        return bool((msg.content or "").strip() or msg.tool_calls)

    def agent_history_message(self, msg: AssistantMessage) -> AssistantMessage:
        if not msg.tool_calls:
            return msg
        calls = [msgspec.structs.replace(
            tc, function=msgspec.structs.replace(
                tc.function, arguments=resent_arguments(tc.function.arguments)))
            for tc in msg.tool_calls]
        return msgspec.structs.replace(msg, tool_calls=calls)

    def user_stops(self, text: str) -> bool:
        return any(stop in text for stop in USER_STOPS)

    def agent_stops(self, msg: AssistantMessage) -> bool:
        return vitabench_prompts.STOP in (msg.content or "")
