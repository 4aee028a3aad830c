"""One model, many ways in: a client over several replicas and/or keys of one endpoint.

An endpoint with ``base_urls`` or ``api_key_envs`` is one model reached N ways (each
(replica, key) pair, :meth:`~sweepbench.config.Endpoint.ways`). :class:`Fleet` stands where a
:class:`~sweepbench.client.facade.ModelClient` would: the sweep, the journal, the judges and
the reports see one model under one name. Under it, each way is a plain ``ModelClient`` with
its own limits (RPM/TPM per key), breaker, retries and health; a
:class:`~sweepbench.client.routing.Router` picks the way for each call.

Losing a way: a member whose breaker is open fails its call at once (``breaker_max_wait_s``
0 on members) and retries a call at most ``MEMBER_RETRIES`` times; a call that failed on a
way goes to another at once, and one that failed as down (breaker open, connection refused,
reset or timed out) drains that way. The
episode never sees it: its whole conversation is in every request (prompts are
append-only), so any replica continues it. A drained way is probed after a cool-down and
taken back when the probe succeeds. Only when every way is drained does a call wait, at most
the endpoint's ``breaker_max_wait_s``, for a probe.

A call tries at most ``max_retries + 1`` ways in turn, each with its own few retries;
every failed request is kept on the result (its ``replica`` named), so profiles count what
each replica saw. The result names the way that answered (``CallResult.replica``).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import msgspec

from sweepbench.client.cache import ResponseCache
from sweepbench.client.facade import ModelClient, limits_key
from sweepbench.client.limits import LimitsPool
from sweepbench.client.results import CallResult
from sweepbench.client.routing import Router, Way
from sweepbench.config import Endpoint
from sweepbench.errors import (
    EndpointUnavailableError,
    ModelError,
    RetryableError,
    TransportError,
)
from sweepbench.wire import ChatRequest

__all__ = ["MEMBER_RETRIES", "Fleet", "FleetConversation", "client_for", "way_label"]

MEMBER_RETRIES = 2
"""Retries a way makes of a call before the fleet sends it elsewhere: enough for an isolated
fault (retried where its prefix is cached), few enough that a replica gone down costs an
episode a second or two, not the whole back-off of ``max_retries``."""


def way_label(ep: Endpoint, way: Endpoint) -> str:
    """How reports name a way: its URL when the endpoint has replicas, its key variable when
    it has several keys, both when both (a key's name, never the key)."""
    parts = []
    if len(ep.urls) > 1:
        parts.append(way.base_url.rstrip("/"))
    if len(ep.key_envs) > 1:
        parts.append(f"key {way.api_key_env}")
    return " ".join(parts) or way.base_url


def client_for(ep: Endpoint, *, limits: LimitsPool, cache: ResponseCache | None = None
               ) -> ModelClient | Fleet:
    """The client of an endpoint: a ``ModelClient`` for one way in, a ``Fleet`` for more."""
    ways = ep.ways()
    if len(ways) == 1:
        one = ways[0]
        return ModelClient(one, limits=limits.get(limits_key(one), one), cache=cache)
    return Fleet(ep, limits=limits, cache=cache)


class Fleet:
    """The ways in to one model behind the interface the sweep uses of a ``ModelClient``:
    ``complete``, ``conversation``, ``health``, ``endpoint``, ``spare``, ``aclose``.

    ``members`` (tests) replaces the clients built from ``endpoint.ways()``."""

    def __init__(self, endpoint: Endpoint, *, limits: LimitsPool | None = None,
                 cache: ResponseCache | None = None,
                 members: list[ModelClient] | None = None) -> None:
        self.endpoint = endpoint
        ways = endpoint.ways()
        if members is None:
            pool = limits if limits is not None else LimitsPool()
            first = ways[0].base_url
            members = []
            for way in ways:
                # an open breaker fails the call at once, and a way that keeps failing
                # is left after a few requests: the fleet goes elsewhere
                way = msgspec.structs.replace(
                    way, breaker_max_wait_s=0.0,
                    max_retries=min(way.max_retries, MEMBER_RETRIES))
                members.append(ModelClient(way, limits=pool.get(limits_key(way), way),
                                           cache=cache, cache_url=first))
        self.members = members
        urls = endpoint.urls or [""]
        self.labels = [way_label(endpoint, w) for w in ways]
        self.clock = members[0].clock
        self.router = Router([urls.index(w.base_url) if w.base_url in urls else 0
                              for w in ways], self.labels,
                             policy=endpoint.routing, load_factor=endpoint.load_factor,
                             cooldown_s=endpoint.breaker_cooldown_s, clock=self.clock.now)
        self.template = members[0].template
        self._name = endpoint.name

    # -- what the sweep uses of a client --------------------------------------------------

    @property
    def spare(self) -> Any:
        return self.members[0].spare

    @spare.setter
    def spare(self, value: Any) -> None:
        for member in self.members:
            member.spare = value

    def encode(self, request: ChatRequest) -> bytes:
        return self.template.plain(request)

    def conversation(self, affinity: str | None = None) -> FleetConversation:
        """A ModelCall for one episode's conversation, routed by ``affinity`` (its task)."""
        return FleetConversation(self, affinity)

    async def aclose(self) -> None:
        for member in self.members:
            await member.aclose()

    async def __aenter__(self) -> Fleet:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def health(self) -> dict[str, Any]:
        """As ``ModelClient.health``, for the fleet: its breaker "open" only when every way
        is drained, and then, as a single endpoint's, what it waits for: ``open_for_s``
        (since every way was drained), ``probe_in_s`` (the next probe of a drained way; 0
        while one is in flight), ``max_wait_s`` and ``gives_up_in_s``; ``replicas``: each
        way's load, calls, failures and state now."""
        members = [m.health() for m in self.members]
        oks = [h["since_ok_s"] for h in members if h["since_ok_s"] is not None]
        failing = [h for h in members if h["last_failure"]]
        router = self.router
        out: dict[str, Any] = {
            "breaker": "closed" if router.admitted() else "open",
            "failing": min(h["failing"] for h in members),
            "last_failure": failing[-1]["last_failure"] if failing else None,
            "since_ok_s": min(oks) if oks else None,
            "replicas": self.replicas(),
        }
        if out["breaker"] == "open" and router.down_since is not None:
            open_for = max(0.0, self.clock.now() - router.down_since)
            max_wait = self.endpoint.breaker_max_wait_s
            out.update(open_for_s=open_for, probe_in_s=router.probe_in(), max_wait_s=max_wait,
                       gives_up_in_s=None if max_wait is None else max(0.0, max_wait - open_for))
        return out

    def replicas(self) -> list[dict[str, Any]]:
        """Each way now: label, requests in flight, calls sent, calls failed, drained."""
        return [{"replica": w.label, "in_flight": w.load, "calls": w.calls,
                 "failed": w.failed, "drained": w.drained} for w in self.router.ways]

    # -- the call -------------------------------------------------------------------------

    async def complete(self, request: ChatRequest | bytes,
                       conversation: FleetConversation | None = None) -> CallResult:
        """Send ``request`` on the way the router picks; on a way that fails, the next."""
        body = request if isinstance(request, bytes) else self.encode(request)
        clock, router = self.clock, self.router
        start = clock.now()
        affinity = conversation.affinity if conversation is not None else None
        sticky = conversation.replica if conversation is not None else None
        tried: list[ModelError] = []
        failed_on: set[int] = set()
        while True:
            way = router.pick(affinity, sticky, frozenset(failed_on))
            if way is None:  # every way drained: wait for the earliest probe
                await self._wait_for_probe(start, tried)
                continue
            try:
                result = await self.members[way.index].complete(body)
            except ModelError as err:
                down = _down(err)
                router.finished(way, ok=False, down=down)
                _name(err, way)
                tried.append(err)
                failed_on.add(way.index)
                if not _elsewhere(err) or len(tried) > self.endpoint.max_retries:
                    raise _merged(err, tried[:-1]) from None
                sticky = None
                continue
            except BaseException:  # cancelled: the request ended, nothing known of the way
                router.finished(way, ok=False)
                raise
            router.finished(way, ok=True)
            if conversation is not None:
                conversation.replica = way.replica
            result.replica = way.label
            for failure in result.failures:
                failure.replica = way.label
            if tried:
                _carry(result, tried)
            result.wall_s = clock.now() - start
            return result

    async def _wait_for_probe(self, start: float, tried: list[ModelError]) -> None:
        clock = self.clock
        limit = self.endpoint.breaker_max_wait_s
        wait = self.router.due_in()
        waited = clock.now() - start
        if limit is not None and waited + wait > limit:
            last = f"; last: {tried[-1]}" if tried else ""
            err = EndpointUnavailableError(
                f"{self._name}: every replica and key is down (waited {waited:.1f}s){last}",
                endpoint=self._name)
            err.attempts = 0  # no request of its own: only those of the ways tried count
            raise _merged(err, tried)
        await clock.sleep(wait)


class FleetConversation:
    """``Fleet.complete`` for one append-only conversation: bodies spliced from cached bytes,
    and the replica it used last (``replica``), where its prefix is."""

    def __init__(self, fleet: Fleet, affinity: str | None) -> None:
        self.fleet = fleet
        self.affinity = affinity
        self.replica: int | None = None
        self.encoder = fleet.template.splicer()

    def __call__(self, request: ChatRequest) -> Awaitable[CallResult]:
        return self.fleet.complete(self.encoder.encode(request), self)


def _down(err: ModelError) -> bool:
    """The way looks down (drain it): its breaker open, or no answer (refused, reset,
    timed out). A 429 or a 5xx is an answer: the call goes elsewhere, the way stays in
    (a 5xx that persists opens its breaker)."""
    return isinstance(err, (EndpointUnavailableError, TransportError))


def _elsewhere(err: ModelError) -> bool:
    """Worth sending to another way: what another replica or key may answer."""
    return isinstance(err, (RetryableError, EndpointUnavailableError))


def _name(err: ModelError, way: Way) -> None:
    for failure in err.failures:
        failure.replica = way.label


def _carry(result: CallResult, tried: list[ModelError]) -> None:
    """The requests of the ways tried before onto the result."""
    result.failures = [f for e in tried for f in e.failures] + result.failures
    result.statuses = [s for e in tried for s in e.statuses] + result.statuses
    result.attempts += sum(e.attempts for e in tried)
    result.rate_limited += sum(s == 429 for e in tried for s in e.statuses)


def _merged(err: ModelError, before: list[ModelError]) -> ModelError:
    """``err`` carrying the requests of the ways tried before it."""
    if before:
        err.failures = [f for e in before for f in e.failures] + list(err.failures)
        err.statuses = [s for e in before for s in e.statuses] + list(err.statuses)
        err.attempts += sum(e.attempts for e in before)
    return err
