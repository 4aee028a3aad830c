"""Types and helpers every VitaBench domain shares: places, weather, orders, statuses, fuzzy
ranking and distances. Orders of all domains live in one table with one shape, as upstream."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal, TypeVar

from msgspec import Struct
from rapidfuzz import fuzz, process, utils

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
DATE_FORMAT = "%Y-%m-%d"

OrderStatus = Literal[
    "unpaid", "paid", "unconsumed", "consumed", "processed", "in-progress", "delivered", "cancelled",
]

# Tools move a record only through unpaid -> paid -> cancelled (or unpaid -> cancelled); a new
# reservation starts "unconsumed". What happens after payment (processed, in-progress,
# delivered; in-store: unconsumed, consumed) is the merchant's doing, not the agent's, yet the
# expected states use those words for records the agent merely paid. So end states are
# compared by class, and this is the one place that says which status belongs to which class.
STATUS_CLASS: dict[str, str] = {
    "unpaid": "unpaid",
    "paid": "paid",
    "processed": "paid",
    "in-progress": "paid",
    "delivered": "paid",
    "unconsumed": "paid",
    "consumed": "paid",
    "cancelled": "cancelled",
}


def status_class(status: str) -> str:
    return STATUS_CLASS[status]


class Location(Struct):
    address: str
    longitude: float
    latitude: float


class Weather(Struct):
    city: str
    category: str
    datetime: str
    temperature: tuple[float, float]
    humidity: float


class OrderedProduct(Struct, omit_defaults=True):
    """A line of an order. Delivery lines carry the chosen spec as ``attributes``; travel lines
    carry the ``date`` and the room, ticket or seat type. Orders in task files carry only some
    of these; orders the tools create carry what their domain has."""

    product_id: str
    price: float = 0.0
    quantity: int = 0
    attributes: str = ""
    name: str = ""
    store_id: str = ""
    store_name: str = ""
    tags: list[str] = []
    date: str = ""
    room_type: str = ""
    ticket_type: str = ""
    seat_type: str = ""


class Order(Struct):
    """An order of any domain; ``order_type`` says which (delivery, instore, hotel, attraction,
    flight, train) and ``store_id`` names the store, shop, hotel, attraction, flight or train."""

    order_id: str
    order_type: str
    user_id: str
    store_id: str
    note: str = ""
    location: Location | None = None
    dispatch_time: str = ""
    shipping_time: float | None = None
    delivery_time: str = ""
    total_price: float = 0.0
    create_time: str = ""
    update_time: str = ""
    status: OrderStatus = "unpaid"
    products: list[OrderedProduct] = []


class OrderSummary(Struct):
    order_id: str
    order_type: str
    user_id: str
    store_id: str
    total_price: float
    create_time: str
    update_time: str
    status: str

    @classmethod
    def of(cls, o: Order) -> OrderSummary:
        return cls(o.order_id, o.order_type, o.user_id, o.store_id, o.total_price,
                   o.create_time, o.update_time, o.status)


K = TypeVar("K")


def rank(query: str, docs: Mapping[K, str]) -> list[tuple[K, float]]:
    """Keys of ``docs`` best first by fuzzy partial match against ``query`` (ties keep order)."""
    hits = process.extract(query, docs, scorer=fuzz.partial_ratio, processor=utils.default_process,
                           limit=None)
    return [(key, score) for _, score, key in hits]


def loosely_matches(query: str, text: str) -> bool:
    """Upstream's lenient city filter: a partial fuzzy match of at least 40."""
    return fuzz.partial_ratio(query, text) >= 40


def distance_m(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Great-circle distance in whole meters (haversine, earth radius 6371 km)."""
    if (lon1, lat1) == (lon2, lat2):
        return 0.0
    lon1, lat1, lon2, lat2 = map(math.radians, (lon1, lat1, lon2, lat2))
    a = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return round(2 * 6371000 * math.asin(math.sqrt(min(1.0, a))), 0)
