"""The T1-Bench episode: exit check, domain classification, policies and cache in the prompt.

After each user message (T1 §2 and Appendix F):
1. the exit-check model reads the user's instructions and the conversation and may end it;
2. the domain classifier names the domains the conversation is about, which selects the
   policies the agent is given;
3. the agent's context carries the current cache summary (the keys the tools have stored).

The agent's system prompt is built once, just before its first call, with the first
classification. Later changes (new domains, new cache keys) are appended as system messages,
so requests stay append-only and provider prompt caches keep hitting.
"""

from __future__ import annotations

from pathlib import Path

from sweepbench.benchmarks.t1 import prompts as t1_prompts
from sweepbench.simulator.episode import (
    EpisodeContext,
    EpisodeProtocol,
    TerminationReason,
)
from sweepbench.wire import SystemMessage, UserMessage


class T1Protocol(EpisodeProtocol):
    def __init__(self, data_dir: Path | None = None) -> None:
        self.data_dir = data_dir
        self.domains: list[str] = []  # domains whose policies the agent has been given
        self.shown_cache: dict[str, str] = {}

    def agent_system_prompt(self, ctx: EpisodeContext) -> str:
        self.shown_cache = dict(ctx.state.summary())
        return t1_prompts.assistant_prompt(ctx.task, self.domains, self.shown_cache, self.data_dir)

    def user_system_prompt(self, ctx: EpisodeContext) -> str:
        return t1_prompts.user_prompt(ctx.task, self.data_dir)

    async def after_user_message(self, ctx: EpisodeContext, text: str) -> TerminationReason | None:
        history = t1_prompts.transcript(ctx.agent_msgs, tools=False)
        verdict = await ctx.ask("exit", [UserMessage(t1_prompts.exit_prompt(ctx.task, history, self.data_dir))])
        should_end, _ = t1_prompts.parse_exit(verdict.content or "")
        if should_end:
            return TerminationReason.EXIT_CHECK
        earlier = ctx.user_texts()[:-1]
        reply = await ctx.ask("classifier", [
            SystemMessage(t1_prompts.classifier_prompt(self.data_dir)),
            UserMessage(t1_prompts.classifier_input(earlier, text))])
        found = t1_prompts.parse_domains(reply.content or "") or list(ctx.task.domains)
        new = [d for d in found if d not in self.domains]
        if not ctx.agent_started:
            self.domains += new
            return None
        if new:
            self.domains += new
            ctx.agent_msgs.append(SystemMessage(
                "Policies for the domains this conversation now covers:\n\n"
                + t1_prompts.policies_for(new)))
        cache = dict(ctx.state.summary())
        if cache != self.shown_cache:
            self.shown_cache = cache
            ctx.agent_msgs.append(SystemMessage(
                "# CURRENT CACHE SUMMARY\n" + t1_prompts.cache_summary_text(cache)))
        return None
