"""Cruise tools: find cruises, and book, change or cancel a cabin.

Fares are per guest and per cabin category; a booking takes one cabin for up to 4 guests.
Sailing outside US waters needs a passport. Changes may switch the cabin category or the
number of guests (the difference is charged or refunded). Cancelling 90 days or more before
departure refunds in full, 30 to 89 days half, under 30 days nothing.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from sweepbench.benchmarks.t1.data.ontology import (
    CABIN_TYPES,
    CRUISE_FLAGS,
    DOMESTIC_DESTINATIONS,
)
from sweepbench.benchmarks.t1.data.store import Table
from sweepbench.benchmarks.t1.tools.checks import (
    cancel,
    card,
    count,
    features,
    keep,
    log,
    money,
    name,
    parse_date,
    record,
    row,
    user,
)
from sweepbench.benchmarks.t1.tools.docs import documented
from sweepbench.benchmarks.t1.tools.query import (
    Criterion,
    filter_cached,
    flags,
    given,
    search,
)
from sweepbench.benchmarks.t1.tools.state import Episode
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

TABLE = "cruises"
MAX_GUESTS = 4


def cabin(value: str, field: str = "cabin_type") -> str:
    slug = "_".join(str(value).strip().lower().replace("-", " ").split())
    if slug not in CABIN_TYPES:
        raise ToolError(f"unknown {field} {value!r}; choose from: {', '.join(CABIN_TYPES)}")
    return slug


def _offered(table: Table, rows: np.ndarray, value, values: dict) -> np.ndarray:
    return rows[~np.isnan(table[f"price_{cabin(value)}"][rows])]


def _under(table: Table, rows: np.ndarray, value, values: dict) -> np.ndarray:
    kind = cabin(values.get("cabin_type") or "interior")
    return rows[table[f"price_{kind}"][rows] <= float(value)]


CRITERIA = (Criterion("destination", "one_of"), Criterion("departure_port", "one_of"),
            Criterion("cruise_line", "one_of"), Criterion("cabin_type", "custom", fn=_offered),
            Criterion("price_per_person_max", "custom", fn=_under),
            Criterion("duration_nights", "between"), Criterion("departure_date_range", "dates", "departure_date"),
            Criterion("tier", "one_of"), *flags(CRUISE_FLAGS))
DOCS = {
    "destination": 'Region, e.g. "Alaska", "Caribbean - Eastern", "Mediterranean".',
    "departure_port": 'Port of departure, e.g. "Seattle", "Miami", "Port Canaveral".',
    "cruise_line": "Cruise lines to keep.",
    "cabin_type": "Cabin category: interior, ocean_view, balcony, mini_suite, suite or penthouse.",
    "price_per_person_max": "Highest acceptable fare per guest in the requested cabin (else interior).",
    "duration_nights": "Acceptable number of nights, [min, max].",
    "departure_date_range": 'First and last departure day to consider, ["YYYY-MM-DD", "YYYY-MM-DD"].',
    "tier": "Ship tiers to keep: 1 (value), 2 (premium), 3 (luxury).",
    "cruise_id": 'The cruise\'s id from search results, e.g. "CR000151".',
    "departure_date": 'The cruise\'s departure day, "YYYY-MM-DD" (as in the results).',
    "has_passport": "Whether every guest holds a passport (needed outside US waters).",
    "new_cabin_type": "Cabin category to switch to.",
    "new_number_guests": "New number of guests (1 to 4).",
}


def render(ep: Episode, r: int) -> dict:
    t = ep.kb[TABLE]
    return {"cruise_id": t.ident(r), "cruise_line": t.string("cruise_line", r), "ship": t.string("ship", r),
            "destination": t.string("destination", r), "departure_port": t.string("departure_port", r),
            "departure_date": str(t["departure_date"][r]), "duration_nights": int(t["duration_nights"][r]),
            "itinerary": t.string("itinerary", r), "tier": int(t["tier"][r]),
            "fares_per_person": {c: float(t[f"price_{c}"][r]) for c in CABIN_TYPES
                                 if not np.isnan(t[f"price_{c}"][r])},
            "amenities": features(t, r, CRUISE_FLAGS)}


@tool("read")
@documented(DOCS)
def search_cruises(db: Episode, destination: str | None = None, departure_port: str | None = None,
                   cruise_line: list[str] | None = None, cabin_type: str | None = None,
                   price_per_person_max: float | None = None, duration_nights: list[int] | None = None,
                   departure_date_range: list[str] | None = None, tier: list[int] | None = None,
                   has_casino: bool | None = None, has_spa: bool | None = None, has_kids_club: bool | None = None,
                   has_water_park: bool | None = None, has_broadway_shows: bool | None = None,
                   is_adults_only: bool | None = None, has_specialty_dining: bool | None = None,
                   has_wifi_package: bool | None = None) -> dict:
    """Find cruises by destination, port, line, cabin, price, length or dates (at least one).
    The matches are cached under a key (search_cruises_results_<n>) that filter_cruises can
    narrow down."""
    values = given(locals())
    if not values:
        raise ToolError("give at least one criterion, e.g. destination or departure_port")
    rows = np.arange(db.kb[TABLE].n, dtype=np.int32)
    return search(db, "search_cruises", TABLE, rows, "", CRITERIA, values, "cruises", render)


@tool("read")
@documented(DOCS)
def filter_cruises(db: Episode, cache_key: str, destination: str | None = None, departure_port: str | None = None,
                   cruise_line: list[str] | None = None, cabin_type: str | None = None,
                   price_per_person_max: float | None = None, duration_nights: list[int] | None = None,
                   departure_date_range: list[str] | None = None, tier: list[int] | None = None,
                   has_casino: bool | None = None, has_spa: bool | None = None, has_kids_club: bool | None = None,
                   has_water_park: bool | None = None, has_broadway_shows: bool | None = None,
                   is_adults_only: bool | None = None, has_specialty_dining: bool | None = None,
                   has_wifi_package: bool | None = None) -> dict:
    """Narrow down earlier cruise results by more criteria; the result gets its own key."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_cruises", TABLE, cache_key, CRITERIA, values, "cruises", render)


def cabins_left(ep: Episode, r: int, kind: str) -> int:
    return int(ep.kb[TABLE][f"cabins_{kind}"][r]) - ep.used.get((TABLE, r, kind), 0)


def _fare(ep: Episode, r: int, kind: str) -> float:
    fare = float(ep.kb[TABLE][f"price_{kind}"][r])
    if np.isnan(fare):
        raise ToolError(f"{ep.kb[TABLE].ident(r)} has no {kind} cabins")
    return fare


def sailing(t: Table, r: int) -> datetime:
    day = t["departure_date"][r].astype(datetime)
    return datetime(day.year, day.month, day.day)


@tool("write")
@documented(DOCS)
def book_cruise_reservation(db: Episode, user_id: str, cruise_id: str, departure_date: str, number_guests: int,
                            primary_guest_name: str, cabin_type: str, credit_card_last_four: str,
                            has_passport: bool = False) -> dict:
    """Book one cabin on a cruise for up to 4 guests, paid by card (fare per guest)."""
    u, r = user(db, user_id), row(db, TABLE, cruise_id, "cruise_id")
    t = db.kb[TABLE]
    day = parse_date(departure_date, "departure_date")
    if day != sailing(t, r).date():
        raise ToolError(f"{t.ident(r)} departs on {sailing(t, r).date()}, not {day}")
    count(number_guests, "number_guests", 1, MAX_GUESTS)
    guest = name(primary_guest_name, "primary_guest_name")
    kind = cabin(cabin_type)
    last_four = card(db, u, credit_card_last_four)
    if t.string("destination", r) not in DOMESTIC_DESTINATIONS and not has_passport:
        raise ToolError(f"{t.string('destination', r)} sailings need a passport (has_passport=true)")
    fare = _fare(db, r, kind)
    if cabins_left(db, r, kind) < 1:
        raise ToolError(f"no {kind} cabins left on {t.ident(r)}")
    db.used[(TABLE, r, kind)] = db.used.get((TABLE, r, kind), 0) + 1
    return keep(db, {"reservation_id": db.next_id("CRR"), "kind": "cruise_reservation",
                     "user_id": db.kb["users"].ident(u), "cruise_id": t.ident(r),
                     "cruise_line": t.string("cruise_line", r), "ship": t.string("ship", r),
                     "departure_date": day.isoformat(), "cabin_type": kind, "number_guests": number_guests,
                     "primary_guest_name": guest, "credit_card_last_four": last_four,
                     "total_price": money(fare * number_guests), "status": "confirmed"})


@tool("write")
@documented(DOCS)
def modify_cruise_reservation(db: Episode, user_id: str, reservation_id: str, new_cabin_type: str | None = None,
                              new_number_guests: int | None = None) -> dict:
    """Switch the cabin category or the number of guests; the difference is charged or refunded."""
    rec = record(db, user_id, reservation_id, "cruise_reservation", "reservation_id")
    if new_cabin_type is None and new_number_guests is None:
        raise ToolError("nothing to change: give new_cabin_type or new_number_guests")
    r = row(db, TABLE, rec["cruise_id"], "cruise_id")
    kind = cabin(new_cabin_type or rec["cabin_type"], "new_cabin_type")
    guests = count(rec["number_guests"] if new_number_guests is None else new_number_guests,
                   "new_number_guests", 1, MAX_GUESTS)
    total = money(_fare(db, r, kind) * guests)
    if kind != rec["cabin_type"]:
        if cabins_left(db, r, kind) < 1:
            raise ToolError(f"no {kind} cabins left on {rec['cruise_id']}")
        db.used[(TABLE, r, rec["cabin_type"])] -= 1
        db.used[(TABLE, r, kind)] = db.used.get((TABLE, r, kind), 0) + 1
    difference = money(total - rec["total_price"])
    changes = {"cabin_type": kind, "number_guests": guests, "total_price": total}
    changes = {k: v for k, v in changes.items() if rec[k] != v}
    rec.update(changes)
    log(db, "modify", rec, changes=changes, price_difference=difference)
    return {**rec, "price_difference": difference}


@tool("write")
@documented(DOCS)
def cancel_cruise_reservation(db: Episode, user_id: str, reservation_id: str) -> dict:
    """Cancel a cruise booking: 90+ days before departure full refund, 30-89 days half,
    under 30 days no refund."""
    rec = record(db, user_id, reservation_id, "cruise_reservation", "reservation_id")
    r = row(db, TABLE, rec["cruise_id"], "cruise_id")
    days = (sailing(db.kb[TABLE], r) - db.now).days
    share = 0.0 if days >= 90 else (0.5 if days >= 30 else 1.0)
    db.used[(TABLE, r, rec["cabin_type"])] -= 1
    return cancel(db, rec, rec["total_price"] * share, rec["total_price"])
