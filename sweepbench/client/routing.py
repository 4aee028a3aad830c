"""Which way in a request to a fleet takes, and which ways are drained.

A model reached through several replicas and/or keys (``Endpoint.base_urls``,
``api_key_envs``) has one way in per (replica, key). Replicas keep a prompt-prefix cache of
their own, so where a request lands decides how much of its prompt is prefilled again:

- ``affinity`` (the default): an episode stays on the replica it used last (its prefix is
  there), and its first request goes to its task's home replica, so the trials of a task find
  the prefixes the others left. A task's home is chosen when the router first sees the task:
  the replica with the fewest requests in flight then (ties: the first in a ranking of the
  replicas by a hash of (task, replica), rendezvous hashing), and kept: while its home is
  drained a task goes to the next replica of its ranking, and back home once the home is taken
  back (so a replica that returns gets its tasks back, not only what overflows the others'
  bound). Homes by hash alone left 8-11 of 37 tasks split over two replicas and the busier
  replica at 1.06x the mean load in ``benchmarks/fleet.py``; homed by load, 2-4 tasks split
  in most sweeps (11 in one: the bound moves episodes when loads drift) and the busier
  replica was at 1.01-1.03x. Bounded: a replica takes a request only while
  its requests in flight, this one counted, stay within ``ceil(load_factor x mean)``
  (consistent hashing with bounded loads, Mirrokni, Thorup and Zadimoghaddam 2018);
  otherwise the next replica in the task's ranking. Without an affinity (a judge's call),
  the least loaded replica.
- ``round_robin``: each request to the next way in turn (the baseline of
  ``benchmarks/fleet.py``).

Within a replica, the request takes the key with the fewest requests in flight (then the
fewest sent): a key at its RPM limit holds its requests in its own limits' queue, so they
count as its load and the next request goes to another key.

Draining: a way whose call failed as down (its breaker open, connection refused, reset or
timed out) takes no new request for ``cooldown_s``; then the next request to the fleet probes
it. A success re-admits it; a failure drains it again for as long. The interval does not grow:
a probe of a replica still down costs one refused connection, and the call goes elsewhere at
once, while a replica that is back is taken back within one interval of its breaker closing
(its own breaker, which spaces its probes out, still guards it). When every way is drained,
callers wait for the earliest probe (:meth:`Router.due_in`).

Pure bookkeeping on an injectable clock: no I/O, deterministic given the calls made.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence

__all__ = ["AFFINITY", "ROUND_ROBIN", "Router", "Way"]

AFFINITY, ROUND_ROBIN = "affinity", "round_robin"
_RANKINGS = 1 << 16  # tasks whose replica ranking and home are kept


class Way:
    """One (replica, key): its load now and its books."""

    __slots__ = ("busy_s", "calls", "drained_until", "failed", "index", "label", "load",
                 "probing", "replica", "since")

    def __init__(self, index: int, replica: int, label: str) -> None:
        self.index, self.replica, self.label = index, replica, label
        self.load = 0  # requests in flight (waiting on its limits included)
        self.calls = 0  # calls sent to it
        self.failed = 0  # calls that failed on it
        self.busy_s = 0.0  # integral of load over time: mean load = busy_s / elapsed
        self.since = 0.0  # when load last changed
        self.drained_until: float | None = None  # None: admitted
        self.probing = False

    @property
    def drained(self) -> bool:
        return self.drained_until is not None


class Router:
    """Picks a way per request (see the module docstring).

    ``replicas[i]`` is way ``i``'s replica index and ``labels[i]`` its name; ``clock()``
    returns seconds."""

    def __init__(self, replicas: Sequence[int], labels: Sequence[str], *,
                 policy: str = AFFINITY, load_factor: float = 1.2, cooldown_s: float = 1.0,
                 clock: Callable[[], float]) -> None:
        if policy not in (AFFINITY, ROUND_ROBIN):
            raise ValueError(f"routing must be {AFFINITY} or {ROUND_ROBIN}, got {policy!r}")
        self.clock = clock
        self.policy = policy
        self.load_factor = load_factor
        self.cooldown_s = cooldown_s
        now = clock()
        self.ways = [Way(i, r, label) for i, (r, label)
                     in enumerate(zip(replicas, labels, strict=True))]
        for way in self.ways:
            way.since = now
        self.n_replicas = max(replicas) + 1
        self.replica_load = [0] * self.n_replicas
        self.readmitted = 0  # drained ways taken back after a successful probe
        self.down_since: float | None = None  # since when every way is drained
        self._next = 0  # round robin's cursor
        self._rankings: dict[str, list[int]] = {}
        self._homes: dict[str, int] = {}  # task -> its home replica
        self.t0 = now

    # -- choosing -------------------------------------------------------------------------

    def pick(self, affinity: str | None = None, sticky: int | None = None,
             avoid: frozenset[int] = frozenset()) -> Way | None:
        """The way for the next request (counted in flight until :meth:`finished`), or None
        when every way is drained and none is due for its probe. ``affinity``: what should
        land together (a task); ``sticky``: the replica the caller's episode used last;
        ``avoid``: ways this call already failed on, taken only when no other is up."""
        now = self.clock()
        ways = self.ways
        for way in ways:  # a drained way due for its probe takes this request
            if way.drained and not way.probing and now >= way.drained_until:  # type: ignore[operator]
                way.probing = True
                return self._start(way, now)
        usable = [w for w in ways if not w.drained and w.index not in avoid] or [
            w for w in ways if not w.drained]
        if not usable:
            return None
        if self.policy == ROUND_ROBIN:
            n = len(ways)
            way = min(usable, key=lambda w: (w.index - self._next) % n)
            self._next = (way.index + 1) % n
            return self._start(way, now)
        up = sorted({w.replica for w in usable})
        loads = self.replica_load
        cap = math.ceil(self.load_factor * (sum(loads[r] for r in up) + 1) / len(up))
        if sticky is not None and sticky in up and loads[sticky] < cap:
            replica = sticky
        else:
            order = self._homed(affinity, up) if affinity is not None else sorted(
                up, key=lambda r: (loads[r], r))
            replica = next(r for r in order if r in up and loads[r] < cap)
        way = min((w for w in usable if w.replica == replica),
                  key=lambda w: (w.load, w.calls, w.index))
        return self._start(way, now)

    def _homed(self, affinity: str, up: list[int]) -> list[int]:
        """``affinity``'s replicas in order of preference: its home first (the least loaded
        of ``up`` the first time it is seen), then its ranking."""
        rank = self.ranking(affinity)
        home = self._homes.get(affinity)
        if home is None:
            if len(self._homes) >= _RANKINGS:
                self._homes.clear()
            loads = self.replica_load
            home = self._homes[affinity] = min(up, key=lambda r: (loads[r], rank.index(r)))
        return [home, *(r for r in rank if r != home)]

    def ranking(self, affinity: str) -> list[int]:
        """The replicas in ``affinity``'s order of preference (rendezvous hashing: adding or
        losing a replica moves only the tasks whose first choice it was)."""
        order = self._rankings.get(affinity)
        if order is None:
            if len(self._rankings) >= _RANKINGS:
                self._rankings.clear()
            key = affinity.encode()
            order = self._rankings[affinity] = sorted(
                range(self.n_replicas),
                key=lambda r: hashlib.blake2b(key + b"\x00" + str(r).encode(),
                                              digest_size=8).digest())
        return order

    def _start(self, way: Way, now: float) -> Way:
        self._account(way, now)
        way.load += 1
        way.calls += 1
        self.replica_load[way.replica] += 1
        return way

    def _account(self, way: Way, now: float) -> None:
        way.busy_s += way.load * (now - way.since)
        way.since = now

    # -- outcomes -------------------------------------------------------------------------

    def finished(self, way: Way, *, ok: bool, down: bool = False) -> None:
        """The request :meth:`pick` gave ``way`` ended: answered (``ok``), failed with the way
        looking ``down`` (drained), or failed otherwise (a 429: the way is alive)."""
        now = self.clock()
        self._account(way, now)
        way.load -= 1
        self.replica_load[way.replica] -= 1
        probe, way.probing = way.probing, False
        if ok:
            if way.drained:
                self.readmitted += 1
            way.drained_until = None
            self.down_since = None
            return
        way.failed += 1
        if down and (probe or not way.drained):
            way.drained_until = now + self.cooldown_s
            if self.down_since is None and not self.admitted():
                self.down_since = now

    def due_in(self) -> float:
        """Seconds until a drained way may be probed (0: one may now)."""
        now = self.clock()
        due = [w.drained_until for w in self.ways if w.drained and not w.probing]
        return max(0.0, min(due) - now) if due else self.cooldown_s

    def probe_in(self) -> float:
        """As :meth:`due_in`, but 0 while a probe is in flight (its answer decides first)."""
        return 0.0 if any(w.probing for w in self.ways) else self.due_in()

    def admitted(self) -> int:
        """Ways taking requests now."""
        return sum(not w.drained for w in self.ways)

    def mean_loads(self) -> list[float]:
        """Each replica's mean requests in flight since the router was made."""
        now = self.clock()
        elapsed = max(now - self.t0, 1e-9)
        out = [0.0] * self.n_replicas
        for way in self.ways:
            self._account(way, now)
            out[way.replica] += way.busy_s / elapsed
        return out
