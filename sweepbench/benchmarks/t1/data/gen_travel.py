"""Generators of the travel tables: cities, airports, users, flights, hotels and rooms,
cruises, show venues and live shows, and rental vehicles.

Row counts are the paper's (Appendix A.2). Dates lie after the tasks' clock (``TODAY``):
flights May to July 2026, shows May to August, cruises May to December.
"""

from __future__ import annotations

import numpy as np

from sweepbench.benchmarks.t1.data import geo
from sweepbench.benchmarks.t1.data import ontology as o
from sweepbench.benchmarks.t1.data.store import IdFormat, Table, make_table
from sweepbench.benchmarks.t1.data.synth import (
    TODAY,
    Neighbourhoods,
    allocate,
    business_names,
    city_weights,
    coordinates,
    flags,
    ratings,
    rng_for,
    rows_by_city,
    state_vocab,
    unique_hex_ids,
)

N_USERS, N_FLIGHTS, N_HOTELS, HOTEL_CITIES, N_ROOMS = 2000, 1594, 1917, 320, 157985
N_CRUISES, N_SHIPS, N_SHOWS, N_VENUES, SHOW_CITIES = 700, 94, 1000, 243, 170
N_VEHICLES = 22509
MAY_1 = np.datetime64("2026-05-01", "D")


def _dates(rng: np.random.Generator, n: int, start: np.datetime64, days: int) -> np.ndarray:
    return start + rng.integers(0, days, n).astype("timedelta64[D]")


def cities() -> Table:
    cs = geo.cities()
    states, state_code = state_vocab()
    cols = {"name": [c.name for c in cs], "state": state_code,
            "latitude": np.array([c.latitude for c in cs]), "longitude": np.array([c.longitude for c in cs]),
            "population": np.array([c.population for c in cs], dtype=np.int64)}
    return make_table("cities", IdFormat("CTY-", 3), np.arange(1, len(cs) + 1), cols, {"state": states})


def airports() -> Table:
    ap = geo.airports()
    cols = {"code": [a.code for a in ap], "name": [a.name for a in ap],
            "city": np.array([a.city for a in ap], dtype=np.int16),
            "latitude": np.array([a.latitude for a in ap]), "longitude": np.array([a.longitude for a in ap])}
    return make_table("airports", IdFormat("APT-", 3), np.arange(1, len(ap) + 1), cols)


def users(seed: int, nb: Neighbourhoods) -> Table:
    rng = rng_for(seed, "users")
    n = N_USERS
    city = rng.choice(len(geo.cities()), n, p=city_weights(len(geo.cities())) / city_weights(len(geo.cities())).sum())
    city = city.astype(np.int16)
    first = rng.integers(0, len(o.FIRST_NAMES), n).astype(np.int16)
    last = rng.integers(0, len(o.LAST_NAMES), n).astype(np.int16)
    emails = [f"{o.FIRST_NAMES[f].lower()}.{o.LAST_NAMES[la].lower()}{num}@{o.EMAIL_DOMAINS[d]}"
              for f, la, num, d in zip(first, last, rng.integers(100, 9999, n),
                                       rng.integers(0, len(o.EMAIL_DOMAINS), n))]
    second = rng.random(n) < 0.5
    brands = ("",) + o.CARD_BRANDS
    cols = {
        "first_name": first, "last_name": last, "email": emails, "city": city,
        "neighborhood": nb.draw(rng, city),
        "birthdate": np.datetime64("1950-01-01", "D")
        + rng.integers(0, 56 * 365, n).astype("timedelta64[D]"),
        "card_brand": rng.integers(1, len(brands), n).astype(np.int8),
        "card_last_four": [f"{x:04d}" for x in rng.integers(0, 10000, n)],
        "second_card_brand": np.where(second, rng.integers(1, len(brands), n), 0).astype(np.int8),
        "second_card_last_four": [f"{x:04d}" if s else "" for x, s in zip(rng.integers(0, 10000, n), second)],
        "has_debit_card": rng.random(n) < 0.6,
        "has_drivers_license": rng.random(n) < 0.85,
        "has_passport": rng.random(n) < 0.6,
        "reward_points": (rng.integers(0, 120, n) * 500).astype(np.int32),
        "membership_level": rng.choice(len(o.MEMBERSHIP_LEVELS), n, p=[0.5, 0.25, 0.15, 0.1]).astype(np.int8),
    }
    return make_table("users", IdFormat("USR-", 8, True), unique_hex_ids(rng, n, 8), cols,
                      {"first_name": o.FIRST_NAMES, "last_name": o.LAST_NAMES,
                       "neighborhood": nb.vocab, "card_brand": brands, "second_card_brand": brands,
                       "membership_level": o.MEMBERSHIP_LEVELS})


def flights(seed: int) -> Table:
    rng = rng_for(seed, "flights")
    ap = geo.airports()
    cs = geo.cities()
    weight = np.array([cs[a.city].population for a in ap], dtype=np.float64) ** 0.5
    p = weight / weight.sum()
    n = N_FLIGHTS
    origin = np.concatenate([rng.permutation(len(ap)), rng.choice(len(ap), n - len(ap), p=p)])
    dest = rng.choice(len(ap), n, p=p)
    city_of = np.array([a.city for a in ap])
    while np.any(same := city_of[origin] == city_of[dest]):
        dest[same] = rng.choice(len(ap), int(same.sum()), p=p)
    lat = np.array([a.latitude for a in ap])
    lon = np.array([a.longitude for a in ap])
    dist = np.hypot((lat[origin] - lat[dest]) * 111,
                    (lon[origin] - lon[dest]) * 111 * np.cos(np.radians(lat[origin])))
    stops = (rng.random(n) < np.where(dist > 2000, 0.4, 0.1)).astype(np.int8)
    date = _dates(rng, n, MAY_1, 92)
    dep = (rng.integers(5 * 4, 22 * 4, n) * 15).astype(np.int16)
    order = np.lexsort((dep, date))
    economy = np.round(59 + dist * 0.11 + rng.uniform(0, 120, n), 2)

    def fare(multiplier: float, offered: float) -> np.ndarray:
        return np.where(rng.random(n) < offered, np.round(economy * multiplier, 2), np.nan)

    cols = {"airline": rng.integers(0, len(o.AIRLINES), n).astype(np.int8),
            "origin": origin.astype(np.int16), "destination": dest.astype(np.int16),
            "departure_date": date, "departure_time": dep,
            "duration_minutes": (40 + dist / 800 * 60 + stops.astype(np.int64) * 75).astype(np.int16),
            "stops": stops, "price_economy": economy,
            "price_premium_economy": fare(1.6, 0.5), "price_business": fare(2.9, 0.6),
            "price_first": fare(4.2, 0.3), "seats_available": rng.integers(2, 60, n).astype(np.int16)}
    cols = {k: v[order] for k, v in cols.items()}
    return make_table("flights", IdFormat("FL", 3), np.arange(1, n + 1), cols, {"airline": o.AIRLINES})


def hotels(seed: int, nb: Neighbourhoods) -> tuple[Table, Table]:
    rng = rng_for(seed, "hotels")
    city = rows_by_city(N_HOTELS, HOTEL_CITIES)
    n = len(city)
    brand = rng.integers(0, len(o.HOTEL_BRANDS), n).astype(np.int8)
    hood = nb.draw(rng, city)
    stars = rng.choice([2, 3, 4, 5], n, p=[0.15, 0.4, 0.3, 0.15]).astype(np.int8)
    cols = {"city": city, "neighborhood": hood, "brand": brand,
            "name": [f"{o.HOTEL_BRANDS[b]} {nb.vocab[h]}" for b, h in zip(brand, hood)],
            "star_rating": stars, "rating": ratings(rng, n, 4.0, 0.4),
            **dict(zip(("latitude", "longitude"), coordinates(rng, city))),
            **flags(rng, n, o.HOTEL_FLAGS, {"has_pool": 0.5, "has_gym": 0.65, "has_spa": 0.3,
                                            "has_valet_parking": 0.35, "has_digital_key": 0.45})}
    table = make_table("hotels", IdFormat("H", 3), np.arange(1, n + 1), cols,
                       {"neighborhood": nb.vocab, "brand": o.HOTEL_BRANDS})
    return table, _rooms(rng, stars)


def _rooms(rng: np.random.Generator, stars: np.ndarray) -> Table:
    stars = stars.astype(np.float64)  # int8 arithmetic would overflow
    sizes = allocate(N_ROOMS, rng.uniform(0.5, 1.5, len(stars)), minimum=20)
    hotel = np.repeat(np.arange(len(stars), dtype=np.int32), sizes)
    m = len(hotel)
    rtype = rng.choice(len(o.ROOM_TYPES), m, p=[0.2, 0.15, 0.2, 0.1, 0.05, 0.06, 0.08, 0.05, 0.06, 0.05])
    occupancy = np.array([o.ROOM_OCCUPANCY[t] for t in o.ROOM_TYPES], dtype=np.int8)[rtype]
    tier = rng.choice(len(o.PRICE_TIERS), m, p=[0.45, 0.3, 0.17, 0.08])
    cash = np.round((40 + 35 * stars[hotel]) * (1 + 0.35 * tier) * rng.uniform(0.85, 1.2, m)
                    + np.where(rtype >= 6, 90, 0), 2)
    fee = np.where(rng.random(len(stars)) < 0.3, np.round(rng.uniform(15, 45, len(stars)), 0), 0.0)
    start = TODAY + rng.integers(0, 60, m).astype("timedelta64[D]")
    cols = {"hotel": hotel, "room_type": rtype.astype(np.int8),
            "view_type": rng.integers(0, len(o.VIEW_TYPES), m).astype(np.int8),
            "occupancy": occupancy, "price_tier": tier.astype(np.int8), "cash_price": cash,
            "points_price": (np.round(cash * 100 / 500) * 500).astype(np.int32),
            "resort_fee": fee[hotel], "available_from": start,
            "available_to": start + rng.integers(45, 160, m).astype("timedelta64[D]")}
    return make_table("hotel_rooms", IdFormat("HR", 3), np.arange(1, m + 1), cols,
                      {"room_type": o.ROOM_TYPES, "view_type": o.VIEW_TYPES, "price_tier": o.PRICE_TIERS})


def cruises(seed: int) -> Table:
    rng = rng_for(seed, "cruises")
    forms = ("{w}", "{w} of the Seas", "Ocean {w}", "{w} Star", "Grand {w}")
    ships = tuple(f.format(w=w) for f in forms for w in o.SHIP_WORDS)[:N_SHIPS]
    ship_line = np.repeat(np.arange(len(o.CRUISE_LINES)), allocate(N_SHIPS, np.ones(len(o.CRUISE_LINES))))
    ship_line = ship_line[rng.permutation(N_SHIPS)]
    n = N_CRUISES
    ship = np.concatenate([np.arange(N_SHIPS), rng.integers(0, N_SHIPS, n - N_SHIPS)])
    dest = np.concatenate([np.arange(len(o.CRUISE_DESTINATIONS)),
                           rng.integers(0, len(o.CRUISE_DESTINATIONS), n - len(o.CRUISE_DESTINATIONS))])
    dest = dest[rng.permutation(n)]
    ports = [o.PORTS_BY_DESTINATION[o.CRUISE_DESTINATIONS[d]] for d in dest]
    port = np.array([o.CRUISE_PORTS.index(p[rng.integers(0, len(p))]) for p in ports], dtype=np.int8)
    port[:len(o.CRUISE_PORTS)] = np.arange(len(o.CRUISE_PORTS))  # every port used at least once
    for i in range(len(o.CRUISE_PORTS)):  # and its destination consistent with it
        dest[i] = next(d for d, name in enumerate(o.CRUISE_DESTINATIONS)
                       if o.CRUISE_PORTS[i] in o.PORTS_BY_DESTINATION[name])
    nights = rng.integers(3, 22, n).astype(np.int8)
    itinerary = []
    for d, k in zip(dest, nights):
        calls = o.PORTS_OF_CALL[o.CRUISE_DESTINATIONS[d]]
        take = rng.choice(len(calls), min(len(calls), 2 + int(k) // 4), replace=False)
        itinerary.append(", ".join(calls[i] for i in sorted(take)))
    tier = rng.choice([1, 2, 3], n, p=[0.5, 0.35, 0.15]).astype(np.int8)
    base = (95 + 45 * tier.astype(np.float64)) * nights.astype(np.float64) * rng.uniform(0.85, 1.2, n)
    multipliers = (1.0, 1.3, 1.65, 2.1, 2.8, 4.5)
    offered = (1.0, 0.95, 0.9, 0.6, 0.75, 0.35)
    date = _dates(rng, n, MAY_1, 240)
    order = np.argsort(date, kind="stable")
    cols = {"cruise_line": ship_line[ship].astype(np.int8), "ship": ship.astype(np.int8),
            "destination": dest.astype(np.int8), "departure_port": port,
            "departure_date": date, "duration_nights": nights, "itinerary": itinerary,
            "passenger_capacity": (1200 + (ship * 37 % 40) * 100).astype(np.int32), "tier": tier,
            **flags(rng, n, o.CRUISE_FLAGS, 0.5)}
    for cabin, mult, p in zip(o.CABIN_TYPES, multipliers, offered):
        cols[f"price_{cabin}"] = np.where(rng.random(n) < p, np.round(base * mult, 0), np.nan)
        cols[f"cabins_{cabin}"] = rng.integers(0, 40, n).astype(np.int16)
    cols = {k: (v[order] if isinstance(v, np.ndarray) else [v[i] for i in order]) for k, v in cols.items()}
    return make_table("cruises", IdFormat("CR", 6), np.arange(1, n + 1), cols,
                      {"cruise_line": o.CRUISE_LINES, "ship": ships, "destination": o.CRUISE_DESTINATIONS,
                       "departure_port": o.CRUISE_PORTS})


CATEGORY_FOR_VENUE = {"Comedy Club": "Standup Comedy", "Opera House": "Opera", "Jazz Club": "Jazz",
                      "Cabaret": "Magic Show"}


def live_shows(seed: int, nb: Neighbourhoods) -> tuple[Table, Table]:
    rng = rng_for(seed, "live_shows")
    w = city_weights(SHOW_CITIES)
    vcity = np.concatenate([np.arange(SHOW_CITIES), rng.choice(SHOW_CITIES, N_VENUES - SHOW_CITIES, p=w / w.sum())])
    vcity = np.sort(vcity).astype(np.int16)
    vtype = rng.permutation(np.concatenate([np.arange(len(o.VENUE_TYPES)), rng.integers(
        0, len(o.VENUE_TYPES), N_VENUES - len(o.VENUE_TYPES))])).astype(np.int8)
    vhood = nb.draw(rng, vcity)
    vnames = [f"{nb.vocab[h] if rng.random() < 0.5 else geo.cities()[c].name} {o.VENUE_TYPES[t]}"
              for c, h, t in zip(vcity, vhood, vtype)]
    venues = make_table("show_venues", IdFormat("VEN-", 3), np.arange(1, N_VENUES + 1),
                        {"city": vcity, "neighborhood": vhood, "name": vnames, "venue_type": vtype,
                         "capacity": rng.integers(150, 5000, N_VENUES).astype(np.int32)},
                        {"neighborhood": nb.vocab, "venue_type": o.VENUE_TYPES})
    n = N_SHOWS
    venue = np.repeat(np.arange(N_VENUES), allocate(n, np.ones(N_VENUES))).astype(np.int16)
    category = rng.integers(0, len(o.SHOW_CATEGORIES), n)
    for vt, cat in CATEGORY_FOR_VENUE.items():
        category[vtype[venue] == o.VENUE_TYPES.index(vt)] = o.SHOW_CATEGORIES.index(cat)
    performer = business_names(rng, n, ("Ensemble", "Collective", "Company", "Band", "Trio", ""))
    date = _dates(rng, n, MAY_1, 123)
    start = rng.choice([14 * 60, 19 * 60, 19 * 60 + 30, 20 * 60, 21 * 60], n).astype(np.int16)
    back = np.round(rng.uniform(25, 90, n), 2)
    order = np.lexsort((start, date))
    cols = {"venue": venue, "venue_type": vtype[venue], "city": vcity[venue], "neighborhood": vhood[venue],
            "event_category": category.astype(np.int8), "performer": performer,
            "event_name": [f"{p}: {o.SHOW_CATEGORIES[c]} Night" for p, c in zip(performer, category)],
            "event_date": date, "start_time": start,
            "duration_minutes": rng.choice([75, 90, 120, 150], n).astype(np.int16),
            "price_back": back, "price_middle": np.round(back * 1.6, 2), "price_front": np.round(back * 2.5, 2),
            "seats_back": rng.integers(0, 120, n).astype(np.int16),
            "seats_middle": rng.integers(0, 80, n).astype(np.int16),
            "seats_front": rng.integers(0, 40, n).astype(np.int16)}
    cols = {k: (v[order] if isinstance(v, np.ndarray) else [v[i] for i in order]) for k, v in cols.items()}
    shows = make_table("live_shows", IdFormat("LE", 3), np.arange(1, n + 1), cols,
                       {"neighborhood": nb.vocab, "event_category": o.SHOW_CATEGORIES,
                        "venue_type": o.VENUE_TYPES})
    return shows, venues


SUBCATEGORIES = tuple(s for c in o.VEHICLE_CATEGORIES for s in o.VEHICLE_SUBCATEGORIES[c])
SEATS = {"Sedan": 5, "SUV": 7, "Compact": 4, "Convertible": 4, "Minivan": 8, "Luxury": 5, "Coupe": 4,
         "Road Bike": 1, "Mountain Bike": 1, "E-Bike": 1, "Cruiser Bike": 1, "Motorcycle": 2,
         "Scooter": 1, "Pickup Truck": 5, "Box Truck": 3, "Cargo Van": 2, "Moving Truck": 3}
DAY_RATE = {"car": 55.0, "bike": 18.0, "truck": 85.0}


def vehicles(seed: int, nb: Neighbourhoods) -> Table:
    rng = rng_for(seed, "vehicles")
    city = rows_by_city(N_VEHICLES, len(geo.cities()))
    n = len(city)
    category = rng.choice(3, n, p=[0.6, 0.25, 0.15])
    sub, make, model, fuel = [], [], [], []
    makes = tuple(sorted({m for v in o.VEHICLE_MODELS.values() for m, _ in v}))
    models = tuple(sorted({m for v in o.VEHICLE_MODELS.values() for _, m in v}))
    for c, r in zip(category, rng.random((n, 3))):
        subs = o.VEHICLE_SUBCATEGORIES[o.VEHICLE_CATEGORIES[c]]
        s = subs[int(r[0] * len(subs))]
        mk, md = o.VEHICLE_MODELS[s][int(r[1] * len(o.VEHICLE_MODELS[s]))]
        if c == 1:
            f = {"E-Bike": "electric", "Scooter": "electric", "Motorcycle": "gasoline"}.get(s, "none")
        elif c == 0:
            f = ("gasoline", "gasoline", "hybrid", "electric", "diesel")[int(r[2] * 5)]
        else:
            f = ("gasoline", "diesel", "diesel", "electric")[int(r[2] * 4)]
        sub.append(SUBCATEGORIES.index(s))
        make.append(makes.index(mk))
        model.append(models.index(md))
        fuel.append(o.FUEL_TYPES.index(f))
    tier = rng.choice(4, n, p=[0.35, 0.35, 0.2, 0.1])
    base = np.array([DAY_RATE[o.VEHICLE_CATEGORIES[c]] for c in category])
    feats = flags(rng, n, o.VEHICLE_FLAGS, {"is_automatic": 0.8, "has_gps": 0.5,
                                            "has_insurance_included": 0.4, "has_tow_hitch": 0.2,
                                            "is_wheelchair_accessible": 0.1})
    bike = category == 1
    for f in ("has_gps", "has_child_seat", "has_tow_hitch", "is_wheelchair_accessible", "has_bluetooth"):
        feats[f] &= ~bike
    cols = {"city": city, "neighborhood": nb.draw(rng, city), "category": category.astype(np.int8),
            "subcategory": np.array(sub, dtype=np.int8), "make": np.array(make, dtype=np.int8),
            "model": np.array(model, dtype=np.int8),
            "year": rng.integers(2018, 2026, n).astype(np.int16),
            "fuel_type": np.array(fuel, dtype=np.int8), "price_tier": tier.astype(np.int8),
            "seating_capacity": np.array([SEATS[SUBCATEGORIES[s]] for s in sub], dtype=np.int8),
            "base_price_per_day": np.round(base * (1 + 0.4 * tier) * rng.uniform(0.85, 1.2, n), 2),
            "provider": rng.integers(0, len(o.RENTAL_PROVIDERS), n).astype(np.int8),
            "rating": ratings(rng, n), **feats}
    return make_table("vehicles", IdFormat("VEH-", 8, True), unique_hex_ids(rng, n, 8), cols,
                      {"neighborhood": nb.vocab, "category": o.VEHICLE_CATEGORIES,
                       "subcategory": SUBCATEGORIES, "make": makes, "model": models,
                       "fuel_type": o.FUEL_TYPES, "price_tier": o.VEHICLE_TIERS,
                       "provider": o.RENTAL_PROVIDERS})
