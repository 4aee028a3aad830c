"""VitaBench tools: the general tools plus one toolkit per service domain.

Adding a domain is adding its modules and one line in ``_DOMAINS``. An environment of one
domain offers that domain's tools, then the general ones; a merged environment of several
(a cross-domain task) offers the general tools first, then each domain's in the order listed,
over one state holding every listed domain's tables: upstream's orders, which models see.
Every toolkit calls its tools as upstream does (``calling.UPSTREAM``).

Each upstream release has its own :class:`VitaBenchTools` (``tools_for``): the same functions,
under the release's names (``Release.tool_renames``: the old spelling is then unknown, as
upstream), over a state that carries the release for the tools to read what else differs.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from sweepbench.benchmarks.vitabench.release import RELEASES, Release
from sweepbench.benchmarks.vitabench.tools import (
    delivery,
    general,
    instore,
    ota,
    ota_orders,
)
from sweepbench.benchmarks.vitabench.tools.calling import UPSTREAM, renamed
from sweepbench.benchmarks.vitabench.tools.descriptions import descriptions_for
from sweepbench.benchmarks.vitabench.tools.final import final_view
from sweepbench.benchmarks.vitabench.tools.graph import graph_stats
from sweepbench.benchmarks.vitabench.tools.state import ToolState, env_domains
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError
from sweepbench.tools.base import Toolkit

_MODULES = {"general": (general,), "delivery": (delivery,), "instore": (instore,),
            "ota": (ota, ota_orders)}
DOMAINS = tuple(d for d in _MODULES if d != "general")


@cache
def _kits(release_name: str) -> dict[str, Toolkit]:
    """Domain (and ``general``) -> its toolkit in a release, tools under the release's names."""
    renames = RELEASES[release_name].tool_renames
    kits = {}
    for domain, modules in _MODULES.items():
        tools = [t for m in modules
                 for t in Toolkit.from_module(m, domain, policy=UPSTREAM).tools.values()]
        kits[domain] = Toolkit((renamed(t, renames[t.name]) if t.name in renames else t
                                for t in tools), policy=UPSTREAM)
    return kits


@cache
def _toolkit(release_name: str, domains: tuple[str, ...]) -> Toolkit:
    kits = _kits(release_name)
    if len(domains) == 1:
        return kits[domains[0]].merge(kits["general"])
    return kits["general"].merge(*(kits[d] for d in domains))


class VitaBenchTools:
    """The tools side of one VitaBench release: toolkits, episode state and its views."""

    def __init__(self, rules: Release) -> None:
        self.rules = rules

    def all_tools(self) -> Toolkit:
        """All 66 tools: what a composition of every domain sees."""
        return _toolkit(self.rules.name, DOMAINS)

    def toolkit(self, task: Task) -> Toolkit:
        domains = env_domains(task.domains)
        unknown = [d for d in domains if d not in DOMAINS]
        if unknown or not domains:
            raise TaskError(f"task {task.id} ({task.source}): no VitaBench tools for domain "
                            f"{', '.join(unknown) or '(none)'}; known: {', '.join(DOMAINS)}")
        return _toolkit(self.rules.name, domains)

    def new_state(self, task: Task) -> ToolState:
        return ToolState(task, env_domains(task.domains), rules=self.rules)

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


RELEASE_TOOLS = {name: VitaBenchTools(rules) for name, rules in RELEASES.items()}
"""Release name -> its tools."""
TOOLS = RELEASE_TOOLS["2025-11"]
"""The November release's tools (what a bare ``vitabench`` runs today)."""


def tools_for(rules: Release) -> VitaBenchTools:
    return RELEASE_TOOLS[rules.name]
