"""What a report reads of a judgment's details: its numbers (``numeric_details``: the
``metrics`` columns), and for a large store only what it reads at all (``report_details``)."""

from __future__ import annotations

import math
from typing import Any

from sweepbench.results.agreement import DECISION_KEYS, RUBRIC_KEYS

__all__ = ["numeric_details", "report_details"]


def numeric_details(details: Any, *, depth: int = 2) -> dict[str, bool | int | float]:
    """The numeric values in a judgment's details, nested objects flattened with "_".

    ``{"tool": {"f1": 0.5}, "output_em": 1.0, "why": "..."}`` -> ``{"tool_f1": 0.5,
    "output_em": 1.0}``, values as written (bool, int or float); lists, text and non-finite
    numbers are skipped; objects deeper than ``depth`` levels are not read.
    """
    out: dict[str, bool | int | float] = {}
    if isinstance(details, dict):
        _walk(details, "", 1, depth, out)
    return out


def _walk(obj: dict, prefix: str, level: int, depth: int, out: dict) -> None:
    # a function of the module, not a closure: a recursive closure is a reference cycle,
    # garbage for the cyclic collector once per judgment read
    for key, v in obj.items():
        t = type(v)
        if t is str or t is list or v is None:  # what JSON mostly holds besides numbers
            continue
        if t is float or t is int or t is bool or isinstance(v, (bool, int, float)):
            if math.isfinite(v):
                out[f"{prefix}{key}"] = v
        elif isinstance(v, dict) and level < depth:
            _walk(v, f"{prefix}{key}_", level + 1, depth, out)


def report_details(details: Any) -> Any:
    """What a report reads of a judgment's details, the rest (reasons, logs) left out so that
    a large store's judgments fit in memory: the numbers (to the depth ``numeric_details``
    reads), the rubric items' decisions (``agreement.rubric_decisions``; any other item
    kept as the empty string it reads the same), and ``error`` and ``unreachable``."""
    if not isinstance(details, dict):
        return details

    out = _numbers(details, 1)
    for k in ("error", "unreachable"):
        if k in details:
            out[k] = details[k]
    for k in RUBRIC_KEYS:
        if k in details:
            v = details[k]
            out[k] = ([_item(x) for x in v] if isinstance(v, list) else
                      {n: _item(x) for n, x in v.items()} if isinstance(v, dict) else _item(v))
            break
    return out


def _numbers(obj: dict, level: int) -> dict:
    out = {}
    for k, v in obj.items():
        if isinstance(v, (bool, int, float)):
            out[k] = v
        elif isinstance(v, dict) and level < 2:
            out[k] = _numbers(v, level + 1)
    return out


def _item(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: "" if isinstance(x[k], str) else x[k] for k in DECISION_KEYS if k in x}
    return "" if isinstance(x, str) else x
