"""Flight tools: find flights between two cities on a day, book, change or cancel a booking.

Fares are per passenger and per ticket class (not every flight sells every class). Changes
may move a booking to another flight between the same cities or to another class; the fare
difference is charged or refunded. Cancelling 7 days or more before departure refunds in
full; later, $100 per passenger is kept.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from sweepbench.benchmarks.t1.data.ontology import TICKET_CLASSES
from sweepbench.benchmarks.t1.data.store import Table
from sweepbench.benchmarks.t1.tools.checks import (
    cancel,
    card,
    count,
    hhmm,
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
from sweepbench.benchmarks.t1.tools.query import Criterion, filter_cached, given, search
from sweepbench.benchmarks.t1.tools.state import Episode
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

TABLE = "flights"
LATE_FEE_PER_PASSENGER, FREE_CANCEL_DAYS = 100.0, 7


def fare_column(ticket_class: str) -> str:
    for c in TICKET_CLASSES:
        if c.casefold() == " ".join(str(ticket_class).split()).casefold():
            return "price_" + c.lower().replace(" ", "_")
    raise ToolError(f"unknown ticket_class {ticket_class!r}; choose from: {', '.join(TICKET_CLASSES)}")


def _offered(table: Table, rows: np.ndarray, value, values: dict) -> np.ndarray:
    return rows[~np.isnan(table[fare_column(value)][rows])]


def _under(table: Table, rows: np.ndarray, value, values: dict) -> np.ndarray:
    fares = table[fare_column(values.get("ticket_class") or "Economy")][rows]
    return rows[fares <= float(value)]


CRITERIA = (Criterion("airline", "one_of"), Criterion("ticket_class", "custom", fn=_offered),
            Criterion("max_price", "custom", fn=_under), Criterion("max_stops", "at_most", "stops"),
            Criterion("departure_time_after", "after", "departure_time"),
            Criterion("departure_time_before", "before", "departure_time"))
DOCS = {
    "departure_city": 'City to fly from, e.g. "Denver".',
    "arrival_city": 'City to fly to, e.g. "Nashville".',
    "departure_date": 'Day of departure, "YYYY-MM-DD".',
    "airline": 'Airlines to keep, e.g. ["Summit Airways"].',
    "ticket_class": "Economy, Premium Economy, Business or First; keeps flights selling that class.",
    "max_price": "Highest acceptable fare per passenger in the requested ticket class (else Economy).",
    "max_stops": "Most stops acceptable (0 for non-stop).",
    "departure_time_after": 'Earliest departure time, "HH:MM".',
    "departure_time_before": 'Latest departure time, "HH:MM".',
    "flight_id": 'The flight\'s id from search results, e.g. "FL048".',
    "passenger_names": "Full names of all passengers.",
    "number_passengers": "How many passengers (must match passenger_names).",
    "new_ticket_class": "Ticket class to change to.",
    "new_flight_id": "Another flight between the same cities to move the booking to.",
}


def departure(t: Table, r: int) -> datetime:
    day = t["departure_date"][r].astype(datetime)
    return datetime(day.year, day.month, day.day) + timedelta(minutes=int(t["departure_time"][r]))


def seats_left(ep: Episode, r: int) -> int:
    return int(ep.kb[TABLE]["seats_available"][r]) - ep.used.get((TABLE, r), 0)


def render(ep: Episode, r: int) -> dict:
    t, ap, cities = ep.kb[TABLE], ep.kb["airports"], ep.kb["cities"]
    o, d = int(t["origin"][r]), int(t["destination"][r])
    dep = departure(t, r)
    arr = dep + timedelta(minutes=int(t["duration_minutes"][r]))
    fares = {c: float(t[fare_column(c)][r]) for c in TICKET_CLASSES if not np.isnan(t[fare_column(c)][r])}
    return {"flight_id": t.ident(r), "airline": t.string("airline", r),
            "departure_airport": ap.string("code", o), "departure_city": cities.string("name", int(ap["city"][o])),
            "arrival_airport": ap.string("code", d), "arrival_city": cities.string("name", int(ap["city"][d])),
            "departure_date": dep.date().isoformat(), "departure_time": hhmm(int(t["departure_time"][r])),
            "arrival_date": arr.date().isoformat(), "arrival_time": f"{arr:%H:%M}",
            "duration_minutes": int(t["duration_minutes"][r]), "stops": int(t["stops"][r]),
            "fares": fares, "seats_available": seats_left(ep, r)}


def _airports(ep: Episode, city: str, field: str) -> np.ndarray:
    if not isinstance(city, str) or not city.strip():
        raise ToolError(f"`{field}` must be a city name")
    cities = ep.kb.cities_named(city)
    found = np.isin(ep.kb["airports"]["city"], cities).nonzero()[0]
    if not len(found):
        raise ToolError(f"no airport serves {city!r}")
    return found


@tool("read")
@documented(DOCS)
def search_flight(db: Episode, departure_city: str, arrival_city: str, departure_date: str,
                  airline: list[str] | None = None, ticket_class: str | None = None,
                  max_price: float | None = None, max_stops: int | None = None,
                  departure_time_after: str | None = None, departure_time_before: str | None = None) -> dict:
    """Find flights from one city to another on a day. The matches are cached under a key
    (search_flight_results_<n>) that filter_flight can narrow down."""
    values = given(locals(), ("departure_city", "arrival_city", "departure_date"))
    day = np.datetime64(parse_date(departure_date, "departure_date"), "D")
    t = db.kb[TABLE]
    origins, dests = _airports(db, departure_city, "departure_city"), _airports(db, arrival_city, "arrival_city")
    rows = np.sort(np.concatenate([db.kb.group(TABLE, "origin", int(a)) for a in origins]))
    rows = rows[np.isin(t["destination"][rows], dests) & (t["departure_date"][rows] == day)]
    where = f"from {departure_city.strip()} to {arrival_city.strip()} on {day}"
    return search(db, "search_flight", TABLE, rows, where, CRITERIA, values, "flights", render)


@tool("read")
@documented(DOCS)
def filter_flight(db: Episode, cache_key: str, airline: list[str] | None = None, ticket_class: str | None = None,
                  max_price: float | None = None, max_stops: int | None = None,
                  departure_time_after: str | None = None, departure_time_before: str | None = None) -> dict:
    """Narrow down earlier flight results by more criteria; the result gets its own key."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_flight", TABLE, cache_key, CRITERIA, values, "flights", render)


def _fare(ep: Episode, r: int, ticket_class: str) -> float:
    fare = float(ep.kb[TABLE][fare_column(ticket_class)][r])
    if np.isnan(fare):
        raise ToolError(f"flight {ep.kb[TABLE].ident(r)} does not sell {ticket_class} tickets")
    return fare


def _class_name(ticket_class: str) -> str:
    return next(c for c in TICKET_CLASSES if fare_column(c) == fare_column(ticket_class))


@tool("write")
@documented(DOCS)
def book_flight(db: Episode, user_id: str, flight_id: str, passenger_names: list[str], number_passengers: int,
                credit_card_last_four: str, ticket_class: str = "Economy") -> dict:
    """Book seats on a flight for the named passengers, paid by card."""
    u, r = user(db, user_id), row(db, TABLE, flight_id, "flight_id")
    names = [name(p, "passenger_names") for p in passenger_names]
    count(number_passengers, "number_passengers", 1, 9)
    if len(names) != number_passengers:
        raise ToolError(f"number_passengers is {number_passengers} but {len(names)} passenger names were given")
    last_four = card(db, u, credit_card_last_four)
    fare = _fare(db, r, ticket_class)
    if seats_left(db, r) < number_passengers:
        raise ToolError(f"only {seats_left(db, r)} seats left on {db.kb[TABLE].ident(r)}")
    db.used[(TABLE, r)] = db.used.get((TABLE, r), 0) + number_passengers
    out = render(db, r)
    return keep(db, {"reservation_id": db.next_id("FLR"), "kind": "flight_reservation",
                     "user_id": db.kb["users"].ident(u), "flight_id": out["flight_id"], "airline": out["airline"],
                     "route": f"{out['departure_airport']}-{out['arrival_airport']}",
                     "departure": f"{out['departure_date']} {out['departure_time']}",
                     "ticket_class": _class_name(ticket_class), "passenger_names": names,
                     "number_passengers": number_passengers, "credit_card_last_four": last_four,
                     "total_price": money(fare * number_passengers), "status": "confirmed"})


@tool("write")
@documented(DOCS)
def modify_flight_reservation(db: Episode, user_id: str, reservation_id: str,
                              new_ticket_class: str | None = None, new_flight_id: str | None = None) -> dict:
    """Move a flight booking to another class or to another flight between the same cities.
    The fare difference is charged (positive) or refunded (negative)."""
    rec = record(db, user_id, reservation_id, "flight_reservation", "reservation_id")
    if new_ticket_class is None and new_flight_id is None:
        raise ToolError("nothing to change: give new_ticket_class or new_flight_id")
    t = db.kb[TABLE]
    old = t.find(rec["flight_id"])
    new = old if new_flight_id is None else row(db, TABLE, new_flight_id, "new_flight_id")
    ap = db.kb["airports"]
    same_route = all(int(ap["city"][int(t[c][old])]) == int(ap["city"][int(t[c][new])])
                     for c in ("origin", "destination"))
    if not same_route:
        raise ToolError("the new flight must fly between the same two cities")
    if departure(t, new) <= db.now:
        raise ToolError("the new flight has already left")
    ticket_class = _class_name(new_ticket_class or rec["ticket_class"])
    n = rec["number_passengers"]
    total = money(_fare(db, new, ticket_class) * n)
    if new != old and seats_left(db, new) < n:
        raise ToolError(f"only {seats_left(db, new)} seats left on {t.ident(new)}")
    if new != old:
        db.used[(TABLE, old)] -= n
        db.used[(TABLE, new)] = db.used.get((TABLE, new), 0) + n
    out = render(db, new)
    changes = {"flight_id": t.ident(new), "ticket_class": ticket_class, "total_price": total,
               "departure": f"{out['departure_date']} {out['departure_time']}",
               "route": f"{out['departure_airport']}-{out['arrival_airport']}", "airline": out["airline"]}
    changes = {k: v for k, v in changes.items() if rec[k] != v}
    difference = money(total - rec["total_price"])
    rec.update(changes)
    log(db, "modify", rec, changes=changes, fare_difference=difference)
    return {**rec, "fare_difference": difference}


@tool("write")
@documented(DOCS)
def cancel_flight(db: Episode, user_id: str, reservation_id: str) -> dict:
    """Cancel a flight booking. Refunded in full 7 days or more before departure; later,
    $100 per passenger is kept."""
    rec = record(db, user_id, reservation_id, "flight_reservation", "reservation_id")
    r = db.kb[TABLE].find(rec["flight_id"])
    late = departure(db.kb[TABLE], r) - db.now < timedelta(days=FREE_CANCEL_DAYS)
    db.used[(TABLE, r)] -= rec["number_passengers"]
    return cancel(db, rec, LATE_FEE_PER_PASSENGER * rec["number_passengers"] if late else 0.0,
                  rec["total_price"])
