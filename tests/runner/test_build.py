"""From config to what a sweep talks to, by hand: the judges and their keys, each benchmark's
headline, the endpoints and prices of a sweep, the reference server's settings, the cache,
and the clients a sweep's resources open and close."""

from __future__ import annotations

import sqlite3

import pytest

from sweepbench.client.cache import ResponseCache
from sweepbench.client.facade import limits_key
from sweepbench.config import load_config
from sweepbench.ids import content_hash
from sweepbench.results.profile import Prices
from sweepbench.runner import build
from sweepbench.runner.identity import EpisodeIdentity
from sweepbench.runner.judge_pool import STATE, JudgeSpec


def _cfg(**kw):
    return load_config(None, {"models": ["scripted/oracle"], **kw})


def test_judge_specs_are_the_state_check_then_each_judge_and_method_keyed():
    cfg = _cfg(judge_models=["scripted/j1", "scripted/j2"], judge_methods=["sliding", "likert"])
    ident = EpisodeIdentity(cfg, None)
    want = [STATE] + [JudgeSpec(m, meth, content_hash({"judge": ident.endpoint(m),
                                                       "method": meth})[:16])
                      for m in ("scripted/j1", "scripted/j2") for meth in ("sliding", "likert")]
    got = build.judge_specs(cfg)
    assert got == want and len({s.key for s in got}) == 5 and len(got[1].key) == 16
    assert build.judge_specs(_cfg()) == [STATE]


def test_endpoint_names_of_a_sweep_and_of_judging_alone():
    cfg = _cfg(models=["scripted/oracle", "scripted/noisy:0.3"], user_model="scripted/user",
               judge_models=["scripted/j"])
    assert build.endpoint_names(cfg) == {"scripted/oracle", "scripted/noisy:0.3",
                                         "scripted/user", "scripted/j"}
    assert build.endpoint_names(cfg, episodes=False) == {"scripted/j"}


def test_endpoint_prices_leave_out_the_unpriced():
    cfg = load_config(None, {"models": ["a", "b"], "endpoints": [
        {"name": "a", "base_url": "http://h", "price_input_per_mtok": 2.0,
         "price_cached_input_per_mtok": 0.5, "price_output_per_mtok": 8.0},
        {"name": "b", "base_url": "http://h", "unpriced": True}]})
    assert build.endpoint_prices(cfg, {"a", "b", "scripted/user"}) == {
        "a": Prices(input=2.0, cached_input=0.5, output=8.0), "scripted/user": Prices()}
    assert list(build.endpoint_prices(cfg, {"scripted/user", "a"})) == ["a", "scripted/user"]


def test_reference_server_takes_the_configs_settings():
    cfg = _cfg(reference_latency_s=0.25, reference_faults="500=0.1", reference_seed=7,
               reference_rpm=100, reference_tpm=5000, reference_outage=[1.0, 2.0],
               reference_cache_entries=0)
    server = build.reference_server(cfg, hang_s=3.0)
    assert (server.latency_s, server.seed, server.rpm_limit, server.tpm_limit) == (
        0.25, 7, 100, 5000)
    assert server.fault_spec.rates == (("500", 0.1),) and server.outage == (1.0, 2.0)
    assert server._cache is None and server.hang_s == 3.0
    assert callable(server._resolve)  # the scripted models it answers
    assert server.latency_spec.kind == "fixed"
    spread = build.reference_server(_cfg(reference_latency="lognormal:median=0.2,sigma=0.5",
                                         reference_cache_entries=5))
    assert spread.latency_spec.kind == "lognormal" and spread._cache.max_entries == 5


def test_open_cache_only_when_configured(tmp_path):
    assert build.open_cache(_cfg(), tmp_path / "s.sqlite") is None
    cache = build.open_cache(_cfg(response_cache=str(tmp_path / "c.sqlite")), tmp_path / "s")
    try:
        assert isinstance(cache, ResponseCache) and cache.path == tmp_path / "c.sqlite"
    finally:
        cache.close()
    same = tmp_path / "same.sqlite"
    same.touch()
    with pytest.raises(Exception, match="response cache"):
        build.open_cache(_cfg(response_cache=str(same)), same)


async def test_sweep_resources_open_a_client_per_name_and_close_everything(tmp_path):
    cfg = _cfg()
    cache = ResponseCache(tmp_path / "c.sqlite")
    async with build.SweepResources(cfg, {"scripted/oracle", "scripted/user"},
                                    cache=cache) as res:
        assert sorted(res.clients) == ["scripted/oracle", "scripted/user"]
        assert res.reference is not None and res.reference.url.startswith("http://127.0.0.1:")
        assert res.cache is cache and res.limits is not None
        clients = list(res.clients.values())
        assert {c.endpoint.base_url for c in clients} == {res.reference.url}
        assert all(c.limits is res.limits.get(limits_key(c.endpoint), c.endpoint)
                   for c in clients)  # from the pool given
        assert all(c.cache is cache for c in clients)
        assert not any(c._closed for c in clients)
    assert all(c._closed for c in clients)
    with pytest.raises(sqlite3.ProgrammingError):
        cache._db.execute("SELECT 1")  # closed on exit
    limits = object()
    plain = build.SweepResources(load_config(None, {"models": ["a"], "endpoints": [
        {"name": "a", "base_url": "http://127.0.0.1:9/v1"}]}), {"a"}, limits=limits)
    assert plain.limits is limits and plain.cache is None
    with pytest.raises(AttributeError):
        async with plain:  # a limits pool that is none: opening fails, nothing is left open
            pass
    assert plain.reference is None
