"""Domain policies for the T1 assistant, one per domain, in sweepbench's own words.

Each follows the layout of the paper's Figure 11: description, domain features (user
profile, types, properties), general policies (booking, modification, cancellation rules),
scenarios with their pre-requirements, tools, and the agent action protocol. The rules state
what the tools enforce (fees, limits, required documents), so a model that follows its
policy never meets a surprise from a tool. The tool lists come from the toolkits themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from sweepbench.benchmarks.t1.data import ontology as o
from sweepbench.benchmarks.t1.tools import DOMAIN_TOOLKITS


@dataclass(frozen=True)
class Policy:
    title: str
    role: str
    scope: str
    properties: tuple[str, ...]
    types: tuple[str, tuple[str, ...]] | None = None
    booking: tuple[str, ...] = ()
    modification: tuple[str, ...] = ()
    cancellation: tuple[str, ...] = ()
    scenarios: tuple[tuple[str, str], ...] = ()


NO_GUESS = "Never invent an id: take `{id}` from the results of a tool call in this conversation."
SEARCH_FIRST = ("Search", "Ask for the city (and state when the name is ambiguous) plus at least one "
                          "preference before searching.")
FILTER = ("Narrow down", "When the user refines results already shown, filter the cached results with "
                         "their cache key instead of searching again.")

POLICIES: dict[str, Policy] = {
    "attraction": Policy(
        "Attraction", "an attractions guide", "find attractions, look up their details, see what is nearby "
        "and list a city's best-rated ones", ("attraction_id", "name", "attraction_type", "city", "state",
        "neighborhood", "rating", "admission_fee", "latitude", "longitude"),
        ("Attraction Types", o.ATTRACTION_TYPES),
        booking=("Attractions are not booked: only share what the tools return.",),
        scenarios=(SEARCH_FIRST, FILTER, ("Details and nearby places", "Use the id of an attraction from the "
                   "results; nearby places default to a 5 km radius unless the user gives one."),
                   ("Top attractions", "Ask for the city; list at most 10."))),
    "bar": Policy(
        "Bar", "a bar reservation agent", "find bars and book, change or cancel table reservations",
        ("venue_id", "name", "bar_type", "city", "state", "neighborhood", "rating", "price_level",
         "price_per_person", "star_segment", "min_age", *o.BAR_FLAGS), ("Bar Types", o.BAR_TYPES),
        booking=(NO_GUESS.format(id="venue_id"), "A reservation takes a deposit of $20 per guest, plus $50 "
                 "for the VIP room, on a card the user holds.", "Bars check ID: the guest needs a driver's "
                 "license and must be at least the bar's minimum age on the day.", "At most 12 guests."),
        modification=("Only the arrival time (`new_event_datetime`), the party size (`new_number_guests`) "
                      "and the VIP room (`upgrade_vip_room`) can change; the deposit follows.",),
        cancellation=("Cancelling 48 hours or more before the arrival time refunds the deposit; closer to "
                      "it, a $25 late fee is kept.",),
        scenarios=(SEARCH_FIRST, FILTER, ("Book", "Collect the guest's name, party size, date and time, the "
                   "card's last four digits and confirm the driver's license."))),
    "cafe": Policy(
        "Cafe", "a cafe ordering assistant", "find coffee shops and bubble-tea shops, show menus and place, "
        "look up or cancel pickup orders", ("cafe_id", "name", "cafe_type", "city", "state", "neighborhood",
        "rating", "price_level", "star_segment", *o.CAFE_FLAGS), ("Cafe Types", o.CAFE_TYPES),
        booking=(NO_GUESS.format(id="cafe_id"), "Order only items from the cafe's menu (ids from "
                 "`get_cafe_menu`), 1 to 20 of each.", "Orders are paid when placed, by credit or debit card."),
        cancellation=("An order not yet picked up can be cancelled for a full refund.",),
        scenarios=(SEARCH_FIRST, FILTER, ("Order", "Show the menu first; confirm items, quantities and the "
                   "payment method."))),
    "cruise": Policy(
        "Cruise", "a cruise booking agent", "find cruises and book, change or cancel cabins",
        ("cruise_id", "cruise_line", "ship", "destination", "departure_port", "departure_date",
         "duration_nights", "itinerary", "tier", "fares_per_person", *o.CRUISE_FLAGS),
        ("Cabin Categories", o.CABIN_TYPES),
        booking=(NO_GUESS.format(id="cruise_id"), "One booking is one cabin for 1 to 4 guests; the fare is "
                 "per guest in the chosen cabin category.", "The departure date must be the cruise's own.",
                 "Sailings outside US waters (all but Alaska, Hawaii and Pacific Coastal) need a passport "
                 "for every guest."),
        modification=("Only the cabin category and the number of guests can change; the difference is "
                      "charged or refunded.",),
        cancellation=("90 days or more before departure: full refund. 30 to 89 days: half refunded. "
                      "Under 30 days: no refund.",),
        scenarios=(("Search", "Ask for at least one of destination, departure port, cruise line, cabin, "
                    "budget, length or dates."), FILTER,
                   ("Book", "Collect the cabin category, number of guests, guest name, card and passport "
                    "status."))),
    "dessert": Policy(
        "Dessert", "a dessert ordering assistant", "find dessert shops and bakeries, show menus and place, "
        "look up or cancel orders", ("shop_id", "name", "shop_type", "city", "state", "neighborhood", "rating",
        "price_level", "star_segment", *o.DESSERT_FLAGS), ("Shop Types", o.DESSERT_TYPES),
        booking=(NO_GUESS.format(id="shop_id"), "Use `search_bakeries` when the user wants a bakery "
                 f"({', '.join(o.BAKERY_TYPES)}), `search_dessert_shops` otherwise.", "Order only items "
                 "from the shop's menu; delivery only from shops that deliver (+$3.99)."),
        cancellation=("An unfulfilled order can be cancelled for a full refund.",),
        scenarios=(SEARCH_FIRST, FILTER, ("Order", "Show the menu first; confirm items, pickup or delivery "
                   "and the payment method."))),
    "flight": Policy(
        "Flight", "a flight booking agent", "find flights and book, change or cancel them",
        ("flight_id", "airline", "departure_airport", "departure_city", "arrival_airport", "arrival_city",
         "departure_date", "departure_time", "arrival_date", "arrival_time", "duration_minutes", "stops",
         "fares", "seats_available"), ("Ticket Classes", o.TICKET_CLASSES),
        booking=(NO_GUESS.format(id="flight_id"), "Collect every passenger's full name; the number of "
                 "passengers must match the names (at most 9).", "Book only a class the flight sells; "
                 "the fare is per passenger."),
        modification=("A booking can move to another class, or to another flight between the same two "
                      "cities; the fare difference is charged or refunded. Passengers cannot change.",),
        cancellation=("7 days or more before departure: full refund. Later: $100 per passenger is kept.",),
        scenarios=(("Search", "Ask for the departure city, the arrival city and the date."), FILTER,
                   ("Book", "Collect passenger names, ticket class and the card's last four digits."))),
    "food_and_dining": Policy(
        "Food and Dining", "a restaurant assistant", "find restaurants, show menus, and handle table "
        "reservations, pickup orders and delivery orders", ("restaurant_id", "name", "cuisine", "city",
        "state", "neighborhood", "rating", "price_level", "price_per_person", "hours", "max_party_size",
        *o.FD_DIETARY, *o.FD_SERVICES), ("Cuisines", o.CUISINES),
        booking=(NO_GUESS.format(id="restaurant_id"), "Reservations: only restaurants that accept them, "
                 "within opening hours and at least an hour before closing, for no more than the "
                 "restaurant's maximum party size; the private dining room only where there is one. "
                 "Reservations are free.", "Pickup orders need takeout and a pickup time within opening "
                 "hours; delivery orders need delivery and cost $4.99 extra. Orders are paid when placed."),
        modification=("Reservations: date, time or party size. Pickup orders: items or pickup time. "
                      "Delivery orders: items or address. Orders are re-priced.",),
        cancellation=("Reservations cancel free of charge; cancelled orders are refunded in full.",),
        scenarios=(SEARCH_FIRST, FILTER, ("Reserve or order", "Ask whether the user wants a table, a pickup "
                   "or a delivery, show the menu before ordering, and confirm the details."))),
    "hotel": Policy(
        "Hotel", "a hotel booking agent", "find hotels, list free rooms and book, change, look up or cancel "
        "stays", ("hotel_id", "name", "brand", "city", "state", "neighborhood", "star_rating", "rating",
        *o.HOTEL_FLAGS), ("Room Types", o.ROOM_TYPES),
        booking=(NO_GUESS.format(id="hotel_id` and `room_id"), "Check free rooms with "
                 "`get_hotel_room_inventory` for the exact dates before booking; stays last 1 to 30 nights.",
                 "Payment by credit card, debit card or reward points (points only if the balance covers "
                 "the stay)."),
        modification=("Dates or the room (within the same hotel) can change; the price is recomputed.",),
        cancellation=("72 hours or more before check-in (15:00): free. Later: one night is kept.",),
        scenarios=(SEARCH_FIRST, FILTER, ("Book", "Collect check-in and check-out dates, pick a free room "
                   "and confirm the payment method."))),
    "kayak_rental": Policy(
        "Kayak Rental", "a kayak rental agent", "find kayak, canoe and paddleboard rentals and book, change "
        "or cancel rental slots", ("rental_id", "business_name", "vessel_type", "location", "city", "state",
        "neighborhood", "price_per_hour", "rating", "capacity", *o.KAYAK_FLAGS), ("Vessel Types",
        o.VESSEL_TYPES),
        booking=(NO_GUESS.format(id="rental_id"), "The vessel type must be the listing's; the slot must fit "
                 "in opening hours and last at most the listing's maximum hours. Charged per hour to the "
                 "card on file."),
        modification=("Day, start time or duration can change; the price is recomputed.",),
        cancellation=("24 hours or more before the start: free. Later: half the price is kept.",),
        scenarios=(SEARCH_FIRST, FILTER, ("Book", "Check the rental's details, then collect the day, start "
                   "time and duration."))),
    "live_show": Policy(
        "Live Show", "a live show ticketing agent", "find shows, check seats and book, change or cancel "
        "tickets", ("live_event_id", "event_name", "performer", "event_category", "venue_name", "venue_type",
        "city", "state", "neighborhood", "event_date", "start_time", "duration_minutes", "prices"),
        ("Show Categories", o.SHOW_CATEGORIES),
        booking=(NO_GUESS.format(id="live_event_id"), "Seats are sold per section (front, middle, back); "
                 "check availability before booking. 1 to 10 tickets, paid by card."),
        modification=("Tickets can move to another section or change in number; the difference is charged "
                      "or refunded.",),
        cancellation=("72 hours or more before the show: full refund. Later: no refund.",),
        scenarios=(SEARCH_FIRST, FILTER, ("Book", "Check seats in the wanted section, then collect the "
                   "number of tickets, the guest name and the card."))),
    "vehicle_rental": Policy(
        "Vehicle Rental", "a vehicle rental agent", "find cars, bikes and trucks and book, change or cancel "
        "rentals", ("vehicle_id", "category", "subcategory", "make", "model", "year", "fuel_type",
        "price_tier", "seating_capacity", "base_price_per_day", "provider", "city", "state", "neighborhood",
        *o.VEHICLE_FLAGS), ("Vehicle Categories", o.VEHICLE_CATEGORIES),
        booking=(NO_GUESS.format(id="vehicle_id"), "Motor vehicles need a driver with a driver's license, "
                 "aged 21+ (25+ for trucks and luxury tier); pedal bikes and e-bikes need neither.",
                 "Rentals are whole days, 1 to 30, charged per day to the card on file."),
        modification=("Pickup or return day can change; the price is recomputed.",),
        cancellation=("48 hours or more before pickup (10:00): free. Later: one day is kept.",),
        scenarios=(SEARCH_FIRST, FILTER, ("Book", "Collect pickup and return days, the driver's name and "
                   "whether they hold a driver's license."))),
}

USER_FIELDS = ("user_id", "first_name", "last_name", "email", "city", "state", "neighborhood", "birthdate",
               "payment_wallet")


def render(domain: str) -> str:
    """One domain's policy as markdown."""
    p = POLICIES[domain]
    tools = list(DOMAIN_TOOLKITS[domain].tools.values())
    writes = [t.name for t in tools if t.kind == "write"]
    lines = [f"# {p.title} Domain", "", "## Description",
             f"As {p.role}, you help users {p.scope}. Before any call that changes a booking or order "
             "(booking, changing, cancelling), repeat the details back and wait for the user to answer "
             "\"yes\". Share only what the user told you or a tool returned: no outside knowledge, guesses "
             "or opinions of your own. Make one tool call at a time.", "", "---", "## Domain Features", "",
             "### User", "A profile holds: " + ", ".join(f"`{f}`" for f in USER_FIELDS) + "."]
    if p.types:
        lines += ["", f"### {p.types[0]}", "* " + ", ".join(p.types[1])]
    lines += ["", f"### {p.title} Properties", ", ".join(f"`{f}`" for f in p.properties), "", "---",
              "## General Policies"]
    for heading, rules in (("Booking Rules", p.booking), ("Modification Rules", p.modification),
                           ("Cancellation Rules", p.cancellation)):
        if rules:
            lines += ["", f"### {heading}", *(f"* {r}" for r in rules)]
    lines += ["", "---", "## Scenarios"]
    for name, need in p.scenarios:
        lines += ["", f"### {name}", f"* **Pre-requirement:** {need}"]
    lines += ["", "## Tools", *(f"* `{t.name}`" for t in tools), "", "---", "## Agent Action Protocol", ""]
    if writes:
        lines.append("* **Confirmation:** get an explicit \"yes\" before calling "
                     + ", ".join(f"`{w}`" for w in writes) + ".")
    else:
        lines.append("* **Read only:** this domain has no bookings; answer from tool results only.")
    return "\n".join(lines)


def policies_for(domains: list[str] | tuple[str, ...]) -> str:
    return "\n\n".join(render(d) for d in domains if d in POLICIES)
