"""Shared building blocks of the table generators: seeded randomness, spreading rows over
cities, coordinates, ratings and synthesised names.

Every table draws from its own generator seeded by (seed, table name), so tables are
independent: changing how one is generated never shifts another's values.
"""

from __future__ import annotations

import zlib

import numpy as np

from sweepbench.benchmarks.t1.data import geo
from sweepbench.benchmarks.t1.data.ontology import NAME_ADJECTIVES, NAME_NOUNS

TODAY = np.datetime64("2026-04-20", "D")  # the tasks' clock; data dates lie after it


def rng_for(seed: int, table: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(table.encode())])


def allocate(total: int, weights: np.ndarray, minimum: int = 1) -> np.ndarray:
    """Integer counts summing to ``total``, each >= ``minimum``, proportional to ``weights``."""
    k = len(weights)
    spare = total - minimum * k
    if spare < 0:
        raise ValueError(f"cannot give {k} groups {minimum} of {total}")
    share = spare * np.asarray(weights, dtype=np.float64) / float(np.sum(weights))
    counts = np.floor(share).astype(np.int64)
    leftover = spare - int(counts.sum())
    counts[np.argsort(-(share - counts), kind="stable")[:leftover]] += 1
    return counts + minimum


def city_weights(n_cities: int, power: float = 0.6) -> np.ndarray:
    pops = np.array([c.population for c in geo.cities()[:n_cities]], dtype=np.float64)
    return pops ** power


def rows_by_city(total: int, n_cities: int, power: float = 0.6) -> np.ndarray:
    """City index per row, rows grouped by city, every one of the first ``n_cities`` present."""
    counts = allocate(total, city_weights(n_cities, power))
    return np.repeat(np.arange(n_cities, dtype=np.int16), counts)


class Neighbourhoods:
    """One vocabulary of neighbourhood names and, per city, the codes of its neighbourhoods."""

    def __init__(self) -> None:
        cities = geo.cities()
        self.vocab = tuple(sorted({n for c in cities for n in c.neighbourhoods}))
        index = {n: i for i, n in enumerate(self.vocab)}
        width = max(len(c.neighbourhoods) for c in cities)
        self.count = np.array([len(c.neighbourhoods) for c in cities], dtype=np.int64)
        self.codes = np.zeros((len(cities), width), dtype=np.int32)
        for i, c in enumerate(cities):
            self.codes[i, :len(c.neighbourhoods)] = [index[n] for n in c.neighbourhoods]

    def draw(self, rng: np.random.Generator, city: np.ndarray) -> np.ndarray:
        local = np.floor(rng.random(len(city)) * self.count[city]).astype(np.int64)
        return self.codes[city, local]


def coordinates(rng: np.random.Generator, city: np.ndarray, spread: float = 0.04):
    cities = geo.cities()
    lat0 = np.array([c.latitude for c in cities])[city]
    lon0 = np.array([c.longitude for c in cities])[city]
    lat = np.round(lat0 + rng.normal(0, spread, len(city)), 5)
    lon = np.round(lon0 + rng.normal(0, spread, len(city)) / np.cos(np.radians(lat0)), 5)
    return lat, lon


def ratings(rng: np.random.Generator, n: int, mean: float = 4.1, sd: float = 0.45) -> np.ndarray:
    return np.round(np.clip(rng.normal(mean, sd, n), 1.0, 5.0), 1)


def flags(rng: np.random.Generator, n: int, names: tuple[str, ...], p: float | dict = 0.4):
    """Independent boolean features; ``p`` may differ per feature."""
    return {f: rng.random(n) < (p.get(f, 0.4) if isinstance(p, dict) else p) for f in names}


def business_names(rng: np.random.Generator, n: int, suffixes: tuple[str, ...]) -> list[str]:
    a = rng.integers(0, len(NAME_ADJECTIVES), n)
    b = rng.integers(0, len(NAME_NOUNS), n)
    c = rng.integers(0, len(suffixes), n)
    return [f"{NAME_ADJECTIVES[i]} {NAME_NOUNS[j]} {suffixes[k]}".strip() for i, j, k in zip(a, b, c)]


def unique_hex_ids(rng: np.random.Generator, n: int, digits: int) -> np.ndarray:
    """``n`` distinct random ids below 16**digits, ascending."""
    ids = np.unique(rng.integers(16 ** (digits - 1), 16 ** digits, n + n // 4 + 16))
    while len(ids) < n:  # vanishingly rare; keeps the function total
        ids = np.unique(np.concatenate([ids, rng.integers(16 ** (digits - 1), 16 ** digits, n)]))
    return np.sort(rng.choice(ids, n, replace=False))


def state_vocab() -> tuple[tuple[str, ...], np.ndarray]:
    """The states as a vocabulary and each city's code in it."""
    states = tuple(sorted({c.state for c in geo.cities()}))
    index = {s: i for i, s in enumerate(states)}
    return states, np.array([index[c.state] for c in geo.cities()], dtype=np.int16)
