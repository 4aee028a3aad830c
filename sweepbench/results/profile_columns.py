"""Profiles from call columns and episode facts (schema 6): what
:func:`~sweepbench.results.profile.build_profiles` makes of records and decoded call payloads,
made of arrays. Each group's latencies are taken in the calls' order, so a mean (numpy's
pairwise sum over the same array) is the same to the bit; counts are sums of integers."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping, NamedTuple

import msgspec
import numpy as np
from msgspec import Struct

from sweepbench.results.calls import CallColumns
from sweepbench.results.orders import first_places, stable_order
from sweepbench.results.row_codes import RowCodes
from sweepbench.results.profile import (Episodes, _Call, _Group, _profiles, _record_groups,
                                        _stored_json, call_event)
from sweepbench.store.reads import ModelCallRow

__all__ = ["FactColumns", "ProfileCalls", "build_profiles_columns", "row_profiles"]


class ProfileCalls(Struct):
    """Model calls as columns for ``build_profiles_columns``, in the order a profile takes
    them: ``model``, ``domain``, ``role`` codes into ``models``, ``domains``, ``roles`` (the
    role as the call recorded it, None when it did not), ``latency`` (``NO_LATENCY`` when
    none), ``has_attempts``, ``attempts``, ``statuses`` codes into ``status_texts`` (JSON
    texts as stored), ``rare``: position -> the call, for calls with stalls, a replica or
    failures."""

    models: list[str]
    domains: list[str]
    roles: list[str | None]
    status_texts: list[str | None]
    model: Any
    domain: Any
    role: Any
    latency: Any
    has_attempts: Any
    attempts: Any
    statuses: Any
    rare: dict[int, ModelCallRow]


class FactColumns(NamedTuple):
    """Episodes' facts (schema 6) as columns, in the order ``EpisodeView.facts`` gives them:
    ``keys``, ``episodes`` (:class:`~sweepbench.results.profile.Episodes`: counts, usages,
    wall time) and ``errors`` (episode key -> its error, for those that have one)."""

    keys: list[str]
    episodes: Episodes
    errors: dict[str, str]

    @classmethod
    def of(cls, rows: list[tuple]) -> "FactColumns":
        """From ``StoreReads.episode_fact_rows``' rows (``facts.facts_row``'s layout)."""
        if not rows:
            z = np.zeros(0, dtype=np.int64)
            return cls([], Episodes(z, z, z.reshape(0, 4), z.reshape(0, 4), np.zeros(0)), {})
        ints = np.array([r[1:7] + r[8:16] for r in rows], dtype=np.int64)
        return cls([r[0] for r in rows],
                   Episodes(ints[:, 0], ints[:, 4], ints[:, 6:10], ints[:, 10:14],
                            np.array([r[7] for r in rows], dtype=np.float64)),
                   {r[0]: r[16] for r in rows if r[16] is not None})


def build_profiles_columns(records: Iterable[Any], calls: ProfileCalls, *,
                           prices: Mapping[str, Any] | None = None,
                           user_model: str | None = None) -> dict[str, dict]:
    """``build_profiles`` of calls given as columns: the same profiles, each latency list
    in the calls' order (so its mean is the same to the bit), without a payload decoded."""
    groups = _record_groups(records)
    _add_calls(groups, calls)
    return _profiles(groups, prices, user_model)


def _add_calls(groups: dict[tuple[str, str | None], _Group], calls: ProfileCalls) -> None:
    """The calls' latencies (arrays, in the calls' order), retries, rate limits and fleet
    on the groups of their (model) and (model, domain)."""
    n = len(calls.latency)
    keep = np.ones(n, dtype=bool)
    fleet: list[tuple[int, _Call]] = []
    for pos, row in sorted(calls.rare.items()):
        try:
            call = msgspec.convert(call_event(row), _Call)
        except msgspec.ValidationError:
            keep[pos] = False  # as build_profiles skips a call that does not convert
            continue
        fleet.append((pos, call))
    # the role a profile files a call under: as recorded, "agent" when none
    roles = [r or "agent" for r in calls.roles]
    role_names = sorted(set(roles))
    role = np.array([role_names.index(r) for r in roles], dtype=np.int32)[calls.role] \
        if n else np.zeros(0, dtype=np.int32)
    statuses = [_statuses(t) for t in calls.status_texts]
    has_st = np.array([s is not None for s in statuses], dtype=bool)[calls.statuses]
    n_st = np.array([len(s or ()) for s in statuses], dtype=np.int32)[calls.statuses]
    retry = np.where(calls.has_attempts, np.maximum(0, calls.attempts - 1),
                     np.where(has_st, np.maximum(0, n_st - 1), 0))
    del n_st
    n429 = np.array([sum(x == 429 for x in s or ()) for s in statuses],
                    dtype=np.int32)[calls.statuses]
    counted = calls.has_attempts | has_st
    model = np.asarray(calls.model, dtype=np.int32)
    domain = np.asarray(calls.domain, dtype=np.int32)
    for scope, key in ((False, model), (True, model * len(calls.domains) + domain)):
        def group_of(k: int, scope: bool = scope) -> _Group:
            if not scope:
                return groups[calls.models[k], None]
            return groups[calls.models[k // len(calls.domains)],
                          calls.domains[k % len(calls.domains)]]

        size = int(key.max()) + 1 if n else 0
        sums = {}
        for name, mask, values in (("retries", keep & counted, retry),
                                   ("rate_limited", keep & has_st, n429)):
            sums[name] = (np.bincount(key[mask], minlength=size),
                          np.bincount(key[mask], weights=values[mask], minlength=size))
        for k in np.flatnonzero(np.bincount(key[keep], minlength=size)).tolist():
            g = group_of(k)  # every group a call touches exists, as build_profiles makes it
            for name, (count, total) in sums.items():
                if count[k]:
                    setattr(g, name, (getattr(g, name) or 0) + int(total[k]))
        timed = np.flatnonzero(keep & (calls.latency >= 0))
        by = key[timed] * len(role_names) + role[timed]
        order = stable_order(by)  # each group's calls in their order
        by = by[order]
        at = np.flatnonzero(np.concatenate(([True], by[1:] != by[:-1]))) if len(by) else \
            np.zeros(0, dtype=np.int64)
        ranked = by[at]
        del by
        for gk, a, b in zip(ranked.tolist(), at.tolist(), [*at[1:].tolist(), len(order)]):
            g = group_of(gk // len(role_names))
            g.latency[role_names[gk % len(role_names)]] = calls.latency[timed[order[a:b]]]
    for pos, call in fleet:
        k = int(calls.model[pos])
        groups[calls.models[k], None].add_fleet(call)
        groups[calls.models[k], calls.domains[int(calls.domain[pos])]].add_fleet(call)


def _statuses(text: str | None) -> list[int] | None:
    """A stored statuses text as ``call_event`` reads it: its ints, None when not a list."""
    value = _stored_json(text)
    if not isinstance(value, list):
        return None
    return [s for s in value if isinstance(s, int) and not isinstance(s, bool)]




def row_profiles(cols: CallColumns, facts: FactColumns, rows: RowCodes,
                 index: Mapping[str, int]) -> dict[tuple[str, ...], dict]:
    """(row name,) and (row name, benchmark) -> profile, as a report's ``add_profiles``
    makes them of the records and the episodes' own calls: ``facts`` and ``cols`` in their
    order, each episode under its row's name (``rows``; ``index``: episode key -> its row)."""
    out: dict[tuple[str, ...], dict] = {}
    names, domains, benches = rows.names, rows.domains, rows.benches
    by_row = np.stack([rows.name, rows.domain, rows.bench], axis=1).astype(np.int32) \
        if len(rows.keys) else np.zeros((0, 3), dtype=np.int32)

    def codes_of(keys: list[str]) -> np.ndarray:
        """episode -> (name, domain, benchmark) codes of its row, -1 where it has none"""
        at = np.fromiter((index.get(k, -1) for k in keys), dtype=np.int64, count=len(keys))
        where = np.full((len(keys), 3), -1, dtype=np.int32)
        where[at >= 0] = by_row[at[at >= 0]]
        return where

    fcodes = codes_of(facts.keys)
    mine = np.flatnonzero(fcodes[:, 0] >= 0)
    codes = codes_of(cols.keys)[cols.episode] if len(cols) else np.zeros((0, 3), dtype=np.int64)
    own = np.flatnonzero(~cols.judge & (codes[:, 0] >= 0))  # not the judges' calls
    bench_names = list(benches)

    def in_first_order(idx: np.ndarray, bench: np.ndarray) -> np.ndarray:
        """``idx`` grouped by benchmark, the benchmarks in the order their first entry
        comes (as add_profiles' dicts have them), each group in order."""
        _, first = first_places(bench)
        rank = np.zeros(max(1, len(benches)), dtype=np.int64)
        rank[bench[np.sort(first)]] = np.arange(len(first))
        return idx[stable_order(rank[bench])]

    pooled = in_first_order(own, codes[own, 2])
    pooled_eps = in_first_order(mine, fcodes[mine, 2])
    is_rare = np.zeros(len(cols), dtype=bool)  # (a mask, not np.isin: no sort of the calls)
    is_rare[np.fromiter(cols.rare, dtype=np.int64, count=len(cols.rare))] = True

    def subset(idx: np.ndarray) -> ProfileCalls:
        at = np.flatnonzero(is_rare[idx]).tolist()
        return ProfileCalls(
            models=list(names), domains=list(domains), roles=cols.roles,
            status_texts=cols.status_texts, model=codes[idx, 0], domain=codes[idx, 1],
            role=cols.role[idx], latency=cols.latency[idx],
            has_attempts=cols.has_attempts[idx], attempts=cols.attempts[idx],
            statuses=cols.statuses[idx], rare={i: cols.rare[int(idx[i])] for i in at})

    def groups_of(eps: np.ndarray) -> dict[tuple[str, str | None], _Group]:
        """The groups ``_record_groups`` makes of these episodes' facts, in order."""
        groups: dict[tuple[str, str | None], _Group] = defaultdict(_Group)
        name, domain = fcodes[eps, 0], fcodes[eps, 1]
        nd = max(1, len(domains))
        for by_domain, key in ((False, name), (True, name * nd + domain)):
            order = stable_order(key)
            ranked, at = first_places(key[order])  # (sorted: each group's first place)
            for k, a, b in zip(ranked.tolist(), at.tolist(), [*at[1:].tolist(), len(order)]):
                g = groups[(list(names)[k // nd], list(domains)[k % nd]) if by_domain
                           else (list(names)[k], None)]
                mine = eps[order[a:b]]
                g.episodes = Episodes(*(c[mine] for c in facts.episodes))
        return groups

    groups = groups_of(pooled_eps)
    _add_calls(groups, subset(pooled))
    for name, p in _profiles(groups, None, None).items():
        out[(name,)] = p
    eps_bench = fcodes[mine, 2]
    for b in dict.fromkeys(eps_bench[np.sort(first_places(eps_bench)[1])].tolist()):
        groups = groups_of(mine[eps_bench == b])
        _add_calls(groups, subset(own[codes[own, 2] == b]))
        for name, p in _profiles(groups, None, None).items():
            out[(name, bench_names[b])] = p
    return out
