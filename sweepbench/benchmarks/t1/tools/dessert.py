"""Dessert tools: find dessert shops (or just bakeries), read a shop's menu, place, look up
and cancel an order.

A shop's menu is the menu of its shop type, priced by its price level. Delivery is possible
only from shops that deliver and costs a flat fee. Cancelled orders are refunded in full.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sweepbench.benchmarks.t1.data.ontology import BAKERY_TYPES, DESSERT_FLAGS
from sweepbench.benchmarks.t1.tools.checks import (
    cancel,
    features,
    keep,
    money,
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
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

TABLE, MENU = "dessert_shops", "dessert_menu_items"
DELIVERY_FEE = 3.99
CRITERIA = (Criterion("shop_type", "one_of"), Criterion("neighborhood", "one_of"),
            Criterion("price_level", "one_of"), Criterion("min_rating", "at_least", "rating"),
            *flags(DESSERT_FLAGS))
DOCS = {
    "shop_type": "Shop types to keep: Ice Cream Parlor, Gelateria, Patisserie, Bakery, Creperie, "
                 "Donut Shop, Frozen Yogurt, Cupcake Shop, Chocolatier, Dessert Cafe.",
    "shop_id": 'The shop\'s id from search results, e.g. "DST-09BFAC".',
    "fulfillment": '"pickup" (default) or "delivery" (shops with delivery only, +$3.99).',
}


def render(ep: Episode, r: int) -> dict:
    t = ep.kb[TABLE]
    return {"shop_id": t.ident(r), "name": t.string("name", r), "shop_type": t.string("shop_type", r),
            **place(ep, t, r), "rating": float(t["rating"][r]), "price_level": int(t["price_level"][r]),
            "star_segment": t.string("star_segment", r), "features": features(t, r, DESSERT_FLAGS)}


def menu(ep: Episode, r: int) -> list[dict]:
    t, m = ep.kb[TABLE], ep.kb[MENU]
    scale = 0.8 + 0.2 * int(t["price_level"][r])
    return [{"item_id": m.ident(i), "name": m.string("name", i), "price": money(m["base_price"][i] * scale),
             "dietary_tags": [x for x in m.string("dietary_tags", i).split(",") if x]}
            for i in ep.kb.group(MENU, "shop_type", int(t["shop_type"][r]))]


def _bakeries(ep: Episode, rows: np.ndarray) -> np.ndarray:
    t = ep.kb[TABLE]
    return rows[np.isin(t["shop_type"][rows], [t.code("shop_type", b) for b in BAKERY_TYPES])]


@tool("read")
@documented(DOCS)
def search_dessert_shops(db: Episode, city: str, state: str | None = None, shop_type: list[str] | None = None,
                         neighborhood: list[str] | None = None, price_level: list[int] | None = None,
                         min_rating: float | None = None, has_ice_cream: bool | None = None,
                         has_gelato: bool | None = None, has_pastries: bool | None = None,
                         has_crepes: bool | None = None, has_cakes: bool | None = None,
                         has_cookies: bool | None = None, has_donuts: bool | None = None,
                         has_vegan_options: bool | None = None, has_gluten_free_options: bool | None = None,
                         has_dairy_free_options: bool | None = None, has_nut_free_options: bool | None = None,
                         has_custom_orders: bool | None = None, has_delivery: bool | None = None,
                         has_seating: bool | None = None) -> dict:
    """Find dessert shops of every kind in a city. The matches are cached under a key
    (search_dessert_shops_results_<n>) that filter_dessert_shops can narrow down."""
    values = given(locals(), ("city", "state"))
    rows, where = city_rows(db, TABLE, city, state)
    return search(db, "search_dessert_shops", TABLE, rows, f"in {where}", CRITERIA, values,
                  "dessert shops", render)


@tool("read")
@documented(DOCS)
def filter_dessert_shops(db: Episode, cache_key: str, shop_type: list[str] | None = None,
                         neighborhood: list[str] | None = None, price_level: list[int] | None = None,
                         min_rating: float | None = None, has_ice_cream: bool | None = None,
                         has_gelato: bool | None = None, has_pastries: bool | None = None,
                         has_crepes: bool | None = None, has_cakes: bool | None = None,
                         has_cookies: bool | None = None, has_donuts: bool | None = None,
                         has_vegan_options: bool | None = None, has_gluten_free_options: bool | None = None,
                         has_dairy_free_options: bool | None = None, has_nut_free_options: bool | None = None,
                         has_custom_orders: bool | None = None, has_delivery: bool | None = None,
                         has_seating: bool | None = None) -> dict:
    """Narrow down earlier dessert-shop results by more criteria; the result gets its own key."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_dessert_shops", TABLE, cache_key, CRITERIA, values,
                         "dessert shops", render)


@tool("read")
@documented(DOCS)
def search_bakeries(db: Episode, city: str, state: str | None = None, shop_type: list[str] | None = None,
                    neighborhood: list[str] | None = None, price_level: list[int] | None = None,
                    min_rating: float | None = None, has_pastries: bool | None = None,
                    has_cakes: bool | None = None, has_cookies: bool | None = None,
                    has_donuts: bool | None = None, has_vegan_options: bool | None = None,
                    has_gluten_free_options: bool | None = None, has_custom_orders: bool | None = None,
                    has_delivery: bool | None = None, has_seating: bool | None = None) -> dict:
    """Find bakeries (Bakery, Patisserie, Cupcake Shop, Donut Shop) in a city. The matches are
    cached under a key (search_bakeries_results_<n>) that filter_bakeries can narrow down."""
    values = given(locals(), ("city", "state"))
    rows, where = city_rows(db, TABLE, city, state)
    return search(db, "search_bakeries", TABLE, _bakeries(db, rows), f"in {where}", CRITERIA, values,
                  "bakeries", render)


@tool("read")
@documented(DOCS)
def filter_bakeries(db: Episode, cache_key: str, shop_type: list[str] | None = None,
                    neighborhood: list[str] | None = None, price_level: list[int] | None = None,
                    min_rating: float | None = None, has_pastries: bool | None = None,
                    has_cakes: bool | None = None, has_cookies: bool | None = None,
                    has_donuts: bool | None = None, has_vegan_options: bool | None = None,
                    has_gluten_free_options: bool | None = None, has_custom_orders: bool | None = None,
                    has_delivery: bool | None = None, has_seating: bool | None = None) -> dict:
    """Narrow down earlier bakery results by more criteria; the result gets its own key."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_bakeries", TABLE, cache_key, CRITERIA, values, "bakeries", render)


@tool("read")
@documented(DOCS)
def get_shop_menu(db: Episode, shop_id: str) -> dict:
    """The menu of a dessert shop or bakery: item ids, names, prices and dietary tags."""
    r = row(db, TABLE, shop_id, "shop_id")
    return {"shop_id": db.kb[TABLE].ident(r), "name": db.kb[TABLE].string("name", r), "items": menu(db, r)}


@tool("write")
@documented(DOCS)
def place_dessert_order(db: Episode, user_id: str, shop_id: str, items: list[dict[str, Any]],
                        payment_method: str, fulfillment: str = "pickup") -> dict:
    """Order items from a dessert shop's menu for pickup or delivery, paid when placed."""
    u, r = user(db, user_id), row(db, TABLE, shop_id, "shop_id")
    lines, subtotal = order_lines(items, {i["item_id"]: (i["name"], i["price"]) for i in menu(db, r)})
    method = payment(db, u, payment_method, ("credit_card", "debit_card"))
    fulfillment = str(fulfillment).strip().lower()
    if fulfillment not in ("pickup", "delivery"):
        raise ToolError(f'`fulfillment` must be "pickup" or "delivery", got {fulfillment!r}')
    if fulfillment == "delivery" and not bool(db.kb[TABLE]["has_delivery"][r]):
        raise ToolError(f"{db.kb[TABLE].string('name', r)} does not deliver; choose pickup")
    fee = DELIVERY_FEE if fulfillment == "delivery" else 0.0
    return keep(db, {"order_id": db.next_id("DSO"), "kind": "dessert_order", "user_id": db.kb["users"].ident(u),
                     "shop_id": db.kb[TABLE].ident(r), "shop_name": db.kb[TABLE].string("name", r),
                     "items": lines, "fulfillment": fulfillment, "delivery_fee": fee,
                     "total": money(subtotal + fee), "payment_method": method, "status": "placed"})


@tool("read")
@documented(DOCS)
def get_dessert_order(db: Episode, user_id: str, order_id: str) -> dict:
    """Look up one of the user's dessert orders."""
    return dict(record(db, user_id, order_id, "dessert_order", "order_id", live=False))


@tool("write")
@documented(DOCS)
def cancel_dessert_order(db: Episode, user_id: str, order_id: str) -> dict:
    """Cancel a dessert order that has not been fulfilled; the payment is refunded in full."""
    rec = record(db, user_id, order_id, "dessert_order", "order_id")
    return cancel(db, rec, 0.0, rec["total"])
