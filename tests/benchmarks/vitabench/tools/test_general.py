"""The eight general tools, over the sample world: upstream's texts and behaviour."""

from __future__ import annotations

import copy
import json

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS, general

TASK = next(t for t in load_tasks(("delivery",), data_dir=None) if t.id == "SB-D-004")
KIT = TOOLS.toolkit(TASK)
WORK = "Maplebrook Community Clinic, 40 Elm Street, Old Town, Maplebrook"


@pytest.fixture
def db():
    return TOOLS.new_state(TASK)


def call(db, name, **args):
    return KIT.call(db, name, json.dumps(args))


def test_distance_between_points(db):
    same = call(db, "longitude_latitude_to_distance", longitude1=120.0, latitude1=30.0,
                longitude2=120.0, latitude2=30.0)
    assert (same.content, same.value) == ('"0.0"', 0.0)
    one_degree = call(db, "longitude_latitude_to_distance", longitude1=0, latitude1=0, longitude2=0, latitude2=1)
    assert one_degree.content == '"111195.0"'  # 6371 km * pi / 180, rounded to the meter


def test_weather_lines_and_refusals(db):
    days = call(db, "weather", address="Maplebrook Old Town", date_start="2025-03-14", date_end="2025-03-15")
    assert days.content == ("city: Maplebrook, weather: cloudy, datetime: 2025-03-14, "
                            "temperature: 9.0~16.0, humidity: 62.0")
    none = call(db, "weather", address="Maplebrook", date_start="2025-04-01", date_end="2025-04-02")
    assert none.content == "No weather information found for Maplebrook between 2025-04-01 and 2025-04-02"
    unknown = call(db, "weather", address="Quxyz", date_start="2025-03-14", date_end="2025-03-14")
    assert (unknown.content, unknown.ok) == ("Error: Weather information not found for Quxyz", False)
    bad = call(db, "weather", address="Maplebrook", date_start="14/03/2025", date_end="2025-03-14")
    assert (bad.content, bad.ok) == ("Invalid date_start format. Expected yyyy-mm-dd, got: 14/03/2025", True)
    loose = call(db, "weather", address="Maplebrook", date_start="2025-3-14", date_end="2025-3-14")
    assert loose.content.startswith("city: Maplebrook")  # strptime takes unpadded fields


def test_address_to_coordinates(db):
    assert call(db, "address_to_longitude_latitude", address=WORK).content == '["120.149", "30.2702"]'
    partial = call(db, "address_to_longitude_latitude", address="Community Clinic, Elm Street")
    assert partial.value == [120.149, 30.2702]
    out = call(db, "address_to_longitude_latitude", address="qqqq xxxx zzzz")
    assert (out.content, out.ok) == ("Error: Longitude and latitude not found for address qqqq xxxx zzzz", False)


def test_addresses_ordered_to_become_known_in_that_episode_only(db):
    """Like upstream's registry, an address an order went to is a known place afterwards; unlike
    upstream's (which lives as long as the worker thread), it is forgotten with the episode."""
    address = "Back door, Community Clinic, Elm Street, Maplebrook"
    assert address not in db.places
    placed = call(db, "create_delivery_order", user_id="U900001", store_id="MB-S04", product_ids=["MB-S04-P01"],
                  product_cnts=[1], address=address, dispatch_time="2025-03-14 12:15:00")
    assert placed.ok and db.places[address].longitude == 120.149
    assert address not in TOOLS.new_state(TASK).places


def test_holidays(db):
    assert call(db, "get_date_holiday_info", date="2025-10-01").content == "National Day"
    assert call(db, "get_date_holiday_info", date="2025-03-14").content == "Date 2025-03-14 is not a holiday"
    bad = call(db, "get_date_holiday_info", date="1 Oct")
    assert (bad.content, bad.ok) == ("Date format error, should be yyyy-mm-dd, actual: 1 Oct", True)
    assert call(db, "get_holiday_date", year="2025", holiday_name="mid autumn").content == "2025-10-06"
    assert call(db, "get_holiday_date", year="2023", holiday_name="Lantern").content == \
        "Holiday named 'Lantern' not found in year 2023"
    zh = TOOLS.new_state(msgspec.structs.replace(TASK, lang="zh"))
    assert call(zh, "get_holiday_date", year="2025", holiday_name="中秋").content == "2025-10-06"
    assert call(zh, "get_holiday_date", year="2025", holiday_name="Mid-Autumn Festival").content == \
        "Holiday named 'Mid-Autumn Festival' not found in year 2025"


def test_user_history_and_orders_print_as_python_text(db):
    assert call(db, "get_user_historical_behaviors").content == str(TASK.environment["user_historical_behaviors"])
    orders = call(db, "get_user_all_orders").content.split("\n")
    assert len(orders) == len(TASK.environment["orders"])
    assert orders[0].startswith("Order(order_id:SB-H-0001, order_type:delivery, user_id:U900001, store_id:MB-S01, ")
    raw = TASK.environment["orders"]["SB-H-0001"]["products"]  # the file's objects, as Python prints them
    assert orders[0].endswith(f"status:delivered, products:{raw!r})") and "'price': 32.0" in orders[0]
    empty = msgspec.structs.replace(TASK, environment={**TASK.environment, "orders": {}})
    assert KIT.call(TOOLS.new_state(empty), "get_user_all_orders", "{}").content == ""


def test_nearby_lists_the_environments_own_tables(db):
    near = call(db, "get_nearby", longitude=120.149, latitude=30.2702, range=3000).content.split("\n")
    assert near and all(line.startswith("Store(name=") for line in near)
    assert call(db, "get_nearby", longitude=0, latitude=0, range=10).content == "No search results found"
    merged = msgspec.structs.replace(TASK, domain="delivery,instore")
    shops = copy.deepcopy(load_tasks(("instore",), data_dir=None)[0].environment["shops"])
    both = msgspec.structs.replace(merged, environment={**TASK.environment, "shops": shops})
    state = TOOLS.new_state(both)
    lines = TOOLS.toolkit(both).call(state, "get_nearby", json.dumps(
        {"longitude": 120.149, "latitude": 30.2702, "range": 30000})).content.split("\n")
    assert {line.split("(")[0] for line in lines} == {"Store", "Shop"}
    # a delivery environment ignores the in-store tables of the same data
    assert "Shop(" not in KIT.call(TOOLS.new_state(msgspec.structs.replace(both, domain="delivery")),
                                   "get_nearby", json.dumps({"longitude": 120.149, "latitude": 30.2702,
                                                             "range": 30000})).content


@pytest.mark.parametrize("fmt", ["%Y-%m-%d", "%Y-%m-%d %H:%M:%S"])
def test_time_check_is_strptime_cached_or_not(fmt) -> None:
    """The cached format check answers as strptime does, twice in a row (the second from the
    cache), and a non-string still raises strptime's own TypeError (upstream's behaviour)."""
    for value, ok in [("2025-6-1", fmt == "%Y-%m-%d"), ("2025-06-01 09:30:00", fmt != "%Y-%m-%d"),
                      ("2025-13-01", False), ("", False), ("2025-06-01 9:3:0", fmt != "%Y-%m-%d")]:
        assert general.is_time(value, fmt) is ok and general.is_time(value, fmt) is ok, value
    for bad in (None, ["2025-06-01"], 20250601):
        with pytest.raises(TypeError, match="strptime"):
            general.is_time(bad, fmt)  # type: ignore[arg-type]
