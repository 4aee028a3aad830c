"""Executing a template's plan: every gold call is made through the real tools.

A journey builder decides what the user wants by calling tools through a ``Ctx`` and
reading what they return ("book the first bar listed" reads the search output). The calls
are recorded as the gold sequence exactly as executed, with the arguments that came from an
earlier output marked as references, so the scripted oracle can read them from the
conversation as a model would. A call that fails, or a search that finds nothing to pick
from, raises ``Retry``: the template is rebuilt from scratch with other random choices.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import msgspec

from sweepbench.benchmarks.t1.data.kb import KnowledgeBase
from sweepbench.tools.base import Toolkit


class Retry(Exception):
    """These choices cannot make a valid template; start over with others."""


@dataclass(frozen=True)
class Ref:
    """An argument taken from the output of an earlier call (a dotted path into its JSON)."""

    step: int
    path: str


@dataclass
class Out:
    step: int
    data: dict

    def ref(self, path: str) -> Ref:
        return Ref(self.step, path)

    def get(self, path: str) -> Any:
        value: Any = self.data
        for part in path.split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        return value

    def first(self, key: str = "results") -> dict:
        items = self.data.get(key) or []
        if not items:
            raise Retry(f"step {self.step}: nothing to pick from")
        return items[0]


class Runner:
    """Makes tool calls on one episode state and records them as gold calls."""

    def __init__(self, toolkit: Toolkit, state: Any) -> None:
        self.toolkit, self.state = toolkit, state
        self.gold: list[dict] = []
        self.outs: list[Out] = []

    def call(self, tool: str, **arguments: Any) -> Out:
        arguments = {k: v for k, v in arguments.items() if v is not None}
        refs = {k: [v.step, v.path] for k, v in arguments.items() if isinstance(v, Ref)}
        concrete = {k: (self.outs[v.step].get(v.path) if isinstance(v, Ref) else v) for k, v in arguments.items()}
        outcome = self.toolkit.call(self.state, tool, msgspec.json.encode(concrete))
        if not outcome.ok:
            raise Retry(f"{tool}: {outcome.content}")
        data = msgspec.json.decode(outcome.content)
        if tool.startswith(("search_", "filter_")) and not data.get("total"):
            raise Retry(f"{tool} found nothing")
        self.gold.append({"tool": tool, "arguments": concrete, **({"refs": refs} if refs else {})})
        out = Out(len(self.outs), data)
        self.outs.append(out)
        return out


@dataclass
class Ctx:
    """What a journey builder works with: the KB, the runner, randomness, the user, the trip."""

    kb: KnowledgeBase
    run: Runner
    rng: random.Random
    user: dict
    day: date
    city: int | None = None  # the trip's city when several journeys share one
    notes: dict = field(default_factory=dict)

    def call(self, tool: str, **arguments: Any) -> Out:
        return self.run.call(tool, **arguments)

    def where(self, city: int) -> tuple[str, str]:
        cities = self.kb["cities"]
        return cities.string("name", city), cities.string("state", city)

    def choose_city(self, table: str, minimum: int = 5) -> int:
        """The trip city if there is one, else a city with enough rows, bigger ones likelier."""
        if self.city is not None:
            return self.city
        counts = [len(self.kb.group(table, "city", c)) for c in range(self.kb["cities"].n)]
        eligible = [c for c, n in enumerate(counts) if n >= minimum]
        return self.rng.choices(eligible, weights=[counts[c] for c in eligible])[0]

    def rows_in(self, table: str, city: int) -> list[int]:
        return [int(r) for r in self.kb.group(table, "city", city)]

    def target(self, table: str, minimum: int = 5) -> tuple[int, int, str, str]:
        """A city, a random row of ``table`` in it, and the city's name and state."""
        c = self.choose_city(table, minimum)
        rows = self.rows_in(table, c)
        if not rows:
            raise Retry(f"no {table} in city {c}")
        return c, self.rng.choice(rows), *self.where(c)

    def true_flags(self, table: str, r: int, names: tuple[str, ...], k: int, skip: tuple[str, ...] = ()) -> list[str]:
        """Up to ``k`` of the features row ``r`` has: criteria it is sure to match."""
        have = [f for f in names if bool(self.kb[table][f][r]) and f not in skip]
        if not have:
            raise Retry(f"{table} row {r} has no usable features")
        return self.rng.sample(have, min(k, len(have)))

    def hood(self, table: str, r: int) -> str:
        return self.kb[table].string("neighborhood", r)


def phrase(flag: str) -> str:
    """has_happy_hour -> 'happy hour'; is_automatic -> 'automatic'."""
    for prefix in ("has_", "is_", "accepts_", "allows_"):
        if flag.startswith(prefix):
            flag = flag[len(prefix):]
    return flag.replace("_", " ")


def listing(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def wanting(flags: list[str]) -> str:
    """Feature flags as a clause: 'with happy hour and live music', 'that are automatic'."""
    being = [phrase(f) for f in flags if f.startswith("is_") or f in ("halal", "kosher", "shellfish_free")]
    verbs = [f"that {f.split('_')[0].rstrip('s')} {phrase(f)}" for f in flags if f.startswith(("accepts_", "allows_"))]
    having = [phrase(f) for f in flags if phrase(f) not in being and not f.startswith(("accepts_", "allows_"))]
    parts = ([f"with {listing(having)}"] if having else []) + ([f"that are {listing(being)}"] if being else []) + verbs
    return " and ".join(parts)


def natural_date(d: date) -> str:
    return f"{d:%B} {d.day}, {d.year}"


def natural_time(hhmm: str) -> str:
    h, m = (int(x) for x in hhmm.split(":"))
    return f"{(h - 1) % 12 + 1}:{m:02d} {'AM' if h < 12 else 'PM'}"
