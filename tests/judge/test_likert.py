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
