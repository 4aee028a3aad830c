"""Attraction tools: find attractions, look one up, find what is near it, list a city's best.

Read-only: attractions are visited, not booked.
"""

from __future__ import annotations

import numpy as np

from sweepbench.benchmarks.t1.tools.checks import count, place, row
from sweepbench.benchmarks.t1.tools.docs import documented
from sweepbench.benchmarks.t1.tools.query import (
    Criterion,
    city_rows,
    filter_cached,
    given,
    search,
    select,
)
from sweepbench.benchmarks.t1.tools.state import Episode
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

TABLE = "attractions"
CRITERIA = (Criterion("attraction_type", "one_of"), Criterion("neighborhood", "one_of"),
            Criterion("min_rating", "at_least", "rating"),
            Criterion("max_admission_fee", "at_most", "admission_fee"))
DOCS = {
    "attraction_type": "One of: Art, Historical, Tourist, Social, Food, Sports, Tours, Culture, Scenery.",
    "max_admission_fee": "Highest acceptable admission fee in USD (0 for free attractions).",
    "attraction_id": 'The attraction\'s id from results, e.g. "ATT-0042".',
    "radius_km": "How far to look, in kilometres (default 5).",
    "limit": "How many to list (default 5, at most 10).",
}


def render(ep: Episode, r: int) -> dict:
    t = ep.kb[TABLE]
    return {"attraction_id": t.ident(r), "name": t.string("name", r),
            "attraction_type": t.string("attraction_type", r), **place(ep, t, r),
            "rating": float(t["rating"][r]), "admission_fee": float(t["admission_fee"][r])}


def details(ep: Episode, r: int) -> dict:
    t = ep.kb[TABLE]
    return {**render(ep, r), "latitude": float(t["latitude"][r]), "longitude": float(t["longitude"][r]),
            "typical_visit_hours": float(t["visit_hours"][r])}


@tool("read")
@documented(DOCS)
def search_attractions(db: Episode, city: str, state: str | None = None, attraction_type: str | None = None,
                       neighborhood: list[str] | None = None, min_rating: float | None = None,
                       max_admission_fee: float | None = None) -> dict:
    """Find attractions in a city. The matches are cached under a key
    (search_attractions_results_<n>) that filter_attractions can narrow down."""
    values = given(locals(), ("city", "state"))
    rows, where = city_rows(db, TABLE, city, state)
    return search(db, "search_attractions", TABLE, rows, f"in {where}", CRITERIA, values, "attractions", render)


@tool("read")
@documented(DOCS)
def filter_attractions(db: Episode, cache_key: str, attraction_type: str | None = None,
                       neighborhood: list[str] | None = None, min_rating: float | None = None,
                       max_admission_fee: float | None = None) -> dict:
    """Narrow down earlier attraction results by more criteria; the result gets its own key."""
    values = given(locals(), ("cache_key",))
    return filter_cached(db, "filter_attractions", TABLE, cache_key, CRITERIA, values, "attractions", render)


@tool("read")
@documented(DOCS)
def get_attraction_details(db: Episode, attraction_id: str) -> dict:
    """Everything known about one attraction: location, coordinates, fee, typical visit length."""
    return details(db, row(db, TABLE, attraction_id, "attraction_id"))


@tool("read")
@documented(DOCS)
def get_nearby_attractions(db: Episode, attraction_id: str, radius_km: float = 5.0) -> dict:
    """Other attractions within a radius of one attraction, nearest first (at most 10)."""
    r = row(db, TABLE, attraction_id, "attraction_id")
    if not 0 < radius_km <= 50:
        raise ToolError(f"`radius_km` must be between 0 and 50, got {radius_km}")
    t = db.kb[TABLE]
    rows = db.kb.group(TABLE, "city", int(t["city"][r]))
    rows = rows[rows != r]
    lat0 = np.radians(t["latitude"][r])
    dx = np.radians(t["longitude"][rows] - t["longitude"][r]) * np.cos(lat0)
    dy = np.radians(t["latitude"][rows] - t["latitude"][r])
    dist = 6371.0 * np.hypot(dx, dy)
    order = np.lexsort((rows, dist))
    near = [(int(rows[i]), float(dist[i])) for i in order if dist[i] <= radius_km][:10]
    return {"attraction_id": t.ident(r), "radius_km": radius_km,
            "results": [{**render(db, n), "distance_km": round(d, 2)} for n, d in near]}


@tool("read")
@documented(DOCS)
def get_top_attractions(db: Episode, city: str, state: str | None = None, attraction_type: str | None = None,
                        limit: int = 5) -> dict:
    """A city's highest-rated attractions (ties go to the lower id)."""
    values = given({"attraction_type": attraction_type})
    count(limit, "limit", 1, 10)
    rows, where = city_rows(db, TABLE, city, state)
    t = db.kb[TABLE]
    rows = select(t, rows, CRITERIA, values)
    best = rows[np.lexsort((rows, -t["rating"][rows]))][:limit]
    return {"city": where, "results": [render(db, int(r)) for r in best]}
