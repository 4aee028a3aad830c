"""VitaBench tools: the general tools plus one module per service domain.

Adding a domain is adding its module and one line in ``_DOMAINS``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from ...datasets.task import Task, TaskError
from ..base import Toolkit
from . import delivery, general
from .db import Database

_GENERAL = Toolkit.from_module(general, "general")
_DOMAINS = {
    "delivery": Toolkit.from_module(delivery, "delivery"),
}


@cache
def _toolkit(domains: tuple[str, ...]) -> Toolkit:
    """The domains' tools, then the general ones: upstream's order, which models see."""
    return Toolkit().merge(*(_DOMAINS[d] for d in domains), _GENERAL)


class VitaBenchTools:
    """The ``BenchmarkTools`` of VitaBench."""

    def toolkit(self, task: Task) -> Toolkit:
        unknown = [d for d in task.domains if d not in _DOMAINS]
        if unknown:
            raise TaskError(f"task {task.id} ({task.source}): no VitaBench tools for domain "
                            f"{', '.join(unknown)}; known: {', '.join(_DOMAINS)}")
        return _toolkit(task.domains)

    def new_state(self, task: Task) -> Database:
        return Database.from_task(task)

    def final_state(self, state: Database) -> dict[str, Any]:
        return {"orders": msgspec.to_builtins(state.orders)}

    def descriptions(self, task: Task, data_dir: Path | None) -> dict[str, dict] | None:
        return None


TOOLS = VitaBenchTools()
