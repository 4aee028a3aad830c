"""The judge pool: finished episodes are judged while the sweep is still running.

Episodes are submitted as they finish; a fixed number of worker coroutines judge them with
every configured judge. The deterministic state check runs inline (it is cheap); LLM judges
call their own endpoint through their own client, so judge models keep their own rate limits.
Judge calls go through a call journal like episode calls, under a journal id of their own
(``judge|<judge>|<method>|<episode id>``), so an interrupted judging resumes without paying
for a call twice. Judgments are versioned by (judge, method) and live side by side.
"""

from __future__ import annotations

import asyncio
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.base import Judgment
from sweepbench.datasets.task import Task
from sweepbench.ids import (
    FAILED_TERMINATIONS,
    STATE_JUDGE,
    EpisodeId,
    JudgeMethod,
    judge_journal_id,
)
from sweepbench.results.store import RunStore
from sweepbench.runner.journal import CallJournal
from sweepbench.wire import EpisodeRecord, encoder


@dataclass(frozen=True)
class JudgeSpec:
    """One judge: ``model`` is an endpoint name (or "state" for the deterministic check)."""

    model: str
    method: str

    @property
    def is_state(self) -> bool:
        return self.model == STATE_JUDGE

    def applies_to(self, benchmark: str) -> bool:
        return self.is_state or self.method in registry.get(benchmark).judge_methods


STATE = JudgeSpec(STATE_JUDGE, JudgeMethod.STATE)


def state_judgment(task: Task, record: EpisodeRecord) -> Judgment:
    """The benchmark's deterministic check; an episode that could not run to its end (an
    error, a context overflow, a truncated reply) fails it."""
    if record.termination in FAILED_TERMINATIONS:
        return {"passed": False, "score": 0.0,
                "details": {"why": f"episode ended in {record.termination}: {record.error}"}}
    return registry.get(task.benchmark).check(task, record)


class JudgePool:
    """Judges submitted episodes with every judge spec; ``drain()`` waits for all of them."""

    def __init__(self, store: RunStore, run_id: str, *, judges: list[JudgeSpec],
                 clients: dict[str, Any], workers: int = 16, data_dir: Path | None = None,
                 on_judged: Callable[[str, JudgeSpec, dict], None] | None = None,
                 observe: Callable[[str, Any], None] | None = None) -> None:
        self.store, self.run_id = store, run_id
        self.judges = judges
        self.clients = clients
        self.data_dir = data_dir
        self.on_judged = on_judged or (lambda eid, spec, judgment: None)
        self.observe = observe  # told (endpoint, result) of every live judge call
        self.queue: asyncio.Queue[tuple[Task, str, EpisodeRecord] | None] = asyncio.Queue()
        self.n_workers = max(1, workers)
        # a judgment that failed (its judge could not answer) is tried again
        self.done = {(j["episode_id"], j["judge"], j["method"]) for j in store.judgments(run_id)
                     if "error" not in (j.get("details") or {})}
        self.judged = self.failed = 0
        self._workers: list[asyncio.Task] = []

    def start(self) -> None:
        self._workers = [asyncio.create_task(self._work()) for _ in range(self.n_workers)]

    def submit(self, task: Task, episode_id: str, record: EpisodeRecord) -> None:
        self.queue.put_nowait((task, episode_id, record))

    def pending(self, episode_id: str) -> bool:
        """Whether some judge that applies to the episode has not judged it yet."""
        benchmark = EpisodeId.parse(episode_id).task.benchmark
        return any((episode_id, j.model, j.method) not in self.done
                   for j in self.judges if j.applies_to(benchmark))

    async def drain(self) -> None:
        """Wait until every submitted episode is judged, then stop the workers."""
        for _ in self._workers:
            self.queue.put_nowait(None)
        await asyncio.gather(*self._workers)

    async def _work(self) -> None:
        while (item := await self.queue.get()) is not None:
            task, eid, record = item
            for spec in self.judges:
                if spec.applies_to(task.benchmark) and (eid, spec.model, spec.method) not in self.done:
                    await self._judge(task, eid, record, spec)

    async def _judge(self, task: Task, eid: str, record: EpisodeRecord, spec: JudgeSpec) -> None:
        try:
            if spec.is_state:
                judgment = state_judgment(task, record)
            else:
                call = self._journaled_call(eid, spec)
                judgment = await registry.get(task.benchmark).judge(
                    task, record, spec.method, call, data_dir=self.data_dir)
        except Exception as exc:  # a judge that cannot judge: recorded, never a crash
            self.failed += 1
            why = traceback.format_exception_only(exc)[-1].strip()
            judgment = {"passed": None, "score": None, "details": {"error": why}}
        self.store.judgment(self.run_id, eid, judge=spec.model, method=spec.method,
                            passed=judgment["passed"], score=judgment["score"],
                            details=judgment["details"])
        self.done.add((eid, spec.model, spec.method))
        self.judged += 1
        self.on_judged(eid, spec, judgment)

    def _journaled_call(self, eid: str, spec: JudgeSpec) -> Callable[..., Awaitable[Any]]:
        journal_id = judge_journal_id(spec.model, spec.method, eid)
        recorded = [e["payload"] for e in self.store.events(self.run_id, journal_id, kind="model_call")]
        seq = 0

        def emit(kind: str, payload: dict[str, Any]) -> None:
            nonlocal seq
            self.store.event(self.run_id, journal_id, seq, kind, encoder.encode(payload))
            seq += 1

        journal = CallJournal(emit=emit, durable=self.store.flush, recorded=recorded)
        observe = (lambda result: self.observe(spec.model, result)) if self.observe else None
        return journal.caller("judge", self.clients[spec.model].complete, observe)
