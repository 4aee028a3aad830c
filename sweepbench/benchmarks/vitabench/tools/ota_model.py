"""The online-travel tables of the typed task view: hotels, attractions, flights and trains, each selling dated
products (a room night, a ticket, a seat) with a stock the order tools draw down."""

from __future__ import annotations

from msgspec import Struct

from sweepbench.benchmarks.vitabench.tools.common import Location


class DatedProduct(Struct, kw_only=True):
    product_id: str
    price: float
    date: str
    quantity: int = 0  # stock left


class Room(DatedProduct, kw_only=True):
    room_type: str


class Ticket(DatedProduct, kw_only=True):
    ticket_type: str


class Seat(DatedProduct, kw_only=True):
    seat_type: str


class Hotel(Struct, kw_only=True):
    hotel_id: str
    hotel_name: str
    score: float
    star_rating: int = 0
    location: Location
    tags: list[str] = []
    products: list[Room] = []


class Attraction(Struct, kw_only=True):
    attraction_id: str
    attraction_name: str
    location: Location
    description: str = ""
    score: float = 0.0
    opening_hours: str = ""
    ticket_price: float = 0.0
    products: list[Ticket] = []


class Flight(Struct, kw_only=True):
    flight_id: str
    flight_number: str
    departure_city: str
    arrival_city: str
    departure_airport_location: Location
    arrival_airport_location: Location
    departure_time: str
    arrival_time: str
    tags: list[str] = []
    products: list[Seat] = []


class Train(Struct, kw_only=True):
    train_id: str
    train_number: str
    departure_city: str
    arrival_city: str
    departure_station_location: Location
    arrival_station_location: Location
    departure_time: str
    arrival_time: str
    tags: list[str] = []
    products: list[Seat] = []
