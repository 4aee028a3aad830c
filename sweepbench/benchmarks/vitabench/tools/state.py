"""The database one episode's tools run over, built from a task's environment as upstream
VitaBench builds it.

- Each domain of the environment (one, or several merged) keeps only its own tables of the
  task's ``environment``; the shared ones (orders, time, user, weather, places, the user's
  history) are one set for all of them.
- Tables are keyed by the JSON object's keys and records keep their own id fields; where the
  data's key and id differ, upstream's lookups (by key) and texts (by id) differ too, and so do
  these.
- Two registries mirror upstream's: every product built (catalogues, ordered lines) by id, the
  last one built winning; and every place built (the task's places, sellers, stations, orders'
  addresses) by address. Upstream keeps them per worker thread, so earlier tasks' addresses
  leak into later ones; here they belong to one episode's state and nothing leaks.
- "Now" is the task's ``time``; a new record's id is the upstream prefix and a hash of
  (prefix, user, sequence number), never the wall clock.
- ``rules`` is the upstream release the episode runs (its answers, checks, search sizes): the
  tools read what differs between releases from it, so both run the same code.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from sweepbench.benchmarks.vitabench.release import Release
from sweepbench.benchmarks.vitabench.tools.catalogues import (
    Attraction,
    Flight,
    Hotel,
    Shop,
    Store,
    Train,
)
from sweepbench.benchmarks.vitabench.tools.records import (
    BookInfo,
    Location,
    Order,
    ReservationInfo,
    Weather,
)
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError
from sweepbench.memo import IdentityMemo

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
DOMAINS = ("delivery", "instore", "ota")
# domain -> its tables, in the order upstream validates them
TABLES: dict[str, dict[str, type]] = {
    "delivery": {"stores": Store},
    "instore": {"shops": Shop, "books": BookInfo, "reservations": ReservationInfo},
    "ota": {"hotels": Hotel, "attractions": Attraction, "flights": Flight, "trains": Train},
}
# places a record of each kind carries, in field order
_PLACES = {Store: ("location",), Shop: ("location",), Hotel: ("location",), Attraction: ("location",),
           Flight: ("departure_airport_location", "arrival_airport_location"),
           Train: ("departure_station_location", "arrival_station_location")}


def env_domains(domains: tuple[str, ...]) -> tuple[str, ...]:
    """The domains whose environment a task runs in: its domain list without options such as
    ``tasks=delivery`` (which file the tasks came from)."""
    return tuple(d for d in domains if "=" not in d)


def record_id(prefix: str, user_id: str, seq: int) -> str:
    """The id of the ``seq``-th record an episode creates (upstream's shape: two letters and
    ten hex digits)."""
    return prefix + hashlib.sha256(f"{prefix}|{user_id}|{seq}".encode()).hexdigest()[:10]


class ToolState:
    """Tables, registries and clock of one episode."""

    def __init__(self, task: Task, domains: tuple[str, ...], *, rules: Release) -> None:
        env = task.environment
        where = f"task {task.id} ({task.source})"
        for key in ("time", "user_id"):
            if not isinstance(env.get(key), str) or not env[key].strip():
                raise TaskError(f"{where}: environment.{key} is missing or empty")
        self.time: str = env["time"]
        self.user_id: str = env["user_id"]
        self.lang = task.lang
        self.domains = domains
        self.rules = rules
        self.weather: list[Weather] | None = _convert(where, env, "weather", list[Weather] | None, None)
        self.location: list[Location] | None = _convert(where, env, "location", list[Location] | None, None)
        self.user_historical_behaviors: dict | None = _convert(
            where, env, "user_historical_behaviors", dict | None, {})
        self.orders: dict[str, Order] | None = _convert(where, env, "orders", dict[str, Order] | None, {})
        # a domain's tables; None when the environment has no such domain (upstream: no attribute)
        self.stores: dict[str, Store] | None = None
        self.shops: dict[str, Shop] | None = None
        self.books: dict[str, BookInfo] | None = None
        self.reservations: dict[str, ReservationInfo] | None = None
        self.hotels: dict[str, Hotel] | None = None
        self.attractions: dict[str, Attraction] | None = None
        self.flights: dict[str, Flight] | None = None
        self.trains: dict[str, Train] | None = None
        self.products: dict[str, Any] = {}
        self.places: dict[str, Location] = {}
        self.created = 0
        for domain in domains:
            if domain not in TABLES:
                raise TaskError(f"{where}: no VitaBench tools for domain {domain!r}; "
                                f"known: {', '.join(TABLES)}")
            self._register_shared()
            for name, kind in TABLES[domain].items():
                table = _convert(where, env, name, dict[str, kind], {},
                                 prepare=_prepare_stores if kind is Store else None)
                setattr(self, name, table)
                for record in table.values():
                    for field in _PLACES.get(kind, ()):
                        self.place(getattr(record, field))
                    for product in getattr(record, "products", ()):
                        self.product(product)

    def _register_shared(self) -> None:
        """Upstream builds the shared tables once per domain, registering their places again."""
        for place in self.location or ():
            self.place(place)
        for order in (self.orders or {}).values():
            if order.location is not None:
                self.place(order.location)

    # ---- registries, clock, ids -----------------------------------------------------------

    def product(self, product: Any) -> Any:
        """Register a product that was just built (the last built with an id wins)."""
        self.products[product.product_id] = product
        return product

    def place(self, place: Location) -> Location:
        """Register a place that was just built (by address; the last built wins)."""
        self.places[place.address] = place
        return place

    def now(self) -> str:
        return self.time

    def new_id(self, prefix: str) -> str:
        """A fresh record id (deterministic, never one in use)."""
        taken = [t for t in (self.orders, self.books, self.reservations) if t is not None]
        while True:
            self.created += 1
            new = record_id(prefix, self.user_id, self.created)
            if not any(new in t for t in taken):
                return new


def _prepare_stores(table: dict) -> dict:
    """A task's ``stores`` table with every store prepared (``_prepare_store``), once per table
    object: every episode of a task converts the same table, and preparing it (a Python pass
    over every product) was a fifth of building an episode's state. ``msgspec.convert`` still
    gives each episode records of its own, so nothing an episode's tools change is shared."""
    return _PREPARED.get(table, lambda t: {k: _prepare_store(v) for k, v in t.items()})


_PREPARED: IdentityMemo[dict, dict] = IdentityMemo(256)


def _prepare_store(raw: Any) -> Any:
    """Upstream joins a product's list of spec options into one text."""
    if not isinstance(raw, dict) or not isinstance(raw.get("products"), list):
        return raw
    products = [{**p, "attributes": ", ".join(p["attributes"])}
                if isinstance(p, dict) and isinstance(p.get("attributes"), list)
                and all(isinstance(a, str) for a in p["attributes"]) else p
                for p in raw["products"]]
    return {**raw, "products": products}


def _convert(where: str, env: dict, key: str, kind: Any, default: Any, prepare: Any = None) -> Any:
    if key not in env:
        return msgspec.convert(default, kind) if default is not None else None
    value = env[key]
    if prepare is not None and isinstance(value, dict):
        value = prepare(value)
    try:
        return msgspec.convert(value, kind, strict=False)
    except msgspec.ValidationError as exc:
        raise TaskError(f"{where}: bad environment.{key}: {exc}".replace("`$", f"`{key}")) from None
