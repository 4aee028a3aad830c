"""The eight tools every VitaBench domain shares: places, weather, holidays, the user's data.

Behaviour follows upstream VitaBench (``environment/toolkit.py``), with one difference: upstream
looks addresses and products up in process-wide registries that leak between tasks, here
lookups see only the episode's own database.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Any

import holidays
from rapidfuzz import fuzz, process, utils

from sweepbench.benchmarks.vitabench.tools.db import (
    Database,
    Order,
    Weather,
    distance_m,
    rank,
)
from sweepbench.errors import ToolError
from sweepbench.tools.base import tool

# Upstream's fixed holiday table, by language. Facts (dates), kept as data.
_HOLIDAYS = {
    "en": {
        "2025": {
            "New Year's Day": "2025-01-01", "Start of Autumn": "2025-08-07",
            "Women's Day": "2025-03-08", "Laba Festival": "2025-01-07",
            "Dragon Head Festival": "2025-03-01", "Party Founding Day": "2025-07-01",
            "Qingming Festival": "2025-04-04", "Double Ninth Festival": "2025-10-29",
            "Dragon Boat Festival": "2025-05-31", "Mother's Day": "2025-05-11",
            "Lantern Festival": "2025-02-15", "Labor Day": "2025-05-01",
            "Qixi Festival": "2025-08-29", "Winter Solstice": "2025-12-21",
            "Christmas Day": "2025-12-25", "National Day": "2025-10-01",
            "Mid-Autumn Festival": "2025-10-06",
        },
        "2024": {
            "Double Ninth Festival": "2024-10-11", "Qixi Festival": "2024-08-10",
            "Valentine's Day": "2024-02-14", "Qingming Festival": "2024-04-04",
            "Dragon Boat Festival": "2024-06-10", "Lantern Festival": "2024-02-24",
            "Mid-Autumn Festival": "2024-09-17",
        },
        "2023": {
            "National Day": "2023-10-01", "Dragon Boat Festival": "2023-06-22",
            "Mid-Autumn Festival": "2023-09-29", "Qingming Festival": "2023-04-05",
            "Double Ninth Festival": "2023-10-23", "Father's Day": "2023-06-18",
        },
    },
    "zh": {
        "2025": {
            "元旦节": "2025-01-01", "立秋": "2025-08-07", "妇女节": "2025-03-08",
            "腊八节": "2025-01-07", "龙头节": "2025-03-01", "建党节": "2025-07-01",
            "清明节": "2025-04-04", "重阳节": "2025-10-29", "端午节": "2025-05-31",
            "母亲节": "2025-05-11", "元宵节": "2025-02-15", "劳动节": "2025-05-01",
            "七夕节": "2025-08-29", "冬至": "2025-12-21", "圣诞节": "2025-12-25",
            "国庆节": "2025-10-01", "中秋节": "2025-10-06",
        },
        "2024": {
            "重阳节": "2024-10-11", "七夕节": "2024-08-10", "情人节": "2024-02-14",
            "清明节": "2024-04-04", "端午节": "2024-06-10", "元宵节": "2024-02-24",
            "中秋节": "2024-09-17",
        },
        "2023": {
            "国庆节": "2023-10-01", "端午节": "2023-06-22", "中秋节": "2023-09-29",
            "清明节": "2023-04-05", "重阳节": "2023-10-23", "父亲节": "2023-06-18",
        },
    },
}


def finite(*values: float) -> None:
    """Refuse infinities and NaN (JSON numbers like 1e999 decode to them)."""
    if not all(math.isfinite(v) for v in values):
        raise ToolError("numbers must be finite")


def _date(value: str, name: str) -> date:
    try:
        return datetime.strptime(value, "%Y-%m-%d").date()
    except ValueError:
        raise ToolError(f"{name} must be a date as yyyy-mm-dd, got {value!r}") from None


@tool("general")
def longitude_latitude_to_distance(db: Database, longitude1: float, latitude1: float,
                                   longitude2: float, latitude2: float) -> float:
    """Distance in meters between two points given by longitude and latitude.

    Args:
        longitude1: Longitude of the first point.
        latitude1: Latitude of the first point.
        longitude2: Longitude of the second point.
        latitude2: Latitude of the second point.
    """
    finite(longitude1, latitude1, longitude2, latitude2)
    return distance_m(longitude1, latitude1, longitude2, latitude2)


@tool("general")
def weather(db: Database, address: str, date_start: str, date_end: str) -> list[Weather] | str:
    """Weather forecast for the city of an address, for each day from date_start to date_end.

    Args:
        address: An address or city name.
        date_start: First day, as yyyy-mm-dd.
        date_end: Last day, as yyyy-mm-dd.
    """
    start, end = _date(date_start, "date_start"), _date(date_end, "date_end")
    cities = rank(address, {w.city: w.city for w in db.weather})
    if not cities or cities[0][1] < 50:
        raise ToolError(f"Weather information not found for {address}")
    city = cities[0][0]
    days = sorted((w for w in db.weather  # dates were checked when the database was built
                   if w.city == city and start <= _date(w.datetime, "datetime") <= end),
                  key=lambda w: _date(w.datetime, "datetime"))
    return days or f"No weather information found for {city} between {date_start} and {date_end}"


@tool("general")
def address_to_longitude_latitude(db: Database, address: str) -> list[float]:
    """Longitude and latitude of an address, as [longitude, latitude].

    Args:
        address: The address to locate.
    """
    place = db.geocode(address)
    return [place.longitude, place.latitude]


@tool("general")
def get_date_holiday_info(db: Database, date: str) -> str:
    """Whether a date is a public holiday in China, and if so its name.

    Args:
        date: The date, as yyyy-mm-dd.
    """
    day = _date(date, "date")
    calendar = holidays.China(years=day.year, language="zh_CN" if db.lang == "zh" else "en_US")
    return calendar.get(day) or f"Date {date} is not a holiday"


@tool("general")
def get_holiday_date(db: Database, year: str, holiday_name: str) -> str:
    """The date of a named holiday or festival in a given year.

    Args:
        year: The year, e.g. "2025".
        holiday_name: The holiday's name, in the conversation's language.
    """
    table = _HOLIDAYS["zh" if db.lang == "zh" else "en"]
    if year not in table:
        return f"Holiday data for year {year} not found"
    best = process.extractOne(holiday_name, list(table[year]), scorer=fuzz.partial_ratio,
                              processor=utils.default_process)
    if best is None or best[1] < 80:
        return f"Holiday named '{holiday_name}' not found in year {year}"
    return table[year][best[0]]


@tool("read")
def get_user_historical_behaviors(db: Database) -> dict[str, Any]:
    """The user's profile and habits: home and work address, usual orders, preferences."""
    return db.user_historical_behaviors


@tool("read")
def get_user_all_orders(db: Database) -> list[Order] | str:
    """All of the user's orders, of every kind and status."""
    return list(db.orders.values()) or "User currently has no order information"


@tool("read")
def get_nearby(db: Database, longitude: float, latitude: float, range: float) -> list[Any] | str:
    """Stores, shops, hotels, attractions, and flights or trains whose airport or station lies
    within a radius of a point.

    Args:
        longitude: Longitude of the center.
        latitude: Latitude of the center.
        range: Radius in meters.
    """
    finite(longitude, latitude, range)

    def near(*places: Any) -> bool:
        return any(distance_m(longitude, latitude, p.longitude, p.latitude) <= range for p in places)

    found: list[Any] = []
    for venues in (db.stores, db.shops, db.hotels, db.attractions):
        found += [v.summary() for v in venues.values() if near(v.location)]
    found += [f.summary() for f in db.flights.values()
              if near(f.departure_airport_location, f.arrival_airport_location)]
    found += [t.summary() for t in db.trains.values()
              if near(t.departure_station_location, t.arrival_station_location)]
    return found or "No search results found"
