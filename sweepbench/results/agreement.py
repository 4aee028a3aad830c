"""Agreement between two judge runs: Cohen's κ over task pass and over rubric decisions.

Why κ and not raw agreement: two judges that both pass 90% of episodes agree 82% of the time
by chance alone; κ says how much of their agreement is beyond that.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from msgspec import Struct

__all__ = ["DECISION_KEYS", "RUBRIC_KEYS", "Agreement", "cohen_kappa", "judge_agreement",
           "kappa_from_confusion", "paired_items", "rubric_decisions"]


def kappa_from_confusion(matrix: Any) -> float:
    """Cohen's κ of a square confusion matrix (rows: rater A, columns: rater B).

    NaN when chance agreement is 1 (both raters used one and the same label throughout).
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.sum() <= 0:
        raise ValueError(f"need a non-empty square confusion matrix, got shape {m.shape}")
    total = m.sum()
    po = np.trace(m) / total
    pe = float(m.sum(axis=1) @ m.sum(axis=0)) / total**2
    if pe >= 1.0:
        return math.nan
    return float((po - pe) / (1.0 - pe))


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Cohen's κ of two raters' labels for the same items (any hashable labels)."""
    if len(a) != len(b) or not a:
        raise ValueError(f"need two equal-length, non-empty label lists, got {len(a)}, {len(b)}")
    labels = sorted(set(a) | set(b), key=repr)
    index = {label: i for i, label in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)))
    np.add.at(m, ([index[x] for x in a], [index[y] for y in b]), 1)
    return kappa_from_confusion(m)


RUBRIC_KEYS = ("rubric", "rubrics", "nl_rubrics")
DECISION_KEYS = ("met", "satisfied", "passed", "pass", "value")


def rubric_decisions(details: Mapping[str, Any] | None) -> list[bool] | None:
    """The per-rubric-item decisions in a judgment's details, or None when it has none.

    Read from ``details["rubric"]`` (or "rubrics", "nl_rubrics"): a list of booleans / 0-1
    numbers, a list of objects with "met" (or "satisfied", "passed", "pass", "value"), or an
    object mapping item names to booleans (items in name order).
    """
    if type(details) is not dict and not isinstance(details, Mapping):
        return None
    raw = next((details[k] for k in RUBRIC_KEYS if k in details), None)
    if type(raw) is dict or isinstance(raw, Mapping):
        raw = [raw[name] for name in sorted(raw)]
    if not isinstance(raw, list):
        return None
    out = []
    for item in raw:
        # a dict first: what decoded JSON holds, without the ABC's slower isinstance
        if type(item) is dict or isinstance(item, Mapping):
            item = next((item[k] for k in DECISION_KEYS if k in item), None)
        if isinstance(item, bool) or (isinstance(item, (int, float)) and item in (0, 1)):
            out.append(bool(item))
        else:
            return None  # not a decision list we understand: no rubric, rather than a guess
    return out


class Agreement(Struct, kw_only=True):
    episodes: int
    """Episodes with a pass/fail verdict from both judge runs."""
    pass_agreement: float | None
    pass_kappa: float | None
    rubric_episodes: int
    """Episodes with rubric decisions of the same length from both runs."""
    rubric_items: int
    rubric_mismatched: int
    """Episodes with rubric decisions from both runs, but of different lengths (left out)."""
    rubric_agreement: float | None
    rubric_kappa: float | None


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else x


def paired_items(pairs: Iterable[tuple[Sequence, Sequence]]) -> tuple[int, int, list, list]:
    """Two runs' decision lists of the same episodes: how many episodes have lists of the same
    length (their items concatenated, run by run, in the episodes' order) and how many do not
    (left out)."""
    same = mismatched = 0
    xs: list = []
    ys: list = []
    for x, y in pairs:
        if len(x) == len(y):
            same += 1
            xs += x
            ys += y
        else:
            mismatched += 1
    return same, mismatched, xs, ys


def judge_agreement(a: Mapping[str, Mapping], b: Mapping[str, Mapping]) -> Agreement:
    """Agreement of two judge runs: episode_id -> judgment (with "passed" and "details").

    κ over task pass (episodes judged pass/fail by both) and over rubric decisions (every item
    of episodes where both runs give a decision list of the same length). None where there is
    nothing to compare, or κ is undefined (one label throughout).
    """
    pa, pb = [], []
    decisions = []
    for eid in sorted(set(a) & set(b)):
        ja, jb = a[eid], b[eid]
        if ja.get("passed") is not None and jb.get("passed") is not None:
            pa.append(bool(ja["passed"]))
            pb.append(bool(jb["passed"]))
        da, db = rubric_decisions(ja.get("details")), rubric_decisions(jb.get("details"))
        if da is not None and db is not None:
            decisions.append((da, db))
    rubric_eps, mismatched, ra, rb = paired_items(decisions)

    def agree(x: list, y: list) -> tuple[float | None, float | None]:
        if not x:
            return None, None
        return sum(p == q for p, q in zip(x, y)) / len(x), _finite(cohen_kappa(x, y))

    pass_agree, pass_kappa = agree(pa, pb)
    rubric_agree, rubric_kappa = agree(ra, rb)
    return Agreement(
        episodes=len(pa), pass_agreement=pass_agree, pass_kappa=pass_kappa,
        rubric_episodes=rubric_eps, rubric_items=len(ra), rubric_mismatched=mismatched,
        rubric_agreement=rubric_agree, rubric_kappa=rubric_kappa,
    )
