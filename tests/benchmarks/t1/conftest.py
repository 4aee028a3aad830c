"""T1 fixtures: one knowledge base and one set of templates for the whole session.

The cache directory is a fresh temporary one, so the session builds the knowledge base and
the templates exactly once (about two seconds) and never reads a stale cache.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from sweepbench.benchmarks.t1.data import kb as kb_module
from sweepbench.benchmarks.t1.data.tasks import all_tasks
from sweepbench.benchmarks.t1.metrics import Call
from sweepbench.benchmarks.t1.tools import TOOLS
from sweepbench.simulator.scripted.plan import UnresolvedReference, resolve


@pytest.fixture(scope="session", autouse=True)
def t1_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        directory = tmp_path_factory.mktemp("t1-cache")
        mp.setenv("SWEEPBENCH_CACHE", str(directory))
        yield directory


@pytest.fixture(scope="session")
def kb(t1_cache):
    return kb_module.knowledge_base()


@pytest.fixture(scope="session")
def tasks(kb):
    return all_tasks()


@pytest.fixture(scope="session")
def run_steps():
    """Execute plan steps in-process as an agent would: ``run(task, steps) -> [Call]``."""

    def run(task, steps):
        kit, state = TOOLS.toolkit(task), TOOLS.new_state(task)
        outputs: list[str | None] = []
        calls = []
        for step in steps:
            try:
                args = resolve(step.arguments, outputs)
            except UnresolvedReference:
                args = {}
            out = kit.call(state, step.tool, msgspec.json.encode(args))
            outputs.append(out.content if out.ok else None)
            calls.append(Call(step.tool, args, out.content))
        return calls

    return run


@pytest.fixture(scope="session")
def t1_data(shared_root: Path) -> Path:
    """The shared data dir holding the paper's T1 prompts; skips the tests that need it."""
    if not (shared_root / "t1" / "prompts").is_dir():
        pytest.skip(f"the paper's T1 prompts are not at {(shared_root / 't1' / 'prompts').resolve()}")
    return shared_root
