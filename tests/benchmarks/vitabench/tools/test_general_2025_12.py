"""The general tools in the updated release (upstream 742e240's ``environment/toolkit.py``):
an empty address or holiday name is refused before anything else is looked at; the November
release looks them up (and fails, or finds a match)."""

from __future__ import annotations

import json

import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import RELEASE_TOOLS

TASK = next(t for t in load_tasks(("delivery",), data_dir=None) if t.id == "SB-D-004")
NEW, OLD = RELEASE_TOOLS["2025-12"], RELEASE_TOOLS["2025-11"]


def said(tools, name, **args):
    out = tools.toolkit(TASK).call(tools.new_state(TASK), name, json.dumps(args))
    return out.content, out.ok


@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_address_is_refused(address):
    assert said(NEW, "address_to_longitude_latitude", address=address) == ("Address cannot be empty", True)
    assert said(NEW, "weather", address=address, date_start="2025-03-14", date_end="2025-03-14") == (
        "Address cannot be empty", True)
    assert said(OLD, "address_to_longitude_latitude", address=address) == (
        f"Error: Longitude and latitude not found for address {address}", False)


def test_the_dates_are_checked_before_the_address_and_a_non_text_address_fails():
    assert said(NEW, "weather", address="", date_start="bad", date_end="2025-03-14") == (
        "Invalid date_start format. Expected yyyy-mm-dd, got: bad", True)
    assert said(NEW, "address_to_longitude_latitude", address=5) == (
        "Error: 'int' object has no attribute 'strip'", False)


def test_an_empty_holiday_name_is_refused_once_the_year_is_known():
    assert said(NEW, "get_holiday_date", year="2025", holiday_name=" ") == ("Holiday name cannot be empty", True)
    assert said(NEW, "get_holiday_date", year="2031", holiday_name="") == (
        "Holiday data for year 2031 not found", True)
    assert said(OLD, "get_holiday_date", year="2025", holiday_name=" ") == (
        "Holiday named ' ' not found in year 2025", True)
