"""The T1 tools: the Table 5 inventory, schemas, caching, policies, bad arguments, overlays."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta

import msgspec
import pytest

from sweepbench.benchmarks.t1.data.ontology import DOMAINS
from sweepbench.benchmarks.t1.tools import DOMAIN_TOOLKITS, GENERAL, TOOLS, toolkit_for
from sweepbench.benchmarks.t1.tools.state import Episode
from sweepbench.datasets.task import Task

TABLE5 = {
    "attraction": "search_attractions filter_attractions get_attraction_details get_nearby_attractions "
                  "get_top_attractions",
    "bar": "search_bars filter_bars book_bar_reservation cancel_bar_reservation modify_bar_reservation",
    "cafe": "search_cafes filter_cafes get_cafe_menu place_cafe_order cancel_cafe_order get_cafe_order",
    "cruise": "search_cruises filter_cruises book_cruise_reservation cancel_cruise_reservation "
              "modify_cruise_reservation",
    "dessert": "search_dessert_shops filter_dessert_shops search_bakeries filter_bakeries get_shop_menu "
               "place_dessert_order cancel_dessert_order get_dessert_order",
    "flight": "search_flight filter_flight book_flight cancel_flight modify_flight_reservation",
    "food_and_dining": "search_food_and_dining filter_food_and_dining get_food_and_dining_menu "
                       "book_food_and_dining_reservation cancel_food_and_dining_reservation "
                       "modify_food_and_dining_reservation get_food_and_dining_reservation "
                       "place_food_and_dining_pickup_order cancel_food_and_dining_pickup_order "
                       "modify_food_and_dining_pickup_order get_food_and_dining_pickup_order "
                       "place_food_and_dining_delivery_order cancel_food_and_dining_delivery_order "
                       "modify_food_and_dining_delivery_order get_food_and_dining_delivery_order",
    "hotel": "search_hotel filter_hotel book_hotel_reservation cancel_hotel_reservation "
             "modify_hotel_reservation get_hotel_reservation get_hotel_room_inventory",
    "kayak_rental": "search_kayak_rentals filter_kayak_rentals book_kayak_reservation cancel_kayak_reservation "
                    "modify_kayak_reservation get_rental_details",
    "live_show": "search_live_shows filter_live_shows book_live_show_reservation cancel_live_show_reservation "
                 "modify_live_show_reservation get_live_show_details check_live_show_seat_availability",
    "vehicle_rental": "search_vehicle_rentals filter_vehicle_rentals book_vehicle_rental_reservation "
                      "cancel_vehicle_rental_reservation modify_vehicle_rental_reservation",
}
CLOCK = datetime(2026, 4, 20, 9)


def test_inventory_is_table_5():
    assert {d: sorted(t.tools) for d, t in DOMAIN_TOOLKITS.items()} == {d: sorted(v.split()) for d, v in TABLE5.items()}
    assert sorted(GENERAL.tools) == ["get_results_from_cache", "save_to_cache"]
    assert len(toolkit_for(DOMAINS)) == 76


def test_every_schema_is_complete_and_kinds_follow_names():
    for tool in toolkit_for(DOMAINS).tools.values():
        params = tool.schema()["function"]["parameters"]
        assert params["properties"], tool.name
        assert all(p.get("description") for p in params["properties"].values()), tool.name
        mutates = tool.name.startswith(("book_", "place_", "modify_", "cancel_"))
        assert tool.kind == ("general" if tool.domain == "general" else "write" if mutates else "read"), tool.name


@pytest.fixture
def ep(kb):
    return Episode(kb, CLOCK)


@pytest.fixture
def call(ep):
    kit = toolkit_for(DOMAINS)

    def do(name, **args):
        out = kit.call(ep, name, msgspec.json.encode(args))
        return out.ok, (msgspec.json.decode(out.content) if out.ok else out.content)

    return do


@pytest.fixture
def user(kb):
    u = kb["users"]
    return {"user_id": u.ident(7), "card": u.string("card_last_four", 7)}


def test_results_are_cached_per_tool_and_filters_chain(call):
    ok, first = call("search_bars", city="Denver", has_happy_hour=True)
    ok2, second = call("search_bars", city="Denver")
    assert ok and ok2 and (first["cache_key"], second["cache_key"]) == ("search_bars_results_0", "search_bars_results_1")
    ok, narrowed = call("filter_bars", cache_key="search_bars_results_0", budget=40.0)
    assert narrowed["cache_key"] == "filter_bars_results_0" and 0 < narrowed["total"] <= first["total"]
    assert all(r["price_per_person"] <= 40 and "has_happy_hour" in r["features"] for r in narrowed["results"])
    ok, again = call("filter_bars", cache_key="filter_bars_results_0", has_live_music=True)
    assert again["cache_key"] == "filter_bars_results_1" and again["total"] <= narrowed["total"]
    ok, page = call("get_results_from_cache", cache_key="search_bars_results_1", offset=10)
    assert page["total"] == second["total"] and page["results"][0] != second["results"][0]


def test_filters_refuse_unknown_or_foreign_keys(call):
    assert "no cached results" in call("filter_hotel", cache_key="search_hotel_results_0", has_pool=True)[1]
    call("search_bars", city="Denver")
    assert "does not hold hotels" in call("filter_hotel", cache_key="search_bars_results_0", has_pool=True)[1]


def _snapshot(ep):
    return copy.deepcopy((sorted(ep.cache), ep.counters, ep.records, ep.used, ep.holds, ep.log))


def test_bad_arguments_are_errors_that_change_nothing(call, ep, user, kb):
    ok, bars = call("search_bars", city="Denver")
    ok, booked = call("book_bar_reservation", user_id=user["user_id"], venue_id=bars["results"][0]["venue_id"],
                      primary_guest_name="Ann Lee", number_guests=2, event_datetime="2026-05-01 20:00",
                      credit_card_last_four=user["card"], has_drivers_license=True)
    assert ok
    other = kb["users"].ident(8)
    before = _snapshot(ep)
    venue = bars["results"][0]["venue_id"]
    base = dict(user_id=user["user_id"], venue_id=venue, primary_guest_name="Ann Lee", number_guests=2,
                event_datetime="2026-05-01 20:00", credit_card_last_four=user["card"], has_drivers_license=True)
    bad_calls = [
        ("search_bars", dict(city="Atlantis")),
        ("search_bars", dict(city="Denver", bar_type=["Moon Bar"])),
        ("book_bar_reservation", {**base, "venue_id": "BAR99999"}),
        ("book_bar_reservation", {**base, "event_datetime": "next friday"}),
        ("book_bar_reservation", {**base, "event_datetime": "2026-01-01 20:00"}),
        ("book_bar_reservation", {**base, "credit_card_last_four": "0000x"}),
        ("book_bar_reservation", {**base, "number_guests": 40}),
        ("book_bar_reservation", {**base, "has_drivers_license": False}),
        ("modify_bar_reservation", dict(user_id=user["user_id"], reservation_id=booked["reservation_id"])),
        ("cancel_bar_reservation", dict(user_id=other, reservation_id=booked["reservation_id"])),
        ("cancel_flight", dict(user_id=user["user_id"], reservation_id=booked["reservation_id"])),
        ("search_flight", dict(departure_city="Denver", arrival_city="Atlantis", departure_date="2026-05-03")),
        ("place_cafe_order", dict(user_id=user["user_id"], cafe_id="CFE-000000", items=[], payment_method="cash")),
        ("get_hotel_room_inventory", dict(hotel_id="H001", check_in_date="2026-05-05", check_out_date="2026-05-01")),
        ("search_live_shows", dict(city="Denver", event_date_range=["2026-05-01"])),
        ("save_to_cache", dict(cache_key="search_bars_results_0", value=[1])),
    ]
    for name, args in bad_calls:
        ok, message = call(name, **args)
        assert not ok and message.startswith("Error: "), (name, args, message)
    assert _snapshot(ep) == before


def _book_bar(call, user, when):
    ok, bars = call("search_bars", city="Chicago")
    ok, booked = call("book_bar_reservation", user_id=user["user_id"], venue_id=bars["results"][0]["venue_id"],
                      primary_guest_name="Ann Lee", number_guests=3, event_datetime=when,
                      credit_card_last_four=user["card"], has_drivers_license=True)
    assert ok, booked
    return booked


def test_bar_cancellation_fee_applies_within_48_hours(call, user):
    late = _book_bar(call, user, "2026-04-21 20:00")
    early = _book_bar(call, user, "2026-04-25 20:00")
    ok, out = call("cancel_bar_reservation", user_id=user["user_id"], reservation_id=late["reservation_id"])
    assert (out["cancellation_fee"], out["refund"]) == (25.0, late["deposit"] - 25.0)
    ok, out = call("cancel_bar_reservation", user_id=user["user_id"], reservation_id=early["reservation_id"])
    assert (out["cancellation_fee"], out["refund"]) == (0.0, early["deposit"])
    assert call("cancel_bar_reservation", user_id=user["user_id"], reservation_id=early["reservation_id"])[1] \
        .startswith("Error: ")


def test_policies_are_enforced(call, user, kb):
    t = kb["cruises"]
    foreign = next(r for r in range(t.n) if t.string("destination", r) == "Mediterranean"
                   and t["cabins_interior"][r] > 0)
    ok, msg = call("book_cruise_reservation", user_id=user["user_id"], cruise_id=t.ident(foreign),
                   departure_date=str(t["departure_date"][foreign]), number_guests=2, primary_guest_name="Ann Lee",
                   cabin_type="interior", credit_card_last_four=user["card"], has_passport=False)
    assert not ok and "passport" in msg
    ok, cars = call("search_vehicle_rentals", city="Denver", category="car")
    ok, msg = call("book_vehicle_rental_reservation", user_id=user["user_id"],
                   vehicle_id=cars["results"][0]["vehicle_id"], start_date="2026-05-01", end_date="2026-05-03",
                   primary_driver_name="Ann Lee", has_drivers_license=False)
    assert not ok and "license" in msg
    ok, hotels = call("search_hotel", city="Denver")
    hotel = hotels["results"][0]["hotel_id"]
    ok, stock = call("get_hotel_room_inventory", hotel_id=hotel, check_in_date="2026-06-01",
                     check_out_date="2026-06-03")
    room = stock["rooms"][0]["room_id"]
    stay = dict(user_id=user["user_id"], hotel_id=hotel, room_id=room, payment_method="credit_card")
    assert call("book_hotel_reservation", check_in_date="2026-06-01", check_out_date="2026-06-03", **stay)[0]
    ok, msg = call("book_hotel_reservation", check_in_date="2026-06-02", check_out_date="2026-06-04", **stay)
    assert not ok and "not free" in msg
    ok, again = call("get_hotel_room_inventory", hotel_id=hotel, check_in_date="2026-06-01",
                     check_out_date="2026-06-03")
    assert room not in [r["room_id"] for r in again["rooms"]] and again["total"] == stock["total"] - 1


def test_episodes_are_independent_and_ids_deterministic(kb, user):
    kit = toolkit_for(DOMAINS)
    flights = kb["flights"]
    r = next(i for i in range(flights.n) if flights["seats_available"][i] >= 4)
    args = msgspec.json.encode(dict(user_id=user["user_id"], flight_id=flights.ident(r),
                                    passenger_names=["Ann Lee", "Bo Lee"], number_passengers=2,
                                    credit_card_last_four=user["card"]))
    first, second = Episode(kb, CLOCK), Episode(kb, CLOCK)
    one = kit.call(first, "book_flight", args).content
    assert first.used[("flights", r)] == 2 and not second.used
    two = kit.call(second, "book_flight", args).content
    assert one == two and '"reservation_id":"FLR-0001"' in one
    assert '"reservation_id":"FLR-0002"' in kit.call(first, "book_flight", args).content
    with pytest.raises(ValueError):
        flights["seats_available"][r] = 0  # the shared tables are read-only


def test_new_state_and_final_state(tasks):
    task = next(t for t in tasks if t.domain == "bar")
    state = TOOLS.new_state(task)
    assert state.now == datetime(2026, 4, 20, 9) and not state.records
    final = TOOLS.final_state(state)
    assert set(final) == {"bookings", "modifications", "cancellations", "cache_keys"}
    msgspec.json.encode(final)


def test_toolkit_of_a_task_is_its_domains_plus_cache_tools():
    task = Task(id="x", benchmark="t1", domain="hotel,vehicle_rental", instructions="")
    assert len(TOOLS.toolkit(task)) == 7 + 5 + 2
    assert len(TOOLS.toolkit(Task(id="x", benchmark="t1", domain="11-domain", instructions=""))) == 76


def _cancel_after_booking(kb, now, booking, cancel_tool, user):
    kit = toolkit_for(DOMAINS)
    ep = Episode(kb, now)
    out = kit.call(ep, booking[0], msgspec.json.encode({"user_id": user["user_id"], **booking[1]}))
    assert out.ok, out.content
    made = msgspec.json.decode(out.content)
    gone = msgspec.json.decode(kit.call(ep, cancel_tool, msgspec.json.encode(
        {"user_id": user["user_id"], "reservation_id": made["reservation_id"]})).content)
    return made, gone


@pytest.mark.parametrize("days_before, share", [(120, 0.0), (45, 0.5), (10, 1.0)])
def test_cruise_refund_tiers(kb, user, days_before, share):
    t = kb["cruises"]
    r = next(i for i in range(t.n) if t.string("destination", i) == "Alaska" and t["cabins_interior"][i] > 0
             and str(t["departure_date"][i]) > "2026-09-01")
    day = datetime.fromisoformat(str(t["departure_date"][r]))
    made, gone = _cancel_after_booking(kb, day - timedelta(days=days_before), ("book_cruise_reservation", dict(
        cruise_id=t.ident(r), departure_date=str(t["departure_date"][r]), number_guests=2,
        primary_guest_name="Ann Lee", cabin_type="interior", credit_card_last_four=user["card"])),
        "cancel_cruise_reservation", user)
    assert gone["cancellation_fee"] == pytest.approx(made["total_price"] * share)
    assert gone["refund"] == pytest.approx(made["total_price"] * (1 - share))


@pytest.mark.parametrize("hours_before, late", [(24 * 8, False), (24 * 3, True)])
def test_flight_late_cancellation_costs_100_per_passenger(kb, user, hours_before, late):
    t = kb["flights"]
    r = next(i for i in range(t.n) if t["seats_available"][i] >= 2)
    departs = datetime.fromisoformat(f"{t['departure_date'][r]}") + timedelta(minutes=int(t["departure_time"][r]))
    made, gone = _cancel_after_booking(kb, departs - timedelta(hours=hours_before), ("book_flight", dict(
        flight_id=t.ident(r), passenger_names=["Ann Lee", "Bo Lee"], number_passengers=2,
        credit_card_last_four=user["card"])), "cancel_flight", user)
    assert gone["cancellation_fee"] == (200.0 if late else 0.0)


@pytest.mark.parametrize("hours_before, late", [(80, False), (60, True)])
def test_hotel_late_cancellation_keeps_one_night(kb, user, hours_before, late):
    check_in = datetime(2026, 6, 10, 15)
    ep = Episode(kb, check_in - timedelta(hours=hours_before))
    kit = toolkit_for(DOMAINS)
    stock = msgspec.json.decode(kit.call(ep, "get_hotel_room_inventory", msgspec.json.encode(
        {"hotel_id": "H010", "check_in_date": "2026-06-10", "check_out_date": "2026-06-13"})).content)
    made, gone = _cancel_after_booking(kb, ep.now, ("book_hotel_reservation", dict(
        hotel_id="H010", room_id=stock["rooms"][0]["room_id"], check_in_date="2026-06-10",
        check_out_date="2026-06-13", payment_method="credit_card")), "cancel_hotel_reservation", user)
    assert gone["cancellation_fee"] == (pytest.approx(made["total_price"] / 3) if late else 0.0)
