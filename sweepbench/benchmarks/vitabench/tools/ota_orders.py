"""Online travel, part two (fourteen tools): find, read, re-date and cancel travel orders.

Behaviour, texts and argument handling are upstream VitaBench's (``domains/ota/tools.py``,
class ``OTATools``); see ``calling`` for the convention. Facts worth knowing, all upstream's:
only a paid flight or train order of one seat line moves to another date, its seats go back
to the old date's stock and come from the new date's, and a dearer date leaves it unpaid;
cancelling refunds a paid order in full and does not restock. In the November release a
search with nothing to show answers with empty text (the hotel search raises when the user
has no hotel order at all); the updated one (``self.rules.named_answers``) says so (``No hotel
orders found for user U on date D with status S``), answers an unknown order with ``Error:
...``, and names the order, its owner and its status in refusals, which it makes as answers.
"""

from __future__ import annotations

from typing import Any, Literal

from sweepbench.benchmarks.vitabench.tools.calling import found, require, tool_of
from sweepbench.benchmarks.vitabench.tools.catalogues import FlightProduct, TrainProduct
from sweepbench.benchmarks.vitabench.tools.general import is_time
from sweepbench.benchmarks.vitabench.tools.ota import (
    ARTICLE,
    DATE_TEXT,
    check_user,
    seller,
    travel_order,
)
from sweepbench.benchmarks.vitabench.tools.state import ToolState

tool = tool_of("OTATools")
TravelStatus = Literal["unpaid", "paid", "cancelled"]


def _search(self: ToolState, kind: str, user_id: Any, date: Any, status: Any) -> str:
    check_user(self, user_id)
    if (not self.rules.named_answers and kind == "hotel"
            and not any(o.user_id == user_id for o in travel_order(self, scene="hotel"))):
        raise ValueError("User does not exist or has no order records")
    if date:
        require(is_time(date, "%Y-%m-%d"), DATE_TEXT)
    hits = []
    for order in travel_order(self, scene=kind):
        chosen = order if order.user_id == user_id else None
        if status and order.status != status:
            chosen = None
        if date and not (chosen is not None and any(getattr(p, "date", None) == date
                                                    for p in chosen.products)):
            chosen = None  # products from the task file are plain objects: they never match
        if chosen is not None:
            hits.append(chosen)
    if not hits and self.rules.named_answers:
        return (f"No {kind} orders found for user {user_id}" + (f" on date {date}" if date else "")
                + (f" with status {status}" if status else ""))
    return "\n".join(str(o) for o in hits)


@tool("read")
def search_hotel_order(self: ToolState, user_id: str, date: str | None = None,
                       status: TravelStatus | None = "paid") -> str:
    """The user's hotel orders, optionally only those for a date and in a status (paid unless
    another status, or null for all, is given).

    Args:
        user_id: The user's id.
        date: Only orders with a room night on this date (yyyy-mm-dd).
        status: Only orders in this status.
    """
    return _search(self, "hotel", user_id, date, status)


@tool("read")
def search_attraction_order(self: ToolState, user_id: str, date: str | None = None,
                            status: TravelStatus | None = "paid") -> str:
    """The user's attraction ticket orders, optionally only those for a date and in a status
    (paid unless another status, or null for all, is given).

    Args:
        user_id: The user's id.
        date: Only orders for this visit date (yyyy-mm-dd).
        status: Only orders in this status.
    """
    return _search(self, "attraction", user_id, date, status)


@tool("read")
def search_flight_order(self: ToolState, user_id: str, date: str | None = None,
                        status: TravelStatus | None = "paid") -> str:
    """The user's flight orders, optionally only those for a date and in a status (paid unless
    another status, or null for all, is given).

    Args:
        user_id: The user's id.
        date: Only orders flying on this date (yyyy-mm-dd).
        status: Only orders in this status.
    """
    return _search(self, "flight", user_id, date, status)


@tool("read")
def search_train_order(self: ToolState, user_id: str, date: str | None = None,
                       status: TravelStatus | None = "paid") -> str:
    """The user's train orders, optionally only those for a date and in a status (paid unless
    another status, or null for all, is given).

    Args:
        user_id: The user's id.
        date: Only orders travelling on this date (yyyy-mm-dd).
        status: Only orders in this status.
    """
    return _search(self, "train", user_id, date, status)


def _detail(self: ToolState, order_id: Any, kind: str) -> str:
    require(order_id, "Order ID cannot be empty")
    order = found(self, travel_order, order_id)
    if self.rules.named_answers:
        require(order.order_type == kind, f"Order {order_id} is not {ARTICLE[kind]} order")
    else:
        require(order.order_type == kind, f"Order type is not {ARTICLE[kind]} order")
    return repr(order)


@tool("read")
def get_hotel_order_detail(self: ToolState, order_id: str) -> str:
    """A hotel order in full: hotel, room, date, price and status.

    Args:
        order_id: The order's id.
    """
    return _detail(self, order_id, "hotel")


@tool("read")
def get_attraction_order_detail(self: ToolState, order_id: str) -> str:
    """An attraction ticket order in full: attraction, tickets, date, price and status.

    Args:
        order_id: The order's id.
    """
    return _detail(self, order_id, "attraction")


@tool("read")
def get_flight_order_detail(self: ToolState, order_id: str) -> str:
    """A flight order in full: flight, seats, date, price and status.

    Args:
        order_id: The order's id.
    """
    return _detail(self, order_id, "flight")


@tool("read")
def get_train_order_detail(self: ToolState, order_id: str) -> str:
    """A train order in full: train, seats, date, price and status.

    Args:
        order_id: The order's id.
    """
    return _detail(self, order_id, "train")


def _field(product: Any, name: str) -> Any:
    return product.get(name) if isinstance(product, dict) else getattr(product, name)


def _movable(self: ToolState, order_id: Any, user_id: Any, kind: str) -> Any:
    """The updated release's checks of the order to move, after its arguments'."""
    order = found(self, travel_order, order_id)
    require(order.order_type == kind, f"Order {order_id} is not {ARTICLE[kind]} order")
    require(order.user_id == user_id, f"Order {order_id} does not belong to user {user_id}")
    require(order.status == "paid", f"Only paid orders can be modified. Current status: {order.status}")
    return order


def _redate(self: ToolState, order: Any, new_date: Any, kind: str) -> str:
    """Move a checked order to ``new_date`` (the checks both tools share, then the move)."""
    named = self.rules.named_answers
    require(len(order.products) == 1, f"Only single {kind} ticket order modification is supported")
    old = order.products[0]
    seat_type, quantity = _field(old, "seat_type"), _field(old, "quantity")
    if named:
        vehicle = found(self, seller, kind, order.store_id)
    else:
        vehicle = (self.flights if kind == "flight" else self.trains)[order.store_id]
    new = next((p for p in vehicle.products if p.date == new_date and p.seat_type == seat_type), None)
    require(new is not None, f"New date {new_date} does not have {seat_type} type seats")
    short = f"Insufficient {seat_type} seat inventory for new date {new_date}"
    require(new.quantity >= quantity,
            f"{short}. Available: {new.quantity}, Required: {quantity}" if named else short)
    for product in vehicle.products:
        if product.date == _field(old, "date") and product.seat_type == seat_type:
            product.quantity += quantity
            break
    new.quantity -= quantity
    new_total = new.price * quantity
    diff = new_total - _field(old, "price") * quantity
    if diff > 0:
        order.status = "unpaid"
    cls = FlightProduct if kind == "flight" else TrainProduct
    order.products = [self.product(cls(product_id=new.product_id, price=new.price, date=new_date,
                                       seat_type=seat_type, quantity=quantity))]
    order.total_price = new_total
    order.update_time = self.now()
    if named and kind == "train":  # the updated release reworded only the train's answers
        if diff > 0:
            return f"Modification successful, need to pay additional amount: {diff}."
        return f"Modification successful, price difference: {diff}, refunded."
    if diff > 0:
        return f"Modification successful, need to pay additional amount: {diff}, please pay as soon as possible"
    return f"Modification successful, price difference: {diff}, refunded"


@tool("write")
def modify_train_order(self: ToolState, order_id: str, user_id: str, new_date: str) -> str:
    """Move a paid train order to another date, same seat class. If the new date costs more the
    order becomes unpaid until the difference is paid (pay_train_order); less is refunded.

    Args:
        order_id: The order's id.
        user_id: The user's id.
        new_date: The new travel date, as yyyy-mm-dd.
    """
    require(order_id, "Order ID cannot be empty")
    require(user_id, "User ID cannot be empty")
    require(new_date, "New departure date cannot be empty")
    require(user_id == self.user_id, "User ID does not match")
    require(is_time(new_date, "%Y-%m-%d"), DATE_TEXT)
    if self.rules.named_answers:
        return _redate(self, _movable(self, order_id, user_id, "train"), new_date, "train")
    require(travel_order(self, order_id=order_id), "Order does not exist")
    order = travel_order(self, order_id=order_id)
    require(order.order_type == "train", "Order type is not a train order")
    require(order.user_id == user_id, f"Order {order_id} does not belong to user {user_id}")
    require(order.status == "paid", f"Only paid orders can be modified, current status: {order.status}")
    return _redate(self, order, new_date, "train")


@tool("write")
def modify_flight_order(self: ToolState, order_id: str, user_id: str, new_date: str) -> str:
    """Move a paid flight order to another date, same seat class. If the new date costs more the
    order becomes unpaid until the difference is paid (pay_flight_order); less is refunded.

    Args:
        order_id: The order's id.
        user_id: The user's id.
        new_date: The new flight date, as yyyy-mm-dd.
    """
    require(order_id, "Order ID cannot be empty")
    require(user_id, "User ID cannot be empty")
    require(new_date, "New departure date cannot be empty")
    require(is_time(new_date, "%Y-%m-%d"), DATE_TEXT)
    require(user_id == self.user_id, "User ID does not match")
    if self.rules.named_answers:
        return _redate(self, _movable(self, order_id, user_id, "flight"), new_date, "flight")
    order = travel_order(self, order_id=order_id)
    require(order.order_type == "flight", "Order type is not a flight order")
    require(order.user_id == user_id, f"User {user_id} does not have permission to modify this order")
    require(order.status == "paid", "Only paid orders can be modified")
    return _redate(self, order, new_date, "flight")


def _cancel(self: ToolState, order_id: Any, user_id: Any, kind: str) -> str:
    require(order_id, "Order ID cannot be empty")
    check_user(self, user_id)
    order = found(self, travel_order, order_id)
    if self.rules.named_answers:
        require(order.order_type == kind, f"Order {order_id} is not {ARTICLE[kind]} order")
        require(order.user_id == user_id, f"Order {order_id} does not belong to user {user_id}")
        require(order.status not in ["cancelled"], f"Order {order_id} is already cancelled")
    else:
        require(order.order_type == kind, f"Order type is not {ARTICLE[kind]} order")
        require(order.status not in ["cancelled"], "Order is already in cancelled status")
    refund = order.total_price if order.status == "paid" else 0
    order.status, order.update_time = "cancelled", self.now()
    return f"Cancellation successful, refund amount: {refund}"


@tool("write")
def cancel_hotel_order(self: ToolState, order_id: str, user_id: str) -> str:
    """Cancel a hotel order; a paid one is refunded in full.

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(self, order_id, user_id, "hotel")


@tool("write")
def cancel_attraction_order(self: ToolState, order_id: str, user_id: str) -> str:
    """Cancel an attraction ticket order; a paid one is refunded in full.

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(self, order_id, user_id, "attraction")


@tool("write")
def cancel_flight_order(self: ToolState, order_id: str, user_id: str) -> str:
    """Cancel a flight order; a paid one is refunded in full.

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(self, order_id, user_id, "flight")


@tool("write")
def cancel_train_order(self: ToolState, order_id: str, user_id: str) -> str:
    """Cancel a train order; a paid one is refunded in full.

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(self, order_id, user_id, "train")
