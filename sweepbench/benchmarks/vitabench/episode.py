"""The VitaBench episode: the paper's agent and user-simulator prompts, in three modes.

- ``default``: the agent with the environment time; the user simulator with persona,
  instructions and the progressive-disclosure rules (upstream templates from the data dir
  when present, the project's own otherwise).
- ``neutral``: the same, with the persona's attributes removed from the user's prompt.
- ``solo``: no user at all; the agent gets the whole instruction up front and works until it
  says it is done (the paper's Figure 8 ablation).
"""

from __future__ import annotations

from pathlib import Path

from sweepbench.benchmarks.vitabench import prompts as vitabench_prompts
from sweepbench.simulator.episode import EpisodeContext, EpisodeProtocol

MODES = ("default", "neutral", "solo")


class VitaBenchProtocol(EpisodeProtocol):
    def __init__(self, data_dir: Path | None = None, mode: str = "default") -> None:
        if mode not in MODES:
            raise ValueError(f"unknown user mode {mode!r}; known: {', '.join(MODES)}")
        self.data_dir, self.mode = data_dir, mode
        self.solo = mode == "solo"

    def agent_system_prompt(self, ctx: EpisodeContext) -> str:
        return vitabench_prompts.agent_system_prompt(ctx.task, data_dir=self.data_dir, mode=self.mode)

    def user_system_prompt(self, ctx: EpisodeContext) -> str:
        return vitabench_prompts.user_system_prompt(ctx.task, data_dir=self.data_dir,
                                                    neutral=self.mode == "neutral")

    def solo_instruction(self, ctx: EpisodeContext) -> str:
        return vitabench_prompts.solo_agent_prompt(ctx.task, data_dir=self.data_dir)
