"""The twelve delivery tools: find stores and food, then place, pay, cancel and edit orders.

Behaviour follows upstream VitaBench (``domains/delivery/tools.py``). Every write tool checks
all of its arguments before it changes anything, so a failed call leaves the database as it
was. Like upstream, an order may list any product the episode knows, not only the ordering
store's own menu; the state check catches orders that mix stores.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sweepbench.benchmarks.vitabench.tools.db import (
    TIME_FORMAT,
    Database,
    Location,
    Order,
    OrderedProduct,
    OrderStatus,
    OrderSummary,
    Store,
    StoreProduct,
    StoreSummary,
    distance_m,
    rank,
)
from sweepbench.benchmarks.vitabench.tools.general import finite
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

ORDER_ID_PREFIX = "OT"
MAX_NOTE = 1000  # characters; a note is a line for the store, not a document
SEARCH_LIMIT = 100


def _store(db: Database, store_id: str) -> Store:
    if store_id not in db.stores:
        raise ToolError(f"Store {store_id} not found")
    return db.stores[store_id]


def _products(db: Database) -> dict[str, StoreProduct]:
    return {p.product_id: p for s in db.stores.values() for p in s.products}


def _order(db: Database, order_id: str) -> Order:
    if not order_id:
        raise ToolError("Order ID cannot be empty")
    order = db.orders.get(order_id)
    if order is None:
        raise ToolError(f"Order {order_id} not found")
    if order.order_type != "delivery":
        raise ToolError(f"Order {order_id} is not a delivery order")
    return order


def _check_note(note: str) -> None:
    if len(note) > MAX_NOTE:
        raise ToolError(f"note is too long ({len(note)} characters; at most {MAX_NOTE})")


@tool("general")
def delivery_distance_to_time(db: Database, distance: float) -> float:
    """Delivery time in minutes for a distance in meters from the store to the customer.

    Args:
        distance: Distance in meters.
    """
    finite(distance)
    return round(25.0 + int(distance) * 0.00651, 0)


@tool("read")
def get_delivery_store_info(db: Database, store_id: str) -> Store:
    """A store's details: rating, address and coordinates, tags, and its full menu.

    Args:
        store_id: The store's id.
    """
    return _store(db, store_id)


@tool("read")
def get_delivery_product_info(db: Database, product_id: str) -> StoreProduct:
    """A product's details: name, store, price, tags and the specs one can choose.

    Args:
        product_id: The product's id.
    """
    product = _products(db).get(product_id)
    if product is None:
        raise ToolError(f"{product_id} not found")
    return product


@tool("read")
def delivery_store_search_recommand(db: Database, keywords: list[str]) -> list[StoreSummary]:
    """Search delivery stores by keywords (dish, cuisine, store name, feature), best match first.

    Args:
        keywords: Words describing the store the user wants.
    """
    docs = {s.store_id: f"{s.name},{','.join(s.tags)}" for s in db.stores.values()}
    return [db.stores[sid].summary() for sid, _ in rank("".join(keywords), docs)[:SEARCH_LIMIT]]


@tool("read")
def delivery_product_search_recommand(db: Database, keywords: list[str]) -> list[StoreProduct]:
    """Search food across all delivery stores by keywords, best match first.

    Args:
        keywords: Words describing the food the user wants.
    """
    products = _products(db)
    docs = {pid: f"{p.store_name} {p.name} {' '.join(p.tags)}" for pid, p in products.items()}
    return [products[pid] for pid, _ in rank("".join(keywords), docs)[:SEARCH_LIMIT]]


@tool("write")
def create_delivery_order(db: Database, user_id: str, store_id: str, product_ids: list[str],
                          product_cnts: list[int], address: str, dispatch_time: str,
                          attributes: list[str] | None = None, note: str | None = "") -> Order:
    """Place a delivery order from one store for one or more products. The new order is unpaid;
    confirm with the user before paying it.

    Args:
        user_id: The user's id.
        store_id: The store to order from.
        product_ids: The products to order.
        product_cnts: How many of each product, in the order of product_ids.
        address: Where to deliver.
        dispatch_time: When the rider sets off from the store, as yyyy-mm-dd HH:MM:SS; not
            earlier than now.
        attributes: The chosen spec of each product (e.g. spice level, sugar), in the order of
            product_ids; "" where there is none.
        note: A note for the store, such as dietary restrictions; not for timing requests.
    """
    db.check_user(user_id)
    store = _store(db, store_id)
    menu = _products(db)
    if not product_ids:
        raise ToolError("product_ids is empty: order at least one product")
    missing = [pid for pid in product_ids if pid not in menu]
    if missing:
        raise ToolError(f"products {missing} not found")
    if len(product_ids) != len(product_cnts) or any(n <= 0 for n in product_cnts):
        raise ToolError(f"product_cnts {product_cnts} must give a positive count for each product")
    _check_note(note or "")
    if not address.strip():
        raise ToolError("address is empty")
    try:
        dispatch = datetime.strptime(dispatch_time, TIME_FORMAT)
    except ValueError:
        raise ToolError(f"dispatch_time {dispatch_time} is not in the format yyyy-mm-dd HH:MM:SS") from None
    if dispatch < db.now:
        raise ToolError(f"dispatch_time {dispatch_time} must not be earlier than now ({db.time})")
    place = db.geocode(address)

    shipping = delivery_distance_to_time(db, distance_m(place.longitude, place.latitude,
                                                        store.location.longitude, store.location.latitude))
    specs = list(attributes or [])[:len(product_ids)]
    specs += [""] * (len(product_ids) - len(specs))
    lines = [
        OrderedProduct(product_id=p.product_id, price=p.price, quantity=n, attributes=spec,
                       name=p.name, store_id=p.store_id, store_name=p.store_name, tags=p.tags)
        for p, n, spec in zip((menu[pid] for pid in product_ids), product_cnts, specs)
    ]
    order = Order(
        order_id=db.new_id(ORDER_ID_PREFIX), order_type="delivery", user_id=user_id,
        store_id=store_id, note=note or "",
        location=Location(address, place.longitude, place.latitude),
        dispatch_time=dispatch_time, shipping_time=shipping,
        delivery_time=(dispatch + timedelta(minutes=shipping)).strftime(TIME_FORMAT),
        total_price=round(sum(line.price * line.quantity for line in lines), 2),
        create_time=db.time, update_time=db.time, status="unpaid", products=lines,
    )
    db.orders[order.order_id] = order
    return order


@tool("write")
def pay_delivery_order(db: Database, order_id: str) -> str:
    """Pay an unpaid delivery order, once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    order = _order(db, order_id)
    if order.status != "unpaid":
        raise ToolError("Order is not in `unpaid` status.")
    order.status, order.update_time = "paid", db.time
    return "Payment successful"


@tool("read")
def get_delivery_order_status(db: Database, order_id: str) -> str:
    """The current status of a delivery order.

    Args:
        order_id: The order's id.
    """
    return _order(db, order_id).status


@tool("write")
def cancel_delivery_order(db: Database, order_id: str) -> str:
    """Cancel a delivery order (or its pending payment). An order already cancelled cannot be
    cancelled again.

    Args:
        order_id: The order's id.
    """
    order = _order(db, order_id)
    if order.status == "cancelled":
        raise ToolError(f"Order {order_id} is already cancelled")
    order.status, order.update_time = "cancelled", db.time
    return f"Order {order_id} has been cancelled."


@tool("write")
def modify_delivery_order(db: Database, order_id: str, note: str) -> str:
    """Replace the note of a delivery order; nothing else about an order can be changed.

    Args:
        order_id: The order's id.
        note: The new note.
    """
    order = _order(db, order_id)
    _check_note(note)
    order.note, order.update_time = note, db.time
    return f"Order {order_id} has been modified."


@tool("read")
def search_delivery_orders(db: Database, user_id: str,
                           status: OrderStatus = "unpaid") -> list[OrderSummary] | str:
    """List the user's delivery orders in one status (by default the unpaid ones).

    Args:
        user_id: The user's id.
        status: The status to list.
    """
    db.check_user(user_id)
    found = [OrderSummary.of(o) for o in db.orders.values()
             if o.order_type == "delivery" and o.status == status and o.user_id == user_id]
    return found or "No delivery orders available"


@tool("read")
def get_delivery_order_detail(db: Database, order_id: str) -> Order:
    """A delivery order in full: store, address, times, price, status and products.

    Args:
        order_id: The order's id.
    """
    return _order(db, order_id)
