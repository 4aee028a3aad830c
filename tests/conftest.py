"""Shared fixtures: the real benchmark data (skipped when absent) and an in-process plan runner."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import msgspec
import pytest

from sweepbench.benchmarks import registry
from sweepbench.simulator.scripted.plan import UnresolvedReference, resolve

SHARED_DATA = Path(os.environ.get("SWEEPBENCH_TEST_DATA")
                   or Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
SHARED_DATA_V2 = Path(os.environ.get("SWEEPBENCH_TEST_DATA_V2") or SHARED_DATA.parent / "data-v2")
"""Each overridable, to run the parity tests on another data dir of the same release (one
built by ``sweepbench data vitabench``, with the goldens beside it)."""


@pytest.fixture(autouse=True)
def _event_loop_policy_restored():
    """A test that runs the CLI leaves the event loop policy as it found it: ``run`` installs
    uvloop's for the whole process, and a later test on a :class:`VirtualClock` (which needs
    asyncio's own loop) would then wait forever, pytest-timeout's alarm unheard by an idle
    uvloop. mutmut runs the tests twice in one process, so its clean run hung on this."""
    policy = asyncio.get_event_loop_policy()
    yield
    asyncio.set_event_loop_policy(policy)


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
def shared_data_v2() -> Path:
    """The shared data dir of VitaBench's updated release (``../shared/data-v2``: its task
    files and upstream's traces at 742e240); skips tests that need it."""
    if not (SHARED_DATA_V2 / "vitabench").is_dir():
        pytest.skip(f"VitaBench's updated-release data is not at {SHARED_DATA_V2.resolve() / 'vitabench'}")
    return SHARED_DATA_V2


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


@pytest.fixture
def interrupt():
    """``await interrupt(sweep, after=5)``: run ``sweep`` and cancel it (as Ctrl-C inside the
    process would) once ``after`` more episodes have finished and others are partway."""

    async def run(sweep, after: int = 5) -> None:
        finished = 0
        done = asyncio.Event()

        def progress(kind, **info):
            nonlocal finished
            finished += kind == "finished"
            if finished == after:
                done.set()

        sweep.progress = progress
        task = asyncio.create_task(sweep.run())
        await done.wait()
        await asyncio.sleep(0.03)  # let in-flight episodes get partway
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    return run
