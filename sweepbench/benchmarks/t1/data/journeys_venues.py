"""Journeys in the city-venue domains: attraction, bar, cafe, dessert, food and dining, kayak.

A journey makes one domain's part of a template: it picks what the user wants from the
knowledge base (criteria taken from a real row, so searches find something), makes the
calls through the ``Ctx`` and returns the goal's steps in words. ``variant`` (0-4) varies
the shape within a scenario (an extra filter, a different order type, ...).
"""

from __future__ import annotations

import math
from datetime import timedelta

from sweepbench.benchmarks.t1.data.executor import (
    Ctx,
    Out,
    Retry,
    listing,
    natural_date,
    natural_time,
    wanting,
)
from sweepbench.benchmarks.t1.data.ontology import (
    BAR_FLAGS,
    CAFE_FLAGS,
    DESSERT_FLAGS,
    FD_DIETARY,
    KAYAK_FLAGS,
)


def _menu_picks(ctx: Ctx, menu: Out, k: int = 2) -> tuple[list[dict], str]:
    items = menu.data["items"]
    chosen = ctx.rng.sample(items, min(k, len(items)))
    order = [{"item_id": i["item_id"], "quantity": ctx.rng.choice([1, 1, 2])} for i in chosen]
    words = [f"{o['quantity']} {i['name']}" for o, i in zip(order, chosen)]
    return order, listing(words)


def attraction(ctx: Ctx, scenario: str, variant: int) -> list[str]:
    t = ctx.kb["attractions"]
    c, r, city, state = ctx.target("attractions", 4)
    if scenario == "top":
        top = ctx.call("get_top_attractions", city=city, state=state)
        best = top.first()
        ctx.call("get_attraction_details", attraction_id=top.ref("results.0.attraction_id"))
        return [f"Ask for the top-rated attractions in {city}, {state}.",
                f"Ask for the details of the best-rated one ({best['name']})."]
    kind = t.string("attraction_type", r)
    found = ctx.call("search_attractions", city=city, state=state, attraction_type=kind)
    steps = [f"Ask for attractions in the {kind} category in {city}, {state}."]
    if scenario == "filter":
        if variant % 2:
            fee = float(t["admission_fee"][r])
            ctx.call("filter_attractions", cache_key=found.ref("cache_key"), max_admission_fee=fee)
            return steps + ["Narrow the results down to ones that are free." if fee == 0 else
                            f"Narrow the results down to ones costing at most ${fee:.0f} to get in."]
        floor = math.floor(float(t["rating"][r]) * 2) / 2
        ctx.call("filter_attractions", cache_key=found.ref("cache_key"), min_rating=floor)
        return steps + [f"Narrow the results down to ones rated {floor} or higher."]
    first = found.first()
    if scenario == "details":
        ctx.call("get_attraction_details", attraction_id=found.ref("results.0.attraction_id"))
        return steps + [f"Ask for details about the first one listed ({first['name']}): where it is and how "
                        "long a visit takes."]
    radius = [3.0, 5.0, 8.0, 10.0, 15.0][variant]
    near = ctx.call("get_nearby_attractions", attraction_id=found.ref("results.0.attraction_id"), radius_km=radius)
    near.first()
    return steps + [f"Ask what other attractions are within {radius:g} km of the first one listed "
                    f"({first['name']})."]


def bar(ctx: Ctx, scenario: str, variant: int) -> list[str]:
    t = ctx.kb["bars"]
    c, r, city, state = ctx.target("bars")
    wanted = ctx.true_flags("bars", r, BAR_FLAGS, 1 + variant % 2, skip=("has_vip_room",))
    found = ctx.call("search_bars", city=city, state=state, **{f: True for f in wanted})
    steps = [f"Ask for bars in {city}, {state} {wanting(wanted)}."]
    last = found
    if scenario == "filter" or (scenario != "search" and variant >= 3):
        if variant % 2:
            budget = float(5 * math.ceil(float(t["price_per_person"][r]) / 5))
            last = ctx.call("filter_bars", cache_key=found.ref("cache_key"), budget=budget)
            steps.append(f"Narrow those results down to places with a budget of up to ${budget:.0f} per person.")
        else:
            last = ctx.call("filter_bars", cache_key=found.ref("cache_key"), neighborhood=[ctx.hood("bars", r)])
            steps.append(f"Narrow those results down to the {ctx.hood('bars', r)} neighborhood.")
    if scenario in ("search", "filter"):
        return steps
    first = last.first()
    day = ctx.day + timedelta(days=0 if scenario == "cancel" and variant < 2 else 1 + variant)
    when = f"{day.isoformat()} {['20:00', '19:30', '21:00', '18:30', '22:00'][variant]}"
    guests = 2 + variant % 4
    booked = ctx.call("book_bar_reservation", user_id=ctx.user["user_id"], venue_id=last.ref("results.0.venue_id"),
                      primary_guest_name=ctx.user["name"], number_guests=guests, event_datetime=when,
                      credit_card_last_four=ctx.user["card"], has_drivers_license=True)
    steps.append(f"Book a table at the first bar listed ({first['name']}, {first['venue_id']}) for {guests} people "
                 f"on {natural_date(day)} at {natural_time(when[-5:])} under your name, paying the deposit with "
                 f"your card ending {ctx.user['card']}; you have a driver's license.")
    if scenario == "modify":
        if variant % 2 and "has_vip_room" in first["features"]:
            ctx.call("modify_bar_reservation", user_id=ctx.user["user_id"],
                     reservation_id=booked.ref("reservation_id"), upgrade_vip_room=True)
            steps.append("Once it is confirmed, ask to upgrade the reservation to the VIP room.")
        else:
            ctx.call("modify_bar_reservation", user_id=ctx.user["user_id"],
                     reservation_id=booked.ref("reservation_id"), new_number_guests=guests + 2)
            steps.append(f"Once it is confirmed, say two more friends are coming: change it to {guests + 2} people.")
    elif scenario == "cancel":
        ctx.call("cancel_bar_reservation", user_id=ctx.user["user_id"], reservation_id=booked.ref("reservation_id"))
        steps.append("Once it is confirmed, change your mind and cancel the reservation.")
    return steps


def cafe(ctx: Ctx, scenario: str, variant: int) -> list[str]:
    t = ctx.kb["cafes"]
    c, r, city, state = ctx.target("cafes")
    kind = t.string("cafe_type", r)
    wanted = ctx.true_flags("cafes", r, CAFE_FLAGS, 1)
    found = ctx.call("search_cafes", city=city, state=state, cafe_type=kind, **{f: True for f in wanted})
    noun = "coffee shops" if kind == "Coffee Shop" else "bubble tea shops"
    steps = [f"Ask for {noun} in {city}, {state} {wanting(wanted)}."]
    last = found
    if scenario == "filter" or (scenario != "search" and variant % 2):
        hood = ctx.hood("cafes", r)
        last = ctx.call("filter_cafes", cache_key=found.ref("cache_key"), neighborhood=[hood])
        steps.append(f"Narrow those down to the ones in the {hood} neighborhood.")
    if scenario in ("search", "filter"):
        return steps
    first = last.first()
    menu = ctx.call("get_cafe_menu", cafe_id=last.ref("results.0.cafe_id"))
    items, words = _menu_picks(ctx, menu)
    order = ctx.call("place_cafe_order", user_id=ctx.user["user_id"], cafe_id=last.ref("results.0.cafe_id"),
                     items=items, payment_method="credit_card")
    steps += [f"Ask to see the menu of the first one listed ({first['name']}, {first['cafe_id']}).",
              f"Order {words} for pickup, paying by credit card."]
    if scenario == "status":
        ctx.call("get_cafe_order", user_id=ctx.user["user_id"], order_id=order.ref("order_id"))
        steps.append("Once the order is placed, ask for its status and total.")
    elif scenario == "cancel":
        ctx.call("cancel_cafe_order", user_id=ctx.user["user_id"], order_id=order.ref("order_id"))
        steps.append("Once the order is placed, change your mind and cancel it.")
    return steps


BAKERY_FLAGS = ("has_pastries", "has_cakes", "has_cookies", "has_donuts", "has_vegan_options",
                "has_gluten_free_options", "has_custom_orders", "has_seating")


def dessert(ctx: Ctx, scenario: str, variant: int) -> list[str]:
    t = ctx.kb["dessert_shops"]
    c, r, city, state = ctx.target("dessert_shops")
    if scenario == "filter":
        bakeries = [x for x in ctx.rows_in("dessert_shops", c)
                    if t.string("shop_type", x) in ("Bakery", "Patisserie", "Cupcake Shop", "Donut Shop")]
        if not bakeries:
            raise Retry("no bakeries")
        r = ctx.rng.choice(bakeries)
        picks = ctx.true_flags("dessert_shops", r, BAKERY_FLAGS, 2)
        first_flag, second_flag = picks[0], (picks[1] if len(picks) > 1 else None)
        found = ctx.call("search_bakeries", city=city, state=state, **{first_flag: True})
        steps = [f"Ask for bakeries in {city}, {state} {wanting([first_flag])}."]
        if second_flag and variant % 2:
            ctx.call("filter_bakeries", cache_key=found.ref("cache_key"), **{second_flag: True})
            return steps + [f"Narrow those down to ones {wanting([second_flag])}."]
        hood = ctx.hood("dessert_shops", r)
        ctx.call("filter_bakeries", cache_key=found.ref("cache_key"), neighborhood=[hood])
        return steps + [f"Narrow those down to the {hood} neighborhood."]
    wanted = ctx.true_flags("dessert_shops", r, DESSERT_FLAGS, 1, skip=("has_delivery",))
    found = ctx.call("search_dessert_shops", city=city, state=state, **{wanted[0]: True})
    steps = [f"Ask for dessert shops in {city}, {state} {wanting(wanted)}."]
    if scenario == "search":
        return steps
    last = found
    if variant % 2:
        hood = ctx.hood("dessert_shops", r)
        last = ctx.call("filter_dessert_shops", cache_key=found.ref("cache_key"), neighborhood=[hood])
        steps.append(f"Narrow those down to the {hood} neighborhood.")
    first = last.first()
    menu = ctx.call("get_shop_menu", shop_id=last.ref("results.0.shop_id"))
    items, words = _menu_picks(ctx, menu)
    delivery = variant >= 3 and "has_delivery" in first["features"]
    order = ctx.call("place_dessert_order", user_id=ctx.user["user_id"], shop_id=last.ref("results.0.shop_id"),
                     items=items, payment_method="credit_card", fulfillment="delivery" if delivery else "pickup")
    steps += [f"Ask for the menu of the first shop listed ({first['name']}, {first['shop_id']}).",
              f"Order {words} for {'delivery' if delivery else 'pickup'}, paying by credit card."]
    if scenario == "status":
        ctx.call("get_dessert_order", user_id=ctx.user["user_id"], order_id=order.ref("order_id"))
        steps.append("Once the order is placed, ask for its status and total.")
    elif scenario == "cancel":
        ctx.call("cancel_dessert_order", user_id=ctx.user["user_id"], order_id=order.ref("order_id"))
        steps.append("Once the order is placed, change your mind and cancel it.")
    return steps


KINDS = {"book": ("reservation", "pickup", "delivery", "reservation", "pickup"),
         "modify": ("reservation", "pickup", "delivery", "delivery", "reservation"),
         "cancel": ("reservation", "pickup", "delivery", "pickup", "delivery")}
NEEDS = {"reservation": "accepts_reservations", "pickup": "has_takeout", "delivery": "has_delivery"}


def _mealtime(hours: str, preferred: str) -> str:
    opens, closes = hours.split("-")
    latest = int(closes[:2]) * 60 + int(closes[3:]) - 90
    at = int(preferred[:2]) * 60 + int(preferred[3:])
    start = int(opens[:2]) * 60 + int(opens[3:]) + 60
    at = at if start <= at <= latest else start
    if at > latest:
        raise Retry("restaurant hours too short")
    return f"{at // 60:02d}:{at % 60:02d}"


def food_and_dining(ctx: Ctx, scenario: str, variant: int) -> list[str]:
    t = ctx.kb["restaurants"]
    kind = KINDS.get(scenario, ("",) * 5)[variant]
    c = ctx.choose_city("restaurants", 20)
    city, state = ctx.where(c)
    rows = [x for x in ctx.rows_in("restaurants", c) if not kind or bool(t[NEEDS[kind]][x])]
    if not rows:
        raise Retry("no suitable restaurants")
    r = ctx.rng.choice(rows)
    cuisine = t.string("cuisine", r)
    need = {NEEDS[kind]: True} if kind else {}
    diet = ctx.true_flags("restaurants", r, FD_DIETARY, 1)[0] if variant % 2 else None
    found = ctx.call("search_food_and_dining", city=city, state=state, cuisine=[cuisine],
                     **({diet: True} if diet else {}), **need)
    extra = {"reservation": " that take reservations", "pickup": " that do takeout",
             "delivery": " that deliver", "": ""}[kind]
    steps = [f"Ask for {cuisine} restaurants in {city}, {state}{extra}"
             + (f" {wanting([diet])}." if diet else ".")]
    last = found
    if scenario == "filter" or (kind and variant >= 3):
        hood = ctx.hood("restaurants", r)
        last = ctx.call("filter_food_and_dining", cache_key=found.ref("cache_key"), neighborhood=[hood])
        steps.append(f"Narrow the results down to the {hood} neighborhood.")
    if not kind:
        return steps
    first = last.first()
    rid_ref = last.ref("results.0.restaurant_id")
    user = ctx.user["user_id"]
    label = f"{first['name']}, {first['restaurant_id']}"
    day = ctx.day + timedelta(days=variant)
    if kind == "reservation":
        time = _mealtime(first["hours"], "19:00")
        guests = 2 + variant
        made = ctx.call("book_food_and_dining_reservation", user_id=user, restaurant_id=rid_ref,
                        primary_guest_name=ctx.user["name"], number_guests=guests,
                        reservation_date=day.isoformat(), reservation_time=time)
        steps.append(f"Book a table at the first one listed ({label}) for {guests} on {natural_date(day)} at "
                     f"{natural_time(time)} under your name.")
        ident, ref = "reservation_id", made.ref("reservation_id")
        if scenario == "modify":
            later = _mealtime(first["hours"], "20:30")
            if later == time:
                raise Retry("no later seating")
            ctx.call("modify_food_and_dining_reservation", user_id=user, reservation_id=ref,
                     new_reservation_time=later)
            steps.append(f"Once it is confirmed, move the reservation to {natural_time(later)}.")
    else:
        menu = ctx.call("get_food_and_dining_menu", restaurant_id=rid_ref)
        items, words = _menu_picks(ctx, menu)
        steps.append(f"Ask for the menu of the first one listed ({label}).")
        if kind == "pickup":
            at = f"{day.isoformat()} {_mealtime(first['hours'], '12:30')}"
            made = ctx.call("place_food_and_dining_pickup_order", user_id=user, restaurant_id=rid_ref, items=items,
                            pickup_time=at, payment_method="credit_card")
            steps.append(f"Order {words} for pickup on {natural_date(day)} at {natural_time(at[-5:])}, "
                         "paying by credit card.")
        else:
            address = f"{100 + variant * 37} {ctx.user['neighborhood']} Avenue, {city}, {state}"
            made = ctx.call("place_food_and_dining_delivery_order", user_id=user, restaurant_id=rid_ref, items=items,
                            delivery_address=address, payment_method="credit_card")
            steps.append(f"Order {words} for delivery to {address}, paying by credit card.")
        ident, ref = "order_id", made.ref("order_id")
        if scenario == "modify":
            if kind == "pickup":
                at = f"{day.isoformat()} {_mealtime(first['hours'], '18:00')}"
                if at == made.data["pickup_time"]:
                    raise Retry("same pickup time")
                ctx.call("modify_food_and_dining_pickup_order", user_id=user, order_id=ref, pickup_time=at)
                steps.append(f"Once it is placed, move the pickup to {natural_time(at[-5:])}.")
            else:
                more, words = _menu_picks(ctx, menu, 3)
                ctx.call("modify_food_and_dining_delivery_order", user_id=user, order_id=ref, items=more)
                steps.append(f"Once it is placed, change the order to {words} instead.")
    suffix = {"reservation": "reservation", "pickup": "pickup_order", "delivery": "delivery_order"}[kind]
    if scenario == "cancel":
        ctx.call(f"cancel_food_and_dining_{suffix}", user_id=user, **{ident: ref})
        steps.append("Then change your mind and cancel it.")
    if variant >= 2:
        ctx.call(f"get_food_and_dining_{suffix}", user_id=user, **{ident: ref})
        steps.append("Finally, ask the assistant to look it up again and confirm its current details.")
    return steps


def kayak_rental(ctx: Ctx, scenario: str, variant: int) -> list[str]:
    t = ctx.kb["kayak_rentals"]
    c, r, city, state = ctx.target("kayak_rentals")
    vessel = t.string("vessel_type", r)
    top = float(5 * math.ceil(float(t["price_per_hour"][r]) / 5))
    found = ctx.call("search_kayak_rentals", city=city, state=state, vessel_type=[vessel], price_per_hour=[0.0, top])
    steps = [f"Ask for {vessel.lower()} rentals in {city}, {state} costing up to ${top:.0f} an hour."]
    last = found
    if scenario == "filter" or (scenario != "search" and variant >= 3):
        if variant % 2:
            flag = ctx.true_flags("kayak_rentals", r, KAYAK_FLAGS, 1)[0]
            last = ctx.call("filter_kayak_rentals", cache_key=found.ref("cache_key"), **{flag: True})
            steps.append(f"Narrow those down to ones {wanting([flag])}.")
        else:
            floor = math.floor(float(t["rating"][r]) * 2) / 2
            last = ctx.call("filter_kayak_rentals", cache_key=found.ref("cache_key"), min_rating=floor)
            steps.append(f"Narrow those down to ones rated {floor} or higher.")
    if scenario in ("search", "filter"):
        return steps
    first = last.first()
    details = ctx.call("get_rental_details", rental_id=last.ref("results.0.rental_id"))
    opens = details.data["opening_hours"][:5]
    start = f"{int(opens[:2]) + 1:02d}:{opens[3:]}"
    hours = min(2 + variant % 2, details.data["max_hours"])
    day = ctx.day + timedelta(days=0 if scenario == "cancel" and variant < 2 else variant + 1)
    booked = ctx.call("book_kayak_reservation", user_id=ctx.user["user_id"],
                      rental_id=last.ref("results.0.rental_id"), vessel_type=first["vessel_type"],
                      date=day.isoformat(), start_time=start, duration=hours)
    steps += [f"Ask for the details of the first one listed ({first['business_name']}, {first['rental_id']}).",
              f"Book it for {hours} hours on {natural_date(day)} starting at {natural_time(start)}."]
    if scenario == "modify":
        ctx.call("modify_kayak_reservation", user_id=ctx.user["user_id"], reservation_id=booked.ref("reservation_id"),
                 new_duration=hours + 1)
        steps.append(f"Once it is confirmed, extend the rental to {hours + 1} hours.")
    elif scenario == "cancel":
        ctx.call("cancel_kayak_reservation", user_id=ctx.user["user_id"], reservation_id=booked.ref("reservation_id"))
        steps.append("Once it is confirmed, change your mind and cancel it.")
    return steps
