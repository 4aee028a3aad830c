"""How VitaBench's judge replies are read: upstream's rules, with sweepbench's JSON finder.

Upstream (``evaluator_traj.py``) repairs the reply into JSON (the ``json_repair`` package) and
then, for the rubric methods, walks a list of entries: an entry updates the rubric whose key
equals its ``rubric_idx`` exactly (``"rubric_3"``; no positional or fuzzy matching), setting
the justification (``No justification provided`` when absent) and the verdict as written
(kept when absent). An empty list or object changes nothing. At the end each verdict becomes a
boolean by pydantic's lax rules (:func:`met`). The same here, with two differences:

- The JSON is found by sweepbench's lenient reader (:func:`sweepbench.judge.parsing.extract_json`:
  fenced blocks first, then each ``[``/``{``, forgiving trailing commas, single quotes,
  Python literals and truncation), not by ``json_repair``; they agree on every reply of the
  judge goldens. ``<think>`` blocks are skipped.
- Where upstream raises (no JSON at all, a non-empty object where the list belongs, entries
  that are not objects, a verdict pydantic cannot read as a boolean, a justification that is
  not text) and re-runs the whole task, the reply is *unreadable* here: the engine asks again
  and, failing that, leaves the window unjudged. A bad verdict is refused when it is read,
  where upstream fails only at the end (so a later window could have overwritten it).

The no-rubric methods: ``sliding_no_rubrics`` needs an object with ``memory`` (the new memory,
any JSON); what else it holds, when anything, replaces the evaluation; ``full_no_rubrics``
takes an object, or the first element of a list, as the evaluation, and an empty reply as
``Not evaluated yet`` / false.
"""

from __future__ import annotations

from typing import Any

from sweepbench.judge.parsing import extract_json
from sweepbench.judge.rubric import KEEP, OverallUpdate, RubricUpdate

__all__ = ["NO_JUSTIFICATION", "met", "read_overall", "read_rubrics", "verdict_value"]

NO_JUSTIFICATION = "No justification provided"
_TRUE = frozenset({"true", "t", "yes", "y", "on", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "off", "0"})
_UNREADABLE = object()


def verdict_value(value: Any) -> Any:
    """``value`` as pydantic v2 reads a ``bool`` in lax mode, or an unreadable marker:
    booleans; 0/1 (also 0.0/1.0); case-insensitive ``true t yes y on 1`` / ``false f no n off
    0``; nothing else (no whitespace stripping, no other numbers, no null)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        low = value.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
    return _UNREADABLE


def met(verdict: Any) -> bool:
    """Whether a carried verdict means met (unreadable ones never get this far)."""
    return verdict_value(verdict) is True


def _parse(text: str | None) -> Any:
    """The reply's JSON value (list or object), or ``_UNREADABLE``."""
    data = extract_json(text, lambda v: isinstance(v, (list, dict)))
    return _UNREADABLE if data is None else data


def read_rubrics(text: str | None, keys: list[str]) -> dict[int, RubricUpdate] | None:
    """Updates by rubric position ({}: none), or None when upstream would have raised."""
    data = _parse(text)
    if data is _UNREADABLE or (data and not isinstance(data, list)):
        return None
    position = {key: i for i, key in enumerate(keys)}
    updates: dict[int, RubricUpdate] = {}
    for entry in data or []:
        if not isinstance(entry, dict):
            return None
        idx = entry.get("rubric_idx")
        if isinstance(idx, (list, dict)):
            return None  # unhashable: upstream's lookup raises
        if not idx or idx not in position:
            continue
        why = entry.get("justification", NO_JUSTIFICATION)
        verdict = entry.get("meetExpectation", KEEP)
        if not isinstance(why, str) or (verdict is not KEEP
                                        and verdict_value(verdict) is _UNREADABLE):
            return None
        updates[position[idx]] = RubricUpdate(why, verdict)
    return updates


def _evaluation(value: Any) -> bool:
    """Whether ``value`` is an evaluation upstream can turn into a verdict at the end."""
    return (isinstance(value, dict) and isinstance(value.get("justification"), str)
            and verdict_value(value.get("meetExpectation")) is not _UNREADABLE)


def read_overall(method: str, text: str | None) -> OverallUpdate | None:
    """The update of a no-rubric reply, or None when upstream would have raised."""
    data = _parse(text)
    if data is _UNREADABLE:
        return None
    if method == "sliding_no_rubrics":
        if not isinstance(data, dict) or "memory" not in data:
            return None
        rest = {k: v for k, v in data.items() if k != "memory"}
        if rest and not _evaluation(rest):
            return None
        return OverallUpdate(rest or KEEP, data["memory"])
    if isinstance(data, list):
        data = data[0] if data else {}
    if not data:
        return OverallUpdate({"justification": "Not evaluated yet", "meetExpectation": False})
    return OverallUpdate(data) if _evaluation(data) else None
