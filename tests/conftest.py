"""Shared fixtures: the real benchmark data (skipped when absent) and an in-process plan runner."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from sweepbench.benchmarks import registry
from sweepbench.simulator.scripted.plan import UnresolvedReference, resolve

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


@pytest.fixture(scope="session")
def shared_root() -> Path:
    """Where the shared data dir should be (``../shared/data`` beside the repo), present or not."""
    return SHARED_DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data dir (``../shared/data`` beside the repo); skips tests that need it."""
    if not (SHARED_DATA / "vitabench").is_dir():
        pytest.skip(f"real VitaBench data is not at {SHARED_DATA.resolve() / 'vitabench'}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def run_plan():
    """Execute plan steps in-process: ``run(task, steps) -> (final_state, error outputs)``."""

    def run(task, steps):
        tools = registry.get(task.benchmark)
        kit, state = tools.toolkit(task), tools.new_state(task)
        outputs: list[str | None] = []
        errors: list[str] = []
        for step in steps:
            try:
                args = resolve(step.arguments, outputs)
            except UnresolvedReference as exc:
                outputs.append(None)
                errors.append(str(exc))
                continue
            out = kit.call(state, step.tool, msgspec.json.encode(args))
            outputs.append(out.content if out.ok else None)
            if not out.ok:
                errors.append(out.content)
        return tools.final_state(state), errors

    return run
