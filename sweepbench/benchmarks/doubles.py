"""The scripted test doubles' view of the benchmarks: tasks, gold plans and judges by lookup.

``scripted_models()`` is what the reference server resolves model names with: the generic
doubles of :mod:`sweepbench.simulator.scripted.models`, told about benchmarks through the
registry (one lookup per request, never a comparison with a benchmark's name).
"""

from __future__ import annotations

import os
import random
from functools import cache
from typing import Any, Callable

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.catalog import find_task, load_tasks
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError
from sweepbench.simulator.scripted.models import Policy, scripted_resolver
from sweepbench.simulator.scripted.plan import Step
from sweepbench.wire import AssistantMessage, ChatRequest

__all__ = ["RegistryWorld", "scripted_models"]


class RegistryWorld:
    """A :class:`~sweepbench.simulator.scripted.models.ScriptedWorld` over the registry."""

    def __init__(self) -> None:
        self._plans: dict[str, list[Step]] = {}
        self._tasks: dict[tuple, Task] = {}

    def task(self, meta: dict[str, Any]) -> Task:
        """The request's task, remembered by what names it (the data dir as sent and as the
        environment gives it): every request asks again, and finding it parses the spec and,
        with a data dir, resolves and stats the path (31 µs a lookup; 3.6 on the samples)."""
        spec, key, data_dir = meta["spec"], meta["task"], meta.get("data_dir")
        lang = meta.get("lang", "en")
        name = (spec, key, data_dir, lang, os.environ.get("SWEEPBENCH_DATA"))
        try:
            return self._tasks[name]
        except KeyError:
            pass
        except TypeError:  # not a name (a list, a dict): find_task says what is wrong
            return find_task(spec, key, data_dir=data_dir, lang=lang)
        self._tasks[name] = find_task(spec, key, data_dir=data_dir, lang=lang)
        return self._tasks[name]

    def gold_plan(self, task: Task) -> list[Step]:
        key = f"{task.key}|{task.source}"
        if key not in self._plans:
            self._plans[key] = registry.get(task.benchmark).gold_plan(task)
        return self._plans[key]

    def corrupt(self, step: Step, rng: random.Random, task: Task) -> Step:
        return registry.get(task.benchmark).corrupt(step, rng, task)

    def referee(self, role: str, task: Task) -> AssistantMessage | None:
        return registry.get(task.benchmark).scripted_referee(role, task)

    def judge(self, req: ChatRequest) -> AssistantMessage:
        method = (req.sweepbench or {}).get("method", "sliding")
        try:
            owner = registry.judge_owner(method)
        except TaskError as exc:
            raise ValueError(str(exc)) from None
        return owner.scripted_judge(req)


@cache
def _world() -> RegistryWorld:
    return RegistryWorld()


@cache
def scripted_models() -> Callable[[str], Policy | None]:
    """Name -> scripted policy (None when not a scripted model), shared by every server."""
    return scripted_resolver(_world())


def warm(spec: str, *, data_dir: str | None = None, lang: str = "en") -> int:
    """Load ``spec``'s tasks and their gold plans before the first request; how many tasks.

    Otherwise a served double's first wave of requests waits on the benchmark's imports and
    task files (a few tenths of a second with every call of a sweep's first wave in flight), a
    cold start of the test double that no real endpoint would charge the harness."""
    tasks = load_tasks(spec, data_dir=data_dir, lang=lang)
    for task in tasks:
        _world().gold_plan(task)
    return len(tasks)
