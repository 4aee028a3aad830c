"""Online travel, part two (fourteen tools): find, read, re-date and cancel travel orders.

Behaviour follows upstream VitaBench (``domains/ota/tools.py``): only a paid flight or train
order of one seat line may move to another date; the seats go back to the old date's stock and
come from the new date's; a dearer date leaves the order unpaid for the difference. Cancelling
refunds a paid order in full and does not restock (as upstream).
"""

from __future__ import annotations

from typing import Literal

from sweepbench.benchmarks.vitabench.tools.common import OrderedProduct
from sweepbench.benchmarks.vitabench.tools.db import Database, Order
from sweepbench.benchmarks.vitabench.tools.ota import check_date, travel_order
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

TravelStatus = Literal["unpaid", "paid", "cancelled"]


def _search(db: Database, user_id: str, kind: str, date: str | None, status: str | None) -> list[Order] | str:
    db.check_user(user_id)
    if date:
        check_date(date)
    found = [o for o in db.orders.values()
             if o.order_type == kind and o.user_id == user_id and (not status or o.status == status)
             and (not date or any(p.date == date for p in o.products))]
    return found or f"No {kind} orders found"


@tool("read")
def search_hotel_order(db: Database, user_id: str, date: str | None = None,
                       status: TravelStatus | None = "paid") -> list[Order] | str:
    """The user's hotel orders, optionally only those for a date and in a status (paid unless
    another status, or null for all, is given).

    Args:
        user_id: The user's id.
        date: Only orders with a room night on this date (yyyy-mm-dd).
        status: Only orders in this status.
    """
    return _search(db, user_id, "hotel", date, status)


@tool("read")
def search_attraction_order(db: Database, user_id: str, date: str | None = None,
                            status: TravelStatus | None = "paid") -> list[Order] | str:
    """The user's attraction ticket orders, optionally only those for a date and in a status
    (paid unless another status, or null for all, is given).

    Args:
        user_id: The user's id.
        date: Only orders for this visit date (yyyy-mm-dd).
        status: Only orders in this status.
    """
    return _search(db, user_id, "attraction", date, status)


@tool("read")
def search_flight_order(db: Database, user_id: str, date: str | None = None,
                        status: TravelStatus | None = "paid") -> list[Order] | str:
    """The user's flight orders, optionally only those for a date and in a status (paid unless
    another status, or null for all, is given).

    Args:
        user_id: The user's id.
        date: Only orders flying on this date (yyyy-mm-dd).
        status: Only orders in this status.
    """
    return _search(db, user_id, "flight", date, status)


@tool("read")
def search_train_order(db: Database, user_id: str, date: str | None = None,
                       status: TravelStatus | None = "paid") -> list[Order] | str:
    """The user's train orders, optionally only those for a date and in a status (paid unless
    another status, or null for all, is given).

    Args:
        user_id: The user's id.
        date: Only orders travelling on this date (yyyy-mm-dd).
        status: Only orders in this status.
    """
    return _search(db, user_id, "train", date, status)


@tool("read")
def get_hotel_order_detail(db: Database, order_id: str) -> Order:
    """A hotel order in full: hotel, room, date, price and status.

    Args:
        order_id: The order's id.
    """
    return travel_order(db, order_id, "hotel")


@tool("read")
def get_attraction_order_detail(db: Database, order_id: str) -> Order:
    """An attraction ticket order in full: attraction, tickets, date, price and status.

    Args:
        order_id: The order's id.
    """
    return travel_order(db, order_id, "attraction")


@tool("read")
def get_flight_order_detail(db: Database, order_id: str) -> Order:
    """A flight order in full: flight, seats, date, price and status.

    Args:
        order_id: The order's id.
    """
    return travel_order(db, order_id, "flight")


@tool("read")
def get_train_order_detail(db: Database, order_id: str) -> Order:
    """A train order in full: train, seats, date, price and status.

    Args:
        order_id: The order's id.
    """
    return travel_order(db, order_id, "train")


def _redate(db: Database, order_id: str, user_id: str, new_date: str, kind: str) -> str:
    db.check_user(user_id)
    check_date(new_date, "new_date")
    order = travel_order(db, order_id, kind)
    if order.user_id != user_id:
        raise ToolError(f"Order {order_id} does not belong to user {user_id}")
    if order.status != "paid":
        raise ToolError(f"Only paid orders can be modified, current status: {order.status}")
    if len(order.products) != 1:
        raise ToolError("Only an order of one seat line can change its date")
    old = order.products[0]
    vehicle = (db.flights if kind == "flight" else db.trains).get(order.store_id)
    if vehicle is None:
        raise ToolError(f"{kind} {order.store_id} of order {order_id} is no longer listed")
    new = next((p for p in vehicle.products if p.date == new_date and p.seat_type == old.seat_type), None)
    if new is None:
        raise ToolError(f"New date {new_date} does not have {old.seat_type} seats")
    if new.quantity < old.quantity:
        raise ToolError(f"Insufficient {old.seat_type} seats on {new_date}")
    back = next((p for p in vehicle.products if p.date == old.date and p.seat_type == old.seat_type), None)
    if back is not None:
        back.quantity += old.quantity
    new.quantity -= old.quantity
    diff = round((new.price - old.price) * old.quantity, 2)
    order.products = [OrderedProduct(product_id=new.product_id, price=new.price, quantity=old.quantity,
                                     date=new_date, seat_type=old.seat_type)]
    order.total_price = round(new.price * old.quantity, 2)
    order.update_time = db.time
    if diff > 0:
        order.status = "unpaid"
        return f"Modification successful, need to pay additional amount: {diff}, please pay as soon as possible"
    return f"Modification successful, price difference: {diff}, refunded"


@tool("write")
def modify_train_order(db: Database, order_id: str, user_id: str, new_date: str) -> str:
    """Move a paid train order to another date, same seat class. If the new date costs more the
    order becomes unpaid until the difference is paid (pay_train_order); less is refunded.

    Args:
        order_id: The order's id.
        user_id: The user's id.
        new_date: The new travel date, as yyyy-mm-dd.
    """
    return _redate(db, order_id, user_id, new_date, "train")


@tool("write")
def modify_flight_order(db: Database, order_id: str, user_id: str, new_date: str) -> str:
    """Move a paid flight order to another date, same seat class. If the new date costs more the
    order becomes unpaid until the difference is paid (pay_flight_order); less is refunded.

    Args:
        order_id: The order's id.
        user_id: The user's id.
        new_date: The new flight date, as yyyy-mm-dd.
    """
    return _redate(db, order_id, user_id, new_date, "flight")


def _cancel(db: Database, order_id: str, user_id: str, kind: str) -> str:
    db.check_user(user_id)
    order = travel_order(db, order_id, kind)
    if order.status == "cancelled":
        raise ToolError("Order is already in cancelled status")
    refund = order.total_price if order.status == "paid" else 0
    order.status, order.update_time = "cancelled", db.time
    return f"Cancellation successful, refund amount: {refund}"


@tool("write")
def cancel_hotel_order(db: Database, order_id: str, user_id: str) -> str:
    """Cancel a hotel order; a paid one is refunded in full.

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(db, order_id, user_id, "hotel")


@tool("write")
def cancel_attraction_order(db: Database, order_id: str, user_id: str) -> str:
    """Cancel an attraction ticket order; a paid one is refunded in full.

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(db, order_id, user_id, "attraction")


@tool("write")
def cancel_flight_order(db: Database, order_id: str, user_id: str) -> str:
    """Cancel a flight order; a paid one is refunded in full.

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(db, order_id, user_id, "flight")


@tool("write")
def cancel_train_order(db: Database, order_id: str, user_id: str) -> str:
    """Cancel a train order; a paid one is refunded in full.

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(db, order_id, user_id, "train")
