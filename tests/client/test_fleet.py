"""One model, many ways in: config, identity, routing on real servers, losing a replica, keys."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import msgspec
import pytest

from sweepbench.client.fleet import Fleet, client_for
from sweepbench.client.facade import ModelClient
from sweepbench.client.limits import EndpointLimits, LimitsPool
from sweepbench.client.transports.memory import MemoryTransport, VirtualClock
from sweepbench.config import Endpoint, load_config
from sweepbench.devserver.server import ReferenceServer
from sweepbench.errors import ConfigError, EndpointUnavailableError
from sweepbench.runner.identity import endpoint_identity
from sweepbench.wire import AssistantMessage, ChatRequest, SystemMessage, UserMessage

MODEL = "bench/echo"


def scripted_models():
    """A resolver of one model that answers how many messages it was sent."""
    return lambda name: (lambda req: AssistantMessage(f"{len(req.messages)} messages")
                         ) if name == MODEL else None


def fleet_endpoint(urls: list[str], **kw) -> Endpoint:
    fields = {"max_retries": 2, "breaker_cooldown_s": 0.2, "connect_timeout_s": 2.0,
              "timeout_s": 10.0, "hedge": False, **kw}
    return Endpoint(name="m", model=MODEL, base_urls=urls, **fields)


def request(n: int, tag: str = "") -> ChatRequest:
    msgs = [SystemMessage("You are a helpful agent. " * 20)]
    msgs += [UserMessage(f"{tag} turn {i}") for i in range(n)]
    return ChatRequest(model=MODEL, messages=msgs)


# -- config and identity ------------------------------------------------------------------


def test_an_endpoint_lists_replicas_and_keys_as_ways_in():
    ep = Endpoint(name="m", base_url="http://a:1/v1", base_urls=["http://b:1/v1"],
                  api_key_env="K1", api_key_envs=["K2"]).validate()
    assert [(w.base_url, w.api_key_env) for w in ep.ways()] == [
        ("http://a:1/v1", "K1"), ("http://a:1/v1", "K2"),
        ("http://b:1/v1", "K1"), ("http://b:1/v1", "K2")]
    assert all(not w.base_urls and not w.api_key_envs for w in ep.ways())
    plain = Endpoint(name="m", base_url="http://a:1/v1")
    assert plain.ways() == [plain]


def test_replicas_and_keys_do_not_change_what_the_model_is():
    one = Endpoint(name="m", base_url="http://a:1/v1/", model="x", api_key_env="K1")
    many = Endpoint(name="m2", base_url="http://a:1/v1", model="x", api_key_env="K1",
                    base_urls=["http://b:1/v1"], api_key_envs=["K2", "K3"],
                    routing="round_robin", load_factor=1.5)
    only_list = Endpoint(name="m3", base_urls=["http://a:1/v1", "http://b:1/v1"], model="x")
    # exactly what one base URL and one key always gave: stored episodes are reused
    assert endpoint_identity(one) == {"model": "x", "base_url": "http://a:1/v1"}
    assert endpoint_identity(many) == endpoint_identity(one) == endpoint_identity(only_list)


@pytest.mark.parametrize("fields, words", [
    ({"base_url": "http://a/v1", "base_urls": ["http://a/v1/"]}, "repeated"),
    ({"base_urls": ["http://a/v1", ""]}, "empty or repeated"),
    ({"base_urls": ["ftp://a/v1"]}, "base_urls 'ftp://a/v1' is not an http"),
    ({"api_key_env": "K", "api_key_envs": ["K"]}, "api_key_envs lists"),
    ({"routing": "random"}, "routing must be affinity or round_robin"),
    ({"load_factor": 0.9}, "load_factor must be >= 1"),
])
def test_bad_replica_and_key_lists_are_one_line_config_errors(fields, words):
    with pytest.raises(ConfigError, match=words):
        load_config(None, {"endpoints": [{"name": "m", **fields}], "models": ["m"]})


def test_a_scripted_model_with_replicas_is_not_sent_to_the_built_in_server():
    cfg = load_config(None, {"endpoints": [{"name": "scripted/echo",
                                            "base_urls": ["http://127.0.0.1:9/v1"]}]})
    assert cfg.endpoint("scripted/echo", "http://ref/v1").urls == ["http://127.0.0.1:9/v1"]


def test_one_way_in_is_a_plain_client_and_more_a_fleet():
    pool = LimitsPool()
    assert type(client_for(Endpoint(name="m", base_url="http://a:1/v1"), limits=pool)) is \
        ModelClient
    pool = LimitsPool()
    fleet = client_for(fleet_endpoint(["http://a:1/v1", "http://b:1/v1"]), limits=pool)
    assert isinstance(fleet, Fleet) and len(pool) == 2  # each way its own limits
    assert fleet.labels == ["http://a:1/v1", "http://b:1/v1"]


# -- on real servers ------------------------------------------------------------------------


@asynccontextmanager
async def fleet_on(n: int, server: dict | None = None, **endpoint) -> AsyncIterator[
        tuple[Fleet, list[ReferenceServer]]]:
    """A fleet over ``n`` reference servers (each with ``server`` options); all closed after."""
    reps = [ReferenceServer(scripted_models(), **(server or {})) for _ in range(n)]
    fleet = None
    try:
        for s in reps:
            await s.start()
        fleet = Fleet(fleet_endpoint([s.url for s in reps], **endpoint))
        yield fleet, reps
    finally:
        if fleet is not None:
            await fleet.aclose()
        for s in reps:
            await s.stop()


async def test_an_episode_and_the_trials_of_its_task_stay_on_one_replica():
    async with fleet_on(2) as (fleet, reps):
        for trial in range(3):
            convo = fleet.conversation("task-7")
            for n in range(1, 4):
                result = await convo(request(n, f"trial {trial}"))
        home = fleet.router.ranking("task-7")[0]
        assert [s.stats()["answered"].get(MODEL, 0) for s in reps] == (
            [9, 0] if home == 0 else [0, 9])
        assert result.replica == reps[home].url and result.usage.cached_prompt_tokens > 0


async def test_round_robin_alternates_replicas_request_by_request():
    async with fleet_on(2, routing="round_robin") as (fleet, reps):
        convo = fleet.conversation("task-7")
        got = [(await convo(request(n))).replica for n in range(1, 5)]
        assert got == [reps[0].url, reps[1].url] * 2


async def test_a_replica_that_goes_down_is_drained_and_taken_back_when_it_returns():
    async with fleet_on(2) as (fleet, reps):
        convo = fleet.conversation("task-1")
        first = await convo(request(1))
        home = next(i for i, s in enumerate(reps) if s.url == first.replica)
        port, url = reps[home].port, reps[home].url
        await reps[home].stop()
        second = await convo(request(2))  # the conversation continues on the other
        assert second.replica == reps[1 - home].url
        assert second.failures and all(f.replica == url for f in second.failures)
        assert fleet.router.ways[home].drained and fleet.health()["breaker"] == "closed"
        reps[home] = ReferenceServer(scripted_models(), port=port)
        await reps[home].start()
        await asyncio.sleep(0.25)  # its cool-down: the next call probes it
        third = await fleet.complete(request(3))
        assert third.replica == url and not fleet.router.ways[home].drained
        assert fleet.router.readmitted == 1


async def test_with_every_replica_down_a_call_fails_once_its_wait_is_spent():
    async with fleet_on(2, max_retries=20, breaker_max_wait_s=0.3) as (fleet, reps):
        await fleet.complete(request(1))
        for s in reps:
            await s.stop()
        with pytest.raises(EndpointUnavailableError, match="every replica and key is down"):
            await fleet.complete(request(2))
        assert fleet.health()["breaker"] == "open"


async def test_with_every_replica_down_the_live_log_says_when_the_next_probe_comes():
    import io

    from rich.console import Console

    from sweepbench.runner.progress import ProgressDisplay

    async with fleet_on(2, max_retries=20, breaker_cooldown_s=30.0,
                        breaker_max_wait_s=0.05) as (fleet, reps):
        assert "probe_in_s" not in fleet.health()  # all up: nothing to wait for
        await fleet.complete(request(1))
        for s in reps:
            await s.stop()
        with pytest.raises(EndpointUnavailableError):
            await fleet.complete(request(2))
        health = fleet.health()
        assert health["breaker"] == "open" and 29 < health["probe_in_s"] <= 30
        assert health["max_wait_s"] == 0.05 and 0 <= health["gives_up_in_s"] <= 0.05
        assert 0 <= health["open_for_s"] < 5
        display = ProgressDisplay(Console(file=io.StringIO(), width=400), enabled=False)
        display.update("clients", clients={"m": fleet})
        said = display._trouble("m", None)
        assert said.startswith("breaker open for 0s, waiting for the endpoint to answer a "
                               "probe (next probe in 30s); waiting calls fail after 0s")


async def test_keys_are_spread_and_each_is_limited_on_its_own(monkeypatch):
    for k in ("FK1", "FK2", "FK3"):
        monkeypatch.setenv(k, f"secret-{k}")
    async with fleet_on(1, server={"rpm_limit": 4}) as (_, (ref,)):
        ep = Endpoint(name="m", model=MODEL, base_url=ref.url, api_key_env="FK1",
                      api_key_envs=["FK2", "FK3"], rpm=4, hedge=False)
        async with Fleet(ep) as fleet:
            results = await asyncio.gather(*(fleet.complete(request(n)) for n in range(1, 13)))
        # 12 calls at once, 4 per key: each key's server-side limit is 4 a minute
        assert sorted(r.replica for r in results) == sorted(
            ["key FK1", "key FK2", "key FK3"] * 4)
        assert ref.stats()["limited"] == {} and all(r.attempts == 1 for r in results)


async def test_a_cached_answer_is_found_whichever_replica_a_call_goes_to(tmp_path):
    from sweepbench.client.cache import ResponseCache

    cache = ResponseCache(tmp_path / "cache.sqlite")
    async with fleet_on(2, routing="round_robin") as (_, reps):
        fleet = Fleet(fleet_endpoint([s.url for s in reps], routing="round_robin"), cache=cache)
        first = await fleet.complete(request(2))
        again = await fleet.complete(request(2))  # round robin: the other replica's turn
        await fleet.aclose()
    assert not first.from_cache and again.from_cache
    assert again.message == first.message and cache.hits == 1
    assert sum(sum(s.answered.values()) for s in reps) == 1
    cache.close()


async def test_a_5xx_sends_the_call_elsewhere_without_draining_the_replica():
    bad = ReferenceServer(scripted_models(), faults="500=1.0")
    async with bad, fleet_on(1) as (_, (good,)):
        urls = [bad.url, good.url]
        fleet = Fleet(fleet_endpoint(urls))  # no task: the least loaded, the first
        result = await fleet.complete(request(1))
        await fleet.aclose()
    assert result.replica == urls[1] and result.attempts == 4  # 3 on the bad one, 1 good
    assert [f.status for f in result.failures] == [500, 500, 500]
    assert all(f.replica == urls[0] for f in result.failures)
    assert not fleet.router.ways[0].drained and fleet.router.ways[0].failed == 1


# -- unit tests on in-memory members (exact values) -----------------------------------------


def memory_fleet(*scripts, member_retries: int = 0, **kw) -> tuple[Fleet, VirtualClock]:
    """A fleet of two replicas whose members answer from ``scripts`` (one per way), on a
    virtual clock; each member makes ``member_retries + 1`` requests per call at most."""
    clock = VirtualClock()
    ep = Endpoint(name="m", model="x", base_urls=["http://a.invalid/v1", "http://b.invalid/v1"],
                  **{"max_retries": 2, "hedge": False, **kw})
    members = []
    for way, script in zip(ep.ways(), scripts, strict=True):
        way = msgspec.structs.replace(way, max_retries=member_retries)
        members.append(ModelClient(way, transport=MemoryTransport(*script, clock=clock),
                                   limits=EndpointLimits.for_endpoint(way, clock=clock)))
    return Fleet(ep, members=members), clock


def hi() -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage("hi")])


async def test_the_requests_of_the_ways_tried_first_are_carried_on_the_answer():
    from .rig import OK, status

    fleet, _ = memory_fleet([status(500, "melting")], [OK])
    result = await fleet.complete(hi())
    assert (result.replica, result.statuses, result.attempts, result.rate_limited) == (
        "http://b.invalid/v1", [500, 200], 2, 0)
    assert [(f.replica, f.status, f.message) for f in result.failures] == [
        ("http://a.invalid/v1", 500, "HTTP 500: melting")]
    fleet, _ = memory_fleet([status(429, "slow")], [OK])
    result = await fleet.complete(hi())
    assert (result.statuses, result.attempts, result.rate_limited) == ([429, 200], 2, 1)


async def test_a_call_failing_on_every_way_carries_every_request():
    from sweepbench.errors import RateLimitError

    from .rig import status

    fleet, _ = memory_fleet([status(429, "slow")], [status(429, "slow")])
    with pytest.raises(RateLimitError) as info:
        await fleet.complete(hi())
    err = info.value  # max_retries 2: three ways tried in all, the first one twice
    assert (err.statuses, err.attempts) == ([429, 429, 429], 3)
    assert [f.replica for f in err.failures] == ["http://a.invalid/v1", "http://b.invalid/v1",
                                                 "http://a.invalid/v1"]
    assert fleet.replicas() == [
        {"replica": "http://a.invalid/v1", "in_flight": 0, "calls": 2, "failed": 2, "drained": False},
        {"replica": "http://b.invalid/v1", "in_flight": 0, "calls": 1, "failed": 1, "drained": False}]


async def test_with_every_way_down_the_fleet_says_so_and_counts_only_the_requests_sent():
    from sweepbench.errors import TransportError

    down = TransportError("m: connection reset", endpoint="m")
    fleet, clock = memory_fleet([down], [down], breaker_cooldown_s=5.0, breaker_max_wait_s=3.0)
    with pytest.raises(EndpointUnavailableError) as info:
        await fleet.complete(hi())
    assert str(info.value) == ("m: every replica and key is down (waited 0.0s); last: m: "
                               "connection reset")
    assert info.value.attempts == 2 and len(info.value.failures) == 2  # two requests, no third
    clock.advance(1.0)
    health = fleet.health()
    assert {k: v for k, v in health.items() if k != "replicas"} == {
        "breaker": "open", "failing": 1, "last_failure": "connection reset", "since_ok_s": None,
        "open_for_s": 1.0, "probe_in_s": 4.0, "max_wait_s": 3.0, "gives_up_in_s": 2.0}


def test_a_way_is_named_by_what_tells_it_apart():
    from sweepbench.client.fleet import way_label

    both = Endpoint(name="m", model="x", base_urls=["http://a/v1", "http://b/v1/"],
                    api_key_env="K1", api_key_envs=["K2"])
    assert [way_label(both, w) for w in both.ways()] == [
        "http://a/v1 key K1", "http://a/v1 key K2", "http://b/v1 key K1", "http://b/v1 key K2"]
    keys = Endpoint(name="m", model="x", base_url="http://a/v1/", api_key_env="K1",
                    api_key_envs=["K2"])
    assert [way_label(keys, w) for w in keys.ways()] == ["key K1", "key K2"]
    one = Endpoint(name="m", model="x", base_url="http://a/v1/")
    assert [way_label(one, w) for w in one.ways()] == ["http://a/v1/"]


async def test_an_answer_counts_its_own_ways_requests_and_its_time():
    from sweepbench.client.transports.memory import Answer

    from .rig import status

    fleet, clock = memory_fleet([status(429, "slow")], [status(429, "busy"), Answer(delay_s=2.0)],
                                member_retries=1)
    result = await fleet.complete(hi())  # a: 429 twice; b: 429, then an answer after 2 s
    assert (result.replica, result.statuses, result.rate_limited) == (
        "http://b.invalid/v1", [429, 429, 429, 200], 3)
    assert [f.replica for f in result.failures] == ["http://a.invalid/v1"] * 2 + [
        "http://b.invalid/v1"]
    assert result.wall_s == clock.now() - 1000.0 and result.wall_s >= 2.0
    assert fleet.health()["since_ok_s"] == 0.0


async def test_a_conversation_stays_on_the_replica_it_used_last():
    from .rig import OK

    fleet, _ = memory_fleet([OK], [OK])
    convo = fleet.conversation("task-1")
    away = 1 - fleet.router.ranking("task-1")[0]
    convo.replica = away  # as if its last call had gone there
    result = await convo(hi())
    assert result.replica == fleet.labels[away] and convo.replica == away


async def test_a_cancelled_call_frees_its_way_without_draining_it():
    from sweepbench.client.transports.memory import Answer

    fleet, _ = memory_fleet([Answer(delay_s=5.0)], [Answer(delay_s=5.0)])
    call = asyncio.ensure_future(fleet.complete(hi()))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert [(r["in_flight"], r["calls"], r["failed"], r["drained"]) for r in fleet.replicas()] == [
        (0, 1, 1, False), (0, 0, 0, False)]


async def test_with_every_way_down_a_call_waits_for_the_probe_up_to_the_limit_exactly():
    from sweepbench.errors import TransportError

    from .rig import OK

    for limit in (5.0, None):  # the probe is due after exactly the limit: it is waited for
        fleet, clock = memory_fleet([TransportError("m: reset a", endpoint="m"), OK],
                                    [TransportError("m: reset b", endpoint="m"), OK],
                                    breaker_cooldown_s=5.0, breaker_max_wait_s=limit)
        result = await fleet.complete(hi())
        assert result.statuses == [0, 0, 200] and clock.now() == 1005.0
        assert fleet.health()["breaker"] == "closed"
    fleet, clock = memory_fleet([TransportError("m: reset a", endpoint="m")],
                                [TransportError("m: reset b", endpoint="m")],
                                breaker_cooldown_s=5.0, breaker_max_wait_s=None)
    with pytest.raises(TransportError):
        await fleet.complete(hi())  # two ways tried, then the probe of the first fails too
    health = fleet.health()
    assert (health["breaker"], health["max_wait_s"], health["gives_up_in_s"]) == (
        "open", None, None)  # waiting calls never give up
    fleet, clock = memory_fleet([TransportError("m: reset a", endpoint="m")],
                                [TransportError("m: reset b", endpoint="m")],
                                breaker_cooldown_s=5.0, breaker_max_wait_s=1.0)
    with pytest.raises(EndpointUnavailableError) as info:
        await fleet.complete(hi())
    assert str(info.value).endswith("; last: m: reset b") and info.value.endpoint == "m"
    assert fleet.health()["gives_up_in_s"] == 1.0
    with pytest.raises(EndpointUnavailableError) as info:
        await fleet.complete(hi())  # every way drained before it starts: nothing tried
    assert str(info.value) == "m: every replica and key is down (waited 0.0s)"
    assert info.value.attempts == 0


def test_members_fail_fast_and_retry_little_and_the_router_takes_the_endpoints_settings():
    ep = fleet_endpoint(["http://a:1/v1", "http://b:1/v1"], max_retries=5, load_factor=1.5,
                        breaker_max_wait_s=30.0)
    fleet = Fleet(ep)
    assert [(m.endpoint.breaker_max_wait_s, m.endpoint.max_retries) for m in fleet.members] == [
        (0.0, 2), (0.0, 2)]
    assert (fleet.router.load_factor, fleet.router.cooldown_s) == (1.5, 0.2)


def test_client_for_passes_its_limits_and_cache_on(tmp_path):
    from sweepbench.client.cache import ResponseCache

    cache = ResponseCache(tmp_path / "c.sqlite")
    pool = LimitsPool()
    one = client_for(Endpoint(name="m", base_url="http://a:1/v1"), limits=pool, cache=cache)
    assert one.cache is cache and one.limits is pool.get("http://a:1/v1||m", None)
    fleet = client_for(fleet_endpoint(["http://a:1/v1", "http://b:1/v1"]), limits=pool,
                       cache=cache)
    assert all(m.cache is cache for m in fleet.members) and len(pool) == 3
    cache.close()


def test_a_replica_url_is_named_without_its_trailing_slash_only():
    from sweepbench.client.fleet import way_label

    ep = Endpoint(name="m", model="x", base_urls=["http://a/X/", "http://b/vX"])
    assert [way_label(ep, w) for w in ep.ways()] == ["http://a/X", "http://b/vX"]


async def test_giving_up_names_the_last_failure_of_all_the_ways_tried():
    from sweepbench.errors import TransportError

    from .rig import status

    # a answers 500 (not down: tried again later), b is down, a is then down too
    fleet, _ = memory_fleet([status(500, "melting"), TransportError("m: reset a", endpoint="m")],
                            [TransportError("m: reset b", endpoint="m")],
                            max_retries=3, breaker_cooldown_s=5.0, breaker_max_wait_s=1.0)
    with pytest.raises(EndpointUnavailableError) as info:
        await fleet.complete(hi())
    assert str(info.value) == ("m: every replica and key is down (waited 0.0s); last: m: "
                               "reset a")
    assert (info.value.attempts, info.value.statuses) == (3, [500, 0, 0])
