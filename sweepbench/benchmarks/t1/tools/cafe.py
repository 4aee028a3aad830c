"""Cafe tools: find coffee shops and bubble-tea shops, read a menu, place, look up and
cancel an order.

A cafe's menu is its chain's. Orders are paid by card when placed and refunded in full when
cancelled before they are picked up (in an episode, always: the clock does not move).
"""

from __future__ import annotations

from typing import Any

from sweepbench.benchmarks.t1.data.ontology import CAFE_FLAGS
from sweepbench.benchmarks.t1.tools.checks import (
    cancel,
    features,
    keep,
    order_lines,
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
from sweepbench.tools.base import tool

TABLE, MENU = "cafes", "cafe_menu_items"
CRITERIA = (Criterion("cafe_type", "one_of"), Criterion("neighborhood", "one_of"),
            Criterion("price_level", "one_of"), Criterion("min_rating", "at_least", "rating"),
            *flags(CAFE_FLAGS))
DOCS = {
    "cafe_type": '"Coffee Shop" or "Bubble Tea".',
    "cafe_id": 'The cafe\'s id from search results, e.g. "CFE-A5E036".',
}


def render(ep: Episode, r: int) -> dict:
    t = ep.kb[TABLE]
    return {"cafe_id": t.ident(r), "name": t.string("name", r), "cafe_type": t.string("cafe_type", r),
            **place(ep, t, r), "rating": float(t["rating"][r]), "price_level": int(t["price_level"][r]),
            "star_segment": t.string("star_segment", r), "features": features(t, r, CAFE_FLAGS)}


def menu(ep: Episode, r: int) -> list[dict]:
    m = ep.kb[MENU]
    return [{"item_id": m.ident(i), "name": m.string("name", i), "description": m.string("description", i),
             "price": float(m["base_price"][i]),
             "dietary_tags": [x for x in m.string("dietary_tags", i).split(",") if x],
             "allergens": [x for x in m.string("allergens", i).split(",") if x]}
            for i in ep.kb.group(MENU, "chain", int(ep.kb[TABLE]["name"][r]))]


@tool("read")
@documented(DOCS)
def search_cafes(db: Episode, city: str, state: str | None = None, cafe_type: str | None = None,
                 neighborhood: list[str] | None = None, price_level: list[int] | None = None,
                 min_rating: float | None = None, has_light_roast: bool | None = None,
                 has_dark_roast: bool | None = None, has_decaf: bool | None = None,
                 has_oat_milk: bool | None = None, has_almond_milk: bool | None = None,
                 has_soy_milk: bool | None = None, has_sugar_free_options: bool | None = None,
                 has_vanilla_syrup: bool | None = None, has_caramel_syrup: bool | None = None,
                 has_black_tea: bool | None = None, has_green_tea: bool | None = None,
                 has_tapioca_pearls: bool | None = None, has_wifi: bool | None = None,
                 has_outdoor_seating: bool | None = None) -> dict:
    """Find coffee shops and bubble-tea shops in a city. The matches are cached under a key
    (search_cafes_results_<n>) that filter_cafes can narrow down."""
    values = given(locals(), ("city", "state"))
    rows, where = city_rows(db, TABLE, city, state)
    return search(db, "search_cafes", TABLE, rows, f"in {where}", CRITERIA, values, "cafes", render)


@tool("read")
@documented(DOCS)
def filter_cafes(db: Episode, cache_key: str, cafe_type: str | None = None,
                 neighborhood: list[str] | None = None, price_level: list[int] | None = None,
                 min_rating: float | None = None, has_light_roast: bool | None = None,
                 has_dark_roast: bool | None = None, has_decaf: bool | None = None,
                 has_oat_milk: bool | None = None, has_almond_milk: bool | None = None,
                 has_soy_milk: bool | None = None, has_sugar_free_options: bool | None = None,
                 has_vanilla_syrup: bool | None = None, has_caramel_syrup: bool | None = None,
                 has_black_tea: bool | None = None, has_green_tea: bool | None = None,
                 has_tapioca_pearls: bool | None = None, has_wifi: bool | None = None,
                 has_outdoor_seating: bool | None = None) -> dict:
    """Narrow down earlier cafe results by more criteria; the result gets its own key."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_cafes", TABLE, cache_key, CRITERIA, values, "cafes", render)


@tool("read")
@documented(DOCS)
def get_cafe_menu(db: Episode, cafe_id: str) -> dict:
    """The menu of a cafe: item ids, names, prices, dietary tags and allergens."""
    r = row(db, TABLE, cafe_id, "cafe_id")
    return {"cafe_id": db.kb[TABLE].ident(r), "name": db.kb[TABLE].string("name", r), "items": menu(db, r)}


@tool("write")
@documented(DOCS)
def place_cafe_order(db: Episode, user_id: str, cafe_id: str, items: list[dict[str, Any]],
                     payment_method: str) -> dict:
    """Order items from a cafe's menu for pickup, paid when placed."""
    u, r = user(db, user_id), row(db, TABLE, cafe_id, "cafe_id")
    lines, total = order_lines(items, {i["item_id"]: (i["name"], i["price"]) for i in menu(db, r)})
    method = payment(db, u, payment_method, ("credit_card", "debit_card"))
    return keep(db, {"order_id": db.next_id("CFO"), "kind": "cafe_order", "user_id": db.kb["users"].ident(u),
                     "cafe_id": db.kb[TABLE].ident(r), "cafe_name": db.kb[TABLE].string("name", r),
                     "items": lines, "total": total, "payment_method": method, "status": "placed"})


@tool("read")
@documented(DOCS)
def get_cafe_order(db: Episode, user_id: str, order_id: str) -> dict:
    """Look up one of the user's cafe orders."""
    return dict(record(db, user_id, order_id, "cafe_order", "order_id", live=False))


@tool("write")
@documented(DOCS)
def cancel_cafe_order(db: Episode, user_id: str, order_id: str) -> dict:
    """Cancel a cafe order that has not been picked up; the payment is refunded in full."""
    rec = record(db, user_id, order_id, "cafe_order", "order_id")
    return cancel(db, rec, 0.0, rec["total"])
