"""The end state of an episode as the checks, the store and ``sweepbench tools call`` see it.

The shape is the one upstream's golden traces record: orders (every domain), bookings and
reservations keyed as in the state; a product flattened to its id, price, quantity and
attributes (a travel product also keeps its ``date``, which the expected states of travel tasks
name); a place as ``[address, longitude, latitude]``.
"""

from __future__ import annotations

from typing import Any

from sweepbench.benchmarks.vitabench.tools.records import (
    BookInfo,
    Order,
    ReservationInfo,
)
from sweepbench.benchmarks.vitabench.tools.state import ToolState


def final_view(state: ToolState) -> dict[str, Any]:
    return {"orders": {k: _order(o) for k, o in (state.orders or {}).items()},
            "books": {k: _book(b) for k, b in (state.books or {}).items()},
            "reservations": {k: _reservation(r) for k, r in (state.reservations or {}).items()}}


def _order(o: Order) -> dict[str, Any]:
    place = o.location
    return {"order_id": o.order_id, "order_type": o.order_type, "user_id": o.user_id,
            "store_id": o.store_id, "status": o.status, "total_price": o.total_price,
            "note": o.note, "dispatch_time": o.dispatch_time, "shipping_time": o.shipping_time,
            "delivery_time": o.delivery_time, "create_time": o.create_time,
            "update_time": o.update_time,
            "location": None if place is None else [place.address, place.longitude, place.latitude],
            "products": [_product(p) for p in o.products]}


def _product(p: Any) -> Any:
    """A line of an order: a record the tools made, or the task file's raw object."""
    if isinstance(p, dict):
        spec = p.get("attributes", p.get("attribute"))
        out = {"product_id": p.get("product_id"), "price": _number(p.get("price", 0.0)),
               "quantity": p.get("quantity", 0),
               "attributes": "" if spec is None else ", ".join(map(str, spec)) if isinstance(spec, list) else spec}
        date = p.get("date")
    elif hasattr(p, "product_id"):
        out = {"product_id": p.product_id, "price": p.price, "quantity": p.quantity,
               "attributes": getattr(p, "attributes", "")}
        date = getattr(p, "date", None)
    else:
        return p
    if date is not None:
        out["date"] = date
    return out


def _number(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def _book(b: BookInfo) -> dict[str, Any]:
    return {"book_id": b.book_id, "shop_id": b.shop_id, "book_time": b.book_time,
            "customer_id": b.customer_id, "customer_count": b.customer_count,
            "book_price": b.book_price, "status": b.status, "update_time": b.update_time}


def _reservation(r: ReservationInfo) -> dict[str, Any]:
    return {"reservation_id": r.reservation_id, "shop_id": r.shop_id,
            "reservation_time": r.reservation_time, "customer_id": r.customer_id,
            "customer_count": r.customer_count, "status": r.status, "update_time": r.update_time}
