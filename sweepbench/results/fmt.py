"""One way to write every number and name a report shows, in the terminal and in HTML.

Rates (pass rates, judge scores, T1's tool / parameter / output metrics: anything in [0, 1])
are percentages with one decimal; dollars are ``$`` with four decimals under $100; token
counts are compact (``69.9k``); confidence intervals are ``lo–hi`` in percent. Metric keys
from judgment details get human names (``param_accuracy`` -> ``Param accuracy``), and a
``judge/method`` pair reads as ``Likert (scripted/judge)``. Long domain compositions (T1's
8- and 11-domain splits) have a short form for plot labels.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

__all__ = ["DASH", "ci", "count", "domain_short", "interval", "iso_utc", "judge_label",
           "metric_name",
           "metric_order", "num", "pct", "price", "seconds", "tokens", "usd", "wrap_label"]

DASH = "—"

_WORDS = {"f1": "F1", "em": "EM", "acc": "accuracy", "llm": "LLM", "id": "ID"}
_METHODS = {"state": "State check", "sliding": "Sliding-window rubrics",
            "full": "Full-trajectory rubrics", "sliding_no_rubrics": "Sliding window, no rubrics",
            "full_no_rubrics": "Full trajectory, no rubrics", "likert": "Likert"}


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def pct(x: Any) -> str:
    """A rate in [0, 1] as ``12.3%``."""
    return f"{100 * x:.1f}%" if _finite(x) else DASH


def ci(interval: Any) -> str:
    """A 95% CI of a rate as ``10.2–14.8`` (percent)."""
    if not interval or not all(_finite(v) for v in interval):
        return DASH
    return f"{100 * interval[0]:.1f}–{100 * interval[1]:.1f}"


def interval(entry: dict, metric: str, target: str) -> Any:
    """A leaderboard entry's interval of ``metric`` over ``target`` (``population`` or
    ``fixed_set``), None when it has none."""
    return ((entry.get("intervals") or {}).get(metric) or {}).get(target)


def usd(x: Any) -> str:
    if not _finite(x):
        return DASH
    return f"${x:,.4f}" if abs(x) < 100 else f"${x:,.2f}"


def price(x: Any) -> str:
    """Dollars per million tokens: ``$2.00``, ``$0.075``."""
    if not _finite(x):
        return DASH
    return f"${x:,.2f}" if round(x, 2) == x else f"${x:,.4g}"


def count(x: Any) -> str:
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else DASH


def tokens(x: Any) -> str:
    """``812``, ``69.9k``, ``1.21M``."""
    if not _finite(x):
        return DASH
    a = abs(float(f"{x:.3g}"))  # the unit of the number as shown: 999,999 is 1M, not 1e+03k
    if a >= 1e6:
        return f"{x / 1e6:.3g}M"
    if a >= 1e3:
        return f"{x / 1e3:.3g}k"
    return f"{x:.0f}" if a >= 10 or x == int(x) else f"{x:.2g}"


def num(x: Any) -> str:
    """A plain number (turns, counts that are means): three significant digits."""
    if not _finite(x):
        return DASH
    return f"{x:,.0f}" if abs(float(f"{x:.3g}")) >= 1000 else f"{x:.3g}"  # 999.6: 1,000


def seconds(x: Any) -> str:
    """A duration: ``85 ms``, ``1.2 s``."""
    if not _finite(x):
        return DASH
    return f"{1000 * x:.3g} ms" if abs(x) < 1 else f"{x:.3g} s"


def metric_name(key: str) -> str:
    """``tool_f1`` -> ``Tool F1``; ``param_accuracy`` -> ``Param accuracy``."""
    words = [_WORDS.get(w, w) for w in key.split("_") if w]
    if not words:
        return key
    return " ".join([words[0][:1].upper() + words[0][1:], *words[1:]])


_FIRST = ("tool", "param", "output")  # T1's metric families, in its paper's order
_STAT = ("f1", "precision", "recall", "accuracy", "em")


def metric_order(keys: Any) -> list[str]:
    """Metric keys grouped by family (``tool_*``, ``param_*``, ``output_*``, then the rest),
    F1 / precision / recall / accuracy first within one."""
    def rank(k: str) -> tuple:
        head, _, tail = k.partition("_")
        fam = _FIRST.index(head) if head in _FIRST else len(_FIRST)
        return (fam, head if fam == len(_FIRST) else "",
                _STAT.index(tail) if tail in _STAT else len(_STAT), k)

    return sorted(keys, key=rank)


def judge_label(pair: str) -> str:
    """``scripted/judge/likert`` -> ``Likert (scripted/judge)``; ``state/state`` -> ``State
    check``. The judge is everything before the last ``/`` (judge names may hold ``/``)."""
    judge, _, method = pair.rpartition("/")
    name = _METHODS.get(method, metric_name(method))
    return name if judge in ("", "state") and method == "state" else f"{name} ({judge})"


def domain_short(domain: str, *, most: int = 4) -> str:
    """A composition of more than ``most`` domains as ``11 domains: attraction, bar, +9``."""
    parts = [p for p in domain.split(",") if p]
    if len(parts) <= most:
        return ", ".join(parts)
    return f"{len(parts)} domains: {parts[0]}, {parts[1]}, +{len(parts) - 2}"


def wrap_label(text: str, width: int = 28) -> str:
    """Wrap a label on spaces and commas into lines of at most ``width`` characters (a long
    word is broken)."""
    return "\n".join(textwrap.wrap(text.replace(",", ", ").replace(",  ", ", "), width,
                                   break_long_words=True, break_on_hyphens=False)) or text


def iso_utc(ts: Any) -> str | None:
    """Unix seconds as ISO 8601 in UTC (``2026-11-23T15:02:42.848Z``); None stays None."""
    if not _finite(ts):
        return None
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def by_score(models: dict) -> list[str]:
    """A benchmark's models in leaderboard order: best average first, unscored last."""
    return sorted(models, key=lambda m: (models[m]["avg"] is None, -(models[m]["avg"] or 0.0), m))


COST_COLUMNS = ("agent", "user", "judge", "total", "per_episode", "per_pass")


def cost_rows(report: dict) -> list[list[str]]:
    """[model, benchmark, dollars per ``COST_COLUMNS``] for every priced leaderboard row."""
    rows = []
    for b, bs in (report.get("benchmarks") or {}).items():
        for m in by_score(bs["models"]):
            c = bs["models"][m].get("cost")
            if c:
                rows.append([m, b, *(usd(c.get(x)) for x in COST_COLUMNS)])
    return rows
