"""What a report reads of the selected episodes' judgments, as columns: per (judge, method) pair,
one verdict and one score per episode row, and of the details only what the leaderboards
read (their numbers, the rubric decisions, an ``unreachable`` and an ``error``). A store of
millions of judgments is then counted without a Python object per judgment; the details are
decoded one chunk at a time and dropped.

Everything a sum runs over keeps the order the dict-per-judgment report had, so its numbers
are the same to the bit: pairs in the order their first judgment is read, and each pair's
episodes in *read order* (each store's selected keys in chunks, each chunk in key order, as
``StoreReads.judgments`` returns them).
"""

from __future__ import annotations

from array import array
from collections import Counter
from typing import Any

import msgspec
import numpy as np

from sweepbench.results.agreement import (RUBRIC_KEYS, Agreement, kappa_from_confusion,
                                          paired_items, rubric_decisions)
from sweepbench.results.details import numeric_details
from sweepbench.results.selection import EpisodeView
from sweepbench.store.call_rows import chunks

__all__ = ["ABSENT", "NO_VERDICT", "Judged", "load_judged"]

ABSENT, NO_VERDICT = -2, -1
"""``Judged.verdict`` codes besides 0 (failed) and 1 (passed): no judgment of that pair, and a
judgment without a verdict."""


class Numbers:
    """A pair's numeric details of one shape (the same names, in the same order): the rows that
    have them, their values (float64, one row of ``len(names)`` per entry) and whether each
    value was written as an integer (a count, not a rate)."""

    __slots__ = ("names", "rows", "values", "ints")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.rows = array("q")
        self.values = array("d")
        self.ints = array("b")

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """rows, values (rows x names) and ints (rows x names, bool)."""
        width = len(self.names)
        return (np.frombuffer(self.rows, dtype=np.int64),
                np.frombuffer(self.values, dtype=np.float64).reshape(-1, width),
                np.frombuffer(self.ints, dtype=np.int8).reshape(-1, width).astype(bool))


class Judged:
    """Judgments as columns over a view's rows (see the module docstring). Per pair index
    ``p`` (``pairs[p]`` = (judge, method)): ``verdict[p]`` (int8 per row: ``ABSENT``,
    ``NO_VERDICT``, 0, 1), ``score[p]`` (float64, meaningful where ``has_score[p]``),
    ``numbers[p]`` (names -> :class:`Numbers`), ``rubric[p]`` (row -> decisions, where the
    details have a decision list), ``unreachable[p]`` (row -> the details' truthy
    ``unreachable``); ``errors``: (read position, judge, method, error text) of the judgments
    with neither verdict nor score whose details say an ``error``; ``read_pos``: each row's
    place in read order."""

    def __init__(self, n_rows: int, read_pos: np.ndarray) -> None:
        self.n = n_rows
        self.read_pos = read_pos
        self.pairs: list[tuple[str, str]] = []
        self._index: dict[tuple[str, str], int] = {}
        self.verdict: list[np.ndarray] = []
        self.score: list[np.ndarray] = []
        self.has_score: list[np.ndarray] = []
        self.numbers: list[dict[tuple[str, ...], Numbers]] = []
        self.rubric: list[dict[int, bytes]] = []
        self.unreachable: list[dict[int, Any]] = []
        self.errors: list[tuple[int, str, str, str]] = []
        self._pending: list[tuple[list, list, list, list]] = []  # per pair, till flush

    def index(self, pair: tuple[str | None, str]) -> int | None:
        """The pair's index, None when it judged none of the rows."""
        return self._index.get(pair)  # type: ignore[arg-type]

    def _pair(self, pair: tuple[str, str]) -> int:
        p = self._index.get(pair)
        if p is None:
            p = self._index[pair] = len(self.pairs)
            self.pairs.append(pair)
            self.verdict.append(np.full(self.n, ABSENT, dtype=np.int8))
            self.score.append(np.zeros(self.n))
            self.has_score.append(np.zeros(self.n, dtype=bool))
            self.numbers.append({})
            self.rubric.append({})
            self.unreachable.append({})
            self._pending.append(([], [], [], []))
        return p

    def add(self, row: int, judge: str, method: str, passed: Any, score: Any,
            details: Any) -> None:
        """One judgment of the episode of row ``row`` (its verdict and score placed at the
        next ``flush``)."""
        p = self._pair((judge, method))
        rows, verdicts, scores, at = self._pending[p]
        if score is not None:
            at.append(row)
            scores.append(score)
        rows.append(row)
        verdicts.append(NO_VERDICT if passed is None else int(bool(passed)))
        if type(details) is not dict:
            return
        numbers = numeric_details(details)
        if numbers:
            names = tuple(numbers)
            group = self.numbers[p].get(names)
            if group is None:
                group = self.numbers[p][names] = Numbers(names)
            values = numbers.values()
            group.rows.append(row)
            group.values.extend(values)
            group.ints.extend([type(v) is int for v in values])
        for k in RUBRIC_KEYS:
            if k in details:
                decisions = rubric_decisions(details)
                if decisions is not None:
                    self.rubric[p][row] = bytes(decisions)
                break
        why = details.get("unreachable")
        if why:
            self.unreachable[p][row] = why
        if passed is None and score is None and details.get("error"):
            self.errors.append((int(self.read_pos[row]), judge, method, str(details["error"])))

    def flush(self) -> None:
        """Place the verdicts and scores added since the last flush."""
        for p, (rows, verdicts, scores, at) in enumerate(self._pending):
            self.verdict[p][rows] = verdicts
            self.score[p][at] = scores
            self.has_score[p][at] = True
            self._pending[p] = ([], [], [], [])

    def _in_read_order(self) -> None:
        """Pairs renumbered in the order their first judgment is read."""
        first = [(int(self.read_pos[np.flatnonzero(v != ABSENT)].min()), *pair)
                 for v, pair in zip(self.verdict, self.pairs)]
        order = sorted(range(len(self.pairs)), key=first.__getitem__)
        for name in ("pairs", "verdict", "score", "has_score", "numbers", "rubric",
                     "unreachable"):
            values = getattr(self, name)
            setattr(self, name, [values[p] for p in order])
        self._index = {pair: p for p, pair in enumerate(self.pairs)}
        self.errors.sort()

    def judged_rows(self, p: int) -> np.ndarray:
        """The rows pair ``p`` judged, in read order."""
        rows = np.flatnonzero(self.verdict[p] != ABSENT)
        return rows[np.argsort(self.read_pos[rows], kind="stable")]

    def methods(self) -> list[dict]:
        """The report's ``judge_methods``: per pair, the episodes it judged and its verdicts,
        most verdicts first."""
        out = [{"judge": j, "method": m, "episodes": int((v != ABSENT).sum()),
                "verdicts": int((v >= 0).sum())} for (j, m), v in zip(self.pairs, self.verdict)]
        return sorted(out, key=lambda p: (-p["verdicts"], p["judge"], p["method"]))

    def verdict_counts(self, bench: np.ndarray, benches: list[str]) -> dict[str, Counter]:
        """benchmark -> (judge, method) -> verdicts on its rows (``bench``: each row's code
        into ``benches``)."""
        out: dict[str, Counter] = {b: Counter() for b in benches}
        for pair, v in zip(self.pairs, self.verdict):
            counts = np.bincount(bench[v >= 0], minlength=len(benches))
            for b, n in zip(benches, counts.tolist()):
                if n:
                    out[b][pair] = n
        return out

    def unjudged(self) -> list[dict]:
        """The judgments without verdict or score that say an error, in read order, as
        :func:`~sweepbench.results.runinfo.unjudged_by_judge` reads them."""
        return [{"judge": j, "method": m, "passed": None, "score": None,
                 "details": {"error": text}} for _, j, m, text in self.errors]

    def agreement(self, a: int, b: int) -> Agreement:
        """:func:`~sweepbench.results.agreement.judge_agreement` of pairs ``a`` and ``b``
        over the rows both judged: the same counts, so the same κ."""
        va, vb = self.verdict[a], self.verdict[b]
        both = (va >= 0) & (vb >= 0)
        pa, pb = va[both].astype(bool), vb[both].astype(bool)
        ra, rb = self.rubric[a], self.rubric[b]
        rubric_eps, mismatched, items_a, items_b = paired_items(
            (ra[row], rb[row]) for row in sorted(ra.keys() & rb.keys()))
        xa, xb = (np.array(items, dtype=bool) for items in (items_a, items_b))
        pass_agree, pass_kappa = _agree(pa, pb)
        rubric_agree, rubric_kappa = _agree(xa, xb)
        return Agreement(episodes=len(pa), pass_agreement=pass_agree, pass_kappa=pass_kappa,
                         rubric_episodes=rubric_eps, rubric_items=len(xa),
                         rubric_mismatched=mismatched, rubric_agreement=rubric_agree,
                         rubric_kappa=rubric_kappa)


def _agree(x: np.ndarray, y: np.ndarray) -> tuple[float | None, float | None]:
    """Agreement and κ of two boolean label arrays, as ``judge_agreement`` makes them of lists
    (the confusion matrix over the labels present, in ``cohen_kappa``'s order)."""
    if not len(x):
        return None, None
    labels = sorted(set(np.unique(x).tolist()) | set(np.unique(y).tolist()))
    at = {label: i for i, label in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)))
    for p in labels:
        for q in labels:
            m[at[p], at[q]] = int(((x == p) & (y == q)).sum())
    kappa = kappa_from_confusion(m)
    return int((x == y).sum()) / len(x), None if kappa != kappa else kappa


def read_order(view: EpisodeView) -> np.ndarray:
    """Each of ``view.rows``' place in the order the stores' reads return their episodes
    (store by store; each store's keys in chunks, each chunk in key order)."""
    rows = view.rows
    by_store: dict[int, list[int]] = {}
    for i, r in enumerate(rows):
        by_store.setdefault(r["store"], []).append(i)
    pos = np.empty(len(rows), dtype=np.int64)
    at = 0
    for idx in by_store.values():
        for chunk in chunks(idx):  # the same chunks as the stores' reads of keys
            for i in sorted(chunk, key=lambda i: rows[i]["episode_key"]):
                pos[i] = at
                at += 1
    return pos


def load_judged(view: EpisodeView) -> Judged:
    """The judgments of ``view``'s rows, read a chunk at a time (see the module docstring).
    A judgment whose details do not decode is left out and said, as ``judgments`` says it."""
    rows = view.rows
    judged = Judged(len(rows), read_order(view))
    index = {r["episode_key"]: i for i, r in enumerate(rows)}
    decode = msgspec.json.decode
    for s, keys in view.store_keys():
        notes: list[tuple[tuple, Exception]] = []
        for part in s.judgment_chunks(keys):
            for e, j, m, p, score, d, *_ in part:
                row = index[e]
                try:
                    details = decode(d)
                except (msgspec.DecodeError, TypeError) as exc:  # TypeError: not text
                    notes.append(((int(judged.read_pos[row]), j, m), exc))
                    continue
                judged.add(row, j, m, p, score, details)
            judged.flush()
        notes.sort(key=lambda n: n[0])
        for (at, j, m), exc in notes:
            s.left_out_judgment(rows[_row_at(judged.read_pos, at)]["episode_key"], j, m, exc)
    if judged.pairs:
        judged._in_read_order()
    return judged


def _row_at(read_pos: np.ndarray, at: int) -> int:
    return int(np.flatnonzero(read_pos == at)[0])
