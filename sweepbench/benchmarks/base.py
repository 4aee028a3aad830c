"""The one protocol every benchmark implements; the generic rooms know benchmarks only by it.

A benchmark is a package under ``sweepbench/benchmarks/<name>/`` (or a plugin module, see
:mod:`sweepbench.benchmarks.registry`) whose ``BENCHMARK`` attribute is an instance of a
:class:`Benchmark` subclass. It knows how to load its tasks, build a toolkit and a fresh state
for an episode, run its episode protocol, check the end state, judge with its LLM judges, and
play its own oracle (the scripted test doubles' gold plans). The runner, the CLI and the
reference server ask the registry for the benchmark of a task and call these methods; nothing
outside a benchmark's folder compares a benchmark's name.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Awaitable, Callable, ClassVar

from sweepbench.datasets.task import Task
from sweepbench.errors import ImportFormatError, TaskError
from sweepbench.ids import JudgeMethod, UserMode, content_hash
from sweepbench.memo import IdentityMemo
from sweepbench.simulator.episode import EpisodeProtocol
from sweepbench.simulator.scripted.plan import Step
from sweepbench.tools.base import Toolkit
from sweepbench.wire import AssistantMessage, ChatRequest, EpisodeRecord

__all__ = ["Benchmark", "Judgment", "JudgeCall", "specs_hash", "template_probe"]

Judgment = dict[str, Any]
"""``{"passed": bool | None, "score": float | None, "details": {...}}`` as the store keeps it."""

JudgeCall = Callable[[ChatRequest], Awaitable[Any]]
"""Sends one request to a judge model and returns its reply (``.message``, ``.usage``)."""


def _with_refs(value: Any, results: list[dict[str, Any]], where: str) -> Any:
    """``value`` with every ``{"$ref_step": i}`` replaced by the first id call ``i`` created."""
    if isinstance(value, dict) and "$ref_step" in value:
        step = value["$ref_step"]
        if (len(value) != 1 or not isinstance(step, int) or isinstance(step, bool)
                or not 0 <= step < len(results)):
            raise TaskError(f"{where}: {{\"$ref_step\": i}} must name an earlier call, got {value!r}")
        return (results[step]["created"] or ["MISSING_REF"])[0]
    if isinstance(value, dict):
        return {k: _with_refs(v, results, where) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_refs(v, results, where) for v in value]
    return value


def template_probe(task: Task) -> Task:
    """``task`` with its content replaced by fixed placeholders (same benchmark, domains and
    language): rendering prompts for it shows the *templates*, apart from the task's content
    (which the episode identity hashes on its own)."""
    import msgspec

    profile = {k: "-" for k in ("name", "personality", "occupation", "gender", "age group",
                                "family status", "address", "dietary restrictions")}
    return msgspec.structs.replace(
        task, id="template-probe", instructions="<instructions>",
        persona={"user_profile": profile, "persona": "<persona>", "user": profile},
        environment={"time": "2025-01-01 12:00:00"}, message_history=[], evaluation={},
        max_turns=30, source="")


_SPEC_HASHES: IdentityMemo[list, str] = IdentityMemo()


def specs_hash(specs: list) -> str:
    """The hash of a toolkit's tool schemas, once per schema list (toolkits build each list
    once per description set)."""
    return _SPEC_HASHES.get(specs, content_hash)


class Benchmark:
    """Base class of a benchmark; subclasses override what they have."""

    name: ClassVar[str]
    """The benchmark's name in specs (``name:domains``), task keys and the store."""
    default_domains: ClassVar[tuple[str, ...]] = ()
    """Domains of a bare ``name`` spec."""
    judge_methods: ClassVar[tuple[str, ...]] = ()
    """LLM judge methods that apply to this benchmark's episodes (see ``ids.JudgeMethod``)."""
    user_modes: ClassVar[tuple[UserMode, ...]] = (UserMode.DEFAULT,)
    """User modes the episode protocol supports; others are refused at config time."""
    headline: ClassVar[str] = JudgeMethod.STATE
    """The judge method whose verdicts score this benchmark's leaderboard: its paper's metric,
    fixed whatever else was run. An episode without a verdict of this method is *unjudged*
    (counted apart, never rescored by another method); other methods are extra columns."""
    headline_label: ClassVar[str] = "the deterministic state check"
    """What the headline is, in words, for reports."""
    code_version: ClassVar[str] = "1"
    releases: ClassVar[tuple[str, ...]] = ()
    """Upstream releases this benchmark can run (``name@release``); empty: it has one."""
    release: str | None = None
    """The release this object runs (None for a benchmark without releases)."""
    variants: ClassVar[tuple[str, ...]] = ()
    """Variants a release may add (``name@release+variant``), e.g. VitaBench's own-prompts."""

    @property
    def identity_name(self) -> str:
        """The name episodes' identities hash (``name``, unless episodes were recorded under
        an older name that must keep matching)."""
        return self.name
    plan_defaults: ClassVar[dict[str, Any]] = {
        "user_turns": 3, "referee_calls_per_turn": 0, "agent_completion_tokens": 60,
        "user_completion_tokens": 40, "tokens_per_step": 120, "judge_calls": {},
        "judge_completion_tokens": 200}
    """What ``sweepbench plan`` assumes of an episode when the store has no history for the
    model and benchmark: user turns, the protocol's own calls per turn (T1's exit check and
    classifier), completion tokens per call, tokens a step adds to the conversation, LLM judge
    calls per episode by method. Agent calls are the task's own: its gold plan's steps plus
    one reply per turn."""
    """Bumped when the benchmark's episode code changes what an episode does (its tools'
    behaviour, its protocol); part of every episode's identity via ``fingerprint``."""

    def with_release(self, release: str) -> Benchmark:
        """This benchmark as of one of its ``releases`` (``name@release`` in a spec)."""
        raise TaskError(f"{self.name} has no releases to choose from (got {release!r})")

    def build_data_dir(self, source: Path, out: Path, *, release: str | None) -> str:
        """Build this benchmark's data dir at ``out`` from its upstream's own files at
        ``source`` (``sweepbench data``); returns what was written, in a few lines."""
        raise TaskError(f"{self.name} has no data importer: its data is generated or built in")

    # ---- tasks ----------------------------------------------------------------------------

    def load_tasks(self, domains: tuple[str, ...], *, data_dir: Path | None,
                   lang: str) -> list[Task]:
        """The tasks of a spec's domains; TaskError naming file and task when one is bad."""
        raise NotImplementedError

    def tasks_summary(self, domains: tuple[str, ...], tasks: list[Task]) -> dict[str, Any] | None:
        """Extra facts for ``sweepbench tasks --json`` (None: just the task list)."""
        return None

    # ---- tools and state ------------------------------------------------------------------

    def toolkit(self, task: Task) -> Toolkit:
        """The tools the agent may call in this task (merged for cross-domain tasks)."""
        raise NotImplementedError

    def toolkit_for_domains(self, domains: tuple[str, ...]) -> Toolkit:
        """The tools of a spec's domains, for ``sweepbench tools``."""
        return self.toolkit(Task(id="-", benchmark=self.name, domain=",".join(domains),
                                 instructions=""))

    def tools_summary(self, toolkit: Toolkit) -> dict[str, Any]:
        """Extra facts for ``sweepbench tools`` (e.g. the dependency graph's density)."""
        return {}

    def new_state(self, task: Task) -> Any:
        """A fresh mutable database for one episode; tools take it as their first argument."""
        raise NotImplementedError

    def final_state(self, state: Any) -> dict[str, Any]:
        """The JSON-able end state the judges check (e.g. all orders)."""
        raise NotImplementedError

    def tool_descriptions(self, task: Task, data_dir: Path | None) -> dict[str, dict] | None:
        """Description overrides {name: {"description", "args"}}; None: the code's own."""
        return None

    def record_ids(self, state: Any) -> list[str]:
        """Ids of the records in ``state`` that tools create (orders, bookings, ...), oldest
        first; ``run_calls`` tells from them what a call created. Default: none."""
        return []

    def run_calls(self, task: Task, calls: Any) -> dict[str, Any]:
        """Run tool calls ``[{"tool", "args"}]`` one after another from a fresh state of
        ``task`` (``sweepbench tools call``): ``{"results": [{"content", "error", "created"}],
        "final_state"}``; ``error`` is true when the call's outcome was not ok. An argument
        ``{"$ref_step": i}`` is the id of the record call ``i`` created (``"MISSING_REF"``
        when it created none); TaskError for a malformed call."""
        if not isinstance(calls, list):
            raise TaskError(f"calls should be a list, got {type(calls).__name__}")
        toolkit, state = self.toolkit(task), self.new_state(task)
        results: list[dict[str, Any]] = []
        for i, call in enumerate(calls):
            if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
                raise TaskError(f"calls[{i}] should be an object with a `tool` name")
            args = _with_refs(call.get("args", {}), results, f"calls[{i}].args")
            before = set(self.record_ids(state))
            outcome = toolkit.call(state, call["tool"], json.dumps(args, ensure_ascii=False))
            created = [r for r in self.record_ids(state) if r not in before]
            results.append({"content": outcome.content, "error": not outcome.ok,
                            "created": created})
        return {"results": results, "final_state": self.final_state(state)}

    # ---- the episode ----------------------------------------------------------------------

    def episode_protocol(self, task: Task, *, data_dir: Path | None,
                         user_mode: UserMode) -> EpisodeProtocol:
        """This benchmark's conventions for one episode (prompts, hooks between turns)."""
        return EpisodeProtocol()

    # ---- judging --------------------------------------------------------------------------

    def check(self, task: Task, record: EpisodeRecord) -> Judgment:
        """The deterministic check of a finished episode (no model calls)."""
        raise NotImplementedError

    def premature_judgment(self, task: Task, record: EpisodeRecord) -> Judgment | None:
        """The LLM judges' verdict on an episode that ended too early to be judged, given
        without calling them (VitaBench: 0 for max steps, too many errors, invalid agent
        message); None: judge it."""
        return None

    async def judge(self, task: Task, record: EpisodeRecord, method: str, call: JudgeCall, *,
                    data_dir: Path | None) -> Judgment:
        """One LLM judgment with ``method`` (one of ``judge_methods``). A judge that answers
        no verdict raises :class:`~sweepbench.judge.likert.NoVerdict` (the episode stays
        unjudged, judged again next run); anything else raised outside ``call`` means the
        episode cannot be scored, and fails."""
        raise TaskError(f"{self.name} has no LLM judge method {method!r}")

    def unreachable(self, task: Task) -> str | None:
        """Why no agent can pass ``task`` (a defect of its data), or None."""
        return None

    def fingerprint(self, task: Task, data_dir: Path | None) -> str:
        """A hash of what, besides the task's content, decides how an episode of ``task``
        goes: the prompt templates and tool schemas it would use and ``code_version``.
        Part of the episode's identity: when it changes, stored episodes are not reused.
        Prompts are rendered for ``template_probe(task)``, so that the fingerprint does not
        change with the task's content (its own part of the identity).

        The default covers the tool schemas (with description overrides) and the code
        version; benchmarks with prompts of their own add them."""
        tools = self.toolkit(task).specs(self.tool_descriptions(task, data_dir))
        return content_hash({"benchmark": self.name, "code": self.code_version,
                             "tools": specs_hash(tools)})

    def import_results(self, store: Any, path: Path, *, run_id: str | None, model: str | None,
                       lang: str | None) -> Any:
        """Import another harness's result file for this benchmark into ``store`` (a run
        store); returns a summary with ``run_id``, ``episodes`` and ``judged``."""
        raise ImportFormatError(f"{self.name} has no importer of result files")

    # ---- the scripted test doubles --------------------------------------------------------

    def gold_plan(self, task: Task) -> list[Step]:
        """Tool calls that reach the task's expected end state (the oracle's script)."""
        return []

    def corrupt(self, step: Step, rng: random.Random, task: Task) -> Step:
        """A plausible wrong version of ``step`` (the noisy agent's mistakes)."""
        return step

    def scripted_referee(self, role: str, task: Task) -> AssistantMessage | None:
        """The scripted user's answer to the protocol's own calls with ``role`` (T1's domain
        classifier and exit check); None: answered as a user turn."""
        return None

    def scripted_judge(self, req: ChatRequest) -> AssistantMessage:
        """The scripted judge's answer to one of this benchmark's judge prompts."""
        raise TaskError(f"{self.name} has no scripted judge")
