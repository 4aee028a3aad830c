"""T1-Bench behind the benchmark protocol: generated tasks, 76 tools, the exit check and domain
classifier in the episode, the tool / parameter / output metrics and the Likert judge."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import msgspec

from sweepbench.benchmarks.base import (
    Benchmark,
    JudgeCall,
    Judgment,
    specs_hash,
    template_probe,
)
from sweepbench.benchmarks.t1 import metrics, oracle, prompts
from sweepbench.benchmarks.t1.data import tasks
from sweepbench.benchmarks.t1.episode import T1Protocol
from sweepbench.benchmarks.t1.tools import TOOLS
from sweepbench.datasets.task import Task
from sweepbench.ids import JudgeMethod, UserMode, content_hash
from sweepbench.judge.likert import likert_judgment
from sweepbench.simulator.episode import EpisodeProtocol
from sweepbench.simulator.scripted.plan import Step
from sweepbench.tools.base import Toolkit
from sweepbench.wire import AssistantMessage, ChatRequest, EpisodeRecord


class T1(Benchmark):
    name = "t1"
    default_domains = ("all",)
    judge_methods = (JudgeMethod.LIKERT,)
    user_modes = (UserMode.DEFAULT,)
    headline = JudgeMethod.STATE
    headline_label = "the paper's Pass: tool, parameter and output-match criteria"
    code_version = "1"
    plan_defaults = {**Benchmark.plan_defaults, "user_turns": 3, "referee_calls_per_turn": 2,
                     "judge_calls": {"likert": 1}}

    def load_tasks(self, domains: tuple[str, ...], *, data_dir: Path | None,
                   lang: str) -> list[Task]:
        return tasks.load_tasks(",".join(domains), data_dir=data_dir, lang=lang)

    def tasks_summary(self, domains: tuple[str, ...], selected: list[Task]) -> dict[str, Any]:
        """Templates and tools per split and tier (Table 4) and the knowledge base's rows."""
        summary = tasks.catalog_summary()
        if domains != ("all",):
            summary["selected"] = len(selected)
        return summary

    def toolkit(self, task: Task) -> Toolkit:
        return TOOLS.toolkit(task)

    def new_state(self, task: Task) -> Any:
        return TOOLS.new_state(task)

    def final_state(self, state: Any) -> dict[str, Any]:
        return TOOLS.final_state(state)

    def episode_protocol(self, task: Task, *, data_dir: Path | None,
                         user_mode: UserMode) -> EpisodeProtocol:
        return T1Protocol(data_dir)

    def fingerprint(self, task: Task, data_dir: Path | None) -> str:
        """The user, assistant, classifier and exit-check prompts (the paper's files or the
        project's own) as rendered for the task's template probe, its tool schemas, the code
        version."""
        probe = template_probe(task)
        return content_hash({
            "code": self.code_version, "tools": specs_hash(self.toolkit(task).specs()),
            "prompts": [prompts.user_prompt(probe, data_dir),
                        prompts.assistant_prompt(probe, list(probe.domains), {}, data_dir),
                        prompts.classifier_prompt(data_dir),
                        prompts.exit_prompt(probe, "", data_dir)]})

    def check(self, task: Task, record: EpisodeRecord) -> Judgment:
        """The tool / parameter / output metrics against the gold calls (§3.2.1)."""
        result = msgspec.to_builtins(
            metrics.score(task, metrics.calls_from_messages(record.messages)))
        passed = bool(result.pop("passed"))
        return {"passed": passed, "score": 1.0 if passed else 0.0, "details": result}

    async def judge(self, task: Task, record: EpisodeRecord, method: str, call: JudgeCall, *,
                    data_dir: Path | None) -> Judgment:
        """The Likert judge (§3.2.2): helpfulness and coherence 1-5, overall their mean."""
        prompt = prompts.judge_prompt(prompts.transcript(record.messages), data_dir)
        return await likert_judgment(prompt, prompts.parse_judge, call)

    def gold_plan(self, task: Task) -> list[Step]:
        return oracle.gold_plan(task)

    def corrupt(self, step: Step, rng: random.Random, task: Task) -> Step:
        return oracle.corrupt(step, rng, task)

    def scripted_referee(self, role: str, task: Task) -> AssistantMessage | None:
        """The scripted user's answers to the domain classifier and the exit check."""
        if role == "classifier":  # the task's own domains
            return AssistantMessage(msgspec.json.encode(list(task.domains)).decode())
        if role == "exit":  # the scripted user ends the talk itself
            return AssistantMessage(
                '{"should_end": false, "reason": "the user has not said goodbye"}')
        return None

    def scripted_judge(self, req: ChatRequest) -> AssistantMessage:
        """Deterministic 1-5 scores: from ``judge_hint`` (true: 5, false: 1), else the digest
        of the prompt."""
        meta = req.sweepbench or {}
        digest = hashlib.sha256(msgspec.json.encode(req.messages)).digest()
        hint = meta.get("judge_hint")
        scores = {c: (5 if hint else 1) if isinstance(hint, bool) else 1 + digest[i] % 5
                  for i, c in enumerate(("helpfulness", "coherence"))}
        return AssistantMessage(msgspec.json.encode(
            {c: {"score": v, "reasoning": "scripted verdict"} for c, v in scores.items()}).decode())
