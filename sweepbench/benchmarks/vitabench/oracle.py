"""The VitaBench gold plan, and how the noisy agent spoils one of its steps.

The plan takes the initial state to the task's first reachable expected state: it settles the
initial records the state names (edit, re-date, pay, cancel), then creates each new record
(order, table booking, reservation) and pays or cancels it as its status class says. Each
write is preceded by a look, as an agent would look before acting. A replaced initial order is
left alone (the check accepts it untouched or cancelled).

The tools answer in upstream's text, not JSON, so a step cannot take a new record's id from
an earlier step's answer. It does not need to: ids are a function of the user and the number
of records created so far (``state.record_id``), so the plan knows the id each of its
creations will get, as an agent reads it from the answer.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from sweepbench.benchmarks.vitabench.tools.db import (
    TIME_FORMAT,
    Book,
    Database,
    Order,
    Reservation,
    status_class,
)
from sweepbench.benchmarks.vitabench.tools.expected import expected_states
from sweepbench.benchmarks.vitabench.tools.reachability import missing_for
from sweepbench.benchmarks.vitabench.tools.state import record_id
from sweepbench.datasets.task import Task
from sweepbench.simulator.scripted.plan import Step

TRAVEL = ("hotel", "attraction", "flight", "train")
_PRODUCT_ARG = {"hotel": "room_id", "attraction": "ticket_id", "flight": "seat_id", "train": "seat_id"}
_ID_PREFIX = {"delivery": "OT", "instore": "OI", **{kind: "OO" for kind in TRAVEL}}


class _NewIds:
    """The ids the tools will give the records the plan creates, in the plan's order."""

    def __init__(self, db: Database) -> None:
        self.user_id, self.count = db.user_id, 0
        self.taken = {*db.orders, *db.books, *db.reservations}

    def next(self, prefix: str) -> str:
        while True:
            self.count += 1
            new = record_id(prefix, self.user_id, self.count)
            if new not in self.taken:
                self.taken.add(new)
                return new


def gold_plan(task: Task) -> list[Step]:
    db = Database.from_task(task)
    states = expected_states(task, db)
    if not states:
        return []
    state = next((s for s in states if not missing_for(db, s)), states[0])
    steps: list[Step] = []
    ids = _NewIds(db)
    for e in state.required:
        if e.initial_id is not None:
            steps += _settle_order(db, db.orders[e.initial_id], e.order)
    for b in state.books:
        if b.initial_id is not None:
            steps += _settle_booking(db, db.books[b.initial_id], b.book)
    for r in state.reservations:
        if r.initial_id is not None:
            steps += _settle_reservation(db, db.reservations[r.initial_id], r.reservation)
    for e in state.required:
        if e.initial_id is None:
            steps += _create_order(db, e.order, ids)
    for b in state.books:
        if b.initial_id is None:
            steps += _create_booking(db, b.book, ids)
    for r in state.reservations:
        if r.initial_id is None:
            steps += _create_reservation(db, r.reservation, ids)
    return steps


# ---- tool names by order type ------------------------------------------------------------


def _pay_tool(kind: str) -> str:
    return {"delivery": "pay_delivery_order", "instore": "pay_instore_order"}.get(kind, f"pay_{kind}_order")


def _cancel_tool(kind: str) -> str:
    return {"delivery": "cancel_delivery_order", "instore": "instore_cancel_order"}.get(
        kind, f"cancel_{kind}_order")


def _look_tool(kind: str) -> str:
    return {"delivery": "get_delivery_order_detail", "instore": "get_instore_orders"}.get(
        kind, f"get_{kind}_order_detail")


def _cancel_args(db: Database, kind: str, order_id: Any) -> dict:
    return {"order_id": order_id, "user_id": db.user_id} if kind in TRAVEL else {"order_id": order_id}


def _look_args(db: Database, kind: str, order_id: Any) -> dict:
    return {"user_id": db.user_id} if kind == "instore" else {"order_id": order_id}


# ---- initial records ---------------------------------------------------------------------


def _settle_order(db: Database, before: Order, want: Order) -> list[Step]:
    """Steps that give an initial order the expected note, date and status class."""
    kind, oid, steps = before.order_type, before.order_id, []
    have = status_class(before.status)
    if kind == "delivery" and want.note.strip() and want.note.strip() != before.note.strip():
        steps.append(Step(tool="modify_delivery_order", arguments={"order_id": oid, "note": want.note.strip()},
                          note=f"I'll update the note on order {oid}."))
    new_date = want.products[0].date if len(want.products) == 1 else ""
    if kind in ("flight", "train") and before.products and new_date and new_date != before.products[0].date:
        steps.append(Step(tool=f"modify_{kind}_order",
                          arguments={"order_id": oid, "user_id": db.user_id, "new_date": new_date},
                          note=f"I'll move order {oid} to {new_date}."))
        if _redate_costs_more(db, before, new_date):
            have = "unpaid"
    goal = status_class(want.status)
    if goal != have and goal == "cancelled":
        steps.append(Step(tool=_cancel_tool(kind), arguments=_cancel_args(db, kind, oid),
                          note=f"I'll cancel order {oid}."))
    elif goal != have and (have, goal) == ("unpaid", "paid"):
        steps.append(Step(tool=_pay_tool(kind), arguments={"order_id": oid},
                          note=f"I'll pay order {oid}."))
    if not steps:
        return []
    return [Step(tool=_look_tool(kind), arguments=_look_args(db, kind, oid),
                 note=f"Let me look up order {oid}."), *steps]


def _redate_costs_more(db: Database, order: Order, new_date: str) -> bool:
    vehicle = (db.flights if order.order_type == "flight" else db.trains).get(order.store_id)
    old = order.products[0]
    new = next((p for p in vehicle.products if p.date == new_date and p.seat_type == old.seat_type),
               None) if vehicle else None
    return new is not None and new.price > old.price


def _settle_booking(db: Database, before: Book, want: Book) -> list[Step]:
    ref = {"book_id": before.book_id}
    have, goal = status_class(before.status), status_class(want.status)
    if goal == have:
        return []
    look = Step(tool="search_instore_book", arguments={"user_id": db.user_id, **ref},
                note=f"Let me look up booking {before.book_id}.")
    if goal == "cancelled":
        return [look, Step(tool="instore_cancel_book", arguments=ref, note="I'll cancel the booking.")]
    return [look, Step(tool="pay_instore_book", arguments=ref, note="I'll pay the booking fee.")]


def _settle_reservation(db: Database, before: Reservation, want: Reservation) -> list[Step]:
    rid = before.reservation_id
    steps = []
    if (want.reservation_time.strip(), want.customer_count) != (before.reservation_time, before.customer_count):
        steps.append(Step(tool="instore_modify_reservation", arguments={
            "reservation_id": rid, "time": want.reservation_time.strip(),
            "customer_count": want.customer_count}, note=f"I'll change reservation {rid}."))
    if status_class(want.status) == "cancelled" != status_class(before.status):
        steps.append(Step(tool="instore_cancel_reservation", arguments={"reservation_id": rid},
                          note=f"I'll cancel reservation {rid}."))
    if not steps:
        return []
    return [Step(tool="search_instore_reservation", arguments={"user_id": db.user_id, "reservation_id": rid},
                 note=f"Let me look up reservation {rid}."), *steps]


# ---- new records -------------------------------------------------------------------------


def _create_order(db: Database, want: Order, ids: _NewIds) -> list[Step]:
    """Look at the seller, create the order, then pay or cancel it."""
    kind = want.order_type
    if kind == "instore":
        product = want.products[0]
        name = next((p.name for s in db.shops.values() for p in s.products
                     if p.product_id == product.product_id), product.name or product.product_id)
        look = Step(tool="instore_product_search_recommend", arguments={"keywords": [name]},
                    note="Let me find that package.")
        create = Step(tool="create_instore_product_order", arguments={
            "user_id": db.user_id, "shop_id": want.store_id, "product_id": product.product_id,
            "quantity": product.quantity}, note="I'll place the order.")
    elif kind in TRAVEL:
        product = want.products[0]
        look = Step(tool=f"get_ota_{kind}_info", arguments={f"{kind}_id": want.store_id},
                    note=f"Let me look at the {kind}.")
        args = {f"{kind}_id": want.store_id, _PRODUCT_ARG[kind]: product.product_id, "user_id": db.user_id}
        if kind != "hotel":
            args.update(date=product.date, quantity=product.quantity)
        create = Step(tool=f"create_{kind}_order", arguments=args, note="I'll place the order.")
    else:
        look = Step(tool="get_delivery_store_info", arguments={"store_id": want.store_id},
                    note="Let me look at the store's menu.")
        create = Step(tool="create_delivery_order", arguments={
            "user_id": db.user_id,
            "store_id": want.store_id,
            "product_ids": [p.product_id for p in want.products],
            "product_cnts": [p.quantity for p in want.products],
            "address": want.location.address if want.location else "",
            "dispatch_time": want.dispatch_time.strip() or db.time,
            "attributes": [p.attributes for p in want.products],
            "note": want.note.strip(),
        }, note="I'll place the order.")
    created = ids.next(_ID_PREFIX[kind])
    steps = [look, create]
    goal = status_class(want.status)
    if goal == "paid":
        steps.append(Step(tool=_pay_tool(kind), arguments={"order_id": created},
                          note="I'll pay for the order."))
    elif goal == "cancelled":
        steps.append(Step(tool=_cancel_tool(kind), arguments=_cancel_args(db, kind, created),
                          note="I'll cancel that order."))
    return steps


def _shop_look(db: Database, shop_id: str) -> Step:
    shop = db.shops.get(shop_id)
    return Step(tool="instore_shop_search_recommend", arguments={"keywords": [shop.shop_name if shop else shop_id]},
                note="Let me look at the shop.")


def _create_booking(db: Database, want: Book, ids: _NewIds) -> list[Step]:
    created = ids.next("OI")
    steps = [_shop_look(db, want.shop_id), Step(tool="instore_book", arguments={
        "user_id": db.user_id, "shop_id": want.shop_id, "time": want.book_time.strip(),
        "customer_count": want.customer_count}, note="I'll book the table.")]
    shop = db.shops.get(want.shop_id)
    goal = status_class(want.status)
    if goal == "paid" and shop is not None and shop.book_price > 0:
        steps.append(Step(tool="pay_instore_book", arguments={"book_id": created}, note="I'll pay the booking fee."))
    elif goal == "cancelled":
        steps.append(Step(tool="instore_cancel_book", arguments={"book_id": created}, note="I'll cancel it."))
    return steps


def _create_reservation(db: Database, want: Reservation, ids: _NewIds) -> list[Step]:
    created = ids.next("OI")
    steps = [_shop_look(db, want.shop_id), Step(tool="instore_reservation", arguments={
        "user_id": db.user_id, "shop_id": want.shop_id, "time": want.reservation_time.strip(),
        "customer_count": want.customer_count}, note="I'll make the reservation.")]
    if status_class(want.status) == "cancelled":
        steps.append(Step(tool="instore_cancel_reservation", note="I'll cancel it.", arguments={
            "reservation_id": created}))
    return steps


# ---- the noisy agent's mistakes ----------------------------------------------------------


def corrupt(step: Step, rng: random.Random, task: Task) -> Step:
    """A wrong version of ``step`` that leaves the end state failing the check: a create with a
    changed field, a pay that cancels, a cancel or a re-date that only looks, an altered note,
    time or party size; a read becomes an order nobody asked for."""
    db = Database.from_task(task)
    args, name = dict(step.arguments), step.tool
    spoiled = None
    if name == "create_delivery_order":
        spoiled = _spoil_delivery(args, rng, db)
    elif name.startswith("create_"):
        spoiled = _spoil_purchase(name, args, rng, db)
    elif name in ("instore_book", "instore_reservation", "instore_modify_reservation"):
        spoiled = _spoil_slot(args, rng)
    elif name == "modify_delivery_order":
        spoiled = {**args, "note": args["note"] + " (and ring twice)"}
    if spoiled is not None:
        return Step(tool=name, arguments=spoiled, note=step.note)
    if name == "pay_instore_book":
        return Step(tool="instore_cancel_book", arguments=args, note=step.note)
    if name.startswith("pay_"):
        kind = name.removeprefix("pay_").removesuffix("_order")
        return Step(tool=_cancel_tool(kind), arguments=_cancel_args(db, kind, args["order_id"]), note=step.note)
    swaps = {"cancel_delivery_order": "get_delivery_order_status", "instore_cancel_book": "search_instore_book",
             "instore_cancel_reservation": "search_instore_reservation", "instore_cancel_order": "get_instore_orders"}
    if name in swaps:
        look = {k: v for k, v in args.items() if k != "order_id"} if name == "instore_cancel_order" else args
        if name != "cancel_delivery_order":
            look = {**look, "user_id": db.user_id}
        return Step(tool=swaps[name], arguments=look, note=step.note)
    if name.startswith(("cancel_", "modify_")):
        kind = name.split("_")[1]
        return Step(tool=f"get_{kind}_order_detail", arguments={"order_id": args["order_id"]}, note=step.note)
    return _unwanted_order(db)


def _spoil_delivery(args: dict, rng: random.Random, db: Database) -> dict:
    ids, counts = list(args["product_ids"]), list(args["product_cnts"])
    i = rng.randrange(len(ids))
    menu = [p.product_id for s in db.stores.values() for p in s.products if p.product_id not in ids]
    stores = [s for s in db.stores if s != args["store_id"]]
    addresses = [a for a in db.places() if a != args["address"]]
    options = {
        "quantity": lambda: {"product_cnts": counts[:i] + [counts[i] + 1] + counts[i + 1:]},
        "attributes": lambda: {"attributes": [a + (" extra hot" if j == i else "")
                                              for j, a in enumerate(args["attributes"])]},
    }
    if menu:
        options["product"] = lambda: {"product_ids": ids[:i] + [rng.choice(menu)] + ids[i + 1:]}
    if stores:
        options["store"] = lambda: {"store_id": rng.choice(stores)}
    if addresses:
        options["address"] = lambda: {"address": rng.choice(addresses)}
    return {**args, **options[rng.choice(sorted(options))]()}


def _spoil_purchase(name: str, args: dict, rng: random.Random, db: Database) -> dict:
    """Another product of the same seller, or one more of it; a hotel books one room, so it
    takes another room."""
    key = next(k for k in ("product_id", "room_id", "ticket_id", "seat_id") if k in args)
    seller_key = next(k for k in args if k.endswith("_id") and k not in (key, "user_id"))
    table = {"shop_id": db.shops, "hotel_id": db.hotels, "attraction_id": db.attractions,
             "flight_id": db.flights, "train_id": db.trains}[seller_key]
    seller = table.get(args[seller_key])
    others = sorted({p.product_id for p in (seller.products if seller else []) if p.product_id != args[key]})
    options = ["product"] if others else []
    if "quantity" in args:
        options.append("quantity")
    if not options:
        return {**args, seller_key: args[seller_key] + "-X"}
    if rng.choice(options) == "quantity":
        return {**args, "quantity": args["quantity"] + 1}
    return {**args, key: rng.choice(others)}


def _spoil_slot(args: dict, rng: random.Random) -> dict:
    if "customer_count" in args and rng.random() < 0.5:
        return {**args, "customer_count": args["customer_count"] + 1}
    later = datetime.strptime(args["time"], TIME_FORMAT) + timedelta(hours=1)
    return {**args, "time": later.strftime(TIME_FORMAT)}


def _unwanted_order(db: Database) -> Step:
    note = "I'll place the order."
    store = next((s for s in db.stores.values() if s.products), None)
    if store is not None:
        return Step(tool="create_delivery_order", arguments={
            "user_id": db.user_id, "store_id": store.store_id,
            "product_ids": [store.products[0].product_id], "product_cnts": [1],
            "address": store.location.address, "dispatch_time": db.time}, note=note)
    shop = next((s for s in db.shops.values() if s.products), None)
    if shop is not None:
        return Step(tool="create_instore_product_order", arguments={
            "user_id": db.user_id, "shop_id": shop.shop_id, "product_id": shop.products[0].product_id,
            "quantity": 1}, note=note)
    for kind in TRAVEL:
        for seller_id, seller in getattr(db, f"{kind}s").items():
            for p in seller.products:
                if p.quantity > 0:
                    args = {f"{kind}_id": seller_id, _PRODUCT_ARG[kind]: p.product_id, "user_id": db.user_id}
                    if kind != "hotel":
                        args.update(date=p.date, quantity=1)
                    return Step(tool=f"create_{kind}_order", arguments=args, note=note)
    return Step(tool="get_user_all_orders", arguments={}, note=note)
