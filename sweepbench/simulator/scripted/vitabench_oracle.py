"""The VitaBench gold plan, and how the noisy agent spoils one of its steps.

The plan takes the initial state to the task's first expected state: it edits and pays or
cancels the initial orders the expected state names, then for each order to create it looks
at the store, creates the order and pays or cancels it as its status class says. A replaced
initial order is left alone (the check accepts it untouched or cancelled).
"""

from __future__ import annotations

import random

from ...datasets.task import Task
from ...tools.vitabench.db import Database, Order, expected_states, status_class
from .plan import Step


def gold_plan(task: Task) -> list[Step]:
    db = Database.from_task(task)
    states = expected_states(task, db.orders)
    if not states:
        return []
    steps: list[Step] = []
    for e in states[0].required:
        if e.initial_id is not None:
            steps += _settle(db.orders[e.initial_id], e.order)
    for e in states[0].required:
        if e.initial_id is None:
            steps += _create(db, e.order, len(steps))
    return steps


def _settle(before: Order, want: Order) -> list[Step]:
    """Steps that give an initial order the expected note and status class, after a look."""
    steps = []
    ref = {"order_id": before.order_id}
    if want.note.strip() and want.note.strip() != before.note.strip():
        steps.append(Step(tool="modify_delivery_order", arguments={**ref, "note": want.note.strip()},
                          note=f"I'll update the note on order {before.order_id}."))
    have, goal = status_class(before.status), status_class(want.status)
    if goal != have and goal == "cancelled":
        steps.append(Step(tool="cancel_delivery_order", arguments=ref,
                          note=f"I'll cancel order {before.order_id}."))
    elif goal != have and (have, goal) == ("unpaid", "paid"):
        steps.append(Step(tool="pay_delivery_order", arguments=ref,
                          note=f"I'll pay order {before.order_id}."))
    if not steps:
        return []
    look = Step(tool="get_delivery_order_detail", arguments=ref,
                note=f"Let me look up order {before.order_id}.")
    return [look, *steps]


def _create(db: Database, want: Order, first: int) -> list[Step]:
    """Look at the store, create the order, then pay or cancel it; ``first`` is the index the
    first of these steps will have in the plan."""
    created = {"$from_step": first + 1, "$field": "order_id"}
    steps = [
        Step(tool="get_delivery_store_info", arguments={"store_id": want.store_id},
             note="Let me look at the store's menu."),
        Step(tool="create_delivery_order", arguments={
            "user_id": db.user_id,
            "store_id": want.store_id,
            "product_ids": [p.product_id for p in want.products],
            "product_cnts": [p.quantity for p in want.products],
            "address": want.location.address if want.location else "",
            "dispatch_time": want.dispatch_time.strip() or db.time,
            "attributes": [p.attributes for p in want.products],
            "note": want.note.strip(),
        }, note="I'll place the order."),
    ]
    goal = status_class(want.status)
    if goal == "paid":
        steps.append(Step(tool="pay_delivery_order", arguments={"order_id": created},
                          note="I'll pay for the order."))
    elif goal == "cancelled":
        steps.append(Step(tool="cancel_delivery_order", arguments={"order_id": created},
                          note="I'll cancel that order."))
    return steps


def corrupt(step: Step, rng: random.Random, task: Task) -> Step:
    """A wrong version of ``step`` that leaves the end state failing the check: a create with
    a changed field, a pay that cancels, a cancel that only looks, an altered note; a read
    becomes an order nobody asked for."""
    db = Database.from_task(task)
    args = dict(step.arguments)
    if step.tool == "create_delivery_order":
        return Step(tool=step.tool, arguments=_spoil_order(args, rng, db), note=step.note)
    if step.tool == "pay_delivery_order":
        return Step(tool="cancel_delivery_order", arguments=args, note=step.note)
    if step.tool == "cancel_delivery_order":
        return Step(tool="get_delivery_order_status", arguments=args, note=step.note)
    if step.tool == "modify_delivery_order":
        return Step(tool=step.tool, arguments={**args, "note": args["note"] + " (and ring twice)"},
                    note=step.note)
    return _unwanted_order(db)


def _spoil_order(args: dict, rng: random.Random, db: Database) -> dict:
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


def _unwanted_order(db: Database) -> Step:
    store = next(s for s in db.stores.values() if s.products)
    return Step(tool="create_delivery_order", arguments={
        "user_id": db.user_id, "store_id": store.store_id,
        "product_ids": [store.products[0].product_id], "product_cnts": [1],
        "address": store.location.address, "dispatch_time": db.time,
    }, note="I'll place the order.")
