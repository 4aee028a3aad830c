"""The sweep: every (model, task, trial), a bounded number in flight, results into the store.

Episodes spend nearly all their time waiting on HTTP, so a fixed pool of worker coroutines
pulls work from one list: memory stays flat however long the list, and the in-flight cap is
exact. Work already finished in the store (same run id, i.e. the same sweep identity) is
skipped, so re-running a command continues it. Each finished episode is judged at once by the
deterministic state check and any LLM judges, in a judge pool that works while episodes run.
"""

from __future__ import annotations

import asyncio
import gc
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import msgspec

from sweepbench.benchmarks import registry
from sweepbench.config import SweepConfig
from sweepbench.datasets.data_dir import resolve_data_dir
from sweepbench.ids import (
    EpisodeId,
    EpisodeStatus,
    TaskKey,
    TerminationReason,
    UserMode,
)
from sweepbench.results.store import RunStore
from sweepbench.runner.build import SweepResources, judge_specs
from sweepbench.runner.journal import CallJournal
from sweepbench.runner.judge_pool import JudgePool
from sweepbench.runner.work import Shard, WorkItem, run_id_for, select_tasks
from sweepbench.simulator.episode import EpisodeLimits, run_episode
from sweepbench.wire import EpisodeRecord, encoder

__all__ = ["Shard", "Sweep", "SweepOutcome", "WorkItem", "install_uvloop", "run_id_for",
           "run_sweep", "select_tasks", "tune_gc"]


@dataclass
class SweepOutcome:
    run_id: str
    store_path: Path
    episodes: int  # run now
    skipped: int  # already finished in the store
    errors: int
    resumed: int = 0  # episodes continued from their journal
    replayed_calls: int = 0  # model calls answered from the journal instead of re-requested
    judged: int = 0  # judgments made


class Sweep:
    """Runs one sweep against a store; ``progress`` is told about every finished episode."""

    def __init__(self, cfg: SweepConfig, store: RunStore, *,
                 progress: Callable[..., None] | None = None, retry_errors: bool = False,
                 shard: "Shard | None" = None) -> None:
        self.cfg = cfg
        self.retry_errors = retry_errors
        self.shard = shard or Shard(0, 1)
        self.resumed = self.replayed_calls = 0
        self._journaled: set[str] = set()  # episodes the store has started before
        self.store = store
        self.run_id = run_id_for(cfg)
        self.data_dir = resolve_data_dir(cfg.data_dir)
        self.progress = progress or (lambda kind, **info: None)
        self.clients: dict[str, Any] = {}  # endpoint name -> ModelClient, while running
        self.reference: Any = None  # the built-in reference server, while it runs

    def work(self) -> tuple[list[WorkItem], int]:
        """Work still to do and how many episodes the store already has finished.

        Finished episodes are skipped; unfinished ones (and, with ``retry_errors``, those that
        ended in error) are resumed from their journal.
        """
        status = self.store.episode_status(self.run_id)
        self._journaled = {eid for eid, st in status.items()
                           if st in (EpisodeStatus.RUNNING, EpisodeStatus.ERROR)}
        finished = ((EpisodeStatus.DONE,) if self.retry_errors
                    else (EpisodeStatus.DONE, EpisodeStatus.ERROR))
        todo, skipped = [], 0
        for trial in range(self.cfg.trials):
            for spec, task in select_tasks(self.cfg):
                for model in self.cfg.models:
                    item = WorkItem(model, spec, task, trial)
                    if not self.shard.owns(item.episode_id):
                        continue
                    if status.get(item.episode_id) in finished:
                        skipped += 1
                    else:
                        todo.append(item)
        return todo, skipped

    async def run(self, *, episodes: bool = True) -> SweepOutcome:
        """Run what is left of the sweep and judge as episodes finish.

        ``episodes=False`` only judges what the store already holds (``sweepbench judge``):
        no agent or user model is called.
        """
        cfg = self.cfg
        self.store.begin_run(self.run_id, msgspec.to_builtins(cfg.identity()))
        todo, skipped = self.work() if episodes else ([], 0)
        tune_gc()  # after the tasks are loaded: they live as long as the sweep
        self.progress("planned", total=len(todo), skipped=skipped)
        judges = judge_specs(cfg)
        names = {j.model for j in judges if not j.is_state}
        if todo:
            names |= set(cfg.models) | {cfg.user_model}
        errors = 0
        async with SweepResources(cfg, names) as resources:
            self.clients, self.reference = resources.clients, resources.reference
            self.progress("clients", clients=self.clients)  # live endpoint health
            self.judge_pool = pool = JudgePool(
                self.store, self.run_id, judges=judges, clients=self.clients,
                workers=cfg.judge_concurrency, data_dir=self.data_dir,
                observe=lambda name, result: self.progress("call", endpoint=name, result=result))
            pool.start()
            self._submit_unjudged(pool)
            queue = iter(todo)

            async def worker() -> None:
                nonlocal errors
                for item in queue:
                    record = await self.run_item(item)
                    errors += record.termination == TerminationReason.ERROR
                    pool.submit(item.task, item.episode_id, record)
            n_workers = max(1, min(cfg.max_concurrency, len(todo)))
            await asyncio.gather(*(worker() for _ in range(n_workers)))
            await pool.drain()
        self.store.finish_run(self.run_id, "done")
        await self.store.flush()
        return SweepOutcome(self.run_id, Path(self.store.path), len(todo), skipped, errors,
                            self.resumed, self.replayed_calls, pool.judged)

    def _submit_unjudged(self, pool: "JudgePool") -> None:
        """Episodes finished earlier that some judge has not judged yet (new judge, crash)."""
        waiting = {row["episode_id"] for row in self.store.episode_rows(self.run_id)
                   if row["status"] != EpisodeStatus.RUNNING and pool.pending(row["episode_id"])
                   and self.shard.owns(row["episode_id"])}
        if not waiting:
            return
        tasks = {task.key: task for _, task in select_tasks(self.cfg)}
        for record in self.store.episodes(self.run_id):
            key = str(TaskKey(record.benchmark, record.domain, record.lang, record.task_id))
            eid = str(EpisodeId(record.model, TaskKey.parse(key), record.trial))
            if eid in waiting and key in tasks:  # tasks outside this selection stay unjudged
                pool.submit(tasks[key], eid, record)

    def _observer(self, endpoint: str) -> Callable[[Any], None]:
        return lambda result: self.progress("call", endpoint=endpoint, result=result)

    def meta(self, item: WorkItem) -> dict[str, Any]:
        return {"episode": item.episode_id, "task": item.task.key, "spec": item.spec,
                "lang": item.task.lang,
                "data_dir": str(self.data_dir) if self.data_dir else None,
                "trial": item.trial, "seed": self.cfg.seed}

    async def run_item(self, item: WorkItem) -> EpisodeRecord:
        run_id, eid, task = self.run_id, item.episode_id, item.task
        self.store.episode_started(run_id, eid, model=item.model, benchmark=task.benchmark,
                                   domain=task.domain, task_id=task.id, lang=task.lang,
                                   trial=item.trial)
        self.progress("started", item=item)
        # only an episode that was started before (interrupted, or retried) has a journal
        recorded = ([e["payload"] for e in self.store.events(run_id, eid, kind="model_call")]
                    if eid in self._journaled else [])
        self.resumed += bool(recorded)
        seq = 0

        def on_event(kind: str, payload: dict[str, Any]) -> None:
            nonlocal seq
            self.store.event(run_id, eid, seq, kind, encoder.encode(payload))
            seq += 1

        journal = CallJournal(emit=on_event, durable=self.store.flush, recorded=recorded)

        base = dict(run_id=run_id, model=item.model, benchmark=task.benchmark,
                    domain=task.domain, task_id=task.id, lang=task.lang, trial=item.trial)
        try:
            benchmark = registry.get(task.benchmark)
            state = benchmark.new_state(task)
            agent_client, user_client = self.clients[item.model], self.clients[self.cfg.user_model]
            result = await run_episode(
                task,
                agent=journal.caller("agent", agent_client.conversation(),
                                     self._observer(item.model)),
                user=journal.caller("user", user_client.conversation(),
                                    self._observer(self.cfg.user_model)),
                toolkit=benchmark.toolkit(task),
                state=state,
                final_state=benchmark.final_state,
                tool_descriptions=benchmark.tool_descriptions(task, self.data_dir),
                limits=EpisodeLimits(max_turns=self.cfg.max_turns or task.max_turns,
                                     max_tool_errors=self.cfg.max_tool_errors),
                meta=self.meta(item),
                on_event=on_event,
                protocol=benchmark.episode_protocol(task, data_dir=self.data_dir,
                                                    user_mode=UserMode(self.cfg.user_mode)),
            )
            record = EpisodeRecord(
                **base, termination=str(result.termination), messages=result.messages,
                agent_usage=result.agent_usage, user_usage=result.user_usage,
                agent_calls=result.agent_calls, user_calls=result.user_calls,
                tool_calls=result.tool_calls, tool_errors=result.tool_errors,
                turns=result.turns, wall_s=result.wall_s, error=result.error,
                final_state=result.final_state)
        except Exception as exc:  # a bug or a broken task: record it, keep the sweep going
            tb = traceback.format_exception_only(exc)[-1].strip()
            record = EpisodeRecord(**base, termination=str(TerminationReason.ERROR),
                                   error=f"internal error: {tb}")
        self.replayed_calls += journal.replayed
        self.store.episode_finished(eid, record)
        self.progress("finished", item=item, record=record)
        return record


async def run_sweep(cfg: SweepConfig, store_path: str | Path, **kwargs: Any) -> SweepOutcome:
    """Run (or continue) the sweep ``cfg`` into the store at ``store_path``."""
    Path(store_path).parent.mkdir(parents=True, exist_ok=True)
    with RunStore(store_path) as store:
        return await Sweep(cfg, store, **kwargs).run()


def tune_gc() -> None:
    """Keep the cyclic garbage collector off the hot path of a long sweep.

    Thousands of in-flight conversations are millions of small objects; CPython's full
    collections walk all of them and stalled the event loop for hundreds of milliseconds
    (p99 call latency 487 ms against a 200 ms server). Objects alive now (modules, tasks, the
    knowledge base) move to the permanent generation, and young collections run less often:
    almost everything a call creates dies by reference counting anyway.
    """
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def install_uvloop() -> None:
    """uvloop where available; the asyncio default loop otherwise."""
    try:
        import uvloop
    except ImportError:
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())

