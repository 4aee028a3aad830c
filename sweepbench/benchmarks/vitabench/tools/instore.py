"""The sixteen in-store tools: find shops and packages, buy packages, book tables, reserve
service slots, and pay, change or cancel them.

Behaviour follows upstream VitaBench (``domains/instore/tools.py``) with three differences,
each because upstream's behaviour is a slip rather than a rule: a failed check is an error for
the model (never a half-done change), ``instore_modify_reservation`` keeps the party size when
``customer_count`` is 0 or left out (upstream set it to 0), and lookups see only the episode's
own database. Like upstream, a reservation does not require ``enable_reservation`` and package
stock is shown but not drawn down.
"""

from __future__ import annotations

from typing import Any

from sweepbench.benchmarks.vitabench.tools.common import OrderedProduct, rank
from sweepbench.benchmarks.vitabench.tools.db import Database, Order, is_time
from sweepbench.benchmarks.vitabench.tools.instore_model import (
    Book,
    Reservation,
    Shop,
    ShopProduct,
    ShopSummary,
)
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

ORDER_ID_PREFIX = "OI"  # upstream uses one prefix for in-store orders, bookings, reservations
SEARCH_LIMIT = 1000


def _shop(db: Database, shop_id: str) -> Shop:
    if shop_id not in db.shops:
        raise ToolError(f"Shop {shop_id} does not exist")
    return db.shops[shop_id]


def _time(value: str, what: str) -> str:
    if not value or not is_time(value):
        raise ToolError(f"{what} {value!r} is not in the format yyyy-mm-dd HH:MM:SS")
    return value


def _order(db: Database, order_id: str) -> Order:
    if not order_id:
        raise ToolError("Order ID cannot be empty")
    order = db.orders.get(order_id)
    if order is None:
        raise ToolError(f"Order {order_id} not found")
    if order.order_type != "instore":
        raise ToolError(f"Order {order_id} is not an instore order")
    return order


def _book(db: Database, book_id: str) -> Book:
    if not book_id:
        raise ToolError("Booking ID cannot be empty")
    if book_id not in db.books:
        raise ToolError(f"Booking {book_id} not found")
    return db.books[book_id]


def _reservation(db: Database, reservation_id: str) -> Reservation:
    if not reservation_id:
        raise ToolError("Reservation ID cannot be empty")
    if reservation_id not in db.reservations:
        raise ToolError(f"Reservation {reservation_id} not found")
    return db.reservations[reservation_id]


def rank_docs(query: str, docs: dict[str, str]) -> list[tuple[str, float]]:
    return rank(query, docs)[:SEARCH_LIMIT]


def _count(value: int, what: str, *, minimum: int = 1) -> int:
    if value < minimum:
        raise ToolError(f"{what} must be at least {minimum}, got {value}")
    return value


@tool("read")
def instore_shop_search_recommend(db: Database, keywords: list[str]) -> list[ShopSummary]:
    """Search in-store shops (restaurants, spas, gyms, ...) by keywords, best match first.
    Shows whether a shop takes table bookings (and their price) or service reservations.

    Args:
        keywords: Words describing the shop the user wants.
    """
    docs = {s.shop_id: f"{s.shop_name},{','.join(s.tags)}" for s in db.shops.values()}
    return [db.shops[sid].summary() for sid, _ in rank_docs("".join(keywords), docs)]


@tool("read")
def instore_product_search_recommend(db: Database, keywords: list[str]) -> list[ShopProduct]:
    """Search packages (set meals, vouchers, treatments) across all shops, best match first;
    each names its shop.

    Args:
        keywords: Words describing the package the user wants.
    """
    products = {p.product_id: p for s in db.shops.values() for p in s.products}
    docs = {pid: f"{p.name},{','.join(p.tags)}" for pid, p in products.items()}
    return [products[pid] for pid, _ in rank_docs("".join(keywords), docs)]


@tool("write")
def create_instore_product_order(db: Database, user_id: str, shop_id: str, product_id: str,
                                 quantity: int = 1) -> Order:
    """Buy a package of a shop, to be used in the shop. One package per order; the new order is
    unpaid: confirm with the user, then pay it.

    Args:
        user_id: The user's id.
        shop_id: The shop selling the package.
        product_id: The package to buy.
        quantity: How many.
    """
    db.check_user(user_id)
    shop = _shop(db, shop_id)
    product = next((p for p in shop.products if p.product_id == product_id), None)
    if product is None:
        raise ToolError(f"Product {product_id} is not sold by shop {shop_id}")
    _count(quantity, "quantity")
    order = Order(
        order_id=db.new_id(ORDER_ID_PREFIX), order_type="instore", user_id=user_id, store_id=shop_id,
        total_price=round(product.price * quantity, 2), create_time=db.time, update_time=db.time,
        status="unpaid",
        products=[OrderedProduct(product_id=product.product_id, price=product.price, quantity=quantity,
                                 name=product.name, store_id=shop_id, store_name=shop.shop_name,
                                 tags=product.tags)],
    )
    db.orders[order.order_id] = order
    return order


@tool("write")
def pay_instore_order(db: Database, order_id: str) -> str:
    """Pay an unpaid in-store order, once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    order = _order(db, order_id)
    if order.status != "unpaid":
        raise ToolError(f"Order {order_id} is not in `unpaid` status.")
    order.status, order.update_time = "paid", db.time
    return "Payment successful"


@tool("write")
def instore_cancel_order(db: Database, order_id: str) -> str:
    """Cancel an in-store order (or its pending payment); not one already cancelled.

    Args:
        order_id: The order's id.
    """
    order = _order(db, order_id)
    if order.status == "cancelled":
        raise ToolError(f"Order {order_id} is already cancelled.")
    order.status, order.update_time = "cancelled", db.time
    return f"Order {order_id} is cancelled."


@tool("write")
def instore_book(db: Database, user_id: str, shop_id: str, time: str, customer_count: int = 1) -> Book:
    """Book a table at a shop that takes table bookings. A booking with a fee is unpaid until
    paid (ask the user first); a free one is confirmed at once.

    Args:
        user_id: The user's id.
        shop_id: The shop.
        time: When, as yyyy-mm-dd HH:MM:SS.
        customer_count: How many people.
    """
    db.check_user(user_id)
    shop = _shop(db, shop_id)
    _count(customer_count, "customer_count")
    _time(time, "Booking time")
    if not shop.enable_book:
        raise ToolError(f"Shop {shop_id} does not take table bookings")
    book = Book(book_id=db.new_id(ORDER_ID_PREFIX), shop_id=shop_id, book_time=time,
                customer_id=user_id, customer_count=customer_count, book_price=shop.book_price,
                status="unpaid" if shop.book_price > 0 else "paid", update_time=db.time)
    db.books[book.book_id] = book
    return book


@tool("write")
def pay_instore_book(db: Database, book_id: str) -> str:
    """Pay the fee of an unpaid table booking, once the user has confirmed.

    Args:
        book_id: The booking's id.
    """
    book = _book(db, book_id)
    if book.status != "unpaid":
        raise ToolError(f"Booking {book_id} is not in `unpaid` status.")
    book.status, book.update_time = "paid", db.time
    return "Payment successful"


@tool("write")
def instore_cancel_book(db: Database, book_id: str) -> str:
    """Cancel a table booking; not one already cancelled.

    Args:
        book_id: The booking's id.
    """
    book = _book(db, book_id)
    if book.status == "cancelled":
        raise ToolError(f"Booking {book_id} is already cancelled.")
    book.status, book.update_time = "cancelled", db.time
    return f"Booking {book_id} is cancelled."


@tool("write")
def instore_reservation(db: Database, user_id: str, shop_id: str, time: str,
                        customer_count: int = 1) -> Reservation:
    """Reserve a service slot at a shop (a treatment, a class, a grooming); the user then just
    turns up. Reservations are free.

    Args:
        user_id: The user's id.
        shop_id: The shop.
        time: When, as yyyy-mm-dd HH:MM:SS.
        customer_count: How many people.
    """
    db.check_user(user_id)
    _shop(db, shop_id)
    _time(time, "Reservation time")
    _count(customer_count, "customer_count")
    reservation = Reservation(reservation_id=db.new_id(ORDER_ID_PREFIX), shop_id=shop_id,
                              reservation_time=time, customer_id=user_id,
                              customer_count=customer_count, status="unconsumed", update_time=db.time)
    db.reservations[reservation.reservation_id] = reservation
    return reservation


@tool("write")
def instore_modify_reservation(db: Database, reservation_id: str, time: str,
                               customer_count: int = 0) -> Reservation:
    """Move a reservation to another time and, if given, change its party size. Not possible
    once it is used or cancelled.

    Args:
        reservation_id: The reservation's id.
        time: The new time, as yyyy-mm-dd HH:MM:SS.
        customer_count: The new number of people; 0 keeps the current one.
    """
    reservation = _reservation(db, reservation_id)
    if reservation.status in ("consumed", "cancelled"):
        raise ToolError(f"Reservation {reservation_id} is already {reservation.status}.")
    _count(customer_count, "customer_count", minimum=0)
    _time(time, "Reservation time")
    reservation.reservation_time = time
    reservation.customer_count = customer_count or reservation.customer_count
    reservation.update_time = db.time
    return reservation


@tool("write")
def instore_cancel_reservation(db: Database, reservation_id: str) -> str:
    """Cancel a reservation; not one already cancelled.

    Args:
        reservation_id: The reservation's id.
    """
    reservation = _reservation(db, reservation_id)
    if reservation.status == "cancelled":
        raise ToolError(f"Reservation {reservation_id} is already cancelled.")
    reservation.status, reservation.update_time = "cancelled", db.time
    return f"Reservation {reservation_id} is cancelled."


def _mine(db: Database, user_id: str, records: list[Any], what: str) -> list[Any] | str:
    db.check_user(user_id)
    return records or f"User {user_id} has no {what} information."


@tool("read")
def get_instore_orders(db: Database, user_id: str) -> list[Order] | str:
    """All of the user's in-store orders.

    Args:
        user_id: The user's id.
    """
    return _mine(db, user_id, [o for o in db.orders.values()
                               if o.order_type == "instore" and o.user_id == user_id], "order")


@tool("read")
def get_instore_reservations(db: Database, user_id: str) -> list[Reservation] | str:
    """All of the user's service reservations.

    Args:
        user_id: The user's id.
    """
    return _mine(db, user_id, [r for r in db.reservations.values() if r.customer_id == user_id],
                 "reservation")


@tool("read")
def get_instore_books(db: Database, user_id: str) -> list[Book] | str:
    """All of the user's table bookings.

    Args:
        user_id: The user's id.
    """
    return _mine(db, user_id, [b for b in db.books.values() if b.customer_id == user_id], "book")


@tool("read")
def search_instore_book(db: Database, user_id: str, book_id: str | None = None) -> Book | list[Book] | str:
    """One table booking of the user by id, or all of them when no id is given.

    Args:
        user_id: The user's id.
        book_id: The booking's id; leave out for all.
    """
    if book_id is None:
        return get_instore_books(db, user_id)
    db.check_user(user_id)
    book = _book(db, book_id)
    if book.customer_id != user_id:
        raise ToolError(f"Booking {book_id} does not belong to user {user_id}.")
    return book


@tool("read")
def search_instore_reservation(db: Database, user_id: str,
                               reservation_id: str | None = None) -> Reservation | list[Reservation] | str:
    """One service reservation of the user by id, or all of them when no id is given.

    Args:
        user_id: The user's id.
        reservation_id: The reservation's id; leave out for all.
    """
    if reservation_id is None:
        return get_instore_reservations(db, user_id)
    db.check_user(user_id)
    reservation = _reservation(db, reservation_id)
    if reservation.customer_id != user_id:
        raise ToolError(f"Reservation {reservation_id} does not belong to user {user_id}.")
    return reservation
