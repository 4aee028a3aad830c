"""Tokens, cost, latency and retries per model and domain."""

from __future__ import annotations

import msgspec
import numpy as np
import pytest

from sweepbench.config import Endpoint
from sweepbench.results.profile import (
    LATENCY_BINS,
    Prices,
    _Call,
    _dist,
    _Failure,
    _Group,
    _profile,
    _profiles,
    _Replica,
    _Stalls,
    _stored_json,
    _tokens,
    as_prices,
    build_profiles,
    call_event,
    episodes_of,
    profile_run,
    stall_table,
    usage_cost,
)
from sweepbench.results.report import build_report
from sweepbench.store.call_rows import ModelCallRow
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import EpisodeRecord, Usage


def rec(model: str, domain: str, trial: int, *, turns: int, wall: float,
        agent: Usage, user: Usage) -> EpisodeRecord:
    return EpisodeRecord(run_id="r", model=model, benchmark="vitabench", domain=domain,
                         task_id="t", trial=trial, termination="user_stop", turns=turns,
                         wall_s=wall, agent_usage=agent, user_usage=user)


def test_prices_from_endpoints_mappings_and_cost():
    ep = Endpoint(name="m", price_input_per_mtok=3.0, price_cached_input_per_mtok=0.3,
                  price_output_per_mtok=15.0)
    assert as_prices(ep) == Prices(input=3.0, cached_input=0.3, output=15.0)
    assert as_prices({"input": 1, "output": 2}) == Prices(input=1.0, output=2.0)
    assert as_prices({"price_input_per_mtok": 5}) == Prices(input=5.0)
    with pytest.raises(ValueError, match="input"):
        as_prices({"input": -1})
    # 1M prompt tokens of which 400k cached, 100k completion
    cost = usage_cost(Usage(1_000_000, 100_000, 400_000), as_prices(ep))
    assert cost == pytest.approx(0.6 * 3.0 + 0.4 * 0.3 + 0.1 * 15.0)


def test_profiles_by_model_and_domain():
    records = [
        rec("A", "delivery", 0, turns=4, wall=10.0, agent=Usage(1000, 100, 500),
            user=Usage(200, 20)),
        rec("A", "delivery", 1, turns=6, wall=20.0, agent=Usage(3000, 300, 1500),
            user=Usage(400, 40)),
        rec("A", "ota", 0, turns=8, wall=30.0, agent=Usage(5000, 500), user=Usage(600, 60)),
        rec("B", "ota", 0, turns=2, wall=5.0, agent=Usage(100, 10), user=Usage(10, 1)),
    ]
    lat = np.linspace(0.1, 10.0, 100)
    calls = [("A", "delivery", {"role": "agent", "latency_s": float(x), "attempts": 1,
                                "statuses": [200]}) for x in lat]
    calls += [("A", "ota", (b'{"role":"agent","latency_s":1.0,"attempts":3,'
                            b'"statuses":[429,429,200],"message":{"content":"hi"}}')),
              ("A", "ota", {"role": "user", "latency_s": 0.5}),
              ("A", "ota", b'{"latency_s": "garbage"}')]  # malformed: skipped
    prices = {"A": {"input": 2.0, "cached_input": 1.0, "output": 10.0}, "U": {"input": 1.0}}
    out = build_profiles(records, calls, prices=prices, user_model="U")
    a = out["A"]
    assert a["episodes"] == 3
    assert a["turns"]["mean"] == 6.0 and a["turns"]["p50"] == 6.0
    assert a["agent_tokens"] == {"prompt": 3000.0, "cached_prompt": 2000 / 3, "completion": 300.0,
                                 "reasoning": 0.0}
    assert a["user_tokens"]["prompt"] == 400.0
    agent_cost = sum(usage_cost(r.agent_usage, as_prices(prices["A"])) for r in records[:3])
    user_cost = (200 + 400 + 600) / 1e6
    assert a["cost"]["total"] == pytest.approx(agent_cost + user_cost)
    assert a["cost"]["per_episode"] == pytest.approx((agent_cost + user_cost) / 3)
    assert a["wall_s"]["total"] == 60.0 and a["wall_s"]["p50"] == 20.0
    agent_lat = a["latency_s"]["agent"]
    all_agent = np.append(lat, 1.0)
    for q in (50, 95, 99):
        assert agent_lat[f"p{q}"] == pytest.approx(np.percentile(all_agent, q))
    assert a["latency_s"]["user"]["p50"] == 0.5
    assert a["model_calls"] == 102
    assert (a["retries"], a["rate_limited"]) == (2, 2)
    assert sum(a["agent_latency_hist"]["counts"]) == 101
    d = a["domains"]
    assert sorted(d) == ["delivery", "ota"]
    assert d["delivery"]["episodes"] == 2 and d["delivery"]["retries"] == 0
    assert d["ota"]["rate_limited"] == 2 and d["ota"]["turns"]["mean"] == 8.0
    b = out["B"]  # no prices, no events: explicit absence
    assert b["cost"] is None and b["latency_s"] is None and b["agent_latency_hist"] is None
    assert b["retries"] is None and b["rate_limited"] is None and b["model_calls"] == 0


def test_profile_run_reads_the_store_and_report_includes_it(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("r", {"user_model": "U"}, prices={"A": {"input": 1.0}, "U": {"input": 2.0}})
        for trial in range(2):
            label = f"A|vitabench:delivery:en:t|{trial}"
            meta = EpisodeMeta(key=f"ep-{trial}", label=label, model="A", benchmark="vitabench",
                               domain="delivery", task_id="t", lang="en", trial=trial,
                               user_model="U")
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
            s.event(meta.key, 0, "model_call", {"role": "agent", "latency_s": 0.2 + trial,
                                                "usage": {"prompt_tokens": 1000}},
                    run_id="r", endpoint="A")
            s.event(meta.key, 1, "tool_call", {"name": "x"})
            s.event(meta.key, 2, "model_call", {"role": "user", "latency_s": 0.1,
                                                "usage": {"prompt_tokens": 100}},
                    run_id="r", endpoint="U")
            s.episode_finished(meta.key, rec("A", "delivery", trial, turns=3, wall=1.0,
                                             agent=Usage(1000, 10), user=Usage(100, 1)))
            s.judgment(meta.key, judge="state", method="state", passed=True, score=1.0,
                       details={})
        s.flush_sync()
        prof = profile_run(s, "r", prices={"A": {"input": 1.0}, "U": {"input": 2.0}})
        assert prof["A"]["model_calls"] == 4
        assert prof["A"]["cost"]["user_per_episode"] == pytest.approx(100 * 2.0 / 1e6)
        report = build_report(s)  # no prices passed: the run's stored ones
        override = build_report(s, prices={"A": Prices(input=3.0)})
    m = report["models"]["A"]
    p = m["profile"]
    assert p["latency_s"]["agent"]["p50"] == pytest.approx(0.7)
    assert m["domains"]["delivery"]["profile"]["episodes"] == 2
    assert m["cost"]["agent"] == pytest.approx(2 * 1000 * 1.0 / 1e6)
    assert m["cost"]["user"] == pytest.approx(2 * 100 * 2.0 / 1e6)
    assert m["cost"]["per_pass"] == pytest.approx(m["cost"]["total"] / 2)
    assert report["cost"]["by_endpoint"] == pytest.approx({"A": 0.002, "U": 0.0004})
    assert override["models"]["A"]["cost"]["agent"] == pytest.approx(2 * 1000 * 3.0 / 1e6)


def test_a_model_with_several_replicas_is_profiled_per_replica_through_the_store(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("r", {"user_model": "U"})
        meta = EpisodeMeta(key="ep", label="A|t|0", model="A", benchmark="vitabench",
                           domain="delivery", task_id="t", lang="en", trial=0, user_model="U")
        s.select("r", [meta])
        s.episode_started(meta, run_id="r")
        calls = [("http://a/v1", 0.2, 1000, 800, []),
                 ("http://b/v1", 0.4, 1000, 0, [{"error": "ConnectionRefused",
                                                 "replica": "http://a/v1"}] * 2),
                 ("http://b/v1", 0.6, 2000, 1000, [])]
        for seq, (replica, latency, prompt, cached, failures) in enumerate(calls):
            s.event("ep", seq, "model_call", {
                "role": "agent", "latency_s": latency, "replica": replica,
                "failures": failures,
                "usage": {"prompt_tokens": prompt, "cached_prompt_tokens": cached}},
                run_id="r", endpoint="A")
        s.episode_finished("ep", rec("A", "delivery", 0, turns=3, wall=1.0,
                                     agent=Usage(4000, 10), user=Usage(100, 1)))
        s.flush_sync()
        replicas = profile_run(s, "r")["A"]["replicas"]
        plain = build_report(s)["models"]["A"]["profile"]["replicas"]
    assert replicas == plain
    assert replicas["http://a/v1"] == {
        "calls": 1, "share": pytest.approx(1 / 3), "errors": 2, "cached_share": 0.8,
        "latency_s": {"mean": 0.2, "p50": 0.2, "p95": 0.2, "p99": 0.2, "max": 0.2}}
    b = replicas["http://b/v1"]
    assert (b["calls"], b["errors"], b["cached_share"]) == (2, 0, pytest.approx(1000 / 3000))
    assert b["latency_s"]["mean"] == pytest.approx(0.5)


# -- the parts, at their edges (exact numbers) ---------------------------------------------


class _Priced:
    price_input_per_mtok = 4
    price_output_per_mtok = 8.5


def test_as_prices_reads_each_name_and_keeps_a_prices_as_it_is():
    p = Prices(input=1.0)
    assert as_prices(p) is p
    got = as_prices(_Priced())
    assert got == Prices(input=4.0, cached_input=0.0, output=8.5)
    assert type(got.input) is float
    # the endpoint's long name wins over the short one in a mapping
    assert as_prices({"price_output_per_mtok": 2, "output": 9, "cached_input": 0.5}) == Prices(
        output=2.0, cached_input=0.5)
    assert as_prices({}) == Prices() and as_prices({"input": 0}) == Prices()
    for bad, shown in ((True, "True"), ("1", "'1'"), (None, "None"), (-0.5, "-0.5")):
        with pytest.raises(ValueError) as err:
            as_prices({"cached_input": bad})
        assert str(err.value) == f"price 'cached_input' must be a number >= 0, got {shown}"


def test_usage_cost_prices_cached_tokens_apart_and_never_more_than_the_prompt():
    prices = Prices(input=3.0, cached_input=0.5, output=7.0)
    assert usage_cost(Usage(1000, 100, 400), prices) == (600 * 3.0 + 400 * 0.5 + 100 * 7.0) / 1e6
    # cached beyond the prompt: all of the prompt cached, none of it at the input price
    assert usage_cost(Usage(200, 0, 900), prices) == 200 * 0.5 / 1e6
    assert usage_cost(Usage(0, 0, 0), prices) == 0.0


def test_a_replica_s_share_and_cached_share_are_none_without_calls_or_prompt():
    r = _Replica()
    assert r.as_dict(0) == {"calls": 0, "share": None, "latency_s": None, "errors": 0,
                            "cached_share": None}
    r.latency += [1.0, 3.0]
    r.prompt, r.cached, r.errors = 40, 10, 2
    assert r.as_dict(8) == {"calls": 2, "share": 0.25, "latency_s": _dist([1.0, 3.0]),
                            "errors": 2, "cached_share": 0.25}


def test_a_group_counts_fleet_stalls_and_timing_of_each_call():
    g = _Group()
    assert (g.retries, g.rate_limited, g.stalls) == (None, None, None)
    g.add_call(_Call(role="user", latency_s=None, replica="http://a", prompt_tokens=10,
                     cached_prompt_tokens=4,
                     failures=[msgspec.convert({"replica": ""}, _Failure),
                               msgspec.convert({"replica": "http://b"}, _Failure)],
                     stalls=_Stalls(hung=2, hedged=1, hedge_won=True,
                                    hedge_usage=Usage(5, 1))))
    g.add_call(_Call(latency_s=0.0, attempts=0, statuses=[], stalls=_Stalls(hedged=3)))
    g.add_call(_Call(latency_s=-1.0, attempts=3, statuses=[429, 500, 429]))
    g.add_call(_Call(latency_s=2.5, statuses=[429, 200, 429, 200]))
    g.add_call(_Call(role="user", latency_s=1.5, replica="http://a", prompt_tokens=6,
                     stalls=_Stalls(hedge_usage=Usage(1, 2, 1))))
    assert dict(g.latency) == {"agent": [0.0, 2.5], "user": [1.5]}
    assert (g.retries, g.rate_limited) == (0 + 2 + 3, 0 + 2 + 2)
    assert g.stalls == {"hung": 2, "hedged": 4, "hedge_wins": 1}
    assert dict(g.hedge_usage) == {"user": Usage(6, 3, 1)}
    assert sorted(g.replicas) == ["http://a", "http://b"]
    a, b = g.replicas["http://a"], g.replicas["http://b"]
    assert (a.latency, a.prompt, a.cached, a.errors) == ([0.0, 1.5], 16, 4, 0)
    assert (b.latency, b.prompt, b.cached, b.errors) == ([], 0, 0, 1)


def test_attempts_of_zero_or_one_are_no_retries_and_statuses_alone_count_them():
    g = _Group()
    g.add_timing(_Call(attempts=1))
    assert (g.retries, g.rate_limited) == (0, None)
    g.add_timing(_Call(statuses=[429]))
    assert (g.retries, g.rate_limited) == (0, 1)
    g.add_timing(_Call(statuses=[500, 429, 429, 200], attempts=2))
    assert (g.retries, g.rate_limited) == (1, 3)
    g.add_timing(_Call(statuses=[200, 200]))
    assert (g.retries, g.rate_limited) == (2, 3)


def test_dist_and_tokens_exactly():
    assert _dist([]) is None and _dist(np.zeros(0)) is None
    assert _dist([4, 1, 3, 2]) == {"mean": 2.5, "p50": 2.5, "p95": 3.8499999999999996,
                                   "p99": 3.9699999999999998, "max": 4.0}
    assert all(type(v) is float for v in _dist(np.array([1, 2])).values())
    assert _tokens(np.array([[10, 4, 2, 1], [20, 6, 4, 3]])) == {
        "prompt": 15.0, "cached_prompt": 3.0, "completion": 5.0, "reasoning": 2.0}
    assert _tokens(np.zeros((0, 4), dtype=np.int64)) == {
        "prompt": 0.0, "cached_prompt": 0.0, "completion": 0.0, "reasoning": 0.0}


def _rec(model="A", domain="d", turns=2, tools=1, wall=1.25, agent=None, user=None):
    agent = Usage(1000, 100, 200, 10) if agent is None else agent
    user = Usage(300, 30) if user is None else user
    return EpisodeRecord(run_id="r", model=model, benchmark="vitabench", domain=domain,
                         task_id="t", trial=0, termination="user_stop", turns=turns,
                         tool_calls=tools, wall_s=wall, agent_usage=agent, user_usage=user)


def test_a_profile_exactly():
    g = _Group()
    g.records = [_rec(), _rec(turns=4, tools=3, wall=2.5, agent=Usage(3000, 300, 0, 30),
                              user=Usage(100, 10))]
    for latency in (0.0004, 0.01, 0.012, 5000.0):
        g.add_call(_Call(latency_s=latency, attempts=2))
    g.add_call(_Call(role="user", latency_s=0.5, statuses=[429, 200]))
    g.add_call(_Call(role="judge", latency_s=0.25,
                     stalls=_Stalls(hung=1, hedge_usage=Usage(1_000_000, 0))))
    g.add_call(_Call(role="user", stalls=_Stalls(hedged=1, hedge_usage=Usage(0, 1_000_000))))
    agent, user = Prices(input=2.0, cached_input=1.0, output=10.0), Prices(input=0.5, output=3.0)
    p = _profile(g, agent, user)
    agent_cost = ((800 * 2.0 + 200 * 1.0 + 100 * 10.0) + (3000 * 2.0 + 300 * 10.0)) / 1e6
    user_cost = ((300 * 0.5 + 30 * 3.0) + (100 * 0.5 + 10 * 3.0)) / 1e6
    assert p["cost"] == {"agent_per_episode": agent_cost / 2, "user_per_episode": user_cost / 2,
                         "per_episode": (agent_cost + user_cost) / 2,
                         "total": agent_cost + user_cost}
    assert p["episodes"] == 2
    assert p["turns"] == _dist([2, 4]) and p["tool_calls"] == _dist([1, 3])
    assert p["agent_tokens"] == {"prompt": 2000.0, "cached_prompt": 100.0, "completion": 200.0,
                                 "reasoning": 20.0}
    assert p["user_tokens"] == {"prompt": 200.0, "cached_prompt": 0.0, "completion": 20.0,
                                "reasoning": 0.0}
    assert p["wall_s"] == {**_dist([1.25, 2.5]), "total": 3.75}
    assert p["latency_s"] == {"agent": _dist([0.0004, 0.01, 0.012, 5000.0]),
                              "judge": _dist([0.25]), "user": _dist([0.5])}
    assert list(p["latency_s"]) == ["agent", "judge", "user"]
    # 0.4 ms counted in the first bin, 5000 s in the last; only the span that holds calls
    assert p["agent_latency_hist"]["edges"][:2] == [0.001, 0.001389]
    assert p["agent_latency_hist"]["edges"][-1] == 1000.0
    assert len(p["agent_latency_hist"]["edges"]) == len(LATENCY_BINS)
    counts = p["agent_latency_hist"]["counts"]
    assert (counts[0], counts[-1], sum(counts), len(counts)) == (1, 1, 4, 42)
    assert counts[7] == 2 and counts[1:7] == [0] * 6  # 10 and 12 ms: [10, 13.89) ms
    assert (p["model_calls"], p["retries"], p["rate_limited"]) == (6, 5, 1)
    assert p["stalls"] == {"hung": 1, "hedged": 1, "hedge_wins": 0,
                           "hedge_usage": {"prompt_tokens": 1_000_000,
                                           "completion_tokens": 1_000_000},
                           "hedge_cost": 2.0 + 3.0}
    assert p["replicas"] is None
    # without the user's prices: its calls' copies are not priced, its cost is None
    q = _profile(g, agent, None)
    assert q["cost"]["user_per_episode"] is None
    assert q["cost"]["per_episode"] == agent_cost / 2 and q["cost"]["total"] == agent_cost
    assert q["stalls"]["hedge_cost"] == 2.0
    assert _profile(g, None, user)["stalls"]["hedge_cost"] is None
    assert _profile(g, None, user)["cost"] is None


def test_a_histogram_holds_only_the_span_of_its_calls():
    g = _Group()
    g.records = [_rec()]
    for latency in (0.5, 0.9):
        g.add_timing(_Call(latency_s=latency))
    hist = _profile(g, None, None)["agent_latency_hist"]
    assert hist == {"edges": [0.3728, 0.5179, 0.7197, 1.0], "counts": [1, 0, 1]}


def test_a_profile_without_episodes_or_calls_says_so():
    p = _profile(_Group(), Prices(input=1.0), Prices(input=1.0))
    assert p == {"episodes": 0, "turns": None, "tool_calls": None, "agent_tokens": None,
                 "user_tokens": None, "cost": None, "wall_s": None, "latency_s": None,
                 "agent_latency_hist": None, "model_calls": 0, "retries": None,
                 "rate_limited": None, "stalls": None, "replicas": None}
    g = _Group()
    g.episodes = episodes_of([_rec(), _rec(turns=6)])  # columns given: read instead
    assert _profile(g, None, None)["turns"] == _dist([2, 6])


def test_profiles_are_sorted_by_model_and_domain_and_priced_by_their_models():
    groups = {}
    for model, domain in (("B", "z"), ("A", "y"), ("B", "a"), ("A", None), ("B", None)):
        g = groups[model, domain] = _Group()
        g.records = [_rec(model=model, domain=domain or "y")]
    out = _profiles(groups, {"A": {"input": 1.0}, "U": {"input": 2.0}}, "U")
    assert list(out) == ["A", "B"] and list(out["B"]["domains"]) == ["a", "z"]
    assert list(out["A"]["domains"]) == ["y"]
    assert out["A"]["cost"]["agent_per_episode"] == 800 / 1e6
    assert out["A"]["cost"]["user_per_episode"] == 300 * 2.0 / 1e6
    assert out["A"]["domains"]["y"]["cost"]["user_per_episode"] == 300 * 2.0 / 1e6
    assert out["B"]["cost"] is None and out["B"]["domains"]["z"]["cost"] is None
    # no user model ("" is none): the user's tokens are not priced, whatever the table holds
    empty = _profiles(groups, {"A": {"input": 1.0}, "": {"input": 2.0}}, "")["A"]
    assert empty["cost"]["user_per_episode"] is None
    assert _profiles(groups, {"A": {"input": 1.0}}, None)["A"]["cost"]["user_per_episode"] is None
    assert _profiles(groups, {"A": {"input": 1.0}}, "V")["A"]["cost"]["user_per_episode"] is None
    assert _profiles(groups, None, "U")["A"]["cost"] is None


def test_build_profiles_reads_payloads_as_bytes_text_or_objects_and_skips_the_malformed():
    records = [_rec(domain="d1"), _rec(domain="d2")]
    calls = [("A", "d1", b'{"latency_s": 1.0}'), ("A", "d2", '{"latency_s": 2.0}'),
             ("A", "d2", {"latency_s": 3.0, "role": "user"}), ("A", "d1", b"{not json"),
             ("A", "d1", {"latency_s": "slow"}), ("A", "d1", '{"attempts": [1]}')]
    out = build_profiles(records, calls)["A"]
    assert out["latency_s"] == {"agent": _dist([1.0, 2.0]), "user": _dist([3.0])}
    assert out["domains"]["d1"]["model_calls"] == 1 and out["domains"]["d2"]["model_calls"] == 2


def _row(endpoint, stalls, **kw):
    return ModelCallRow("ep", "", "r", endpoint, "agent", 0, 0, 0, None, None, None, stalls,
                        **kw)


def test_stall_table_counts_given_calls_or_the_calls_it_is_given():
    calls = [_row("a", '{"hung": 1}'), _row("a", None), _row(None, '{"hung": 5}'),
             _row("", '{"hedged": 5}'), _row("b", '{"hedged": 2, "hedge_won": true}'),
             _row("b", '{"hung": "x"}'), _row("c", "[1]"), _row("d", '{"hung": 0}'),
             _row("b", "{bad")]
    assert stall_table(calls) == {"a": {"calls": 2, "hung": 1, "hedged": 0, "hedge_wins": 0},
                                  "b": {"calls": 3, "hung": 0, "hedged": 2, "hedge_wins": 1}}
    assert stall_table(calls, {"a": 10, "b": 20, "z": 3}) == {
        "a": {"calls": 10, "hung": 1, "hedged": 0, "hedge_wins": 0},
        "b": {"calls": 20, "hung": 0, "hedged": 2, "hedge_wins": 1}}
    assert list(stall_table([_row("z", '{"hung": 1}'), _row("y", '{"hung": 1}')])) == ["y", "z"]


def test_stored_json_reads_text_or_bytes_and_none_when_unreadable():
    assert _stored_json(None) is None and _stored_json("{bad") is None
    assert _stored_json(b"[1, 2]") == [1, 2] and _stored_json("null") is None
    assert _stored_json('{"a": 1}') == {"a": 1}


def test_call_event_keeps_what_a_profile_reads():
    plain = ModelCallRow("ep", "", "r", "e", None, 10, 2, 3, 0.5, 2, "[429, true, 200.0, 200]",
                         "[1]", None, None)
    assert call_event(plain) == {"role": "agent", "latency_s": 0.5, "attempts": 2,
                                 "statuses": [429, 200]}
    odd = ModelCallRow("ep", "", "r", "e", "user", 10, 2, 3, None, None, '"200"',
                       '{"hung": 1}', None, '[{"replica": "x"}, 3, "y"]')
    assert call_event(odd) == {"role": "user", "latency_s": None, "attempts": None,
                               "statuses": None, "stalls": {"hung": 1}, "replica": None,
                               "prompt_tokens": 10, "cached_prompt_tokens": 3,
                               "failures": [{"replica": "x"}]}
    fleet = ModelCallRow("ep", "", "r", "e", "agent", 7, 0, 1, 1.0, None, None, None,
                         "http://a", '{"not": "a list"}')
    assert call_event(fleet) == {"role": "agent", "latency_s": 1.0, "attempts": None,
                                 "statuses": None, "replica": "http://a", "prompt_tokens": 7,
                                 "cached_prompt_tokens": 1, "failures": None}
    assert "replica" not in call_event(ModelCallRow("ep", "", "r", "e", "agent", 7, 0, 1, 1.0,
                                                    None, None, None, None, '{"x": 1}'))


def test_profile_run_takes_the_one_user_model_and_the_episodes_own_calls(tmp_path):
    with RunStore(tmp_path / "s.db") as s:
        s.begin_run("r", {})
        for trial, user in enumerate(("U", "U", None)):
            meta = EpisodeMeta(key=f"ep-{trial}", label=f"A|vitabench:d:en:t|{trial}",
                               model="A", benchmark="vitabench", domain="d", task_id="t",
                               lang="en", trial=trial, user_model=user)
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
            s.event(meta.key, 0, "model_call", {"role": "agent", "latency_s": 1.0 + trial},
                    run_id="r", endpoint="A")
            s.event(meta.key, 1, "model_call", {"role": "judge", "latency_s": 9.0},
                    journal="judge|J|m", run_id="r", endpoint="J")
            s.episode_finished(meta.key, rec("A", "d", trial, turns=3, wall=1.0,
                                             agent=Usage(1000, 0), user=Usage(1000, 0)))
        s.flush_sync()
        prof = profile_run(s, prices={"A": {"input": 1.0}, "U": {"input": 2.0}})["A"]
        assert prof["cost"]["user_per_episode"] == 1000 * 2.0 / 1e6
        assert prof["latency_s"] == {"agent": _dist([1.0, 2.0, 3.0])}
        other = profile_run(s, prices={"A": {"input": 1.0}, "V": {"input": 2.0}},
                            user_model="V")["A"]
        assert other["cost"]["user_per_episode"] == 1000 * 2.0 / 1e6
        s.begin_run("r2", {})
        meta = EpisodeMeta(key="ep-9", label="A|vitabench:d:en:t|9", model="A",
                           benchmark="vitabench", domain="d", task_id="t", lang="en", trial=9,
                           user_model="W")
        s.select("r2", [meta])
        s.episode_started(meta, run_id="r2")
        s.episode_finished(meta.key, rec("A", "d", 9, turns=3, wall=1.0, agent=Usage(1000, 0),
                                         user=Usage(1000, 0)))
        s.flush_sync()
        two = profile_run(s, prices={"A": {"input": 1.0}, "U": {"input": 2.0},
                                     "W": {"input": 2.0}})["A"]
        assert two["episodes"] == 4 and two["cost"]["user_per_episode"] is None
        assert profile_run(s, "r2", prices={"A": {"input": 1.0}, "W": {"input": 3.0}})["A"][
            "cost"]["user_per_episode"] == 1000 * 3.0 / 1e6


def test_a_profile_whose_calls_stalled_keeps_its_cost():
    """The losing copies' cost goes in ``stalls``; the episodes' cost stays the cost's."""
    records = [rec("A", "d", 0, turns=2, wall=1.0, agent=Usage(1_000_000, 0),
                   user=Usage(0, 0))]
    calls = [("A", "d", {"latency_s": 1.0,
                         "stalls": {"hedged": 1, "hedge_usage": {"prompt_tokens": 500_000}}})]
    p = build_profiles(records, calls, prices={"A": {"input": 2.0}})["A"]
    assert p["cost"] == {"agent_per_episode": 2.0, "user_per_episode": None,
                         "per_episode": 2.0, "total": 2.0}
    assert p["stalls"]["hedge_cost"] == 1.0
    assert p["domains"]["d"]["cost"] == p["cost"]
