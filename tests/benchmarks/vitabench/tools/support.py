"""Helpers the tools tests of both releases share (imported, not a conftest)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sweepbench.datasets.task import Task
from sweepbench.tools.base import ToolOutcome


def caller(task: Task, default: Any) -> Callable[..., ToolOutcome]:
    """``call(db, name, tools=default, **args)``: one call of ``task``'s tool ``name`` in the
    release whose tools are ``tools`` (a ``VitaBenchTools``)."""

    def call(db: Any, name: str, tools: Any = default, **args: Any) -> ToolOutcome:
        return tools.toolkit(task).call(db, name, json.dumps(args))

    return call


def said(outcome: ToolOutcome) -> tuple[str, bool]:
    """What the model reads and whether it counts as no error."""
    return outcome.content, outcome.ok
