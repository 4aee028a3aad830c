"""One Task type for both benchmarks.

A task is what an episode needs: who the user is and what they want, the service database the
tools run over (kept raw here; each benchmark's tools type it), any message history that
prefixes the conversation, and the criteria the judges use. Task files are untrusted input, so
loaders convert into this type with msgspec and name the file and task on failure.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from sweepbench.ids import TaskKey


class Task(Struct, kw_only=True, frozen=True):
    id: str
    benchmark: str  # "vitabench" | "t1"
    domain: str  # a single domain, or "delivery,instore" for a cross-domain composition
    lang: str = "en"
    instructions: str
    persona: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    message_history: list[dict[str, Any]] = field(default_factory=list)
    evaluation: dict[str, Any] = field(default_factory=dict)
    max_turns: int = 30
    source: str = ""  # file the task came from, for error messages

    @property
    def domains(self) -> tuple[str, ...]:
        return tuple(self.domain.split(","))

    @property
    def key(self) -> str:
        """Identity across benchmarks and languages: what the store keys episodes by."""
        return str(TaskKey(self.benchmark, self.domain, self.lang, self.id))
