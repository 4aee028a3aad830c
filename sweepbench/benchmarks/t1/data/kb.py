"""The T1 knowledge base: built once per seed, cached on disk, shared read-only by every episode.

``knowledge_base(seed)`` returns the process-wide instance: from memory if loaded, else from
the cache file ``t1-kb-v<GENERATOR_VERSION>-seed<seed>.bin`` in ``$SWEEPBENCH_CACHE`` (default
``~/.cache/sweepbench``), else built and written there. Bump ``GENERATOR_VERSION`` whenever a
generator changes what it produces, so stale caches are never read. The indexes searches use
(rows by city, rooms by hotel, menus by chain) are derived at load time in milliseconds.
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

import numpy as np

from sweepbench.benchmarks.t1.data import gen_travel, gen_venues
from sweepbench.benchmarks.t1.data.store import (
    FormatError,
    Table,
    deserialise,
    digest,
    serialise,
)
from sweepbench.benchmarks.t1.data.synth import Neighbourhoods

GENERATOR_VERSION = 2
DEFAULT_SEED = 0


def build_tables(seed: int) -> dict[str, Table]:
    """Every table of the knowledge base for ``seed``; a pure function of the seed."""
    nb = Neighbourhoods()
    tables = [gen_travel.cities(), gen_travel.airports(), gen_travel.users(seed, nb),
              gen_travel.flights(seed), *gen_travel.hotels(seed, nb), gen_travel.cruises(seed),
              *gen_travel.live_shows(seed, nb), gen_travel.vehicles(seed, nb),
              gen_venues.attractions(seed, nb), gen_venues.bars(seed, nb), *gen_venues.cafes(seed, nb),
              *gen_venues.dessert_shops(seed, nb), *gen_venues.restaurants(seed, nb),
              gen_venues.kayaks(seed, nb)]
    return {t.name: t for t in tables}


STATE_NAMES = {
    "AK": "Alaska", "AL": "Alabama", "AR": "Arkansas", "AZ": "Arizona", "CA": "California",
    "CO": "Colorado", "CT": "Connecticut", "DC": "District of Columbia", "DE": "Delaware",
    "FL": "Florida", "GA": "Georgia", "HI": "Hawaii", "IA": "Iowa", "ID": "Idaho", "IL": "Illinois",
    "IN": "Indiana", "KS": "Kansas", "KY": "Kentucky", "LA": "Louisiana", "MA": "Massachusetts",
    "MD": "Maryland", "ME": "Maine", "MI": "Michigan", "MN": "Minnesota", "MO": "Missouri",
    "MS": "Mississippi", "MT": "Montana", "NC": "North Carolina", "ND": "North Dakota",
    "NE": "Nebraska", "NH": "New Hampshire", "NJ": "New Jersey", "NM": "New Mexico", "NV": "Nevada",
    "NY": "New York", "OH": "Ohio", "OK": "Oklahoma", "OR": "Oregon", "PA": "Pennsylvania",
    "RI": "Rhode Island", "SC": "South Carolina", "SD": "South Dakota", "TN": "Tennessee",
    "TX": "Texas", "UT": "Utah", "VA": "Virginia", "VT": "Vermont", "WA": "Washington",
    "WI": "Wisconsin", "WV": "West Virginia", "WY": "Wyoming",
}


class KnowledgeBase:
    """The tables plus lookup indexes; never mutated after construction."""

    def __init__(self, data: bytes) -> None:
        meta, self.tables = deserialise(data)
        self.seed: int = meta["seed"]
        self.version: int = meta["version"]
        self.digest = digest(data)
        self.nbytes = len(data)
        cities = self.tables["cities"]
        self._city_rows: dict[str, list[int]] = {}
        for i in range(cities.n):
            self._city_rows.setdefault(cities.string("name", i).casefold(), []).append(i)
        self._groups: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}

    def __getitem__(self, table: str) -> Table:
        return self.tables[table]

    def rows(self) -> dict[str, int]:
        return {name: t.n for name, t in sorted(self.tables.items())}

    def cities_named(self, name: str, state: str | None = None) -> list[int]:
        """City indexes with this name (and state, a code or full name, when given)."""
        found = self._city_rows.get(" ".join(str(name).split()).casefold(), [])
        if state:
            cities = self.tables["cities"]
            want = state.strip().casefold()
            found = [c for c in found if cities.string("state", c).casefold() == want
                     or STATE_NAMES.get(cities.string("state", c), "").casefold() == want]
        return found

    def group(self, table: str, column: str, key: int) -> np.ndarray:
        """Rows of ``table`` whose ``column`` equals ``key``, ascending (precomputed per column)."""
        index = self._groups.get((table, column))
        if index is None:
            values = self.tables[table][column]
            order = np.argsort(values, kind="stable").astype(np.int32)
            bounds = np.searchsorted(values[order], np.arange(int(values.max()) + 2))
            index = self._groups[(table, column)] = (order, bounds)
        order, bounds = index
        if key < 0 or key + 1 >= len(bounds):
            return order[:0]
        return order[bounds[key]:bounds[key + 1]]

    def in_cities(self, table: str, cities: list[int]) -> np.ndarray:
        """Rows of ``table`` in any of ``cities``, ascending."""
        parts = [self.group(table, "city", c) for c in cities] or [np.zeros(0, np.int32)]
        return np.sort(np.concatenate(parts)) if len(parts) > 1 else parts[0]


def cache_dir() -> Path:
    return Path(os.environ.get("SWEEPBENCH_CACHE") or Path.home() / ".cache" / "sweepbench")


def cache_path(seed: int, directory: Path | None = None) -> Path:
    return (directory or cache_dir()) / f"t1-kb-v{GENERATOR_VERSION}-seed{seed}.bin"


def build_bytes(seed: int) -> bytes:
    return serialise({"seed": seed, "version": GENERATOR_VERSION}, build_tables(seed))


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_or_build(seed: int, directory: Path | None = None) -> KnowledgeBase:
    """The knowledge base from its cache file, building and caching it when missing or stale."""
    path = cache_path(seed, directory)
    try:
        kb = KnowledgeBase(path.read_bytes())
        if kb.seed == seed and kb.version == GENERATOR_VERSION:
            return kb
    except (OSError, FormatError, KeyError, ValueError):
        pass
    data = build_bytes(seed)
    try:
        write_atomically(path, data)
    except OSError:
        pass  # an unwritable cache only costs a rebuild next time
    return KnowledgeBase(data)


_instances: dict[tuple[int, str], KnowledgeBase] = {}
_lock = threading.Lock()


def knowledge_base(seed: int = DEFAULT_SEED) -> KnowledgeBase:
    """The shared read-only knowledge base for ``seed`` (built at most once per process)."""
    key = (seed, str(cache_dir()))
    with _lock:
        if key not in _instances:
            _instances[key] = load_or_build(seed)
        return _instances[key]
