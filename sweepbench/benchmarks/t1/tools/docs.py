"""Parameter descriptions shared by the T1 tools, appended to each tool's docstring.

A tool's schema comes from its signature and docstring. Most parameters recur across
domains (city, cache_key, user_id, ...), and feature flags describe themselves, so each
description is written once here and attached by ``@documented``; a parameter with no
description fails at import, so no tool reaches a model half-documented.
"""

from __future__ import annotations

import inspect
from typing import Callable

COMMON = {
    "city": 'City name, e.g. "Denver".',
    "state": 'Two-letter state code such as "CO", to tell apart cities with the same name.',
    "cache_key": 'Key of earlier search or filter results to narrow down, e.g. "search_bars_results_0".',
    "neighborhood": "Keep only places in these neighborhoods.",
    "min_rating": "Lowest acceptable rating, 1 to 5.",
    "price_level": "Price levels to keep, 1 (cheapest) to 4.",
    "user_id": 'The user\'s id, e.g. "USR-1A2B3C4D".',
    "primary_guest_name": "Full name the booking is under.",
    "credit_card_last_four": "Last four digits of a card on the user's profile.",
    "payment_method": 'How the user pays: "credit_card" or "debit_card".',
    "number_guests": "How many people, the user included.",
    "reservation_id": "Id of an existing reservation of this user.",
    "order_id": "Id of an existing order of this user.",
    "items": 'Items to order: a list of {"item_id": "<id from the menu>", "quantity": <n>}.',
    "offset": "How many results to skip (for paging through more than 10).",
}


def flag_text(param: str) -> str | None:
    for prefix, verb in (("has_", "have"), ("is_", "are"), ("accepts_", "accept"), ("allows_", "allow")):
        if param.startswith(prefix):
            words = param[len(prefix):].replace("_", " ")
            return f"true keeps only those that {verb} {words}; false only those that do not."
    if param.endswith("_options") or param in ("halal", "kosher", "shellfish_free"):
        return f"true keeps only places offering {param.replace('_', ' ')}; false only those that do not."
    return None


def documented(extra: dict[str, str] | None = None) -> Callable:
    """Append an ``Args:`` section describing every parameter after the first (the db)."""

    def wrap(fn: Callable) -> Callable:
        lines = []
        for p in list(inspect.signature(fn).parameters)[1:]:
            text = (extra or {}).get(p) or COMMON.get(p) or flag_text(p)
            if not text:
                raise TypeError(f"{fn.__name__}: no description for parameter {p!r}")
            lines.append(f"    {p}: {text}")
        fn.__doc__ = inspect.cleandoc(fn.__doc__ or "") + "\n\nArgs:\n" + "\n".join(lines) + "\n"
        return fn

    return wrap
