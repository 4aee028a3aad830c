"""The VitaBench database of one episode: every domain's tables in one struct.

One struct serves single domains and compositions alike: a delivery task fills ``stores``, an
in-store task ``shops``, a travel task the four travel catalogues, a cross-domain task several;
the others stay empty. Built from untrusted task data (``repairs`` names every problem).
Nothing here reads the wall clock or a random source: "now" is the task's ``time``, and a new
record's id is a hash of the user and a per-episode sequence number.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from msgspec import Struct
from rapidfuzz import fuzz

from sweepbench.benchmarks.vitabench.tools.common import (  # noqa: F401  (re-exported: the names other modules know db by)
    DATE_FORMAT,
    STATUS_CLASS,
    TIME_FORMAT,
    Location,
    Order,
    OrderedProduct,
    OrderStatus,
    OrderSummary,
    Weather,
    distance_m,
    rank,
    status_class,
)
from sweepbench.benchmarks.vitabench.tools.delivery_model import (  # noqa: F401
    Store,
    StoreProduct,
    StoreSummary,
)
from sweepbench.benchmarks.vitabench.tools.instore_model import Book, Reservation, Shop
from sweepbench.benchmarks.vitabench.tools.ota_model import (
    Attraction,
    Flight,
    Hotel,
    Train,
)
from sweepbench.benchmarks.vitabench.tools.repairs import (
    convert,
    parse_orders,
    parse_records,
    table,
)
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError, ToolError

_PLAIN_KEYS = ("time", "user_id", "weather", "location", "user_historical_behaviors")
# table name -> (record type, id field)
TABLES: dict[str, tuple[type, str]] = {
    "stores": (Store, "store_id"),
    "shops": (Shop, "shop_id"),
    "hotels": (Hotel, "hotel_id"),
    "attractions": (Attraction, "attraction_id"),
    "flights": (Flight, "flight_id"),
    "trains": (Train, "train_id"),
}


class Database(Struct, kw_only=True):
    """Everything the tools read and write in one episode."""

    time: str
    user_id: str
    orders: dict[str, Order] = {}
    books: dict[str, Book] = {}
    reservations: dict[str, Reservation] = {}
    stores: dict[str, Store] = {}
    shops: dict[str, Shop] = {}
    hotels: dict[str, Hotel] = {}
    attractions: dict[str, Attraction] = {}
    flights: dict[str, Flight] = {}
    trains: dict[str, Train] = {}
    weather: list[Weather] = []
    location: list[Location] = []
    user_historical_behaviors: dict[str, Any] = {}
    lang: str = "en"
    created: int = 0  # records created so far: the sequence number in new ids

    @classmethod
    def from_task(cls, task: Task) -> Database:
        env = task.environment
        raw = {k: env[k] for k in _PLAIN_KEYS if env.get(k) is not None}
        for key in ("time", "user_id"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise TaskError(f"task {task.id} ({task.source}): environment.{key} is missing or empty")
        if not _is_time(raw["time"], TIME_FORMAT):
            raise TaskError(f"task {task.id} ({task.source}): environment.time {raw['time']!r} "
                            f"is not 'YYYY-MM-DD HH:MM:SS'")
        for i, w in enumerate(raw.get("weather") or []):
            day = w.get("datetime") if isinstance(w, dict) else None
            if not isinstance(day, str) or not _is_time(day, DATE_FORMAT):
                raise TaskError(f"task {task.id} ({task.source}): environment.weather[{i}].datetime "
                                f"{day!r} is not 'YYYY-MM-DD'")
        db = convert(task, {**raw, "lang": task.lang}, cls, "environment")
        for name, (kind, id_field) in TABLES.items():
            setattr(db, name, table(task, env.get(name), kind, id_field, f"environment.{name}"))
        db.orders = _keyed(task, parse_orders(task, _values(task, env, "orders"), "environment.orders"),
                           "order_id", "orders")
        _, books, _ = parse_records(task, _values(task, env, "books"), "environment.books")
        _, _, reservations = parse_records(task, _values(task, env, "reservations"),
                                           "environment.reservations")
        db.books = _keyed(task, books, "book_id", "books")
        db.reservations = _keyed(task, reservations, "reservation_id", "reservations")
        return db

    @property
    def now(self) -> datetime:
        return datetime.strptime(self.time, TIME_FORMAT)

    def new_id(self, prefix: str) -> str:
        """A fresh id: ``prefix`` + a hash of (user, sequence number), never one in use."""
        while True:
            self.created += 1
            digest = hashlib.sha256(f"{prefix}|{self.user_id}|{self.created}".encode()).hexdigest()
            new = prefix + digest[:10]
            if new not in self.orders and new not in self.books and new not in self.reservations:
                return new

    def check_user(self, user_id: str) -> None:
        """Tools act for the task's user only."""
        if not user_id:
            raise ToolError("User ID cannot be empty")
        if user_id != self.user_id:
            raise ToolError("User ID does not match")

    def places(self) -> dict[str, Location]:
        """Every address the episode knows (task locations, venues, stations, orders)."""
        known = {loc.address: loc for loc in self.location}
        for venues in (self.stores, self.shops, self.hotels, self.attractions):
            known.update((v.location.address, v.location) for v in venues.values())
        for f in self.flights.values():
            known.update((loc.address, loc) for loc in (f.departure_airport_location, f.arrival_airport_location))
        for t in self.trains.values():
            known.update((loc.address, loc) for loc in (t.departure_station_location, t.arrival_station_location))
        known.update((o.location.address, o.location) for o in self.orders.values() if o.location)
        return known

    def geocode(self, address: str) -> Location:
        """The known place that best matches ``address`` (upstream's fuzzy thresholds)."""
        places = self.places()
        ranked = rank(address, {a: a for a in places})
        if not ranked or ranked[0][1] < 30 or fuzz.ratio(address, ranked[0][0]) < 20:
            raise ToolError(f"Longitude and latitude not found for address {address}")
        return places[ranked[0][0]]


def _is_time(value: str, fmt: str) -> bool:
    try:
        datetime.strptime(value, fmt)
    except ValueError:
        return False
    return True


def is_time(value: str, fmt: str = TIME_FORMAT) -> bool:
    return _is_time(value, fmt)


def _values(task: Task, env: dict, key: str) -> list[Any]:
    value = env.get(key)
    if value is None:
        return []
    if not isinstance(value, dict):
        raise TaskError(f"task {task.id} ({task.source}): environment.{key} is not an object")
    return list(value.values())


def _keyed(task: Task, records: list, id_field: str, name: str) -> dict[str, Any]:
    out = {getattr(r, id_field): r for r in records}
    if len(out) != len(records):
        raise TaskError(f"task {task.id} ({task.source}): environment.{name} repeats an {id_field}")
    return out
