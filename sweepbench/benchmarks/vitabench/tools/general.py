"""The eight tools every VitaBench domain shares: places, weather, holidays, the user's data.

Behaviour, texts and argument handling are upstream VitaBench's (``environment/toolkit.py``,
class ``ToolKitBase``); see ``calling`` for the convention. The updated release refuses an
empty address or holiday name (``self.rules.named_answers``). Two things differ on purpose:
addresses are looked up among the episode's own places only (upstream's registry leaks other
tasks' addresses), and holidays come from the ``holidays`` package installed here.
"""

from __future__ import annotations

import math
from datetime import datetime

import holidays
from rapidfuzz import fuzz, process, utils

from sweepbench.benchmarks.vitabench.tools import db
from sweepbench.benchmarks.vitabench.tools.calling import require, tool_of
from sweepbench.benchmarks.vitabench.tools.fuzzy import fuzzy_ratio_match, rerank
from sweepbench.benchmarks.vitabench.tools.state import ToolState

tool = tool_of("ToolKitBase")

# Upstream's fixed holiday table, by language: facts (dates), kept as data.
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


def is_time(value: str, fmt: str = "%Y-%m-%d %H:%M:%S") -> bool:
    """Upstream's format check: ``strptime`` (so ``2025-6-1`` passes; a non-string raises)."""
    return db.is_time(value, fmt)


@tool("general")
def longitude_latitude_to_distance(self: ToolState, longitude1: float, latitude1: float,
                                   longitude2: float, latitude2: float) -> float:
    """Distance in meters between two points given by longitude and latitude.

    Args:
        longitude1: Longitude of the first point.
        latitude1: Latitude of the first point.
        longitude2: Longitude of the second point.
        latitude2: Latitude of the second point.
    """
    if longitude1 == longitude2 and latitude1 == latitude2:
        return 0.0
    lon1, lat1, lon2, lat2 = map(math.radians, [longitude1, latitude1, longitude2, latitude2])
    a = (math.sin((lat2 - lat1) / 2) ** 2
         + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2)
    return round(6371000 * 2 * math.asin(math.sqrt(a)), 0)


@tool("general")
def weather(self: ToolState, address: str, date_start: str, date_end: str) -> str:
    """Weather forecast for the city of an address, for each day from date_start to date_end.

    Args:
        address: An address or city name.
        date_start: First day, as yyyy-mm-dd.
        date_end: Last day, as yyyy-mm-dd.
    """
    require(is_time(date_start, "%Y-%m-%d"),
            f"Invalid date_start format. Expected yyyy-mm-dd, got: {date_start}")
    require(is_time(date_end, "%Y-%m-%d"), f"Invalid date_end format. Expected yyyy-mm-dd, got: {date_end}")
    if self.rules.named_answers:
        require(address and address.strip(), "Address cannot be empty")
    city, _, score = rerank(address, {w.city: w.city for w in self.weather},
                            dedupe=self.rules.dedupe_search)[0]
    if score < 50:
        raise ValueError(f"Weather information not found for {address}")
    start = datetime.strptime(date_start, "%Y-%m-%d").date()
    end = datetime.strptime(date_end, "%Y-%m-%d").date()
    days = [w for w in self.weather
            if w.city == city and start <= datetime.strptime(w.datetime, "%Y-%m-%d").date() <= end]
    if not days:
        return f"No weather information found for {city} between {date_start} and {date_end}"
    return "\n".join(repr(w) for w in sorted(days, key=lambda w: w.datetime))


@tool("general")
def address_to_longitude_latitude(self: ToolState, address: str) -> list[float]:
    """Longitude and latitude of an address, as [longitude, latitude].

    Args:
        address: The address to locate.
    """
    if self.rules.named_answers:
        require(address and address.strip(), "Address cannot be empty")
    best, _, score = rerank(address, {a: a for a in self.places}, dedupe=self.rules.dedupe_search)[0]
    if score < 30 or not fuzzy_ratio_match(address, best):
        raise ValueError(f"Longitude and latitude not found for address {address}")
    place = self.places[best]
    return [place.longitude, place.latitude]


@tool("general")
def get_date_holiday_info(self: ToolState, date: str) -> str:
    """Whether a date is a public holiday in China, and if so its name.

    Args:
        date: The date, as yyyy-mm-dd.
    """
    require(is_time(date, "%Y-%m-%d"), f"Date format error, should be yyyy-mm-dd, actual: {date}")
    day = datetime.strptime(date, "%Y-%m-%d")
    name = holidays.China(years=day.year).get(day)
    return name if name is not None else f"Date {date} is not a holiday"


@tool("general")
def get_holiday_date(self: ToolState, year: str, holiday_name: str) -> str:
    """The date of a named holiday or festival in a given year.

    Args:
        year: The year, e.g. "2025".
        holiday_name: The holiday's name, in the conversation's language.
    """
    table = _HOLIDAYS["en" if self.lang == "en" else "zh"]
    if year not in table:
        return f"Holiday data for year {year} not found"
    if self.rules.named_answers:
        require(holiday_name and holiday_name.strip(), "Holiday name cannot be empty")
    best = process.extract(utils.default_process(holiday_name), list(table[year]), limit=None,
                           scorer=fuzz.partial_ratio, processor=utils.default_process)
    if best and int(round(best[0][1])) >= 80:
        return table[year][best[0][0]]
    return f"Holiday named '{holiday_name}' not found in year {year}"


@tool("read")
def get_user_historical_behaviors(self: ToolState) -> str:
    """The user's profile and habits: home and work address, usual orders, preferences."""
    return str(self.user_historical_behaviors)


@tool("read")
def get_user_all_orders(self: ToolState) -> str:
    """All of the user's orders, of every kind and status."""
    if self.orders is None:
        return "User currently has no order information"
    return "\n".join(repr(order) for order in self.orders.values())


@tool("read")
def get_nearby(self: ToolState, longitude: float, latitude: float, range: float) -> str:
    """Stores, shops, hotels, attractions, and flights or trains whose airport or station lies
    within a radius of a point.

    Args:
        longitude: Longitude of the center.
        latitude: Latitude of the center.
        range: Radius in meters.
    """

    def near(place) -> bool:
        return longitude_latitude_to_distance(self, longitude, latitude, place.longitude,
                                              place.latitude) <= range

    found = []
    for venues in (self.stores, self.shops, self.hotels, self.attractions):
        found += [str(v) for v in (venues or {}).values() if near(v.location)]
    for flight in (self.flights or {}).values():
        if near(flight.departure_airport_location) or near(flight.arrival_airport_location):
            found.append(str(flight))
    for train in (self.trains or {}).values():
        if near(train.departure_station_location) or near(train.arrival_station_location):
            found.append(str(train))
    return "\n".join(found) if found else "No search results found"
