"""An episode's facts row: every field of the record in its column, read back as written."""

from __future__ import annotations

from sweepbench.store.facts import EpisodeFacts, facts_of, facts_row
from sweepbench.wire import EpisodeRecord, Usage


def _record(**kw) -> EpisodeRecord:
    # every count distinct, so a field read into another's place shows
    base = {"turns": 3, "steps": 5, "agent_calls": 7, "user_calls": 11, "tool_calls": 13,
            "tool_errors": 17, "wall_s": 19.5,
            "agent_usage": Usage(prompt_tokens=23, completion_tokens=29,
                                 cached_prompt_tokens=31, reasoning_tokens=37),
            "user_usage": Usage(prompt_tokens=41, completion_tokens=43,
                                cached_prompt_tokens=47, reasoning_tokens=53),
            "error": "ModelError: boom"}
    return EpisodeRecord(run_id="r", model="m", benchmark="b", domain="d", task_id="t",
                         trial=0, termination="done", **{**base, **kw})


def test_facts_row_lists_the_record_in_column_order():
    row = facts_row("ep-1", _record())
    assert row == ("ep-1", 3, 5, 7, 11, 13, 17, 19.5, 23, 29, 31, 37, 41, 43, 47, 53,
                   "ModelError: boom")


def test_facts_read_back_as_written():
    facts = facts_of(facts_row("ep-1", _record()))
    assert facts == EpisodeFacts(
        episode_key="ep-1", turns=3, steps=5, agent_calls=7, user_calls=11, tool_calls=13,
        tool_errors=17, wall_s=19.5, agent_usage=Usage(23, 29, 31, 37),
        user_usage=Usage(41, 43, 47, 53), error="ModelError: boom")
    assert (facts.model, facts.domain) == ("", "")  # the report fills them in
    assert facts_of(facts_row("ep-2", _record(error=None))).error is None
