"""The in-store tables of the typed task view: shops with their packages, table bookings, service reservations."""

from __future__ import annotations

from typing import Literal

from msgspec import Struct

from sweepbench.benchmarks.vitabench.tools.common import Location

InstoreStatus = Literal["unpaid", "paid", "unconsumed", "consumed", "cancelled"]


class ShopProduct(Struct):
    """A package a shop sells; ``quantity`` is its stock, shown but not enforced (as upstream)."""

    product_id: str
    name: str
    price: float
    shop_id: str = ""
    tags: list[str] = []
    quantity: int = 0


class Shop(Struct):
    shop_id: str
    shop_name: str
    score: float
    location: Location
    tags: list[str] = []
    enable_book: bool = False  # takes table bookings (``instore_book``)
    book_price: float = 0.0  # what a table booking costs; 0 means it is paid on creation
    enable_reservation: bool = False
    category: str = ""
    products: list[ShopProduct] = []


class Book(Struct):
    """A table booking at a shop."""

    book_id: str
    shop_id: str
    book_time: str
    customer_id: str
    customer_count: int
    book_price: float = 0.0
    status: InstoreStatus = "unpaid"
    update_time: str = ""


class Reservation(Struct):
    """A reserved service slot at a shop (a massage, a class, a grooming)."""

    reservation_id: str
    shop_id: str
    reservation_time: str
    customer_id: str
    customer_count: int
    status: InstoreStatus = "unconsumed"
    update_time: str = ""
