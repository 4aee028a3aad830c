"""The sixteen in-store tools: find shops and packages, buy packages, book tables, reserve
service slots, and pay, change or cancel them.

Behaviour, texts and argument handling are upstream VitaBench's (``domains/instore/tools.py``,
class ``InStoreTools``); see ``calling`` for the convention. Facts worth knowing, all
upstream's: buying a package sets the catalogue package's ``quantity`` to the quantity bought,
and the order holds that very package, so a later order of it changes what earlier orders
show; a reservation does not need ``enable_reservation``; changing a reservation without a
party size sets it to 0. The updated release (``self.rules.named_answers``) checks every
argument before looking anything up, in its own order, wants integer party sizes and
quantities, answers a lookup that finds nothing with ``Error: ...`` (not an error), and names
the shop and product, or the current status, in its refusals.
"""

from __future__ import annotations

from typing import Any

from sweepbench.benchmarks.vitabench.tools.calling import found, require, tool_of
from sweepbench.benchmarks.vitabench.tools.catalogues import Shop, ShopProduct
from sweepbench.benchmarks.vitabench.tools.coerce import as_int
from sweepbench.benchmarks.vitabench.tools.general import is_time
from sweepbench.benchmarks.vitabench.tools.records import (
    BookInfo,
    Order,
    ReservationInfo,
)
from sweepbench.benchmarks.vitabench.tools.search import keyword_search
from sweepbench.benchmarks.vitabench.tools.state import ToolState

tool = tool_of("InStoreTools")
ID_PREFIX = "OI"  # upstream's prefix for in-store orders, bookings and reservations
_TIME_TEXT = "format is incorrect, correct format is %Y-%m-%d %H:%M:%S"
_AT_LEAST_0 = "Number of customers for reservation must be greater than or equal to 0"


def _check_user(self: ToolState, user_id: Any) -> None:
    require(user_id, "User ID cannot be empty")
    require(user_id == self.user_id, "User ID does not match")


def _shop(self: ToolState, shop_id: Any) -> Shop:
    if shop_id not in self.shops:
        raise ValueError(f"Shop {shop_id} does not exist")
    return self.shops[shop_id]


def _package(self: ToolState, product_id: Any) -> ShopProduct:
    if product_id not in self.products:
        raise ValueError(f"Product {product_id} does not exist")
    product = self.products[product_id]
    if not isinstance(product, ShopProduct):
        raise ValueError(f"Product {product_id} is not an instore scenario product")
    return product


def _order(self: ToolState, order_id: Any = None) -> Any:
    if order_id is None:
        return [o for o in self.orders.values() if o.order_type == "instore"]
    if order_id not in self.orders:
        raise ValueError(f"Order {order_id} not found")
    order = self.orders[order_id]
    if order.order_type != "instore":
        raise ValueError(f"Order {order_id} is not an instore order")
    return order


def _book(self: ToolState, book_id: Any = None) -> Any:
    if book_id is None:
        return list(self.books.values())
    if book_id not in self.books:
        raise ValueError(f"BookInfo {book_id} not found")
    return self.books[book_id]


def _reservation(self: ToolState, reservation_id: Any = None) -> Any:
    if reservation_id is None:
        return list(self.reservations.values())
    if reservation_id not in self.reservations:
        raise ValueError(f"ReservationInfo {reservation_id} not found")
    return self.reservations[reservation_id]


def _slot_shop(self: ToolState, shop_id: Any, time: Any, customer_count: Any, what: str) -> Shop:
    """The updated release's checks of a new table booking or reservation (``what``), in its
    order, then the shop (``Error: ...`` when there is none)."""
    require(shop_id, "Shop ID cannot be empty")
    require(time, f"{what} time cannot be empty")
    require(isinstance(customer_count, int), "Customer count must be an integer")
    require(customer_count > 0, f"Number of customers for {what.lower()} must be greater than 0")
    require(is_time(time), f"{what} time {_TIME_TEXT}")
    return found(self, _shop, shop_id)


def _now_is(self: ToolState, status: str) -> str:
    """What the updated release adds to a refusal: the record's current status."""
    return f" Current status: {status}" if self.rules.named_answers else ""


def _listing(records: list[Any], user_id: str, what: str) -> str:
    if not records:
        return f"User {user_id} has no {what} information."
    return "\n".join(repr(r) for r in records)


@tool("read")
def instore_shop_search_recommend(self: ToolState, keywords: list[str]) -> str:
    """Search in-store shops (restaurants, spas, gyms, ...) by keywords, best match first.
    Shows whether a shop takes table bookings (and their price) or service reservations.

    Args:
        keywords: Words describing the shop the user wants.
    """
    docs = {s.shop_id: s.shop_name + "," + ",".join(s.tags) for s in self.shops.values()}
    return keyword_search(self, keywords, docs, domain="instore", what="shops",
                          show=lambda shop_id: str(_shop(self, shop_id)))


@tool("read")
def instore_product_search_recommend(self: ToolState, keywords: list[str]) -> str:
    """Search packages (set meals, vouchers, treatments) across all shops, best match first;
    each names its shop.

    Args:
        keywords: Words describing the package the user wants.
    """
    docs = {key: p.name + "," + ",".join(p.tags)
            for key, p in self.products.items() if isinstance(p, ShopProduct)}
    return keyword_search(self, keywords, docs, domain="instore", what="products",
                          show=lambda product_id: repr(_package(self, product_id)))


@tool("write")
def create_instore_product_order(self: ToolState, user_id: str, shop_id: str, product_id: str,
                                 quantity: int = 1) -> str:
    """Buy a package of a shop, to be used in the shop. One package per order; the new order is
    unpaid: confirm with the user, then pay it.

    Args:
        user_id: The user's id.
        shop_id: The shop selling the package.
        product_id: The package to buy.
        quantity: How many.
    """
    _check_user(self, user_id)
    if self.rules.named_answers:
        require(shop_id, "Shop ID cannot be empty")
        require(product_id, "Product ID cannot be empty")
        require(isinstance(quantity, int), "Quantity must be an integer")
        require(quantity > 0, "Quantity must be greater than 0")
        if product_id not in [p.product_id for p in found(self, _shop, shop_id).products]:
            return f"Product {product_id} does not exist in shop {shop_id}"
    else:
        require(shop_id in self.shops, "Shop does not exist")
        require(product_id in [p.product_id for p in _shop(self, shop_id).products], "Product does not exist")
        require(quantity > 0, "Quantity must be greater than 0")
    product = found(self, _package, product_id)
    product.quantity = quantity
    order = Order(order_id=self.new_id(ID_PREFIX), order_type="instore", user_id=user_id,
                  store_id=shop_id, total_price=quantity * product.price, create_time=self.now(),
                  update_time=self.now(), status="unpaid", products=[product])
    if order.order_id in self.orders:
        return "Order already exists"
    self.orders[order.order_id] = order
    return repr(order)


@tool("write")
def pay_instore_order(self: ToolState, order_id: str) -> str:
    """Pay an unpaid in-store order, once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    require(order_id, "Order ID cannot be empty")
    order = found(self, _order, order_id)
    if order.status != "unpaid":
        return f"Order {order_id} is not in `unpaid` status.{_now_is(self, order.status)}"
    order.status, order.update_time = "paid", self.now()
    return "Payment successful"


@tool("write")
def instore_cancel_order(self: ToolState, order_id: str) -> str:
    """Cancel an in-store order (or its pending payment); not one already cancelled.

    Args:
        order_id: The order's id.
    """
    require(order_id, "Order ID cannot be empty")
    order = found(self, _order, order_id)
    if order.status in ["cancelled"]:
        return f"Order {order.order_id} is already cancelled."
    order.status, order.update_time = "cancelled", self.now()
    return f"Order {order.order_id} is cancelled."


@tool("write")
def instore_book(self: ToolState, user_id: str, shop_id: str, time: str, customer_count: int = 1) -> str:
    """Book a table at a shop that takes table bookings. A booking with a fee is unpaid until
    paid (ask the user first); a free one is confirmed at once.

    Args:
        user_id: The user's id.
        shop_id: The shop.
        time: When, as yyyy-mm-dd HH:MM:SS.
        customer_count: How many people.
    """
    _check_user(self, user_id)
    if self.rules.named_answers:
        shop = _slot_shop(self, shop_id, time, customer_count, "Table booking")
        if not shop.enable_book:
            return f"Shop {shop_id} does not support table booking"
    else:
        require(shop_id in self.shops, "Shop does not exist")
        require(customer_count > 0, "Number of customers for table booking must be greater than 0")
        require(time, "Table booking time cannot be empty")
        require(is_time(time), f"Table booking time {_TIME_TEXT}")
        shop = self.shops[shop_id]
        require(shop.enable_book, "Shop does not support table booking")
    book = BookInfo(book_id=self.new_id(ID_PREFIX), shop_id=shop_id, book_time=time,
                    customer_count=as_int(customer_count, "BookInfo", "customer_count"),
                    book_price=shop.book_price, customer_id=user_id,
                    status="unpaid" if shop.book_price > 0 else "paid", update_time=self.now())
    if book.book_id in self.books:
        return "BookInfo already exists"
    self.books[book.book_id] = book
    return repr(book)


@tool("write")
def pay_instore_book(self: ToolState, book_id: str) -> str:
    """Pay the fee of an unpaid table booking, once the user has confirmed.

    Args:
        book_id: The booking's id.
    """
    require(book_id, "Booking ID cannot be empty")
    book = found(self, _book, book_id)
    if book.status != "unpaid":
        return f"BookInfo {book.book_id} is not in `unpaid` status.{_now_is(self, book.status)}"
    book.status, book.update_time = "paid", self.now()
    return "Payment successful"


@tool("write")
def instore_cancel_book(self: ToolState, book_id: str) -> str:
    """Cancel a table booking; not one already cancelled.

    Args:
        book_id: The booking's id.
    """
    require(book_id, "Booking ID cannot be empty")
    book = found(self, _book, book_id)
    if book.status in ["cancelled"]:
        return f"BookInfo {book.book_id} is already cancelled."
    book.status, book.update_time = "cancelled", self.now()
    return f"BookInfo {book.book_id} is cancelled."


@tool("write")
def instore_reservation(self: ToolState, user_id: str, shop_id: str, time: str,
                        customer_count: int = 1) -> str:
    """Reserve a service slot at a shop (a treatment, a class, a grooming); the user then just
    turns up. Reservations are free.

    Args:
        user_id: The user's id.
        shop_id: The shop.
        time: When, as yyyy-mm-dd HH:MM:SS.
        customer_count: How many people.
    """
    _check_user(self, user_id)
    if self.rules.named_answers:
        _slot_shop(self, shop_id, time, customer_count, "Reservation")
    else:
        require(shop_id in self.shops, "Shop does not exist")
        require(is_time(time), f"Reservation time {_TIME_TEXT}")
        require(customer_count > 0, "Number of customers for reservation must be greater than 0")
    reservation = ReservationInfo(
        reservation_id=self.new_id(ID_PREFIX), shop_id=shop_id, reservation_time=time,
        customer_id=user_id, customer_count=as_int(customer_count, "ReservationInfo", "customer_count"),
        status="unconsumed", update_time=self.now())
    if reservation.reservation_id in self.reservations:
        return "ReservationInfo already exists"
    self.reservations[reservation.reservation_id] = reservation
    return repr(reservation)


@tool("write")
def instore_modify_reservation(self: ToolState, reservation_id: str, time: str,
                               customer_count: int = 0) -> str:
    """Move a reservation to another time and set its party size. Not possible once it is used
    or cancelled.

    Args:
        reservation_id: The reservation's id.
        time: The new time, as yyyy-mm-dd HH:MM:SS.
        customer_count: The number of people (give it: left out, it becomes 0).
    """
    require(reservation_id, "Reservation ID cannot be empty")
    if self.rules.named_answers:  # the new slot is checked before the reservation is found
        require(time, "Reservation time cannot be empty")
        require(isinstance(customer_count, int), "Customer count must be an integer")
        require(customer_count >= 0, _AT_LEAST_0)
        require(is_time(time), f"Reservation time {_TIME_TEXT}")
    reservation = found(self, _reservation, reservation_id)
    if reservation.status in ["consumed", "cancelled"]:
        return f"ReservationInfo {reservation.reservation_id} is already {reservation.status}."
    if not self.rules.named_answers:
        require(customer_count >= 0, _AT_LEAST_0)
        require(time, "Reservation time cannot be empty")
        require(is_time(time), f"Reservation time {_TIME_TEXT}")
    reservation.reservation_time = time
    reservation.customer_count = customer_count
    reservation.update_time = self.now()
    return repr(reservation)


@tool("write")
def instore_cancel_reservation(self: ToolState, reservation_id: str) -> str:
    """Cancel a reservation; not one already cancelled.

    Args:
        reservation_id: The reservation's id.
    """
    require(reservation_id, "Reservation ID cannot be empty")
    reservation = found(self, _reservation, reservation_id)
    if reservation.status in ["cancelled"]:
        return f"ReservationInfo {reservation.reservation_id} is already cancelled."
    reservation.status, reservation.update_time = "cancelled", self.now()
    return f"ReservationInfo {reservation.reservation_id} is cancelled."


@tool("read")
def get_instore_orders(self: ToolState, user_id: str) -> str:
    """All of the user's in-store orders.

    Args:
        user_id: The user's id.
    """
    _check_user(self, user_id)
    return _listing([o for o in _order(self) if o.user_id == user_id], user_id, "order")


@tool("read")
def get_instore_reservations(self: ToolState, user_id: str) -> str:
    """All of the user's service reservations.

    Args:
        user_id: The user's id.
    """
    _check_user(self, user_id)
    return _listing([r for r in _reservation(self) if r.customer_id == user_id], user_id, "reservation")


@tool("read")
def get_instore_books(self: ToolState, user_id: str) -> str:
    """All of the user's table bookings.

    Args:
        user_id: The user's id.
    """
    _check_user(self, user_id)
    return _listing([b for b in _book(self) if b.customer_id == user_id], user_id, "book")


@tool("read")
def search_instore_book(self: ToolState, user_id: str, book_id: str | None = None) -> str:
    """One table booking of the user by id, or all of them when no id is given.

    Args:
        user_id: The user's id.
        book_id: The booking's id; leave out for all.
    """
    _check_user(self, user_id)
    if book_id is None:
        return _listing([b for b in _book(self) if b.customer_id == user_id], user_id, "book")
    book = _book(self, book_id)
    if book.customer_id != user_id:
        return f"BookInfo {book_id} is not belong to user {user_id}."
    return repr(book)


@tool("read")
def search_instore_reservation(self: ToolState, user_id: str, reservation_id: str | None = None) -> str:
    """One service reservation of the user by id, or all of them when no id is given.

    Args:
        user_id: The user's id.
        reservation_id: The reservation's id; leave out for all.
    """
    _check_user(self, user_id)
    if reservation_id is None:
        return _listing([r for r in self.reservations.values() if r.customer_id == user_id],
                        user_id, "reservation")
    reservation = _reservation(self, reservation_id)
    if reservation.customer_id != user_id:
        return f"ReservationInfo {reservation_id} is not belong to user {user_id}."
    return repr(reservation)
