"""Every call fact of many episodes in one pass (schema 6): ``call_facts`` read in its own order
(episode number, journal, seq: no sort, no key lookups), a range of episodes at a time, its
integer columns as SQLite's ``group_concat`` text parsed by numpy (no Python object per value)
and its latencies as floats (exact), then put in ``model_calls``' order. For a report over
most of a store: ``StoreReads.call_fact_chunks`` asks per chunk of keys instead, which costs
a B-tree search per episode and a tuple per call."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from sweepbench.store.call_rows import ModelCallRow, chunks
from sweepbench.store.schema import CALL_FACTS_ODD

__all__ = ["SCAN_SHARE", "CallFactArrays", "FactScans", "small_ints"]

SCAN_SHARE = 0.25
"""A read of the call facts of at least this share of a store's episodes goes over the whole
table in one pass, a smaller one by its keys."""

_RANGE = 16_384  # episodes a query reads (a few MB of text per column)


class CallFactArrays(NamedTuple):
    """The calls of some episodes, in ``model_calls``' order: ``keys`` (the episodes that have
    calls, in that order) and per call ``episode`` (index into ``keys``), ``texts`` (the
    ``fact_texts`` ids of the calls' runs, endpoints, roles and statuses; 0: none), ``judge`` (a
    judge's journal), ``prompt``, ``completion``, ``cached``, ``latency`` (-inf: none),
    ``has_attempts``, ``attempts`` (0 when none), ``odd`` (stalls, a replica or failures);
    ``rare``: the odd calls whole, in order."""

    keys: list[str]
    episode: np.ndarray
    texts: tuple[np.ndarray, ...]
    judge: np.ndarray
    prompt: np.ndarray
    completion: np.ndarray
    cached: np.ndarray
    latency: np.ndarray
    has_attempts: np.ndarray
    attempts: np.ndarray
    odd: np.ndarray
    rare: list


def _ints(text: str | None) -> np.ndarray:
    if not text:
        return np.zeros(0, dtype=np.int32)
    return small_ints(np.fromstring(text, dtype=np.int64, sep=","))


def small_ints(a: np.ndarray) -> np.ndarray:
    """Integers as int32 when they all fit (a call's token counts and codes do), else as
    they are: half the memory of 17 million calls' columns."""
    if a.dtype.kind == "i" and a.dtype.itemsize > 4 and (
            not len(a) or (int(a.min()) >= -(1 << 31) and int(a.max()) < 1 << 31)):
        return a.astype(np.int32)
    return a


class FactScans:
    """``call_fact_arrays`` for :class:`~sweepbench.store.reads.StoreReads`."""

    def call_fact_arrays(self, keys: Iterable[str]) -> CallFactArrays:
        """The call facts of ``keys``' episodes, as ``call_fact_chunks`` gives them (same
        calls, same order, same calls left out and said), as arrays."""
        ordered = [k for chunk in chunks(keys) for k in sorted(chunk)]
        ep_of = dict(self._read("SELECT episode_key, ep FROM event_keys"))
        top = max(max(ep_of.values(), default=0),
                  self._read("SELECT coalesce(max(ep), 0) FROM call_facts")[0][0])
        rank = np.full(top + 1, -1, dtype=np.int32)
        present = [(i, ep_of[k]) for i, k in enumerate(ordered) if k in ep_of]
        if present:
            at, eps = np.array(present, dtype=np.int64).T
            rank[eps] = at
        size = max(self._read("SELECT coalesce(max(id), 0) + 1 FROM fact_texts")[0][0], 1)
        odd = CALL_FACTS_ODD.format("f")
        columns = ("f.ep", f"coalesce(f.run_id, 0) * {size} + coalesce(f.endpoint, 0)",
                   f"coalesce(f.role, 0) * {size} + coalesce(f.statuses, 0)",
                   "CAST(f.prompt AS INTEGER)", "CAST(f.completion AS INTEGER)",
                   "CAST(f.cached AS INTEGER)", "CAST(coalesce(f.attempts, 0) AS INTEGER)",
                   f"(f.journal != '') + 2 * (f.attempts IS NOT NULL) + 4 * {odd}")
        concat = ", ".join(f"group_concat({c}, ',')" for c in columns)
        parts: list[list[np.ndarray]] = []
        for lo in range(0, top + 1, _RANGE):
            where = f"f.ep >= {lo} AND f.ep < {lo + _RANGE} AND f.valid"
            # a range of the primary key, read in its order (ep, journal, seq)
            texts = self._read(f"SELECT {concat} FROM call_facts f WHERE {where}")[0]
            if texts[0] is None:
                continue
            with self._rlock:
                cur = self._rconn.execute(
                    f"SELECT coalesce(f.latency_s, -9e999) FROM call_facts f WHERE {where} "
                    "ORDER BY f.ep, f.journal, f.seq")
                latency = np.fromiter(itertools.chain.from_iterable(cur), dtype=np.float64)
            parts.append([*(_ints(t) for t in texts), latency])
        def column(j: int, dtype: type | None = None) -> np.ndarray:
            """Column j of every range, in the calls' order (each range's part freed); as
            ``dtype``, else integers as ``small_ints`` left them."""
            if not parts:
                return np.zeros(0, dtype=dtype or np.int32)
            out = np.concatenate([p.pop(j) for p in parts])
            return out if dtype is None else out.astype(dtype, copy=False)

        where = rank[column(0)]
        if (where >= 0).all():  # every call of the store selected: no need to pick
            order = np.argsort(where, kind="stable").astype(np.int32)
        else:
            keep = np.flatnonzero(where >= 0)
            order = keep[np.argsort(where[keep], kind="stable")]
            del keep
        ranks = where[order]
        del where
        starts = np.concatenate(([True], ranks[1:] != ranks[:-1])) if len(ranks) else \
            np.zeros(0, dtype=bool)
        firsts, episode = ranks[starts], (np.cumsum(starts) - 1).astype(np.int32)
        del ranks, starts
        pair = column(0)[order]
        run, endpoint = pair // size, pair % size
        pair = column(0)[order]
        texts = (run, endpoint, pair // size, pair % size)
        del pair
        prompt, completion, cached, attempts = (column(0)[order] for _ in range(4))
        flags = column(0, np.int8)[order]
        latency = column(0, np.float64)[order]
        # the odd calls, whole: invalid ones said in order, the others kept
        names = dict(self._read("SELECT id, text FROM fact_texts"))
        rare: list[ModelCallRow] = []
        selected = set(ordered)
        odd_rows = [r for r in self._read(
            "SELECT k.episode_key, f.valid, f.journal, f.seq, f.run_id, f.endpoint, "
            "f.role, f.prompt, f.completion, f.cached, f.latency_s, f.attempts, "
            "f.statuses, f.stalls, f.replica, f.failures FROM call_facts f "
            "INDEXED BY call_facts_odd JOIN event_keys k ON k.ep = f.ep "
            f"WHERE {odd}") if r[0] in selected]
        odd_rows.sort(key=lambda r: (int(rank[ep_of[r[0]]]), r[2], r[3]))
        for (key, valid, journal, seq, run, endpoint, role, p, c, cached_, latency_,
             attempts_, statuses, stalls, replica, failures) in odd_rows:
            if not valid:
                self.left_out_call(key, journal, seq)
                continue
            rare.append(ModelCallRow(
                key, journal, names.get(run), names.get(endpoint), names.get(role), p, c,
                cached_, latency_, attempts_, names.get(statuses), stalls, replica, failures))
        return CallFactArrays(
            keys=[ordered[i] for i in firsts.tolist()], episode=episode, texts=texts,
            judge=(flags & 1) != 0, prompt=prompt, completion=completion, cached=cached,
            latency=latency, has_attempts=(flags & 2) != 0, attempts=attempts,
            odd=(flags & 4) != 0, rare=rare)
