"""The Likert judge engine: fatal errors end it at once, a retry is a different request, and a
reply that only repeats the prompt is not a verdict (issue 15, defect 6)."""

from __future__ import annotations

import json
import re

import pytest

from sweepbench.errors import ContextLengthError, ServerError
from sweepbench.judge.likert import NUDGE, echoes, likert_judgment
from sweepbench.wire import AssistantMessage, UserMessage

PROMPT = """Rate the conversation below from 1 to 5.

## CONVERSATION
[User] I need a table for two tonight.
[Assistant] Booked: Trattoria Roma at 19:30.

Answer with a JSON object, for example:
{"helpfulness": 4, "coherence": 5}
"""


def parse(text: str):
    m = re.search(r'\{"helpfulness": ([1-5]), "coherence": ([1-5])\}', text)
    if not m:
        return None
    h, c = int(m.group(1)), int(m.group(2))
    return {"helpfulness": h, "coherence": c, "overall": (h + c) / 2}


class Reply:
    def __init__(self, content):
        self.message = AssistantMessage(content)


def judge(*answers):
    """A judge call answering ``answers`` in order (an exception is raised)."""
    requests = []

    async def call(req):
        requests.append(req)
        answer = answers[min(len(requests) - 1, len(answers) - 1)]
        if isinstance(answer, BaseException):
            raise answer
        return Reply(answer)

    call.requests = requests
    return call


async def test_a_readable_reply_is_the_verdict() -> None:
    call = judge('Here: {"helpfulness": 3, "coherence": 5}')
    out = await likert_judgment(PROMPT, parse, call)
    assert out == {"passed": None, "score": 0.75,
                   "details": {"helpfulness": 3, "coherence": 5, "overall": 4.0}}
    assert len(call.requests) == 1


@pytest.mark.parametrize("error", [
    ContextLengthError("judge: HTTP 400: This model's maximum context length is 8192 tokens",
                       endpoint="judge", status=400),
    ServerError("judge: HTTP 500: boom", endpoint="judge", status=500),  # retried by the client
])
async def test_a_failed_call_ends_the_judgment_at_once(error) -> None:
    call = judge(error, '{"helpfulness": 3, "coherence": 5}')
    with pytest.raises(type(error)):
        await likert_judgment(PROMPT, parse, call)
    assert len(call.requests) == 1  # never asked again


async def test_a_retry_is_a_different_request_with_a_nudge() -> None:
    call = judge("I think it went fine.", '{"helpfulness": 2, "coherence": 4}')
    out = await likert_judgment(PROMPT, parse, call)
    assert out["score"] == 0.5
    first, second = call.requests
    assert first.messages == [UserMessage(PROMPT)]
    assert second.messages == [UserMessage(PROMPT), AssistantMessage("I think it went fine."),
                               UserMessage(NUDGE)]
    assert [r.sweepbench["attempt"] for r in call.requests] == [0, 1]


async def test_a_reply_that_echoes_the_prompt_is_not_a_verdict() -> None:
    assert parse(PROMPT) is not None  # the example in the prompt reads as scores...
    call = judge(PROMPT, PROMPT.split("## CONVERSATION")[1], PROMPT)
    with pytest.raises(ValueError, match="no readable scores in 3 attempts"):
        await likert_judgment(PROMPT, parse, call)  # ...but repeating it is no verdict
    assert len(call.requests) == 3
    later = judge(PROMPT, 'Sorry. {"helpfulness": 5, "coherence": 5}')
    assert (await likert_judgment(PROMPT, parse, later))["score"] == 1.0


def test_echoes() -> None:
    assert echoes(PROMPT, PROMPT)
    whole = PROMPT.split("## CONVERSATION")[1].replace("\n", "   ")
    assert echoes(whole, PROMPT)  # whitespace aside
    copied = "[User] I need a table for two tonight.\n[Assistant] Booked: Trattoria Roma at 19:30."
    assert echoes(copied + '\n{"helpfulness": 4, "coherence": 5}', PROMPT)
    # a short verdict that happens to match the prompt's example still counts
    assert not echoes('{"helpfulness": 4, "coherence": 5}', PROMPT)
    own = json.dumps({"helpfulness": 4, "coherence": 5, "reasoning": "The booking was made at "
                      "once and confirmed with a time; nothing was lost along the way."})
    assert not echoes(copied + "\n" + own, PROMPT)  # mostly its own words
    assert not echoes("", PROMPT)


# ---- edges: the echo thresholds, the attempts, the requests ---------------------------------

SOURCE = ("Rate the assistant replies for helpfulness and coherence on a scale from one to five, "
          "then explain every score you gave in a sentence or two. Keep the explanation short.")
COPY_80 = "the assistant replies for helpfulness and coherence on a scale from one to five,"
COPY_68 = "one to five, then explain every score you gave in a sentence or two."
COPY_69 = "to five, then explain every score you gave in a sentence or two. Keep"
OWN_80 = "My view: helpfulness 4 and coherence 5, since the table was booked at once, fine"


def test_a_reply_copied_whole_is_an_echo_from_80_characters():
    assert (len(COPY_80), len(COPY_80[1:])) == (80, 79)
    assert echoes(COPY_80, SOURCE)
    assert echoes(f"  {COPY_80.replace(' ', chr(10), 3)}\n", SOURCE)  # whitespace aside
    assert not echoes(COPY_80[1:], SOURCE)  # 79: a short verdict may match by chance


def test_copied_lines_count_from_12_characters_and_must_make_80():
    assert (len(COPY_68), len(COPY_69), len(OWN_80)) == (68, 69, 80)
    # 68 + 12 copied of 160: half the reply, 80 characters
    assert echoes(f"{COPY_68}\nthen explain\n{OWN_80}", SOURCE)
    # 69 + 11: a copied line of 11 characters does not count, so 69 < 80
    assert not echoes(f"{COPY_69}\nthen explai\n{OWN_80[:-1]}", SOURCE)


def test_copied_lines_must_be_at_least_the_share_asked_of_the_reply():
    assert echoes(f"{COPY_68}\nthen explain\n{OWN_80}", SOURCE)  # 80 of 160: 0.5
    assert not echoes(f"{COPY_68}\nthen explain\n{OWN_80}.", SOURCE)  # 80 of 161
    assert not echoes(f"{COPY_68}\nthen explain\n{OWN_80}", SOURCE, share=0.51)
    assert echoes(f"{COPY_68}\nthen explain\n{OWN_80}.", SOURCE, share=0.49)


async def test_each_request_is_marked_as_a_likert_judge_attempt_and_the_score_maps_1_to_5_onto_0_to_1():
    call = judge("unreadable", '{"helpfulness": 1, "coherence": 1}')
    out = await likert_judgment(PROMPT, parse, call)
    assert out == {"passed": None, "score": 0.0,
                   "details": {"helpfulness": 1, "coherence": 1, "overall": 1.0}}
    assert [r.sweepbench for r in call.requests] == [
        {"role": "judge", "method": "likert", "attempt": 0},
        {"role": "judge", "method": "likert", "attempt": 1}]
    assert [r.model for r in call.requests] == ["", ""]  # the client names its model
    assert (await likert_judgment(PROMPT, parse, judge('{"helpfulness": 5, "coherence": 5}')))[
        "score"] == 1.0


async def test_the_nudge_asks_for_the_json_object_and_can_be_replaced():
    assert NUDGE == ("Your reply could not be read as a verdict. Answer with only the JSON object "
                     "the instructions ask for, with your own score for each criterion.")
    call = judge("?", '{"helpfulness": 4, "coherence": 4}')
    await likert_judgment(PROMPT, parse, call, nudge="Scores only, please.")
    assert call.requests[1].messages[-1] == UserMessage("Scores only, please.")


async def test_an_empty_reply_is_unreadable_and_kept_as_empty_text():
    call = judge(None, '{"helpfulness": 4, "coherence": 2}')
    assert (await likert_judgment(PROMPT, parse, call))["score"] == 0.5
    assert call.requests[1].messages[1] == AssistantMessage("")


async def test_the_number_of_attempts_is_the_callers():
    one = judge("no", '{"helpfulness": 4, "coherence": 4}')
    with pytest.raises(ValueError, match="no readable scores in 1 attempts"):
        await likert_judgment(PROMPT, parse, one, attempts=1)
    assert len(one.requests) == 1
    none = judge('{"helpfulness": 4, "coherence": 4}')
    with pytest.raises(ValueError, match="in 0 attempts"):
        await likert_judgment(PROMPT, parse, none, attempts=0)
    assert none.requests == []
    fourth = judge("a", "b", "c", '{"helpfulness": 3, "coherence": 3}')
    with pytest.raises(ValueError, match="in 3 attempts"):
        await likert_judgment(PROMPT, parse, fourth)  # three by default
    assert (await likert_judgment(PROMPT, parse, judge("a", "b", "c", '{"helpfulness": 3, '
                                                        '"coherence": 3}'), attempts=4))["score"] == 0.5
