"""Identities and vocabularies, in one place: keys of tasks and episodes, and the closed sets of
names (termination reasons, judge methods, user modes, episode statuses) that the store, the
judges, the runner and the reports compare against.

Keys are plain strings on disk and over HTTP; these types are the only code that formats or
parses them:

- a task key is ``benchmark:domain:lang:id`` (the domain may be a comma composition; the id
  may contain ``:``, so parsing splits at most three times);
- an episode id is ``model|task key|trial`` (endpoint names may not contain ``|``);
- a judge journal id is ``judge|<judge>|<method>|<episode id>``: a judge's calls are journaled
  apart from the episode's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "FAILED_TERMINATIONS", "EpisodeId", "EpisodeStatus", "JudgeMethod", "STATE_JUDGE", "TaskKey",
    "TerminationReason", "UserMode", "judge_journal_id",
]


class TerminationReason(StrEnum):
    """Why an episode ended."""

    USER_STOP = "user_stop"
    AGENT_STOP = "agent_stop"
    MAX_TURNS = "max_turns"
    TOO_MANY_ERRORS = "too_many_errors"
    EXIT_CHECK = "exit_check"  # the benchmark's exit-check model ended the conversation
    AGENT_DONE = "agent_done"  # solo mode: the agent answered with text (nobody to answer it)
    ERROR = "error"  # a model call failed for good, or the episode could not run
    CONTEXT_OVERFLOW = "context_overflow"  # a prompt no longer fit the model's context
    TRUNCATED = "truncated"  # a reply was cut short (finish_reason "length" and the like)


FAILED_TERMINATIONS = frozenset({TerminationReason.ERROR, TerminationReason.CONTEXT_OVERFLOW,
                                 TerminationReason.TRUNCATED})
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
    SOLO = "solo"  # no user: the agent gets the whole instruction up front


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


def judge_journal_id(judge: str, method: str, episode_id: str) -> str:
    """Where a judge's calls for one episode are journaled."""
    return f"judge|{judge}|{method}|{episode_id}"
