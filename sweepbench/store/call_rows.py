"""A journaled model call as reads return it, and the chunks of keys reads ask for (shared by
:mod:`sweepbench.store.reads` and :mod:`sweepbench.store.fact_scan`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from msgspec import Struct

__all__ = ["ModelCallRow", "chunks"]


class ModelCallRow(Struct, array_like=True):
    """One journaled model call, as cost and profile read it (usage from its payload)."""

    episode_key: str
    journal: str
    run_id: str | None
    endpoint: str | None
    role: str | None
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int
    latency_s: float | None
    attempts: int | None
    statuses: str | None  # JSON text of the HTTP statuses of its attempts, when recorded
    stalls: str | None = None  # JSON text of its hung and hedged requests, when it had any
    replica: str | None = None  # the way in that answered, for a model with several
    failures: str | None = None  # JSON text of its failed requests, when it had any


def chunks(values: Iterable[str], n: int = 900) -> Iterable[list[str]]:
    it = iter(values)
    while chunk := list(itertools.islice(it, n)):
        yield chunk

