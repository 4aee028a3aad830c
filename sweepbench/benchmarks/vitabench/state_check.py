"""The deterministic VitaBench check: did the episode end in the task's expected state?

A task lists expected states (alternatives; the episode passes if it matches any). Each names
required records: orders of every domain, in-store table bookings and service reservations
(``tools.vitabench.expected`` sorts them and ties each to an initial record or to none):

- An initial record is found by its id and judged on what tools can change about it: its
  status class; an order's note when the expected note is not empty; a flight or train order's
  seats and date (they can be moved); a booking's or reservation's time and party size.
- A new record is matched, by content, to one record the agent created (ids are generated and
  times are the task's clock, so neither is compared). Orders: order type, store, delivery
  address, products as a multiset of (product, date, attributes) with summed quantities, status
  class, and the dispatch time and note when the expected value is not empty. Bookings and
  reservations: shop, time, party size, status class.
- Every other initial record must keep its status class (orders: and note; bookings and
  reservations: time and party size), except an order the expected state names with other
  content (a replaced order), which may also end cancelled.
- Every other created record must match an optional one, or the check fails.

The user id is not compared: the tools refuse any user but the task's, and one published
task (90714001) expects another user's id by mistake. Status is compared by class
(``STATUS_CLASS``) because tools can only pay or cancel, while expected states say "processed",
"in-progress", "delivered" or "unconsumed" for records the agent paid or made. Text is compared
after folding case and whitespace; attributes also ignore the order of comma-separated parts.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import msgspec
from msgspec import Struct

from sweepbench.benchmarks.vitabench.tools.db import (
    Book,
    Database,
    Order,
    Reservation,
    status_class,
)
from sweepbench.benchmarks.vitabench.tools.expected import ExpectedState, parsed_task
from sweepbench.benchmarks.vitabench.tools.reachability import unreachable
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError

__all__ = ["CheckResult", "check_vitabench", "unreachable"]

MOVABLE = ("flight", "train")  # order types whose products a tool can change (a new date)


class CheckResult(Struct):
    passed: bool
    why: str | None = None  # for a failure: which field of which record differs
    # Set when no sequence of tool calls can reach any expected state (a defect of the task
    # data, e.g. an expected product that is on no store's menu): the failure is the data's.
    unreachable: str | None = None


class _Final(Struct):
    orders: dict[str, Order]
    books: dict[str, Book] = {}
    reservations: dict[str, Reservation] = {}


def check_vitabench(task: Task, final_state: dict[str, Any]) -> CheckResult:
    try:
        initial, states = parsed_task(task)
    except TaskError as exc:
        return CheckResult(False, f"task cannot be checked: {exc}")
    if not states:
        return CheckResult(False, "task has no expected state to check")
    if not isinstance(final_state, dict) or "orders" not in final_state:
        return CheckResult(False, "no final state: the episode ended before one was recorded")
    try:
        final = msgspec.convert(_plain_orders(final_state), _Final, strict=False)
    except msgspec.ValidationError as exc:
        return CheckResult(False, f"final state is malformed: {exc}")
    failures = [_problems(state, initial, final) for state in states]
    if any(not f for f in failures):
        return CheckResult(True)
    defect = unreachable(task)
    why = "; ".join(min(failures, key=len))
    if defect:
        why = f"unreachable expected state ({defect}): {why}"
    return CheckResult(False, why, defect)


def _plain_orders(final_state: dict[str, Any]) -> dict[str, Any]:
    """The end state with its orders in the typed view's shape: a place given as
    ``[address, longitude, latitude]`` (the tools' end state) becomes an object, and a text
    field upstream leaves null (a note, a dispatch time) becomes empty."""
    orders = final_state.get("orders")
    if not isinstance(orders, dict):
        return final_state
    plain = {}
    for key, order in orders.items():
        if isinstance(order, dict):
            order = {k: v for k, v in order.items()
                     if v is not None or k not in ("note", "dispatch_time", "delivery_time")}
            place = order.get("location")
            if isinstance(place, list) and len(place) == 3:
                order["location"] = dict(zip(("address", "longitude", "latitude"), place))
        plain[key] = order
    return {**final_state, "orders": plain}


def _problems(state: ExpectedState, initial: Database, final: _Final) -> list[str]:
    problems = _initial_order_problems(state, initial.orders, final.orders)
    created = [o for oid, o in final.orders.items() if oid not in initial.orders]
    problems += _created_problems(
        [e.order for e in state.required if e.initial_id is None], created, state.optional,
        _order_diffs, "order", lambda o: f"store {o.store_id} ({_goods(o)})")
    for kind, table, wanted, optional, diffs in (
            ("booking", "books", state.books, state.optional_books, _book_diffs),
            ("reservation", "reservations", state.reservations, state.optional_reservations,
             _reservation_diffs)):
        before, after = getattr(initial, table), getattr(final, table)
        tied = {e.initial_id: e.record for e in wanted if e.initial_id}
        for rid, old in before.items():
            if rid not in after:
                problems.append(f"{kind} {rid}: missing from the final state")
            elif rid in tied:
                problems += [f"{kind} {rid}: {d}" for d in diffs(tied[rid], after[rid], shop=False)]
            else:
                problems += [f"{kind} {rid} should be unchanged: {d}"
                             for d in diffs(old, after[rid], shop=False)]
        new = [e.record for e in wanted if not e.initial_id]
        problems += _created_problems(new, [r for rid, r in after.items() if rid not in before],
                                      optional, diffs, kind, lambda r: f"shop {r.shop_id}")
    return problems


def _initial_order_problems(state: ExpectedState, initial: dict[str, Order],
                            final: dict[str, Order]) -> list[str]:
    problems = []
    tied = {e.initial_id: e.order for e in state.required if e.initial_id}
    for oid, before in initial.items():
        after = final.get(oid)
        if after is None:
            problems.append(f"order {oid}: missing from the final state")
        elif oid in tied:
            expected = tied[oid]
            diffs = _changeable_diffs(expected, after)
            if after.order_type in MOVABLE:
                diffs += _product_diffs(expected, after)
            problems += [f"order {oid}: {d}" for d in diffs]
        elif not (oid in state.replaced and status_class(after.status) == "cancelled"):
            diffs = _changeable_diffs(before, after, any_note=True)
            if after.order_type in MOVABLE:
                diffs += _product_diffs(before, after)
            problems += [f"order {oid} should be unchanged: {d}" for d in diffs]
    return problems


def _created_problems(wanted: Sequence[Any], created: Sequence[Any], optional: Sequence[Any],
                      diff: Callable[..., list[str]], kind: str,
                      describe: Callable[[Any], str]) -> list[str]:
    """Wanted new records matched one to one with created ones; leftovers must be optional."""
    problems = []
    diffs = [[diff(w, c) for c in created] for w in wanted]
    matched = _match(diffs)
    explained = set(matched.values())
    for i, w in enumerate(wanted):
        if i in matched:
            continue
        spare = [j for j in range(len(created)) if j not in explained]
        if not spare:
            problems.append(f"missing {kind} for {describe(w)}")
            continue
        j = min(spare, key=lambda j: len(diffs[i][j]))
        explained.add(j)
        problems.append(f"{kind} {_id(w)} (closest: {_id(created[j])}): " + ", ".join(diffs[i][j]))
    left = [c for j, c in enumerate(created) if j not in explained]
    fits = _match([[diff(o, c) for c in left] for o in optional]).values()
    problems += [f"unexpected {kind} {_id(c)} ({describe(c)})" for j, c in enumerate(left) if j not in fits]
    return problems


def _id(record: Any) -> str:
    for name in ("order_id", "book_id", "reservation_id"):
        if hasattr(record, name):
            return getattr(record, name)
    return "?"


def _match(diffs: list[list[list[str]]]) -> dict[int, int]:
    """A maximum matching of rows to columns over cells without differences (Kuhn)."""
    owner: dict[int, int] = {}

    def claim(i: int, seen: set[int]) -> bool:
        for j, d in enumerate(diffs[i]):
            if d or j in seen:
                continue
            seen.add(j)
            if j not in owner or claim(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(diffs)):
        claim(i, set())
    return {i: j for j, i in owner.items()}


def _fold(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


@functools.lru_cache(maxsize=4096)  # a task's few spec texts, compared in every episode's check
def _spec(attributes: str) -> tuple[str, ...]:
    return tuple(sorted(p for p in (_fold(x) for x in re.split(r"[,，、;；]", attributes)) if p))


def _status_diff(expected: Any, got: Any) -> list[str]:
    want = status_class(expected.status)
    if status_class(got.status) == want:
        return []
    return [f"status expected {expected.status!r} (class {want}), got {got.status!r}"]


def _note_diff(expected: Order, got: Order, *, any_note: bool = False) -> list[str]:
    if (any_note or _fold(expected.note)) and _fold(expected.note) != _fold(got.note):
        return [f"note expected {expected.note!r}, got {got.note!r}"]
    return []


def _changeable_diffs(expected: Order, got: Order, *, any_note: bool = False) -> list[str]:
    return _status_diff(expected, got) + _note_diff(expected, got, any_note=any_note)


def _same(name: str, expected: Any, got: Any) -> list[str]:
    return [] if expected == got else [f"{name} expected {expected!r}, got {got!r}"]


def _order_diffs(expected: Order, got: Order) -> list[str]:
    out = _same("order_type", expected.order_type, got.order_type)
    out += _same("store_id", expected.store_id, got.store_id)
    want_address = expected.location.address if expected.location else ""
    got_address = got.location.address if got.location else ""
    if _fold(want_address) != _fold(got_address):
        out.append(f"address expected {want_address!r}, got {got_address!r}")
    if expected.dispatch_time.strip() and expected.dispatch_time.strip() != got.dispatch_time.strip():
        out.append(f"dispatch_time expected {expected.dispatch_time.strip()!r}, got {got.dispatch_time!r}")
    return out + _product_diffs(expected, got) + _note_diff(expected, got) + _status_diff(expected, got)


def _book_diffs(expected: Book, got: Book, *, shop: bool = True) -> list[str]:
    out = _same("shop_id", expected.shop_id, got.shop_id) if shop else []
    out += _same("book_time", expected.book_time.strip(), got.book_time.strip())
    out += _same("customer_count", expected.customer_count, got.customer_count)
    return out + _status_diff(expected, got)


def _reservation_diffs(expected: Reservation, got: Reservation, *, shop: bool = True) -> list[str]:
    out = _same("shop_id", expected.shop_id, got.shop_id) if shop else []
    out += _same("reservation_time", expected.reservation_time.strip(), got.reservation_time.strip())
    out += _same("customer_count", expected.customer_count, got.customer_count)
    return out + _status_diff(expected, got)


Line = tuple[str, str, tuple[str, ...]]  # product, date, attributes


def _lines(order: Order) -> Counter[Line]:
    lines: Counter[Line] = Counter()
    for p in order.products:
        lines[(p.product_id, p.date.strip(), _spec(p.attributes))] += p.quantity
    return lines


def _product_diffs(expected: Order, got: Order) -> list[str]:
    want, have = _lines(expected), _lines(got)
    if want == have:
        return []
    out, seen = [], set()
    for i, p in enumerate(expected.products):
        key = (p.product_id, p.date.strip(), _spec(p.attributes))
        if key in seen:
            continue
        seen.add(key)
        others = [k for k in have if k[0] == p.product_id and k not in want]
        if key in have:
            if have[key] != want[key]:
                out.append(f"products[{i}].quantity expected {want[key]}, got {have[key]}")
        elif others and others[0][1] != key[1]:
            out.append(f"products[{i}].date expected {p.date!r}, got {others[0][1]!r}")
        elif others:
            out.append(f"products[{i}].attributes expected {p.attributes!r}, got {', '.join(others[0][2])!r}")
        else:
            out.append(f"products[{i}].product_id {p.product_id} missing")
    wanted_ids = {k[0] for k in want}
    extra = sorted({k[0] for k in have if k[0] not in wanted_ids})
    if extra:
        out.append(f"products: unexpected {', '.join(extra)}")
    return out


def _goods(order: Order) -> str:
    return ", ".join(f"{p.quantity} x {p.product_id}" + (f" on {p.date}" if p.date else "")
                     + (f" [{p.attributes}]" if p.attributes else "") for p in order.products)
