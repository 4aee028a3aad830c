"""A worker: the normal episode runner (:meth:`sweepbench.runner.sweep.Sweep.run_item`, the
same code a single-process sweep runs, so an episode's outcome does not depend on where it
ran) on the event loop of a Ray actor, with limits fed by leases
(:mod:`sweepbench.scaleout.leased`) and a store that forwards to the driver
(:mod:`sweepbench.scaleout.sink`).

The worker keeps a small list of work items and up to ``slots`` episodes in flight. Each
``exchange`` takes the driver's delivery (items, leases) and answers once it has something to
say: journal events or finished episodes (after ``BATCH_S`` more, so they travel in batches),
a request waiting on a lease, its list under half full, or ``HEARTBEAT_S`` of silence.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from sweepbench.benchmarks.catalog import BenchmarkSpec
from sweepbench.client.facade import ModelClient, limits_key
from sweepbench.client.fleet import client_for
from sweepbench.config import SweepConfig
from sweepbench.errors import SweepbenchError
from sweepbench.runner.judge_pool import state_judgment
from sweepbench.runner.sweep import Sweep, install_uvloop, tune_gc
from sweepbench.runner.work import WorkItem
from sweepbench.scaleout.leased import LeaseLimitsPool
from sweepbench.scaleout.messages import Call, Delivery, Report
from sweepbench.scaleout.sink import ForwardingStore

_pack = msgspec.msgpack.Encoder().encode

__all__ = ["BATCH_S", "HEARTBEAT_S", "STARVED_S", "EpisodeWorker"]

BATCH_S = 0.01
"""Seconds a report waits after its first news for more: events travel in batches, and a
worker that dies takes at most this much of answered calls with it (paid again on resume)."""
HEARTBEAT_S = 0.25
"""Seconds a worker with nothing to say answers anyway (its wants, its room)."""
STARVED_S = 0.01
"""Seconds a worker whose requests wait on a lease the driver left unfilled asks again after."""


class EpisodeWorker:
    """One worker process's episodes (the Ray actor's class; :mod:`sweepbench.scaleout.cluster`
    makes it remote). ``reference_url``: the driver's reference server for scripted models;
    ``transport``: endpoint -> transport, in place of HTTP (benchmarks)."""

    def __init__(self, cfg: dict[str, Any], run_id: str, *, slots: int,
                 reference_url: str | None = None, data_dir: str | None = None,
                 transport: Callable[[Any], Any] | None = None) -> None:
        install_uvloop()
        self.cfg = msgspec.convert(cfg, SweepConfig)
        if data_dir is not None:  # the driver's path, or this node's copy of it
            self.cfg = msgspec.structs.replace(self.cfg, data_dir=data_dir_here(data_dir))
        self.run_id = run_id
        self.slots = slots
        self.ahead = max(2, slots // 4)  # items kept queued beyond the slots
        self.reference_url = reference_url
        self.transport = transport
        self.queue: deque[WorkItem] = deque()
        self.drained = False
        self.running = 0
        self._news = asyncio.Event()
        self.limits = LeaseLimitsPool(wake=self._wake)
        self.sink = ForwardingStore(wake=self._wake, judge=state_judgment)
        self.calls: list[Call] = []
        self.sweep: Sweep | None = None
        self._tasks: list[asyncio.Task] = []
        self._have_work = asyncio.Event()
        self._told_idle = False  # the last report said idle (said once, not on every call)
        self._in_transit = 0  # model calls in the last report, until the next exchange
        self._cpu0 = 0.0
        self._last_want = time.monotonic()

    def _wake(self) -> None:
        self._news.set()

    def pid(self) -> int:
        return os.getpid()

    def unacknowledged(self) -> int:
        """Model calls this worker made that the driver has not stored yet: in flight, answered
        but not reported, or in the last report, not yet acknowledged by the next exchange.
        What a kill now would make someone pay for again (tests, benchmarks)."""
        in_flight = sum(lim.concurrency.in_flight for lim in self.limits._limits.values())
        return in_flight + self.sink.calls_pending + self._in_transit

    def node_id(self) -> str:
        """The Ray node this worker runs on."""
        import ray

        return ray.get_runtime_context().get_node_id()

    def kill(self, path: str) -> None:
        """SIGKILL this process, first writing :meth:`unacknowledged` to ``path``, in one
        step of the loop: the count is exactly what the kill leaves unstored (tests and
        ``benchmarks/scaleout.py`` kill a worker with it)."""
        Path(path).write_text(str(self.unacknowledged()), encoding="utf-8")
        os.kill(os.getpid(), signal.SIGKILL)

    def cpu_s(self) -> float:
        """This process's CPU seconds since its clients were built (the benchmark's
        accounting; the imports and set-up before are the start's)."""
        return time.process_time() - self._cpu0

    async def start(self) -> bytes:
        """Build the clients and the runners; the first report names every account."""
        cfg = self.cfg
        sweep = self.sweep = Sweep(cfg, self.sink, run_id=self.run_id, progress=self._progress,
                                   check_endpoints=False)
        names = set(cfg.models) | {cfg.user_model}
        for name in sorted(names):
            ep = cfg.endpoint(name, self.reference_url)
            if self.transport is not None:
                sweep.clients[name] = ModelClient(
                    ep, limits=self.limits.get(limits_key(ep), ep),
                    transport=self.transport(ep))
            else:
                sweep.clients[name] = client_for(ep, limits=self.limits)
        _warm_up(cfg)
        tune_gc()
        self._cpu0 = time.process_time()
        return self._report()

    def _runners(self) -> None:
        """Up to ``slots`` runners while there is work (they end once drained and empty)."""
        self._tasks = [t for t in self._tasks if not t.done()]
        while self.queue and len(self._tasks) < self.slots:
            self._tasks.append(asyncio.create_task(self._runner()))

    def _progress(self, kind: str, **info: Any) -> None:
        if kind != "call":
            return
        result = info["result"]
        if isinstance(result, BaseException):
            self.calls.append(Call(info["endpoint"], False,
                                   attempts=getattr(result, "attempts", 1), error=str(result)))
            return
        u = result.usage
        self.calls.append(Call(info["endpoint"], True, u.prompt_tokens, u.cached_prompt_tokens,
                               u.completion_tokens, getattr(result, "latency_s", 0.0) or 0.0,
                               getattr(result, "attempts", 1)))

    async def _runner(self) -> None:
        sweep = self.sweep
        while True:
            while not self.queue:
                if self.drained:
                    return
                self._have_work.clear()
                await self._have_work.wait()
            item = self.queue.popleft()
            self.running += 1
            self.sink.tasks[item.key] = item.task
            try:
                await sweep.run_item(item)
            finally:
                self.running -= 1
                self.sink.tasks.pop(item.key, None)
                if not self.drained and len(self.queue) < max(1, self.ahead // 2):
                    self._wake()

    async def exchange(self, delivery: Delivery) -> bytes:
        """Take the driver's delivery; answer once there is news (see the module docstring)."""
        self._in_transit = 0  # the driver has the last report
        if delivery.stop:
            return await self._stop()
        self.limits.apply(delivery.grants)
        for key, journal in delivery.journals.items():
            self.sink.journals[key] = journal
            self.sweep._journaled.add(key)
        if delivery.items:
            self.queue.extend(delivery.items)
        # drained until the driver has work again (a dead worker's episodes, say)
        self.drained = delivery.drained
        self._have_work.set()
        self._runners()
        if not self._news_now():
            # a request waiting on a lease the driver could not fill asks again soon, not at
            # once (the account's bucket refills at its rate, not at the round trip's)
            starved = self.limits.starved
            self._news.clear()
            try:
                await asyncio.wait_for(self._news.wait(), STARVED_S if starved else HEARTBEAT_S)
            except TimeoutError:
                pass
            else:
                if not self.limits.starved:
                    await asyncio.sleep(BATCH_S)
        return self._report()

    def _news_now(self) -> bool:
        return bool(self.sink.pending or (self.idle and not self._told_idle)
                    or (not self.drained and len(self.queue) < max(1, self.ahead // 2)))

    @property
    def idle(self) -> bool:
        return self.drained and not self.queue and not self.running

    def _report(self) -> bytes:
        """The report, as msgpack: one bytes object through Ray, not a graph to pickle."""
        return _pack(self._build_report())

    def _build_report(self) -> Report:
        now = time.monotonic()
        report = self.sink.take(Report())
        self._in_transit = sum(e.kind == "model_call" for e in report.events)
        report.calls, self.calls = self.calls, []
        report.limits, self.limits.new = self.limits.new, {}
        report.wants = self.limits.wants(now - self._last_want)
        self._last_want = now
        report.room = (0 if self.drained else
                       max(0, self.slots + self.ahead - len(self.queue) - self.running))
        report.running = self.running
        report.idle = self._told_idle = self.idle
        return report

    async def _stop(self) -> bytes:
        """The sweep stops (a signal at the driver): no request starts from now, episodes in
        flight are cancelled and stay ``running`` in the store (continued next time)."""
        self.limits.close()
        if self.sweep is not None:
            self.sweep.interrupted = signal.SIGINT
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks)
        for client in (self.sweep.clients.values() if self.sweep else ()):
            await client.aclose()
        return self._report()


def _warm_up(cfg: SweepConfig) -> None:
    """Import the benchmarks' code now, not in the first episodes in the middle of the sweep
    (one process does its imports before its first episode too): it was 8% of a quick
    sweep's worker CPU. Ray's serialization context is built before ``start`` runs, when its
    arguments are read."""
    for spec in cfg.benchmarks:
        with contextlib.suppress(SweepbenchError):  # an episode of it reports the error
            BenchmarkSpec.parse(spec)


def data_dir_here(path: str | None) -> str | None:
    """The data directory on this node: the driver's path where it exists here, else the job's
    working directory (where Ray unpacked the ``runtime_env`` the driver sent it)."""
    if path is None or Path(path).is_dir():
        return path
    return str(Path.cwd())
