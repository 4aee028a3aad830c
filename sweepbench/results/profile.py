"""Cost and latency profile of a run, per model and per model × domain.

From the finished episodes' records: turns, tool calls, wall time, and agent and user tokens
per conversation (prompt, cached prompt, completion), priced with a price table. From the
journal's ``model_call`` events: model-call latency percentiles (p50/p95/p99) per role and a
latency histogram of agent calls, retries and HTTP 429s.

Prices are per million tokens: ``Prices(input, cached_input, output)``, or anything with an
``Endpoint``'s ``price_input_per_mtok`` / ``price_cached_input_per_mtok`` /
``price_output_per_mtok`` (attributes or mapping keys). ``prompt_tokens`` includes the cached
ones (the OpenAI convention), so a call costs
``(prompt - cached) * input + cached * cached_input + completion * output``. The agent's
tokens are priced with the agent model's prices, the user simulator's with the user model's
(``user_model``). A model without prices gets ``cost: None``, never a guess.

Absence is explicit: latency numbers are None when a group has no ``model_call`` event with a
latency (imported runs, runs recorded before events carried them); ``retries`` and
``rate_limited`` are None when no event says how many attempts it took.

``stalls`` counts what a latency jump needs explained (:mod:`sweepbench.client.stalls`):
``hung`` requests abandoned for want of a first byte, ``hedged`` second copies sent and
``hedge_wins`` (answers that came from the copy), and ``hedge_usage``/``hedge_cost``: what
the losing copies are counted as billed (None without prices). None when no call journaled
stalls; zeros when calls did and none stalled.

``replicas``, for a model reached through several replicas or keys
(:mod:`sweepbench.client.fleet`): per way in, the calls it answered and their share (its
load), their latency, its failed requests (``errors``) and the cached share of its prompt
tokens; None for a model with one way in.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping, NamedTuple

import msgspec
import numpy as np
from msgspec import Struct

from sweepbench.store.reads import ModelCallRow
from sweepbench.store.runstore import RunStore
from sweepbench.wire import EpisodeRecord, Usage

__all__ = ["Prices", "as_prices", "build_profiles", "call_event", "endpoint_stalls",
           "stall_table",
           "profile_run", "usage_cost"]

LATENCY_BINS = np.geomspace(1e-3, 1e3, 43)  # 1 ms .. 1000 s, 7 bins a decade


class Prices(Struct, kw_only=True, frozen=True):
    """US dollars per million tokens."""

    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0


def as_prices(obj: Any) -> Prices:
    """A ``Prices`` from Prices, an ``Endpoint`` (or anything with its price_* names), or a
    mapping with either the Endpoint names or input / cached_input / output."""
    if isinstance(obj, Prices):
        return obj
    names = {"input": "price_input_per_mtok", "cached_input": "price_cached_input_per_mtok",
             "output": "price_output_per_mtok"}
    values: dict[str, float] = {}
    for short, long in names.items():
        if isinstance(obj, Mapping):
            v = obj.get(long, obj.get(short, 0.0))
        else:
            v = getattr(obj, long, 0.0)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise ValueError(f"price {short!r} must be a number >= 0, got {v!r}")
        values[short] = float(v)
    return Prices(**values)


def usage_cost(usage: Usage, prices: Prices) -> float:
    """Dollars for ``usage`` at ``prices``."""
    cached = min(usage.cached_prompt_tokens, usage.prompt_tokens)
    return ((usage.prompt_tokens - cached) * prices.input + cached * prices.cached_input
            + usage.completion_tokens * prices.output) / 1e6


class _Stalls(Struct):
    hung: int = 0
    hedged: int = 0
    hedge_won: bool = False
    hedge_usage: Usage | None = None


class _Failure(Struct):
    replica: str = ""


class _Call(Struct):
    """The fields of a ``model_call`` event a profile reads (the rest is skipped)."""

    role: str = "agent"
    latency_s: float | None = None
    attempts: int | None = None
    statuses: list[int] | None = None
    stalls: _Stalls | None = None
    replica: str | None = None
    failures: list[_Failure] | None = None
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0


class _Replica:
    """One way in to a model with several: what it answered and what failed on it."""

    def __init__(self) -> None:
        self.latency: list[float] = []
        self.prompt = self.cached = self.errors = 0

    def as_dict(self, calls: int) -> dict[str, Any]:
        n = len(self.latency)
        return {"calls": n, "share": n / calls if calls else None,
                "latency_s": _dist(self.latency), "errors": self.errors,
                "cached_share": self.cached / self.prompt if self.prompt else None}


_call_decoder = msgspec.json.Decoder(_Call)


class Episodes(NamedTuple):
    """A group's episodes as columns, in order: ``turns``, ``tool_calls``, ``agent`` and
    ``user`` usage ((n, 4): prompt, completion, cached prompt, reasoning tokens) and
    ``wall`` seconds."""

    turns: np.ndarray
    tool_calls: np.ndarray
    agent: np.ndarray
    user: np.ndarray
    wall: np.ndarray


def _usage_rows(usages: list[Usage]) -> np.ndarray:
    return np.array([(u.prompt_tokens, u.completion_tokens, u.cached_prompt_tokens,
                      u.reasoning_tokens) for u in usages], dtype=np.int64).reshape(-1, 4)


def episodes_of(records: list[Any]) -> Episodes:
    """The columns of records (anything with a record's counts, usages and wall time)."""
    return Episodes(np.array([r.turns for r in records], dtype=np.int64),
                    np.array([r.tool_calls for r in records], dtype=np.int64),
                    _usage_rows([r.agent_usage for r in records]),
                    _usage_rows([r.user_usage for r in records]),
                    np.array([r.wall_s for r in records], dtype=np.float64))


class _Group:
    def __init__(self) -> None:
        self.records: list[EpisodeRecord] = []
        self.episodes: Episodes | None = None  # the records as columns, when given so
        self.latency: dict[str, Any] = defaultdict(list)  # role -> latencies, in order
        self.retries: int | None = None
        self.rate_limited: int | None = None
        self.stalls: dict[str, int] | None = None
        self.hedge_usage: dict[str, Usage] = defaultdict(Usage)  # role -> billed losers
        self.replicas: dict[str, _Replica] = defaultdict(_Replica)

    def add_call(self, call: _Call) -> None:
        self.add_fleet(call)
        self.add_timing(call)

    def add_fleet(self, call: _Call) -> None:
        """What a call says of its replica, its failed requests and its stalls."""
        for failure in call.failures or ():
            if failure.replica:
                self.replicas[failure.replica].errors += 1
        if call.replica:
            r = self.replicas[call.replica]
            r.latency.append(call.latency_s or 0.0)
            r.prompt += call.prompt_tokens
            r.cached += call.cached_prompt_tokens
        if call.stalls is not None:
            st = self.stalls or {"hung": 0, "hedged": 0, "hedge_wins": 0}
            st["hung"] += call.stalls.hung
            st["hedged"] += call.stalls.hedged
            st["hedge_wins"] += call.stalls.hedge_won
            if call.stalls.hedge_usage is not None:
                self.hedge_usage[call.role] += call.stalls.hedge_usage
            self.stalls = st

    def add_timing(self, call: _Call) -> None:
        """A call's latency, retries and rate limits."""
        if call.latency_s is not None and call.latency_s >= 0:
            self.latency[call.role].append(call.latency_s)
        if call.attempts is not None:
            self.retries = (self.retries or 0) + max(0, call.attempts - 1)
        if call.statuses is not None:
            self.rate_limited = (self.rate_limited or 0) + sum(s == 429 for s in call.statuses)
            if call.attempts is None:  # statuses alone still tell the attempts
                self.retries = (self.retries or 0) + max(0, len(call.statuses) - 1)


def _dist(values: list[float] | np.ndarray) -> dict[str, float] | None:
    if len(values) == 0:
        return None
    a = np.asarray(values, dtype=np.float64)
    p50, p95, p99 = np.percentile(a, [50, 95, 99])
    return {"mean": float(a.mean()), "p50": float(p50), "p95": float(p95),
            "p99": float(p99), "max": float(a.max())}


def _tokens(usages: np.ndarray) -> dict[str, float]:
    n = len(usages) or 1
    prompt, completion, cached, reasoning = (int(x) for x in usages.sum(axis=0))
    return {"prompt": prompt / n, "cached_prompt": cached / n, "completion": completion / n,
            # part of completion (and priced there): a thinking model's share of its output
            "reasoning": reasoning / n}


def _profile(g: _Group, agent_prices: Prices | None, user_prices: Prices | None) -> dict:
    recs = g.records
    eps = g.episodes if g.episodes is not None else episodes_of(recs)
    n = len(eps.turns)
    cost = None
    if agent_prices is not None and n:
        agent = sum(usage_cost(r.agent_usage, agent_prices) for r in recs)
        user = (None if user_prices is None
                else sum(usage_cost(r.user_usage, user_prices) for r in recs))
        total = agent + (user or 0.0)
        cost = {"agent_per_episode": agent / n,
                "user_per_episode": None if user is None else user / n,
                "per_episode": total / n, "total": total}
    agent_lat = g.latency.get("agent", [])
    hist = None
    if len(agent_lat):
        counts, _ = np.histogram(np.clip(agent_lat, LATENCY_BINS[0], LATENCY_BINS[-1]),
                                 LATENCY_BINS)
        used = np.flatnonzero(counts)  # only the span that holds calls: the JSON stays short
        lo, hi = int(used[0]), int(used[-1]) + 1
        hist = {"edges": [float(f"{e:.4g}") for e in LATENCY_BINS[lo:hi + 1]],
                "counts": counts[lo:hi].tolist()}
    stalls = None
    if g.stalls is not None:
        billed = sum(g.hedge_usage.values(), Usage())
        hedge_cost = None  # apart from ``cost``: the episodes' cost stays theirs
        if agent_prices is not None:
            hedge_cost = sum(usage_cost(u, user_prices if role == "user" else agent_prices)
                             for role, u in g.hedge_usage.items()
                             if role != "user" or user_prices is not None)
        stalls = {**g.stalls, "hedge_usage": msgspec.to_builtins(billed),
                  "hedge_cost": hedge_cost}
    return {
        "episodes": n,
        "turns": _dist(eps.turns),
        "tool_calls": _dist(eps.tool_calls),
        "agent_tokens": _tokens(eps.agent) if n else None,
        "user_tokens": _tokens(eps.user) if n else None,
        "cost": cost,
        "wall_s": None if not n else {**_dist(eps.wall),
                                      "total": float(sum(eps.wall.tolist()))},
        "latency_s": {role: _dist(v) for role, v in sorted(g.latency.items())} or None,
        "agent_latency_hist": hist,
        "model_calls": sum(len(v) for v in g.latency.values()),
        "retries": g.retries,
        "rate_limited": g.rate_limited,
        "stalls": stalls,
        "replicas": _replicas(g.replicas),
    }


def _replicas(replicas: dict[str, _Replica]) -> dict[str, dict] | None:
    """Per way in of a model with several (:mod:`sweepbench.client.fleet`): calls answered
    and their share, latency, failed requests, cached share of prompt tokens; None for a
    model with one."""
    if not replicas:
        return None
    calls = sum(len(r.latency) for r in replicas.values())
    return {label: r.as_dict(calls) for label, r in sorted(replicas.items())}


def build_profiles(
    records: Iterable[EpisodeRecord],
    calls: Iterable[tuple[str, str, bytes | Mapping]] = (),
    *,
    prices: Mapping[str, Any] | None = None,
    user_model: str | None = None,
) -> dict[str, dict]:
    """model -> profile, with ``"domains"``: domain -> profile.

    ``calls``: (model, domain, model_call event payload as JSON bytes or a dict).
    """
    groups = _record_groups(records)
    for model, domain, payload in calls:
        try:
            call = (_call_decoder.decode(payload) if isinstance(payload, (bytes, str))
                    else msgspec.convert(payload, _Call))
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue  # a malformed journal entry says nothing about latency
        groups[model, None].add_call(call)
        groups[model, domain].add_call(call)
    return _profiles(groups, prices, user_model)


def _record_groups(records: Iterable[Any]) -> dict[tuple[str, str | None], _Group]:
    groups: dict[tuple[str, str | None], _Group] = defaultdict(_Group)
    for r in records:
        groups[r.model, None].records.append(r)
        groups[r.model, r.domain].records.append(r)
    return groups


def _profiles(groups: dict[tuple[str, str | None], _Group], prices: Mapping[str, Any] | None,
              user_model: str | None) -> dict[str, dict]:
    table = {m: as_prices(p) for m, p in (prices or {}).items()}
    user_prices = table.get(user_model) if user_model else None
    out: dict[str, dict] = {}
    for model in sorted({m for m, _ in groups}):
        agent_prices = table.get(model)
        entry = _profile(groups[model, None], agent_prices, user_prices)
        entry["domains"] = {
            d: _profile(g, agent_prices, user_prices)
            for (m, d), g in sorted(groups.items(), key=lambda kv: str(kv[0][1]))
            if m == model and d is not None
        }
        out[model] = entry
    return out


def endpoint_stalls(calls: Iterable[ModelCallRow]) -> dict[str, dict[str, int]]:
    """endpoint -> its calls, hung requests (abandoned for want of a first byte), hedge
    copies sent and answers a copy won; every call, judges' too (a judge endpoint stalls
    like any), endpoints with no stall left out: a latency jump's reason, per server."""
    return stall_table(calls)


def stall_table(calls: Iterable[ModelCallRow], counts: Mapping[str, int] | None = None
                ) -> dict[str, dict[str, int]]:
    """``endpoint_stalls``; with ``counts`` (endpoint -> its calls), ``calls`` need only be
    the calls that journaled stalls."""
    out: dict[str, dict[str, int]] = {}
    calls_by: dict[str, int] = defaultdict(int) if counts is None else dict(counts)
    for c in calls:
        if not c.endpoint:
            continue
        if counts is None:
            calls_by[c.endpoint] += 1
        st = _stored_json(c.stalls)
        if not isinstance(st, dict):
            continue
        try:
            stall = msgspec.convert(st, _Stalls)
        except msgspec.ValidationError:
            continue
        e = out.setdefault(c.endpoint, {"hung": 0, "hedged": 0, "hedge_wins": 0})
        e["hung"] += stall.hung
        e["hedged"] += stall.hedged
        e["hedge_wins"] += stall.hedge_won
    return {name: {"calls": calls_by[name], **e} for name, e in sorted(out.items())
            if e["hung"] or e["hedged"]}


def _stored_json(raw: bytes | str | None) -> Any:
    """A stored JSON column's value; None when absent or unreadable (a profile skips it)."""
    if raw is None:
        return None
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None


def call_event(call: ModelCallRow) -> dict[str, Any]:
    """The fields of a stored model call a profile reads."""
    statuses = _stored_json(call.statuses)
    if isinstance(statuses, list):
        statuses = [s for s in statuses if isinstance(s, int) and not isinstance(s, bool)]
    else:
        statuses = None
    stalls = _stored_json(call.stalls)
    failures = _stored_json(call.failures)
    fleet = {}
    if call.replica or isinstance(failures, list):  # a model with several ways in
        fleet = {"replica": call.replica, "prompt_tokens": call.prompt_tokens,
                 "cached_prompt_tokens": call.cached_prompt_tokens,
                 "failures": [f for f in failures if isinstance(f, dict)]
                 if isinstance(failures, list) else None}
    return {"role": call.role or "agent", "latency_s": call.latency_s,
            "attempts": call.attempts, "statuses": statuses,
            **({"stalls": stalls} if isinstance(stalls, dict) else {}), **fleet}


def profile_run(
    store: RunStore,
    run_id: str | None = None,
    *,
    prices: Mapping[str, Any] | None = None,
    user_model: str | None = None,
) -> dict[str, dict]:
    """``build_profiles`` over a store's episodes (``run_id``'s selection, or all); the user
    model defaults to the episodes' own. (Reports price calls from the store instead; see
    :mod:`sweepbench.results.cost`.)"""
    rows = store.episode_rows(run_id)
    where = {r["episode_key"]: (r["model"], r["domain"]) for r in rows}
    if user_model is None:
        users = {r["user_model"] for r in rows if r["user_model"]}
        user_model = users.pop() if len(users) == 1 else None
    calls = ((*where[c.episode_key], call_event(c))
             for c in store.model_calls(list(where)) if not c.journal)
    records = store.records(list(where))
    return build_profiles([records[k] for k in where if k in records], calls, prices=prices,
                          user_model=user_model)
