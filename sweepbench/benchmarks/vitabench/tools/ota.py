"""Online travel, part one (sixteen tools): look up and search hotels, attractions, flights and
trains, and buy a room night, tickets or seats, then pay.

Behaviour, texts and argument handling are upstream VitaBench's (``domains/ota/tools.py``,
class ``OTATools``); see ``calling`` for the convention. Facts worth knowing, all upstream's:
buying draws the product's stock down; a hotel order for a room the hotel does not have is
still created, empty and free; a lookup of an unknown hotel (attraction, ...) answers with an
"Error: ..." text that does not count as an error; the November release's pay tools pay an
order of any kind. The updated release (``self.rules.named_answers``) checks more arguments
first (non-empty ids and dates, integer quantities, text cities and keywords), answers every
lookup that finds nothing with ``Error: ...``, names the seller, product, date, stock and
status in its refusals, and a search's failures as ``Error searching hotels: ...``. The
order-handling half is ``ota_orders``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sweepbench.benchmarks.vitabench.tools.calling import found, require, tool_of
from sweepbench.benchmarks.vitabench.tools.catalogues import (
    AttractionProduct,
    FlightProduct,
    HotelProduct,
    TrainProduct,
)
from sweepbench.benchmarks.vitabench.tools.coerce import as_int
from sweepbench.benchmarks.vitabench.tools.fuzzy import fuzzy_match, rerank
from sweepbench.benchmarks.vitabench.tools.general import is_time
from sweepbench.benchmarks.vitabench.tools.records import Order
from sweepbench.benchmarks.vitabench.tools.state import ToolState

tool = tool_of("OTATools")
ID_PREFIX = "OO"
TRAVEL = ("hotel", "attraction", "flight", "train")
_PRODUCT = {"attraction": AttractionProduct, "flight": FlightProduct, "train": TrainProduct}
ARTICLE = {"hotel": "a hotel", "attraction": "an attraction", "flight": "a flight", "train": "a train"}
DATE_TEXT = "Date format is incorrect, correct format is %Y-%m-%d"


def check_user(self: ToolState, user_id: Any) -> None:
    require(user_id, "User ID cannot be empty")
    require(user_id == self.user_id, "User ID does not match")


def seller(self: ToolState, kind: str, key: Any = None) -> Any:
    """One hotel (attraction, flight, train) by id, or (no id) all of them."""
    table = getattr(self, f"{kind}s")
    if key is None:
        return list(table.values())
    if key not in table:
        raise ValueError(f"{kind} {key} not found")
    return table[key]


def travel_order(self: ToolState, order_id: Any = None, scene: str | None = None) -> Any:
    """Upstream's order lookup: the orders of one kind, one order by id, or every travel order."""
    if scene:
        return [o for o in self.orders.values() if o.order_type == scene]
    if order_id:
        if order_id not in self.orders:
            raise ValueError(f"Order {order_id} not found")
        return self.orders[order_id]
    return [o for o in self.orders.values() if o.order_type in TRAVEL]


def add_order(self: ToolState, order: Order) -> str:
    if order.order_id in self.orders:
        return "Order already exists"
    self.orders[order.order_id] = order
    return repr(order)


def _searching(self: ToolState, what: str, search: Callable[[], str]) -> str:
    """``search()``. The updated release answers whatever goes wrong in a travel search once its
    arguments are checked (a seller filed under a key other than its id, its own empty-query
    check) as ``Error searching <what>: <why>``, not an error; the November release lets it
    leave the tool."""
    if not self.rules.named_answers:
        return search()
    try:
        return search()
    except Exception as exc:  # noqa: BLE001 (upstream's own catch-all, kept for parity)
        return f"Error searching {what}: {exc}"


def _ranked(self: ToolState, kind: str, key_words: Any, docs: dict[str, str]) -> str:
    """The sellers of ``docs`` best matching the keywords, short forms one a line."""
    query = "".join(key_words or [])
    if self.rules.named_answers:
        require(query and query.strip(), "Keywords cannot be empty")
    keys = [key for key, _, _ in rerank(query, docs, dedupe=self.rules.dedupe_search)]
    return "\n".join(str(seller(self, kind, key)) for key in keys[:self.rules.search_top_k["ota"]])


def _check_city(self: ToolState, city_name: Any) -> None:
    """The updated release wants a city name, as text."""
    if self.rules.named_answers:
        require(city_name, "City name cannot be empty")
        require(isinstance(city_name, str), "City name must be a string")


def _no_sellers(self: ToolState, kind: str) -> str:
    """The answer when no seller is in the city (the November release adds a hint)."""
    text = f"No {kind}s found matching the criteria."
    if self.rules.named_answers:
        return text
    return text + " Please check if the city name is correct and try again."


def _info(self: ToolState, kind: str, key: Any) -> str:
    require(key, f"{kind.capitalize()} ID cannot be empty")
    try:
        found = seller(self, kind, key)
    except ValueError as exc:
        return f"Error: {exc}"
    return f"{kind.capitalize()} Info:\n{found!r}"


@tool("read")
def get_ota_hotel_info(self: ToolState, hotel_id: str) -> str:
    """A hotel in full: rating, stars, address, tags and its rooms (type, date, price, rooms left).

    Args:
        hotel_id: The hotel's id.
    """
    return _info(self, "hotel", hotel_id)


@tool("read")
def get_ota_attraction_info(self: ToolState, attraction_id: str) -> str:
    """An attraction in full: address, description, rating, opening hours and its tickets
    (type, date, price, tickets left).

    Args:
        attraction_id: The attraction's id.
    """
    return _info(self, "attraction", attraction_id)


@tool("read")
def get_ota_flight_info(self: ToolState, flight_id: str) -> str:
    """A flight in full: number, cities, airports, times, tags and its seats (type, date,
    price, seats left).

    Args:
        flight_id: The flight's id.
    """
    return _info(self, "flight", flight_id)


@tool("read")
def get_ota_train_info(self: ToolState, train_id: str) -> str:
    """A train in full: number, cities, stations, times, tags and its seats (type, date, price,
    seats left).

    Args:
        train_id: The train's id.
    """
    return _info(self, "train", train_id)


@tool("read")
def hotel_search_recommand(self: ToolState, city_name: str, key_words: list[str] | None = None) -> str:
    """Hotels in a city, best match to the keywords first (rooms: see get_ota_hotel_info).

    Args:
        city_name: The city.
        key_words: Words describing the hotel wanted (name, brand, facilities).
    """
    _check_city(self, city_name)
    if self.rules.named_answers and key_words is not None:
        _check_key_words(key_words)

    def search() -> str:
        hotels = [h for h in seller(self, "hotel") if fuzzy_match(city_name, h.location.address)]
        if not hotels:
            return _no_sellers(self, "hotel")
        docs = {h.hotel_id: self.hotels[h.hotel_id].hotel_name + ",".join(self.hotels[h.hotel_id].tags)
                for h in hotels}
        return _ranked(self, "hotel", key_words, docs)

    return _searching(self, "hotels", search)


def _check_key_words(key_words: Any) -> None:
    require(isinstance(key_words, list), "Key words must be a list")
    require(all(isinstance(kw, str) and kw.strip() for kw in key_words),
            "All key words must be non-empty strings")


@tool("read")
def attractions_search_recommend(self: ToolState, city_name: str, key_words: list[str]) -> str:
    """Attractions in a city, best match to the keywords first (tickets: see
    get_ota_attraction_info).

    Args:
        city_name: The city.
        key_words: Words describing the attraction wanted.
    """
    _check_city(self, city_name)
    if self.rules.named_answers:
        require(key_words, "Key words cannot be empty")
        _check_key_words(key_words)

    def search() -> str:
        sights = [a for a in seller(self, "attraction") if fuzzy_match(city_name, a.location.address)]
        if not sights:
            return _no_sellers(self, "attraction")
        docs = {}
        for a in sights:
            entry = self.attractions[a.attraction_id]
            docs[a.attraction_id] = f"{entry.attraction_name},{entry.description},{entry.location.address}"
        return _ranked(self, "attraction", key_words, docs)

    return _searching(self, "attractions", search)


@tool("read")
def flight_search_recommend(self: ToolState, departure: str, destination: str) -> str:
    """Flights from one city to another (seats and dates: see get_ota_flight_info).

    Args:
        departure: The departure city.
        destination: The arrival city.
    """
    require(departure, "Departure city cannot be empty")
    require(destination, "Destination city cannot be empty")
    if self.rules.named_answers:
        require(isinstance(departure, str), "Departure city must be a string")
        require(isinstance(destination, str), "Destination city must be a string")

    def search() -> str:
        flights = [f for f in seller(self, "flight")
                   if fuzzy_match(departure, f.departure_city) and fuzzy_match(destination, f.arrival_city)]
        if not flights:
            if self.rules.named_answers:
                return ("No flights found matching the criteria. Please check if the departure and "
                        "destination cities are correct.")
            return "No flights found matching the criteria"
        return "\n".join(str(f) for f in flights)

    return _searching(self, "flights", search)


@tool("read")
def train_ticket_search(self: ToolState, departure: str, destination: str, date: str) -> str:
    """Trains from one city to another that run on a date (seats: see get_ota_train_info).

    Args:
        departure: The departure city.
        destination: The arrival city.
        date: The travel date, as yyyy-mm-dd.
    """
    require(departure, "Departure city cannot be empty")
    require(destination, "Destination city cannot be empty")
    require(date, "Departure date cannot be empty")
    require(is_time(date, "%Y-%m-%d"), "Date format is incorrect, correct format is %Y-%m-%d")
    found = []
    for train in seller(self, "train"):
        for product in train.products:  # upstream lists a train once per matching product
            if (product.date == date and fuzzy_match(departure, train.departure_city)
                    and fuzzy_match(destination, train.arrival_city)):
                found.append(train)
    if not found:
        return "No trains found matching the criteria"
    return "\n".join(str(t) for t in found)


@tool("write")
def create_hotel_order(self: ToolState, hotel_id: str, room_id: str, user_id: str) -> str:
    """Book one room night (a room product is one room type on one date). The order is unpaid:
    confirm with the user, then pay it.

    Args:
        hotel_id: The hotel's id.
        room_id: The room product's id, from get_ota_hotel_info.
        user_id: The user's id.
    """
    named = self.rules.named_answers
    require(hotel_id, "Hotel ID cannot be empty")
    if named:
        require(room_id, "Room ID cannot be empty")
    check_user(self, user_id)
    hotel = found(self, seller, "hotel", hotel_id)
    rooms = []
    for product in hotel.products:
        if product.product_id == room_id:
            if product.quantity <= 0:
                if named:
                    return f"No available rooms at the moment for room {room_id}"
                return "No available rooms at the moment"
            product.quantity = product.quantity - 1
            rooms.append(self.product(HotelProduct(product_id=product.product_id, price=product.price,
                                                   date=product.date, quantity=1,
                                                   room_type=product.room_type)))
            break
    if named and not rooms:
        return f"Room {room_id} not found in hotel {hotel_id}"
    return add_order(self, Order(
        order_id=self.new_id(ID_PREFIX), order_type="hotel", user_id=user_id, store_id=hotel_id,
        total_price=float(sum([room.price for room in rooms])), update_time=self.now(),
        create_time=self.now(), status="unpaid", products=rooms))


def _buy(self: ToolState, kind: str, seller_id: Any, product_id: Any, user_id: Any, date: Any,
         quantity: Any, *, item: str, short: str) -> str:
    """Upstream's attraction, flight and train purchase (``item``: Ticket or Seat)."""
    named = self.rules.named_answers
    require(seller_id, f"{kind.capitalize()} ID cannot be empty")
    require(product_id, f"{item} ID cannot be empty")
    require(user_id, "User ID cannot be empty")
    if named:
        require(date, "Date cannot be empty")
        require(isinstance(quantity, int), "Quantity must be an integer")
    require(quantity > 0, "Booking quantity must be greater than 0")
    if named:
        require(is_time(date, "%Y-%m-%d"), DATE_TEXT)
    require(user_id == self.user_id, "User ID does not match")
    target = next((p for p in found(self, seller, kind, seller_id).products
                   if p.date == date and p.product_id == product_id), None)
    if target is None:
        if named:
            return f"The {kind} {seller_id} does not have {item.lower()} {product_id} on date {date}"
        return f"The {kind} does not have the specified {item.lower()} on the specified date"
    if target.quantity < quantity:
        if named:
            return (f"Insufficient {short} inventory for the specified date {date}. "
                    f"Available: {target.quantity}, Requested: {quantity}")
        return f"Insufficient {short} inventory for the specified date"
    target.quantity = target.quantity - quantity
    cls = _PRODUCT[kind]
    line = self.product(cls(product_id=target.product_id, price=target.price, date=date,
                            quantity=as_int(quantity, cls.__name__, "quantity", optional=True),
                            **{f: getattr(target, f) for f in ("ticket_type", "seat_type")
                               if hasattr(target, f)}))
    return add_order(self, Order(
        order_id=self.new_id(ID_PREFIX), order_type=kind, user_id=user_id, store_id=seller_id,
        total_price=float(sum([p.price * p.quantity for p in [line]])), update_time=self.now(),
        create_time=self.now(), status="unpaid", products=[line]))


@tool("write")
def create_attraction_order(self: ToolState, attraction_id: str, ticket_id: str, user_id: str,
                            date: str, quantity: int) -> str:
    """Buy tickets of one type for one date. The order is unpaid: confirm, then pay it.

    Args:
        attraction_id: The attraction's id.
        ticket_id: The ticket product's id, from get_ota_attraction_info.
        user_id: The user's id.
        date: The visit date, as yyyy-mm-dd.
        quantity: How many tickets.
    """
    return _buy(self, "attraction", attraction_id, ticket_id, user_id, date, quantity,
                item="Ticket", short="ticket")


@tool("write")
def create_flight_order(self: ToolState, flight_id: str, seat_id: str, user_id: str, date: str,
                        quantity: int) -> str:
    """Buy seats of one class on a flight on one date. The order is unpaid: confirm, then pay it.

    Args:
        flight_id: The flight's id.
        seat_id: The seat product's id, from get_ota_flight_info.
        user_id: The user's id.
        date: The flight date, as yyyy-mm-dd.
        quantity: How many seats.
    """
    return _buy(self, "flight", flight_id, seat_id, user_id, date, quantity, item="Seat", short="seat")


@tool("write")
def create_train_order(self: ToolState, train_id: str, seat_id: str, user_id: str, date: str,
                       quantity: int) -> str:
    """Buy seats of one class on a train on one date. The order is unpaid: confirm, then pay it.

    Args:
        train_id: The train's id.
        seat_id: The seat product's id, from get_ota_train_info.
        user_id: The user's id.
        date: The travel date, as yyyy-mm-dd.
        quantity: How many seats.
    """
    return _buy(self, "train", train_id, seat_id, user_id, date, quantity, item="Seat", short="seat")


def _pay(self: ToolState, order_id: Any, kind: str) -> str:
    require(order_id, "Order ID cannot be empty")
    order = found(self, travel_order, order_id)
    if self.rules.named_answers:
        if order.order_type != kind:
            return f"Order {order_id} is not {ARTICLE[kind]} order"
        if order.status != "unpaid":
            return f"Order status must be unpaid. Current status: {order.status}"
    elif order.status != "unpaid":
        return "Order status must be unpaid"
    order.status, order.update_time = "paid", self.now()
    return "Payment successful"


@tool("write")
def pay_hotel_order(self: ToolState, order_id: str) -> str:
    """Pay an unpaid hotel order, once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(self, order_id, "hotel")


@tool("write")
def pay_attraction_order(self: ToolState, order_id: str) -> str:
    """Pay an unpaid attraction ticket order, once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(self, order_id, "attraction")


@tool("write")
def pay_flight_order(self: ToolState, order_id: str) -> str:
    """Pay an unpaid flight order (a new one, or one a date change left owing), once the user
    has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(self, order_id, "flight")


@tool("write")
def pay_train_order(self: ToolState, order_id: str) -> str:
    """Pay an unpaid train order (a new one, or one a date change left owing), once the user
    has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(self, order_id, "train")
