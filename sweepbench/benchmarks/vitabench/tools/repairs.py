"""Task data to typed records, repairing the published files' slips in one place so the tools,
the oracle and the state check all see one shape. Every problem is a ``TaskError`` naming the
task and the field.

The slips:

- some ordered products use the key ``attribute`` instead of ``attributes``, or a list of
  attribute strings instead of one string (upstream joins lists with ", ");
- a few expected orders were pasted inside the ``products`` list of the order before them;
- some prices are strings ("21.00");
- a table or catalogue entry may carry an id that differs from the key it is filed under; the
  key is what lookups and expected states use (as upstream), so it becomes the entry's id;
- in-store expected records are orders, bookings and reservations mixed in one list; a few
  bookings are filed as reservations (a ``reservation_id`` with a ``book_price`` or a
  ``book_time``): a record carrying booking fields is a booking;
- some booking and reservation times lack seconds ("2024-10-26 19:00"), which the tools (as
  upstream) refuse: they get ":00".
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from sweepbench.benchmarks.vitabench.tools.common import Order
from sweepbench.benchmarks.vitabench.tools.instore_model import Book, Reservation
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError


def convert(task: Task, value: Any, kind: Any, where: str) -> Any:
    try:
        return msgspec.convert(value, kind, strict=False)
    except msgspec.ValidationError as exc:
        raise TaskError(f"task {task.id} ({task.source}): bad {where}: {exc}"
                        .replace("`$", f"`{where}")) from None


def table(task: Task, raw: Any, kind: type, id_field: str, where: str) -> dict[str, Any]:
    """A ``{key: record}`` table whose records take their id from their key."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise TaskError(f"task {task.id} ({task.source}): {where} is not an object")
    return {k: convert(task, {**v, id_field: k} if isinstance(v, dict) else v, kind, f"{where}.{k}")
            for k, v in raw.items()}


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


def _flatten(raw: list[Any]) -> list[Any]:
    """Records with any order pasted into a ``products`` list lifted out, products repaired."""
    out: list[Any] = []
    for record in raw:
        if not isinstance(record, dict) or not isinstance(record.get("products"), list):
            out.append(record)
            continue
        products, nested = [], []
        for p in record["products"]:
            (nested if isinstance(p, dict) and "order_id" in p else products).append(p)
        out.append({**record, "products": [_repair_product(p) for p in products]})
        out.extend(_flatten(nested))
    return out


def parse_orders(task: Task, raw: Any, where: str) -> list[Order]:
    if not isinstance(raw, list):
        raise TaskError(f"task {task.id} ({task.source}): {where} is not a list")
    return convert(task, _flatten(raw), list[Order], where)


_NO_SECONDS = re.compile(r"^\s*\d{4}-\d{2}-\d{2} \d{2}:\d{2}\s*$")


def _full_time(record: dict, key: str) -> dict:
    value = record.get(key)
    if isinstance(value, str) and _NO_SECONDS.match(value):
        return {**record, key: value.strip() + ":00"}
    return record


def _as_booking(record: dict) -> dict:
    record = dict(record)
    if "book_id" not in record:
        record["book_id"] = record.pop("reservation_id")
    if "book_time" not in record:
        record["book_time"] = record.pop("reservation_time", "")
    record.pop("reservation_time", None)
    return record


def parse_records(task: Task, raw: Any, where: str) -> tuple[list[Order], list[Book], list[Reservation]]:
    """An expected list split into orders, bookings and reservations."""
    if not isinstance(raw, list):
        raise TaskError(f"task {task.id} ({task.source}): {where} is not a list")
    orders, books, reservations = [], [], []
    for i, record in enumerate(_flatten(raw)):
        at = f"{where}[{i}]"
        if not isinstance(record, dict) or "order_id" in record:
            orders.append(convert(task, record, Order, at))
        elif "book_id" in record or "book_price" in record or "book_time" in record:
            books.append(convert(task, _full_time(_as_booking(record), "book_time"), Book, at))
        elif "reservation_id" in record:
            reservations.append(convert(task, _full_time(record, "reservation_time"), Reservation, at))
        else:
            raise TaskError(f"task {task.id} ({task.source}): {at} is neither an order, "
                            f"a booking nor a reservation")
    return orders, books, reservations
