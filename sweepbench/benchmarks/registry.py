"""What an episode needs from a benchmark's tools, behind one small protocol.

The simulator asks the registry for the benchmark of a task and gets a toolkit, a fresh
mutable state for one episode, and the final state the judges check. Benchmarks are imported
on first use, not at import time.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Protocol

from sweepbench.datasets.task import Task
from sweepbench.tools.base import Toolkit


class BenchmarkTools(Protocol):
    def toolkit(self, task: Task) -> Toolkit:
        """The tools the agent may call in this task (merged for cross-domain tasks)."""

    def new_state(self, task: Task) -> Any:
        """A fresh mutable database for one episode; tools take it as their first argument."""

    def final_state(self, state: Any) -> dict[str, Any]:
        """The JSON-able end state the judges check (e.g. all orders)."""

    def descriptions(self, task: Task, data_dir: Path | None) -> dict[str, dict] | None:
        """Tool description overrides {name: {"description", "args"}} or None for the code's own."""


_MODULES = {"vitabench": "sweepbench.benchmarks.vitabench.tools", "t1": "sweepbench.benchmarks.t1.tools"}


def benchmark_tools(benchmark: str) -> BenchmarkTools:
    try:
        module = importlib.import_module(_MODULES[benchmark])
    except KeyError:
        raise ValueError(f"unknown benchmark {benchmark!r}; known: {', '.join(_MODULES)}") from None
    return module.TOOLS
