"""Every one of the 66 tools, given arguments that are wrong in at least one way, answers with
text the model can read: an "Error: ..." for a failure (what upstream flags as an error), a
plain refusal or a normal answer otherwise. Nothing escapes as an exception, the same call on
the same state answers the same, and the state stays one the checks can read. (Upstream's
tools may change state before they fail, so unchanged state is not asserted: the golden
replay checks upstream's end states.)"""

from __future__ import annotations

import copy
import json

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.benchmarks.vitabench.tools import TOOLS

SAMPLES = {t.id: t for domain in ("delivery", "instore", "ota") for t in load_tasks((domain,), data_dir=None)}


def merged_world():
    """One database with every domain's tables: the delivery, in-store and travel samples."""
    env = copy.deepcopy(SAMPLES["SB-D-004"].environment)
    for tid in ("SB-I-003", "SB-I-004", "SB-O-004"):
        other = SAMPLES[tid].environment
        for key in ("shops", "books", "reservations", "hotels", "attractions", "flights", "trains"):
            env[key] = {**env.get(key, {}), **copy.deepcopy(other.get(key, {}))}
        env["orders"] = {**env["orders"], **copy.deepcopy(other["orders"])}
    for o in env["orders"].values():
        o["user_id"] = env["user_id"]
    for r in (*env["books"].values(), *env["reservations"].values()):
        r["customer_id"] = env["user_id"]
    return msgspec.structs.replace(SAMPLES["SB-D-004"], environment=env, domain="delivery,instore,ota")


TASK = merged_world()
WORLD = TOOLS.new_state(TASK)
KIT = TOOLS.all_tools()
IDS = sorted({WORLD.user_id, *WORLD.orders, *WORLD.books, *WORLD.reservations, *WORLD.stores, *WORLD.shops,
              *WORLD.hotels, *WORLD.attractions, *WORLD.flights, *WORLD.trains,
              *(p.product_id for table in (WORLD.stores, WORLD.shops, WORLD.hotels, WORLD.attractions,
                                           WORLD.flights, WORLD.trains) for s in table.values() for p in s.products)})
TEXT = st.sampled_from(["Maplebrook", "Riverton", "noodles", "hotpot", "Lakeside Gardens", "", "空"])
DATES = st.sampled_from(["2025-05-01", "2025-05-02", "2025-05-03", "2025-03-14"])
TIMES = st.sampled_from([WORLD.time, "2025-04-21 18:00:00", "2025-05-01 08:00:00"])
HUGE = "Ω" * 20_000 + "x" * 20_000


def good_value(name: str) -> st.SearchStrategy:
    """A plausible value for a parameter, so that only the deliberately broken one is wrong."""
    if name == "user_id":
        return st.just(WORLD.user_id)
    if name.endswith("_id"):
        return st.sampled_from(IDS)
    if name == "product_ids":
        return st.lists(st.sampled_from(IDS), min_size=1, max_size=2)
    if name in ("product_cnts",):
        return st.lists(st.integers(1, 3), min_size=1, max_size=2)
    if name in ("attributes", "keywords", "key_words"):
        return st.lists(TEXT, max_size=2)
    if name in ("time", "dispatch_time"):
        return TIMES
    if name in ("date", "new_date", "date_start", "date_end"):
        return DATES
    if name in ("quantity", "customer_count"):
        return st.integers(1, 3)
    if name in ("distance", "range", "longitude", "latitude", "longitude1", "latitude1", "longitude2", "latitude2"):
        return st.floats(-180, 180, allow_nan=False)
    if name == "status":
        return st.sampled_from(["paid", "unpaid", None])
    if name == "year":
        return st.sampled_from(["2025", "1999"])
    return TEXT


NUMBERS = ("quantity", "customer_count", "distance", "range", "longitude", "latitude", "longitude1")


def modes(tool) -> list[str]:
    fields = tool.args_type.__struct_fields__
    required = fields[: len(fields) - len(tool.args_type.__struct_defaults__)]
    out = ["unknown", "not_json"]
    if required:
        out.append("missing")
    if fields:
        out += ["wrong_type", "huge", "nested"]
    if any(f.endswith("_id") or f == "product_ids" for f in fields):
        out.append("no_such_id")
    if any(f in ("quantity", "customer_count", "product_cnts") for f in fields):
        out.append("negative")
    if any(f in ("product_ids", "product_cnts") for f in fields):
        out.append("empty_list")
    if any(f in ("time", "dispatch_time", "date", "new_date", "date_start", "date_end") for f in fields):
        out.append("bad_format")
    if any(f in NUMBERS for f in fields):
        out.append("out_of_range")
    return out


@st.composite
def hostile_call(draw, tool) -> tuple[str, bytes]:
    fields = tool.args_type.__struct_fields__
    required = fields[: len(fields) - len(tool.args_type.__struct_defaults__)]
    args = {f: draw(good_value(f)) for f in fields}
    mode = draw(st.sampled_from(modes(tool)))
    pick = lambda names: draw(st.sampled_from([f for f in fields if f in names or names == "*"]))
    raw = None
    if mode == "missing":
        del args[draw(st.sampled_from(required))]
    elif mode == "unknown":
        args[draw(st.sampled_from(["extra", "__class__", "user id"]))] = "x"
    elif mode == "wrong_type":
        args[pick("*")] = draw(st.sampled_from([{"$ref": [1]}, [{"a": None}], {"": {}}]))
    elif mode == "not_json":
        raw = draw(st.sampled_from([b"{", b"NaN", b'{"a": NaN}', b"\xff\xfe", b"[1, 2]", b'"text"', b"null"]))
    elif mode == "huge":
        args[pick("*")] = HUGE
    elif mode == "nested":
        args[pick("*")] = "__NESTED__"
    elif mode == "no_such_id":
        name = pick([f for f in fields if f.endswith("_id") or f == "product_ids"])
        args[name] = ["ZZ-NO-SUCH-ID"] if name == "product_ids" else "ZZ-NO-SUCH-ID"
    elif mode == "negative":
        name = pick(("quantity", "customer_count", "product_cnts"))
        args[name] = [-1] * len(args.get("product_ids", [1])) if name == "product_cnts" else draw(st.integers(-5, -1))
    elif mode == "empty_list":
        args[pick(("product_ids", "product_cnts"))] = []
    elif mode == "bad_format":
        args[pick(("time", "dispatch_time", "date", "new_date", "date_start", "date_end"))] = draw(
            st.sampled_from(["tomorrow", "2025-13-45", "2025/05/01 10:00", "2025-05-01T10:00:00Z"]))
    elif mode == "out_of_range":
        args[pick(NUMBERS)] = "__INF__"
    text = raw if raw is not None else msgspec.json.encode(args)
    text = text.replace(b'"__NESTED__"', b"[" * 5000 + b"]" * 5000)
    text = text.replace(b'"__INF__"', draw(st.sampled_from([b"1e999", b"-1e999", b"1e308"])))
    return mode, text


def hostile_examples(name):
    tool = KIT.tools[name]

    @settings(max_examples=25, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(hostile_call(tool))
    def check(call):
        mode, text = call
        db, twin = copy.deepcopy(WORLD), copy.deepcopy(WORLD)
        out = KIT.call(db, name, text)
        assert isinstance(out.content, str)
        assert out.ok or out.content.startswith("Error:"), (mode, text[:200], out.content[:200])
        if mode in ("missing", "unknown", "not_json"):
            assert not out.ok, (mode, text[:200], out.content[:200])
        assert KIT.call(twin, name, text).content == out.content  # deterministic
        assert json.loads(json.dumps(TOOLS.final_state(db))) == TOOLS.final_state(db)

    return check


@pytest.mark.parametrize("name", sorted(KIT.tools))
def test_hostile_arguments_get_an_answer(name):
    hostile_examples(name)()


def test_one_episodes_calls_never_reach_another_episodes_state():
    one, other = TOOLS.new_state(TASK), TOOLS.new_state(TASK)
    before = TOOLS.final_state(other)
    created = KIT.call(one, "create_delivery_order", json.dumps({
        "user_id": WORLD.user_id, "store_id": "MB-S04", "product_ids": ["MB-S04-P01"], "product_cnts": [2],
        "address": "A new address, Elm Street, Maplebrook", "dispatch_time": WORLD.time}))
    assert created.ok and created.content.startswith("Order(")
    assert TOOLS.final_state(other) == before and "A new address, Elm Street, Maplebrook" not in other.places
    assert "quantity=0" in KIT.call(other, "get_delivery_product_info", '{"product_id": "MB-S04-P01"}').content


def test_the_world_covers_every_domain():
    assert len(KIT) == 66
    assert all((WORLD.stores, WORLD.shops, WORLD.books, WORLD.reservations, WORLD.hotels, WORLD.attractions,
                WORLD.flights, WORLD.trains))
