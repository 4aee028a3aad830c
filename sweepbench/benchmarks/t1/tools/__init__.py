"""T1-Bench tools: the 74 domain tools of the paper's Table 5 plus the two cache tools.

``TOOLS`` implements the registry's ``BenchmarkTools``: a task's toolkit is its domains'
tools plus ``save_to_cache`` and ``get_results_from_cache``; its state is an ``Episode``
overlay on the shared read-only knowledge base, on the task's clock.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from sweepbench.benchmarks.t1.data.kb import DEFAULT_SEED, knowledge_base
from sweepbench.benchmarks.t1.data.ontology import DOMAINS
from sweepbench.benchmarks.t1.data.splits import domains_of
from sweepbench.benchmarks.t1.tools import (
    attraction,
    bar,
    cafe,
    cruise,
    dessert,
    flight,
    food_and_dining,
    general,
    hotel,
    kayak_rental,
    live_show,
    vehicle_rental,
)
from sweepbench.benchmarks.t1.tools.state import Episode
from sweepbench.datasets.task import Task
from sweepbench.tools.base import Toolkit

MODULES = {"attraction": attraction, "bar": bar, "cafe": cafe, "cruise": cruise, "dessert": dessert,
           "flight": flight, "food_and_dining": food_and_dining, "hotel": hotel,
           "kayak_rental": kayak_rental, "live_show": live_show, "vehicle_rental": vehicle_rental}
DEFAULT_CLOCK = "2026-04-20 09:00:00"

DOMAIN_TOOLKITS = {d: Toolkit.from_module(MODULES[d], d) for d in DOMAINS}
GENERAL = Toolkit.from_module(general, "general")


def toolkit_for(domains: tuple[str, ...]) -> Toolkit:
    return Toolkit().merge(*(DOMAIN_TOOLKITS[d] for d in DOMAINS if d in domains), GENERAL)


class T1Tools:
    """The BenchmarkTools of T1-Bench."""

    def __init__(self) -> None:
        self._toolkits: dict[tuple[str, ...], Toolkit] = {}

    def toolkit(self, task: Task) -> Toolkit:
        domains = domains_of(task.domain)
        if domains not in self._toolkits:
            self._toolkits[domains] = toolkit_for(domains)
        return self._toolkits[domains]

    def new_state(self, task: Task) -> Episode:
        env = task.environment
        clock = datetime.fromisoformat(str(env.get("time", DEFAULT_CLOCK)))
        return Episode(knowledge_base(int(env.get("kb_seed", DEFAULT_SEED))), clock)

    def final_state(self, state: Episode) -> dict[str, Any]:
        return state.final()

    def descriptions(self, task: Task, data_dir: Path | None) -> dict[str, dict] | None:
        return None  # the paper publishes no tool descriptions: the docstrings are the schema


TOOLS = T1Tools()
