"""Dollars from stored calls, at their edges: each call at its run's stored price, unpriced
calls counted apart, malformed stored prices left out, roles told apart.

Prices are chosen so that every cost is a binary fraction (exact in floating point): in
dollars per million tokens, an input token costs $0.25, a cached one $0.125, an output $0.5.
"""

from __future__ import annotations

import json
import sqlite3

import numpy as np

from sweepbench.results.cost import (
    CallCost,
    Spend,
    call_cost,
    column_costs,
    prices_by_run,
    role_of,
)
from sweepbench.results.profile import Prices
from sweepbench.results.report import build_report
from sweepbench.store.reads import ModelCallRow
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import EpisodeRecord

P = Prices(input=250_000.0, cached_input=125_000.0, output=500_000.0)
DOUBLE = Prices(input=500_000.0, cached_input=250_000.0, output=1_000_000.0)
PRICES = {"r1": {"m": P, "u": P}, "r2": {"m": DOUBLE}}


def call(*, key="e1", journal="", run_id="r1", endpoint="m", role="agent", prompt=4,
         completion=1, cached=2, attempts=1, stalls=None) -> ModelCallRow:
    return ModelCallRow(key, journal, run_id, endpoint, role, prompt, completion, cached, 0.5,
                        attempts, None, stalls)


def test_a_call_costs_uncached_cached_and_output_tokens_at_its_runs_price():
    # 2 uncached * .25 + 2 cached * .125 + 1 output * .5
    assert call_cost(call(), PRICES) == CallCost("e1", "agent", "m", 1.25)
    assert call_cost(call(run_id="r2"), PRICES).cost == 2.5  # the price that run stored
    assert call_cost(call(prompt=3, cached=0, completion=0), PRICES).cost == 0.75
    assert call_cost(call(prompt=3, cached=3, completion=0), PRICES).cost == 0.375
    assert call_cost(call(prompt=0, cached=0, completion=3), PRICES).cost == 1.5


def test_a_call_retried_or_of_unknown_attempts_is_billed_as_its_usage_says():
    assert call_cost(call(attempts=3), PRICES).cost == 1.25
    assert call_cost(call(attempts=None), PRICES).cost == 1.25  # imported: attempts unknown


def test_a_call_answered_from_the_cache_costs_nothing_priced_or_not():
    assert call_cost(call(attempts=0), PRICES).cost == 0.0
    assert call_cost(call(attempts=0, run_id="gone"), PRICES).cost == 0.0
    assert call_cost(call(attempts=0, endpoint=None), PRICES) == CallCost("e1", "agent", None, 0.0)


def test_a_call_without_a_stored_price_is_unpriced_never_guessed():
    assert call_cost(call(run_id="gone"), PRICES).cost is None  # run stored no prices
    assert call_cost(call(run_id=None), PRICES).cost is None
    assert call_cost(call(endpoint="other"), PRICES).cost is None  # run has none for it
    assert call_cost(call(endpoint=None), PRICES) == CallCost("e1", "agent", None, None)


def test_an_override_replaces_the_stored_price_of_its_endpoints_only():
    override = {"m": DOUBLE}
    assert call_cost(call(), PRICES, override).cost == 2.5
    assert call_cost(call(run_id="gone"), PRICES, override).cost == 2.5  # priced now
    assert call_cost(call(endpoint="u", completion=0), PRICES, override).cost == 0.75  # stored
    assert call_cost(call(endpoint=None), PRICES, override).cost is None


def test_a_billed_losing_hedge_copy_adds_its_own_usage():
    loser = {"prompt_tokens": 8, "completion_tokens": 2, "cached_prompt_tokens": 0}  # $3
    assert call_cost(call(stalls=json.dumps({"hedge_usage": loser})), PRICES).cost == 4.25
    assert call_cost(call(run_id="r2", stalls=json.dumps({"hedge_usage": loser})),
                     PRICES).cost == 8.5  # at the same run's price
    # no losers billed, or unreadable: the winner only
    for stalls in ('{"hung": 1}', '{"hedge_usage": null}', "[1]", "{",
                   '{"hedge_usage": {"prompt_tokens": -1}}',
                   '{"hedge_usage": {"completion_tokens": -1}}',
                   '{"hedge_usage": {"cached_prompt_tokens": -1}}'):
        assert call_cost(call(stalls=stalls), PRICES).cost == 1.25, stalls
    # a loser's cached tokens past its prompt count as prompt tokens, like a live call's
    over = {"prompt_tokens": 2, "cached_prompt_tokens": 4}  # 2 cached at .125
    assert call_cost(call(stalls=json.dumps({"hedge_usage": over})), PRICES).cost == 1.5
    # a cached answer cost nothing, whatever its stalls say
    assert call_cost(call(attempts=0, stalls=json.dumps({"hedge_usage": loser})),
                     PRICES).cost == 0.0


def test_judges_by_their_journal_the_agent_by_its_role_and_every_other_call_is_the_users():
    assert role_of(call(journal="judge:scripted/judge:rubric")) == "judge"
    assert role_of(call(journal="j", role="agent")) == "judge"
    assert role_of(call(role="agent")) == "agent"
    for other in ("user", "exit", "referee", None, "AGENT"):  # protocol calls go to the user
        assert role_of(call(role=other)) == "user", other
    assert call_cost(call(role="exit"), PRICES).role == "user"


def test_stored_prices_are_read_by_run_and_endpoint():
    runs = [{"run_id": "a", "prices": {"m": {"input": 1, "cached_input": 0.5, "output": 2}}},
            {"run_id": "b", "prices": {"m": {"price_input_per_mtok": 3}}},
            {"run_id": "c", "prices": {}}, {"run_id": "d", "prices": None}, {"run_id": "e"}]
    assert prices_by_run(runs) == {
        "a": {"m": Prices(input=1.0, cached_input=0.5, output=2.0)},
        "b": {"m": Prices(input=3.0)}, "c": {}, "d": {}, "e": {}}


def test_a_malformed_stored_price_leaves_only_its_endpoint_unpriced():
    good = {"input": 1.0}
    runs = [{"run_id": "r", "prices": {
        "negative": {"input": -1}, "text": {"output": "9"}, "flag": {"input": True},
        "a string": "1.0", "a list": [1, 2, 3], "null": None, "a number": 4,
        "good": good}}]
    assert prices_by_run(runs) == {"r": {"good": Prices(input=1.0)}}
    runs = [{"run_id": "r", "prices": {"bad": {"input": -1}, "good": good}}]  # after a bad one
    assert prices_by_run(runs) == {"r": {"good": Prices(input=1.0)}}


def test_a_run_whose_stored_prices_are_not_a_table_has_its_calls_unpriced():
    runs = [{"run_id": "x", "prices": [["m", 1.0]]}, {"run_id": "y", "prices": "m=1"},
            {"run_id": "z", "prices": 3}, {"run_id": "ok", "prices": {"m": {"input": 1e6}}}]
    prices = prices_by_run(runs)
    assert prices == {"x": {}, "y": {}, "z": {}, "ok": {"m": Prices(input=1e6)}}
    spend = Spend.of([call(run_id="x"), call(run_id="ok", cached=0, completion=0)], prices)
    assert (spend.total, spend.calls, spend.unpriced) == (4.0, 2, 1)


def test_spend_sums_priced_calls_by_role_endpoint_and_episode_and_counts_unpriced_ones():
    calls = [call(),  # agent on m: 1.25
             call(role="exit", endpoint="u", completion=0),  # user on u: .75
             call(journal="judge", run_id="r2", completion=0),  # judge on m at r2: 1.5
             call(key="e2", role="user", endpoint="u", prompt=0, cached=0, completion=1),  # .5
             call(key="e2", run_id="gone"),  # unpriced
             call(key="e3", endpoint="nowhere"),  # unpriced
             call(key="e3", attempts=0, endpoint=None)]  # cached, endpoint unknown: 0
    s = Spend.of(calls, PRICES)
    assert (s.total, s.calls, s.unpriced) == (4.0, 7, 2)
    assert s.by_role == {"agent": 1.25, "user": 1.25, "judge": 1.5}
    assert dict(s.by_endpoint) == {"m": 2.75, "u": 1.25, "?": 0.0}
    assert {k: dict(v) for k, v in s.by_episode.items()} == {
        "e1": {"agent": 1.25, "user": 0.75, "judge": 1.5},
        "e2": {"agent": 0.0, "user": 0.5, "judge": 0.0},
        "e3": {"agent": 0.0, "user": 0.0, "judge": 0.0}}


def test_spend_of_nothing_is_zero_everywhere():
    s = Spend.of([], PRICES)
    assert (s.total, s.calls, s.unpriced, dict(s.by_endpoint), dict(s.by_episode)) == (
        0.0, 0, 0, {}, {})
    assert s.by_role == {"agent": 0.0, "user": 0.0, "judge": 0.0}


def test_spend_prices_with_an_override():
    s = Spend.of([call(), call(run_id="gone")], PRICES, {"m": DOUBLE})
    assert (s.total, s.unpriced) == (5.0, 0)


def test_the_report_counts_the_calls_of_a_malformed_stored_price_as_unpriced(tmp_path):
    usage = {"prompt_tokens": 4, "completion_tokens": 1, "cached_prompt_tokens": 2}
    stored = {"user": {"input": 250_000.0, "cached_input": 125_000.0, "output": 500_000.0},
              "agent": "free"}  # hand-edited or imported: no table
    with RunStore(tmp_path / "s.db") as store:
        for run, prices in (("r1", stored), ("r2", {})):
            store.begin_run(run, {"run": run}, prices=prices)
            meta = EpisodeMeta(key=f"ep-{run}", label=f"A|t1:bar:en:t|{run[1]}", model="A",
                               benchmark="t1", domain="bar", task_id="t", lang="en",
                               trial=int(run[1]), spec="t1:bar")
            store.select(run, [meta])
            store.episode_started(meta, run_id=run)
            for seq, role in enumerate(("agent", "user", "agent")):
                store.event(meta.key, seq, "model_call", {"role": role, "usage": usage,
                                                          "attempts": 1},
                            run_id=run, endpoint=role)
            store.episode_finished(meta.key, EpisodeRecord(
                run_id=run, model="A", benchmark="t1", domain="bar", task_id="t",
                trial=int(run[1]), termination="user_stop"))
    with sqlite3.connect(tmp_path / "s.db") as db:  # a run's prices that are no table at all
        db.execute("""UPDATE runs SET prices = '[["agent", 1.0]]' WHERE run_id = 'r2'""")
    with RunStore(tmp_path / "s.db") as store:
        cost = build_report(store)["cost"]
    assert (cost["total"], cost["user"], cost["agent"]) == (1.25, 1.25, 0.0)
    assert (cost["calls"], cost["unpriced_calls"]) == (6, 5)


def test_spend_knows_which_episodes_roles_and_endpoints_made_unpriced_calls():
    s = Spend.of([call(), call(key="e2", run_id="gone"), call(key="e2", role="user"),
                  call(key="e3", journal="judge", endpoint="nowhere")], PRICES)
    assert {k: sorted(v) for k, v in s.unpriced_roles.items()} == {"e2": ["agent"],
                                                                   "e3": ["judge"]}
    assert s.unpriced_endpoints == {"m", "nowhere"}


def test_a_report_shows_a_model_with_unpriced_calls_as_unpriced_never_as_zero(tmp_path):
    usage = {"prompt_tokens": 4, "completion_tokens": 1, "cached_prompt_tokens": 2}
    with RunStore(tmp_path / "s.db") as store:
        store.begin_run("r1", {"run": "r1"}, prices={"priced": {"input": 250_000.0,
                                                                "cached_input": 125_000.0,
                                                                "output": 500_000.0}})
        for model in ("priced", "local"):  # "local": a provider model without a price
            meta = EpisodeMeta(key=f"ep-{model}", label=f"{model}|t1:bar:en:t|0", model=model,
                               benchmark="t1", domain="bar", task_id="t", lang="en", trial=0,
                               spec="t1:bar")
            store.select("r1", [meta])
            store.episode_started(meta, run_id="r1")
            store.event(meta.key, 0, "model_call", {"role": "agent", "usage": usage,
                                                    "attempts": 1}, run_id="r1", endpoint=model)
            store.episode_finished(meta.key, EpisodeRecord(
                run_id="r1", model=model, benchmark="t1", domain="bar", task_id="t", trial=0,
                termination="user_stop"))
    with RunStore(tmp_path / "s.db") as store:
        report = build_report(store)
    cost = report["cost"]
    assert cost["by_endpoint"] == {"local": None, "priced": 1.25}
    assert cost["by_model"] == {"local": None, "priced": 1.25}
    assert (cost["by_benchmark"], cost["by_task"]) == ({"t1": None}, {"t1:bar:en:t": None})
    models = report["benchmarks"]["t1"]["models"]
    assert models["local"]["cost"] == {"agent": None, "user": 0.0, "judge": 0.0, "total": None,
                                       "per_episode": None, "per_pass": None}
    assert models["priced"]["cost"]["total"] == 1.25


class CallColumnsDouble:
    """Test double of ``CallColumns`` made of ``ModelCallRow``s: the columns ``of_columns``
    reads, texts as codes into tables in first-come order (None a text like any other), the
    calls with stalls kept whole in ``rare``."""

    def __init__(self, calls) -> None:
        tables: dict[str, list] = {"runs": [], "endpoints": [], "roles": [], "keys": []}

        def code(table, value):
            values = tables[table]
            if value not in values:
                values.append(value)
            return values.index(value)

        self.run = np.array([code("runs", c.run_id) for c in calls], dtype=np.int32)
        self.endpoint = np.array([code("endpoints", c.endpoint) for c in calls], dtype=np.int32)
        self.role = np.array([code("roles", c.role) for c in calls], dtype=np.int32)
        self.episode = np.array([code("keys", c.episode_key) for c in calls], dtype=np.int32)
        self.runs, self.endpoints = tables["runs"], tables["endpoints"]
        self.roles, self.keys = tables["roles"], tables["keys"]
        self.judge = np.array([bool(c.journal) for c in calls], dtype=bool)
        self.prompt, self.completion, self.cached = (
            np.array([getattr(c, f) for c in calls], dtype=np.int32)
            for f in ("prompt_tokens", "completion_tokens", "cached_prompt_tokens"))
        self.has_attempts = np.array([c.attempts is not None for c in calls], dtype=bool)
        self.attempts = np.array([c.attempts or 0 for c in calls], dtype=np.int32)
        self.rare = {i: c for i, c in enumerate(calls) if c.stalls is not None}
        self.n = len(calls)

    def __len__(self) -> int:
        return self.n


def _spend_fields(s: Spend) -> tuple:
    return (s.total, s.calls, s.unpriced, dict(s.by_role), list(s.by_endpoint.items()),
            [(k, dict(v)) for k, v in s.by_episode.items()],
            {k: set(v) for k, v in s.unpriced_roles.items()}, set(s.unpriced_endpoints))


LOSER = json.dumps({"hedge_usage": {"prompt_tokens": 8, "completion_tokens": 2,
                                    "cached_prompt_tokens": 0}})  # $3 at P


def _mixed_calls():
    return [call(key="e2", role="user", endpoint="u", prompt=0, cached=0, completion=1),  # .5
            call(),  # agent on m: 1.25
            call(role="exit", endpoint="u", completion=0),  # user on u: .75
            call(journal="judge", run_id="r2", completion=0),  # judge on m at r2: 1.5
            call(key="e2", run_id="gone"),  # unpriced agent
            call(key="e3", endpoint="nowhere", role="exit"),  # unpriced user
            call(key="e3", attempts=0, endpoint=None),  # cached, endpoint unknown: 0
            call(key="e3", endpoint=None, journal="j"),  # unpriced judge, endpoint unknown
            call(key="e1", stalls=LOSER),  # agent 1.25 + its losing copy 3
            call(key="e1", stalls=LOSER, run_id="gone"),  # unpriced: no loser priced either
            call(key="e2", stalls='{"hung": 1}', attempts=None),  # agent 1.25, no loser
            call(key="e4", attempts=0, stalls=LOSER)]  # cached: nothing, losers neither


def test_spend_of_columns_is_spend_of_the_same_calls_exactly():
    calls = _mixed_calls()
    got = Spend.of_columns(CallColumnsDouble(calls), PRICES)
    assert _spend_fields(got) == _spend_fields(Spend.of(calls, PRICES))
    assert got.total == 0.5 + 1.25 + 0.75 + 1.5 + 0.0 + 4.25 + 1.25
    assert got.by_role == {"agent": 6.75, "user": 1.25, "judge": 1.5}
    # endpoints and episodes in the order of their first priced call
    assert list(got.by_endpoint.items()) == [("u", 1.25), ("m", 8.25), ("?", 0.0)]
    assert [(k, dict(v)) for k, v in got.by_episode.items()] == [
        ("e2", {"agent": 1.25, "user": 0.5, "judge": 0.0}),
        ("e1", {"agent": 5.5, "user": 0.75, "judge": 1.5}),
        ("e3", {"agent": 0.0, "user": 0.0, "judge": 0.0}),
        ("e4", {"agent": 0.0, "user": 0.0, "judge": 0.0})]
    assert (got.calls, got.unpriced) == (12, 4)
    assert {k: set(v) for k, v in got.unpriced_roles.items()} == {
        "e2": {"agent"}, "e3": {"user", "judge"}, "e1": {"agent"}}
    assert got.unpriced_endpoints == {"m", "nowhere", "?"}


def test_spend_of_columns_prices_with_an_override_as_spend_of_does():
    calls = _mixed_calls()
    override = {"m": DOUBLE, "nowhere": P}
    got = Spend.of_columns(CallColumnsDouble(calls), PRICES, override)
    assert _spend_fields(got) == _spend_fields(Spend.of(calls, PRICES, override))
    assert got.unpriced == 1 and got.unpriced_endpoints == {"?"}
    # the gone run's calls priced now, each losing copy at the override's price too (6)
    assert got.by_episode["e1"]["agent"] == 2.5 + 8.5 + 8.5


def test_spend_of_columns_of_one_episode_and_of_none():
    calls = [call(key="only", journal="j", completion=0), call(key="only", role="user")]
    got = Spend.of_columns(CallColumnsDouble(calls), PRICES)
    assert _spend_fields(got) == _spend_fields(Spend.of(calls, PRICES))
    assert [(k, dict(v)) for k, v in got.by_episode.items()] == [
        ("only", {"agent": 0.0, "user": 1.25, "judge": 0.75})]
    empty = Spend.of_columns(CallColumnsDouble([]), PRICES)
    assert _spend_fields(empty) == _spend_fields(Spend.of([], PRICES))


def test_spend_of_columns_without_an_agent_call_counts_every_other_call_as_the_users():
    calls = [call(role="user", endpoint="u"), call(role="exit", completion=0),
             call(role="exit", journal="j", key="e2")]
    got = Spend.of_columns(CallColumnsDouble(calls), PRICES)
    assert _spend_fields(got) == _spend_fields(Spend.of(calls, PRICES))
    assert got.by_role == {"agent": 0.0, "user": 1.25 + 0.75, "judge": 1.25}


def test_spend_of_columns_keys_episodes_by_their_first_priced_call():
    # episode "a" comes first in the columns, but its first call is unpriced
    calls = [call(key="a", run_id="gone"), call(key="b", role="user"), call(key="a")]
    got = Spend.of_columns(CallColumnsDouble(calls), PRICES)
    assert _spend_fields(got) == _spend_fields(Spend.of(calls, PRICES))
    assert list(got.by_episode) == ["b", "a"]


def test_column_costs_of_no_calls_are_empty():
    none = np.zeros(0, dtype=np.int32)
    cost, inverse, by_pair = column_costs(none, ["r1"], none, ["m"], none, none, none, PRICES)
    assert cost.tolist() == [] and inverse.tolist() == [] and by_pair == []
