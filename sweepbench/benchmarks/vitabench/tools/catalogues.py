"""What the sellers offer: delivery stores, in-store shops, hotels, attractions, flights and
trains, each with its products, printed as upstream VitaBench prints them.

A seller has a short form (``str``: searches and nearby lists) and a long form with its
products (``repr``: the info tools). Delivery and in-store sellers print their place with the
place's own form, travel sellers with its field list (upstream's mix, kept).
"""

from __future__ import annotations

from msgspec import Struct

from sweepbench.benchmarks.vitabench.tools.records import Location


def _lines(products: list) -> str:
    return "\n".join(repr(p) for p in products)


class StoreProduct(Struct, kw_only=True):
    """A dish on a delivery menu, or an ordered line (with its count and chosen spec)."""

    product_id: str = ""
    price: float = 0.0
    quantity: int | None = 0
    name: str
    store_id: str
    store_name: str
    attributes: str = ""
    tags: list[str] = []

    def __repr__(self) -> str:
        return (f"StoreProduct(store_name={self.store_name}, store_id={self.store_id}, "
                f"product_name={self.name}, product_id={self.product_id}, "
                f"attributes={self.attributes}, quantity={self.quantity}, price={self.price}, "
                f"tags={self.tags})")


class Store(Struct, kw_only=True):
    store_id: str = ""
    name: str
    score: float
    location: Location
    tags: list[str]
    products: list[StoreProduct]

    def __str__(self) -> str:
        return (f"Store(name={self.name}, store_id={self.store_id}, score={self.score}, "
                f"location={self.location!r}, tags={self.tags})")

    def __repr__(self) -> str:
        return f"{self}, products={_lines(self.products)}"


class ShopProduct(Struct, kw_only=True):
    """A package an in-store shop sells; ordering sets its ``quantity`` (as upstream)."""

    product_id: str = ""
    price: float = 0.0
    quantity: int | None = 0
    name: str
    shop_id: str
    tags: list[str]

    def __repr__(self) -> str:
        return (f"ShopProduct(shop_id={self.shop_id}, product_id={self.product_id}, "
                f"name={self.name}, price={self.price}, quantity={self.quantity}, tags={self.tags})")


class Shop(Struct, kw_only=True):
    shop_id: str
    shop_name: str
    score: float
    location: Location
    tags: list[str]
    enable_book: bool
    book_price: float
    enable_reservation: bool
    products: list[ShopProduct]

    def _fields(self) -> str:
        return (f"shop_name={self.shop_name}, shop_id={self.shop_id}, score={self.score}, "
                f"location={self.location!r}, tags={self.tags}, enable_book={self.enable_book}, "
                f"book_price={self.book_price}, enable_reservation={self.enable_reservation}")

    def __str__(self) -> str:
        return f"Shop({self._fields()})"

    def __repr__(self) -> str:
        return f"Shop({self._fields()}, products={_lines(self.products)})"


# ---- travel ------------------------------------------------------------------------------


class _Dated(Struct, kw_only=True):
    """A travel product: one room type, ticket type or seat class on one date; ``quantity`` is
    what is left (in an order: how many were bought)."""

    product_id: str = ""
    price: float = 0.0
    quantity: int | None = 0
    date: str


class HotelProduct(_Dated, kw_only=True):
    room_type: str

    def __repr__(self) -> str:
        return (f"HotelProduct(room_type={self.room_type}, date={self.date}, price={self.price}, "
                f"quantity={self.quantity}, room_id={self.product_id})")


class AttractionProduct(_Dated, kw_only=True):
    ticket_type: str

    def __repr__(self) -> str:
        return (f"AttractionProduct(ticket_type={self.ticket_type}, date={self.date}, "
                f"price={self.price}, quantity={self.quantity}, attraction_id={self.product_id})")


class FlightProduct(_Dated, kw_only=True):
    seat_type: str

    def __repr__(self) -> str:
        return (f"FlightProduct(seat_type={self.seat_type}, date={self.date}, price={self.price}, "
                f"quantity={self.quantity}, seat_id={self.product_id})")


class TrainProduct(FlightProduct, kw_only=True):
    def __repr__(self) -> str:
        return "Train" + super().__repr__()[len("Flight"):]


class Hotel(Struct, kw_only=True):
    hotel_id: str
    hotel_name: str
    score: float
    star_rating: int
    location: Location
    tags: list[str]
    products: list[HotelProduct]

    def _fields(self) -> str:
        return (f"hotel_id={self.hotel_id}, hotel_name={self.hotel_name}, score={self.score}, "
                f"star_rating={self.star_rating}, location={self.location}, tags={self.tags}")

    def __str__(self) -> str:
        return f"Hotel({self._fields()})"

    def __repr__(self) -> str:
        return f"Hotel({self._fields()}, products={_lines(self.products)})"


class Attraction(Struct, kw_only=True):
    attraction_id: str
    attraction_name: str
    location: Location
    description: str
    score: float
    opening_hours: str
    ticket_price: float
    products: list[AttractionProduct]

    def _fields(self) -> str:
        return (f"attraction_id={self.attraction_id}, attraction_name={self.attraction_name}, "
                f"location={self.location}, description={self.description}, score={self.score}, "
                f"opening_hours={self.opening_hours}, ")

    def __str__(self) -> str:
        return f"Attraction({self._fields()}"

    def __repr__(self) -> str:
        return (f"Attraction({self._fields()}ticket_price={self.ticket_price}, "
                f"products={_lines(self.products)})")


class Flight(Struct, kw_only=True):
    flight_id: str
    flight_number: str
    departure_city: str
    arrival_city: str
    departure_airport_location: Location
    arrival_airport_location: Location
    departure_time: str
    arrival_time: str
    tags: list[str]
    products: list[FlightProduct]

    def _fields(self) -> str:
        return (f"flight_id={self.flight_id}, flight_number={self.flight_number}, "
                f"departure_city={self.departure_city}, arrival_city={self.arrival_city}, "
                f"departure_airport_location={self.departure_airport_location}, "
                f"arrival_airport_location={self.arrival_airport_location}, "
                f"departure_time={self.departure_time}, arrival_time={self.arrival_time}, "
                f"tags={self.tags}")

    def __str__(self) -> str:
        return f"Flight({self._fields()})"

    def __repr__(self) -> str:
        return f"Flight({self._fields()}, products={_lines(self.products)})"


class Train(Struct, kw_only=True):
    train_id: str
    train_number: str
    departure_city: str
    arrival_city: str
    departure_station_location: Location
    arrival_station_location: Location
    departure_time: str
    arrival_time: str
    tags: list[str]
    products: list[TrainProduct]

    def _fields(self) -> str:
        return (f"train_id={self.train_id}, train_number={self.train_number}, "
                f"departure_city={self.departure_city}, arrival_city={self.arrival_city}, "
                f"departure_station_location={self.departure_station_location}, "
                f"arrival_station_location={self.arrival_station_location}, "
                f"departure_time={self.departure_time}, arrival_time={self.arrival_time}, "
                f"tags={self.tags}")

    def __str__(self) -> str:
        return f"Train({self._fields()})"

    def __repr__(self) -> str:
        return f"Train({self._fields()}, products={_lines(self.products)})"
