"""VitaBench behind the benchmark protocol: its tasks, tools, episode, checks, judges, oracle."""

from __future__ import annotations

import random
from functools import cache
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
from sweepbench.benchmarks.vitabench import oracle, prompts, tasks
from sweepbench.benchmarks.vitabench.data_check import (
    OWN_PROMPTS,
    check_release,
    require_upstream,
)
from sweepbench.benchmarks.vitabench.episode import PREMATURE, VitaBenchProtocol
from sweepbench.benchmarks.vitabench.importer import import_vitabench
from sweepbench.benchmarks.vitabench.judge import judge_episode
from sweepbench.benchmarks.vitabench.judge_double import scripted_judge
from sweepbench.benchmarks.vitabench.release import CURRENT, RELEASES, Release, release
from sweepbench.benchmarks.vitabench.state_check import check_vitabench
from sweepbench.benchmarks.vitabench.tools import graph_stats, tools_for
from sweepbench.benchmarks.vitabench.tools.reachability import unreachable
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError
from sweepbench.ids import JudgeMethod, UserMode, content_hash
from sweepbench.simulator.episode import EpisodeProtocol
from sweepbench.simulator.scripted.plan import Step
from sweepbench.tools.base import Toolkit
from sweepbench.wire import AssistantMessage, ChatRequest, EpisodeRecord

OWN_PROMPTS_VARIANT = "own-prompts"


class VitaBench(Benchmark):
    name = "vitabench"
    default_domains = ("delivery",)
    judge_methods = (JudgeMethod.SLIDING, JudgeMethod.FULL, JudgeMethod.SLIDING_NO_RUBRICS,
                     JudgeMethod.FULL_NO_RUBRICS)
    user_modes = (UserMode.DEFAULT, UserMode.NEUTRAL, UserMode.SOLO)
    headline = JudgeMethod.SLIDING
    headline_label = "the sliding-window rubric judge (the paper's Avg@k / Pass@k / Pass^k)"
    code_version = "1"
    releases = tuple(RELEASES)
    variants = (OWN_PROMPTS_VARIANT,)
    plan_defaults = {**Benchmark.plan_defaults, "user_turns": 3, "tokens_per_step": 150,
                     "judge_calls": {"sliding": 3, "full": 1, "sliding_no_rubrics": 3,
                                     "full_no_rubrics": 1}}

    def __init__(self, release_name: str = CURRENT, *, own_prompts: bool = False) -> None:
        """VitaBench as of one upstream release: named ``vitabench@<release>`` wherever it
        is stored or shown (a bare ``vitabench`` is the current release); with
        ``own_prompts``, ``...+own-prompts``, and every report says what that means."""
        self.rules: Release = release(release_name)
        self.release = self.rules.name
        self.own_prompts = own_prompts
        self.tools = tools_for(self.rules)
        self.name = f"{VitaBench.name}@{self.release}" + (
            f"+{OWN_PROMPTS_VARIANT}" if own_prompts else "")
        if own_prompts:
            self.headline_label = f"{VitaBench.headline_label}; {OWN_PROMPTS}"

    @property
    def identity_name(self) -> str:
        """The November release's episodes were recorded as plain ``vitabench`` before
        releases had names: its episodes keep that identity, so a store's episodes of it are
        reused, never paid for again."""
        return VitaBench.name if self.release == "2025-11" else self.name

    def with_release(self, release_name: str) -> VitaBench:
        base, plus, variant = release_name.partition("+")
        if plus and variant != OWN_PROMPTS_VARIANT:
            raise TaskError(f"unknown VitaBench variant {variant!r} in {release_name!r}; the "
                            f"one variant is +{OWN_PROMPTS_VARIANT}")
        return _released(release(base or None).name, bool(plus))

    def _prompt_dir(self, data_dir: Path | None) -> Path | None:
        """Where the prompt templates and tool descriptions come from: the data dir (which
        must then have upstream's), or nowhere with ``own_prompts``."""
        if self.own_prompts:
            return None
        require_upstream(data_dir)
        return data_dir

    def build_data_dir(self, source: Path, out: Path, *, release: str | None) -> str:
        """Task files, prompt templates and tool descriptions from an upstream checkout or
        dataset release, with a manifest naming the release they are."""
        from sweepbench.benchmarks.vitabench.upstream_data.importer import (
            import_data,
            summary,
        )

        return summary(import_data(source, out, release=release), out)

    def load_tasks(self, domains: tuple[str, ...], *, data_dir: Path | None,
                   lang: str) -> list[Task]:
        check_release(data_dir, self.rules, self.name)
        return [msgspec.structs.replace(t, benchmark=self.name) if t.benchmark != self.name else t
                for t in tasks.load_tasks(domains, data_dir=data_dir, lang=lang)]

    def toolkit(self, task: Task) -> Toolkit:
        return self.tools.toolkit(task)

    def tools_summary(self, toolkit: Toolkit) -> dict[str, Any]:
        return graph_stats(toolkit)

    def new_state(self, task: Task) -> Any:
        return self.tools.new_state(task)

    def final_state(self, state: Any) -> dict[str, Any]:
        return self.tools.final_state(state)

    def tool_descriptions(self, task: Task, data_dir: Path | None) -> dict[str, dict] | None:
        return self.tools.descriptions(task, self._prompt_dir(data_dir))

    def record_ids(self, state: Any) -> list[str]:
        """Orders of every domain, then bookings, then reservations."""
        return self.tools.record_ids(state)

    def episode_protocol(self, task: Task, *, data_dir: Path | None,
                         user_mode: UserMode) -> EpisodeProtocol:
        return VitaBenchProtocol(self._prompt_dir(data_dir), user_mode, rules=self.rules)

    def check(self, task: Task, record: EpisodeRecord) -> Judgment:
        """The expected-state check: orders, bookings and reservations as the task wants."""
        result = msgspec.to_builtins(check_vitabench(task, record.final_state or {}))
        passed = result.pop("passed")
        return {"passed": passed, "score": 1.0 if passed else 0.0, "details": result}

    def premature_judgment(self, task: Task, record: EpisodeRecord) -> Judgment | None:
        """Upstream's rule: an episode ended by a limit (max steps, too many errors, an invalid
        agent message) scores 0 and the judge is not called."""
        if record.termination not in PREMATURE:
            return None
        # upstream formats its enum member: ``TerminationReason.TOO_MANY_ERRORS``
        note = ("Simulation terminated prematurely. Termination reason: "
                f"TerminationReason.{record.termination.upper()}")
        return {"passed": False, "score": 0.0,
                "details": {"premature": True, "termination": record.termination,
                            "note": note, "calls": 0}}

    async def judge(self, task: Task, record: EpisodeRecord, method: str, call: JudgeCall, *,
                    data_dir: Path | None) -> Judgment:
        """The rubric judge (``sliding``, the paper's, or a Table 5 variant)."""
        # the state check's verdict rides along for the scripted judge double only (the
        # client sends the ``sweepbench`` field to scripted endpoints, never to real ones)
        reference = self.check(task, record)["passed"] if record.final_state else None
        result = await judge_episode(task, record.messages, call=call, method=method,
                                     data_dir=self._prompt_dir(data_dir), lang=task.lang,
                                     meta={"reference_verdict": reference})
        details = msgspec.to_builtins(result)
        return {"passed": details.pop("passed"), "score": details.pop("score"),
                "details": details}

    def unreachable(self, task: Task) -> str | None:
        return unreachable(task)

    def fingerprint(self, task: Task, data_dir: Path | None) -> str:
        """The agent and user prompts of every mode (upstream templates or the project's
        own) as rendered for the task's template probe, its tool schemas and descriptions,
        the code version."""
        probe = template_probe(task)
        data_dir = self._prompt_dir(data_dir)
        return content_hash({
            "code": self.code_version,
            "tools": specs_hash(self.toolkit(task).specs(self.tool_descriptions(task, data_dir))),
            "prompts": [
                prompts.GREETING.get(probe.lang, prompts.GREETING["en"]),
                *(prompts.agent_system_prompt(probe, data_dir=data_dir, mode=m)
                  for m in ("default", "solo")),
                *(prompts.user_system_prompt(probe, data_dir=data_dir, neutral=n)
                  for n in (False, True)),
                prompts.dummy_user_system_prompt(probe, data_dir=data_dir)]})

    def import_results(self, store: Any, path: Path, *, run_id: str | None, model: str | None,
                       lang: str | None) -> Any:
        """Upstream's simulation result files (``vitabench run`` output)."""
        return import_vitabench(store, path, run_id=run_id, model=model, lang=lang)

    def gold_plan(self, task: Task) -> list[Step]:
        return oracle.gold_plan(task)

    def corrupt(self, step: Step, rng: random.Random, task: Task) -> Step:
        return oracle.corrupt(step, rng, task)

    def scripted_judge(self, req: ChatRequest) -> AssistantMessage:
        return scripted_judge(req)


@cache
def _released(release_name: str, own_prompts: bool) -> VitaBench:
    """One object per release and variant."""
    return VitaBench(release_name, own_prompts=own_prompts)
