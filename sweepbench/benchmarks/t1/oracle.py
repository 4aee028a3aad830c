"""The scripted oracle's view of a T1 task: its gold calls as a plan, and how to spoil a step.

Gold calls are stored as executed; an argument that came from an earlier call's output (a
cache key, the first result's id, a new reservation's id) is turned back into a
``$from_step`` reference, so the oracle reads it from the conversation like a model would.
"""

from __future__ import annotations

import random
from typing import Any

from sweepbench.datasets.task import Task
from sweepbench.simulator.scripted.plan import Step


def gold_plan(task: Task) -> list[Step]:
    steps = []
    for g in task.evaluation["gold_calls"]:
        arguments = dict(g["arguments"])
        for name, (step, path) in g.get("refs", {}).items():
            arguments[name] = {"$from_step": step, "$field": path}
        steps.append(Step(tool=g["tool"], arguments=arguments, note=f"calling {g['tool']}"))
    return steps


def _spoil(value: Any, rng: random.Random) -> Any:
    """A value the metrics cannot mistake for ``value``."""
    if isinstance(value, dict) and "$from_step" in value:
        return "unknown-reference"
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + rng.choice([1, 2, 3])
    if isinstance(value, str):
        return value + rng.choice(["x", " 2", "s"])
    if isinstance(value, list):
        return value[:-1] if len(value) > 1 else value + value
    if isinstance(value, dict) and value:
        return {k: v for k, v in value.items() if k != sorted(value)[0]}
    return "wrong"


def corrupt(step: Step, rng: random.Random, task: Task) -> Step:
    """The step with one argument dropped or changed: a parameter error the metrics count."""
    arguments = dict(step.arguments)
    name = rng.choice(sorted(arguments))
    if rng.random() < 0.3:
        del arguments[name]
    else:
        arguments[name] = _spoil(arguments[name], rng)
    return Step(tool=step.tool, arguments=arguments, note=step.note)
