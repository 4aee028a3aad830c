"""A test-only third benchmark, in the style of tau2-bench's retail domain, as one folder.

It exists to show that adding a benchmark is adding a folder: nothing outside this folder
names it. Tests load it with ``SWEEPBENCH_PLUGINS=<this folder>``. A user wants one order
cancelled (and, in some tasks, another one left alone); the agent has two tools; the
deterministic check compares the orders' end statuses with the task's expectation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from sweepbench.benchmarks.base import Benchmark, Judgment
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError, ToolError
from sweepbench.simulator.scripted.plan import Step
from sweepbench.tools.base import Tool, Toolkit, tool


class Order(msgspec.Struct):
    order_id: str
    item: str
    status: str = "pending"


class Shop(msgspec.Struct):
    orders: dict[str, Order]


@tool("read")
def get_order(db: Shop, order_id: str) -> dict:
    """Look up an order by its id.

    Args:
        order_id: The order's id, such as "#W1001".
    """
    if order_id not in db.orders:
        raise ToolError(f"no order {order_id}")
    return msgspec.to_builtins(db.orders[order_id])


@tool("write")
def cancel_order(db: Shop, order_id: str, reason: str) -> str:
    """Cancel a pending order.

    Args:
        order_id: The order's id.
        reason: Why the user cancels ("no longer needed" or "ordered by mistake").
    """
    order = db.orders.get(order_id)
    if order is None:
        raise ToolError(f"no order {order_id}")
    if order.status != "pending":
        raise ToolError(f"order {order_id} is {order.status}, not pending")
    if reason not in ("no longer needed", "ordered by mistake"):
        raise ToolError(f"unknown reason {reason!r}")
    order.status = "cancelled"
    return f"order {order_id} cancelled"


TOOLKIT = Toolkit(Tool.from_function(f, "retail") for f in (get_order, cancel_order))

_TASKS = [
    {"id": "R1", "cancel": "#W1001", "keep": "#W1002",
     "instructions": "You want order #W1001 cancelled because you no longer need it. "
                     "Order #W1002 must stay."},
    {"id": "R2", "cancel": "#W2001", "keep": None,
     "instructions": "You ordered #W2001 by mistake and want it cancelled."},
    {"id": "R3", "cancel": "#W3002", "keep": "#W3001",
     "instructions": "Cancel order #W3002, you no longer need it. Keep #W3001."},
]


def _task(entry: dict[str, Any]) -> Task:
    orders = {entry["cancel"]: {"order_id": entry["cancel"], "item": "lamp"}}
    if entry["keep"]:
        orders[entry["keep"]] = {"order_id": entry["keep"], "item": "chair"}
    reason = "ordered by mistake" if "mistake" in entry["instructions"] else "no longer needed"
    return Task(id=entry["id"], benchmark="toyretail", domain="retail",
                instructions=entry["instructions"], environment={"orders": orders},
                evaluation={"cancel": entry["cancel"], "reason": reason}, source="toyretail")


class ToyRetail(Benchmark):
    name = "toyretail"
    default_domains = ("retail",)

    def load_tasks(self, domains: tuple[str, ...], *, data_dir: Path | None,
                   lang: str) -> list[Task]:
        if domains != ("retail",):
            raise TaskError(f"toyretail has one domain, retail; not {','.join(domains)}")
        return [_task(e) for e in _TASKS]

    def toolkit(self, task: Task) -> Toolkit:
        return TOOLKIT

    def new_state(self, task: Task) -> Shop:
        return msgspec.convert(task.environment, Shop)

    def final_state(self, state: Shop) -> dict[str, Any]:
        return msgspec.to_builtins(state)

    def check(self, task: Task, record: Any) -> Judgment:
        orders = (record.final_state or {}).get("orders", {})
        want = task.evaluation["cancel"]
        wrong = [o for o, v in orders.items() if (v["status"] == "cancelled") != (o == want)]
        passed = not wrong
        return {"passed": passed, "score": float(passed),
                "details": {"why": None if passed else f"wrong status: {', '.join(wrong)}"}}

    def gold_plan(self, task: Task) -> list[Step]:
        order = task.evaluation["cancel"]
        return [Step(tool="get_order", arguments={"order_id": order}, note="look it up"),
                Step(tool="cancel_order", arguments={"order_id": order,
                                                     "reason": task.evaluation["reason"]},
                     note="cancel it")]

    def corrupt(self, step: Step, rng: Any, task: Task) -> Step:
        return Step(tool=step.tool, arguments={**step.arguments, "order_id": "#W0000"},
                    note="a wrong id")


BENCHMARK = ToyRetail()
