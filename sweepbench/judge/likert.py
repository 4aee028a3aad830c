"""The Likert judge engine: one prompt, a reply parsed into 1-5 scores, retried when unreadable.

The benchmark supplies the prompt and the parser (T1's §3.2.2 judge rates helpfulness and
coherence); the engine asks up to ``attempts`` times and maps the overall score to [0, 1].
A judge that never answers readably raises ValueError, which the judge pool records as an
unjudged episode, never as a score.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sweepbench.wire import ChatRequest, UserMessage

__all__ = ["likert_judgment"]


async def likert_judgment(prompt: str, parse: Callable[[str], dict[str, Any] | None],
                          call: Callable[[ChatRequest], Awaitable[Any]], *,
                          attempts: int = 3) -> dict[str, Any]:
    """``{"passed": None, "score": (overall - 1) / 4, "details": scores}`` from the first
    readable reply; ``parse`` returns the scores (with ``overall`` in 1..5) or None."""
    for attempt in range(attempts):
        req = ChatRequest(model="", messages=[UserMessage(prompt)],
                          sweepbench={"role": "judge", "method": "likert", "attempt": attempt})
        scores = parse((await call(req)).message.content or "")
        if scores is not None:
            return {"passed": None, "score": (scores["overall"] - 1) / 4, "details": scores}
    raise ValueError(f"Likert judge gave no readable scores in {attempts} attempts")
