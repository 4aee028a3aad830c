"""Live show tools: find shows, look one up, check seats, and book, change or cancel tickets.

Seats are sold by section (front, middle, back), each with its own price and stock. Changes
move tickets to another section or change their number; the price difference is charged or
refunded. Cancelling 72 hours or more before the show refunds in full; later, nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from sweepbench.benchmarks.t1.data.ontology import SEAT_LOCATIONS
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
    given,
    search,
)
from sweepbench.benchmarks.t1.tools.state import Episode
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

TABLE = "live_shows"
FREE_CANCEL_HOURS, MAX_TICKETS = 72, 10


def _cheapest_under(table: Table, rows: np.ndarray, value, values: dict) -> np.ndarray:
    return rows[table["price_back"][rows] <= float(value)]


CRITERIA = (Criterion("event_category", "one_of"), Criterion("event_date_range", "dates", "event_date"),
            Criterion("venue_type", "one_of"), Criterion("neighborhood", "one_of"),
            Criterion("performer", "text"), Criterion("max_price", "custom", fn=_cheapest_under),
            Criterion("start_time_after", "after", "start_time"))
DOCS = {
    "event_category": "Categories: Concert, Standup Comedy, Opera, Ballet, Musical, Theater, Jazz, Magic Show.",
    "event_date_range": 'First and last day to consider, ["YYYY-MM-DD", "YYYY-MM-DD"].',
    "venue_type": 'Venue types to keep, e.g. ["Comedy Club", "Opera House"].',
    "performer": "Performer names (or parts of names) to look for.",
    "max_price": "Highest acceptable ticket price in the cheapest (back) section.",
    "start_time_after": 'Earliest start time, "HH:MM".',
    "live_event_id": 'The show\'s id from search results, e.g. "LE408".',
    "seat_location": "Section: front, middle or back.",
    "number_tickets": "How many tickets.",
    "new_seat_location": "Section to move the tickets to.",
    "new_number_tickets": "New number of tickets.",
}


def start(t: Table, r: int) -> datetime:
    day = t["event_date"][r].astype(datetime)
    return datetime(day.year, day.month, day.day) + timedelta(minutes=int(t["start_time"][r]))


def seats(ep: Episode, r: int, where: str) -> int:
    return int(ep.kb[TABLE][f"seats_{where}"][r]) - ep.used.get((TABLE, r, where), 0)


def render(ep: Episode, r: int) -> dict:
    t, v = ep.kb[TABLE], ep.kb["show_venues"]
    return {"live_event_id": t.ident(r), "event_name": t.string("event_name", r),
            "performer": t.string("performer", r), "event_category": t.string("event_category", r),
            "venue_name": v.string("name", int(t["venue"][r])), "venue_type": t.string("venue_type", r),
            **place(ep, t, r), "event_date": str(t["event_date"][r]), "start_time": hhmm(t["start_time"][r]),
            "duration_minutes": int(t["duration_minutes"][r]),
            "prices": {s: float(t[f"price_{s}"][r]) for s in SEAT_LOCATIONS}}


def _section(value: str, field: str) -> str:
    where = str(value).strip().lower()
    if where not in SEAT_LOCATIONS:
        raise ToolError(f"`{field}` must be front, middle or back, got {value!r}")
    return where


@tool("read")
@documented(DOCS)
def search_live_shows(db: Episode, city: str, state: str | None = None, event_category: list[str] | None = None,
                      event_date_range: list[str] | None = None, venue_type: list[str] | None = None,
                      neighborhood: list[str] | None = None, performer: list[str] | None = None,
                      max_price: float | None = None, start_time_after: str | None = None) -> dict:
    """Find live shows in a city. The matches are cached under a key
    (search_live_shows_results_<n>) that filter_live_shows can narrow down."""
    values = given(locals(), ("city", "state"))
    rows, where = city_rows(db, TABLE, city, state)
    return search(db, "search_live_shows", TABLE, rows, f"in {where}", CRITERIA, values, "shows", render)


@tool("read")
@documented(DOCS)
def filter_live_shows(db: Episode, cache_key: str, event_category: list[str] | None = None,
                      event_date_range: list[str] | None = None, venue_type: list[str] | None = None,
                      neighborhood: list[str] | None = None, performer: list[str] | None = None,
                      max_price: float | None = None, start_time_after: str | None = None) -> dict:
    """Narrow down earlier show results by more criteria; the result gets its own key."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_live_shows", TABLE, cache_key, CRITERIA, values, "shows", render)


@tool("read")
@documented(DOCS)
def get_live_show_details(db: Episode, live_event_id: str) -> dict:
    """Everything about one show, with the seats left in each section."""
    r = row(db, TABLE, live_event_id, "live_event_id")
    return {**render(db, r), "seats_available": {s: seats(db, r, s) for s in SEAT_LOCATIONS}}


@tool("read")
@documented({**DOCS, "seat_location": "Sections to check, e.g. [\"front\"] (default all three)."})
def check_live_show_seat_availability(db: Episode, live_event_id: str, seat_location: list[str] | None = None,
                                      number_tickets: int = 1) -> dict:
    """Whether a show has enough seats left, section by section, and what they cost."""
    r = row(db, TABLE, live_event_id, "live_event_id")
    count(number_tickets, "number_tickets", 1, MAX_TICKETS)
    wanted = [_section(s, "seat_location") for s in (seat_location or SEAT_LOCATIONS)]
    t = db.kb[TABLE]
    return {"live_event_id": t.ident(r), "number_tickets": number_tickets,
            "sections": [{"seat_location": s, "seats_available": seats(db, r, s),
                          "price_per_ticket": float(t[f"price_{s}"][r]),
                          "available": seats(db, r, s) >= number_tickets} for s in wanted]}


def _take(db: Episode, r: int, where: str, n: int, give_back: tuple[str, int] | None = None) -> None:
    free = seats(db, r, where) + (give_back[1] if give_back and give_back[0] == where else 0)
    if free < n:
        raise ToolError(f"only {free} {where} seats left for {db.kb[TABLE].ident(r)}")
    if give_back:
        db.used[(TABLE, r, give_back[0])] -= give_back[1]
    db.used[(TABLE, r, where)] = db.used.get((TABLE, r, where), 0) + n


@tool("write")
@documented(DOCS)
def book_live_show_reservation(db: Episode, user_id: str, live_event_id: str, seat_location: str,
                               number_tickets: int, primary_guest_name: str, credit_card_last_four: str) -> dict:
    """Buy tickets for a show in one section, paid by card."""
    u, r = user(db, user_id), row(db, TABLE, live_event_id, "live_event_id")
    where = _section(seat_location, "seat_location")
    count(number_tickets, "number_tickets", 1, MAX_TICKETS)
    guest = name(primary_guest_name, "primary_guest_name")
    last_four = card(db, u, credit_card_last_four)
    t = db.kb[TABLE]
    if start(t, r) <= db.now:
        raise ToolError(f"{t.ident(r)} has already started")
    _take(db, r, where, number_tickets)
    return keep(db, {"reservation_id": db.next_id("LSR"), "kind": "live_show_reservation",
                     "user_id": db.kb["users"].ident(u), "live_event_id": t.ident(r),
                     "event_name": t.string("event_name", r), "event_date": str(t["event_date"][r]),
                     "start_time": hhmm(t["start_time"][r]), "seat_location": where,
                     "number_tickets": number_tickets, "primary_guest_name": guest,
                     "credit_card_last_four": last_four,
                     "total_price": money(float(t[f"price_{where}"][r]) * number_tickets), "status": "confirmed"})


@tool("write")
@documented(DOCS)
def modify_live_show_reservation(db: Episode, user_id: str, reservation_id: str,
                                 new_seat_location: str | None = None, new_number_tickets: int | None = None) -> dict:
    """Move tickets to another section or change how many; the difference is charged or refunded."""
    rec = record(db, user_id, reservation_id, "live_show_reservation", "reservation_id")
    if new_seat_location is None and new_number_tickets is None:
        raise ToolError("nothing to change: give new_seat_location or new_number_tickets")
    r = row(db, TABLE, rec["live_event_id"], "live_event_id")
    where = _section(new_seat_location or rec["seat_location"], "new_seat_location")
    n = count(rec["number_tickets"] if new_number_tickets is None else new_number_tickets,
              "new_number_tickets", 1, MAX_TICKETS)
    _take(db, r, where, n, give_back=(rec["seat_location"], rec["number_tickets"]))
    total = money(float(db.kb[TABLE][f"price_{where}"][r]) * n)
    difference = money(total - rec["total_price"])
    changes = {"seat_location": where, "number_tickets": n, "total_price": total}
    changes = {k: v for k, v in changes.items() if rec[k] != v}
    rec.update(changes)
    log(db, "modify", rec, changes=changes, price_difference=difference)
    return {**rec, "price_difference": difference}


@tool("write")
@documented(DOCS)
def cancel_live_show_reservation(db: Episode, user_id: str, reservation_id: str) -> dict:
    """Cancel tickets. Refunded in full 72 hours or more before the show; later, not refunded."""
    rec = record(db, user_id, reservation_id, "live_show_reservation", "reservation_id")
    r = row(db, TABLE, rec["live_event_id"], "live_event_id")
    late = start(db.kb[TABLE], r) - db.now < timedelta(hours=FREE_CANCEL_HOURS)
    db.used[(TABLE, r, rec["seat_location"])] -= rec["number_tickets"]
    return cancel(db, rec, rec["total_price"] if late else 0.0, rec["total_price"])
