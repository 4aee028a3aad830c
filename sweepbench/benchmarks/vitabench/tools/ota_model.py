"""The online-travel tables: hotels, attractions, flights and trains, each selling dated
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


class HotelSummary(Struct, kw_only=True):
    hotel_id: str
    hotel_name: str
    score: float
    star_rating: int = 0
    location: Location
    tags: list[str] = []


class Hotel(HotelSummary, kw_only=True):
    products: list[Room] = []

    def summary(self) -> HotelSummary:
        return HotelSummary(hotel_id=self.hotel_id, hotel_name=self.hotel_name, score=self.score,
                            star_rating=self.star_rating, location=self.location, tags=self.tags)


class AttractionSummary(Struct, kw_only=True):
    attraction_id: str
    attraction_name: str
    location: Location
    description: str = ""
    score: float = 0.0
    opening_hours: str = ""
    ticket_price: float = 0.0


class Attraction(AttractionSummary, kw_only=True):
    products: list[Ticket] = []

    def summary(self) -> AttractionSummary:
        return AttractionSummary(
            attraction_id=self.attraction_id, attraction_name=self.attraction_name,
            location=self.location, description=self.description, score=self.score,
            opening_hours=self.opening_hours, ticket_price=self.ticket_price)


class FlightSummary(Struct, kw_only=True):
    flight_id: str
    flight_number: str
    departure_city: str
    arrival_city: str
    departure_airport_location: Location
    arrival_airport_location: Location
    departure_time: str
    arrival_time: str
    tags: list[str] = []


class Flight(FlightSummary, kw_only=True):
    products: list[Seat] = []

    def summary(self) -> FlightSummary:
        fields = {f: getattr(self, f) for f in FlightSummary.__struct_fields__}
        return FlightSummary(**fields)


class TrainSummary(Struct, kw_only=True):
    train_id: str
    train_number: str
    departure_city: str
    arrival_city: str
    departure_station_location: Location
    arrival_station_location: Location
    departure_time: str
    arrival_time: str
    tags: list[str] = []


class Train(TrainSummary, kw_only=True):
    products: list[Seat] = []

    def summary(self) -> TrainSummary:
        fields = {f: getattr(self, f) for f in TrainSummary.__struct_fields__}
        return TrainSummary(**fields)
