"""The twelve delivery tools: find stores and food, then place, pay, cancel and edit orders.

Behaviour, texts and argument handling are upstream VitaBench's (``domains/delivery/tools.py``,
class ``DeliveryTools``); see ``calling`` for the convention. Facts worth knowing, all
upstream's: an order may list products of any store; ordering replaces the catalogue entry of
each ordered product with the ordered line (product info then shows its count and spec, the
store's menu does not); totals are not rounded. What the releases differ by is read from
``self.rules``: the updated release checks ids first, answers a lookup that finds nothing with
``Error: ...`` (not an error), names the order in status answers, stamps ``update_time`` when
paying, cancelling or editing, and keeps a cancelled order's note.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sweepbench.benchmarks.vitabench.tools import general
from sweepbench.benchmarks.vitabench.tools.calling import found, inner, require, tool_of
from sweepbench.benchmarks.vitabench.tools.catalogues import Store, StoreProduct
from sweepbench.benchmarks.vitabench.tools.coerce import as_int, as_str
from sweepbench.benchmarks.vitabench.tools.general import is_time
from sweepbench.benchmarks.vitabench.tools.records import Location, Order, OrderStatus
from sweepbench.benchmarks.vitabench.tools.search import keyword_search
from sweepbench.benchmarks.vitabench.tools.state import TIME_FORMAT, ToolState

tool = tool_of("DeliveryTools")
ORDER_ID_PREFIX = "OT"


def _order(self: ToolState, order_id: Any = None) -> Any:
    """One delivery order by id, or (no id) every delivery order."""
    if order_id is None:
        return [o for o in self.orders.values() if o.order_type == "delivery"]
    if order_id not in self.orders:
        raise ValueError(f"Order {order_id} not found")
    order = self.orders[order_id]
    if order.order_type != "delivery":
        raise ValueError(f"Order {order_id} is not a delivery order")
    return order


def _store(self: ToolState, store_id: Any) -> Store:
    if store_id not in self.stores.keys():
        raise ValueError(f"Store {store_id} not found")
    return self.stores[store_id]


def _product(self: ToolState, product_id: Any) -> StoreProduct:
    if product_id not in self.products:
        raise ValueError(f"{product_id} not found")
    product = self.products[product_id]
    if not isinstance(product, StoreProduct):
        raise ValueError(f"{product_id} is not a delivery product")
    return product


def _stamp(self: ToolState, order: Order) -> None:
    """A write's mark on the order, in the releases that make it (``writes_update_time``)."""
    if self.rules.writes_update_time:
        order.update_time = self.now()


@tool("general")
def delivery_distance_to_time(self: ToolState, distance: float) -> float:
    """Delivery time in minutes for a distance in meters from the store to the customer.

    Args:
        distance: Distance in meters.
    """
    require(isinstance(distance, (float, int)),
            f"distance value type should be float or int, but get {type(distance)}")
    return round(25.00 + int(distance) * 0.006510, 0)


@tool("read")
def get_delivery_store_info(self: ToolState, store_id: str) -> str:
    """A store's details: rating, address and coordinates, tags, and its full menu.

    Args:
        store_id: The store's id.
    """
    if self.rules.named_answers:
        require(store_id, "Store ID cannot be empty")
    return repr(found(self, _store, store_id))


@tool("read")
def get_delivery_product_info(self: ToolState, product_id: str) -> str:
    """A product's details: name, store, price, tags and the specs one can choose.

    Args:
        product_id: The product's id.
    """
    if self.rules.named_answers:
        require(product_id, "Product ID cannot be empty")
    return repr(found(self, _product, product_id))


@tool("read")
def delivery_store_search_recommand(self: ToolState, keywords: list[str]) -> str:
    """Search delivery stores by keywords (dish, cuisine, store name, feature), best match first.

    Args:
        keywords: Words describing the store the user wants.
    """
    docs = {s.store_id: s.name + ",".join(s.tags) for s in self.stores.values()}
    return keyword_search(self, keywords, docs, domain="delivery", what="stores",
                          show=lambda store_id: str(_store(self, store_id)))


@tool("read")
def delivery_product_search_recommand(self: ToolState, keywords: list[str]) -> str:
    """Search food across all delivery stores by keywords, best match first.

    Args:
        keywords: Words describing the food the user wants.
    """
    docs = {p.product_id: f"{p.store_name} {p.name} {p.tags}"
            for p in self.products.values() if isinstance(p, StoreProduct)}
    return keyword_search(self, keywords, docs, domain="delivery", what="products",
                          show=lambda product_id: repr(_product(self, product_id)))


@tool("write")
def create_delivery_order(self: ToolState, user_id: str, store_id: str, product_ids: list[str],
                          product_cnts: list[int], address: str, dispatch_time: str,
                          attributes: list[str] | None = None, note: str | None = "") -> str:
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
    require(user_id, "User ID cannot be empty")
    require(user_id == self.user_id, "User ID does not match")
    require(store_id in self.stores, f"Store {store_id} not found")
    require(all([_product(self, pid) is not None for pid in product_ids]),
            f"products {product_ids} not found")
    require(address != "", f"Location {address} is empty")
    require(len(product_ids) == len(product_cnts) and all([cnt > 0 for cnt in product_cnts]),
            f"product_cnts {product_cnts} list is invalid")
    require(dispatch_time and is_time(dispatch_time),
            f"dispatch_time {dispatch_time} time format is invalid, yyyy-mm-dd HH:MM:SS required")
    dispatch = datetime.strptime(dispatch_time, TIME_FORMAT)
    require(dispatch >= datetime.strptime(self.now(), TIME_FORMAT),
            f"dispatch_time {dispatch_time} must be in the future")
    products = [_product(self, pid) for pid in product_ids]
    store = _store(self, store_id)
    longitude, latitude = inner(general.address_to_longitude_latitude, self, address)
    distance = general.longitude_latitude_to_distance(self, longitude, latitude, store.location.longitude,
                                              store.location.latitude)
    shipping_time = delivery_distance_to_time(self, distance)
    delivery_time = (dispatch + timedelta(minutes=shipping_time)).strftime(TIME_FORMAT)
    total = sum([p.price * cnt for p, cnt in zip(products, product_cnts)])
    specs = [""] * len(products)
    for i, spec in enumerate((attributes if attributes is not None else [])[:len(products)]):
        if spec:
            specs[i] = spec
    lines = [self.product(_ordered(p, cnt, spec)) for p, cnt, spec in zip(products, product_cnts, specs)]
    place = self.place(Location(address=address, longitude=longitude, latitude=latitude))
    note = as_str(note, "Order", "note", optional=True)
    order = Order(order_id=self.new_id(ORDER_ID_PREFIX), order_type="delivery", user_id=user_id,
                  store_id=store_id, location=place, dispatch_time=dispatch_time,
                  shipping_time=shipping_time, delivery_time=delivery_time, total_price=total,
                  create_time=self.now(), update_time=self.now(), note=note, products=lines,
                  status="unpaid")
    if order.order_id in self.orders:
        return "Order already exists"
    self.orders[order.order_id] = order
    return repr(order)


def _ordered(product: StoreProduct, count: Any, spec: Any) -> StoreProduct:
    """The ordered line: a copy of the catalogue entry with the count and the chosen spec."""
    quantity = as_int(count, "StoreProduct", "quantity", optional=True)
    if isinstance(spec, list):
        spec = ", ".join(spec)
    elif not isinstance(spec, str):
        raise ValueError(_spec_error(spec))
    return StoreProduct(product_id=product.product_id, name=product.name, store_id=product.store_id,
                        store_name=product.store_name, price=product.price,
                        quantity=quantity, attributes=spec, tags=product.tags)


def _spec_error(spec: Any) -> str:
    """pydantic's report for a spec that is neither text nor a list."""
    docs, kind = "https://errors.pydantic.dev/2.14/v/", type(spec).__name__
    return (f"2 validation errors for StoreProduct\nattributes.str\n  Input should be a valid string "
            f"[type=string_type, input_value={spec!r}, input_type={kind}]\n    For further "
            f"information visit {docs}string_type\nattributes.list[any]\n  Input should be a "
            f"valid list [type=list_type, input_value={spec!r}, input_type={kind}]\n    For "
            f"further information visit {docs}list_type")


@tool("write")
def pay_delivery_order(self: ToolState, order_id: str) -> str:
    """Pay an unpaid delivery order, once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    if self.rules.named_answers:
        require(order_id, "Order ID cannot be empty")
    order = found(self, _order, order_id)
    if order.status != "unpaid":
        if self.rules.named_answers:
            return f"Order {order_id} is not in `unpaid` status. Current status: {order.status}"
        return "Order is not in `unpaid` status."
    order.status = "paid"
    _stamp(self, order)
    return "Payment successful"


@tool("read")
def get_delivery_order_status(self: ToolState, order_id: str) -> str:
    """The current status of a delivery order.

    Args:
        order_id: The order's id.
    """
    if not self.rules.named_answers:
        return _order(self, order_id).status
    require(order_id, "Order ID cannot be empty")
    return f"Order {order_id} status: {found(self, _order, order_id).status}"


@tool("write")
def cancel_delivery_order(self: ToolState, order_id: str) -> str:
    """Cancel a delivery order (or its pending payment). An order already cancelled cannot be
    cancelled again.

    Args:
        order_id: The order's id.
    """
    if self.rules.named_answers:
        require(order_id, "Order ID cannot be empty")
    order = found(self, _order, order_id)
    require(order.status not in ["cancelled"], f"Order {order_id} is already cancelled")
    order.status = "cancelled"
    _stamp(self, order)
    return f"Order {order.order_id} has been cancelled."


@tool("write")
def modify_delivery_order(self: ToolState, order_id: str, note: str) -> str:
    """Replace the note of a delivery order; nothing else about an order can be changed.

    Args:
        order_id: The order's id.
        note: The new note.
    """
    if self.rules.named_answers:
        require(order_id, "Order ID cannot be empty")
        require(note is not None, "Note cannot be None (use empty string to clear note)")
    order = found(self, _order, order_id)
    if self.rules.cancelled_is_final and order.status in ["cancelled"]:
        return f"Cannot modify order {order_id} as it is already cancelled"
    order.note = note
    _stamp(self, order)
    return f"Order {order.order_id} has been modified."


@tool("read")
def search_delivery_orders(self: ToolState, user_id: str, status: OrderStatus | None = "unpaid") -> str:
    """List the user's delivery orders in one status (by default the unpaid ones).

    Args:
        user_id: The user's id.
        status: The status to list.
    """
    require(user_id, "User ID cannot be empty")
    require(user_id == self.user_id, "User ID does not match")
    found = [o for o in _order(self) if o.status == status and o.user_id == user_id]
    if not found:
        return "No delivery orders available"
    return "\n".join(str(o) for o in found)


@tool("read")
def get_delivery_order_detail(self: ToolState, order_id: str) -> str:
    """A delivery order in full: store, address, times, price, status and products.

    Args:
        order_id: The order's id.
    """
    require(order_id, "Order ID cannot be empty")
    return repr(found(self, _order, order_id))
