"""The expected end states a task names, each record tied to the initial record it is.

A task lists expected states (alternatives). Each holds required records (orders of every
domain, in-store bookings and reservations) and optional ones. A required record is either one
of the initial state, which the agent may only edit, pay or cancel, or one the agent must
create. Two facts of the tools shape what is expected:

- An in-store order holds one product (``create_instore_product_order`` sells one package per
  order), so an expected in-store order with several products is expected as one order per
  product line.
- The data sometimes swaps ids between an edited order and its replacement, so an order is tied
  to an initial one by content as well as by id (``_tie_orders``).
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
from msgspec import Struct

from sweepbench.benchmarks.vitabench.tools.common import Order
from sweepbench.benchmarks.vitabench.tools.db import Database
from sweepbench.benchmarks.vitabench.tools.instore_model import Book, Reservation
from sweepbench.benchmarks.vitabench.tools.repairs import parse_records
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError
from sweepbench.memo import IdentityMemo


class ExpectedOrder(Struct):
    """One required order; ``initial_id`` names the initial order it is, or is None for an
    order the agent must create."""

    order: Order
    initial_id: str | None = None


class ExpectedBook(Struct):
    book: Book
    initial_id: str | None = None

    @property
    def record(self) -> Book:
        return self.book


class ExpectedReservation(Struct):
    reservation: Reservation
    initial_id: str | None = None

    @property
    def record(self) -> Reservation:
        return self.reservation


class ExpectedState(Struct):
    required: list[ExpectedOrder]
    optional: list[Order] = []
    # Initial orders this state names with other content (the data's way to say "replaced
    # by a new order"): they may end cancelled or untouched.
    replaced: list[str] = []
    books: list[ExpectedBook] = []
    reservations: list[ExpectedReservation] = []
    optional_books: list[Book] = []
    optional_reservations: list[Reservation] = []


def _goods(o: Order) -> tuple[str, list[tuple[str, int]]]:
    """Store and (product, quantity) lines; attribute text is left out because the English
    files translate it differently in the initial and the expected copy of one order."""
    return o.store_id, sorted((p.product_id, p.quantity) for p in o.products)


def _same_time(a: str, b: str) -> bool:
    return a.strip() == b.strip() != ""


_PARSED: IdentityMemo[Task, tuple[Database, list[ExpectedState]]] = IdentityMemo(256)


def parsed_task(task: Task) -> tuple[Database, list[ExpectedState]]:
    """The task's initial database and expected states, parsed once per task object: every
    trial of a task is checked against them (``state_check``, ``reachability``), and those
    only read them. Raises ``TaskError`` as the parsing does."""
    return _PARSED.get(task, _parse_task)


def _parse_task(task: Task) -> tuple[Database, list[ExpectedState]]:
    initial = Database.from_task(task)
    return initial, expected_states(task, initial)


def expected_states(task: Task, initial: Database | Mapping[str, Order]) -> list[ExpectedState]:
    """The task's expected states; ``initial`` is the initial database (or just its orders)."""
    db = initial if isinstance(initial, Database) else None
    orders = db.orders if db is not None else initial
    criteria = task.evaluation.get("expected_states")
    if criteria is None:
        return []
    if not isinstance(criteria, list) or not all(isinstance(s, dict) for s in criteria):
        raise TaskError(f"task {task.id} ({task.source}): evaluation_criteria.expected_states "
                        f"is not a list of objects")
    states = []
    for i, raw in enumerate(criteria):
        where = f"evaluation_criteria.expected_states[{i}]"
        req, req_books, req_res = parse_records(task, raw.get("required_orders") or [],
                                                f"{where}.required_orders")
        opt, opt_books, opt_res = parse_records(task, raw.get("optional_orders") or [],
                                                f"{where}.optional_orders")
        state = _tie_orders(req, opt, orders)
        state.books = [ExpectedBook(b, b.book_id if db and b.book_id in db.books else None)
                       for b in req_books]
        state.reservations = [
            ExpectedReservation(r, r.reservation_id if db and r.reservation_id in db.reservations else None)
            for r in req_res]
        state.optional_books, state.optional_reservations = opt_books, opt_res
        states.append(state)
    return states


def _tie_orders(required: list[Order], optional: list[Order],
                initial: Mapping[str, Order]) -> ExpectedState:
    """An expected order is an initial order when it has that order's id, its store and either
    its goods or its creation time; or, under another id, its goods and creation time."""
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
    out: list[ExpectedOrder] = []
    for i, e in enumerate(required):
        if i in tied:
            out.append(ExpectedOrder(e, tied[i]))
        else:
            out += [ExpectedOrder(o) for o in split_instore(e)]
    return ExpectedState(required=out, optional=[o for e in optional for o in split_instore(e)],
                         replaced=replaced)


def split_instore(order: Order) -> list[Order]:
    """A new in-store order with several products as one order per product line."""
    if order.order_type != "instore" or len(order.products) <= 1:
        return [order]
    return [msgspec.structs.replace(order, order_id=f"{order.order_id}#{i}", products=[p],
                                    total_price=round(p.price * p.quantity, 2))
            for i, p in enumerate(order.products)]
