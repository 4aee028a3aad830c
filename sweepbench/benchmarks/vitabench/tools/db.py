"""The typed view of a task's data that the oracle, the reachability test and the state check
reason over (the tools run over ``state.ToolState``, upstream's shapes and quirks included).

One struct serves single domains and compositions alike: a delivery task fills ``stores``, an
in-store task ``shops``, a travel task the four travel catalogues, a cross-domain task several;
the others stay empty. Built from untrusted task data (``repairs`` names every problem). Every
table is keyed as the task file keys it, which is how the tools look records up, and a
record's id is that key.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from msgspec import Struct

from sweepbench.benchmarks.vitabench.tools.common import (  # noqa: F401  (re-exported: the names other modules know db by)
    DATE_FORMAT,
    STATUS_CLASS,
    TIME_FORMAT,
    Location,
    Order,
    OrderedProduct,
    OrderStatus,
    Weather,
    status_class,
)
from sweepbench.benchmarks.vitabench.tools.delivery_model import Store
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
from sweepbench.errors import TaskError

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
    """A task's initial data, typed and repaired."""

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
        db.orders = _keyed(task, parse_orders(task, _values(task, env, "orders", "order_id"), "environment.orders"),
                           "order_id", "orders")
        _, books, _ = parse_records(task, _values(task, env, "books", "book_id"), "environment.books")
        _, _, reservations = parse_records(task, _values(task, env, "reservations", "reservation_id"),
                                           "environment.reservations")
        db.books = _keyed(task, books, "book_id", "books")
        db.reservations = _keyed(task, reservations, "reservation_id", "reservations")
        return db

    def places(self) -> dict[str, Location]:
        """Every address the task knows (its places, venues, stations, orders)."""
        known = {loc.address: loc for loc in self.location}
        for venues in (self.stores, self.shops, self.hotels, self.attractions):
            known.update((v.location.address, v.location) for v in venues.values())
        for f in self.flights.values():
            known.update((loc.address, loc) for loc in (f.departure_airport_location, f.arrival_airport_location))
        for t in self.trains.values():
            known.update((loc.address, loc) for loc in (t.departure_station_location, t.arrival_station_location))
        known.update((o.location.address, o.location) for o in self.orders.values() if o.location)
        return known


@functools.lru_cache(maxsize=8192)
def _parses(value: str, fmt: str) -> bool:
    try:
        datetime.strptime(value, fmt)
    except ValueError:
        return False
    return True


def _is_time(value: str, fmt: str) -> bool:
    """Upstream's format check, ``strptime`` (so ``2025-6-1`` passes; a non-string raises
    strptime's own TypeError); cached, as the same few times are checked in every episode's
    environment and tool calls (strptime was 4% of a sweep's client CPU)."""
    if type(value) is str and type(fmt) is str:
        return _parses(value, fmt)
    datetime.strptime(value, fmt)  # raises as upstream does
    return True


def is_time(value: str, fmt: str = TIME_FORMAT) -> bool:
    return _is_time(value, fmt)


def _values(task: Task, env: dict, key: str, id_field: str) -> list[Any]:
    """A table's records, each with its key as its id."""
    value = env.get(key)
    if value is None:
        return []
    if not isinstance(value, dict):
        raise TaskError(f"task {task.id} ({task.source}): environment.{key} is not an object")
    return [{**v, id_field: k} if isinstance(v, dict) else v for k, v in value.items()]


def _keyed(task: Task, records: list, id_field: str, name: str) -> dict[str, Any]:
    out = {getattr(r, id_field): r for r in records}
    if len(out) != len(records):
        raise TaskError(f"task {task.id} ({task.source}): environment.{name} repeats an {id_field}")
    return out
