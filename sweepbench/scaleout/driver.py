"""The driver: the sweep as one process runs it (work list, store, judges, signals, run
record; :class:`~sweepbench.runner.sweep.Sweep`), with its episodes run by workers on Ray.

- **Pulled, not pre-split**: the work list stays here in its longest-first order
  (:mod:`sweepbench.runner.schedule`); each worker asks for room for a few more (a quarter
  of its slots ahead) and gets the next items, so a slow or dead node holds little, and the
  sweep still ends with short episodes in flight.
- **One writer**: workers' journal events, started and finished episodes arrive in batches
  (:mod:`sweepbench.scaleout.messages`) and go into the store here, through the same write
  methods, in each episode's order; finished episodes go to the judge pool here.
- **Limits**: every report carries the worker's wants; the :class:`~sweepbench.scaleout.ledger.Ledger`
  answers with leases. The driver's own judge clients lease from the same ledger.
- **A dead worker** (its process killed, its node lost): its leases are taken back, the
  store is flushed, and its unfinished episodes go to the front of the list with their
  journals: another worker continues each from its last journaled call. Calls it had answered
  but not yet reported (at most ``BATCH_S`` of them) and calls in flight are made again.
- **A signal**: as in one process, handled by :class:`Sweep`: every worker is told to stop,
  their last reports are stored, episodes in flight stay ``running``.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from sweepbench.errors import ConfigError, SweepbenchError
from sweepbench.ids import TerminationReason
from sweepbench.runner.judge_pool import JudgePool
from sweepbench.runner.sweep import Sweep
from sweepbench.runner.work import WorkItem
from sweepbench.scaleout.cluster import Cluster
from sweepbench.scaleout.leased import LeaseLimitsPool
from sweepbench.scaleout.ledger import Ledger
from sweepbench.scaleout.messages import Call, Delivery, Report
from sweepbench.wire import EpisodeRecord, Usage

__all__ = ["Driver", "WorkerLost"]

BATCH_SHARE, BATCH_MIN = 2, 4
"""Work items per delivery: up to half a worker's slots, at least 4. An eighth left a worker
whose episodes never wait (answers computed in its own process) running its 32 items and
then waiting out the round trip with its slots empty. A worker still keeps only a quarter
of its slots queued ahead (``EpisodeWorker.ahead``): with half, an RPM-limited account's
first seconds showed a dip and then a catch-up burst (busiest 10-s window 1.02-1.055 of its
limit against 0.98; benchmarks/LOG.md, 2026-11-28 08:15)."""
LOCAL_LEASE_S = 0.02
"""Seconds between the driver's own leases (its judges' limits) when nothing asks sooner."""


class WorkerLost(SweepbenchError):
    """Every worker died with work left."""


@dataclass
class _Worker:
    name: str
    handle: Any
    assigned: dict[str, WorkItem] = field(default_factory=dict)  # key -> item not yet finished
    pending: Any = None  # the exchange in flight
    episodes: int = 0
    calls: int = 0
    running: int = 0  # episodes in flight at its last report
    cpu_s: float | None = None  # its process's CPU seconds at the end
    t0: float = field(default_factory=time.monotonic)
    alive: bool = True


class _CallView:
    """A worker's :class:`Call` as the progress display reads a call result."""

    def __init__(self, call: Call) -> None:
        self.usage = Usage(prompt_tokens=call.prompt, completion_tokens=call.completion,
                           cached_prompt_tokens=call.cached)
        self.latency_s = call.latency_s
        self.attempts = call.attempts


class _Failed(Exception):
    def __init__(self, call: Call) -> None:
        super().__init__(call.error or "failed")
        self.attempts = call.attempts


class Driver(Sweep):
    """A :class:`Sweep` whose episodes run on ``workers`` Ray workers of ``cluster``.
    ``transport``: endpoint -> transport for the workers' clients (benchmarks)."""

    runs_elsewhere = True

    def __init__(self, cfg, store, *, cluster: Cluster, workers: int,
                 transport: Callable[[Any], Any] | None = None, **kwargs: Any) -> None:
        super().__init__(cfg, store, **kwargs)
        if self.max_cost is not None or any(ep.max_cost_usd is not None for ep in cfg.endpoints):
            raise ConfigError("--workers does not take spending caps yet (max_cost_usd, "
                              "--max-cost): run without --workers")
        if cfg.response_cache:
            raise ConfigError("--workers does not use a response cache yet: run without "
                              "--workers, or without response_cache")
        self.cluster = cluster
        self.n_workers = max(1, workers)
        self.transport = transport
        self.ledger = Ledger()
        self._lease_now = asyncio.Event()
        self.local = LeaseLimitsPool(wake=self._lease_now.set)
        self.workers: list[_Worker] = []
        self.again: deque[WorkItem] = deque()  # a dead worker's episodes, before the queue
        self.worker_deaths = 0

    def new_limits(self) -> LeaseLimitsPool:
        return self.local

    async def run_elsewhere(self, queue: Any, pool: JudgePool, concurrency: int
                            ) -> tuple[int, int]:
        self._queue, self._pool = queue, pool
        self._counts = [0, 0]  # started, errors
        self._counted: set[str] = set()
        self._exhausted = False
        slots = self._slots = max(1, -(-concurrency // self.n_workers))
        url = self.reference.url if self.reference is not None else None
        handles = self.cluster.start(
            self.n_workers, cfg=msgspec.to_builtins(self.cfg), run_id=self.run_id, slots=slots,
            reference_url=url, data_dir=str(self.data_dir) if self.data_dir else None,
            transport=self.transport)
        self.workers = [_Worker(f"w{i}", h) for i, h in enumerate(handles)]
        self.progress("workers", workers=self.worker_rates)
        leasing = asyncio.create_task(self._lease_local())
        loops = [asyncio.create_task(self._serve(w)) for w in self.workers]
        try:
            await asyncio.gather(*loops)
        except BaseException:
            for task in loops:
                task.cancel()
            await asyncio.wait(loops)
            await self._stop_workers()
            raise
        finally:
            leasing.cancel()
            await self._worker_cpu()
            self.cluster.kill([w.handle for w in self.workers])
        if self._left():
            raise WorkerLost(f"every worker died ({self.worker_deaths}) with "
                             f"{self._left()} episodes left; run again to continue them")
        return self._counts[0], self._counts[1]

    # -- one worker ------------------------------------------------------------------------

    async def _serve(self, w: _Worker) -> None:
        try:
            w.pending = w.handle.start.remote()
            report = _unpack(await w.pending)
            while True:
                self._ingest(w, report)
                if report.idle and not self._left():  # the whole sweep is done
                    return
                w.pending = w.handle.exchange.remote(self._delivery(w, report))
                report = _unpack(await w.pending)
        except self.cluster.dead:
            await self._lost(w)

    def _delivery(self, w: _Worker, report: Report) -> Delivery:
        self.ledger.register(report.limits)
        delivery = Delivery(grants=self.ledger.grant(w.name, report.wants))
        stopping = self.interrupted is not None or self.error_stop is not None
        # a small batch at a time, whatever the room: workers asking in turn take turns in
        # the longest-first order, so none starts with all of the longest episodes
        n = 0 if stopping else min(report.room, max(BATCH_MIN, self._slots // BATCH_SHARE))
        while n > 0:
            item = self._next_item()
            if item is None:
                break
            w.assigned[item.key] = item
            delivery.items.append(item)
            if item.key in self._journaled:
                journal = [e["payload"] for e in self.store.events(item.key, kind="model_call")]
                if journal:
                    delivery.journals[item.key] = journal
                    self.resumed += 1
                    self.replayed_calls += sum("error" not in p for p in journal)
            n -= 1
        delivery.drained = stopping or (self._exhausted and not self.again)
        return delivery

    def _next_item(self) -> WorkItem | None:
        if self.again:
            return self.again.popleft()
        if self._exhausted:
            return None
        item = next(self._queue, None)
        if item is None:
            self._exhausted = True
        return item

    def _ingest(self, w: _Worker, report: Report) -> None:
        store, run_id, cfg = self.store, self.run_id, self.cfg
        for key in report.started:
            item = w.assigned[key]
            store.episode_started(item.meta(cfg), run_id=run_id)
            if key not in self._counted:  # once, however many workers it started on
                self._counted.add(key)
                self._counts[0] += 1
            self._journaled.add(key)  # from now on it has a journal
            self.progress("started", item=item)
        for e in report.events:
            store.event(e.key, e.seq, e.kind, e.payload, run_id=run_id, endpoint=e.endpoint)
        for call in report.calls:
            w.calls += 1
            self.progress("call", endpoint=call.endpoint,
                          result=_CallView(call) if call.ok else _Failed(call))
        for done in report.finished:
            item = w.assigned.pop(done.key)
            record = msgspec.json.decode(done.record, type=EpisodeRecord)
            store.episode_finished(done.key, record, run_id=run_id)
            self._queue.finished(item)
            failed = record.termination == TerminationReason.ERROR
            self._counts[1] += failed
            self._streak(failed)
            w.episodes += 1
            self._pool.submit(item.task, item.key, record, fresh=True,
                              state=None if done.state is None else _decode(done.state))
            self.progress("finished", item=item, record=record)
        w.running = report.running
        if report.calls or report.finished:
            self.progress("workers", workers=self.worker_rates)

    async def _worker_cpu(self) -> None:
        """Each live worker's CPU seconds (``cpu_s``), for the benchmark's accounting."""
        for w in self.workers:
            if w.alive:
                try:
                    w.cpu_s = await asyncio.wait_for(_awaited(w.handle.cpu_s.remote()), 5.0)
                except (*self.cluster.dead, TimeoutError):
                    w.cpu_s = None

    async def _lost(self, w: _Worker) -> None:
        """``w`` died: its leases back, its unfinished episodes to the front of the list."""
        w.alive = False
        self.worker_deaths += 1
        self.cluster.kill([w.handle])  # merely unreachable (a network split) is dead too
        self.ledger.reclaim(w.name)
        await self.store.flush()  # what it journaled is readable for whoever continues it
        items = list(w.assigned.values())
        w.assigned.clear()
        for item in items:
            self._queue.put_back(item)
        self.again.extendleft(reversed(items))
        self.warn(f"worker {w.name} died; its {len(items)} unfinished episodes continue on "
                  "the others from their journals")
        self.progress("workers", workers=self.worker_rates)
        if not any(x.alive for x in self.workers) and self._left():
            raise WorkerLost(f"every worker died with {self._left()} episodes left; run "
                             "again to continue them")

    def _left(self) -> int:
        return len(self.again) + sum(len(w.assigned) for w in self.workers) + (
            0 if self._exhausted else 1)

    # -- stopping, leases, rates -----------------------------------------------------------

    async def _stop_workers(self) -> None:
        """Tell every live worker to stop; store what they and their last exchange report."""
        live = [w for w in self.workers if w.alive]
        stops = [w.handle.exchange.remote(Delivery(stop=True)) for w in live]
        for w, ref in zip(live, stops):
            for pending in (w.pending, ref):
                if pending is None:
                    continue
                try:
                    report = _unpack(await asyncio.wait_for(
                        asyncio.shield(_awaited(pending)), 10.0))
                except (*self.cluster.dead, TimeoutError):  # a worker dying as it stops
                    report = None
                if report is not None:
                    self._ingest(w, report)
        await self.store.flush()

    async def _lease_local(self) -> None:
        """The driver's own clients (judges) lease from the ledger like a worker."""
        last = time.monotonic()
        while True:
            try:
                await asyncio.wait_for(self._lease_now.wait(), LOCAL_LEASE_S)
            except TimeoutError:
                pass
            self._lease_now.clear()
            now = time.monotonic()
            self.ledger.register(self.local.new)
            self.local.new = {}
            self.local.apply(self.ledger.grant("driver", self.local.wants(now - last)))
            last = now

    def worker_rates(self) -> dict[str, dict[str, float]]:
        """Per worker: episodes and calls so far, calls per second, alive."""
        now = time.monotonic()
        return {w.name: {"episodes": w.episodes, "calls": w.calls,
                         "calls_per_s": w.calls / max(1e-9, now - w.t0), "alive": w.alive}
                for w in self.workers}


_unpack = msgspec.msgpack.Decoder(Report).decode
_decode = msgspec.json.decode


async def _awaited(ref: Any) -> Any:
    return await ref
