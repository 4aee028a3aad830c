"""VitaBench tools: the general tools plus one toolkit per service domain.

Adding a domain is adding its modules and one line in ``_DOMAINS``. A task of several domains
(a cross-domain composition) gets the union of their tools over one database that holds every
domain's tables.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from sweepbench.benchmarks.vitabench.tools import (
    delivery,
    general,
    instore,
    ota,
    ota_orders,
)
from sweepbench.benchmarks.vitabench.tools.db import Database
from sweepbench.benchmarks.vitabench.tools.descriptions import descriptions_for
from sweepbench.benchmarks.vitabench.tools.graph import graph_stats
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError
from sweepbench.tools.base import Toolkit

_GENERAL = Toolkit.from_module(general, "general")
_DOMAINS = {
    "delivery": Toolkit.from_module(delivery, "delivery"),
    "instore": Toolkit.from_module(instore, "instore"),
    "ota": Toolkit.from_module(ota, "ota").merge(Toolkit.from_module(ota_orders, "ota")),
}
DOMAINS = tuple(_DOMAINS)


@cache
def _toolkit(domains: tuple[str, ...]) -> Toolkit:
    """The domains' tools, then the general ones: upstream's order, which models see."""
    return Toolkit().merge(*(_DOMAINS[d] for d in domains), _GENERAL)


def all_tools() -> Toolkit:
    """All 66 tools: what a composition of every domain sees."""
    return _toolkit(DOMAINS)


def toolkit_for(domains: tuple[str, ...]) -> Toolkit:
    """The toolkit of a domain or a composition, e.g. ("delivery", "instore")."""
    unknown = [d for d in domains if d not in _DOMAINS]
    if unknown or not domains:
        raise ValueError(f"no VitaBench tools for domain {', '.join(unknown) or '(none)'}; "
                         f"known: {', '.join(_DOMAINS)}")
    return _toolkit(tuple(domains))


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
        """Orders of every domain, and in-store bookings and reservations."""
        return {"orders": msgspec.to_builtins(state.orders),
                "books": msgspec.to_builtins(state.books),
                "reservations": msgspec.to_builtins(state.reservations)}

    def descriptions(self, task: Task, data_dir: Path | None) -> dict[str, dict] | None:
        """Upstream's descriptions (with pre- and postconditions) in the task's language for
        the task's tools, when the data dir has them; else None (the code's own)."""
        return descriptions_for(self.toolkit(task), task.lang, data_dir)

    def graph_stats(self, toolkit: Toolkit) -> dict[str, float]:
        """{"edges", "density"} of the toolkit's tool-dependency graph (the paper's Table 6)."""
        return graph_stats(toolkit)


TOOLS = VitaBenchTools()
