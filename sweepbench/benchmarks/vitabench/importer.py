"""Import results produced elsewhere into a run store, so they get the same report.

``import_vitabench``: an upstream VitaBench simulation results file (the JSON its ``run``
command saves: ``{"timestamp", "info", "tasks", "simulations"}``), read by format only, none
of its code. What maps to what:

- each simulation -> one episode: model = ``info.agent_info.llm`` (or ``model=``), domain =
  the task's ``domain`` (else ``info.environment_info.domain_name``), trial = ``trial`` (or
  the order of appearance per task when absent), termination = ``termination_reason`` as is,
  wall time = ``duration``; messages converted to our wire types (tool-call arguments to JSON
  text, multi-tool messages flattened); token usage summed per side from the messages'
  ``usage`` (assistant -> agent, user -> user); turns = user messages.
- ``reward_info`` -> one judgment, judge ``"vitabench-upstream"``, method ``"sliding"`` (the
  paper's sliding-window rubric judge, which upstream runs; so it is VitaBench's headline):
  passed = reward == 1.0 (upstream's own success test), score = the share of rubric items
  met (the reward when there are no rubric items), details = reward, rubric items
  (``nl_rubric``, ``met``) and the reward breakdown. No ``reward_info``: no judgment (the
  report counts the episode as unjudged).
- language: ``lang=``, else "zh" when the messages hold CJK text, else "en".

Upstream ``agent_cost`` / ``user_cost`` are not imported: the profile prices tokens itself.
Importing the same file again replaces its episodes and judgments (same ids); several files
(e.g. one per domain) go into one run by passing the same ``run_id``. Imported episodes have
no recorded identity (legacy keys): they are reported, never reused by a sweep.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Struct, field

from sweepbench.benchmarks.vitabench.release import CURRENT, releases_naming
from sweepbench.errors import ImportFormatError
from sweepbench.ids import EpisodeKey
from sweepbench.wire import (
    AssistantMessage,
    EpisodeRecord,
    FunctionCall,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)

__all__ = ["ImportFormatError", "ImportSummary", "import_vitabench"]

JUDGE = "vitabench-upstream"
METHOD = "sliding"
IMPORT_CONFIG = {"imported_from": "vitabench-upstream"}
_CJK = re.compile(r"[\u3400-\u9fff]")


# ---- the subset of upstream's format we read (unknown fields are ignored) -----------------


class _ToolCall(Struct):
    name: str
    id: str = ""
    arguments: Any = field(default_factory=dict)


class _Message(Struct):
    role: str
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None
    id: str | None = None
    name: str | None = None
    error: bool = False
    usage: dict[str, Any] | None = None
    tool_messages: list[_Message] | None = None


class _Rubric(Struct):
    met: bool
    nl_rubric: str | None = None


class _Reward(Struct):
    reward: float
    nl_rubrics: list[_Rubric] | None = None
    reward_breakdown: dict[str, Any] | None = None


class _Simulation(Struct):
    id: str
    task_id: str
    termination_reason: str
    duration: float = 0.0
    reward_info: _Reward | None = None
    messages: list[_Message] = field(default_factory=list)
    trial: int | None = None


class _Named(Struct):
    llm: str | None = None


class _Env(Struct):
    domain_name: str = ""


class _Info(Struct):
    agent_info: _Named = field(default_factory=_Named)
    user_info: _Named = field(default_factory=_Named)
    environment_info: _Env = field(default_factory=_Env)
    num_trials: int | None = None


class _Task(Struct):
    id: str
    domain: str = ""


class _Results(Struct):
    info: _Info
    simulations: list[_Simulation]
    tasks: list[_Task] = field(default_factory=list)


class ImportSummary(Struct, kw_only=True):
    run_id: str
    model: str
    episodes: int
    judged: int
    domains: dict[str, int]
    replaced: int
    """Simulations with a (task, trial) already seen in this file: the later one is kept."""
    benchmark: str = ""
    """The release the episodes are filed under (told by the tool names the agent called)."""


# ---- conversion ---------------------------------------------------------------------------


def _usage(raw: dict[str, Any] | None) -> Usage:
    if not raw:
        return Usage()

    def num(*keys: str) -> int:
        for k in keys:
            v = raw.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return int(v)
        return 0

    cached = num("cached_prompt_tokens", "cache_read_input_tokens")
    details = raw.get("prompt_tokens_details")
    if not cached and isinstance(details, dict):
        cached = int(details.get("cached_tokens") or 0)
    return Usage(num("prompt_tokens", "input_tokens"), num("completion_tokens", "output_tokens"),
                 cached)


def _arguments(args: Any) -> str:
    if isinstance(args, str):
        return args
    return msgspec.json.encode(args).decode("utf-8")


def _convert(sim: _Simulation) -> tuple[list[Message], dict[str, Any]]:
    messages: list[Message] = []
    counts = {"agent_usage": Usage(), "user_usage": Usage(), "agent_calls": 0, "user_calls": 0,
              "tool_calls": 0, "tool_errors": 0, "turns": 0}

    def add(m: _Message) -> None:
        if m.role == "tool" and m.tool_messages is not None:
            for tm in m.tool_messages:
                add(tm)
        elif m.role == "tool":
            messages.append(ToolMessage(tool_call_id=m.id or "", content=m.content or "",
                                        name=m.name))
            counts["tool_errors"] += bool(m.error)
        elif m.role == "assistant":
            calls = [ToolCall(tc.id, FunctionCall(tc.name, _arguments(tc.arguments)))
                     for tc in m.tool_calls or []]
            messages.append(AssistantMessage(content=m.content, tool_calls=calls or None))
            counts["agent_usage"] += _usage(m.usage)
            counts["agent_calls"] += 1
            counts["tool_calls"] += len(calls)
        elif m.role == "user":
            messages.append(UserMessage(m.content or ""))
            counts["user_usage"] += _usage(m.usage)
            counts["user_calls"] += 1
            counts["turns"] += 1
        elif m.role == "system":
            messages.append(SystemMessage(m.content or ""))
        # other roles: not part of the conversation we store

    for m in sim.messages:
        add(m)
    return messages, counts


def _judgment(reward: _Reward) -> tuple[bool, float, dict[str, Any]]:
    rubric = [{"nl_rubric": r.nl_rubric, "met": r.met} for r in reward.nl_rubrics or []]
    score = (sum(r["met"] for r in rubric) / len(rubric)) if rubric else float(reward.reward)
    details: dict[str, Any] = {"reward": reward.reward, "rubric": rubric}
    if reward.reward_breakdown:
        details["reward_breakdown"] = reward.reward_breakdown
    return reward.reward == 1.0, min(1.0, max(0.0, score)), details


def _detect_lang(results: _Results) -> str:
    for sim in results.simulations[:20]:
        for m in sim.messages:
            if m.content and _CJK.search(m.content):
                return "zh"
    return "en"


def import_vitabench(
    store: Any,
    path: str | Path,
    *,
    run_id: str | None = None,
    model: str | None = None,
    lang: str | None = None,
) -> ImportSummary:
    """Import one upstream VitaBench results file into ``store`` (a run store, written through
    its public methods); see the module docstring.

    ``run_id`` defaults to ``vitabench-import:<file stem>``. Raises ``ImportFormatError`` for
    a file that is not upstream results (naming the field), ``OSError`` when unreadable.
    """
    path = Path(path)
    try:
        results = msgspec.json.decode(path.read_bytes(), type=_Results)
    except msgspec.DecodeError as e:  # ValidationError is a DecodeError: names the field
        raise ImportFormatError(f"{path}: not a VitaBench results file: {e}") from e
    model = model or results.info.agent_info.llm
    if not model:
        raise ImportFormatError(f"{path}: info.agent_info.llm is empty; pass model=")
    lang = lang or _detect_lang(results)
    run_id = run_id or f"vitabench-import:{path.stem}"
    task_domain = {t.id: t.domain for t in results.tasks if t.domain}
    default_domain = results.info.environment_info.domain_name or "unknown"

    converted = [(sim, *_convert(sim)) for sim in results.simulations]
    benchmark = f"vitabench@{_release_of(m for _, msgs, _ in converted for m in msgs)}"
    store.begin_run(run_id, dict(IMPORT_CONFIG), info={"command": "import", "benchmarks": {
        benchmark: {"headline": METHOD, "judge_methods": [METHOD]}}})
    next_trial: Counter[str] = Counter()
    seen: set[tuple[str, int]] = set()
    domains: Counter[str] = Counter()
    judged: set[tuple[str, int]] = set()
    replaced = 0
    for sim, messages, counts in converted:
        domain = task_domain.get(sim.task_id, default_domain)
        trial = sim.trial if sim.trial is not None and sim.trial >= 0 else next_trial[sim.task_id]
        next_trial[sim.task_id] = max(next_trial[sim.task_id], trial + 1)
        if (sim.task_id, trial) in seen:
            replaced += 1
        else:
            domains[domain] += 1
        seen.add((sim.task_id, trial))
        episode_id = f"{model}|{benchmark}:{domain}:{lang}:{sim.task_id}|{trial}"
        key = str(EpisodeKey.legacy("import", run_id, episode_id))
        meta = dict(key=key, label=episode_id, model=model, benchmark=benchmark,
                    domain=domain, task_id=sim.task_id, lang=lang, trial=trial)
        store.select(run_id, [meta])
        store.episode_started(meta, run_id=run_id)
        store.episode_finished(key, EpisodeRecord(
            run_id=run_id, model=model, benchmark=benchmark, domain=domain,
            task_id=sim.task_id, lang=lang, trial=trial, termination=sim.termination_reason,
            messages=messages, wall_s=max(0.0, float(sim.duration)), **counts))
        if sim.reward_info is not None:
            passed, score, details = _judgment(sim.reward_info)
            store.judgment(key, judge=JUDGE, method=METHOD, passed=passed,
                           score=score, details=details, run_id=run_id)
            judged.add((sim.task_id, trial))
    store.finish_run(run_id, "done")
    store.flush_sync()
    return ImportSummary(run_id=run_id, model=model, episodes=len(seen), judged=len(judged),
                         domains=dict(sorted(domains.items())), replaced=replaced,
                         benchmark=benchmark)


def _release_of(messages: Any) -> str:
    """The release whose tool names the agent called (a renamed tool's spelling tells); the
    current release when they fit both (no renamed tool was called)."""
    called = {tc.function.name for m in messages if isinstance(m, AssistantMessage)
              for tc in m.tool_calls or ()}
    fits = releases_naming(called)
    return fits[0] if len(fits) == 1 else CURRENT
