"""The model calls of a chunk of episodes as arrays: the ``calls`` table of an export, and the
sums of them the ``episodes`` table shows.

A store with the call facts (schema 6) gives them in one query per chunk, numbers and text
ids only (no payload decoded, no Python object per call but the fetched row); an older store
gives them from its journals (``StoreReads.model_calls``). Calls whose payload does not decode
are left out and said, as ``model_calls`` does. The order is ``model_calls``': by episode key,
journal and seq.

Dollars are ``results.cost.call_cost``'s arithmetic over arrays, in its order of operations
(so equal to it bit for bit); a call with hedged copies (``stalls``, rare) is priced by
``call_cost`` itself. Per-episode sums add the calls in their order (``np.bincount`` adds in
index order), as a loop over them would.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sweepbench.errors import StoreError
from sweepbench.results.cost import call_cost, column_costs
from sweepbench.results.export.columns import Coded, Column, Numbers
from sweepbench.results.profile import Prices
from sweepbench.store.reads import ModelCallRow, StoreReads

__all__ = ["CallChunk", "EpisodeSums", "read_calls"]

SOURCES = ["agent", "user", "judge"]
_NONE = float("-inf")  # "no value" in a column of numbers
_SQL_NONE = "-9e999"  # the same in SQL


class EpisodeSums:
    """Per episode of a chunk (by position): what the episodes table sums of its calls."""

    def __init__(self, calls: CallChunk, n: int) -> None:
        ep, src, cost = calls.ep, calls.source, calls.cost
        priced = ~np.isnan(cost)
        judge, own = src == 2, src != 2

        def total(mask: np.ndarray, weights: np.ndarray) -> np.ndarray:
            return np.bincount(ep[mask], weights=weights[mask], minlength=n)

        self.cost = {who: total(priced & (src == i), cost) for i, who in enumerate(SOURCES)}
        self.priced = np.bincount(ep[priced], minlength=n)
        self.unpriced = np.bincount(ep[~priced], minlength=n)
        self.judge_prompt = total(judge, calls.prompt).astype(np.int64)
        self.judge_completion = total(judge, calls.completion).astype(np.int64)
        attempts = np.where(calls.attempts_null | (calls.attempts == 0), 1, calls.attempts)
        self.retries = total(own, np.maximum(0, attempts - 1)).astype(np.int64)
        timed = (src == 0) & np.isfinite(calls.latency)
        self.lat_n = np.bincount(ep[timed], minlength=n)
        self.lat_sum = total(timed, calls.latency)
        self.lat_max = np.zeros(n)  # a loop's max(0.0, ...) over the calls, as the rows had it
        np.fmax.at(self.lat_max, ep[timed], calls.latency[timed])


class CallChunk:
    """The calls of some episodes (``keys``), one array entry per call. ``ep``: index into
    ``keys``; ``journal``: index into ``journals`` (0: the episode's own); ``source``: index
    into ``SOURCES``; ``run``, ``endpoint``, ``role``, ``statuses``: codes into ``texts``
    (0: None); ``latency`` and ``ts``: -inf where none was recorded; ``cost``: NaN where
    unpriced."""

    def __init__(self, keys: list[str], ep: np.ndarray, a: np.ndarray, odd: list[tuple],
                 texts: list[str | None], prices: Mapping[str, Mapping[str, Prices]]) -> None:
        """``a``: a row per call of (flags, seq, ts, run, endpoint, role, statuses, prompt,
        completion, cached, latency, attempts); flags: 1 a judge's journal, 2 stalls, 4 no
        attempts recorded. ``odd``: (journal, stalls) of each call flagged 1 or 2, in order."""
        self.keys, self.texts, self.n, self.ep = keys, texts, len(ep), ep
        a = a.reshape(-1, 12)
        flags = a[:, 0].astype(np.int64)
        ints = [None if i in (2, 10) else a[:, i].astype(np.int64) for i in range(12)]
        self.seq, self.ts = ints[1], a[:, 2]
        self.run, self.endpoint, self.role, self.statuses = ints[3:7]
        self.prompt, self.completion, self.cached = ints[7:10]
        self.latency, self.attempts = a[:, 10], ints[11]
        self.attempts_null = (flags & 4) != 0
        at = np.flatnonzero(flags & 3)
        journals: dict[str, int] = {"": 0}
        self.journal = np.zeros(self.n, dtype=np.int64)
        self.journal[at] = [journals.setdefault(j, len(journals)) for j, _ in odd]
        self.journals = list(journals)
        agent = np.array([t == "agent" for t in texts], dtype=bool)
        self.source = np.where(self.journal != 0, 2, np.where(agent[self.role], 0, 1))
        self.cost = self._cost(prices, {i: s for i, (_, s) in zip(at.tolist(), odd)
                                        if s is not None})

    def _cost(self, prices: Mapping[str, Mapping[str, Prices]],
              stalls: dict[int, str]) -> np.ndarray:
        cost, _, _ = column_costs(self.run, self.texts, self.endpoint, self.texts,
                                  self.prompt, self.cached, self.completion, prices)
        cost[~self.attempts_null & (self.attempts == 0)] = 0.0  # from the response cache
        for i, s in stalls.items():  # hedged copies: rare, priced as cost.call_cost prices them
            cost[i] = _nan(call_cost(self.row(i, s), prices).cost)
        return cost

    def row(self, i: int, stalls: str | None) -> ModelCallRow:
        t = self.texts
        return ModelCallRow(
            self.keys[self.ep[i]], self.journals[self.journal[i]], t[self.run[i]],
            t[self.endpoint[i]], t[self.role[i]], int(self.prompt[i]), int(self.completion[i]),
            int(self.cached[i]), None if self.latency[i] == _NONE else float(self.latency[i]),
            None if self.attempts_null[i] else int(self.attempts[i]), t[self.statuses[i]],
            stalls)

    def columns(self, labels: list[str | None]) -> dict[str, Column]:
        """The ``calls`` table's columns (``labels``: each key's episode label)."""
        judge, method = [], []
        for j in self.journals:
            _, who, how = (j.split("|", 2) + ["", ""])[:3] if j else ("", None, None)
            judge.append(who or None)
            method.append(how or None)
        t = self.texts
        return {
            "episode_key": Coded(self.ep, list(self.keys)), "episode_label": Coded(self.ep, labels),
            "source": Coded(self.source, SOURCES), "judge": Coded(self.journal, judge),
            "judge_method": Coded(self.journal, method), "seq": Numbers(self.seq),
            "ts": Numbers(self.ts, self.ts == _NONE), "run_id": Coded(self.run, t),
            "endpoint": Coded(self.endpoint, t), "role": Coded(self.role, t),
            "prompt_tokens": Numbers(self.prompt), "cached_prompt_tokens": Numbers(self.cached),
            "completion_tokens": Numbers(self.completion),
            "latency_s": Numbers(self.latency, self.latency == _NONE),
            "attempts": Numbers(self.attempts, self.attempts_null),
            "http_statuses": Coded(self.statuses, t), "cost_usd": Numbers(self.cost,
                                                                          np.isnan(self.cost))}


def _nan(x: float | None) -> float:
    return float("nan") if x is None else x


def read_calls(store: StoreReads, keys: list[str],
               prices: Mapping[str, Mapping[str, Prices]]) -> CallChunk:
    """The calls of ``keys``' episodes (at most 900 keys: one query)."""
    if store.has_facts:
        return _from_facts(store, keys, prices)
    texts: dict[str | None, int] = {None: 0}
    code = lambda t: texts.setdefault(t, len(texts))
    at = {k: i for i, k in enumerate(keys)}
    calls = store.model_calls(keys)
    rows = [(bool(c.journal) | (c.stalls is not None) << 1 | (c.attempts is None) << 2, seq, ts,
             code(c.run_id), code(c.endpoint), code(c.role), code(c.statuses), c.prompt_tokens,
             c.completion_tokens, c.cached_prompt_tokens,
             _NONE if c.latency_s is None else c.latency_s, c.attempts or 0)
            for c, (seq, ts) in zip(calls, store.model_call_times(keys))]
    ep = np.array([at[c.episode_key] for c in calls], dtype=np.int64)
    odd = [(c.journal, c.stalls) for c in calls if c.journal or c.stalls is not None]
    return CallChunk(keys, ep, np.array(rows, dtype=np.float64), odd, list(texts), prices)


_PACK = 26  # bits of a text id, two ids to a number (exact in a float64 below 2**53)


def _from_facts(store: StoreReads, keys: list[str],
                prices: Mapping[str, Mapping[str, Prices]]) -> CallChunk:
    """One query of numbers for the chunk (a Python row of a dozen numbers per call: two
    text ids packed into one), one of the rare texts (judges' journals, stalls)."""
    ids = store.fact_texts()
    texts: list[str | None] = [None] * (max(ids, default=0) + 1)
    for i, t in ids.items():
        texts[i] = t
    if len(texts) >= 1 << _PACK:
        raise StoreError(f"run store {store.path}: {len(texts)} call texts, more than an export "
                         "reads")
    marks = ", ".join("?" * len(keys))
    join = f"FROM event_keys k JOIN call_facts f ON f.ep = k.ep WHERE k.episode_key IN ({marks})"
    order = " ORDER BY k.episode_key, f.journal, f.seq"
    # the store's reads module owns its SQL; these statements read its call facts as the
    # export needs them: numbers by the chunk, no object per call
    read = store._read
    for key, journal, seq in read(
            f"SELECT k.episode_key, f.journal, f.seq {join} AND NOT f.valid{order}", tuple(keys)):
        store.left_out_call(key, journal, seq)
    at = {k: i for i, k in enumerate(keys)}
    eps = {ep: at[k] for ep, k in read(
        f"SELECT ep, episode_key FROM event_keys WHERE episode_key IN ({marks})", tuple(keys))}
    rows = read(
        # (SQLite's | and << bind alike, left to right: every shift in parentheses)
        f"SELECT f.ep, (f.journal != '') | ((f.stalls IS NOT NULL) << 1) | "
        f"((f.attempts IS NULL) << 2), f.seq, coalesce(f.ts, {_SQL_NONE}), "
        f"coalesce(f.run_id, 0) | (coalesce(f.endpoint, 0) << {_PACK}), "
        f"coalesce(f.role, 0) | (coalesce(f.statuses, 0) << {_PACK}), coalesce(f.prompt, 0), "
        f"coalesce(f.completion, 0), coalesce(f.cached, 0), "
        f"coalesce(f.latency_s, {_SQL_NONE}), coalesce(f.attempts, 0) {join} AND f.valid{order}",
        tuple(keys))
    odd = read(f"SELECT f.journal, f.stalls {join} AND f.valid AND (f.journal != '' OR "
               f"f.stalls IS NOT NULL){order}", tuple(keys))
    a = np.array(rows, dtype=np.float64).reshape(-1, 11)
    lookup = np.zeros(max(eps, default=0) + 1, dtype=np.int64)
    lookup[list(eps)] = list(eps.values())
    mask = (1 << _PACK) - 1
    run_endpoint, role_statuses = (a[:, i].astype(np.int64) for i in (4, 5))
    unpacked = np.column_stack([a[:, 1:4], run_endpoint & mask, run_endpoint >> _PACK,
                                role_statuses & mask, role_statuses >> _PACK, a[:, 6:]])
    return CallChunk(keys, lookup[a[:, 0].astype(np.int64)], unpacked, odd, texts, prices)
