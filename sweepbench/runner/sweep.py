"""The sweep: every (model, task, trial), a bounded number in flight, results into the store.

Episodes spend nearly all their time waiting on HTTP, so a fixed pool of worker coroutines
pulls work from one list: memory stays flat however long the list, and the in-flight cap is
exact. The list is ordered longest expected episode first (:mod:`sweepbench.runner.schedule`),
so the sweep ends with short episodes in flight. Each episode is keyed by its identity (:mod:`sweepbench.runner.identity`): what the
store already finished under that key is skipped, whichever invocation ran it, so a sweep
with more trials, another model or another benchmark runs only its new episodes, and an
unfinished one continues from its journal. Each invocation is a run in the store, linked to
the episodes it selected and holding the prices of its endpoints. Finished episodes are
judged at once by the deterministic state check and any LLM judges, in a judge pool that
works while episodes run. A spending cap (:mod:`sweepbench.runner.budget`) stops starting
episodes when the selection's spend would pass it.

SIGINT and SIGTERM stop the sweep (:class:`~sweepbench.errors.Interrupted`): no episode or
request starts after the signal, episodes in flight are cancelled and stay ``running`` (the
next run continues them from their journal), never recorded as errors. A sweep in which every
one of the last ``error_streak`` finished episodes ended in error stops starting episodes (a
broken setup should not burn the work list).
"""

from __future__ import annotations

import asyncio
import gc
import signal
import traceback
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection

import msgspec

from sweepbench.benchmarks import registry
from sweepbench.config import SweepConfig
from sweepbench.datasets.data_dir import resolve_data_dir
from sweepbench.errors import Interrupted
from sweepbench.ids import EpisodeStatus, TerminationReason, UserMode
from sweepbench.results.cost import Spend, prices_by_run
from sweepbench.store.runstore import RunStore
from sweepbench.results.runinfo import package_version
from sweepbench.runner.budget import TAB, Budget
from sweepbench.runner.build import (
    SweepResources,
    benchmark_info,
    endpoint_names,
    endpoint_prices,
    judge_specs,
    open_cache,
)
from sweepbench.client.hedging import IdleSlots
from sweepbench.client.limits import LimitsPool
from sweepbench.runner.identity import what_changed
from sweepbench.runner.journal import CallJournal
from sweepbench.runner.judge_pool import JudgePool
from sweepbench.runner.preflight import fit_concurrency, preflight
from sweepbench.runner.schedule import plan_queue
from sweepbench.client.secrets import KEYS
from sweepbench.runner.slots import LEASE, Slots, lending_workers
from sweepbench.runner.work import Shard, WorkItem, build_work, new_run_id, select_tasks
from sweepbench.simulator.episode import run_episode
from sweepbench.wire import EpisodeRecord

__all__ = ["Shard", "Sweep", "SweepOutcome", "WorkItem", "install_uvloop", "run_sweep",
           "select_tasks", "tune_gc"]


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
    selected: int = 0  # episodes the sweep selected
    changed: dict[str, int] = field(default_factory=dict)  # why stored episodes were not reused
    not_started: int = 0  # left out by a spending cap
    budget_stop: str | None = None  # the cap that stopped the sweep
    spent: float = 0.0  # dollars spent on the selection (stored + now)
    judge_failures: dict[str, int] = field(default_factory=dict)  # "judge / method" -> count
    stored_errors: int = 0  # selected episodes the store already had as ended in error
    error_stop: str | None = None  # why the sweep stopped early: every recent episode failed
    concurrency: int = 0  # episodes in flight at most (the config's, or lowered to fit fds)


class Sweep:
    """Runs one sweep against a store; ``progress`` is told about every finished episode.

    ``max_cost``: dollars the selection may cost in all (stored calls included); endpoints'
    ``max_cost_usd`` cap their own spend. ``prior``: endpoint -> expected dollars per episode
    before any has finished (the plan's estimate). ``items``: the work list in place of
    every trial of the config (an adaptive sweep's round: :mod:`sweepbench.runner.rounds`);
    ``info``: more for the run's info (e.g. ``{"adaptive": ...}``).
    """

    def __init__(self, cfg: SweepConfig, store: RunStore, *,
                 progress: Callable[..., None] | None = None,
                 retry_errors: bool | Collection[str] = False,
                 shard: "Shard | None" = None, run_id: str | None = None,
                 max_cost: float | None = None, prior: dict[str, float] | None = None,
                 command: str = "run", check_endpoints: bool = True,
                 warn: Callable[[str], None] | None = None,
                 items: Callable[[], list[WorkItem]] | None = None,
                 info: dict[str, Any] | None = None) -> None:
        self.cfg = cfg
        self.retry_errors = retry_errors
        self.shard = shard or Shard(0, 1)
        self.resumed = self.replayed_calls = 0
        self._journaled: set[str] = set()  # episodes the store has started before
        self.store = store
        self.run_id = run_id or new_run_id()
        self.data_dir = resolve_data_dir(cfg.data_dir)
        self.progress = progress or (lambda kind, **info: None)
        self.clients: dict[str, Any] = {}  # endpoint name -> ModelClient, while running
        self.reference: Any = None  # the built-in reference server, while it runs
        self.max_cost = max_cost if max_cost is not None else cfg.max_cost_usd
        self.prior = prior
        self.command = command
        self.changed: Counter[str] = Counter()
        self.budget: Budget | None = None
        self.in_flight = 0  # episodes running (asleep on a lent slot included)
        self._ended = asyncio.Event()  # set (and replaced) each time an episode ends
        self.slots: Slots | None = None  # the episode slots, while running
        self.check_endpoints = check_endpoints  # preflight: one request per endpoint
        self.warn = warn or (lambda text: None)
        self.stored_errors = 0
        self.interrupted: int | None = None  # the signal that stopped the sweep
        self.error_stop: str | None = None
        self._recent: deque[bool] = deque(maxlen=max(1, cfg.error_streak))
        self._old_handlers: dict[int, Any] = {}
        self.items = items
        self.info = info or {}

    def work(self) -> tuple[list[WorkItem], list[WorkItem]]:
        """(work still to do, selected episodes the store already has finished).

        Finished episodes are skipped; unfinished ones (and, with ``retry_errors``, those that
        ended in error; when it is a set of episode keys, those of them only: an adaptive
        sweep's later rounds retry none it ran itself) are continued from their journal.
        """
        items = (self.items() if self.items is not None
                 else build_work(self.cfg, self.data_dir, self.shard))
        status = self.store.episode_status([i.key for i in items])
        self._journaled = {k for k, st in status.items()
                           if st in (EpisodeStatus.RUNNING, EpisodeStatus.ERROR)}
        retry = self.retry_errors
        only = None if isinstance(retry, bool) else retry

        def finished(key: str) -> bool:
            st = status.get(key)
            return st == EpisodeStatus.DONE or (st == EpisodeStatus.ERROR and (
                not retry or (only is not None and key not in only)))

        todo = [i for i in items if not finished(i.key)]
        stored = [i for i in items if finished(i.key)]
        self.stored_errors = sum(status.get(i.key) == EpisodeStatus.ERROR for i in stored)
        self._explain_new([i for i in todo if i.key not in status])
        return todo, stored

    def _explain_new(self, new: list[WorkItem]) -> None:
        """Why the store's episodes with the same labels as ``new`` ones are not reused."""
        if not new:
            return
        labels = {i.episode_id: i for i in new}
        for row in self.store.episode_rows_by_label(list(labels)):
            item = labels[row["label"]]
            for why in what_changed(row["identity"], item.identity) or ["identity"]:
                self.changed[why] += 1

    async def run(self, *, episodes: bool = True) -> SweepOutcome:
        """Run what is left of the sweep and judge as episodes finish.

        ``episodes=False`` only judges what the store already holds of the selection
        (``sweepbench judge``): no agent or user model is called.
        """
        cfg, store = self.cfg, self.store
        todo, stored = self.work()
        selected = todo + stored
        if not episodes:
            todo = []
        judges = judge_specs(cfg)
        pool = JudgePool(store, self.run_id, judges=judges, clients={},
                         workers=cfg.judge_concurrency, data_dir=self.data_dir,
                         observe=self._on_call, keys=[i.key for i in selected])
        # what is stored but not yet judged by some judge (a new judge, a crash while judging)
        waiting = [i for i in (stored if episodes else selected)
                   if pool.pending(i.key, i.task.benchmark)]
        names = set(cfg.models) | {cfg.user_model} if todo else set()
        if todo or waiting:
            names |= set(cfg.judge_models)
        prices = endpoint_prices(cfg, endpoint_names(cfg))
        if todo or waiting:  # a broken setup fails here, before any episode starts
            await preflight(cfg, names, request=self.check_endpoints)
        concurrency = fit_concurrency(cfg, names, len(todo), warn=self.warn)
        queue = plan_queue(todo, cfg, store, self.data_dir, slots=concurrency)
        todo = queue.items
        cache = open_cache(cfg, store.path)  # a file that cannot be the cache fails here
        store.begin_run(self.run_id, msgspec.to_builtins(cfg),
                        prices=msgspec.to_builtins(prices),
                        info={"command": self.command, "benchmarks": benchmark_info(cfg.benchmarks),
                              "shard": f"{self.shard.index}/{self.shard.count}",
                              "sweepbench": package_version(), **self.info})
        store.select(self.run_id, [i.meta(cfg) for i in selected])
        self.budget = self._budget(selected, prices)
        tune_gc()  # after the tasks are loaded: they live as long as the sweep
        self.progress("planned", total=len(todo), skipped=len(stored), changed=dict(self.changed))
        errors = 0
        started = 0
        status = "done"
        main = asyncio.current_task()
        resources = SweepResources(cfg, names, cache=cache, limits=self.new_limits())
        try:
            self._on_signals(resources)
            async with resources:
                self.clients, self.reference = resources.clients, resources.reference
                self.progress("clients", clients=self.clients)  # live endpoint health
                self.judge_pool, pool.clients = pool, self.clients
                pool.start()
                self._submit(pool, waiting)
                judge_endpoints = set(cfg.judge_models)
                if self.runs_elsewhere:  # scale-out: workers run the queue, this stores
                    started, errors = await self.run_elsewhere(queue, pool, concurrency)

                busy = min(concurrency, len(todo))
                spare = IdleSlots(concurrency - busy)  # lent to ramp-down backups
                slots = self.slots = Slots(busy, spare)
                self.progress("slots", slots=slots)  # asleep on lent slots, live
                lending = cfg.lend_slots and len(todo) > busy
                for name in {*cfg.models, cfg.user_model}:  # episodes' endpoints, not judges'
                    if name in self.clients:
                        self.clients[name].spare = spare

                async def worker() -> None:
                    nonlocal errors, started
                    while await slots.start():
                        item = next(queue, None)
                        uses = {item.model, cfg.user_model} | judge_endpoints if item else ()
                        if item is None or not await self._may_start(uses):
                            if item is not None:
                                queue.put_back(item)
                            # nothing more starts; only a finished queue lends to backups
                            slots.close(ramp_down=item is None)
                            slots.release()
                            return
                        started += 1
                        self.in_flight += 1
                        lease = slots.lease()
                        token = LEASE.set(lease) if lending else None
                        tab = self.budget.episode_started()
                        charged = TAB.set(tab)
                        try:
                            record = await self.run_item(item)
                        finally:
                            TAB.reset(charged)
                            if token is not None:
                                LEASE.reset(token)
                            lease.release()
                            self.in_flight -= 1
                            queue.finished(item)
                        self.budget.episode_done(tab)
                        self._ended.set()  # who waits for room in the budget asks again
                        self._ended = asyncio.Event()
                        failed = record.termination == TerminationReason.ERROR
                        errors += failed
                        self._streak(failed)
                        pool.submit(item.task, item.key, record, fresh=True)

                n_workers = min(len(todo), busy + (lending_workers(busy) if lending else 0))
                workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
                try:
                    await asyncio.gather(*workers)
                except BaseException:
                    # one worker's failure (a store error, say) stops the others too, rather
                    # than leaving them starting episodes on closed resources
                    for task in workers:
                        task.cancel()
                    if workers:
                        await asyncio.wait(workers)
                    raise
                await pool.drain()
        except BaseException as exc:
            pool.cancel()
            try:
                store.finish_run(self.run_id, "interrupted")
                if self.interrupted is not None:
                    await store.flush()
            except Exception:  # noqa: BLE001 - the store's own failure is what surfaces
                pass
            if self.interrupted is not None and isinstance(exc, asyncio.CancelledError):
                main.uncancel()
                raise self._interruption(todo) from None
            raise
        finally:
            self._off_signals()
        if self.budget.stopped:
            status = "budget"
        elif self.error_stop:
            status = "failing"
        store.finish_run(self.run_id, status, info={"budget_stop": self.budget.stopped,
                                                    "error_stop": self.error_stop,
                                                    "not_started": len(todo) - started})
        await store.flush()
        return SweepOutcome(
            self.run_id, Path(store.path), started, len(stored), errors, self.resumed,
            self.replayed_calls, pool.judged, selected=len(selected), changed=dict(self.changed),
            not_started=len(todo) - started, budget_stop=self.budget.stopped,
            spent=self.budget.spent,
            judge_failures={f"{m} / {meth}": n for (m, meth), n in pool.failures.items()},
            stored_errors=self.stored_errors, error_stop=self.error_stop,
            concurrency=concurrency)

    # -- where episodes run ----------------------------------------------------------------

    runs_elsewhere = False
    """Whether :meth:`run_elsewhere` runs the queue (the scale-out driver's subclass)."""

    def new_limits(self) -> LimitsPool:
        """The endpoints' limits for this sweep's clients (the driver's come from leases)."""
        return LimitsPool()

    async def run_elsewhere(self, queue: Any, pool: JudgePool, concurrency: int
                            ) -> tuple[int, int]:
        """Run every episode of ``queue`` elsewhere, store each and submit it to ``pool``;
        returns (episodes started, episodes ended in error)."""
        raise NotImplementedError

    # -- stopping -------------------------------------------------------------------------

    def _on_signals(self, resources: SweepResources) -> None:
        """SIGINT and SIGTERM: remember the signal, close the endpoints' limits (no request
        starts after it), cancel the sweep (once).

        The Python-level handler runs at the main thread's next Python call once the signal
        is taken (the kernel gives a running process's signal to its main thread), before the
        steps already due (responses that arrived, connections just opened, request bodies
        aiohttp has yet to write in tasks of its own) can send anything, and cancels every
        task there, as asyncio's own Ctrl-C handling cancels its main task; the loop's handler
        under it wakes a loop that is idle. A step already past its last check when the
        handler runs (or a body-writing task aiohttp creates after it) meets the closed limits
        once more in the request body's write (:class:`~sweepbench.client.transports.aiohttp.GatedBody`),
        so no byte of a request leaves after the signal, except a write already past that
        check when it came (microseconds of aiohttp's Python before the socket).
        """
        loop = asyncio.get_running_loop()
        self._old_handlers = {}

        def stop(signum: int, frame: object = None) -> None:
            resources.limits.close()
            if self.interrupted is None:
                self.interrupted = signum
                for task in asyncio.all_tasks(loop):
                    task.cancel()
                loop.call_soon_threadsafe(lambda: None)
            elif frame is not None:  # a second signal while stopping: stop at once
                raise KeyboardInterrupt

        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                old = signal.getsignal(signum)
                old = signal.SIG_DFL if old is None else old
                loop.add_signal_handler(signum, stop, signum)
                signal.signal(signum, stop)
                self._old_handlers[signum] = old
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
                pass

    def _off_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for signum, old in self._old_handlers.items():
            try:
                loop.remove_signal_handler(signum)
                signal.signal(signum, old)
            except (NotImplementedError, RuntimeError, ValueError):
                pass

    def _interruption(self, todo: list[WorkItem]) -> Interrupted:
        status = self.store.episode_status([i.key for i in todo])
        running = sum(st == EpisodeStatus.RUNNING for st in status.values())
        return Interrupted(self.interrupted or signal.SIGINT, running=running,
                           not_started=sum(i.key not in status for i in todo))

    def _streak(self, failed: bool) -> None:
        """Stop starting episodes once the last ``error_streak`` finished ones all failed."""
        if self.cfg.error_streak <= 0 or self.error_stop is not None:
            return
        self._recent.append(failed)
        if len(self._recent) == self._recent.maxlen and all(self._recent):
            self.error_stop = (f"the last {self.cfg.error_streak} finished episodes all ended "
                               "in error")

    async def _may_start(self, uses: set[str]) -> bool:
        """Whether the next episode (calling ``uses``) may start: not while interrupted or
        stopped by an error streak, and only with room in the budget; while the budget says
        to wait (episodes in flight may show the estimate too high), after each episode
        that ends, ask again."""
        budget = self.budget
        while self.interrupted is None and self.error_stop is None:
            if budget.may_start(self.in_flight, uses):
                return True
            if budget.stopped is not None:
                return False
            await self._ended.wait()
        return False

    def _budget(self, selected: list[WorkItem], prices: dict) -> Budget:
        caps = {ep.name: ep.max_cost_usd for ep in self.cfg.endpoints
                if ep.max_cost_usd is not None}
        stored = None
        if self.max_cost is not None or caps:
            stored = Spend.of(self.store.model_calls([i.key for i in selected]),
                              prices_by_run(self.store.runs()))
        return Budget(cap=self.max_cost, endpoint_caps=caps, prices=prices, stored=stored,
                      prior=self.prior)

    def _on_call(self, endpoint: str, result: Any) -> None:
        """Every live model call (a ``CallResult``, or the error a call failed with for good):
        the spend, and the progress display."""
        if self.budget is not None and not isinstance(result, BaseException):
            tab = TAB.get()  # the episode making the call (None: a judge)
            self.budget.charge(endpoint, result.usage, getattr(result, "attempts", 1), tab)
            hedges = getattr(result, "hedge_usage", None)  # losing hedge copies billed
            if hedges is not None:
                self.budget.charge(endpoint, hedges, tab=tab)
        self.progress("call", endpoint=endpoint, result=result)

    def _submit(self, pool: JudgePool, items: list[WorkItem]) -> None:
        """Stored episodes to judge (their records read when a judge worker takes them:
        re-judging a large selection holds a few records at a time, not all)."""
        for item in items:
            pool.submit(item.task, item.key, None)

    def _observer(self, endpoint: str) -> Callable[[Any], None]:
        return lambda result: self._on_call(endpoint, result)

    def meta(self, item: WorkItem) -> dict[str, Any]:
        return {"episode": item.episode_id, "task": item.task.key, "spec": item.spec,
                "lang": item.task.lang,
                "data_dir": str(self.data_dir) if self.data_dir else None,
                "trial": item.trial, "seed": self.cfg.seed}

    async def run_item(self, item: WorkItem) -> EpisodeRecord:
        run_id, key, task, cfg = self.run_id, item.key, item.task, self.cfg
        if self.interrupted is not None:  # a worker between items when the signal came
            raise asyncio.CancelledError
        self.store.episode_started(item.meta(cfg), run_id=run_id)
        self.progress("started", item=item)
        # only an episode that was started before (interrupted, or retried) has a journal
        recorded = ([e["payload"] for e in self.store.events(key, kind="model_call")]
                    if key in self._journaled else [])
        self.resumed += bool(recorded)
        seq = 0
        endpoints = {"agent": item.model, "user": cfg.user_model}

        def on_event(kind: str, payload: dict[str, Any]) -> None:
            nonlocal seq
            endpoint = endpoints.get(payload.get("role")) if kind == "model_call" else None
            self.store.event(key, seq, kind, payload, run_id=run_id,  # encoded there, once
                             endpoint=endpoint)
            seq += 1

        journal = CallJournal(emit=on_event, recorded=recorded)

        base = dict(run_id=run_id, model=item.model, benchmark=task.benchmark,
                    domain=task.domain, task_id=task.id, lang=task.lang, trial=item.trial)
        try:
            benchmark = registry.get(task.benchmark)
            state = benchmark.new_state(task)
            agent_client, user_client = self.clients[item.model], self.clients[cfg.user_model]
            protocol = benchmark.episode_protocol(task, data_dir=self.data_dir,
                                                  user_mode=UserMode(cfg.user_mode))
            limits = protocol.limits(task, max_turns=cfg.max_turns,
                                     max_tool_errors=cfg.max_tool_errors,
                                     max_steps=cfg.max_steps)
            limits.token_limit, limits.time_limit_s = cfg.token_limit, cfg.time_limit_s
            result = await run_episode(
                task,
                agent=journal.caller("agent", agent_client.conversation(task.key),
                                     self._observer(item.model)),
                user=journal.caller("user", user_client.conversation(task.key),
                                    self._observer(cfg.user_model)),
                toolkit=benchmark.toolkit(task),
                state=state,
                final_state=benchmark.final_state,
                tool_descriptions=benchmark.tool_descriptions(task, self.data_dir),
                limits=limits,
                meta=self.meta(item),
                on_event=on_event,
                protocol=protocol,
                request_params={"agent": _endpoint_params(agent_client.endpoint),
                                "user": _endpoint_params(user_client.endpoint)},
            )
            record = EpisodeRecord(
                **base, termination=str(result.termination), messages=result.messages,
                agent_usage=result.agent_usage, user_usage=result.user_usage,
                agent_calls=result.agent_calls, user_calls=result.user_calls,
                tool_calls=result.tool_calls, tool_errors=result.tool_errors,
                turns=result.turns, steps=result.steps, wall_s=result.wall_s, error=result.error,
                final_state=result.final_state)
        except Exception as exc:  # a bug or a broken task: record it, keep the sweep going
            tb = KEYS.scrub(traceback.format_exception_only(exc)[-1].strip())
            record = EpisodeRecord(**base, termination=str(TerminationReason.ERROR),
                                   error=f"internal error: {tb}")
        if self.interrupted is not None and record.termination == TerminationReason.ERROR:
            # whatever failed after the signal may be the signal's doing: the episode stays
            # running and continues from its journal next time, never a stored error
            raise asyncio.CancelledError
        self.replayed_calls += journal.replayed
        self.store.episode_finished(key, record, run_id=run_id)
        self.progress("finished", item=item, record=record)
        return record


def _endpoint_params(endpoint: Any) -> dict[str, Any]:
    """Request fields an endpoint sets itself; they win over a benchmark's defaults."""
    temperature = getattr(endpoint, "temperature", None)
    return {} if temperature is None else {"temperature": temperature}


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
    almost everything a call creates dies by reference counting anyway. What a sweep keeps
    (records, counters) still adds up: at 50,000 a full-size ``benchmarks/throughput.py`` sweep
    (28,500 calls) collected 3 times, 4.6 µs a call in all, one pause 74 ms (a probe, in the
    benchmarks' log); at 200,000 not once (the benchmark prints ``gc_collections``).
    """
    gc.freeze()
    gc.set_threshold(200_000, 20, 100)


def install_uvloop() -> None:
    """uvloop where available; the asyncio default loop otherwise."""
    try:
        import uvloop
    except ImportError:
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
