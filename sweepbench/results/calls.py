"""The selected episodes' journaled model calls as columns, read from the store's call facts
(schema 6: each call's usage, latency, attempts and statuses, extracted when it was
journaled), so that cost and profiles sum arrays instead of decoding every payload.

One entry per call whose payload decodes, in the order ``StoreReads.model_calls`` returns
them (each store's episodes in chunks of keys, each chunk by episode key, journal and seq):
the sums that cost and profiles make in that order come out bit for bit the same. Texts
(runs, endpoints, roles, statuses) are codes into small tables, numbered by SQLite; the rare
fields (stalls, replica, failures) are kept only for the calls that have them, whole.
Numbers travel from SQLite as float64 rows (token counts and codes are integers far below
2**53, so they stay exact).
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from sweepbench.store import fact_scan
from sweepbench.store.fact_scan import CallFactArrays, small_ints
from sweepbench.store.reads import ModelCallRow, StoreReads

__all__ = ["CallColumns", "NO_LATENCY", "load_calls"]

NO_LATENCY = float("-inf")
"""The latency of a call that recorded none (a profile counts latencies >= 0 only)."""

_NUMBERS = ("prompt", "completion", "cached", "latency", "has_attempts", "attempts")
_TYPES = {"prompt": np.int64, "completion": np.int64, "cached": np.int64,
          "latency": np.float64, "has_attempts": bool, "attempts": np.int64}


_TEXT_COLUMNS = ("run", "endpoint", "role", "statuses")


def _typed(values: np.ndarray, name: str) -> np.ndarray:
    """A number column as ``_TYPES`` says, integers as int32 where they all fit."""
    if _TYPES[name] is np.int64:
        return small_ints(values.astype(np.int64, copy=False))
    return values.astype(_TYPES[name], copy=False)


class CallColumns:
    """The calls of some episodes, one array entry per call (see the module docstring).

    ``episode``: index into ``keys`` (episode keys, in the order their first call comes);
    ``judge``: the call is a judge's (its journal is not the episode's own); ``run``,
    ``endpoint``, ``role``, ``statuses``: codes into ``runs``, ``endpoints``, ``roles``,
    ``status_texts`` (code 0: None); ``prompt``, ``completion``, ``cached``: tokens;
    ``latency``: seconds, ``NO_LATENCY`` where none was recorded; ``has_attempts``,
    ``attempts``; ``rare``: call index -> the whole call, for the calls with stalls, a
    replica or failures."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self._key_index: dict[str, int] = {}
        self.texts: dict[str, list[str | None]] = {c: [None] for c in _TEXT_COLUMNS}
        self._text_index: dict[str, dict[str | None, int]] = {c: {None: 0}
                                                                for c in _TEXT_COLUMNS}
        self.rare: dict[int, ModelCallRow] = {}
        self._parts: list[dict[str, np.ndarray]] = []
        self.n = 0

    @property
    def runs(self) -> list[str | None]:
        return self.texts["run"]

    @property
    def endpoints(self) -> list[str | None]:
        return self.texts["endpoint"]

    @property
    def roles(self) -> list[str | None]:
        return self.texts["role"]

    @property
    def status_texts(self) -> list[str | None]:
        return self.texts["statuses"]

    def _codes(self, store_texts: dict[int, str]) -> dict[str, np.ndarray]:
        """column -> this table's code of each of a store's text ids (0: None)."""
        size = max(store_texts, default=0) + 1
        out = {}
        for c in _TEXT_COLUMNS:
            index, values = self._text_index[c], self.texts[c]
            codes = np.zeros(size, dtype=np.int64)
            for i, v in store_texts.items():
                if v not in index:
                    index[v] = len(values)
                    values.append(v)
                codes[i] = index[v]
            out[c] = codes
        return out

    def _add(self, eps: dict[int, str], rows: list[tuple], rare: list[ModelCallRow],
             codes: dict[str, np.ndarray]) -> None:
        if not rows:
            return
        a = np.array(rows, dtype=np.float64)  # numbers only: ints below 2**53 stay exact
        ep = a[:, 0].astype(np.int64)
        firsts, at = np.unique(ep, return_index=True)
        ep_code = {}
        for e in firsts[np.argsort(at)].tolist():  # episodes in the order of their first call
            key = eps[e]
            if key not in self._key_index:
                self._key_index[key] = len(self.keys)
                self.keys.append(key)
            ep_code[e] = self._key_index[key]
        lookup = np.zeros(int(ep.max()) + 1, dtype=np.int64)
        lookup[list(ep_code)] = list(ep_code.values())
        part = {"episode": lookup[ep].astype(np.int32), "judge": a[:, 1] != 0}
        for j, name in enumerate(_TEXT_COLUMNS, start=2):
            part[name] = codes[name][a[:, j].astype(np.int64)].astype(np.int32)
        for j, name in enumerate(_NUMBERS, start=6):
            part[name] = _typed(a[:, j], name)
        for i, call in zip(np.flatnonzero(a[:, 12]).tolist(), rare):
            self.rare[self.n + i] = call
        self._parts.append(part)
        self.n += len(rows)

    def _add_arrays(self, calls: CallFactArrays, codes: dict[str, np.ndarray]) -> None:
        if not len(calls.episode):
            return
        index = np.empty(len(calls.keys), dtype=np.int64)
        for j, key in enumerate(calls.keys):
            if key not in self._key_index:
                self._key_index[key] = len(self.keys)
                self.keys.append(key)
            index[j] = self._key_index[key]
        part = {"episode": index[calls.episode].astype(np.int32), "judge": calls.judge}
        for j, name in enumerate(_TEXT_COLUMNS):
            part[name] = codes[name].astype(np.int32)[calls.texts[j]]
        for name in _NUMBERS:
            part[name] = _typed(getattr(calls, name), name)
        for i, call in zip(np.flatnonzero(calls.odd).tolist(), calls.rare):
            self.rare[self.n + i] = call
        self._parts.append(part)
        self.n += len(calls.episode)

    def _close(self) -> None:
        for name in ("episode", "judge", *_TEXT_COLUMNS, *_NUMBERS):
            parts = [p.pop(name) for p in self._parts]  # each column's parts freed as it goes
            if len(parts) == 1:
                setattr(self, name, parts[0])
                continue
            if parts:
                setattr(self, name, np.concatenate(parts))
            elif name in _TYPES:
                setattr(self, name, _typed(np.zeros(0, dtype=_TYPES[name]), name))
            else:
                setattr(self, name, np.zeros(0, dtype=bool if name == "judge" else np.int32))
        self._parts = []

    def __len__(self) -> int:
        return self.n


def load_calls(parts: Iterable[tuple[StoreReads, list[str]]]) -> CallColumns:
    """The calls of each (store, its episode keys) as columns; calls whose payload does not
    decode are left out and said (the store's ``damaged``), as ``model_calls`` does."""
    cols = CallColumns()
    for store, keys in parts:
        codes = cols._codes(store.fact_texts())
        if len(keys) >= fact_scan.SCAN_SHARE * store.episode_count():  # one pass
            cols._add_arrays(store.call_fact_arrays(keys), codes)
            continue
        for chunk in store.call_fact_chunks(keys):
            cols._add(chunk.keys, chunk.rows, chunk.rare, codes)
    cols._close()
    return cols
