"""The VitaBench tool-dependency graph: which tool's output feeds which tool's input.

Declared, not guessed: ``PROVIDES`` says what kinds of value each tool's result carries (a
store id, an order id, coordinates, a date, ...), and ``_input_kind`` says what kind each
parameter takes, from its name and, where one name means different things (``order_id``,
``product_id``, ``seat_id``), the tool. A tool A feeds a tool B (an edge A -> B, A != B) when
A provides a kind B takes. Values only the user can give (a quantity, a year, a party size)
have no kind, so they add no edges. Table 6 of the paper reports |V|, |E| and the density
|E| / (|V| (|V| - 1)) of this graph per domain; ``graph_stats`` computes them for any toolkit.
"""

from __future__ import annotations

from itertools import permutations

from sweepbench.benchmarks.vitabench.release import RELEASES
from sweepbench.tools.base import Tool, Toolkit

TRAVEL = ("hotel", "attraction", "flight", "train")
_SELLER_ITEM = {"hotel": "room", "attraction": "ticket", "flight": "flight_seat", "train": "train_seat"}
_PLACE = {"address", "coords"}

PROVIDES: dict[str, set[str]] = {
    # general
    "longitude_latitude_to_distance": {"distance"},
    "weather": set(),
    "address_to_longitude_latitude": {"coords"},
    "get_date_holiday_info": set(),
    "get_holiday_date": {"date"},
    "get_user_historical_behaviors": {"user_id", "address", "city", "keywords", "note"},
    "get_user_all_orders": {"user_id", "address", "date", "store", "product", "shop", "package",
                            "delivery_order", "instore_order", *TRAVEL,
                            *(f"{t}_order" for t in TRAVEL), *_SELLER_ITEM.values()},
    "get_nearby": {"store", "shop", *TRAVEL, *_PLACE},
    # delivery
    "delivery_distance_to_time": {"time"},
    "get_delivery_store_info": {"store", "product", "attributes", *_PLACE},
    "get_delivery_product_info": {"product", "store", "attributes"},
    "delivery_store_search_recommand": {"store", *_PLACE},
    "delivery_product_search_recommand": {"product", "store", "attributes"},
    "create_delivery_order": {"delivery_order", "time", *_PLACE},
    "pay_delivery_order": set(),
    "get_delivery_order_status": set(),
    "cancel_delivery_order": set(),
    "modify_delivery_order": set(),
    "search_delivery_orders": {"delivery_order", "store"},
    "get_delivery_order_detail": {"delivery_order", "store", "product", "attributes", "note", "time", *_PLACE},
    # in-store
    "instore_shop_search_recommend": {"shop", *_PLACE},
    "instore_product_search_recommend": {"package", "shop"},
    "create_instore_product_order": {"instore_order"},
    "pay_instore_order": set(),
    "instore_cancel_order": set(),
    "instore_book": {"book"},
    "pay_instore_book": set(),
    "instore_cancel_book": set(),
    "instore_reservation": {"reservation"},
    "instore_modify_reservation": {"reservation", "time"},
    "instore_cancel_reservation": set(),
    "get_instore_orders": {"instore_order", "shop", "package"},
    "get_instore_reservations": {"reservation", "shop", "time"},
    "get_instore_books": {"book", "shop", "time"},
    "search_instore_book": {"book", "shop", "time"},
    "search_instore_reservation": {"reservation", "shop", "time"},
}
for _t in TRAVEL:
    PROVIDES.update({
        f"get_ota_{_t}_info": {_t, _SELLER_ITEM[_t], "date", "city", *_PLACE},
        f"create_{_t}_order": {f"{_t}_order"},
        f"pay_{_t}_order": set(),
        f"search_{_t}_order": {f"{_t}_order", _t, _SELLER_ITEM[_t], "date"},
        f"get_{_t}_order_detail": {f"{_t}_order", _t, _SELLER_ITEM[_t], "date"},
        f"cancel_{_t}_order": set(),
    })
PROVIDES.update({
    "hotel_search_recommand": {"hotel", *_PLACE},
    "attractions_search_recommend": {"attraction", *_PLACE},
    "flight_search_recommend": {"flight", "city", *_PLACE},
    "train_ticket_search": {"train", "city", *_PLACE},
    "modify_train_order": set(),
    "modify_flight_order": set(),
})

# the updated release's spellings of three names (``Release.tool_renames``)
PROVIDES.update({new: PROVIDES[old] for rules in RELEASES.values()
                 for old, new in rules.tool_renames.items()})

_BY_NAME = {
    "user_id": "user_id", "store_id": "store", "product_ids": "product", "address": "address",
    "dispatch_time": "time", "time": "time", "attributes": "attributes", "note": "note",
    "shop_id": "shop", "book_id": "book", "reservation_id": "reservation",
    "hotel_id": "hotel", "room_id": "room", "attraction_id": "attraction", "ticket_id": "ticket",
    "flight_id": "flight", "train_id": "train", "date": "date", "new_date": "date",
    "date_start": "date", "date_end": "date", "city_name": "city", "departure": "city",
    "destination": "city", "keywords": "keywords", "key_words": "keywords", "distance": "distance",
    "longitude": "coords", "latitude": "coords", "longitude1": "coords", "latitude1": "coords",
    "longitude2": "coords", "latitude2": "coords",
}


def _input_kind(t: Tool, param: str) -> str | None:
    travel = next((k for k in TRAVEL if k in t.name), None)
    if param == "order_id":
        return f"{travel}_order" if t.domain == "ota" else f"{t.domain}_order"
    if param == "product_id":
        return "package" if t.domain == "instore" else "product"
    if param == "seat_id":
        return _SELLER_ITEM[travel] if travel else None
    return _BY_NAME.get(param)


def inputs(t: Tool) -> set[str]:
    kinds = (_input_kind(t, p) for p in t.args_type.__struct_fields__)
    return {k for k in kinds if k}


def edges(kit: Toolkit) -> list[tuple[str, str]]:
    """Every (feeder, fed) pair among the toolkit's tools."""
    missing = sorted(set(kit.tools) - set(PROVIDES))
    if missing:
        raise KeyError(f"no dependency declaration for tools: {', '.join(missing)}")
    takes = {name: inputs(t) for name, t in kit.tools.items()}
    return [(a, b) for a, b in permutations(kit.tools, 2) if PROVIDES[a] & takes[b]]


def graph_stats(kit: Toolkit) -> dict[str, float]:
    """{"edges": |E|, "density": |E| / (|V| (|V| - 1))} of the toolkit's dependency graph."""
    n, e = len(kit), len(edges(kit))
    return {"edges": e, "density": round(e / (n * (n - 1)), 4) if n > 1 else 0.0}
