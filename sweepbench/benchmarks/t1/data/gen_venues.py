"""Generators of the city venue tables: attractions, bars, cafes, dessert shops, restaurants
and kayak rentals (with the cafe, dessert and restaurant menus).

Row counts are the paper's (Appendix A.2); everything else is drawn from the seeded
generator of each table. Rows are grouped by city, so a city's rows are one id range.
"""

from __future__ import annotations

import numpy as np

from sweepbench.benchmarks.t1.data import geo
from sweepbench.benchmarks.t1.data import ontology as o
from sweepbench.benchmarks.t1.data.store import IdFormat, Table, make_table
from sweepbench.benchmarks.t1.data.synth import (
    Neighbourhoods,
    allocate,
    business_names,
    coordinates,
    flags,
    ratings,
    rng_for,
    rows_by_city,
    unique_hex_ids,
)

N_ATTRACTIONS, ATTRACTION_CITIES = 736, 85
N_BARS, N_CAFES, N_CAFE_ITEMS, N_CHAINS = 9294, 14856, 1645, 185
N_DESSERT_SHOPS, N_RESTAURANTS, N_KAYAKS = 9109, 30167, 25000
LEVEL_MULTIPLIER = np.array([0.0, 0.8, 1.0, 1.35, 1.9])  # price level 1..4


def _levels(rng: np.random.Generator, n: int, p=(0.3, 0.4, 0.2, 0.1)) -> np.ndarray:
    return (rng.choice(4, n, p=list(p)) + 1).astype(np.int8)


def _segment(levels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Star segment follows price level, with some spread."""
    jitter = rng.choice([-1, 0, 0, 0, 1], len(levels))
    return np.clip(levels.astype(np.int64) - 1 + jitter, 0, len(o.STAR_SEGMENTS) - 1).astype(np.int8)


def _venue_columns(rng, city, nb: Neighbourhoods) -> dict:
    lat, lon = coordinates(rng, city)
    return {"city": city, "neighborhood": nb.draw(rng, city), "latitude": lat, "longitude": lon,
            "rating": ratings(rng, len(city))}


def attractions(seed: int, nb: Neighbourhoods) -> Table:
    rng = rng_for(seed, "attractions")
    city = rows_by_city(N_ATTRACTIONS, ATTRACTION_CITIES, power=0.8)
    kind = rng.integers(0, len(o.ATTRACTION_TYPES), len(city)).astype(np.int8)
    names, seen = [], set()
    for c, k in zip(city, kind):
        nouns = o.ATTRACTION_NOUNS[o.ATTRACTION_TYPES[k]]
        stems = (geo.cities()[c].name,) + o.NAME_ADJECTIVES
        while True:
            name = f"{stems[rng.integers(0, 6) if rng.random() < 0.5 else 0]} {nouns[rng.integers(0, len(nouns))]}"
            if (c, name) not in seen:
                break
        seen.add((c, name))
        names.append(name)
    cols = _venue_columns(rng, city, nb)
    fee = np.where(rng.random(len(city)) < 0.35, 0.0, np.round(rng.uniform(5, 45, len(city)), 0))
    cols.update(name=names, attraction_type=kind, admission_fee=fee,
                visit_hours=np.round(rng.uniform(0.5, 4.0, len(city)) * 2) / 2)
    return make_table("attractions", IdFormat("ATT-", 4), np.arange(1, len(city) + 1), cols,
                      {"neighborhood": nb.vocab, "attraction_type": o.ATTRACTION_TYPES})


def bars(seed: int, nb: Neighbourhoods) -> Table:
    rng = rng_for(seed, "bars")
    city = rows_by_city(N_BARS, len(geo.cities()))
    n = len(city)
    level = _levels(rng, n)
    cols = _venue_columns(rng, city, nb)
    cols.update(
        name=business_names(rng, n, ("Tavern", "Lounge", "Bar", "Pub", "Social Club", "Taproom",
                                     "Room", "Saloon")),
        bar_type=rng.integers(0, len(o.BAR_TYPES), n).astype(np.int8),
        price_level=level, star_segment=_segment(level, rng),
        price_per_person=np.round(LEVEL_MULTIPLIER[level] * 30 + rng.uniform(-6, 12, n), 0),
        min_age=np.where(rng.random(n) < 0.15, 18, 21).astype(np.int8),
        **flags(rng, n, o.BAR_FLAGS, {"has_happy_hour": 0.55, "has_valet_parking": 0.2,
                                       "has_vip_room": 0.3}),
    )
    return make_table("bars", IdFormat("BAR", 4), np.arange(1, n + 1), cols,
                      {"neighborhood": nb.vocab, "bar_type": o.BAR_TYPES,
                       "star_segment": o.STAR_SEGMENTS})


def _chain_names(rng: np.random.Generator) -> tuple[tuple[str, ...], np.ndarray]:
    """185 distinct chain names and each chain's cafe type (0 coffee, 1 bubble tea)."""
    kinds = np.array([0] * 120 + [1] * (N_CHAINS - 120), dtype=np.int8)
    suffix = {0: ("Coffee", "Roasters", "Espresso Bar", "Coffee House"),
              1: ("Tea House", "Boba", "Milk Tea", "Tea Bar")}
    names: list[str] = []
    for kind in kinds:
        while True:
            name = (f"{o.NAME_ADJECTIVES[rng.integers(0, len(o.NAME_ADJECTIVES))]} "
                    f"{o.NAME_NOUNS[rng.integers(0, len(o.NAME_NOUNS))]} "
                    f"{suffix[int(kind)][rng.integers(0, 4)]}")
            if name not in names:
                break
        names.append(name)
    return tuple(names), kinds


def cafes(seed: int, nb: Neighbourhoods) -> tuple[Table, Table]:
    rng = rng_for(seed, "cafes")
    chains, chain_kind = _chain_names(rng)
    city = rows_by_city(N_CAFES, len(geo.cities()))
    n = len(city)
    chain = rng.integers(0, N_CHAINS, n).astype(np.int16)
    kind = chain_kind[chain]
    level = _levels(rng, n, (0.35, 0.45, 0.2, 0.0))
    tea = kind == 1
    cols = _venue_columns(rng, city, nb)
    feats = flags(rng, n, o.CAFE_FLAGS, 0.5)
    for f in ("has_light_roast", "has_dark_roast", "has_decaf"):
        feats[f] &= ~tea
    for f, p in (("has_black_tea", 0.85), ("has_green_tea", 0.7), ("has_tapioca_pearls", 0.9)):
        feats[f] = np.where(tea, rng.random(n) < p, rng.random(n) < 0.15)
    cols.update(name=chain, cafe_type=kind, price_level=level, star_segment=_segment(level, rng),
                **feats)  # a cafe's name is its chain's: the menu is the chain's
    table = make_table("cafes", IdFormat("CFE-", 6, True), unique_hex_ids(rng, n, 6), cols,
                       {"neighborhood": nb.vocab, "name": chains, "cafe_type": o.CAFE_TYPES,
                        "star_segment": o.STAR_SEGMENTS})
    return table, _cafe_menu(rng, chains, chain_kind)


def _cafe_menu(rng: np.random.Generator, chains: tuple[str, ...], chain_kind: np.ndarray) -> Table:
    sizes = allocate(N_CAFE_ITEMS, np.ones(N_CHAINS), minimum=8)
    coffee = [o.CAFE_ITEMS.index(x) for x in o.COFFEE_ITEMS]
    pastry = [o.CAFE_ITEMS.index(x) for x in o.PASTRY_ITEMS]
    tea = [o.CAFE_ITEMS.index(x) for x in o.TEA_ITEMS]
    chain_col, item_col = [], []
    for c, size in enumerate(sizes):
        main, side = (tea, pastry) if chain_kind[c] else (coffee, pastry)
        k_side = 2 if chain_kind[c] else 3
        picks = list(rng.choice(main, int(size) - k_side, replace=False))
        picks += list(rng.choice(side, k_side, replace=False))
        chain_col += [c] * int(size)
        item_col += sorted(int(p) for p in picks)
    item = np.array(item_col, dtype=np.int16)
    n = len(item)
    is_pastry = np.isin(item, pastry)
    base = np.where(is_pastry, rng.uniform(2.5, 6.5, n), rng.uniform(3.0, 7.5, n))
    dietary = [",".join(t for t, p in zip(o.DIETARY_TAGS, rng.random(len(o.DIETARY_TAGS))) if p < 0.2)
               for _ in range(n)]
    allergens = [",".join(a for a, p in zip(o.ALLERGENS, rng.random(len(o.ALLERGENS)))
                          if p < (0.45 if ip else 0.2)) for ip in is_pastry]
    descriptions = [f"House {o.CAFE_ITEMS[i].lower()}, made to order" for i in item]
    cols = {"chain": np.array(chain_col, dtype=np.int16), "name": item,
            "description": descriptions, "base_price": np.round(base, 2),
            "dietary_tags": dietary, "allergens": allergens}
    return make_table("cafe_menu_items", IdFormat("CMI-", 6, True), unique_hex_ids(rng, n, 6), cols,
                      {"chain": chains, "name": o.CAFE_ITEMS})


DESSERT_FEATURES = {  # the shop types that make a dessert feature likely
    "has_ice_cream": ("Ice Cream Parlor", "Gelateria", "Frozen Yogurt", "Dessert Cafe", "Creperie"),
    "has_gelato": ("Gelateria", "Dessert Cafe"),
    "has_pastries": ("Patisserie", "Bakery", "Dessert Cafe", "Chocolatier"),
    "has_crepes": ("Creperie", "Dessert Cafe"),
    "has_cakes": ("Patisserie", "Bakery", "Cupcake Shop", "Dessert Cafe"),
    "has_cookies": ("Bakery", "Cupcake Shop", "Ice Cream Parlor"),
    "has_donuts": ("Donut Shop", "Bakery"),
}


def dessert_shops(seed: int, nb: Neighbourhoods) -> tuple[Table, Table]:
    rng = rng_for(seed, "dessert_shops")
    city = rows_by_city(N_DESSERT_SHOPS, len(geo.cities()))
    n = len(city)
    kind = rng.integers(0, len(o.DESSERT_TYPES), n).astype(np.int8)
    level = _levels(rng, n, (0.35, 0.45, 0.15, 0.05))
    feats = flags(rng, n, o.DESSERT_FLAGS, 0.35)
    for f, types in DESSERT_FEATURES.items():
        likely = np.isin(kind, [o.DESSERT_TYPES.index(t) for t in types])
        feats[f] = np.where(likely, rng.random(n) < 0.9, rng.random(n) < 0.08)
    cols = _venue_columns(rng, city, nb)
    cols.update(name=business_names(rng, n, ("Creamery", "Sweets", "Confections", "Treats",
                                             "Dessert Bar", "Sugar Shop")),
                shop_type=kind, price_level=level, star_segment=_segment(level, rng), **feats)
    shops = make_table("dessert_shops", IdFormat("DST-", 6, True), unique_hex_ids(rng, n, 6), cols,
                       {"neighborhood": nb.vocab, "shop_type": o.DESSERT_TYPES,
                        "star_segment": o.STAR_SEGMENTS})
    rows = [(t, name) for t, shop_type in enumerate(o.DESSERT_TYPES)
            for name in o.DESSERT_MENUS[shop_type]]
    m = len(rows)
    menu = {"shop_type": np.array([t for t, _ in rows], dtype=np.int8),
            "name": [name for _, name in rows],
            "base_price": np.round(rng.uniform(3.0, 12.0, m), 2),
            "dietary_tags": [",".join(t for t, p in zip(o.DIETARY_TAGS, rng.random(6)) if p < 0.2)
                             for _ in range(m)]}
    items = make_table("dessert_menu_items", IdFormat("DMI-", 6, True), unique_hex_ids(rng, m, 6),
                       menu, {"shop_type": o.DESSERT_TYPES})
    return shops, items


def restaurants(seed: int, nb: Neighbourhoods) -> tuple[Table, Table]:
    rng = rng_for(seed, "restaurants")
    city = rows_by_city(N_RESTAURANTS, len(geo.cities()))
    n = len(city)
    level = _levels(rng, n)
    opens = rng.choice([7 * 60, 11 * 60, 12 * 60, 17 * 60], n, p=[0.2, 0.45, 0.2, 0.15])
    cols = _venue_columns(rng, city, nb)
    cols.update(
        name=business_names(rng, n, ("Kitchen", "Bistro", "Grill", "Eatery", "Table", "House",
                                     "Dining Room", "Canteen", "Brasserie", "Cantina")),
        cuisine=rng.integers(0, len(o.CUISINES), n).astype(np.int8), price_level=level,
        price_per_person=np.round(LEVEL_MULTIPLIER[level] * 28 + rng.uniform(-5, 10, n), 0),
        open_time=opens.astype(np.int16),
        close_time=(opens + rng.choice([9, 10, 11, 12], n) * 60).clip(max=23 * 60 + 30).astype(np.int16),
        max_party_size=rng.choice([6, 8, 10, 12, 20], n).astype(np.int8),
        **flags(rng, n, o.FD_DIETARY, {"vegan_options": 0.35, "vegetarian_options": 0.6,
                                       "gluten_free_options": 0.45, "halal": 0.12,
                                       "kosher": 0.06}),
        **flags(rng, n, o.FD_SERVICES, {"has_delivery": 0.55, "has_drive_through": 0.12,
                                        "has_takeout": 0.8, "accepts_reservations": 0.75,
                                        "has_private_dining": 0.25}),
    )
    table = make_table("restaurants", IdFormat("FAD-", 6), np.arange(100001, 100001 + n), cols,
                       {"neighborhood": nb.vocab, "cuisine": o.CUISINES})
    rows = [(c, k) for c in range(len(o.CUISINES)) for k in range(len(o.DISH_KINDS))]
    m = len(rows)
    kind = np.array([k for _, k in rows], dtype=np.int8)
    menu = {"cuisine": np.array([c for c, _ in rows], dtype=np.int8),
            "name": [f"{o.CUISINES[c]} {o.DISH_KINDS[k]}" for c, k in rows],
            "category": kind,
            "base_price": np.round(np.where(kind == 11, 38.0, 8.0) + rng.uniform(0, 14, m), 2),
            "dietary_tags": [",".join(t for t, p in zip(o.DIETARY_TAGS, rng.random(6)) if p < 0.2)
                             for _ in range(m)]}
    items = make_table("restaurant_menu_items", IdFormat("FDM-", 5), np.arange(1, m + 1), menu,
                       {"cuisine": o.CUISINES, "category": o.DISH_KINDS})
    return table, items


def kayaks(seed: int, nb: Neighbourhoods) -> Table:
    rng = rng_for(seed, "kayaks")
    city = rows_by_city(N_KAYAKS, len(geo.cities()))
    n = len(city)
    vessel = rng.integers(0, len(o.VESSEL_TYPES), n).astype(np.int8)
    stems = np.array(o.NAME_NOUNS + o.NAME_ADJECTIVES)
    water = [form.format(s=stem) for form, stem in zip(
        np.array(o.WATER_FORMS)[rng.integers(0, len(o.WATER_FORMS), n)],
        stems[rng.integers(0, len(stems), n)])]
    opens = rng.choice([7 * 60, 8 * 60, 9 * 60], n).astype(np.int16)
    cols = _venue_columns(rng, city, nb)
    cols.update(
        business_name=business_names(rng, n, ("Paddle Co.", "Outfitters", "Boat Rentals",
                                              "Watersports", "Kayak Hub")),
        location=water, vessel_type=vessel,
        price_per_hour=np.round(rng.uniform(12, 75, n), 0),
        capacity=np.array([1, 2, 3, 1, 1, 1], dtype=np.int8)[vessel],
        open_time=opens, close_time=(opens + rng.choice([9, 10, 11], n) * 60).astype(np.int16),
        max_hours=rng.choice([4, 6, 8], n).astype(np.int8),
        **flags(rng, n, o.KAYAK_FLAGS, {"has_life_jackets": 0.9, "has_guided_tours": 0.3}),
    )
    return make_table("kayak_rentals", IdFormat("KYK-", 5), np.arange(1, n + 1), cols,
                      {"neighborhood": nb.vocab, "vessel_type": o.VESSEL_TYPES})
