"""The records the tools keep and print: places, weather, orders, table bookings, reservations.

The model reads records as upstream VitaBench prints them: its classes' own ``__repr__`` and
``__str__`` formats (with their quirks: an order's short form ends in ``", "``, a booking's
long form has no closing parenthesis), Python's text for numbers and lists, and the raw JSON
objects an order from the task file carries as its products. These classes keep those
formats; what a record holds follows upstream's models field for field.
"""

from __future__ import annotations

from typing import Any, Literal

from msgspec import Struct

OrderStatus = Literal[
    "unpaid", "paid", "unconsumed", "consumed", "processed", "in-progress", "delivered", "cancelled",
]
OrderType = Literal["delivery", "instore", "hotel", "attraction", "flight", "train"]
InstoreStatus = Literal["unpaid", "paid", "unconsumed", "consumed", "cancelled"]

# The label an order prints before its seller's id.
SELLER_LABEL = {"delivery": "store_id", "instore": "shop_id", "hotel": "hotel_id",
                "attraction": "attraction_id", "flight": "flight_id", "train": "train_id"}


class Location(Struct):
    address: str
    longitude: float
    latitude: float

    def __repr__(self) -> str:
        return f"{self.address} longitude:{self.longitude},latitude:{self.latitude}"

    def __str__(self) -> str:  # the travel records print a place this way
        return f"address={self.address!r} longitude={self.longitude!r} latitude={self.latitude!r}"


class Weather(Struct):
    city: str
    category: str
    datetime: str
    temperature: tuple[float, float]
    humidity: float

    def __repr__(self) -> str:
        return (f"city: {self.city}, weather: {self.category}, datetime: {self.datetime}, "
                f"temperature: {self.temperature[0]}~{self.temperature[1]}, humidity: {self.humidity}")


class Order(Struct, kw_only=True):
    """An order of any domain; ``products`` are catalogue-like records for orders the tools
    made and the task file's raw objects for the others."""

    order_id: str
    order_type: OrderType
    user_id: str
    store_id: str
    note: str | None = ""
    location: Location | None = None
    dispatch_time: str | None = ""
    shipping_time: float | None = 0.0
    delivery_time: str | None = ""
    total_price: float = 0.0
    create_time: str = ""
    update_time: str = ""
    status: OrderStatus = "unpaid"
    products: list[Any] = []

    def __post_init__(self) -> None:
        if not self.update_time and self.create_time:
            self.update_time = self.create_time

    def __str__(self) -> str:  # list form
        return (f"Order(order_id:{self.order_id}, order_type:{self.order_type}, "
                f"user_id:{self.user_id}, {SELLER_LABEL[self.order_type]}:{self.store_id}, "
                f"total_price:{self.total_price}, create_time:{self.create_time}, "
                f"update_time:{self.update_time}, status:{self.status}, ")

    def __repr__(self) -> str:  # detail form
        head = (f"Order(order_id:{self.order_id}, order_type:{self.order_type}, "
                f"user_id:{self.user_id}, {SELLER_LABEL[self.order_type]}:{self.store_id}, ")
        if self.order_type == "delivery":
            head += (f"dispatch_time:{self.dispatch_time}, shipping_time:{self.shipping_time}, "
                     f"delivery_time:{self.delivery_time}, ")
        tail = f"note:{self.note}, " if self.order_type == "delivery" else ""
        return (f"{head}total_price:{self.total_price}, create_time:{self.create_time}, "
                f"update_time:{self.update_time}, {tail}status:{self.status}, "
                f"products:{self.products})")


class BookInfo(Struct, kw_only=True):
    """A table booking."""

    book_id: str
    shop_id: str
    book_time: str
    update_time: str
    customer_id: str
    customer_count: int
    book_price: float
    status: InstoreStatus

    def __repr__(self) -> str:
        return (f"BookInfo(book_id={self.book_id},shop_id={self.shop_id}, book_time={self.book_time}, "
                f"customer_id={self.customer_id}, customer_count={self.customer_count}, "
                f"book_price={self.book_price}, status={self.status}")


class ReservationInfo(Struct, kw_only=True):
    """A reserved service slot."""

    reservation_id: str
    shop_id: str
    reservation_time: str
    update_time: str
    customer_id: str
    customer_count: int
    status: InstoreStatus

    def __repr__(self) -> str:
        return (f"ReservationInfo(reservation_id={self.reservation_id},shop_id={self.shop_id}, "
                f"reservation_time={self.reservation_time}, customer_id={self.customer_id}, "
                f"customer_count={self.customer_count}, status={self.status}")
