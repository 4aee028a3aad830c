"""T1 tools: search and filter latency over the full knowledge base, and the memory of
1,000 concurrent episode overlays.

Every call goes through ``Toolkit.call`` with JSON arguments, as a model's call does
(decoding, validation, search, rendering the first page, caching the result set). Searches
pick a random domain, a random city (weighted by how many rows the city has, as traffic
would be) and one random criterion; each is followed by a filter on its cached results.
Then 1,000 episodes each search, filter and book, and stay alive while RSS is read.
Prints one JSON object as its last line: search_p50_ms, search_p99_ms, filter_p99_ms,
rss_mb_1000_overlays, and the supporting numbers (RSS before the overlays, traced KB per
overlay). Run it once the knowledge base is cached (after benchmarks/t1_kb.py or any run):
otherwise the process also holds what the first build allocated.
"""

from __future__ import annotations

import json
import random
import time
import tracemalloc
from datetime import datetime

import msgspec
import numpy as np

from sweepbench.benchmarks.t1.data import ontology as o
from sweepbench.benchmarks.t1.data.kb import knowledge_base
from sweepbench.benchmarks.t1.tools import toolkit_for
from sweepbench.benchmarks.t1.tools.state import Episode

N_CALLS, N_OVERLAYS, TARGET_P99_MS = 3000, 1000, 2.0
SEARCHES = {  # search tool, filter tool, table, feature flags to pick a criterion from
    "bar": ("search_bars", "filter_bars", "bars", o.BAR_FLAGS),
    "cafe": ("search_cafes", "filter_cafes", "cafes", o.CAFE_FLAGS),
    "dessert": ("search_dessert_shops", "filter_dessert_shops", "dessert_shops", o.DESSERT_FLAGS),
    "food_and_dining": ("search_food_and_dining", "filter_food_and_dining", "restaurants",
                        o.FD_DIETARY + o.FD_SERVICES),
    "hotel": ("search_hotel", "filter_hotel", "hotels", o.HOTEL_FLAGS),
    "kayak_rental": ("search_kayak_rentals", "filter_kayak_rentals", "kayak_rentals", o.KAYAK_FLAGS),
    "vehicle_rental": ("search_vehicle_rentals", "filter_vehicle_rentals", "vehicles", o.VEHICLE_FLAGS),
}


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def timed(call) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = call()
    return (time.perf_counter() - t0) * 1000, out


def overlays(kb, toolkit, clock) -> list[Episode]:
    """N_OVERLAYS live episodes, each with a search, a filter and a booking in its overlay."""
    cities, users = kb["cities"], kb["users"]
    out = []
    for i in range(N_OVERLAYS):
        ep = Episode(kb, clock)
        c = i % cities.n
        found = msgspec.json.decode(toolkit.call(ep, "search_bars", msgspec.json.encode(
            {"city": cities.string("name", c), "state": cities.string("state", c)})).content)
        toolkit.call(ep, "filter_bars", msgspec.json.encode({"cache_key": found["cache_key"], "has_happy_hour": True}))
        toolkit.call(ep, "book_bar_reservation", msgspec.json.encode({
            "user_id": users.ident(0), "venue_id": found["results"][0]["venue_id"], "primary_guest_name": "A Guest",
            "number_guests": 2, "event_datetime": "2026-05-02 20:00",
            "credit_card_last_four": users.string("card_last_four", 0), "has_drivers_license": True}))
        out.append(ep)
    return out


def main() -> None:
    kb = knowledge_base()
    toolkit = toolkit_for(o.DOMAINS)
    clock = datetime(2026, 4, 20, 9)
    overlays(kb, toolkit, clock)  # warms the lazily built per-city indexes
    before = rss_mb()
    tracemalloc.start()
    live = overlays(kb, toolkit, clock)
    traced, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    after = rss_mb()

    rng = random.Random(0)
    cities = kb["cities"]
    weights = {d: np.bincount(kb[spec[2]]["city"], minlength=cities.n) for d, spec in SEARCHES.items()}
    search_ms, filter_ms = [], []
    for _ in range(N_CALLS):
        domain = rng.choice(sorted(SEARCHES))
        search, filt, _, flags = SEARCHES[domain]
        c = rng.choices(range(cities.n), weights=weights[domain])[0]
        ep = Episode(kb, clock)
        args = {"city": cities.string("name", c), "state": cities.string("state", c), rng.choice(flags): True}
        ms, out = timed(lambda: toolkit.call(ep, search, msgspec.json.encode(args)))
        search_ms.append(ms)
        key = msgspec.json.decode(out.content)["cache_key"]
        ms, _ = timed(lambda: toolkit.call(ep, filt, msgspec.json.encode({"cache_key": key, rng.choice(flags): False})))
        filter_ms.append(ms)
    p = lambda xs, q: round(float(np.percentile(xs, q)), 4)  # noqa: E731
    print(json.dumps({
        "search_p50_ms": p(search_ms, 50), "search_p99_ms": p(search_ms, 99),
        "filter_p50_ms": p(filter_ms, 50), "filter_p99_ms": p(filter_ms, 99),
        "rss_mb_1000_overlays": round(after, 1), "rss_mb_before_overlays": round(before, 1),
        "overlay_kb_each": round(traced / 1024 / len(live), 2), "kb_mb": round(kb.nbytes / 2**20, 1),
        "search_p99_vs_target": round(p(search_ms, 99) / TARGET_P99_MS, 3),
        "filter_p99_vs_target": round(p(filter_ms, 99) / TARGET_P99_MS, 3), "calls": N_CALLS,
    }))


if __name__ == "__main__":
    main()
