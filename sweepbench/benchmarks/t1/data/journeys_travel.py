"""Journeys in the travel domains: cruise, flight, hotel, live show, vehicle rental.

Same contract as the venue journeys: choose from real rows, call through the ``Ctx``, return
the goal's steps. A flight journey flies into the trip city when the template has one
(``ctx.notes["flight"]``), so the rest of the trip can happen where the user lands.
"""

from __future__ import annotations

import math
from datetime import date, timedelta

import numpy as np

from sweepbench.benchmarks.t1.data.executor import (
    Ctx,
    Retry,
    natural_date,
    natural_time,
    wanting,
)
from sweepbench.benchmarks.t1.data.ontology import (
    CABIN_TYPES,
    HOTEL_FLAGS,
    SEAT_LOCATIONS,
    TICKET_CLASSES,
    VEHICLE_FLAGS,
)
from sweepbench.benchmarks.t1.data.synth import TODAY


def _flight_row(ctx: Ctx) -> int:
    if "flight" in ctx.notes:
        return ctx.notes["flight"]
    t = ctx.kb["flights"]
    return ctx.rng.choice([int(r) for r in np.nonzero(t["seats_available"] >= 3)[0]])


def flight(ctx: Ctx, scenario: str, variant: int) -> list[str]:
    t, ap, cities = ctx.kb["flights"], ctx.kb["airports"], ctx.kb["cities"]
    r = _flight_row(ctx)
    dep = cities.string("name", int(ap["city"][int(t["origin"][r])]))
    arr = cities.string("name", int(ap["city"][int(t["destination"][r])]))
    day = date.fromisoformat(str(t["departure_date"][r]))
    airline = t.string("airline", r)
    extra: dict = {"airline": [airline]} if variant % 2 else {}
    found = ctx.call("search_flight", departure_city=dep, arrival_city=arr, departure_date=day.isoformat(), **extra)
    steps = [f"Ask for flights from {dep} to {arr} on {natural_date(day)}" + (f" with {airline}." if extra else ".")]
    last = found
    if scenario == "filter" or (scenario != "search" and variant >= 3):
        if variant % 2 and scenario == "filter":
            stops = int(t["stops"][r])
            last = ctx.call("filter_flight", cache_key=found.ref("cache_key"), max_stops=stops)
            steps.append("Narrow those down to non-stop flights." if stops == 0 else
                         "Narrow those down to flights with at most one stop.")
        else:
            after = f"{int(t['departure_time'][r]) // 60:02d}:00"
            last = ctx.call("filter_flight", cache_key=found.ref("cache_key"), departure_time_after=after)
            steps.append(f"Narrow those down to flights leaving at or after {natural_time(after)}.")
    if scenario in ("search", "filter"):
        return steps
    first = last.first()
    classes = [c for c in TICKET_CLASSES if c in first["fares"]]
    cls = classes[-1] if variant == 2 and len(classes) > 1 else "Economy"
    if first["seats_available"] < 1:
        raise Retry("flight full")
    booked = ctx.call("book_flight", user_id=ctx.user["user_id"], flight_id=last.ref("results.0.flight_id"),
                      passenger_names=[ctx.user["name"]], number_passengers=1,
                      credit_card_last_four=ctx.user["card"], ticket_class=cls)
    steps.append(f"Book the first flight listed ({first['flight_id']}) in {cls} class for yourself, paying with your "
                 f"card ending {ctx.user['card']}.")
    if scenario == "modify":
        better = [c for c in classes if c != cls]
        if not better:
            raise Retry("only one class on sale")
        ctx.call("modify_flight_reservation", user_id=ctx.user["user_id"], reservation_id=booked.ref("reservation_id"),
                 new_ticket_class=better[-1])
        steps.append(f"Once it is booked, change the ticket to {better[-1]} class.")
    elif scenario == "cancel":
        ctx.call("cancel_flight", user_id=ctx.user["user_id"], reservation_id=booked.ref("reservation_id"))
        steps.append("Once it is booked, change your mind and cancel the booking.")
    return steps


def hotel(ctx: Ctx, scenario: str, variant: int) -> list[str]:
    t = ctx.kb["hotels"]
    c, r, city, state = ctx.target("hotels", 3)
    picks = ctx.true_flags("hotels", r, HOTEL_FLAGS, 3)
    first_flag = picks[0]
    brand = {"brand": [t.string("brand", r)]} if variant == 4 else {}
    found = ctx.call("search_hotel", city=city, state=state, **brand, **{first_flag: True})
    steps = [f"Ask for {brand['brand'][0] + ' ' if brand else ''}hotels in {city}, {state} "
             f"{wanting([first_flag])}."]
    last = found
    if scenario == "filter" or (scenario != "search" and variant >= 3):
        for flag in picks[1:1 + (1 + variant % 2 if scenario == "filter" else 1)]:
            last = ctx.call("filter_hotel", cache_key=last.ref("cache_key"), **{flag: True})
            steps.append(f"Narrow those down to hotels {wanting([flag])} as well.")
        if last is found:
            hood = ctx.hood("hotels", r)
            last = ctx.call("filter_hotel", cache_key=found.ref("cache_key"), neighborhood=[hood])
            steps.append(f"Narrow those down to the {hood} neighborhood.")
    if scenario in ("search", "filter"):
        return steps
    first = last.first()
    nights = 2 + variant % 3
    check_in, check_out = ctx.day, ctx.day + timedelta(days=nights)
    stock = ctx.call("get_hotel_room_inventory", hotel_id=last.ref("results.0.hotel_id"),
                     check_in_date=check_in.isoformat(), check_out_date=check_out.isoformat())
    room = stock.first("rooms")
    booked = ctx.call("book_hotel_reservation", user_id=ctx.user["user_id"], hotel_id=last.ref("results.0.hotel_id"),
                      room_id=stock.ref("rooms.0.room_id"), check_in_date=check_in.isoformat(),
                      check_out_date=check_out.isoformat(), payment_method="credit_card")
    steps += [f"Ask which rooms are free at the first hotel listed ({first['name']}, {first['hotel_id']}) from "
              f"{natural_date(check_in)} to {natural_date(check_out)}.",
              f"Book the first room offered ({room['room_type']}, {room['room_id']}) for those dates, paying by "
              "credit card."]
    ref = booked.ref("reservation_id")
    if scenario == "modify":
        later = check_out + timedelta(days=1)
        ctx.call("modify_hotel_reservation", user_id=ctx.user["user_id"], reservation_id=ref,
                 new_check_out_date=later.isoformat())
        steps.append(f"Once it is booked, extend the stay by one night, checking out on {natural_date(later)}.")
    elif scenario == "cancel":
        ctx.call("cancel_hotel_reservation", user_id=ctx.user["user_id"], reservation_id=ref)
        steps.append("Once it is booked, change your mind and cancel the stay.")
    if variant >= 2 and scenario != "cancel" or variant == 4:
        ctx.call("get_hotel_reservation", user_id=ctx.user["user_id"], reservation_id=ref)
        steps.append("Finally, ask the assistant to pull up the reservation and confirm its details.")
    return steps


def cruise(ctx: Ctx, scenario: str, variant: int) -> list[str]:
    t = ctx.kb["cruises"]
    later = np.nonzero(t["departure_date"] >= np.datetime64(ctx.day + timedelta(days=3), "D"))[0]
    r = int(ctx.rng.choice(later)) if ctx.city is not None and len(later) else ctx.rng.randrange(t.n)
    kinds = [k for k in CABIN_TYPES if not np.isnan(t[f"price_{k}"][r]) and int(t[f"cabins_{k}"][r]) > 0]
    if not kinds:
        raise Retry("no bookable cabins")
    kind = ctx.rng.choice(kinds)
    dest, port = t.string("destination", r), t.string("departure_port", r)
    extra = {"departure_port": port} if variant % 2 else {}
    found = ctx.call("search_cruises", destination=dest, cabin_type=kind, **extra)
    steps = [f"Ask for {dest} cruises with a {kind.replace('_', ' ')} cabin"
             + (f" leaving from {port}." if extra else ".")]
    last = found
    if scenario == "filter" or (scenario != "search" and variant >= 3):
        if variant % 2:
            cap = float(100 * math.ceil(float(t[f"price_{kind}"][r]) / 100))
            last = ctx.call("filter_cruises", cache_key=found.ref("cache_key"), price_per_person_max=cap)
            steps.append(f"Narrow those down to fares of at most ${cap:.0f} per person.")
        else:
            nights = int(t["duration_nights"][r])
            span = [max(3, nights - 2), nights + 2]
            last = ctx.call("filter_cruises", cache_key=found.ref("cache_key"), duration_nights=span)
            steps.append(f"Narrow those down to cruises of {span[0]} to {span[1]} nights.")
    if scenario in ("search", "filter"):
        return steps
    first = last.first()
    row = t.find(first["cruise_id"])
    if int(t[f"cabins_{kind}"][row]) < 1:
        raise Retry("no cabin left")
    guests = 1 + variant % 3
    booked = ctx.call("book_cruise_reservation", user_id=ctx.user["user_id"], cruise_id=last.ref("results.0.cruise_id"),
                      departure_date=last.ref("results.0.departure_date"), number_guests=guests,
                      primary_guest_name=ctx.user["name"], cabin_type=kind, credit_card_last_four=ctx.user["card"],
                      has_passport=True)
    steps.append(f"Book the first cruise listed ({first['cruise_id']}, departing {first['departure_date']}) for "
                 f"{guests} guest{'s' if guests > 1 else ''} in a {kind.replace('_', ' ')} cabin under your name, "
                 f"paying with your card ending {ctx.user['card']}; everyone has a passport.")
    ref = booked.ref("reservation_id")
    if scenario == "modify":
        others = [k for k in CABIN_TYPES if k != kind and k in first["fares_per_person"]
                  and int(t[f"cabins_{k}"][row]) > 0]
        if not others:
            raise Retry("no other cabin")
        ctx.call("modify_cruise_reservation", user_id=ctx.user["user_id"], reservation_id=ref,
                 new_cabin_type=others[-1])
        steps.append(f"Once it is booked, switch to a {others[-1].replace('_', ' ')} cabin.")
    elif scenario == "cancel":
        ctx.call("cancel_cruise_reservation", user_id=ctx.user["user_id"], reservation_id=ref)
        steps.append("Once it is booked, change your mind and cancel it.")
    return steps


def live_show(ctx: Ctx, scenario: str, variant: int) -> list[str]:
    t = ctx.kb["live_shows"]
    c, r, city, state = ctx.target("live_shows", 2)
    if ctx.city is not None:  # on a trip: one of the shows closest to the trip's day
        rows = sorted(ctx.rows_in("live_shows", c), key=lambda x: abs(
            (date.fromisoformat(str(t["event_date"][x])) - ctx.day).days))
        r = ctx.rng.choice(rows[:3])
    cat = t.string("event_category", r)
    day = date.fromisoformat(str(t["event_date"][r]))
    lo, hi = max(day - timedelta(days=3), TODAY.astype(date) + timedelta(days=1)), day + timedelta(days=3)
    if scenario == "filter":
        found = ctx.call("search_live_shows", city=city, state=state, event_date_range=[lo.isoformat(), hi.isoformat()])
        ctx.call("filter_live_shows", cache_key=found.ref("cache_key"), event_category=[cat])
        return [f"Ask what live shows are on in {city}, {state} between {natural_date(lo)} and {natural_date(hi)}.",
                f"Narrow those down to {cat.lower()} shows."]
    dates = {"event_date_range": [lo.isoformat(), hi.isoformat()]} if scenario == "search" or variant % 2 else {}
    found = ctx.call("search_live_shows", city=city, state=state, event_category=[cat], **dates)
    steps = [f"Ask for {cat.lower()} shows in {city}, {state}"
             + (f" between {natural_date(lo)} and {natural_date(hi)}." if dates else ".")]
    if scenario == "search":
        return steps
    first = found.first()
    row = t.find(first["live_event_id"])
    tickets = 1 + variant % 3
    open_sections = [s for s in SEAT_LOCATIONS if int(t[f"seats_{s}"][row]) >= tickets]
    if len(open_sections) < (2 if scenario == "modify" else 1):
        raise Retry("sold out")
    where = open_sections[-1]
    ident = found.ref("results.0.live_event_id")
    label = f"{first['event_name']}, {first['live_event_id']}"
    if scenario == "cancel":
        ctx.call("get_live_show_details", live_event_id=ident)
        steps.append(f"Ask for the details of the first show listed ({label}).")
    else:
        ctx.call("check_live_show_seat_availability", live_event_id=ident, seat_location=[where],
                 number_tickets=tickets)
        steps.append(f"Ask whether the first show listed ({label}) has {tickets} seats left in the {where} section.")
    booked = ctx.call("book_live_show_reservation", user_id=ctx.user["user_id"], live_event_id=ident,
                      seat_location=where, number_tickets=tickets, primary_guest_name=ctx.user["name"],
                      credit_card_last_four=ctx.user["card"])
    steps.append(f"Book {tickets} ticket{'s' if tickets > 1 else ''} in the {where} section under your name with "
                 f"your card ending {ctx.user['card']}.")
    ref = booked.ref("reservation_id")
    if scenario == "modify":
        better = open_sections[0]
        ctx.call("check_live_show_seat_availability", live_event_id=ident, seat_location=[better],
                 number_tickets=tickets)
        ctx.call("modify_live_show_reservation", user_id=ctx.user["user_id"], reservation_id=ref,
                 new_seat_location=better)
        steps.append(f"Once it is booked, decide the seats are not good enough: ask whether the {better} section "
                     f"has {tickets} seats, and move the tickets there.")
    elif scenario == "cancel":
        ctx.call("cancel_live_show_reservation", user_id=ctx.user["user_id"], reservation_id=ref)
        steps.append("Once it is booked, change your mind and cancel the tickets.")
    return steps


def vehicle_rental(ctx: Ctx, scenario: str, variant: int) -> list[str]:
    t = ctx.kb["vehicles"]
    c, r, city, state = ctx.target("vehicles")
    category = t.string("category", r)
    picks = ctx.true_flags("vehicles", r, VEHICLE_FLAGS, 3)
    found = ctx.call("search_vehicle_rentals", city=city, state=state, category=category, **{picks[0]: True})
    noun = {"car": "cars", "bike": "bikes", "truck": "trucks"}[category]
    steps = [f"Ask for rental {noun} in {city}, {state} {wanting([picks[0]])}."]
    last = found
    if scenario == "filter" or (scenario != "search" and variant >= 3):
        for flag in picks[1:1 + (1 + variant % 2 if scenario == "filter" else 1)]:
            last = ctx.call("filter_vehicle_rentals", cache_key=last.ref("cache_key"), **{flag: True})
            steps.append(f"Narrow those down to ones {wanting([flag])} as well.")
        if last is found:
            fuel = t.string("fuel_type", r)
            last = ctx.call("filter_vehicle_rentals", cache_key=found.ref("cache_key"), fuel_type=fuel)
            steps.append(f"Narrow those down to {fuel}-powered ones." if fuel != "none" else
                         "Narrow those down to ones with no engine.")
    if scenario in ("search", "filter"):
        return steps
    first = last.first()
    days = 2 + variant % 4
    start, end = ctx.day, ctx.day + timedelta(days=days)
    booked = ctx.call("book_vehicle_rental_reservation", user_id=ctx.user["user_id"],
                      vehicle_id=last.ref("results.0.vehicle_id"), start_date=start.isoformat(),
                      end_date=end.isoformat(), primary_driver_name=ctx.user["name"], has_drivers_license=True)
    steps.append(f"Rent the first one listed ({first['make']} {first['model']}, {first['vehicle_id']}) from "
                 f"{natural_date(start)} to {natural_date(end)} with yourself as the driver; you have a "
                 "driver's license.")
    ref = booked.ref("reservation_id")
    if scenario == "modify":
        later = end + timedelta(days=1)
        ctx.call("modify_vehicle_rental_reservation", user_id=ctx.user["user_id"], reservation_id=ref,
                 new_end_date=later.isoformat())
        steps.append(f"Once it is booked, keep it one more day, returning it on {natural_date(later)}.")
    elif scenario == "cancel":
        ctx.call("cancel_vehicle_rental_reservation", user_id=ctx.user["user_id"], reservation_id=ref)
        steps.append("Once it is booked, change your mind and cancel the rental.")
    return steps

