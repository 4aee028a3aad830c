"""Tokens, cost, latency and retries per model and domain."""

from __future__ import annotations

import numpy as np
import pytest

from sweepbench.config import Endpoint
from sweepbench.results.profile import (
    Prices,
    as_prices,
    build_profiles,
    profile_run,
    usage_cost,
)
from sweepbench.results.report import build_report
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
    calls += [("A", "ota", b'{"role":"agent","latency_s":1.0,"attempts":3,'
                           b'"statuses":[429,429,200],"message":{"content":"hi"}}'),
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
