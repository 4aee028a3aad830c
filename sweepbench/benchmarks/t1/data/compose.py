"""The 525 templates: which journeys each split strings together, for whom, where and when.

Single-domain splits run each of their domain's 5 scenarios 5 times (variants 0-4).
Multi-domain templates put one journey per domain into a shared trip: one city and one
anchor day (a flight into the city sets both when the split has flights); scenarios rotate
so every journey kind appears. The applied-thinking splits (8 and 11 domains) mostly book.
A template is built by executing it (see ``executor``); choices that fail are redrawn with the
next attempt's random stream, so the result is a pure function of (seed, split, index).
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta

import numpy as np

from sweepbench.benchmarks.t1.data import journeys_travel as jt
from sweepbench.benchmarks.t1.data import journeys_venues as jv
from sweepbench.benchmarks.t1.data.executor import (
    Ctx,
    Retry,
    Runner,
    listing,
    natural_date,
)
from sweepbench.benchmarks.t1.data.kb import GENERATOR_VERSION, KnowledgeBase
from sweepbench.benchmarks.t1.data.splits import SPLITS, Split
from sweepbench.benchmarks.t1.data.synth import TODAY
from sweepbench.benchmarks.t1.tools import DEFAULT_CLOCK, toolkit_for
from sweepbench.benchmarks.t1.tools.state import Episode
from sweepbench.datasets.task import Task

TEMPLATE_VERSION = 1  # bump when journeys or tool behaviour change what a template's gold calls are
MAX_ATTEMPTS = 200
TRANSACTIONAL = ("search", "filter", "book", "modify", "cancel")
SCENARIOS = {"attraction": ("search", "filter", "details", "nearby", "top"),
             "cafe": ("search", "filter", "order", "status", "cancel"),
             "dessert": ("search", "filter", "order", "status", "cancel")}
JOURNEYS = {"attraction": jv.attraction, "bar": jv.bar, "cafe": jv.cafe, "dessert": jv.dessert,
            "food_and_dining": jv.food_and_dining, "kayak_rental": jv.kayak_rental, "cruise": jt.cruise,
            "flight": jt.flight, "hotel": jt.hotel, "live_show": jt.live_show, "vehicle_rental": jt.vehicle_rental}
PERSONAS = {
    "attraction": "You are a visitor who wants to know what is worth seeing in a city.",
    "bar": "You are out for an evening and want a bar that suits you, reserved without fuss.",
    "cafe": "You want a good coffee or bubble tea nearby and like to order ahead.",
    "cruise": "You are thinking about a cruise holiday and want to compare sailings before committing.",
    "dessert": "You have a sweet tooth and want to find and order desserts from a good shop.",
    "flight": "You need a flight and want to book it quickly through an online travel service.",
    "food_and_dining": "You are deciding where to eat: a table, a pickup order or a delivery.",
    "hotel": "You are looking for a convenient, reliable online hotel booking service.",
    "kayak_rental": "You want to get out on the water and rent a kayak, canoe or paddleboard.",
    "live_show": "You want to catch a live show and get good seats.",
    "vehicle_rental": "You need a vehicle for a few days and want to rent one easily.",
}
NOUNS = {"attraction": "sightseeing", "bar": "a night out", "cafe": "coffee", "cruise": "a cruise",
         "dessert": "desserts", "flight": "a flight", "food_and_dining": "dining", "hotel": "a hotel",
         "kayak_rental": "time on the water", "live_show": "a live show", "vehicle_rental": "a rental vehicle"}
MIN_ROWS = {"attractions": 4, "live_shows": 2, "hotels": 3, "restaurants": 20}
TABLE_OF = {"attraction": "attractions", "bar": "bars", "cafe": "cafes", "dessert": "dessert_shops",
            "food_and_dining": "restaurants", "hotel": "hotels", "kayak_rental": "kayak_rentals",
            "live_show": "live_shows", "vehicle_rental": "vehicles"}
WRITE_PREFIXES = ("book_", "place_", "modify_", "cancel_")


def plan(split: Split, index: int) -> list[tuple[str, str, int]]:
    """(domain, scenario, variant) for each journey of template ``index`` of ``split``."""
    out = []
    for j, d in enumerate(split.domains):
        names = SCENARIOS.get(d, TRANSACTIONAL)
        if split.tier == "single":
            out.append((d, names[index // 5], index % 5))
        elif split.tier in ("8-domain", "11-domain"):
            out.append((d, names[1] if (index + j) % 3 == 0 else names[2], (index + j) % 5))
        else:
            out.append((d, names[(index + j) % 5], (index // 5 + j) % 5))
    return out


def eligible_users(kb: KnowledgeBase) -> list[int]:
    """Users every journey can serve: adults of 25+, with a driver's license and a passport."""
    u = kb["users"]
    cutoff = TODAY - np.timedelta64(25 * 366, "D")
    ok = u["has_drivers_license"] & u["has_passport"] & (u["birthdate"] <= cutoff)
    return [int(i) for i in np.nonzero(ok)[0]]


def user_profile(kb: KnowledgeBase, i: int) -> dict:
    u, cities = kb["users"], kb["cities"]
    cards = [{"brand": u.string(b, i), "last_four": u.string(f, i)}
             for b, f in (("card_brand", "card_last_four"), ("second_card_brand", "second_card_last_four"))
             if u.string(f, i)]
    c = int(u["city"][i])
    return {"user_id": u.ident(i), "first_name": u.string("first_name", i), "last_name": u.string("last_name", i),
            "email": u.string("email", i), "city": cities.string("name", c), "state": cities.string("state", c),
            "neighborhood": u.string("neighborhood", i), "birthdate": str(u["birthdate"][i]),
            "payment_wallet": {"credit_cards": cards, "has_debit_card": bool(u["has_debit_card"][i])},
            "has_drivers_license": bool(u["has_drivers_license"][i]), "has_passport": bool(u["has_passport"][i]),
            "reward_points": int(u["reward_points"][i]), "membership_level": u.string("membership_level", i)}


def _trip(kb: KnowledgeBase, split: Split, rng: random.Random) -> tuple[int | None, date, dict]:
    """The trip's city (None: each journey picks its own), anchor day, and notes for the journeys."""
    if split.tier == "single":
        return None, TODAY.astype(date) + timedelta(days=rng.randint(1, 20)), {}
    cities = set(range(kb["cities"].n))
    for d in split.domains:
        if d in TABLE_OF:
            table = TABLE_OF[d]
            cities &= {c for c in cities if len(kb.group(table, "city", c)) >= MIN_ROWS.get(table, 5)}
    if "flight" in split.domains:
        f, ap = kb["flights"], kb["airports"]
        rows = [int(r) for r in np.nonzero(f["seats_available"] >= 3)[0]
                if int(ap["city"][int(f["destination"][r])]) in cities]
        r = rng.choice(rows)
        return int(ap["city"][int(f["destination"][r])]), date.fromisoformat(str(f["departure_date"][r])), {"flight": r}
    pool = sorted(cities)
    weights = [float(kb["cities"]["population"][c]) ** 0.5 for c in pool]
    return rng.choices(pool, weights)[0], TODAY.astype(date) + timedelta(days=rng.randint(5, 40)), {}


def _goal(kb: KnowledgeBase, city: int | None, day: date, steps: list[str], writes: bool) -> str:
    lines = []
    if city is not None:
        c = kb["cities"]
        lines.append(f"You are planning a trip to {c.string('name', city)}, {c.string('state', city)} "
                     f"around {natural_date(day)}.")
    lines.append("Follow these steps, one per message:")
    steps = steps + ["When everything is done, thank the assistant and end the conversation." if writes else
                     "Then say you need time to think it over and end the conversation without booking anything."]
    lines += [f"{n}. {s}" for n, s in enumerate(steps, 1)]
    return "\n".join(lines)


def build_template(kb: KnowledgeBase, seed: int, split: Split, index: int, users: list[int]) -> Task:
    toolkit = toolkit_for(split.domains)
    clock = DEFAULT_CLOCK
    journeys = plan(split, index)
    for attempt in range(MAX_ATTEMPTS):
        rng = random.Random(f"t1|{seed}|{split.name}|{index}|{attempt}")
        user_row = rng.choice(users)
        profile = user_profile(kb, user_row)
        runner = Runner(toolkit, Episode(kb, datetime.fromisoformat(clock)))
        city, day, notes = _trip(kb, split, rng)
        ctx = Ctx(kb, runner, rng, {"user_id": profile["user_id"],
                                    "name": f"{profile['first_name']} {profile['last_name']}",
                                    "card": profile["payment_wallet"]["credit_cards"][0]["last_four"],
                                    "neighborhood": profile["neighborhood"]}, day, city, notes)
        try:
            steps = [s for d, scenario, variant in journeys for s in JOURNEYS[d](ctx, scenario, variant)]
        except Retry:
            continue
        writes = any(g["tool"].startswith(WRITE_PREFIXES) for g in runner.gold)
        persona = (PERSONAS[split.domains[0]] if split.tier == "single" else
                   f"You are a traveller planning a trip that takes in "
                   f"{listing([NOUNS[d] for d in split.domains])}.")
        return Task(
            id=f"t1-{split.name}-{index + 1:02d}", benchmark="t1", domain=",".join(split.domains),
            instructions=_goal(kb, city, day, steps, writes),
            persona={"persona": persona, "user": profile},
            environment={"time": clock, "user_id": profile["user_id"], "kb_seed": seed},
            evaluation={"gold_calls": runner.gold, "split": split.name, "tier": split.tier,
                        "journeys": [[d, s, v] for d, s, v in journeys],
                        "kb": {"seed": seed, "version": GENERATOR_VERSION, "digest": kb.digest}},
            max_turns=split.max_turns, source=f"generated:t1:seed={seed}:v{TEMPLATE_VERSION}")
    raise RuntimeError(f"could not build T1 template {split.name} #{index + 1} in {MAX_ATTEMPTS} attempts")


def build_all(kb: KnowledgeBase, seed: int) -> list[Task]:
    users = eligible_users(kb)
    return [build_template(kb, seed, s, i, users) for s in SPLITS for i in range(s.templates)]
