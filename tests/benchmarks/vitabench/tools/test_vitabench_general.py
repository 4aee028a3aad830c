"""The eight general tools, over the sample world."""

from __future__ import annotations

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS

TASK = next(t for t in load_tasks(("delivery",), data_dir=None) if t.id == "SB-D-004")
KIT = TOOLS.toolkit(TASK)
WORK = "Maplebrook Community Clinic, 40 Elm Street, Old Town, Maplebrook"


@pytest.fixture
def db():
    return TOOLS.new_state(TASK)


def call(db, name, **args):
    return KIT.call(db, name, msgspec.json.encode(args))


def test_distance_between_points(db):
    assert call(db, "longitude_latitude_to_distance", longitude1=120.0, latitude1=30.0,
                longitude2=120.0, latitude2=30.0).value == 0.0
    one_degree = call(db, "longitude_latitude_to_distance", longitude1=0, latitude1=0,
                      longitude2=0, latitude2=1).value
    assert one_degree == 111195.0  # 6371 km * pi / 180, in whole meters
    assert not call(db, "longitude_latitude_to_distance", longitude1="east", latitude1=0,
                    longitude2=0, latitude2=1).ok


def test_weather(db):
    days = call(db, "weather", address="Maplebrook Old Town", date_start="2025-03-14",
                date_end="2025-03-15").value
    assert [(w.city, w.datetime, w.category) for w in days] == [("Maplebrook", "2025-03-14", "cloudy")]
    none = call(db, "weather", address="Maplebrook", date_start="2025-04-01", date_end="2025-04-02")
    assert none.ok and none.content.startswith("No weather information found for Maplebrook")
    assert "Weather information not found" in call(db, "weather", address="Quxyz", date_start="2025-03-14",
                                                   date_end="2025-03-14").content
    assert "date_start must be a date" in call(db, "weather", address="Maplebrook", date_start="14/03/2025",
                                               date_end="2025-03-14").content


def test_address_to_coordinates(db):
    assert call(db, "address_to_longitude_latitude", address=WORK).value == [120.1490, 30.2702]
    partial = call(db, "address_to_longitude_latitude", address="Community Clinic, Elm Street")
    assert partial.value == [120.1490, 30.2702]
    out = call(db, "address_to_longitude_latitude", address="qqqq xxxx zzzz")
    assert not out.ok and "not found for address" in out.content


def test_addresses_used_in_orders_become_known(db):
    """Like upstream's registry: an address an order went to is a known place afterwards."""
    address = "Back door, Community Clinic, Elm Street"
    assert address not in db.places()
    assert call(db, "create_delivery_order", user_id="U900001", store_id="MB-S04", product_ids=["MB-S04-P01"],
                product_cnts=[1], address=address, dispatch_time="2025-03-14 12:15:00").ok
    assert db.places()[address].longitude == 120.1490


def test_holiday_info_speaks_the_task_language(db):
    assert call(db, "get_date_holiday_info", date="2025-10-01").content == "National Day"
    assert call(db, "get_date_holiday_info", date="2025-03-14").content == "Date 2025-03-14 is not a holiday"
    assert not call(db, "get_date_holiday_info", date="2025/10/01").ok
    zh = TOOLS.new_state(msgspec.structs.replace(TASK, lang="zh"))
    assert call(zh, "get_date_holiday_info", date="2025-10-01").content == "国庆节"


def test_holiday_date(db):
    assert call(db, "get_holiday_date", year="2025", holiday_name="Mid-Autumn").content == "2025-10-06"
    assert call(db, "get_holiday_date", year="2022", holiday_name="Mid-Autumn").content == \
        "Holiday data for year 2022 not found"
    assert "not found in year 2025" in call(db, "get_holiday_date", year="2025", holiday_name="Quxyz").content
    assert not call(db, "get_holiday_date", year=2025, holiday_name="Mid-Autumn").ok  # year is text
    zh = TOOLS.new_state(msgspec.structs.replace(TASK, lang="zh"))
    assert call(zh, "get_holiday_date", year="2024", holiday_name="中秋").content == "2024-09-17"


def test_user_historical_behaviors(db):
    habits = call(db, "get_user_historical_behaviors").value
    assert habits["user id"] == "U900001" and "lunch" in habits
    assert not call(db, "get_user_historical_behaviors", user_id="U900001").ok  # takes no arguments


def test_user_all_orders(db):
    assert [o.order_id for o in call(db, "get_user_all_orders").value] == ["SB-H-0001", "SB-D-004O01"]
    db.orders.clear()
    assert call(db, "get_user_all_orders").content == "User currently has no order information"


def test_nearby(db):
    def near(meters):
        found = call(db, "get_nearby", longitude=120.1530, latitude=30.2718, range=meters).value
        return [s.store_id for s in found]

    assert near(308) == ["MB-S04"]  # the bakery itself
    assert near(309) == ["MB-S01", "MB-S04"]  # and the noodle house, 309 m away
    far = call(db, "get_nearby", longitude=0, latitude=0, range=1000)
    assert far.ok and far.content == "No search results found"
