"""The Likert judge engine: one prompt, a reply parsed into 1-5 scores, asked again when unreadable.

The benchmark supplies the prompt and the parser (T1's §3.2.2 judge rates helpfulness and
coherence); the engine asks up to ``attempts`` times and maps the overall score to [0, 1].

- A failed call ends the judgment at once: the model client already retried what was worth
  retrying, and a fatal error (a prompt too long for the judge's context, a bad request)
  would fail the same way again.
- An unreadable reply is followed by a nudge in the same conversation (the reply, then
  ``nudge``), so the next attempt is a different request, not the same one again.
- A reply that only repeats the prompt is not a verdict, even where a score can be read from
  it (a prompt may show the answer format with numbers in it): see :func:`echoes`.

A judge that never answers readably raises :class:`NoVerdict`, which the judge pool records
as an unjudged episode, never as a score.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from sweepbench.wire import AssistantMessage, ChatRequest, Message, UserMessage

__all__ = ["NUDGE", "NoVerdict", "echoes", "likert_judgment"]

NUDGE = ("Your reply could not be read as a verdict. Answer with only the JSON object the "
         "instructions ask for, with your own score for each criterion.")



class NoVerdict(ValueError):
    """The judge answered, and nothing it said was a verdict: the judge's failure, not the
    episode's (the pool leaves the episode unjudged, to be judged again)."""


_SPACE = re.compile(r"\s+")
_MIN_LINE = 12  # shorter lines ("{", "}", a key) occur in any JSON and say nothing
_MIN_ECHO = 80  # a short verdict may match the prompt's example; a long copy is an echo


def echoes(reply: str, prompt: str, *, share: float = 0.5) -> bool:
    """Whether ``reply`` is mostly the prompt repeated: at least ``_MIN_ECHO`` characters
    copied verbatim from it (the whole reply, or whole lines of it), making up at least
    ``share`` of the reply's text. Whitespace does not count."""
    text = _SPACE.sub(" ", reply).strip()
    if len(text) < _MIN_ECHO:
        return False
    source = _SPACE.sub(" ", prompt)
    if text in source:
        return True
    lines = [_SPACE.sub(" ", line).strip() for line in reply.splitlines()]
    total = sum(len(line) for line in lines)
    copied = sum(len(line) for line in lines if len(line) >= _MIN_LINE and line in source)
    return copied >= _MIN_ECHO and copied >= share * total


async def likert_judgment(prompt: str, parse: Callable[[str], dict[str, Any] | None],
                          call: Callable[[ChatRequest], Awaitable[Any]], *,
                          attempts: int = 3, nudge: str = NUDGE) -> dict[str, Any]:
    """``{"passed": None, "score": (overall - 1) / 4, "details": scores}`` from the first
    readable reply; ``parse`` returns the scores (with ``overall`` in 1..5) or None."""
    messages: list[Message] = [UserMessage(prompt)]
    for attempt in range(attempts):
        req = ChatRequest(model="", messages=list(messages),
                          sweepbench={"role": "judge", "method": "likert", "attempt": attempt})
        text = (await call(req)).message.content or ""  # a ModelError ends it here
        scores = None if echoes(text, prompt) else parse(text)
        if scores is not None:
            return {"passed": None, "score": (scores["overall"] - 1) / 4, "details": scores}
        messages += [AssistantMessage(text), UserMessage(nudge)]
    raise NoVerdict(f"Likert judge gave no readable scores in {attempts} attempts")
