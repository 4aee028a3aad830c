"""Profiles made of columns against profiles made of records and decoded calls (the oracle,
``build_profiles``): the same dicts, to the bit, for calls of every kind (no latency, odd
statuses, stalls, replicas, calls that do not convert), several models, domains, roles and
benchmarks; and ``FactColumns`` of episode-fact rows exactly."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from sweepbench.results.call_side import _record_profiles
from sweepbench.results.calls import NO_LATENCY
from sweepbench.results.profile import build_profiles, call_event
from sweepbench.results.row_codes import RowCodes
from sweepbench.results.profile_columns import (
    FactColumns,
    ProfileCalls,
    build_profiles_columns,
    row_profiles,
)
from sweepbench.results.selection import load_view
from sweepbench.store.call_rows import ModelCallRow
from sweepbench.store.facts import facts_row
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import EpisodeRecord, Usage

STATUSES = [None, "[200]", "[429,429,200]", "[500,true,200.0,429]", "not json", '"text"',
            "[]", "[429]"]
ROLES = ["agent", None, "user", "judge"]
STALLS = [None, None, None, ('{"hung":1,"hedged":1,"hedge_won":true,'
                             '"hedge_usage":{"prompt_tokens":9,"completion_tokens":2}}'),
          '{"hung":"many"}',
          '{"hedged":2}', "[1]"]


def _call(rng: random.Random, key: str) -> ModelCallRow:
    latency = rng.choice([None, -1.0, 0.0, round(rng.uniform(0.001, 30), 6), 2000.0,
                          round(rng.uniform(0.001, 3), 6)])
    replica = rng.choice([None, None, "http://a/v1", "http://b/v1"])
    failures = rng.choice([None, None, '[{"replica":"http://b/v1"}]', "[]", '[{"replica":""}]',
                           '{"x":1}'])
    prompt = rng.randrange(0, 500)
    return ModelCallRow(key, "", "r", "E", rng.choice(ROLES), prompt, rng.randrange(0, 50),
                        rng.randrange(0, prompt + 1), latency,
                        rng.choice([None, None, 0, 1, 2, 4]), rng.choice(STATUSES),
                        rng.choice(STALLS), replica, failures)


def _columns(calls: list[tuple[str, str, ModelCallRow]]) -> ProfileCalls:
    """``calls`` as the columns ``build_profiles_columns`` takes (texts coded in the order
    they first come, as a store's tables would be)."""
    tables: dict[str, list] = {"models": [], "domains": [], "roles": [], "status_texts": []}

    def code(table: str, value) -> int:
        values = tables[table]
        if value not in values:
            values.append(value)
        return values.index(value)

    model = [code("models", m) for m, _, _ in calls]
    domain = [code("domains", d) for _, d, _ in calls]
    role = [code("roles", c.role) for _, _, c in calls]
    statuses = [code("status_texts", c.statuses) for _, _, c in calls]
    return ProfileCalls(
        **tables, model=np.array(model, dtype=np.int64), domain=np.array(domain, dtype=np.int64),
        role=np.array(role, dtype=np.int64),
        latency=np.array([NO_LATENCY if c.latency_s is None else c.latency_s
                          for _, _, c in calls], dtype=np.float64),
        has_attempts=np.array([c.attempts is not None for _, _, c in calls], dtype=bool),
        attempts=np.array([c.attempts or 0 for _, _, c in calls], dtype=np.int64),
        statuses=np.array(statuses, dtype=np.int64),
        rare={i: c for i, (_, _, c) in enumerate(calls)
              if c.stalls is not None or c.replica is not None or c.failures is not None})


def _records(rng: random.Random, places: list[tuple[str, str]], n: int) -> list[EpisodeRecord]:
    return [EpisodeRecord(
        run_id="r", model=m, benchmark="vitabench", domain=d, task_id=f"t{i}", trial=0,
        termination="user_stop", turns=rng.randrange(1, 20), tool_calls=rng.randrange(0, 9),
        wall_s=round(rng.uniform(0.1, 90), 3),
        agent_usage=Usage(rng.randrange(900), rng.randrange(90), rng.randrange(50), 3),
        user_usage=Usage(rng.randrange(400), rng.randrange(40)))
        for i, (m, d) in enumerate(rng.choice(places) for _ in range(n))]


@pytest.mark.parametrize("seed", range(6))
def test_columns_give_the_profiles_records_and_decoded_calls_give(seed):
    rng = random.Random(seed)
    places = [("A", "delivery"), ("A", "ota"), ("B", "ota"), ("C", "instore")][:2 + seed % 3]
    records = _records(rng, places, 3 + seed)
    calls = [(*rng.choice(places), _call(rng, "k")) for _ in range(20 + 15 * seed)]
    prices = {"A": {"input": 2.0, "cached_input": 1.0, "output": 10.0}, "U": {"input": 1.0}}
    want = build_profiles(records, [(m, d, call_event(c)) for m, d, c in calls],
                          prices=prices, user_model="U")
    got = build_profiles_columns(records, _columns(calls), prices=prices, user_model="U")
    assert got == want
    assert sum(p["model_calls"] for p in want.values()) > 0


def test_columns_of_calls_that_say_nothing_or_do_not_convert():
    records = _records(random.Random(1), [("A", "d1"), ("A", "d2")], 4)
    rows = [("A", "d1", ModelCallRow("k", "", "r", "E", None, 5, 1, 0, None, None, None)),
            ("A", "d2", ModelCallRow("k", "", "r", "E", "agent", 5, 1, 0, 0.5, 3, "[429,200]",
                                     '{"hung":"many"}')),  # does not convert: skipped whole
            ("A", "d2", ModelCallRow("k", "", "r", "E", "user", 5, 1, 0, 0.25, None,
                                     "[429,429,500]", '{"hung":2}')),
            ("A", "d1", ModelCallRow("k", "", "r", "E", "agent", 5, 1, 0, 1.0, 0, None))]
    want = build_profiles(records, [(m, d, call_event(c)) for m, d, c in rows])
    assert build_profiles_columns(records, _columns(rows)) == want
    a = want["A"]
    assert (a["retries"], a["rate_limited"], a["model_calls"]) == (2, 2, 2)
    assert a["stalls"]["hung"] == 2
    assert build_profiles_columns(records, _columns([])) == build_profiles(records, [])


def _episode(s: RunStore, model: str, bench: str, domain: str, task: str, trial: int,
             calls: list[tuple[dict, str]], wall: float | None = None) -> None:
    label = f"{model}|{bench}:{domain}:en:{task}|{trial}"
    meta = EpisodeMeta(key=f"ep-{label}", label=label, model=model, benchmark=bench,
                       domain=domain, task_id=task, lang="en", trial=trial, user_model="U",
                       user_mode="default")
    s.select("r", [meta])
    s.episode_started(meta, run_id="r")
    for seq, (payload, journal) in enumerate(calls):
        s.event(meta.key, seq, "model_call", payload, journal=journal, run_id="r",
                endpoint=model)
    s.episode_finished(meta.key, EpisodeRecord(
        run_id="r", model=model, benchmark=bench, domain=domain, task_id=task, trial=trial,
        termination="user_stop", turns=2 + trial + len(task), tool_calls=trial,
        wall_s=0.5 + trial / 8 + len(calls) / 16 if wall is None else wall, agent_usage=Usage(100 + trial, 7, 3, 1),
        user_usage=Usage(50, 5, 1, 2)))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    rng = random.Random(7)
    path = tmp_path_factory.mktemp("profiles") / "s.sqlite"
    # benchmarks in an order their names do not sort in, domains shared across benchmarks
    places = [("t1", "retail"), ("vitabench", "ota"), ("t1", "air"), ("vitabench", "delivery"),
              ("vitabench", "retail")]
    with RunStore(path) as s:
        s.begin_run("r", {})
        for i in range(40):
            bench, domain = places[(i * 7) % len(places)]
            model = "ZAB"[i % 3]
            calls = []
            for _ in range(rng.randrange(0, 6)):
                c = _call(rng, "")
                payload = {"role": c.role, "latency_s": c.latency_s, "attempts": c.attempts,
                           "usage": {"prompt_tokens": c.prompt_tokens,
                                     "completion_tokens": c.completion_tokens}}
                for name in ("statuses", "stalls", "failures"):
                    text = getattr(c, name)
                    if text is not None and text != "not json":
                        payload[name] = json.loads(text)
                if c.replica:
                    payload["replica"] = c.replica
                calls.append(({k: v for k, v in payload.items() if v is not None},
                              rng.choice(["", "", "", "judge|J|m"])))
            _episode(s, model, bench, domain, f"t{i % 4}", i // 12, calls)
        s.finish_run("r", "done")
    return path


@pytest.mark.parametrize("keep", ["all", "some", "one benchmark", "none"])
def test_row_profiles_are_the_profiles_of_records_and_calls(store, keep):
    with ReadOnlyStore(store) as s:
        view = load_view([s])
        rows = view.rows
        if keep == "some":
            rows = rows[::3]
        elif keep == "one benchmark":
            rows = [r for r in rows if r["benchmark"] == "vitabench"]
        elif keep == "none":
            rows = []
        row_of = {r["episode_key"]: r for r in rows}
        want = _record_profiles(view, row_of, view.calls())
        codes = RowCodes.of(rows)
        got = row_profiles(view.call_columns(), view.fact_columns(), codes, codes.index())
    assert list(got) == list(want)
    assert got == want
    if keep == "all":
        assert {k for k in got if len(k) == 2} == {
            (m, b) for m in ("A", "B", "Z") for b in ("t1", "vitabench")}
        assert sum(p["model_calls"] for k, p in got.items() if len(k) == 1) > 20


def test_fact_columns_of_episode_fact_rows():
    recs = [EpisodeRecord(run_id="r", model="A", benchmark="t1", domain="d", task_id="t",
                          trial=i, termination="error" if i else "user_stop",
                          error="boom" if i else None, turns=3 + i, steps=10 + i,
                          agent_calls=20 + i, user_calls=30 + i, tool_calls=40 + i,
                          tool_errors=50 + i, wall_s=1.5 + i,
                          agent_usage=Usage(100 + i, 200 + i, 300 + i, 400 + i),
                          user_usage=Usage(500 + i, 600 + i, 700 + i, 800 + i))
            for i in range(2)]
    cols = FactColumns.of([facts_row(f"k{i}", r) for i, r in enumerate(recs)])
    assert cols.keys == ["k0", "k1"]
    assert cols.errors == {"k1": "boom"}
    e = cols.episodes
    assert e.turns.tolist() == [3, 4] and e.tool_calls.tolist() == [40, 41]
    assert e.agent.tolist() == [[100, 200, 300, 400], [101, 201, 301, 401]]
    assert e.user.tolist() == [[500, 600, 700, 800], [501, 601, 701, 801]]
    assert e.wall.tolist() == [1.5, 2.5]
    assert [c.dtype for c in e] == [np.int64] * 4 + [np.float64]


def test_fact_columns_of_no_rows_are_empty_of_their_shapes():
    cols = FactColumns.of([])
    assert cols.keys == [] and cols.errors == {}
    e = cols.episodes
    assert [(c.dtype, c.shape) for c in e] == [
        (np.int64, (0,)), (np.int64, (0,)), (np.int64, (0, 4)), (np.int64, (0, 4)),
        (np.float64, (0,))]


def test_a_model_whose_calls_say_no_attempts_is_counted_with_none():
    """The last model's calls tell neither attempts nor statuses: its retries stay None."""
    rng = random.Random(3)
    records = _records(rng, [("A", "d"), ("B", "d")], 4)
    calls = [("A", "d", ModelCallRow("k", "", "r", "E", "agent", 1, 1, 0, 0.5, 2, "[429]")),
             ("B", "d", ModelCallRow("k", "", "r", "E", "agent", 1, 1, 0, 0.5, None, None)),
             ("B", "d", ModelCallRow("k", "", "r", "E", "user", 1, 1, 0, None, None, None))]
    want = build_profiles(records, [(m, d, call_event(c)) for m, d, c in calls])
    assert build_profiles_columns(records, _columns(calls)) == want
    assert (want["B"]["retries"], want["B"]["rate_limited"]) == (None, None)
    assert (want["A"]["retries"], want["A"]["rate_limited"]) == (1, 1)


def _store_of(path, episodes) -> None:
    with RunStore(path) as s:
        s.begin_run("r", {})
        for model, bench, domain, task, trial, calls, *wall in episodes:
            _episode(s, model, bench, domain, task, trial, calls, *wall)
        s.finish_run("r", "done")


def _compare(path) -> dict:
    with ReadOnlyStore(path) as s:
        view = load_view([s])
        row_of = {r["episode_key"]: r for r in view.rows}
        want = _record_profiles(view, row_of, view.calls())
        codes = RowCodes.of(view.rows)
        got = row_profiles(view.call_columns(), view.fact_columns(), codes, codes.index())
    assert list(got) == list(want)
    assert got == want
    return got


def test_row_profiles_of_episodes_that_made_no_call(tmp_path):
    _store_of(tmp_path / "s.sqlite", [("A", "t1", "d", f"t{i}", 0, []) for i in range(3)])
    got = _compare(tmp_path / "s.sqlite")
    assert list(got) == [("A",), ("A", "t1")]
    assert got[("A",)]["episodes"] == 3 and got[("A",)]["model_calls"] == 0


def test_row_profiles_keep_each_group_in_order_where_the_sum_shows_it(tmp_path):
    """Latencies and wall times whose sums depend on their order (2**53 + 1 == 2**53), many
    rows with two benchmarks each: only stable sorts keep each group's calls and episodes in
    the order the records and calls come in."""
    big = float(2 ** 53)
    seqs = [[1.0, 1.0, big], [1.0, big], [big, 1.0, 1.0]]
    episodes = []
    for m in range(20):
        for i, (bench, wall) in enumerate((("t1", 1.0), ("t1", big), ("vitabench", 1.0),
                                           ("vitabench", 1.0))):
            calls = [({"role": "agent", "latency_s": x}, "") for x in seqs[(m + i) % 3]]
            episodes.append((f"M{m:02}", bench, "de"[(m + i) % 2], f"t{i}", 0, calls, wall))
    _store_of(tmp_path / "s.sqlite", episodes)
    got = _compare(tmp_path / "s.sqlite")
    assert got[("M00",)]["model_calls"] == 11
    assert {p["wall_s"]["total"] for p in got.values()} == {2.0, big}
