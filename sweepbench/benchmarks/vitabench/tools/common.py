"""Types every domain of the typed task view shares (``db``): places, weather, orders and
statuses. Orders of all domains live in one table with one shape, as upstream."""

from __future__ import annotations

from typing import Literal

from msgspec import Struct

from sweepbench.benchmarks.vitabench.tools.records import Location, Weather  # noqa: F401  (shared)

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
