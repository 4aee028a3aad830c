"""Food and dining tools: find restaurants, read a menu, and book, change, look up or cancel
table reservations, pickup orders and delivery orders.

Reservations need a restaurant that takes them, a time it is open (seating ends an hour
before closing) and a party it can seat; they cost nothing and cancel freely. Pickup needs
takeout, delivery needs delivery (+$4.99). Orders are paid when placed; changing the items
re-prices the order, and cancelling refunds it in full.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sweepbench.benchmarks.t1.data.ontology import FD_DIETARY, FD_SERVICES
from sweepbench.benchmarks.t1.tools.checks import (
    cancel,
    count,
    features,
    hhmm,
    keep,
    log,
    money,
    name,
    order_lines,
    parse_date,
    parse_datetime,
    parse_time,
    payment,
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

TABLE, MENU = "restaurants", "restaurant_menu_items"
DELIVERY_FEE, LAST_SEATING_MINUTES = 4.99, 60
LEVEL_MULTIPLIER = (0.0, 0.8, 1.0, 1.35, 1.9)
CRITERIA = (Criterion("cuisine", "one_of"), Criterion("restaurant_name", "text", "name"),
            Criterion("neighborhood", "one_of"), Criterion("price_level", "one_of"),
            Criterion("max_price_per_person", "at_most", "price_per_person"),
            Criterion("min_rating", "at_least", "rating"), *flags(FD_DIETARY + FD_SERVICES))
DOCS = {
    "cuisine": 'Cuisines to keep, e.g. ["Thai", "Vietnamese"].',
    "restaurant_name": "Names (or parts of names) of restaurants to look for.",
    "max_price_per_person": "Highest acceptable average price per person, in USD.",
    "restaurant_id": 'The restaurant\'s id from search results, e.g. "FAD-103126".',
    "reservation_date": 'Day of the reservation, "YYYY-MM-DD".',
    "reservation_time": 'Time of the reservation, "HH:MM".',
    "has_private_dining": "Book the private dining room (restaurants that have one).",
    "new_reservation_date": 'New day, "YYYY-MM-DD".',
    "new_reservation_time": 'New time, "HH:MM".',
    "new_number_guests": "New party size.",
    "pickup_time": 'When the order will be collected, "YYYY-MM-DD HH:MM".',
    "delivery_address": "Street address to deliver to.",
}


def render(ep: Episode, r: int) -> dict:
    t = ep.kb[TABLE]
    return {"restaurant_id": t.ident(r), "name": t.string("name", r), "cuisine": t.string("cuisine", r),
            **place(ep, t, r), "rating": float(t["rating"][r]), "price_level": int(t["price_level"][r]),
            "price_per_person": float(t["price_per_person"][r]),
            "hours": f"{hhmm(t['open_time'][r])}-{hhmm(t['close_time'][r])}",
            "max_party_size": int(t["max_party_size"][r]), "dietary": features(t, r, FD_DIETARY),
            "services": features(t, r, FD_SERVICES)}


def menu(ep: Episode, r: int) -> list[dict]:
    t, m = ep.kb[TABLE], ep.kb[MENU]
    scale = LEVEL_MULTIPLIER[int(t["price_level"][r])]
    return [{"item_id": m.ident(i), "name": m.string("name", i), "price": money(m["base_price"][i] * scale),
             "dietary_tags": [x for x in m.string("dietary_tags", i).split(",") if x]}
            for i in ep.kb.group(MENU, "cuisine", int(t["cuisine"][r]))]


@tool("read")
@documented(DOCS)
def search_food_and_dining(db: Episode, city: str, state: str | None = None, cuisine: list[str] | None = None,
                           restaurant_name: list[str] | None = None, neighborhood: list[str] | None = None,
                           price_level: list[int] | None = None, max_price_per_person: float | None = None,
                           min_rating: float | None = None, vegan_options: bool | None = None,
                           vegetarian_options: bool | None = None, gluten_free_options: bool | None = None,
                           halal: bool | None = None, kosher: bool | None = None,
                           dairy_free_options: bool | None = None, nut_free_options: bool | None = None,
                           shellfish_free: bool | None = None, low_sodium_options: bool | None = None,
                           has_delivery: bool | None = None, has_drive_through: bool | None = None,
                           has_mobile_ordering: bool | None = None, has_takeout: bool | None = None,
                           accepts_reservations: bool | None = None, has_private_dining: bool | None = None,
                           has_outdoor_seating: bool | None = None, has_catering: bool | None = None) -> dict:
    """Find restaurants in a city. The matches are cached under a key
    (search_food_and_dining_results_<n>) that filter_food_and_dining can narrow down."""
    values = given(locals(), ("city", "state"))
    rows, where = city_rows(db, TABLE, city, state)
    return search(db, "search_food_and_dining", TABLE, rows, f"in {where}", CRITERIA, values,
                  "restaurants", render)


@tool("read")
@documented(DOCS)
def filter_food_and_dining(db: Episode, cache_key: str, cuisine: list[str] | None = None,
                           restaurant_name: list[str] | None = None, neighborhood: list[str] | None = None,
                           price_level: list[int] | None = None, max_price_per_person: float | None = None,
                           min_rating: float | None = None, vegan_options: bool | None = None,
                           vegetarian_options: bool | None = None, gluten_free_options: bool | None = None,
                           halal: bool | None = None, kosher: bool | None = None,
                           dairy_free_options: bool | None = None, nut_free_options: bool | None = None,
                           shellfish_free: bool | None = None, low_sodium_options: bool | None = None,
                           has_delivery: bool | None = None, has_drive_through: bool | None = None,
                           has_mobile_ordering: bool | None = None, has_takeout: bool | None = None,
                           accepts_reservations: bool | None = None, has_private_dining: bool | None = None,
                           has_outdoor_seating: bool | None = None, has_catering: bool | None = None) -> dict:
    """Narrow down earlier restaurant results by more criteria; the result gets its own key."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_food_and_dining", TABLE, cache_key, CRITERIA, values,
                         "restaurants", render)


@tool("read")
@documented(DOCS)
def get_food_and_dining_menu(db: Episode, restaurant_id: str) -> dict:
    """The menu of a restaurant: item ids, names, prices and dietary tags."""
    r = row(db, TABLE, restaurant_id, "restaurant_id")
    return {"restaurant_id": db.kb[TABLE].ident(r), "name": db.kb[TABLE].string("name", r),
            "items": menu(db, r)}


def _open_at(db: Episode, r: int, when: datetime, what: str, last_seating: int = 0) -> None:
    t = db.kb[TABLE]
    if when <= db.now:
        raise ToolError(f"{what} {when:%Y-%m-%d %H:%M} is not in the future")
    minute = when.hour * 60 + when.minute
    opens, closes = int(t["open_time"][r]), int(t["close_time"][r]) - last_seating
    if not opens <= minute <= closes:
        raise ToolError(f"{t.string('name', r)} takes {what}s between {hhmm(opens)} and {hhmm(closes)}")


def _check_table(db: Episode, r: int, when: datetime, guests: int, private: bool) -> None:
    t = db.kb[TABLE]
    if not bool(t["accepts_reservations"][r]):
        raise ToolError(f"{t.string('name', r)} does not take reservations")
    _open_at(db, r, when, "reservation", LAST_SEATING_MINUTES)
    count(guests, "number_guests", 1, int(t["max_party_size"][r]))
    if private and not bool(t["has_private_dining"][r]):
        raise ToolError(f"{t.string('name', r)} has no private dining room")


def _at(day: str, time: str, day_field: str, time_field: str) -> datetime:
    d = parse_date(day, day_field)
    return datetime(d.year, d.month, d.day) + timedelta(minutes=parse_time(time, time_field))


@tool("write")
@documented(DOCS)
def book_food_and_dining_reservation(db: Episode, user_id: str, restaurant_id: str, primary_guest_name: str,
                                     number_guests: int, reservation_date: str, reservation_time: str,
                                     has_private_dining: bool = False) -> dict:
    """Book a table at a restaurant. Free of charge."""
    u, r = user(db, user_id), row(db, TABLE, restaurant_id, "restaurant_id")
    guest = name(primary_guest_name, "primary_guest_name")
    when = _at(reservation_date, reservation_time, "reservation_date", "reservation_time")
    _check_table(db, r, when, number_guests, has_private_dining)
    t = db.kb[TABLE]
    return keep(db, {"reservation_id": db.next_id("FDR"), "kind": "restaurant_reservation",
                     "user_id": db.kb["users"].ident(u), "restaurant_id": t.ident(r),
                     "restaurant_name": t.string("name", r), "primary_guest_name": guest,
                     "number_guests": number_guests, "reservation_date": f"{when:%Y-%m-%d}",
                     "reservation_time": f"{when:%H:%M}", "has_private_dining": has_private_dining,
                     "status": "confirmed"})


@tool("write")
@documented(DOCS)
def modify_food_and_dining_reservation(db: Episode, user_id: str, reservation_id: str,
                                       new_reservation_date: str | None = None,
                                       new_reservation_time: str | None = None,
                                       new_number_guests: int | None = None) -> dict:
    """Change the day, time or party size of a restaurant reservation."""
    rec = record(db, user_id, reservation_id, "restaurant_reservation", "reservation_id")
    if new_reservation_date is None and new_reservation_time is None and new_number_guests is None:
        raise ToolError("nothing to change: give new_reservation_date, new_reservation_time or new_number_guests")
    when = _at(new_reservation_date or rec["reservation_date"], new_reservation_time or rec["reservation_time"],
               "new_reservation_date", "new_reservation_time")
    guests = rec["number_guests"] if new_number_guests is None else new_number_guests
    r = row(db, TABLE, rec["restaurant_id"], "restaurant_id")
    _check_table(db, r, when, guests, rec["has_private_dining"])
    changes = {"reservation_date": f"{when:%Y-%m-%d}", "reservation_time": f"{when:%H:%M}",
               "number_guests": guests}
    changes = {k: v for k, v in changes.items() if rec[k] != v}
    rec.update(changes)
    log(db, "modify", rec, changes=changes)
    return dict(rec)


@tool("write")
@documented(DOCS)
def cancel_food_and_dining_reservation(db: Episode, user_id: str, reservation_id: str) -> dict:
    """Cancel a restaurant reservation (free of charge)."""
    return cancel(db, record(db, user_id, reservation_id, "restaurant_reservation", "reservation_id"), 0.0, 0.0)


@tool("read")
@documented(DOCS)
def get_food_and_dining_reservation(db: Episode, user_id: str, reservation_id: str) -> dict:
    """Look up one of the user's restaurant reservations."""
    return dict(record(db, user_id, reservation_id, "restaurant_reservation", "reservation_id", live=False))


def _priced(db: Episode, r: int, items: list[dict[str, Any]]) -> tuple[list[dict], float]:
    return order_lines(items, {i["item_id"]: (i["name"], i["price"]) for i in menu(db, r)})


@tool("write")
@documented(DOCS)
def place_food_and_dining_pickup_order(db: Episode, user_id: str, restaurant_id: str, items: list[dict[str, Any]],
                                       pickup_time: str, payment_method: str) -> dict:
    """Order food for pickup at a restaurant that does takeout, paid when placed."""
    u, r = user(db, user_id), row(db, TABLE, restaurant_id, "restaurant_id")
    t = db.kb[TABLE]
    if not bool(t["has_takeout"][r]):
        raise ToolError(f"{t.string('name', r)} does not do takeout")
    lines, total = _priced(db, r, items)
    when = parse_datetime(pickup_time, "pickup_time")
    _open_at(db, r, when, "pickup")
    method = payment(db, u, payment_method, ("credit_card", "debit_card"))
    return keep(db, {"order_id": db.next_id("FDP"), "kind": "pickup_order", "user_id": db.kb["users"].ident(u),
                     "restaurant_id": t.ident(r), "restaurant_name": t.string("name", r), "items": lines,
                     "pickup_time": f"{when:%Y-%m-%d %H:%M}", "total": total, "payment_method": method,
                     "status": "placed"})


@tool("write")
@documented(DOCS)
def modify_food_and_dining_pickup_order(db: Episode, user_id: str, order_id: str,
                                        items: list[dict[str, Any]] | None = None,
                                        pickup_time: str | None = None) -> dict:
    """Replace the items or change the pickup time of a pickup order; it is re-priced."""
    rec = record(db, user_id, order_id, "pickup_order", "order_id")
    if items is None and pickup_time is None:
        raise ToolError("nothing to change: give items or pickup_time")
    r = row(db, TABLE, rec["restaurant_id"], "restaurant_id")
    lines, total = _priced(db, r, items) if items is not None else (rec["items"], rec["total"])
    when = parse_datetime(pickup_time or rec["pickup_time"], "pickup_time")
    _open_at(db, r, when, "pickup")
    changes = {"items": lines, "total": total, "pickup_time": f"{when:%Y-%m-%d %H:%M}"}
    changes = {k: v for k, v in changes.items() if rec[k] != v}
    rec.update(changes)
    log(db, "modify", rec, changes=changes)
    return dict(rec)


@tool("write")
@documented(DOCS)
def cancel_food_and_dining_pickup_order(db: Episode, user_id: str, order_id: str) -> dict:
    """Cancel a pickup order; the payment is refunded in full."""
    rec = record(db, user_id, order_id, "pickup_order", "order_id")
    return cancel(db, rec, 0.0, rec["total"])


@tool("read")
@documented(DOCS)
def get_food_and_dining_pickup_order(db: Episode, user_id: str, order_id: str) -> dict:
    """Look up one of the user's pickup orders."""
    return dict(record(db, user_id, order_id, "pickup_order", "order_id", live=False))


@tool("write")
@documented(DOCS)
def place_food_and_dining_delivery_order(db: Episode, user_id: str, restaurant_id: str,
                                         items: list[dict[str, Any]], delivery_address: str,
                                         payment_method: str) -> dict:
    """Order food for delivery from a restaurant that delivers (+$4.99), paid when placed."""
    u, r = user(db, user_id), row(db, TABLE, restaurant_id, "restaurant_id")
    t = db.kb[TABLE]
    if not bool(t["has_delivery"][r]):
        raise ToolError(f"{t.string('name', r)} does not deliver")
    lines, subtotal = _priced(db, r, items)
    address = name(delivery_address, "delivery_address")
    method = payment(db, u, payment_method, ("credit_card", "debit_card"))
    return keep(db, {"order_id": db.next_id("FDD"), "kind": "delivery_order", "user_id": db.kb["users"].ident(u),
                     "restaurant_id": t.ident(r), "restaurant_name": t.string("name", r), "items": lines,
                     "delivery_address": address, "delivery_fee": DELIVERY_FEE,
                     "total": money(subtotal + DELIVERY_FEE), "payment_method": method, "status": "placed"})


@tool("write")
@documented(DOCS)
def modify_food_and_dining_delivery_order(db: Episode, user_id: str, order_id: str,
                                          items: list[dict[str, Any]] | None = None,
                                          delivery_address: str | None = None) -> dict:
    """Replace the items or change the address of a delivery order; it is re-priced."""
    rec = record(db, user_id, order_id, "delivery_order", "order_id")
    if items is None and delivery_address is None:
        raise ToolError("nothing to change: give items or delivery_address")
    r = row(db, TABLE, rec["restaurant_id"], "restaurant_id")
    lines, subtotal = _priced(db, r, items) if items is not None else (rec["items"], rec["total"] - DELIVERY_FEE)
    address = name(delivery_address, "delivery_address") if delivery_address is not None else rec["delivery_address"]
    changes = {"items": lines, "total": money(subtotal + DELIVERY_FEE), "delivery_address": address}
    changes = {k: v for k, v in changes.items() if rec[k] != v}
    rec.update(changes)
    log(db, "modify", rec, changes=changes)
    return dict(rec)


@tool("write")
@documented(DOCS)
def cancel_food_and_dining_delivery_order(db: Episode, user_id: str, order_id: str) -> dict:
    """Cancel a delivery order; the payment is refunded in full."""
    rec = record(db, user_id, order_id, "delivery_order", "order_id")
    return cancel(db, rec, 0.0, rec["total"])


@tool("read")
@documented(DOCS)
def get_food_and_dining_delivery_order(db: Episode, user_id: str, order_id: str) -> dict:
    """Look up one of the user's delivery orders."""
    return dict(record(db, user_id, order_id, "delivery_order", "order_id", live=False))
