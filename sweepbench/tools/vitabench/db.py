"""The VitaBench database of one episode, and the expected end states a task names.

Both are built from untrusted task data, so every problem is a ``TaskError`` naming the task
and the field. Nothing here reads the wall clock or a random source: "now" is the task's
``time``, and a new order's id is a hash of the user and a per-episode sequence number.

The published task files have a few slips that this module repairs in one place, so the
tools, the oracle and the state check all see one shape:

- some ordered products use the key ``attribute`` instead of ``attributes``, or a list of
  attribute strings instead of one string (upstream joins lists with ", ");
- a few expected orders were pasted inside the ``products`` list of the order before them;
- some prices are strings ("21.00");
- two stores carry a ``store_id`` that differs from the key they are filed under; the key is
  what lookups and expected states use (as upstream), so it becomes the store's id.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime
from typing import Any, Literal, Mapping, TypeVar

import msgspec
from msgspec import Struct
from rapidfuzz import fuzz, process, utils

from ...datasets.task import Task, TaskError
from ..base import ToolError

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"

OrderStatus = Literal[
    "unpaid", "paid", "unconsumed", "consumed", "processed", "in-progress", "delivered", "cancelled",
]

# Tools move an order only through unpaid -> paid -> cancelled (or unpaid -> cancelled). What
# happens after payment (processed, in-progress, delivered; in-store: unconsumed, consumed) is
# the merchant's doing, not the agent's, yet the expected states use those words for orders
# the agent merely paid. So end states are compared by class, and this is the one place that
# says which status belongs to which class.
STATUS_CLASS: dict[str, str] = {
    "unpaid": "unpaid",
    "paid": "paid",
    "processed": "paid",
    "in-progress": "paid",
    "delivered": "paid",
    "unconsumed": "paid",
    "consumed": "paid",
    "cancelled": "cancelled",
}


def status_class(status: str) -> str:
    return STATUS_CLASS[status]


class Location(Struct):
    address: str
    longitude: float
    latitude: float


class Weather(Struct):
    city: str
    category: str
    datetime: str
    temperature: tuple[float, float]
    humidity: float


class StoreProduct(Struct):
    """A product on a store's menu; ``attributes`` lists the specs one may choose."""

    product_id: str
    name: str
    store_id: str
    store_name: str
    price: float
    tags: list[str] = []
    attributes: list[str] = []


class StoreSummary(Struct):
    store_id: str
    name: str
    score: float
    location: Location
    tags: list[str] = []


class Store(StoreSummary):
    products: list[StoreProduct] = []

    def summary(self) -> StoreSummary:
        return StoreSummary(self.store_id, self.name, self.score, self.location, self.tags)


class OrderedProduct(Struct, omit_defaults=True):
    """A line of an order; ``attributes`` is the chosen spec as text. Orders in task files
    carry only id, price, quantity and attributes; orders the tools create carry the rest."""

    product_id: str
    price: float = 0.0
    quantity: int = 0
    attributes: str = ""
    name: str = ""
    store_id: str = ""
    store_name: str = ""
    tags: list[str] = []


class Order(Struct):
    order_id: str
    order_type: str
    user_id: str
    store_id: str
    note: str = ""
    location: Location | None = None
    dispatch_time: str = ""
    shipping_time: float | None = None
    delivery_time: str = ""
    total_price: float = 0.0
    create_time: str = ""
    update_time: str = ""
    status: OrderStatus = "unpaid"
    products: list[OrderedProduct] = []


class OrderSummary(Struct):
    order_id: str
    order_type: str
    user_id: str
    store_id: str
    total_price: float
    create_time: str
    update_time: str
    status: str

    @classmethod
    def of(cls, o: Order) -> "OrderSummary":
        return cls(o.order_id, o.order_type, o.user_id, o.store_id, o.total_price,
                   o.create_time, o.update_time, o.status)


_ENV_KEYS = ("time", "user_id", "orders", "stores", "weather", "location", "user_historical_behaviors")


class Database(Struct, kw_only=True):
    """Everything the tools read and write in one episode."""

    time: str
    user_id: str
    orders: dict[str, Order] = {}
    stores: dict[str, Store] = {}
    weather: list[Weather] = []
    location: list[Location] = []
    user_historical_behaviors: dict[str, Any] = {}
    lang: str = "en"
    created: int = 0  # orders created so far: the sequence number in new order ids

    @classmethod
    def from_task(cls, task: Task) -> "Database":
        env = task.environment
        raw = {k: env[k] for k in _ENV_KEYS if env.get(k) is not None}
        for key in ("time", "user_id"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise TaskError(f"task {task.id} ({task.source}): environment.{key} is missing or empty")
        if not _is_time(raw["time"], TIME_FORMAT):
            raise TaskError(f"task {task.id} ({task.source}): environment.time {raw['time']!r} "
                            f"is not 'YYYY-MM-DD HH:MM:SS'")
        for i, w in enumerate(raw.get("weather") or []):
            day = w.get("datetime") if isinstance(w, dict) else None
            if not isinstance(day, str) or not _is_time(day, "%Y-%m-%d"):
                raise TaskError(f"task {task.id} ({task.source}): environment.weather[{i}].datetime "
                                f"{day!r} is not 'YYYY-MM-DD'")
        raw_orders, raw_stores = raw.pop("orders", {}), raw.pop("stores", {})
        for key, value in (("orders", raw_orders), ("stores", raw_stores)):
            if not isinstance(value, dict):
                raise TaskError(f"task {task.id} ({task.source}): environment.{key} is not an object")
        orders = _parse_orders(task, list(raw_orders.values()), "environment.orders")
        db = _convert(task, {**raw, "lang": task.lang}, cls, "environment")
        db.stores = {k: _convert(task, {**v, "store_id": k} if isinstance(v, dict) else v, Store,
                                 f"environment.stores.{k}") for k, v in raw_stores.items()}
        db.orders = {o.order_id: o for o in orders}
        if len(db.orders) != len(orders):
            raise TaskError(f"task {task.id} ({task.source}): environment.orders repeats an order_id")
        return db

    @property
    def now(self) -> datetime:
        return datetime.strptime(self.time, TIME_FORMAT)

    def new_order_id(self, prefix: str) -> str:
        """A fresh id: ``prefix`` + a hash of (user, sequence number), never one in use."""
        while True:
            self.created += 1
            digest = hashlib.sha256(f"{prefix}|{self.user_id}|{self.created}".encode()).hexdigest()
            order_id = prefix + digest[:10]
            if order_id not in self.orders:
                return order_id

    def places(self) -> dict[str, Location]:
        """Every address the episode knows (task locations, stores, orders) and where it is."""
        known = {loc.address: loc for loc in self.location}
        known.update((s.location.address, s.location) for s in self.stores.values())
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


K = TypeVar("K")


def rank(query: str, docs: Mapping[K, str]) -> list[tuple[K, float]]:
    """Keys of ``docs`` best first by fuzzy partial match against ``query`` (ties keep order)."""
    hits = process.extract(query, docs, scorer=fuzz.partial_ratio, processor=utils.default_process,
                           limit=None)
    return [(key, score) for _, score, key in hits]


def distance_m(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Great-circle distance in whole meters (haversine, earth radius 6371 km)."""
    if (lon1, lat1) == (lon2, lat2):
        return 0.0
    lon1, lat1, lon2, lat2 = map(math.radians, (lon1, lat1, lon2, lat2))
    a = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return round(2 * 6371000 * math.asin(math.sqrt(min(1.0, a))), 0)


# ---- task data repairs and expected states -----------------------------------------------


def _flatten_orders(raw: list[Any]) -> list[Any]:
    """Orders with any order pasted into a ``products`` list lifted out, products repaired."""
    out: list[Any] = []
    for order in raw:
        if not isinstance(order, dict) or not isinstance(order.get("products"), list):
            out.append(order)
            continue
        products, nested = [], []
        for p in order["products"]:
            (nested if isinstance(p, dict) and "order_id" in p else products).append(p)
        out.append({**order, "products": [_repair_product(p) for p in products]})
        out.extend(_flatten_orders(nested))
    return out


def _repair_product(p: Any) -> Any:
    if not isinstance(p, dict):
        return p
    p = dict(p)
    if "attributes" not in p and "attribute" in p:
        p["attributes"] = p.pop("attribute")
    if isinstance(p.get("attributes"), list):
        p["attributes"] = ", ".join(str(a) for a in p["attributes"])
    if p.get("attributes") is None:
        p["attributes"] = ""
    return p


def _convert(task: Task, value: Any, kind: Any, where: str) -> Any:
    try:
        return msgspec.convert(value, kind, strict=False)
    except msgspec.ValidationError as exc:
        raise TaskError(f"task {task.id} ({task.source}): bad {where}: {exc}"
                        .replace("`$", f"`{where}")) from None


def _parse_orders(task: Task, raw: Any, where: str) -> list[Order]:
    if not isinstance(raw, list):
        raise TaskError(f"task {task.id} ({task.source}): {where} is not a list")
    return _convert(task, _flatten_orders(raw), list[Order], where)


class ExpectedOrder(Struct):
    """One required order; ``initial_id`` names the order of the initial state it is, or is
    None for an order the agent must create."""

    order: Order
    initial_id: str | None = None


class ExpectedState(Struct):
    required: list[ExpectedOrder]
    optional: list[Order] = []
    # Initial orders this state names with other content (the data's way to say "replaced
    # by a new order"): they may end cancelled or untouched.
    replaced: list[str] = []


def _goods(o: Order) -> tuple[str, list[tuple[str, int]]]:
    """Store and (product, quantity) lines; attribute text is left out because the English
    files translate it differently in the initial and the expected copy of one order."""
    return o.store_id, sorted((p.product_id, p.quantity) for p in o.products)


def _same_time(a: str, b: str) -> bool:
    return a.strip() == b.strip() != ""


def expected_states(task: Task, initial: Mapping[str, Order]) -> list[ExpectedState]:
    """The task's expected states (alternatives), each order tied to the initial order it is.

    An expected order is an initial order when it has that order's id, its store and either
    its goods or its creation time; or, under another id, its goods and creation time (the
    data sometimes swaps ids between an edited order and its replacement). Every other
    expected order is one the agent creates.
    """
    criteria = task.evaluation.get("expected_states")
    if criteria is None:
        return []
    if not isinstance(criteria, list) or not all(isinstance(s, dict) for s in criteria):
        raise TaskError(f"task {task.id} ({task.source}): evaluation_criteria.expected_states "
                        f"is not a list of objects")
    states = []
    for i, raw in enumerate(criteria):
        where = f"evaluation_criteria.expected_states[{i}]"
        required = _parse_orders(task, raw.get("required_orders") or [], f"{where}.required_orders")
        optional = _parse_orders(task, raw.get("optional_orders") or [], f"{where}.optional_orders")
        states.append(_tie_to_initial(required, optional, initial))
    return states


def _tie_to_initial(required: list[Order], optional: list[Order],
                    initial: Mapping[str, Order]) -> ExpectedState:
    tied: dict[int, str] = {}
    for i, e in enumerate(required):
        o = initial.get(e.order_id)
        if o is not None and o.store_id == e.store_id and (
                _goods(o) == _goods(e) or _same_time(o.create_time, e.create_time)):
            tied[i] = o.order_id
    for i, e in enumerate(required):
        if i in tied or e.order_id in initial:
            continue
        for o in initial.values():
            if (o.order_id not in tied.values() and _goods(o) == _goods(e)
                    and _same_time(o.create_time, e.create_time)):
                tied[i] = o.order_id
                break
    claimed = set(tied.values())
    replaced = sorted({e.order_id for e in required if e.order_id in initial} - claimed)
    return ExpectedState(
        required=[ExpectedOrder(e, tied.get(i)) for i, e in enumerate(required)],
        optional=optional, replaced=replaced,
    )
