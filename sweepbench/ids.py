"""Identities and vocabularies, in one place: keys of tasks and episodes, and the closed sets of
names (termination reasons, judge methods, user modes, episode statuses) that the store, the
judges, the runner and the reports compare against.

Keys are plain strings on disk and over HTTP; these types are the only code that formats or
parses them:

- a task key is ``benchmark:domain:lang:id`` (the domain may be a comma composition; the id
  may contain ``:``, so parsing splits at most three times);
- an episode id is ``model|task key|trial`` (endpoint names may not contain ``|``);
- an episode key is ``ep-`` and 32 hex digits: the sha256 of the canonical JSON of what
  determines the episode's outcome (its *identity*: the agent endpoint as sent, the task's
  content, the trial, the user model and mode, seeds, limits, the benchmark's prompt and tool
  fingerprint). The store keys episodes by it; the episode id is only its readable label;
- a judge journal is ``judge|<judge>|<method>``: a judge's calls for one episode are journaled
  under the episode's key apart from the episode's own calls (journal ``""``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import msgspec

__all__ = [
    "EPISODE_JOURNAL", "FAILED_TERMINATIONS", "LIMIT_TERMINATIONS", "EpisodeId", "EpisodeKey",
    "EpisodeStatus", "JudgeMethod", "STATE_JUDGE", "TaskKey", "TerminationReason", "UserMode", "WorkOrder",
    "content_hash", "judge_journal",
]


class TerminationReason(StrEnum):
    """Why an episode ended."""

    USER_STOP = "user_stop"
    AGENT_STOP = "agent_stop"
    MAX_TURNS = "max_turns"
    MAX_STEPS = "max_steps"  # the episode's message budget ran out (VitaBench counts steps)
    TOO_MANY_ERRORS = "too_many_errors"
    INVALID_AGENT_MESSAGE = "invalid_agent_message"  # agent replies with neither text nor calls
    EXIT_CHECK = "exit_check"  # the benchmark's exit-check model ended the conversation
    AGENT_DONE = "agent_done"  # solo mode: the agent answered with text (nobody to answer it)
    ERROR = "error"  # a model call failed for good, or the episode could not run
    CONTEXT_OVERFLOW = "context_overflow"  # a prompt no longer fit the model's context
    TRUNCATED = "truncated"  # a reply was cut short (finish_reason "length" and the like)
    TOKEN_LIMIT = "token_limit"  # the agent used more tokens than --token-limit allows
    TIME_LIMIT = "time_limit"  # the episode ran longer than --time-limit allows
    TOO_MANY_TOOL_CALLS = "too_many_tool_calls"  # one agent reply asked for more calls than
    # an episode runs per message (none of them were run)


LIMIT_TERMINATIONS = frozenset({TerminationReason.TOKEN_LIMIT, TerminationReason.TIME_LIMIT})
"""Endings by sweepbench's own per-episode limits: failures, judged by no LLM judge (as
upstream scores an episode its limits ended)."""

FAILED_TERMINATIONS = frozenset({TerminationReason.ERROR, TerminationReason.CONTEXT_OVERFLOW,
                                 TerminationReason.TRUNCATED, *LIMIT_TERMINATIONS,
                                 TerminationReason.TOO_MANY_TOOL_CALLS})
"""Endings that fail the episode whatever its state: it could not run to its end."""


class EpisodeStatus(StrEnum):
    """An episode's row in the store: started and not finished, finished, or ended in error."""

    RUNNING = "running"
    DONE = "done"
    ERROR = "error"


class UserMode(StrEnum):
    """Who plays the user: the persona simulator, the same without persona, or nobody."""

    DEFAULT = "default"
    NEUTRAL = "neutral"  # the persona's attributes removed from the user's prompt
    SOLO = "solo"  # the user says the whole instruction once; the agent then works alone


class WorkOrder(StrEnum):
    """The order a sweep starts its episodes in (``runner/schedule.py``)."""

    LONGEST = "longest"  # longest expected first, fair across models, in bands of trials
    FILE = "file"  # trial-major, tasks in file order, models in config order


class JudgeMethod(StrEnum):
    """How an episode is judged. ``state`` is the deterministic check every episode gets; the
    others are LLM judges, each belonging to the benchmark that declares it."""

    STATE = "state"
    SLIDING = "sliding"
    FULL = "full"
    SLIDING_NO_RUBRICS = "sliding_no_rubrics"
    FULL_NO_RUBRICS = "full_no_rubrics"
    LIKERT = "likert"


STATE_JUDGE = "state"
"""The judge name of the deterministic check (its method is ``JudgeMethod.STATE``)."""


@dataclass(frozen=True, slots=True)
class TaskKey:
    """A task's identity across benchmarks and languages."""

    benchmark: str
    domain: str
    lang: str
    id: str

    def __str__(self) -> str:
        return f"{self.benchmark}:{self.domain}:{self.lang}:{self.id}"

    @classmethod
    def parse(cls, text: str) -> "TaskKey":
        parts = text.split(":", 3)
        if len(parts) != 4:
            raise ValueError(f"not a task key (benchmark:domain:lang:id): {text!r}")
        return cls(*parts)


@dataclass(frozen=True, slots=True)
class EpisodeId:
    """One (model, task, trial) episode."""

    model: str
    task: TaskKey
    trial: int

    def __str__(self) -> str:
        return f"{self.model}|{self.task}|{self.trial}"

    @classmethod
    def parse(cls, text: str) -> "EpisodeId":
        model, sep, rest = text.partition("|")
        key, sep2, trial = rest.rpartition("|")
        if not (sep and sep2) or not trial.isdigit():
            raise ValueError(f"not an episode id (model|task key|trial): {text!r}")
        return cls(model, TaskKey.parse(key), int(trial))


def content_hash(value: Any) -> str:
    """sha256 (hex) of the canonical JSON of ``value`` (keys sorted): equal values, equal hash."""
    return hashlib.sha256(msgspec.json.encode(value, order="sorted")).hexdigest()


class EpisodeKey(str):
    """An episode's key in the store: ``ep-`` + 32 hex digits of its identity's hash.

    Two episodes with the same identity are the same episode (a store runs it once); anything
    that changes the identity (a task file's content, a prompt, the model name sent) makes a
    new episode, so a stale result is never reused.
    """

    PREFIX = "ep-"

    @classmethod
    def of(cls, identity: dict[str, Any]) -> "EpisodeKey":
        return cls(cls.PREFIX + content_hash(identity)[:32])

    @classmethod
    def legacy(cls, *parts: str) -> "EpisodeKey":
        """The key of an episode whose identity was never recorded (a store written by an
        older sweepbench, an imported result file): unique, and never equal to the key of an
        episode run now, so it is reported but never reused."""
        return cls(cls.PREFIX + "legacy-" + content_hash(list(parts))[:32])

    @property
    def is_legacy(self) -> bool:
        return self.startswith(self.PREFIX + "legacy-")


EPISODE_JOURNAL = ""
"""The journal of an episode's own calls (agent, user); judges have ``judge_journal(...)``."""


def judge_journal(judge: str, method: str) -> str:
    """Where a judge's calls for one episode are journaled (under the episode's key)."""
    return f"judge|{judge}|{method}"
