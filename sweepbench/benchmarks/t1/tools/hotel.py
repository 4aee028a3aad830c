"""Hotel tools: find hotels, list the rooms free for a stay, and book, change, look up or
cancel a stay.

A room can be booked for nights inside its availability window that no other booking of
this episode holds. Stays are paid by card (nightly rate plus resort fee) or with reward
points (points rate). Cancelling 72 hours or more before check-in (15:00) is free; later, one
night is kept.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

import numpy as np

from sweepbench.benchmarks.t1.data.ontology import HOTEL_FLAGS, HOTEL_PAYMENT_METHODS
from sweepbench.benchmarks.t1.tools.checks import (
    cancel,
    count,
    features,
    keep,
    log,
    money,
    overlaps,
    parse_date,
    payment,
    place,
    record,
    release,
    row,
    user,
    value,
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
from sweepbench.benchmarks.t1.tools.state import PAGE, Episode
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

TABLE, ROOMS = "hotels", "hotel_rooms"
CHECK_IN_HOUR, FREE_CANCEL_HOURS, MAX_NIGHTS = 15, 72, 30
CRITERIA = (Criterion("brand", "one_of"), Criterion("neighborhood", "one_of"),
            Criterion("min_star_rating", "at_least", "star_rating"),
            Criterion("min_rating", "at_least", "rating"), *flags(HOTEL_FLAGS))
DOCS = {
    "brand": 'Hotel brands to keep, e.g. ["Verano"].',
    "min_star_rating": "Lowest acceptable star rating, 1 to 5.",
    "hotel_id": 'The hotel\'s id from search results, e.g. "H107".',
    "room_id": 'A room id from get_hotel_room_inventory, e.g. "HR8721".',
    "check_in_date": 'Arrival day, "YYYY-MM-DD".',
    "check_out_date": 'Departure day, "YYYY-MM-DD".',
    "room_type": 'Only rooms of this type, e.g. "King" or "Two Queens".',
    "number_guests": "How many people will stay in the room.",
    "payment_method": '"credit_card", "debit_card" or "reward_points".',
    "new_check_in_date": 'New arrival day, "YYYY-MM-DD".',
    "new_check_out_date": 'New departure day, "YYYY-MM-DD".',
    "new_room_id": "Another room of the same hotel to move to.",
}


def render(ep: Episode, r: int) -> dict:
    t = ep.kb[TABLE]
    return {"hotel_id": t.ident(r), "name": t.string("name", r), "brand": t.string("brand", r),
            **place(ep, t, r), "star_rating": int(t["star_rating"][r]), "rating": float(t["rating"][r]),
            "amenities": features(t, r, HOTEL_FLAGS)}


def render_room(ep: Episode, r: int) -> dict:
    t = ep.kb[ROOMS]
    return {"room_id": t.ident(r), "room_type": t.string("room_type", r), "view_type": t.string("view_type", r),
            "occupancy": int(t["occupancy"][r]), "price_tier": t.string("price_tier", r),
            "cash_price_per_night": float(t["cash_price"][r]), "points_per_night": int(t["points_price"][r]),
            "resort_fee_per_night": float(t["resort_fee"][r]),
            "available_from": value(t, "available_from", r), "available_to": value(t, "available_to", r)}


@tool("read")
@documented(DOCS)
def search_hotel(db: Episode, city: str, state: str | None = None, brand: list[str] | None = None,
                 neighborhood: list[str] | None = None, min_star_rating: int | None = None,
                 min_rating: float | None = None, has_pool: bool | None = None, has_gym: bool | None = None,
                 has_spa: bool | None = None, has_valet_parking: bool | None = None,
                 has_digital_key: bool | None = None, has_electric_vehicle_charging: bool | None = None,
                 has_free_breakfast: bool | None = None, is_pet_friendly: bool | None = None,
                 has_airport_shuttle: bool | None = None, has_restaurant: bool | None = None) -> dict:
    """Find hotels in a city. The matches are cached under a key (search_hotel_results_<n>)
    that filter_hotel can narrow down."""
    values = given(locals(), ("city", "state"))
    rows, where = city_rows(db, TABLE, city, state)
    return search(db, "search_hotel", TABLE, rows, f"in {where}", CRITERIA, values, "hotels", render)


@tool("read")
@documented(DOCS)
def filter_hotel(db: Episode, cache_key: str, brand: list[str] | None = None, neighborhood: list[str] | None = None,
                 min_star_rating: int | None = None, min_rating: float | None = None,
                 has_pool: bool | None = None, has_gym: bool | None = None, has_spa: bool | None = None,
                 has_valet_parking: bool | None = None, has_digital_key: bool | None = None,
                 has_electric_vehicle_charging: bool | None = None, has_free_breakfast: bool | None = None,
                 is_pet_friendly: bool | None = None, has_airport_shuttle: bool | None = None,
                 has_restaurant: bool | None = None) -> dict:
    """Narrow down earlier hotel results by more criteria; the result gets its own key."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_hotel", TABLE, cache_key, CRITERIA, values, "hotels", render)


def _stay(db: Episode, check_in: str, check_out: str, in_field: str, out_field: str) -> tuple[date, date]:
    a, b = parse_date(check_in, in_field), parse_date(check_out, out_field)
    on_or_after(db, a, in_field)
    count((b - a).days, "number of nights", 1, MAX_NIGHTS)
    return a, b


def _free(db: Episode, room: int, a: date, b: date, guests: int, ignore: str = "") -> bool:
    t = db.kb[ROOMS]
    return (t["available_from"][room] <= np.datetime64(a, "D") and np.datetime64(b, "D") <= t["available_to"][room]
            and int(t["occupancy"][room]) >= guests and not overlaps(db, (ROOMS, room), a, b, ignore))


@tool("read")
@documented(DOCS)
def get_hotel_room_inventory(db: Episode, hotel_id: str, check_in_date: str, check_out_date: str,
                             room_type: str | None = None, number_guests: int = 1) -> dict:
    """Rooms of a hotel free for every night of a stay (the first 10, lowest room id first)."""
    h = row(db, TABLE, hotel_id, "hotel_id")
    a, b = _stay(db, check_in_date, check_out_date, "check_in_date", "check_out_date")
    count(number_guests, "number_guests", 1, 8)
    rooms = db.kb.group(ROOMS, "hotel", h)
    if room_type is not None:
        code = db.kb[ROOMS].code("room_type", room_type)
        if code is None:
            raise ToolError(f"unknown room_type {room_type!r}; choose from: {', '.join(db.kb[ROOMS].vocab['room_type'])}")
        rooms = rooms[db.kb[ROOMS]["room_type"][rooms] == code]
    t = db.kb[ROOMS]
    fits = ((t["available_from"][rooms] <= np.datetime64(a, "D")) & (t["available_to"][rooms] >= np.datetime64(b, "D"))
            & (t["occupancy"][rooms] >= number_guests))
    free = [int(r) for r in rooms[fits] if not overlaps(db, (ROOMS, int(r)), a, b)]
    return {"hotel_id": db.kb[TABLE].ident(h), "check_in_date": a.isoformat(), "check_out_date": b.isoformat(),
            "total": len(free), "rooms": [render_room(db, r) for r in free[:PAGE]]}


def _price(db: Episode, room: int, nights: int, method: str) -> dict:
    t = db.kb[ROOMS]
    if method == "reward_points":
        return {"total_price": 0.0, "total_points": int(t["points_price"][room]) * nights}
    return {"total_price": money((float(t["cash_price"][room]) + float(t["resort_fee"][room])) * nights),
            "total_points": 0}


def _points_left(db: Episode, u: int) -> int:
    return int(db.kb["users"]["reward_points"][u]) - db.used.get(("users", u, "points"), 0)


def _room_of(db: Episode, h: int, room_id: str, field: str) -> int:
    room = row(db, ROOMS, room_id, field)
    if int(db.kb[ROOMS]["hotel"][room]) != h:
        raise ToolError(f"room {room_id!r} is not in hotel {db.kb[TABLE].ident(h)}")
    return room


@tool("write")
@documented(DOCS)
def book_hotel_reservation(db: Episode, user_id: str, hotel_id: str, room_id: str, check_in_date: str,
                           check_out_date: str, payment_method: str, number_guests: int = 1) -> dict:
    """Book a room for a stay, paid by card or with reward points."""
    u, h = user(db, user_id), row(db, TABLE, hotel_id, "hotel_id")
    room = _room_of(db, h, room_id, "room_id")
    a, b = _stay(db, check_in_date, check_out_date, "check_in_date", "check_out_date")
    count(number_guests, "number_guests", 1, 8)
    method = payment(db, u, payment_method, HOTEL_PAYMENT_METHODS)
    if not _free(db, room, a, b, number_guests):
        raise ToolError(f"room {room_id} is not free for {a} to {b} for {number_guests} guests; "
                        "see get_hotel_room_inventory")
    cost = _price(db, room, (b - a).days, method)
    if cost["total_points"] > _points_left(db, u):
        raise ToolError(f"not enough reward points: {cost['total_points']} needed, {_points_left(db, u)} held")
    rid = db.next_id("HTR")
    db.holds.setdefault((ROOMS, room), []).append((a, b, rid))
    db.used[("users", u, "points")] = db.used.get(("users", u, "points"), 0) + cost["total_points"]
    t = db.kb[TABLE]
    return keep(db, {"reservation_id": rid, "kind": "hotel_reservation", "user_id": db.kb["users"].ident(u),
                     "hotel_id": t.ident(h), "hotel_name": t.string("name", h),
                     "room_id": db.kb[ROOMS].ident(room), "room_type": db.kb[ROOMS].string("room_type", room),
                     "check_in_date": a.isoformat(), "check_out_date": b.isoformat(),
                     "number_guests": number_guests, "payment_method": method, **cost, "status": "confirmed"})


@tool("write")
@documented(DOCS)
def modify_hotel_reservation(db: Episode, user_id: str, reservation_id: str, new_check_in_date: str | None = None,
                             new_check_out_date: str | None = None, new_room_id: str | None = None) -> dict:
    """Change the dates or the room (same hotel) of a stay; the price is recomputed."""
    rec = record(db, user_id, reservation_id, "hotel_reservation", "reservation_id")
    if new_check_in_date is None and new_check_out_date is None and new_room_id is None:
        raise ToolError("nothing to change: give new_check_in_date, new_check_out_date or new_room_id")
    u, h = user(db, user_id), row(db, TABLE, rec["hotel_id"], "hotel_id")
    room = _room_of(db, h, new_room_id or rec["room_id"], "new_room_id")
    a, b = _stay(db, new_check_in_date or rec["check_in_date"], new_check_out_date or rec["check_out_date"],
                 "new_check_in_date", "new_check_out_date")
    if not _free(db, room, a, b, rec["number_guests"], ignore=rec["reservation_id"]):
        raise ToolError(f"room {db.kb[ROOMS].ident(room)} is not free for {a} to {b}")
    cost = _price(db, room, (b - a).days, rec["payment_method"])
    if cost["total_points"] - rec["total_points"] > _points_left(db, u):
        raise ToolError("not enough reward points for the change")
    old_room = db.kb[ROOMS].find(rec["room_id"])
    release(db, (ROOMS, old_room), rec["reservation_id"])
    db.holds.setdefault((ROOMS, room), []).append((a, b, rec["reservation_id"]))
    db.used[("users", u, "points")] = db.used.get(("users", u, "points"), 0) + cost["total_points"] - rec["total_points"]
    changes = {"room_id": db.kb[ROOMS].ident(room), "room_type": db.kb[ROOMS].string("room_type", room),
               "check_in_date": a.isoformat(), "check_out_date": b.isoformat(), **cost}
    changes = {k: v for k, v in changes.items() if rec[k] != v}
    rec.update(changes)
    log(db, "modify", rec, changes=changes)
    return dict(rec)


@tool("write")
@documented(DOCS)
def cancel_hotel_reservation(db: Episode, user_id: str, reservation_id: str) -> dict:
    """Cancel a stay. Free 72 hours or more before check-in (15:00 on the arrival day); later,
    one night is kept."""
    rec = record(db, user_id, reservation_id, "hotel_reservation", "reservation_id")
    u = user(db, user_id)
    a, b = parse_date(rec["check_in_date"], "check_in_date"), parse_date(rec["check_out_date"], "check_out_date")
    arrival = datetime(a.year, a.month, a.day, CHECK_IN_HOUR)
    late = arrival - db.now < timedelta(hours=FREE_CANCEL_HOURS)
    nights = (b - a).days
    room = db.kb[ROOMS].find(rec["room_id"])
    release(db, (ROOMS, room), rec["reservation_id"])
    points_back = rec["total_points"] - (rec["total_points"] // nights if late else 0)
    db.used[("users", u, "points")] = db.used.get(("users", u, "points"), 0) - points_back
    out = cancel(db, rec, rec["total_price"] / nights if late else 0.0, rec["total_price"])
    rec["points_refunded"] = out["points_refunded"] = points_back
    return out


@tool("read")
@documented(DOCS)
def get_hotel_reservation(db: Episode, user_id: str, reservation_id: str) -> dict:
    """Look up one of the user's hotel stays."""
    return dict(record(db, user_id, reservation_id, "hotel_reservation", "reservation_id", live=False))
