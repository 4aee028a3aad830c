"""Online travel, part one (sixteen tools): look up and search hotels, attractions, flights and
trains, and buy a room night, tickets or seats, then pay.

Behaviour follows upstream VitaBench (``domains/ota/tools.py``). Buying draws the product's
stock down; every check runs before anything changes, so a refused purchase leaves stock and
orders as they were (upstream could create an empty hotel order for an unknown room). The
order-handling half is ``ota_orders``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sweepbench.benchmarks.vitabench.tools.common import (
    DATE_FORMAT,
    OrderedProduct,
    loosely_matches,
    rank,
)
from sweepbench.benchmarks.vitabench.tools.db import Database, Order
from sweepbench.benchmarks.vitabench.tools.ota_model import (
    Attraction,
    AttractionSummary,
    DatedProduct,
    Flight,
    FlightSummary,
    Hotel,
    HotelSummary,
    Train,
    TrainSummary,
)
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

ORDER_ID_PREFIX = "OO"
SEARCH_LIMIT = 100


def check_date(value: str, what: str = "date") -> str:
    try:
        datetime.strptime(value, DATE_FORMAT)
    except (ValueError, TypeError):
        raise ToolError(f"{what} {value!r} is not in the format yyyy-mm-dd") from None
    return value


def _get(table: dict[str, Any], key: str, what: str) -> Any:
    if not key:
        raise ToolError(f"{what} ID cannot be empty")
    if key not in table:
        raise ToolError(f"{what.lower()} {key} not found")
    return table[key]


@tool("read")
def get_ota_hotel_info(db: Database, hotel_id: str) -> Hotel:
    """A hotel in full: rating, stars, address, tags and its rooms (type, date, price, rooms left).

    Args:
        hotel_id: The hotel's id.
    """
    return _get(db.hotels, hotel_id, "Hotel")


@tool("read")
def get_ota_attraction_info(db: Database, attraction_id: str) -> Attraction:
    """An attraction in full: address, description, rating, opening hours and its tickets
    (type, date, price, tickets left).

    Args:
        attraction_id: The attraction's id.
    """
    return _get(db.attractions, attraction_id, "Attraction")


@tool("read")
def get_ota_flight_info(db: Database, flight_id: str) -> Flight:
    """A flight in full: number, cities, airports, times, tags and its seats (type, date,
    price, seats left).

    Args:
        flight_id: The flight's id.
    """
    return _get(db.flights, flight_id, "Flight")


@tool("read")
def get_ota_train_info(db: Database, train_id: str) -> Train:
    """A train in full: number, cities, stations, times, tags and its seats (type, date, price,
    seats left).

    Args:
        train_id: The train's id.
    """
    return _get(db.trains, train_id, "Train")


@tool("read")
def hotel_search_recommand(db: Database, city_name: str,
                           key_words: list[str] | None = None) -> list[HotelSummary] | str:
    """Hotels in a city, best match to the keywords first (rooms: see get_ota_hotel_info).

    Args:
        city_name: The city.
        key_words: Words describing the hotel wanted (name, brand, facilities).
    """
    found = {h.hotel_id: f"{h.hotel_name}{','.join(h.tags)}" for h in db.hotels.values()
             if loosely_matches(city_name, h.location.address)}
    if not found:
        return "No hotels found matching the criteria. Please check if the city name is correct."
    return [db.hotels[i].summary() for i, _ in rank("".join(key_words or []), found)[:SEARCH_LIMIT]]


@tool("read")
def attractions_search_recommend(db: Database, city_name: str,
                                 key_words: list[str]) -> list[AttractionSummary] | str:
    """Attractions in a city, best match to the keywords first (tickets: see
    get_ota_attraction_info).

    Args:
        city_name: The city.
        key_words: Words describing the attraction wanted.
    """
    found = {a.attraction_id: f"{a.attraction_name},{a.description},{a.location.address}"
             for a in db.attractions.values() if loosely_matches(city_name, a.location.address)}
    if not found:
        return "No attractions found matching the criteria. Please check if the city name is correct."
    return [db.attractions[i].summary() for i, _ in rank("".join(key_words), found)[:SEARCH_LIMIT]]


@tool("read")
def flight_search_recommend(db: Database, departure: str, destination: str) -> list[FlightSummary] | str:
    """Flights from one city to another (seats and dates: see get_ota_flight_info).

    Args:
        departure: The departure city.
        destination: The arrival city.
    """
    if not departure or not destination:
        raise ToolError("Departure and destination cities cannot be empty")
    found = [f.summary() for f in db.flights.values()
             if loosely_matches(departure, f.departure_city) and loosely_matches(destination, f.arrival_city)]
    return found or "No flights found matching the criteria"


@tool("read")
def train_ticket_search(db: Database, departure: str, destination: str, date: str) -> list[TrainSummary] | str:
    """Trains from one city to another that run on a date (seats: see get_ota_train_info).

    Args:
        departure: The departure city.
        destination: The arrival city.
        date: The travel date, as yyyy-mm-dd.
    """
    if not departure or not destination:
        raise ToolError("Departure and destination cities cannot be empty")
    check_date(date)
    found = [t.summary() for t in db.trains.values()
             if any(p.date == date for p in t.products)
             and loosely_matches(departure, t.departure_city) and loosely_matches(destination, t.arrival_city)]
    return found or "No trains found matching the criteria"


def _create(db: Database, kind: str, store_id: str, product: DatedProduct, quantity: int,
            type_field: str) -> Order:
    """Draw ``quantity`` of ``product`` from stock into a new unpaid order."""
    if quantity <= 0:
        raise ToolError(f"Booking quantity must be greater than 0, got {quantity}")
    if product.quantity < quantity:
        raise ToolError(f"Insufficient inventory: {product.quantity} left on {product.date}")
    product.quantity -= quantity
    line = OrderedProduct(product_id=product.product_id, price=product.price, quantity=quantity,
                          date=product.date, **{type_field: getattr(product, type_field)})
    order = Order(order_id=db.new_id(ORDER_ID_PREFIX), order_type=kind, user_id=db.user_id,
                  store_id=store_id, total_price=round(product.price * quantity, 2),
                  create_time=db.time, update_time=db.time, status="unpaid", products=[line])
    db.orders[order.order_id] = order
    return order


def _product(products: list[Any], product_id: str, date: str | None, what: str) -> Any:
    for p in products:
        if p.product_id == product_id and (date is None or p.date == date):
            return p
    when = f" on {date}" if date else ""
    raise ToolError(f"The {what} has no product {product_id}{when}")


@tool("write")
def create_hotel_order(db: Database, hotel_id: str, room_id: str, user_id: str) -> Order:
    """Book one room night (a room product is one room type on one date). The order is unpaid:
    confirm with the user, then pay it.

    Args:
        hotel_id: The hotel's id.
        room_id: The room product's id, from get_ota_hotel_info.
        user_id: The user's id.
    """
    db.check_user(user_id)
    hotel = _get(db.hotels, hotel_id, "Hotel")
    room = _product(hotel.products, room_id, None, "hotel")
    if room.quantity <= 0:
        raise ToolError("No available rooms at the moment")
    return _create(db, "hotel", hotel_id, room, 1, "room_type")


@tool("write")
def create_attraction_order(db: Database, attraction_id: str, ticket_id: str, user_id: str,
                            date: str, quantity: int) -> Order:
    """Buy tickets of one type for one date. The order is unpaid: confirm, then pay it.

    Args:
        attraction_id: The attraction's id.
        ticket_id: The ticket product's id, from get_ota_attraction_info.
        user_id: The user's id.
        date: The visit date, as yyyy-mm-dd.
        quantity: How many tickets.
    """
    db.check_user(user_id)
    attraction = _get(db.attractions, attraction_id, "Attraction")
    ticket = _product(attraction.products, ticket_id, check_date(date), "attraction")
    return _create(db, "attraction", attraction_id, ticket, quantity, "ticket_type")


@tool("write")
def create_flight_order(db: Database, flight_id: str, seat_id: str, user_id: str, date: str,
                        quantity: int) -> Order:
    """Buy seats of one class on a flight on one date. The order is unpaid: confirm, then pay it.

    Args:
        flight_id: The flight's id.
        seat_id: The seat product's id, from get_ota_flight_info.
        user_id: The user's id.
        date: The flight date, as yyyy-mm-dd.
        quantity: How many seats.
    """
    db.check_user(user_id)
    flight = _get(db.flights, flight_id, "Flight")
    seat = _product(flight.products, seat_id, check_date(date), "flight")
    return _create(db, "flight", flight_id, seat, quantity, "seat_type")


@tool("write")
def create_train_order(db: Database, train_id: str, seat_id: str, user_id: str, date: str,
                       quantity: int) -> Order:
    """Buy seats of one class on a train on one date. The order is unpaid: confirm, then pay it.

    Args:
        train_id: The train's id.
        seat_id: The seat product's id, from get_ota_train_info.
        user_id: The user's id.
        date: The travel date, as yyyy-mm-dd.
        quantity: How many seats.
    """
    db.check_user(user_id)
    train = _get(db.trains, train_id, "Train")
    seat = _product(train.products, seat_id, check_date(date), "train")
    return _create(db, "train", train_id, seat, quantity, "seat_type")


def travel_order(db: Database, order_id: str, kind: str) -> Order:
    if not order_id:
        raise ToolError("Order ID cannot be empty")
    order = db.orders.get(order_id)
    if order is None:
        raise ToolError(f"Order {order_id} not found")
    if order.order_type != kind:
        raise ToolError(f"Order {order_id} is not a {kind} order")
    return order


def _pay(db: Database, order_id: str, kind: str) -> str:
    order = travel_order(db, order_id, kind)
    if order.status != "unpaid":
        raise ToolError("Order status must be unpaid")
    order.status, order.update_time = "paid", db.time
    return "Payment successful"


@tool("write")
def pay_hotel_order(db: Database, order_id: str) -> str:
    """Pay an unpaid hotel order, once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(db, order_id, "hotel")


@tool("write")
def pay_attraction_order(db: Database, order_id: str) -> str:
    """Pay an unpaid attraction ticket order, once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(db, order_id, "attraction")


@tool("write")
def pay_flight_order(db: Database, order_id: str) -> str:
    """Pay an unpaid flight order (a new one, or one a date change left owing), once the user
    has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(db, order_id, "flight")


@tool("write")
def pay_train_order(db: Database, order_id: str) -> str:
    """Pay an unpaid train order (a new one, or one a date change left owing), once the user
    has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(db, order_id, "train")
