"""The deterministic VitaBench check: did the episode end in the task's expected state?

A task lists expected states (alternatives; the episode passes if it matches any). Each names
required orders, which are either orders of the initial state or orders the agent must create
(``tools.vitabench.db.expected_states`` decides which, repairing the data's slips):

- An initial order is found by its id and judged on what tools can change about it: its
  status class, and its note when the expected note is not empty.
- A new order is matched, by content, to one order the agent created (ids are generated and
  times are the task's clock, so neither is compared). Compared: order type, store, delivery
  address, products as a multiset of (product, attributes) with summed quantities, status
  class, and the dispatch time and note when the expected value is not empty.
- Every other initial order must keep its status class and note, except one the expected state
  names with other content (a replaced order), which may also end cancelled.
- Every other created order must match an optional order, or the check fails.

The user id is not compared: ``create_delivery_order`` refuses any user but the task's, and one
published task (90714001) expects another user's id by mistake. Status is compared by class
(``STATUS_CLASS``) because tools can only pay or cancel, while expected states say "processed",
"in-progress" or "delivered" for orders the agent paid. Text is compared after folding case
and whitespace; attributes also ignore the order of comma-separated parts.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import msgspec
from msgspec import Struct

from ..datasets.task import Task, TaskError
from ..tools.vitabench.db import Database, ExpectedState, Order, expected_states, status_class


class CheckResult(Struct):
    passed: bool
    why: str | None = None  # for a failure: which field of which order differs
    # Set when no sequence of tool calls can reach any expected state (a defect of the task
    # data, e.g. an expected product that is on no store's menu): the failure is the data's.
    unreachable: str | None = None


def check_vitabench(task: Task, final_state: dict[str, Any]) -> CheckResult:
    try:
        initial = Database.from_task(task).orders
        states = expected_states(task, initial)
    except TaskError as exc:
        return CheckResult(False, f"task cannot be checked: {exc}")
    if not states:
        return CheckResult(False, "task has no expected state to check")
    if not isinstance(final_state, dict) or "orders" not in final_state:
        return CheckResult(False, "no final state: the episode ended before one was recorded")
    try:
        final = msgspec.convert(final_state["orders"], dict[str, Order], strict=False)
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


def unreachable(task: Task) -> str | None:
    """Why no agent can reach any expected state of ``task``, or None when one is reachable.

    A new order can only be created from a store and products in the task's own database; an
    expected state that needs anything else is a defect of the data, reported as such.
    """
    try:
        db = Database.from_task(task)
        states = expected_states(task, db.orders)
    except TaskError as exc:
        return f"task cannot be checked: {exc}"
    reasons = []
    for state in states:
        missing = []
        for e in state.required:
            if e.initial_id is not None:
                continue
            store = db.stores.get(e.order.store_id)
            menu = {p.product_id for p in store.products} if store else set()
            if store is None:
                missing.append(f"store {e.order.store_id} is not in the task's database")
            missing += [f"product {p.product_id} is on no menu of store {e.order.store_id}"
                        for p in e.order.products if p.product_id not in menu]
        if not missing:
            return None
        reasons.append("; ".join(missing))
    return min(reasons, key=len) if reasons else None


def _problems(state: ExpectedState, initial: dict[str, Order], final: dict[str, Order]) -> list[str]:
    created = [o for oid, o in final.items() if oid not in initial]
    return _initial_problems(state, initial, final) + _created_problems(state, created)


def _initial_problems(state: ExpectedState, initial: dict[str, Order],
                      final: dict[str, Order]) -> list[str]:
    problems = []
    tied = {e.initial_id for e in state.required if e.initial_id}
    for oid, before in initial.items():
        after = final.get(oid)
        if after is None:
            problems.append(f"order {oid}: missing from the final state")
        elif oid in tied:
            expected = next(e.order for e in state.required if e.initial_id == oid)
            problems += [f"order {oid}: {d}" for d in _changeable_diffs(expected, after)]
        elif not (oid in state.replaced and status_class(after.status) == "cancelled"):
            problems += [f"order {oid} should be unchanged: {d}"
                         for d in _changeable_diffs(before, after, any_note=True)]
    return problems


def _created_problems(state: ExpectedState, created: list[Order]) -> list[str]:
    """New expected orders matched one to one with created orders; leftovers must be optional."""
    problems = []
    wanted = [e.order for e in state.required if e.initial_id is None]
    diffs = [[_content_diffs(w, c) for c in created] for w in wanted]
    matched = _match(diffs)
    explained = set(matched.values())
    for i, w in enumerate(wanted):
        if i in matched:
            continue
        spare = [j for j in range(len(created)) if j not in explained]
        if not spare:
            problems.append(f"missing order for store {w.store_id} ({_goods(w)})")
            continue
        j = min(spare, key=lambda j: len(diffs[i][j]))
        explained.add(j)
        problems.append(f"order {w.order_id} (closest: {created[j].order_id}): " + ", ".join(diffs[i][j]))

    left = [c for j, c in enumerate(created) if j not in explained]
    optional = _match([[_content_diffs(o, c) for c in left] for o in state.optional]).values()
    problems += [f"unexpected order {c.order_id} (store {c.store_id}, {_goods(c)})"
                 for j, c in enumerate(left) if j not in optional]
    return problems


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


def _spec(attributes: str) -> tuple[str, ...]:
    return tuple(sorted(p for p in (_fold(x) for x in re.split(r"[,，、;；]", attributes)) if p))


def _status_diff(expected: Order, got: Order) -> list[str]:
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


def _content_diffs(expected: Order, got: Order) -> list[str]:
    out = []
    for name in ("order_type", "store_id"):
        if getattr(expected, name) != getattr(got, name):
            out.append(f"{name} expected {getattr(expected, name)!r}, got {getattr(got, name)!r}")
    want_address = expected.location.address if expected.location else ""
    got_address = got.location.address if got.location else ""
    if _fold(want_address) != _fold(got_address):
        out.append(f"address expected {want_address!r}, got {got_address!r}")
    if expected.dispatch_time.strip() and expected.dispatch_time.strip() != got.dispatch_time.strip():
        out.append(f"dispatch_time expected {expected.dispatch_time.strip()!r}, got {got.dispatch_time!r}")
    return out + _product_diffs(expected, got) + _note_diff(expected, got) + _status_diff(expected, got)


def _lines(order: Order) -> Counter[tuple[str, tuple[str, ...]]]:
    lines: Counter[tuple[str, tuple[str, ...]]] = Counter()
    for p in order.products:
        lines[(p.product_id, _spec(p.attributes))] += p.quantity
    return lines


def _product_diffs(expected: Order, got: Order) -> list[str]:
    want, have = _lines(expected), _lines(got)
    if want == have:
        return []
    out, seen = [], set()
    for i, p in enumerate(expected.products):
        key = (p.product_id, _spec(p.attributes))
        if key in seen:
            continue
        seen.add(key)
        other_specs = [k for k in have if k[0] == p.product_id and k not in want]
        if key in have:
            if have[key] != want[key]:
                out.append(f"products[{i}].quantity expected {want[key]}, got {have[key]}")
        elif other_specs:
            out.append(f"products[{i}].attributes expected {p.attributes!r}, "
                       f"got {', '.join(other_specs[0][1])!r}")
        else:
            out.append(f"products[{i}].product_id {p.product_id} missing")
    wanted_ids = {k[0] for k in want}
    extra = sorted({k[0] for k in have if k[0] not in wanted_ids})
    if extra:
        out.append(f"products: unexpected {', '.join(extra)}")
    return out


def _goods(order: Order) -> str:
    return ", ".join(f"{p.quantity} x {p.product_id}" + (f" [{p.attributes}]" if p.attributes else "")
                     for p in order.products)
