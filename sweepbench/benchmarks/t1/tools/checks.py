"""Argument checks and small helpers every T1 domain shares.

Models send malformed dates, unknown ids, someone else's reservation id, a card the user does
not hold. Each check raises ``ToolError`` with a message the model can act on, and runs before
anything is changed, so a failed call leaves the episode exactly as it was.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import numpy as np

from sweepbench.benchmarks.t1.data.store import Table
from sweepbench.benchmarks.t1.tools.state import Episode
from sweepbench.errors import ToolError


def parse_date(value: Any, field: str) -> date:
    try:
        return date.fromisoformat(str(value).strip())
    except ValueError:
        raise ToolError(f"`{field}` must be a date like 2026-05-14, got {value!r}") from None


def parse_time(value: Any, field: str) -> int:
    """'HH:MM' to minutes after midnight."""
    text = str(value).strip()
    try:
        t = datetime.strptime(text, "%H:%M")
    except ValueError:
        raise ToolError(f"`{field}` must be a 24-hour time like 19:30, got {value!r}") from None
    return t.hour * 60 + t.minute


def parse_datetime(value: Any, field: str) -> datetime:
    text = str(value).strip().replace("T", " ")
    try:
        return datetime.strptime(text[:16], "%Y-%m-%d %H:%M")
    except ValueError:
        raise ToolError(f"`{field}` must be a date and time like 2026-05-09 20:00, got {value!r}") from None


def hhmm(minutes: int) -> str:
    return f"{int(minutes) // 60:02d}:{int(minutes) % 60:02d}"


def count(value: int, field: str, low: int = 1, high: int = 20) -> int:
    if not low <= value <= high:
        raise ToolError(f"`{field}` must be between {low} and {high}, got {value}")
    return value


def row(ep: Episode, table: str, ident: str, field: str) -> int:
    r = ep.kb[table].find(ident)
    if r is None:
        raise ToolError(f"unknown {field} {ident!r}; take ids from search results")
    return r


def user(ep: Episode, user_id: str) -> int:
    return row(ep, "users", user_id, "user_id")


def cards(ep: Episode, u: int) -> list[str]:
    t = ep.kb["users"]
    return [c for c in (t.string("card_last_four", u), t.string("second_card_last_four", u)) if c]


def card(ep: Episode, u: int, last_four: str) -> str:
    last_four = str(last_four).strip()
    if last_four not in cards(ep, u):
        raise ToolError(f"card ending {last_four!r} is not on file for this user")
    return last_four


def payment(ep: Episode, u: int, method: str, allowed: tuple[str, ...]) -> str:
    method = str(method).strip().lower()
    if method not in allowed:
        raise ToolError(f"`payment_method` must be one of {', '.join(allowed)}, got {method!r}")
    if method == "debit_card" and not bool(ep.kb["users"]["has_debit_card"][u]):
        raise ToolError("this user has no debit card on file")
    return method


def age_on(ep: Episode, u: int, day: date) -> int:
    born = ep.kb["users"]["birthdate"][u].astype(datetime)
    return day.year - born.year - ((day.month, day.day) < (born.month, born.day))


def name(value: str, field: str) -> str:
    text = " ".join(str(value).split())
    if not text:
        raise ToolError(f"`{field}` must not be empty")
    return text


def record(ep: Episode, user_id: str, ident: str, kind: str, field: str, live: bool = True) -> dict:
    """A record of ``kind`` that belongs to ``user_id`` (and, if ``live``, is not cancelled)."""
    rec = ep.records.get(str(ident).strip().upper())
    if rec is None or rec["kind"] != kind:
        raise ToolError(f"no {kind.replace('_', ' ')} with {field} {ident!r}")
    if rec["user_id"] != user_id:
        raise ToolError(f"{field} {ident!r} does not belong to user {user_id!r}")
    if live and rec["status"] == "cancelled":
        raise ToolError(f"{field} {ident!r} is already cancelled")
    return rec


def place(ep: Episode, table: Table, r: int) -> dict:
    """City, state and neighbourhood of a row with ``city`` and ``neighborhood`` columns."""
    cities = ep.kb["cities"]
    c = int(table["city"][r])
    return {"city": cities.string("name", c), "state": cities.string("state", c),
            "neighborhood": table.string("neighborhood", r)}


def features(table: Table, r: int, names: tuple[str, ...]) -> list[str]:
    return [f for f in names if bool(table[f][r])]


def money(x: float) -> float:
    return round(float(x), 2)


def value(table: Table, column: str, r: int) -> Any:
    """A cell as plain JSON: text for categories, ISO for dates, None for missing numbers."""
    if column in table.vocab or column in table.text:
        return table.string(column, r)
    v = table[column][r]
    if isinstance(v, np.datetime64):
        return str(v)
    v = v.item()
    return None if isinstance(v, float) and v != v else v


def ident_of(rec: dict) -> str:
    return rec.get("reservation_id") or rec["order_id"]


def log(ep: Episode, action: str, rec: dict, **details: Any) -> None:
    ep.log.append({"action": action, "id": ident_of(rec), "kind": rec["kind"], **details})


def keep(ep: Episode, rec: dict) -> dict:
    """Store a new record and log its booking; returns a copy for the tool's output."""
    ep.records[ident_of(rec)] = rec
    log(ep, "book", rec)
    return dict(rec)


def cancel(ep: Episode, rec: dict, fee: float, paid: float) -> dict:
    """Mark a record cancelled with its fee and refund; returns the tool's output."""
    fee = money(min(fee, paid))
    rec.update(status="cancelled", cancellation_fee=fee, refund=money(paid - fee))
    log(ep, "cancel", rec, cancellation_fee=fee, refund=rec["refund"])
    return dict(rec)


def overlaps(ep: Episode, key: tuple, start: Any, end: Any, ignore: str = "") -> bool:
    return any(s < end and start < e for s, e, rid in ep.holds.get(key, []) if rid != ignore)


def release(ep: Episode, key: tuple, rid: str) -> None:
    ep.holds[key] = [h for h in ep.holds.get(key, []) if h[2] != rid]


def order_lines(items: list[dict], menu: dict[str, tuple[str, float]]) -> tuple[list[dict], float]:
    """Validate ordered items against a menu {item_id: (name, price)}; (lines, subtotal)."""
    if not items:
        raise ToolError("`items` must list at least one item")
    lines, subtotal = [], 0.0
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "item_id" not in item:
            raise ToolError(f'items[{i}] must look like {{"item_id": "...", "quantity": 1}}')
        unknown = set(item) - {"item_id", "quantity"}
        if unknown:
            raise ToolError(f"items[{i}] has unknown fields: {', '.join(sorted(unknown))}")
        ident = str(item["item_id"]).strip().upper()
        if ident not in menu:
            raise ToolError(f"item_id {item['item_id']!r} is not on this menu; see the menu tool")
        qty = item.get("quantity", 1)
        if isinstance(qty, bool) or not isinstance(qty, int) or not 1 <= qty <= 20:
            raise ToolError(f"items[{i}].quantity must be a whole number from 1 to 20, got {qty!r}")
        item_name, price = menu[ident]
        lines.append({"item_id": ident, "name": item_name, "quantity": qty, "unit_price": money(price)})
        subtotal += price * qty
    return lines, money(subtotal)
