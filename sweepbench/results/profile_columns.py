"""Profiles from call columns and episode facts (schema 6): what
:func:`~sweepbench.results.profile.build_profiles` makes of records and decoded call payloads,
made of arrays. Each group's latencies are taken in the calls' order, so a mean (numpy's
pairwise sum over the same array) is the same to the bit; counts are sums of integers."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping

import msgspec
import numpy as np
from msgspec import Struct

from sweepbench.results.calls import CallColumns
from sweepbench.results.profile import (_Call, _Group, _profiles, _record_groups, _stored_json,
                                        call_event)
from sweepbench.store.facts import EpisodeFacts
from sweepbench.store.reads import ModelCallRow

__all__ = ["ProfileCalls", "build_profiles_columns", "row_profiles"]


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


def build_profiles_columns(records: Iterable[Any], calls: ProfileCalls, *,
                           prices: Mapping[str, Any] | None = None,
                           user_model: str | None = None) -> dict[str, dict]:
    """``build_profiles`` of calls given as columns: the same profiles, each latency list
    in the calls' order (so its mean is the same to the bit), without a payload decoded."""
    groups = _record_groups(records)
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
    role = np.array([role_names.index(r) for r in roles], dtype=np.int64)[calls.role] \
        if n else np.zeros(0, dtype=np.int64)
    statuses = [_statuses(t) for t in calls.status_texts]
    has_st = np.array([s is not None for s in statuses], dtype=bool)[calls.statuses]
    n_st = np.array([len(s or ()) for s in statuses], dtype=np.int64)[calls.statuses]
    n429 = np.array([sum(x == 429 for x in s or ()) for s in statuses],
                    dtype=np.int64)[calls.statuses]
    retry = np.where(calls.has_attempts, np.maximum(0, calls.attempts - 1),
                     np.where(has_st, np.maximum(0, n_st - 1), 0))
    counted = calls.has_attempts | has_st
    model = np.asarray(calls.model, dtype=np.int64)
    domain = np.asarray(calls.domain, dtype=np.int64)
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
        for k in np.unique(key[keep]).tolist():
            g = group_of(k)  # every group a call touches exists, as build_profiles makes it
            for name, (count, total) in sums.items():
                if count[k]:
                    setattr(g, name, (getattr(g, name) or 0) + int(total[k]))
        timed = np.flatnonzero(keep & (calls.latency >= 0))
        by = key[timed] * len(role_names) + role[timed]
        order = np.argsort(by, kind="stable")  # each group's calls in their order
        ranked, at = np.unique(by[order], return_index=True)
        for gk, a, b in zip(ranked.tolist(), at.tolist(), [*at[1:].tolist(), len(order)]):
            g = group_of(gk // len(role_names))
            g.latency[role_names[gk % len(role_names)]] = \
                calls.latency[timed[order[a:b]]].tolist()
    for pos, call in fleet:
        k = int(calls.model[pos])
        groups[calls.models[k], None].add_fleet(call)
        groups[calls.models[k], calls.domains[int(calls.domain[pos])]].add_fleet(call)
    return _profiles(groups, prices, user_model)


def _statuses(text: str | None) -> list[int] | None:
    """A stored statuses text as ``call_event`` reads it: its ints, None when not a list."""
    value = _stored_json(text)
    if not isinstance(value, list):
        return None
    return [s for s in value if isinstance(s, int) and not isinstance(s, bool)]




def row_profiles(cols: CallColumns, facts: Mapping[str, EpisodeFacts],
                 row_of: Mapping[str, dict]) -> dict[tuple[str, ...], dict]:
    """(row name,) and (row name, benchmark) -> profile, as a report's ``add_profiles``
    makes them of the records and the episodes' own calls: ``facts`` and ``cols`` in their
    order, each episode under its row's name (``row_of``: episode key -> its row)."""
    out: dict[tuple[str, ...], dict] = {}
    recs: dict[str, list] = defaultdict(list)  # benchmark -> facts, named by row
    for key, f in facts.items():
        r = row_of.get(key)
        if r is not None:
            recs[r["benchmark"]].append(msgspec.structs.replace(
                f, model=r["name"], domain=r["domain"]))
    names: dict[str, int] = {}
    domains: dict[str, int] = {}
    benches: dict[str, int] = {}
    where = np.full((len(cols.keys), 3), -1, dtype=np.int64)  # episode -> codes
    for i, key in enumerate(cols.keys):
        r = row_of.get(key)
        if r is not None:
            where[i] = (names.setdefault(r["name"], len(names)),
                        domains.setdefault(r["domain"], len(domains)),
                        benches.setdefault(r["benchmark"], len(benches)))
    codes = where[cols.episode] if len(cols) else np.zeros((0, 3), dtype=np.int64)
    own = np.flatnonzero(~cols.judge & (codes[:, 0] >= 0))  # not the judges' calls
    # benchmarks in the order their first call comes, as add_profiles' dict has them
    _, first = np.unique(codes[own, 2], return_index=True)
    rank = np.zeros(max(1, len(benches)), dtype=np.int64)
    rank[codes[own, 2][np.sort(first)]] = np.arange(len(first))
    pooled = own[np.argsort(rank[codes[own, 2]], kind="stable")]

    rare_at = np.fromiter(cols.rare, dtype=np.int64, count=len(cols.rare))

    def subset(idx: np.ndarray) -> ProfileCalls:
        at = np.flatnonzero(np.isin(idx, rare_at)).tolist()
        return ProfileCalls(
            models=list(names), domains=list(domains), roles=cols.roles,
            status_texts=cols.status_texts, model=codes[idx, 0], domain=codes[idx, 1],
            role=cols.role[idx], latency=cols.latency[idx],
            has_attempts=cols.has_attempts[idx], attempts=cols.attempts[idx],
            statuses=cols.statuses[idx], rare={i: cols.rare[int(idx[i])] for i in at})

    pooled_recs = [x for v in recs.values() for x in v]
    for name, p in build_profiles_columns(pooled_recs, subset(pooled)).items():
        out[(name,)] = p
    for b in recs:
        idx = own[codes[own, 2] == benches.get(b, -1)]
        for name, p in build_profiles_columns(recs[b], subset(idx)).items():
            out[(name, b)] = p
    return out
