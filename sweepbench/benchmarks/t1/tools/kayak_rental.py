"""Kayak rental tools: find rentals, look one up, and book, change or cancel a rental slot.

A slot must fall inside the business's opening hours and last at most its maximum rental
length; it is charged per hour to the user's card on file. Cancelling 24 hours or more before
the start is free; later, half is kept.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sweepbench.benchmarks.t1.data.ontology import KAYAK_FLAGS
from sweepbench.benchmarks.t1.tools.checks import (
    cancel,
    count,
    features,
    hhmm,
    keep,
    log,
    money,
    parse_date,
    parse_time,
    place,
    record,
    row,
    user,
)
from sweepbench.benchmarks.t1.tools.docs import documented
from sweepbench.benchmarks.t1.tools.query import (
    Criterion,
    city_rows,
    filter_cached,
    flags,
    given,
    search,
)
from sweepbench.benchmarks.t1.tools.state import Episode
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

TABLE = "kayak_rentals"
FREE_CANCEL_HOURS, LATE_SHARE = 24, 0.5
CRITERIA = (Criterion("vessel_type", "one_of"), Criterion("neighborhood", "one_of"),
            Criterion("price_per_hour", "between"), Criterion("min_rating", "at_least", "rating"),
            *flags(KAYAK_FLAGS))
DOCS = {
    "vessel_type": "Vessel types: Single Kayak, Tandem Kayak, Canoe, Stand-Up Paddleboard, "
                   "Sit-On-Top Kayak, Pedal Kayak.",
    "price_per_hour": "Acceptable hourly price range in USD, [min, max].",
    "rental_id": 'The rental\'s id from search results, e.g. "KYK-20000".',
    "date": 'Day of the rental, "YYYY-MM-DD".',
    "start_time": 'Start time, "HH:MM".',
    "duration": "Length of the rental in whole hours.",
    "new_date": 'New day, "YYYY-MM-DD".',
    "new_start_time": 'New start time, "HH:MM".',
    "new_duration": "New length in whole hours.",
}


def render(ep: Episode, r: int) -> dict:
    t = ep.kb[TABLE]
    return {"rental_id": t.ident(r), "business_name": t.string("business_name", r),
            "vessel_type": t.string("vessel_type", r), "location": t.string("location", r), **place(ep, t, r),
            "price_per_hour": float(t["price_per_hour"][r]), "rating": float(t["rating"][r]),
            "capacity": int(t["capacity"][r]), "features": features(t, r, KAYAK_FLAGS)}


@tool("read")
@documented(DOCS)
def search_kayak_rentals(db: Episode, city: str, state: str | None = None, vessel_type: list[str] | None = None,
                         neighborhood: list[str] | None = None, price_per_hour: list[float] | None = None,
                         min_rating: float | None = None, has_life_jackets: bool | None = None,
                         has_guided_tours: bool | None = None, has_parking: bool | None = None,
                         allows_pets: bool | None = None) -> dict:
    """Find kayak, canoe and paddleboard rentals in a city. The matches are cached under a key
    (search_kayak_rentals_results_<n>) that filter_kayak_rentals can narrow down."""
    values = given(locals(), ("city", "state"))
    rows, where = city_rows(db, TABLE, city, state)
    return search(db, "search_kayak_rentals", TABLE, rows, f"in {where}", CRITERIA, values, "rentals", render)


@tool("read")
@documented(DOCS)
def filter_kayak_rentals(db: Episode, cache_key: str, vessel_type: list[str] | None = None,
                         neighborhood: list[str] | None = None, price_per_hour: list[float] | None = None,
                         min_rating: float | None = None, has_life_jackets: bool | None = None,
                         has_guided_tours: bool | None = None, has_parking: bool | None = None,
                         allows_pets: bool | None = None) -> dict:
    """Narrow down earlier rental results by more criteria; the result gets its own key."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_kayak_rentals", TABLE, cache_key, CRITERIA, values, "rentals", render)


@tool("read")
@documented(DOCS)
def get_rental_details(db: Episode, rental_id: str) -> dict:
    """Everything about one rental: opening hours, longest rental, coordinates."""
    r = row(db, TABLE, rental_id, "rental_id")
    t = db.kb[TABLE]
    return {**render(db, r), "opening_hours": f"{hhmm(t['open_time'][r])}-{hhmm(t['close_time'][r])}",
            "max_hours": int(t["max_hours"][r]), "latitude": float(t["latitude"][r]),
            "longitude": float(t["longitude"][r])}


def _slot(db: Episode, r: int, day: str, start: str, hours: int, prefix: str = "") -> datetime:
    t = db.kb[TABLE]
    d = parse_date(day, f"{prefix}date")
    begin = parse_time(start, f"{prefix}start_time")
    count(hours, f"{prefix}duration", 1, int(t["max_hours"][r]))
    when = datetime(d.year, d.month, d.day) + timedelta(minutes=begin)
    if when <= db.now:
        raise ToolError(f"{when:%Y-%m-%d %H:%M} is not in the future")
    opens, closes = int(t["open_time"][r]), int(t["close_time"][r])
    if begin < opens or begin + 60 * hours > closes:
        raise ToolError(f"{t.string('business_name', r)} rents between {hhmm(opens)} and {hhmm(closes)}")
    return when


@tool("write")
@documented(DOCS)
def book_kayak_reservation(db: Episode, user_id: str, rental_id: str, vessel_type: str, date: str,
                           start_time: str, duration: int) -> dict:
    """Book a rental slot, charged per hour to the user's card on file."""
    u, r = user(db, user_id), row(db, TABLE, rental_id, "rental_id")
    t = db.kb[TABLE]
    if str(vessel_type).strip().casefold() != t.string("vessel_type", r).casefold():
        raise ToolError(f"{t.ident(r)} rents a {t.string('vessel_type', r)}, not {vessel_type!r}")
    when = _slot(db, r, date, start_time, duration)
    return keep(db, {"reservation_id": db.next_id("KYR"), "kind": "kayak_reservation",
                     "user_id": db.kb["users"].ident(u), "rental_id": t.ident(r),
                     "business_name": t.string("business_name", r), "vessel_type": t.string("vessel_type", r),
                     "date": f"{when:%Y-%m-%d}", "start_time": f"{when:%H:%M}", "duration": duration,
                     "total_price": money(float(t["price_per_hour"][r]) * duration), "status": "confirmed"})


@tool("write")
@documented(DOCS)
def modify_kayak_reservation(db: Episode, user_id: str, reservation_id: str, new_date: str | None = None,
                             new_start_time: str | None = None, new_duration: int | None = None) -> dict:
    """Change the day, start time or length of a rental; the price is recomputed."""
    rec = record(db, user_id, reservation_id, "kayak_reservation", "reservation_id")
    if new_date is None and new_start_time is None and new_duration is None:
        raise ToolError("nothing to change: give new_date, new_start_time or new_duration")
    r = row(db, TABLE, rec["rental_id"], "rental_id")
    hours = rec["duration"] if new_duration is None else new_duration
    when = _slot(db, r, new_date or rec["date"], new_start_time or rec["start_time"], hours, "new_")
    changes = {"date": f"{when:%Y-%m-%d}", "start_time": f"{when:%H:%M}", "duration": hours,
               "total_price": money(float(db.kb[TABLE]["price_per_hour"][r]) * hours)}
    changes = {k: v for k, v in changes.items() if rec[k] != v}
    rec.update(changes)
    log(db, "modify", rec, changes=changes)
    return dict(rec)


@tool("write")
@documented(DOCS)
def cancel_kayak_reservation(db: Episode, user_id: str, reservation_id: str) -> dict:
    """Cancel a rental. Free 24 hours or more before the start; later, half the price is kept."""
    rec = record(db, user_id, reservation_id, "kayak_reservation", "reservation_id")
    start = datetime.fromisoformat(f"{rec['date']} {rec['start_time']}")
    late = start - db.now < timedelta(hours=FREE_CANCEL_HOURS)
    return cancel(db, rec, rec["total_price"] * LATE_SHARE if late else 0.0, rec["total_price"])
