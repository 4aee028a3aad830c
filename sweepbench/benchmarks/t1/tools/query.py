"""Search and filter over knowledge-base tables, shared by every domain.

A domain declares its criteria once (which tool parameter constrains which column, how); the
same declaration serves its search tool (rows of a city) and its filter tool (rows of a cached
result set). Criteria run vectorised over the candidate rows, so a search costs microseconds
per criterion; free-text matching runs last, on what the other criteria left.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, Callable, Iterable

import numpy as np

from sweepbench.benchmarks.t1.data.store import Table
from sweepbench.benchmarks.t1.tools.checks import parse_date, parse_time
from sweepbench.benchmarks.t1.tools.state import Episode
from sweepbench.errors import ToolError

Render = Callable[[Episode, int], dict]


@dataclass(frozen=True)
class Criterion:
    """Keeps rows whose ``column`` satisfies the parameter ``param``; ``kind`` says how."""

    param: str
    kind: str  # flag | one_of | at_most | at_least | between | after | before | dates | text | custom
    column: str = ""
    fn: Callable[[Table, np.ndarray, Any, dict], np.ndarray] | None = None  # for "custom"

    @property
    def col(self) -> str:
        return self.column or self.param

    def keep(self, table: Table, rows: np.ndarray, value: Any, values: dict | None = None) -> np.ndarray:
        if self.kind == "custom":
            return self.fn(table, rows, value, values or {})  # type: ignore[misc]
        if self.kind == "text":
            wanted = [" ".join(str(v).split()).casefold() for v in _as_list(value, self.param)]
            return rows[[any(w in table.string(self.col, int(r)).casefold() for w in wanted)
                         for r in rows]] if len(rows) else rows
        data = table[self.col][rows]
        if self.kind == "flag":
            return rows[data == bool(value)]
        if self.kind == "one_of":
            return rows[np.isin(data, self._codes(table, value))]
        if self.kind == "at_most":
            return rows[data <= _number(value, self.param)]
        if self.kind == "at_least":
            return rows[data >= _number(value, self.param)]
        if self.kind == "between":
            lo, hi = _pair(value, self.param, _number)
            return rows[(data >= lo) & (data <= hi)]
        if self.kind in ("after", "before"):
            t = parse_time(value, self.param)
            return rows[data >= t] if self.kind == "after" else rows[data <= t]
        if self.kind == "dates":
            lo, hi = _pair(value, self.param, parse_date)
            return rows[(data >= np.datetime64(lo, "D")) & (data <= np.datetime64(hi, "D"))]
        raise AssertionError(self.kind)

    def _codes(self, table: Table, value: Any) -> list[int]:
        values = _as_list(value, self.param)
        if self.col not in table.vocab:  # an integer column such as price_level
            return [int(_number(v, self.param)) for v in values]
        codes = []
        for v in values:
            code = table.code(self.col, v) if isinstance(v, str) else None
            if code is None:
                choices = table.vocab[self.col]
                hint = f"; choose from: {', '.join(choices)}" if len(choices) <= 70 else ""
                raise ToolError(f"unknown {self.param} {v!r}{hint}")
            codes.append(code)
        return codes


def _as_list(value: Any, param: str) -> list:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise ToolError(f"`{param}` must not be an empty list")
    return values


def _number(value: Any, param: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolError(f"`{param}` must be a number, got {value!r}")
    return float(value)


def _pair(value: Any, param: str, parse: Callable) -> tuple:
    if not isinstance(value, list) or len(value) != 2:
        raise ToolError(f"`{param}` must be a list of two values [from, to], got {value!r}")
    lo, hi = parse(value[0], param), parse(value[1], param)
    if lo > hi:
        raise ToolError(f"`{param}` runs backwards: {value[0]} is after {value[1]}")
    return lo, hi


def flags(names: Iterable[str]) -> tuple[Criterion, ...]:
    return tuple(Criterion(n, "flag") for n in names)


def given(values: dict[str, Any], skip: Iterable[str] = ()) -> dict[str, Any]:
    """The arguments the caller actually set (None means "not a criterion")."""
    skip = set(skip) | {"db"}
    return {k: v for k, v in values.items() if v is not None and k not in skip}


def select(table: Table, rows: np.ndarray, criteria: tuple[Criterion, ...],
           values: dict[str, Any]) -> np.ndarray:
    """Rows satisfying every criterion that has a value; free text last."""
    ordered = sorted((c for c in criteria if c.param in values), key=lambda c: c.kind == "text")
    for c in ordered:
        rows = c.keep(table, rows, values[c.param], values)
        if not len(rows):
            break
    return rows


def describe(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_short(v)}" for k, v in values.items())


def _short(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "/".join(str(x) for x in v)
    return str(v)


def city_rows(ep: Episode, table: str, city: str, state: str | None) -> tuple[np.ndarray, str]:
    """The table's rows in the named city, and the city as text for summaries."""
    if not isinstance(city, str) or not city.strip():
        raise ToolError("`city` must be a city name such as \"Denver\"")
    cities = ep.kb.cities_named(city, state)
    if not cities:
        where = f"{city}, {state}" if state else city
        raise ToolError(f"no city named {where!r} in the service area")
    return ep.kb.in_cities(table, cities), city.strip() + (f", {state.strip()}" if state else "")


def search(ep: Episode, tool: str, table: str, rows: np.ndarray, where: str,
           criteria: tuple[Criterion, ...], values: dict[str, Any], noun: str, render: Render) -> dict:
    """Run a search over ``rows``, cache the matches under a new key, show the first page."""
    found = select(ep.kb[table], rows, criteria, values)
    summary = f"{len(found)} {noun} {where}".rstrip() + (f" ({describe(values)})" if values else "")
    key = ep.remember(tool, table, found, summary, render)
    return ep.page(key, found, render)


def filter_cached(ep: Episode, tool: str, table: str, cache_key: str, criteria: tuple[Criterion, ...],
                  values: dict[str, Any], noun: str, render: Render) -> dict:
    """Narrow a cached result set of ``table``; the narrowed set gets its own key."""
    entry = ep.cache.get(cache_key)
    if entry is None:
        known = ", ".join(sorted(ep.cache)) or "none yet"
        raise ToolError(f"no cached results under {cache_key!r}; cache keys so far: {known}")
    if entry.table != table or entry.rows is None:
        raise ToolError(f"{cache_key!r} does not hold {noun}; use the matching filter tool")
    if not values:
        raise ToolError("give at least one criterion to filter by")
    found = select(ep.kb[table], entry.rows, criteria, values)
    summary = f"{len(found)} {noun} from {cache_key} ({describe(values)})"
    key = ep.remember(tool, table, found, summary, render)
    return ep.page(key, found, render)


def on_or_after(ep: Episode, day: date, what: str) -> None:
    if day < ep.now.date():
        raise ToolError(f"{what} {day.isoformat()} is in the past (today is {ep.now.date().isoformat()})")
