"""Bar tools: find bars, and book, change or cancel a table reservation.

A reservation takes a deposit of $20 per guest (+$50 for the VIP room) on a card. Bars check
ID, so a booking needs a driver's license and a user old enough for the bar's minimum age.
Cancelling 48 hours or more ahead refunds the deposit; later, a $25 fee is kept.
"""

from __future__ import annotations

from sweepbench.benchmarks.t1.data.ontology import BAR_FLAGS
from sweepbench.benchmarks.t1.tools.checks import (
    age_on,
    cancel,
    card,
    count,
    features,
    keep,
    log,
    money,
    name,
    parse_datetime,
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

TABLE = "bars"
DEPOSIT_PER_GUEST, VIP_ROOM, LATE_FEE, FREE_CANCEL_HOURS, MAX_GUESTS = 20.0, 50.0, 25.0, 48, 12
CRITERIA = (Criterion("bar_type", "one_of"), Criterion("neighborhood", "one_of"),
            Criterion("price_level", "one_of"), Criterion("budget", "at_most", "price_per_person"),
            Criterion("min_rating", "at_least", "rating"), *flags(BAR_FLAGS))
DOCS = {
    "bar_type": 'Bar types to keep, e.g. ["Speakeasy", "Wine Bar"].',
    "budget": "Highest acceptable price per person, in USD.",
    "venue_id": 'The bar\'s id from search results, e.g. "BAR0612".',
    "event_datetime": 'When the party arrives, "YYYY-MM-DD HH:MM".',
    "has_drivers_license": "Whether the guest will show a valid driver's license (ID is checked).",
    "upgrade_vip_room": "Reserve the VIP room (+$50), where the bar has one.",
    "new_event_datetime": 'New arrival time, "YYYY-MM-DD HH:MM".',
    "new_number_guests": "New party size.",
}


def render(ep: Episode, r: int) -> dict:
    t = ep.kb[TABLE]
    return {"venue_id": t.ident(r), "name": t.string("name", r), "bar_type": t.string("bar_type", r),
            **place(ep, t, r), "rating": float(t["rating"][r]), "price_level": int(t["price_level"][r]),
            "price_per_person": float(t["price_per_person"][r]),
            "star_segment": t.string("star_segment", r), "min_age": int(t["min_age"][r]),
            "features": features(t, r, BAR_FLAGS)}


@tool("read")
@documented(DOCS)
def search_bars(db: Episode, city: str, state: str | None = None, bar_type: list[str] | None = None,
                neighborhood: list[str] | None = None, price_level: list[int] | None = None,
                budget: float | None = None, min_rating: float | None = None,
                has_happy_hour: bool | None = None, has_live_music: bool | None = None,
                has_pool_tables: bool | None = None, has_valet_parking: bool | None = None,
                has_signature_mixology: bool | None = None, has_dance_floor: bool | None = None,
                has_karaoke: bool | None = None, has_trivia_night: bool | None = None,
                has_sports_screens: bool | None = None, has_outdoor_seating: bool | None = None,
                has_craft_beer: bool | None = None, has_food_menu: bool | None = None,
                is_wheelchair_accessible: bool | None = None, has_vip_room: bool | None = None) -> dict:
    """Find bars in a city that match the given criteria. The matches are cached under a key
    (search_bars_results_<n>) that filter_bars can narrow down."""
    values = given(locals(), ("city", "state"))
    rows, where = city_rows(db, TABLE, city, state)
    return search(db, "search_bars", TABLE, rows, f"in {where}", CRITERIA, values, "bars", render)


@tool("read")
@documented(DOCS)
def filter_bars(db: Episode, cache_key: str, bar_type: list[str] | None = None,
                neighborhood: list[str] | None = None, price_level: list[int] | None = None,
                budget: float | None = None, min_rating: float | None = None,
                has_happy_hour: bool | None = None, has_live_music: bool | None = None,
                has_pool_tables: bool | None = None, has_valet_parking: bool | None = None,
                has_signature_mixology: bool | None = None, has_dance_floor: bool | None = None,
                has_karaoke: bool | None = None, has_trivia_night: bool | None = None,
                has_sports_screens: bool | None = None, has_outdoor_seating: bool | None = None,
                has_craft_beer: bool | None = None, has_food_menu: bool | None = None,
                is_wheelchair_accessible: bool | None = None, has_vip_room: bool | None = None) -> dict:
    """Narrow down earlier bar results (from search_bars or filter_bars) by more criteria.
    The narrowed results get their own key (filter_bars_results_<n>)."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_bars", TABLE, cache_key, CRITERIA, values, "bars", render)


def _check_party(db: Episode, u: int, r: int, when, guests: int, vip: bool) -> None:
    t = db.kb[TABLE]
    if when <= db.now:
        raise ToolError(f"event_datetime {when:%Y-%m-%d %H:%M} is not in the future")
    count(guests, "number_guests", 1, MAX_GUESTS)
    if age_on(db, u, when.date()) < int(t["min_age"][r]):
        raise ToolError(f"{t.string('name', r)} admits guests aged {int(t['min_age'][r])}+ only")
    if vip and not bool(t["has_vip_room"][r]):
        raise ToolError(f"{t.string('name', r)} has no VIP room")


@tool("write")
@documented(DOCS)
def book_bar_reservation(db: Episode, user_id: str, venue_id: str, primary_guest_name: str,
                         number_guests: int, event_datetime: str, credit_card_last_four: str,
                         has_drivers_license: bool = False, upgrade_vip_room: bool = False) -> dict:
    """Reserve a table at a bar. A deposit of $20 per guest (+$50 for the VIP room) is charged
    to the card; the guest must show a driver's license at the door."""
    u, r = user(db, user_id), row(db, TABLE, venue_id, "venue_id")
    when = parse_datetime(event_datetime, "event_datetime")
    guest = name(primary_guest_name, "primary_guest_name")
    last_four = card(db, u, credit_card_last_four)
    if not has_drivers_license:
        raise ToolError("bars check ID: the guest must have a driver's license (has_drivers_license=true)")
    _check_party(db, u, r, when, number_guests, upgrade_vip_room)
    return keep(db, {
        "reservation_id": db.next_id("BRS"), "kind": "bar_reservation", "user_id": db.kb["users"].ident(u),
        "venue_id": db.kb[TABLE].ident(r), "bar_name": db.kb[TABLE].string("name", r),
        "primary_guest_name": guest, "number_guests": number_guests,
        "event_datetime": f"{when:%Y-%m-%d %H:%M}", "upgrade_vip_room": upgrade_vip_room,
        "credit_card_last_four": last_four,
        "deposit": money(DEPOSIT_PER_GUEST * number_guests + (VIP_ROOM if upgrade_vip_room else 0)),
        "status": "confirmed"})


@tool("write")
@documented(DOCS)
def modify_bar_reservation(db: Episode, user_id: str, reservation_id: str,
                           new_event_datetime: str | None = None, new_number_guests: int | None = None,
                           upgrade_vip_room: bool | None = None) -> dict:
    """Change the time, party size or VIP room of a bar reservation; the deposit is adjusted."""
    rec = record(db, user_id, reservation_id, "bar_reservation", "reservation_id")
    if new_event_datetime is None and new_number_guests is None and upgrade_vip_room is None:
        raise ToolError("nothing to change: give new_event_datetime, new_number_guests or upgrade_vip_room")
    when = parse_datetime(new_event_datetime or rec["event_datetime"], "new_event_datetime")
    guests = rec["number_guests"] if new_number_guests is None else new_number_guests
    vip = rec["upgrade_vip_room"] if upgrade_vip_room is None else upgrade_vip_room
    u, r = user(db, user_id), row(db, TABLE, rec["venue_id"], "venue_id")
    _check_party(db, u, r, when, guests, vip)
    changes = {"event_datetime": f"{when:%Y-%m-%d %H:%M}", "number_guests": guests, "upgrade_vip_room": vip,
               "deposit": money(DEPOSIT_PER_GUEST * guests + (VIP_ROOM if vip else 0))}
    changes = {k: v for k, v in changes.items() if rec[k] != v}
    rec.update(changes)
    log(db, "modify", rec, changes=changes)
    return dict(rec)


@tool("write")
@documented(DOCS)
def cancel_bar_reservation(db: Episode, user_id: str, reservation_id: str) -> dict:
    """Cancel a bar reservation. The deposit is refunded in full 48 hours or more before the
    event; closer to it, a $25 late-cancellation fee is kept."""
    rec = record(db, user_id, reservation_id, "bar_reservation", "reservation_id")
    hours = (parse_datetime(rec["event_datetime"], "event_datetime") - db.now).total_seconds() / 3600
    return cancel(db, rec, LATE_FEE if hours < FREE_CANCEL_HOURS else 0.0, rec["deposit"])
