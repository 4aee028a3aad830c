"""The order a sweep starts its episodes in: longest expected first, fair across models.

A sweep is C slots, each running one episode after another, so its wall time is a makespan.
In file order the last trial's long episodes start last and finish alone while the other
slots sit idle. Longest-processing-time-first (LPT) starts them early and ends the sweep with
short episodes in flight, so the ramp-down is as short as the shortest episodes.

- **Expected length**: an episode's agent + user model calls, from the plan's estimator
  (:func:`sweepbench.runner.plan.episode_calls`): the store's history of the model on the
  task, else on the benchmark, else the benchmark's defaults for the task (its gold plan's
  steps plus its user turns and the protocol's own calls). An episode continued from its
  journal counts only the calls it has left (at least one): its journaled calls replay at
  once.
- **Bands of trials**: trials stay in order in bands of whole trials, each at least
  ``BAND_SLOTS`` episodes per slot (a trial that large is a band of its own; a remainder joins
  the band before it). Inside a band: longest first. So a sweep cut short (a spending cap, an
  interrupt) has whole early bands, and LPT has a band long enough to work in: ordered
  trial by trial, a trial of fewer episodes than slots would start its long episodes last.
- **Fair across models**: each agent model's episodes of a band, longest first (ties: the
  trials of a task together, tasks in file order), merged so that every model has started
  the same share of its expected calls; every model's endpoint keeps its share of the slots
  to the end, none waits for another model's long episodes to finish. A task's trials have
  the same expected length, so keeping them together costs LPT nothing, and trials that start
  together share their prompt prefixes in a server's cache until they diverge (a fleet
  sends them to one replica, :mod:`sweepbench.client.routing`).
- **The last band packed**: LPT leaves the slots finishing up to one short episode apart.
  The slots' loads are simulated (each free slot takes the next episode, every call one
  unit), then episodes of the last band are moved or swapped between the busiest and the
  least busy slots until no move shortens the busiest, and the band is started in the order
  of its planned starts: a slot that frees first takes the next planned episode, so the
  sweep replays the packing whichever slot is which. Packing is only as good as the expected
  lengths (the benchmarks' rough defaults overestimate the scripted oracle's VitaBench
  episodes by 1-3 calls). ``benchmarks/makespan.py``: what the order allows at full size
  went from 0.974 to 0.987 of the ideal C / L, the whole sweep from 0.939 to 0.947.

- **The last band packed again with what the sweep saw** (:class:`WorkQueue`): the
  estimates are only estimates (the scripted oracle's VitaBench episodes run 1-3 calls under
  their defaults), and the packing is only as good as they are. So the first band starts
  with one episode of each model and task (probes; from the last band too for a model and
  task that has episodes only there, as a continued sweep may), and once the sweep is in its
  last band and has seen an episode of every model and task left to start finish, the rest of
  the queue is packed again (once) with the seen mean durations, in seconds, onto the slots as
  they are then (each running episode's expected rest). ``benchmarks/makespan.py`` (a quiet
  machine, medians of 3): what the order allows went from 0.968 to 0.980 of C / L at the
  quick size and from 0.987 to 0.993 at full size; the whole sweep from 0.922 to 0.934 and
  from 0.950 to 0.960. This step depends on timing, so the last band's start order may
  differ between runs; no episode's outcome does (each has its own seed).

``order = "file"`` (``--order file``) keeps the work list's own order: trial-major, tasks in
file order, models in config order. The plan (:func:`order_work`) is deterministic for a
given store and config.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from sweepbench.config import SweepConfig
from sweepbench.ids import WorkOrder
from sweepbench.store.runstore import RunStore
from sweepbench.runner.plan import episode_calls
from sweepbench.runner.work import WorkItem

__all__ = ["BAND_SLOTS", "WorkQueue", "longest_first", "order_work", "pack_tail", "plan_queue",
           "trial_bands"]

BAND_SLOTS = 2
"""Episodes per slot in a band of trials at least. LPT needs its band to outlast the band's
longest episode: with twice as many episodes as slots, the longest (up to 5x the shortest in
the default set) finish while the band's shorter ones still run."""


def order_work(items: list[WorkItem], cfg: SweepConfig, store: RunStore | None,
               data_dir: Path | None, *, slots: int) -> list[WorkItem]:
    """``items`` in the order ``cfg.order`` asks for, with ``slots`` episodes in flight."""
    return plan_queue(items, cfg, store, data_dir, slots=slots).items


def plan_queue(items: list[WorkItem], cfg: SweepConfig, store: RunStore | None,
               data_dir: Path | None, *, slots: int) -> WorkQueue:
    """The :class:`WorkQueue` a sweep takes its episodes from: ``items`` in the order
    ``cfg.order`` asks for, the last band re-packed when reached (``longest`` only)."""
    if cfg.order == WorkOrder.FILE or len(items) < 2:
        return WorkQueue(list(items), tail=0, slots=slots)
    lengths = [calls for calls, _ in episode_calls(cfg, store, items, data_dir)]
    replayed: set[str] = set()
    if store is not None:  # a continued episode replays its journal: only the rest takes time
        done = store.journaled_calls([i.key for i in items])
        replayed = {i.key for i in items if done.get(i.key)}
        lengths = [max(1.0, n - done.get(i.key, 0)) for n, i in zip(lengths, items)]
    band = BAND_SLOTS * max(1, slots)
    order, tail = _longest_first(items, lengths, band=band, slots=slots)
    if tail:  # one episode of each model and task first: their durations inform the repack
        probes: dict[tuple[str, str], int] = {}  # kind -> position in the order
        for pos, i in enumerate(order):
            probes.setdefault(_kind(items[i]), pos)
        # a kind whose episodes are all in the last band (a continued sweep's leftovers) is
        # probed too, else the repack, which waits for every kind left, would never come
        tail += sum(pos >= tail for pos in probes.values())
        chosen = set(probes.values())
        order = [*(order[pos] for pos in probes.values()),
                 *(i for pos, i in enumerate(order) if pos not in chosen)]
    return WorkQueue([items[i] for i in order], tail=tail, slots=slots, replayed=replayed)


class WorkQueue:
    """The sweep's episodes in their planned order (:attr:`items`), taken one at a time by
    its workers (``for item in queue``), each reporting back when its episode ends
    (:meth:`finished`). Once the queue is at or past ``tail`` (the last band's first
    episode; 0: never) and every (model, task) left in it has been seen to finish, the rest
    is packed again (:meth:`_repack`), once. ``replayed``: keys of episodes continued from a
    journal, whose durations say nothing about their task."""

    def __init__(self, items: list[WorkItem], *, tail: int, slots: int,
                 replayed: set[str] | frozenset[str] = frozenset(),
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.items = items
        self._tail = tail
        self._slots = max(1, slots)
        self._replayed = replayed
        self._clock = clock
        self._order = list(range(len(items)))
        self._next = 0
        self._index = {item.key: i for i, item in enumerate(items)}
        self._running: dict[int, float] = {}  # item index -> when it was taken
        self._seen: dict[tuple[str, str], list[float]] = {}  # (model, task) -> [seconds, n]
        self._new_seen = False  # since the last look: a (model, task) seen, or one unseen taken
        self.repacked = False

    def __iter__(self) -> Iterator[WorkItem]:
        return self

    def __next__(self) -> WorkItem:
        if self._next >= len(self._order):
            raise StopIteration
        if (self._new_seen and not self.repacked and self._next >= self._tail > 0
                and self._all_seen()):
            self._repack()
        i = self._order[self._next]
        self._next += 1
        self._running[i] = self._clock()
        if _kind(self.items[i]) not in self._seen:  # an unseen kind may have left the queue
            self._new_seen = True
        return self.items[i]

    def finished(self, item: WorkItem) -> None:
        """``item``'s episode ended (however): its duration counts for its model and task."""
        start = self._running.pop(self._index[item.key], None)
        if start is None or item.key in self._replayed:
            return
        kind = _kind(item)
        seen = self._seen.get(kind)
        if seen is None:
            seen = self._seen[kind] = [0.0, 0]
            self._new_seen = True
        seen[0] += self._clock() - start
        seen[1] += 1

    def put_back(self, item: WorkItem) -> None:
        """``item`` was taken but will not run (the sweep is stopping): it no longer holds a
        slot in the repack's picture, and its duration is not counted."""
        self._running.pop(self._index[item.key], None)

    def _all_seen(self) -> bool:
        """Every (model, task) left in the queue has been seen to finish."""
        self._new_seen = False
        return all(_kind(self.items[i]) in self._seen for i in self._order[self._next:])

    def _repack(self) -> None:
        """The rest of the queue packed (:func:`pack_tail`) with each (model, task)'s seen
        mean duration, onto the slots free after each running episode's expected rest."""
        mean = {pair: total / n for pair, (total, n) in self._seen.items()}
        expect = [mean.get(_kind(item), 0.0) for item in self.items]
        now = self._clock()
        free = sorted(max(0.0, expect[i] - (now - t)) for i, t in self._running.items())
        free = (free + [0.0] * self._slots)[:self._slots]
        self._order[self._next:] = pack_tail(self._order[self._next:], expect, free)
        self.repacked = True


def trial_bands(items: list[WorkItem], band: int) -> list[list[int]]:
    """Indices of ``items`` in bands of consecutive whole trials, each of ``band`` items at
    least (the remainder joins the last band), each band's indices in list order."""
    by_trial: dict[int, list[int]] = {}
    for i, item in enumerate(items):
        by_trial.setdefault(item.trial, []).append(i)
    out: list[list[int]] = []
    current: list[int] = []
    for trial in sorted(by_trial):
        current += by_trial[trial]
        if len(current) >= band:
            out.append(current)
            current = []
    if current:
        if out:
            out[-1] += current
        else:
            out.append(current)
    return out


def longest_first(items: list[WorkItem], lengths: list[float], *, band: int,
                  slots: int | None = None) -> list[WorkItem]:
    """``items`` band by band (:func:`trial_bands`), each band longest first by ``lengths``
    and merged fairly across models (:func:`_fair_merge`); with ``slots``, the last band
    packed onto that many slots (:func:`pack_tail`)."""
    return [items[i] for i in _longest_first(items, lengths, band=band, slots=slots)[0]]


def _longest_first(items: list[WorkItem], lengths: list[float], *, band: int,
                   slots: int | None = None) -> tuple[list[int], int]:
    """:func:`longest_first` as indices into ``items``, and where its last band starts."""
    order: list[int] = []
    group: list[int] = []
    for group in trial_bands(items, band):
        order += _fair_merge(group, items, lengths)
    fixed = len(order) - len(group)
    if slots and group:
        free = [0.0] * slots  # when each slot is free again after the earlier bands
        for i in order[:fixed]:
            heapq.heapreplace(free, free[0] + lengths[i])
        order[fixed:] = pack_tail(order[fixed:], lengths, free)
    return order, fixed


def _kind(item: WorkItem) -> tuple[str, str]:
    """What episodes share a duration: the same model on the same task."""
    return item.model, item.task.key


_EPS = 1e-9


def pack_tail(tail: list[int], lengths: list[float], free: list[float]) -> list[int]:
    """``tail`` (indices into ``lengths``) re-ordered so that slots free at ``free`` and
    each taking the next episode when free finish as close together as the lengths allow.

    ``tail`` in its own order is assigned as the slots would take it; then the busiest slot
    gives an episode to (or swaps one with) the least busy slot it can even out with, the
    move that leaves the pair's larger load smallest, until none shortens it. Each slot's
    episodes keep their ``tail`` order; the result is every episode by its planned start."""
    rank = {i: r for r, i in enumerate(tail)}
    load = list(free)
    jobs: list[list[int]] = [[] for _ in free]
    heap = [(t, s) for s, t in enumerate(free)]
    heapq.heapify(heap)
    for i in tail:
        t, s = heapq.heappop(heap)
        jobs[s].append(i)
        load[s] = t + lengths[i]
        heapq.heappush(heap, (load[s], s))
    for _ in range(4 * len(tail)):  # each move lowers the sorted loads: a bound, not a limit
        move = _best_move(jobs, load, lengths)
        if move is None:
            break
        hi, lo, give, take = move
        jobs[hi].remove(give)
        jobs[lo].append(give)
        delta = lengths[give]
        if take is not None:
            jobs[lo].remove(take)
            jobs[hi].append(take)
            delta -= lengths[take]
        load[hi] -= delta
        load[lo] += delta
    planned: list[tuple[float, int, int]] = []
    for s, mine in enumerate(jobs):
        t = free[s]
        for i in sorted(mine, key=rank.__getitem__):
            planned.append((t, rank[i], i))
            t += lengths[i]
    planned.sort()
    return [i for _, _, i in planned]


def _best_move(jobs: list[list[int]], load: list[float], lengths: list[float]
               ) -> tuple[int, int, int, int | None] | None:
    """(busiest slot, slot to even out with, episode it gives, episode it takes or None),
    or None when no move lowers the busiest slot's load."""
    by_load = sorted(range(len(load)), key=load.__getitem__)
    hi = by_load[-1]
    for lo in by_load[:-1]:
        gap = load[hi] - load[lo]
        if gap <= _EPS:
            return None
        best: tuple[float, int, int | None] | None = None
        for give in jobs[hi]:
            for take in (None, *jobs[lo]):
                delta = lengths[give] - (lengths[take] if take is not None else 0.0)
                if _EPS < delta < gap - _EPS:
                    worse = max(load[hi] - delta, load[lo] + delta)
                    if best is None or worse < best[0] - _EPS:
                        best = (worse, give, take)
        if best is not None:
            return hi, lo, best[1], best[2]
    return None


def _fair_merge(group: list[int], items: list[WorkItem], lengths: list[float]) -> list[int]:
    """``group``'s indices: each model's longest first (ties: a task's episodes together,
    tasks in file order), the models interleaved so that the next episode is always the
    model's that has started the smallest share of its expected calls (ties: the model met
    first, i.e. config order)."""
    per_model: dict[str, list[int]] = {}
    for i in group:
        per_model.setdefault(items[i].model, []).append(i)
    first: dict[str, int] = {}  # task -> its first episode in the group (file order)
    for i in group:
        first.setdefault(items[i].task.key, i)
    for queue in per_model.values():
        queue.sort(key=lambda i: (-lengths[i], first[items[i].task.key], i))
    totals = {m: sum(lengths[i] for i in q) or 1.0 for m, q in per_model.items()}
    started = dict.fromkeys(per_model, 0.0)
    taken = dict.fromkeys(per_model, 0)
    heap = [(0.0, rank, m) for rank, m in enumerate(per_model)]
    out: list[int] = []
    while heap:
        _, rank, model = heapq.heappop(heap)
        queue = per_model[model]
        i = queue[taken[model]]
        out.append(i)
        taken[model] += 1
        started[model] += lengths[i]
        if taken[model] < len(queue):
            heapq.heappush(heap, (started[model] / totals[model], rank, model))
    return out
