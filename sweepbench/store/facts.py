"""An episode's facts (schema version 6, ``episode_facts``): the few numbers of its record that
reports and exports read (its counts, wall time, agent and user usage, the error text),
written with the record so that neither decodes a transcript."""

from __future__ import annotations

from msgspec import Struct

from sweepbench.wire import EpisodeRecord, Usage

__all__ = ["EpisodeFacts", "facts_of", "facts_row"]


class EpisodeFacts(Struct):
    """What a profile reads of a record (``model`` and ``domain``: the report's row name and
    the episode's domain, which a profile groups by)."""

    episode_key: str
    turns: int
    steps: int
    agent_calls: int
    user_calls: int
    tool_calls: int
    tool_errors: int
    wall_s: float
    agent_usage: Usage
    user_usage: Usage
    error: str | None
    model: str = ""
    domain: str = ""


def _usage(u: Usage) -> tuple[int, int, int, int]:
    return (u.prompt_tokens, u.completion_tokens, u.cached_prompt_tokens, u.reasoning_tokens)


def facts_row(episode_key: str, record: EpisodeRecord) -> tuple:
    """The ``episode_facts`` row of a record."""
    return (episode_key, record.turns, record.steps, record.agent_calls, record.user_calls,
            record.tool_calls, record.tool_errors, record.wall_s,
            *_usage(record.agent_usage), *_usage(record.user_usage), record.error)


def facts_of(row: tuple) -> EpisodeFacts:
    """An ``episode_facts`` row (as ``facts_row`` makes it) read back."""
    *counts, wall, ap, ac, acached, ar, up, uc, ucached, ur, error = row
    return EpisodeFacts(*counts, wall, Usage(ap, ac, acached, ar), Usage(up, uc, ucached, ur),
                        error)
