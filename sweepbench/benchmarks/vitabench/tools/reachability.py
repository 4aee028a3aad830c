"""Which expected states no sequence of tool calls can reach: defects of the task data.

Told from the data and the tools' rules, never from a list of task ids: a record the agent must
create needs a seller and a product in the task's own database that the tools will sell
(a store's menu, a shop's packages, a dated room, ticket or seat with stock), a table booking
needs a shop that takes bookings, and a status the tools cannot leave a new record in (an
unpaid reservation, an unpaid free booking) cannot be expected of one.
"""

from __future__ import annotations

from sweepbench.benchmarks.vitabench.tools.common import Order, status_class
from sweepbench.benchmarks.vitabench.tools.db import Database
from sweepbench.benchmarks.vitabench.tools.expected import ExpectedState, parsed_task
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError

_CATALOGUES = {"hotel": "hotels", "attraction": "attractions", "flight": "flights", "train": "trains"}


def unreachable(task: Task) -> str | None:
    """Why no agent can reach any expected state of ``task``, or None when one is reachable."""
    try:
        db, states = parsed_task(task)
    except TaskError as exc:
        return f"task cannot be checked: {exc}"
    reasons = []
    for state in states:
        missing = missing_for(db, state)
        if not missing:
            return None
        reasons.append("; ".join(missing))
    return min(reasons, key=len) if reasons else None


def missing_for(db: Database, state: ExpectedState) -> list[str]:
    out: list[str] = []
    for e in state.required:
        if e.initial_id is None:
            out += _order_missing(db, e.order)
    for b in state.books:
        if b.initial_id is None:
            shop = db.shops.get(b.book.shop_id)
            if shop is None:
                out.append(f"shop {b.book.shop_id} is not in the task's database")
            elif not shop.enable_book:
                out.append(f"shop {b.book.shop_id} takes no table bookings")
            elif status_class(b.book.status) == "unpaid" and shop.book_price <= 0:
                out.append(f"a free booking at shop {b.book.shop_id} cannot stay unpaid")
    for r in state.reservations:
        if r.initial_id is None:
            if r.reservation.shop_id not in db.shops:
                out.append(f"shop {r.reservation.shop_id} is not in the task's database")
            elif status_class(r.reservation.status) == "unpaid":
                out.append(f"a reservation at shop {r.reservation.shop_id} cannot be unpaid")
    return out


def _order_missing(db: Database, order: Order) -> list[str]:
    if order.order_type == "instore":
        shop = db.shops.get(order.store_id)
        if shop is None:
            return [f"shop {order.store_id} is not in the task's database"]
        sold = {p.product_id for p in shop.products}
        return [f"product {p.product_id} is not sold by shop {order.store_id}"
                for p in order.products if p.product_id not in sold]
    if order.order_type in _CATALOGUES:
        seller = getattr(db, _CATALOGUES[order.order_type]).get(order.store_id)
        if seller is None:
            return [f"{order.order_type} {order.store_id} is not in the task's database"]
        out = []
        for p in order.products:
            stock = next((s.quantity for s in seller.products
                          if s.product_id == p.product_id and s.date == p.date), None)
            if stock is None:
                out.append(f"product {p.product_id} on {p.date or '?'} is not sold by "
                           f"{order.order_type} {order.store_id}")
            elif stock < p.quantity or (order.order_type == "hotel" and p.quantity != 1):
                out.append(f"{p.quantity} x {p.product_id} cannot be bought from "
                           f"{order.order_type} {order.store_id} ({stock} left)")
        return out
    store = db.stores.get(order.store_id)
    menu = {p.product_id for p in store.products} if store else set()
    if store is None:
        return [f"store {order.store_id} is not in the task's database"]
    return [f"product {p.product_id} is on no menu of store {order.store_id}"
            for p in order.products if p.product_id not in menu]
