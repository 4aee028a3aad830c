"""VitaBench tools: the general tools plus one toolkit per service domain.

Adding a domain is adding its modules and one line in ``_DOMAINS``. An environment of one
domain offers that domain's tools, then the general ones; a merged environment of several
(a cross-domain task) offers the general tools first, then each domain's in the order listed,
over one state holding every listed domain's tables: upstream's orders, which models see.
Every toolkit calls its tools as upstream does (``calling.UPSTREAM``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from sweepbench.benchmarks.vitabench.tools import (
    delivery,
    general,
    instore,
    ota,
    ota_orders,
)
from sweepbench.benchmarks.vitabench.tools.calling import UPSTREAM
from sweepbench.benchmarks.vitabench.tools.descriptions import descriptions_for
from sweepbench.benchmarks.vitabench.tools.final import final_view
from sweepbench.benchmarks.vitabench.tools.graph import graph_stats
from sweepbench.benchmarks.vitabench.tools.state import ToolState, env_domains
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError
from sweepbench.tools.base import Toolkit

_GENERAL = Toolkit.from_module(general, "general", policy=UPSTREAM)
_DOMAINS = {
    "delivery": Toolkit.from_module(delivery, "delivery", policy=UPSTREAM),
    "instore": Toolkit.from_module(instore, "instore", policy=UPSTREAM),
    "ota": Toolkit.from_module(ota, "ota", policy=UPSTREAM).merge(
        Toolkit.from_module(ota_orders, "ota", policy=UPSTREAM)),
}
DOMAINS = tuple(_DOMAINS)


@cache
def _toolkit(domains: tuple[str, ...]) -> Toolkit:
    if len(domains) == 1:
        return _DOMAINS[domains[0]].merge(_GENERAL)
    return _GENERAL.merge(*(_DOMAINS[d] for d in domains))


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
    """The tools side of the VitaBench benchmark: toolkits, episode state and its views."""

    def toolkit(self, task: Task) -> Toolkit:
        domains = env_domains(task.domains)
        unknown = [d for d in domains if d not in _DOMAINS]
        if unknown or not domains:
            raise TaskError(f"task {task.id} ({task.source}): no VitaBench tools for domain "
                            f"{', '.join(unknown) or '(none)'}; known: {', '.join(_DOMAINS)}")
        return _toolkit(domains)

    def new_state(self, task: Task) -> ToolState:
        return ToolState(task, env_domains(task.domains))

    def final_state(self, state: ToolState) -> dict[str, Any]:
        """Orders of every domain, and in-store bookings and reservations."""
        return final_view(state)

    def record_ids(self, state: ToolState) -> list[str]:
        """The ids of every order, booking and reservation, in the order they were added."""
        return [key for table in (state.orders, state.books, state.reservations) if table
                for key in table]

    def descriptions(self, task: Task, data_dir: Path | None) -> dict[str, dict] | None:
        """Upstream's descriptions in the task's language for the task's tools, when the data
        dir has them; else None (the code's own)."""
        return descriptions_for(self.toolkit(task), task.lang, data_dir)

    def graph_stats(self, toolkit: Toolkit) -> dict[str, float]:
        """{"edges", "density"} of the toolkit's tool-dependency graph (the paper's Table 6)."""
        return graph_stats(toolkit)


TOOLS = VitaBenchTools()
