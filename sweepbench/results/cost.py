"""Dollars from stored calls: every journaled model call (agent, user simulator, judge) is its
usage at the prices its run stored for its endpoint.

A run stores the prices of every endpoint it used (``runs.prices``: name -> input /
cached_input / output dollars per million tokens), so a report needs no config to price a
run, and a price change between runs prices each call at what it cost when it was made. A
call whose run stored no price for its endpoint (a store migrated from schema 1, an import)
is *unpriced*: counted apart, never guessed. A call answered from the response cache (0
attempts) cost nothing. ``prompt_tokens`` includes the cached ones (the
OpenAI convention), so a call costs ``(prompt - cached) * input + cached * cached_input +
completion * output``. A call whose request was hedged also costs its losing copies' billed
usage (``stalls.hedge_usage``, see :mod:`sweepbench.client.stalls`), so a resumed sweep's
budget and the report count what the live spend counted.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping

import msgspec
import numpy as np
from msgspec import Struct

from sweepbench.results.calls import CallColumns
from sweepbench.results.orders import first_places
from sweepbench.results.profile import Prices, as_prices, usage_cost
from sweepbench.store.reads import ModelCallRow
from sweepbench.wire import Usage

__all__ = ["CallCost", "Spend", "call_cost", "prices_by_run", "role_of"]

ROLES = ("agent", "user", "judge")


class CallCost(Struct, frozen=True):
    episode_key: str
    role: str  # agent | user | judge
    endpoint: str | None
    cost: float | None  # None: unpriced


def role_of(call: ModelCallRow) -> str:
    """agent, user or judge: judges by their journal, the rest by the recorded role (the
    protocol's own calls, e.g. T1's exit check, go to the user model and count as user)."""
    if call.journal:
        return "judge"
    return "agent" if call.role == "agent" else "user"


def prices_by_run(runs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Prices]]:
    """run_id -> endpoint -> Prices, from ``RunStore.runs()``; malformed entries (not a table
    of numbers >= 0) are left out, and so is a run's whole price list when it is not a table:
    their calls are then unpriced."""
    out: dict[str, dict[str, Prices]] = {}
    for run in runs:
        table = {}
        stored = run.get("prices")
        for name, p in (stored.items() if isinstance(stored, Mapping) else ()):
            if not isinstance(p, Mapping):  # as_prices would read a bare value as free
                continue
            try:
                table[name] = as_prices(p)
            except ValueError:
                continue
        out[run["run_id"]] = table
    return out


def call_cost(call: ModelCallRow, prices: Mapping[str, Mapping[str, Prices]],
              override: Mapping[str, Prices] | None = None) -> CallCost:
    """The call's cost at its run's price for its endpoint (``override``: endpoint -> prices
    that replace the stored ones)."""
    p = None
    if call.endpoint is not None:
        if override is not None and call.endpoint in override:
            p = override[call.endpoint]
        else:
            p = prices.get(call.run_id or "", {}).get(call.endpoint)
    cost = None
    if call.attempts == 0:  # answered from the response cache: nothing was paid
        cost = 0.0
    elif p is not None:
        cached = call.cached_prompt_tokens
        cost = ((call.prompt_tokens - cached) * p.input + cached * p.cached_input
                + call.completion_tokens * p.output) / 1e6
        if call.stalls is not None:  # losing hedge copies counted as billed
            cost += _hedge_cost(call.stalls, p)
    return CallCost(call.episode_key, role_of(call), call.endpoint, cost)


class _Hedges(Struct):
    hedge_usage: Usage | None = None


_hedges = msgspec.json.Decoder(_Hedges)


def _hedge_cost(stalls: str, p: Prices) -> float:
    """What a call's ``stalls.hedge_usage`` (its losing copies, as billed) cost; 0 when it
    has none or it is unreadable (a field of the wrong type, a negative count)."""
    try:
        usage = _hedges.decode(stalls).hedge_usage
    except msgspec.DecodeError:  # ValidationError included
        return 0.0
    if usage is None or min(usage.prompt_tokens, usage.cached_prompt_tokens,
                            usage.completion_tokens) < 0:
        return 0.0
    return usage_cost(usage, p)


class Spend:
    """Sums of call costs: in total, by role, by endpoint and by episode; and which
    episodes' roles and which endpoints made unpriced calls (a sum over those is not their
    cost, and is shown as unpriced, never as $0)."""

    def __init__(self) -> None:
        self.total = 0.0
        self.by_role: dict[str, float] = dict.fromkeys(ROLES, 0.0)
        self.by_endpoint: dict[str, float] = defaultdict(float)
        self.by_episode: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(ROLES, 0.0))
        self.calls = 0
        self.unpriced = 0
        self.unpriced_roles: dict[str, set[str]] = defaultdict(set)  # episode -> roles
        self.unpriced_endpoints: set[str] = set()

    def add(self, c: CallCost) -> None:
        self.calls += 1
        if c.cost is None:
            self.unpriced += 1
            self.unpriced_roles[c.episode_key].add(c.role)
            self.unpriced_endpoints.add(c.endpoint or "?")
            return
        self.total += c.cost
        self.by_role[c.role] += c.cost
        self.by_endpoint[c.endpoint or "?"] += c.cost
        self.by_episode[c.episode_key][c.role] += c.cost

    @classmethod
    def of(cls, calls: Iterable[ModelCallRow], prices: Mapping[str, Mapping[str, Prices]],
           override: Mapping[str, Prices] | None = None) -> "Spend":
        s = cls()
        for call in calls:
            s.add(call_cost(call, prices, override))
        return s

    @classmethod
    def of_columns(cls, cols: CallColumns, prices: Mapping[str, Mapping[str, Prices]],
                   override: Mapping[str, Prices] | None = None) -> "Spend":
        """``of`` over calls as columns (:mod:`sweepbench.results.calls`): the same sums,
        each made in the calls' order (``np.add.at`` adds one at a time, in order), so they
        come out bit for bit as ``of`` makes them."""
        s = cls()
        n = len(cols)
        s.calls = n
        if not n:
            return s
        cost, inverse, by_pair = column_costs(
            cols.run, cols.runs, cols.endpoint, cols.endpoints, cols.prompt, cols.cached,
            cols.completion, prices, override)
        priced = ~np.isnan(cost)
        for i, call in cols.rare.items():
            p = by_pair[inverse[i]]
            if p is not None and call.stalls is not None:  # losing hedge copies, as billed
                cost[i] += _hedge_cost(call.stalls, p)
        del inverse
        free = cols.has_attempts & (cols.attempts == 0)  # answered from the response cache
        cost[free] = 0.0
        priced |= free
        roles = np.where(cols.judge, 2, np.where(
            cols.role == _code(cols.roles, "agent"), 0, 1)).astype(np.int8)  # ROLES' order
        paid = np.flatnonzero(priced)
        total = np.zeros(1)
        np.add.at(total, np.zeros(len(paid), dtype=np.intp), cost[paid])
        s.total = float(total[0])
        by_role = np.zeros(3)
        np.add.at(by_role, roles[paid], cost[paid])
        s.by_role = dict(zip(ROLES, by_role.tolist()))
        # endpoints (None counted as "?") and episodes, keyed in the order of their first
        # priced call, as ``add`` keys its dicts
        endpoint_names = [e or "?" for e in cols.endpoints]
        ends = np.array([endpoint_names.index(e) for e in endpoint_names], dtype=np.int64)
        for name, value in _ordered_sums(ends[cols.endpoint[paid]], cost[paid],
                                         len(endpoint_names)):
            s.by_endpoint[endpoint_names[name]] = value
        episodes = cols.episode[paid].astype(np.int64)
        for ep, value in _ordered_sums(episodes * 3 + roles[paid], cost[paid],
                                       3 * len(cols.keys), by=episodes):
            s.by_episode[cols.keys[ep // 3]][ROLES[ep % 3]] = value
        unpaid = np.flatnonzero(~priced)
        s.unpriced = len(unpaid)
        for i in unpaid.tolist():
            s.unpriced_roles[cols.keys[cols.episode[i]]].add(ROLES[roles[i]])
            s.unpriced_endpoints.add(cols.endpoints[cols.endpoint[i]] or "?")
        return s


def column_costs(run: np.ndarray, runs: list[str | None], endpoint: np.ndarray,
                 endpoints: list[str | None], prompt: np.ndarray, cached: np.ndarray,
                 completion: np.ndarray, prices: Mapping[str, Mapping[str, Prices]],
                 override: Mapping[str, Prices] | None = None
                 ) -> tuple[np.ndarray, np.ndarray, list[Prices | None]]:
    """``call_cost``'s tokens-times-prices for calls as columns (``run`` / ``endpoint``: codes
    into ``runs`` / ``endpoints``): each call's dollars (NaN: unpriced; hedged copies and
    the response cache left to the caller), each call's (run, endpoint) pair, and each
    pair's prices. Priced once per pair present, not per call."""
    width = max(1, len(endpoints))
    pair = run.astype(np.int64) * width + endpoint
    present = np.zeros(int(pair.max()) + 1 if len(pair) else 0, dtype=bool)
    present[pair] = True
    pairs = np.flatnonzero(present)  # as np.unique, without sorting every call
    inverse = (np.cumsum(present) - 1)[pair]
    del pair, present
    table = np.full((len(pairs), 3), np.nan)
    by_pair: list[Prices | None] = []
    for i, code in enumerate(pairs.tolist()):
        p = _price(runs[code // width], endpoints[code % width], prices, override)
        by_pair.append(p)
        if p is not None:
            table[i] = (p.input, p.cached_input, p.output)
    # ((prompt - cached) * input + cached * cached_input + completion * output) / 1e6,
    # each step as numpy would take it in one expression, with fewer temporaries
    cost = (prompt - cached) * table[:, 0][inverse]
    cost += cached * table[:, 1][inverse]
    cost += completion * table[:, 2][inverse]
    cost /= 1e6
    return cost, inverse, by_pair


def _price(run: str | None, endpoint: str | None, prices: Mapping[str, Mapping[str, Prices]],
           override: Mapping[str, Prices] | None) -> Prices | None:
    """What ``call_cost`` prices a call of ``run`` to ``endpoint`` at (None: unpriced)."""
    if endpoint is None:
        return None
    if override is not None and endpoint in override:
        return override[endpoint]
    return prices.get(run or "", {}).get(endpoint)


def _code(values: list, value: object) -> int:
    return values.index(value) if value in values else -1


def _ordered_sums(groups: np.ndarray, values: np.ndarray, size: int,
                  by: np.ndarray | None = None) -> list[tuple[int, float]]:
    """(group, sum of its values added one at a time in order), the groups in the order
    ``by`` (default: the groups) first shows them."""
    sums = np.zeros(size)
    np.add.at(sums, groups, values)
    first = groups if by is None else by
    _, at = first_places(first, size)
    order = first[np.sort(at)]
    if by is None:
        return [(g, float(sums[g])) for g in order.tolist()]
    present = np.zeros(size, dtype=bool)
    present[groups] = True
    return [(g, float(sums[g])) for base in order.tolist()
            for g in range(base * 3, base * 3 + 3) if present[g]]
