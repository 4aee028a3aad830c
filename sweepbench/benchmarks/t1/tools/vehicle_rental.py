"""Vehicle rental tools: find cars, bikes and trucks, and book, change or cancel a rental.

Motor vehicles need a licensed driver aged 21 or over (25 for trucks and luxury-tier
vehicles); pedal bikes and e-bikes need neither. Rentals run whole days (pickup 10:00) for
at most 30 days and are charged per day to the card on file. Cancelling 48 hours or more
before pickup is free; later, one day is kept.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from sweepbench.benchmarks.t1.data.ontology import VEHICLE_FLAGS
from sweepbench.benchmarks.t1.tools.checks import (
    age_on,
    cancel,
    count,
    features,
    keep,
    log,
    money,
    name,
    overlaps,
    parse_date,
    place,
    record,
    release,
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
    on_or_after,
    search,
)
from sweepbench.benchmarks.t1.tools.state import Episode
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

TABLE = "vehicles"
PICKUP_HOUR, FREE_CANCEL_HOURS, MAX_DAYS = 10, 48, 30
NO_LICENSE = ("Road Bike", "Mountain Bike", "Cruiser Bike", "E-Bike")
CRITERIA = (Criterion("category", "one_of"), Criterion("subcategory", "one_of"),
            Criterion("fuel_type", "one_of"), Criterion("provider", "one_of"),
            Criterion("neighborhood", "one_of"), Criterion("max_price_per_day", "at_most", "base_price_per_day"),
            Criterion("min_seating_capacity", "at_least", "seating_capacity"),
            Criterion("min_rating", "at_least", "rating"), *flags(VEHICLE_FLAGS))
DOCS = {
    "category": '"car", "bike" or "truck".',
    "subcategory": 'Kinds to keep, e.g. ["SUV", "Minivan"] or ["E-Bike"].',
    "fuel_type": "gasoline, diesel, electric, hybrid or none.",
    "provider": "Rental companies to keep.",
    "max_price_per_day": "Highest acceptable daily rate in USD.",
    "min_seating_capacity": "Fewest seats acceptable.",
    "vehicle_id": 'The vehicle\'s id from search results, e.g. "VEH-B67F3361".',
    "start_date": 'Pickup day, "YYYY-MM-DD".',
    "end_date": 'Return day, "YYYY-MM-DD".',
    "primary_driver_name": "Full name of the driver.",
    "has_drivers_license": "Whether the driver holds a valid driver's license.",
    "new_start_date": 'New pickup day, "YYYY-MM-DD".',
    "new_end_date": 'New return day, "YYYY-MM-DD".',
}


def render(ep: Episode, r: int) -> dict:
    t = ep.kb[TABLE]
    return {"vehicle_id": t.ident(r), "category": t.string("category", r), "subcategory": t.string("subcategory", r),
            "make": t.string("make", r), "model": t.string("model", r), "year": int(t["year"][r]),
            "fuel_type": t.string("fuel_type", r), "price_tier": t.string("price_tier", r),
            "seating_capacity": int(t["seating_capacity"][r]),
            "base_price_per_day": float(t["base_price_per_day"][r]), "provider": t.string("provider", r),
            **place(ep, t, r), "rating": float(t["rating"][r]), "features": features(t, r, VEHICLE_FLAGS)}


@tool("read")
@documented(DOCS)
def search_vehicle_rentals(db: Episode, city: str, state: str | None = None, category: str | None = None,
                           subcategory: list[str] | None = None, fuel_type: str | None = None,
                           provider: list[str] | None = None, neighborhood: list[str] | None = None,
                           max_price_per_day: float | None = None, min_seating_capacity: int | None = None,
                           min_rating: float | None = None, is_automatic: bool | None = None,
                           has_gps: bool | None = None, has_insurance_included: bool | None = None,
                           has_bluetooth: bool | None = None, has_child_seat: bool | None = None,
                           has_tow_hitch: bool | None = None, is_wheelchair_accessible: bool | None = None,
                           has_unlimited_mileage: bool | None = None) -> dict:
    """Find rental cars, bikes and trucks in a city. The matches are cached under a key
    (search_vehicle_rentals_results_<n>) that filter_vehicle_rentals can narrow down."""
    values = given(locals(), ("city", "state"))
    rows, where = city_rows(db, TABLE, city, state)
    return search(db, "search_vehicle_rentals", TABLE, rows, f"in {where}", CRITERIA, values, "vehicles", render)


@tool("read")
@documented(DOCS)
def filter_vehicle_rentals(db: Episode, cache_key: str, category: str | None = None,
                           subcategory: list[str] | None = None, fuel_type: str | None = None,
                           provider: list[str] | None = None, neighborhood: list[str] | None = None,
                           max_price_per_day: float | None = None, min_seating_capacity: int | None = None,
                           min_rating: float | None = None, is_automatic: bool | None = None,
                           has_gps: bool | None = None, has_insurance_included: bool | None = None,
                           has_bluetooth: bool | None = None, has_child_seat: bool | None = None,
                           has_tow_hitch: bool | None = None, is_wheelchair_accessible: bool | None = None,
                           has_unlimited_mileage: bool | None = None) -> dict:
    """Narrow down earlier vehicle results by more criteria; the result gets its own key."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_vehicle_rentals", TABLE, cache_key, CRITERIA, values, "vehicles", render)


def _days(db: Episode, start: str, end: str, start_field: str, end_field: str) -> tuple[date, date]:
    a, b = parse_date(start, start_field), parse_date(end, end_field)
    on_or_after(db, a, start_field)
    count((b - a).days, "number of rental days", 1, MAX_DAYS)
    return a, b


def _driver_ok(db: Episode, u: int, r: int, day: date, licensed: bool) -> None:
    t = db.kb[TABLE]
    if t.string("subcategory", r) in NO_LICENSE:
        return
    if not licensed:
        raise ToolError("a driver's license is required for this vehicle (has_drivers_license=true)")
    minimum = 25 if t.string("category", r) == "truck" or t.string("price_tier", r) == "luxury" else 21
    if age_on(db, u, day) < minimum:
        raise ToolError(f"the driver must be {minimum} or older for this vehicle")


@tool("write")
@documented(DOCS)
def book_vehicle_rental_reservation(db: Episode, user_id: str, vehicle_id: str, start_date: str, end_date: str,
                                    primary_driver_name: str, has_drivers_license: bool = False) -> dict:
    """Rent a vehicle from one day to another, charged per day to the card on file."""
    u, r = user(db, user_id), row(db, TABLE, vehicle_id, "vehicle_id")
    a, b = _days(db, start_date, end_date, "start_date", "end_date")
    driver = name(primary_driver_name, "primary_driver_name")
    _driver_ok(db, u, r, a, has_drivers_license)
    if overlaps(db, (TABLE, r), a, b):
        raise ToolError(f"{db.kb[TABLE].ident(r)} is already rented for part of {a} to {b}")
    t = db.kb[TABLE]
    rid = db.next_id("VRR")
    db.holds.setdefault((TABLE, r), []).append((a, b, rid))
    return keep(db, {"reservation_id": rid, "kind": "vehicle_reservation", "user_id": db.kb["users"].ident(u),
                     "vehicle_id": t.ident(r), "vehicle": f"{t.string('make', r)} {t.string('model', r)}",
                     "start_date": a.isoformat(), "end_date": b.isoformat(), "primary_driver_name": driver,
                     "has_drivers_license": has_drivers_license,
                     "total_price": money(float(t["base_price_per_day"][r]) * (b - a).days), "status": "confirmed"})


@tool("write")
@documented(DOCS)
def modify_vehicle_rental_reservation(db: Episode, user_id: str, reservation_id: str,
                                      new_start_date: str | None = None, new_end_date: str | None = None) -> dict:
    """Change the pickup or return day of a rental; the price is recomputed."""
    rec = record(db, user_id, reservation_id, "vehicle_reservation", "reservation_id")
    if new_start_date is None and new_end_date is None:
        raise ToolError("nothing to change: give new_start_date or new_end_date")
    u, r = user(db, user_id), row(db, TABLE, rec["vehicle_id"], "vehicle_id")
    a, b = _days(db, new_start_date or rec["start_date"], new_end_date or rec["end_date"],
                 "new_start_date", "new_end_date")
    _driver_ok(db, u, r, a, rec["has_drivers_license"])
    if overlaps(db, (TABLE, r), a, b, ignore=rec["reservation_id"]):
        raise ToolError(f"{rec['vehicle_id']} is already rented for part of {a} to {b}")
    release(db, (TABLE, r), rec["reservation_id"])
    db.holds.setdefault((TABLE, r), []).append((a, b, rec["reservation_id"]))
    changes = {"start_date": a.isoformat(), "end_date": b.isoformat(),
               "total_price": money(float(db.kb[TABLE]["base_price_per_day"][r]) * (b - a).days)}
    changes = {k: v for k, v in changes.items() if rec[k] != v}
    rec.update(changes)
    log(db, "modify", rec, changes=changes)
    return dict(rec)


@tool("write")
@documented(DOCS)
def cancel_vehicle_rental_reservation(db: Episode, user_id: str, reservation_id: str) -> dict:
    """Cancel a rental. Free 48 hours or more before pickup (10:00 on the start day); later,
    one day's rate is kept."""
    rec = record(db, user_id, reservation_id, "vehicle_reservation", "reservation_id")
    r = row(db, TABLE, rec["vehicle_id"], "vehicle_id")
    a = parse_date(rec["start_date"], "start_date")
    late = datetime(a.year, a.month, a.day, PICKUP_HOUR) - db.now < timedelta(hours=FREE_CANCEL_HOURS)
    release(db, (TABLE, r), rec["reservation_id"])
    return cancel(db, rec, float(db.kb[TABLE]["base_price_per_day"][r]) if late else 0.0, rec["total_price"])
