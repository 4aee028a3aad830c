"""Ramp-down backups (issue 12): in a sweep's ramp-down a request also goes out as copies on
the sweep's idle slots; the first copy's answer is preferred, a backup's is used when the
first copy fails or is late. Servers are real aiohttp servers on loopback, scripted per
arrival so that which copy fails or answers first is known."""

from __future__ import annotations

import asyncio
import json

import msgspec
import pytest
from aiohttp import web

from sweepbench.config import Endpoint, load_config
from sweepbench.errors import ConfigError
from sweepbench.results.report import build_report
from sweepbench.store.runstore import RunStore
from sweepbench.client.facade import ModelClient
from sweepbench.client.hedging import IdleSlots
from sweepbench.client.results import CallResult
from sweepbench.client.stalls import MIN_SAMPLES, first_byte
from sweepbench.runner.identity import endpoint_identity
from sweepbench.client.limits import EndpointLimits
from sweepbench.client.outcomes import FAILED, LIMITED
from sweepbench.runner.sweep import Sweep
from sweepbench.client.transports.memory import MemoryTransport, completion
from sweepbench.wire import ChatRequest, UserMessage

from ..support import FakeClock, serve, without_backups


def reply(text: str) -> bytes:
    return msgspec.json.encode(completion(text, usage={"prompt_tokens": 5, "completion_tokens": 1,
                                                       "total_tokens": 6}))


def req(text: str = "hi") -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage(text)])


class ByArrival:
    """The n-th request (from 0) gets ``script[n]``: (seconds to wait, status, text);
    arrivals past the script answer 200 "late" at once."""

    def __init__(self, *script: tuple[float, int, str]) -> None:
        self.script = list(script)
        self.arrivals = 0

    async def handle(self, request: web.Request) -> web.Response:
        await request.read()
        n, self.arrivals = self.arrivals, self.arrivals + 1
        wait, status, text = self.script[n] if n < len(self.script) else (0.0, 200, "late")
        await asyncio.sleep(wait)
        if status != 200:
            return web.json_response({"error": {"message": text}}, status=status)
        return web.Response(body=reply(text), content_type="application/json")


def without_profiles(value):
    """A report without its timing and request statistics (which differ by nature)."""
    if isinstance(value, dict):
        return {k: without_profiles(v) for k, v in value.items() if k != "profile"}
    if isinstance(value, list):
        return [without_profiles(v) for v in value]
    return value


def lately_failed(client: ModelClient, latency_s: float = 0.3) -> None:
    """One failed answer in the endpoint's recent window (backups go only after faults), and
    the endpoint's latency known (backups go only once there is a hedge delay to hold them
    to): ``latency_s`` for every sample, so the hedge delay is 1.5 x it."""
    client.limits.outcomes.add(FAILED)
    for _ in range(MIN_SAMPLES):
        client.stalls.latency.add(latency_s)


def endpoint(url: str, **options) -> Endpoint:
    """The local test server stands in for a hosted API (a loopback address would make it
    self-hosted, and not hedged)."""
    return Endpoint(name="ep", base_url=url, max_retries=2, kind="hosted", **options)


async def one_call(server: ByArrival, *, idle: int = 1, backoff_base_s: float = 0.5,
                   **options) -> tuple[CallResult, IdleSlots]:
    """One call to ``server`` from a client with ``idle`` idle slots to lend, its endpoint
    primed and lately failed (``lately_failed``): the result and the slots."""
    async with serve(server.handle) as url, ModelClient(
            endpoint(url, **options), backoff_base_s=backoff_base_s) as c:
        c.spare = IdleSlots(idle=idle)
        lately_failed(c)
        return await c.complete(req()), c.spare


async def test_a_failed_first_copy_is_answered_by_its_backup_without_a_retry():
    server = ByArrival((0.1, 500, "boom"), (0.0, 200, "backup"))
    result, spare = await one_call(server, backoff_base_s=0.2)
    assert spare.lent == 0 and spare.sent == 1  # the slot was given back
    assert result.message.content == "backup"
    assert server.arrivals == 2  # the first copy and one backup: no retry was needed
    assert result.hedged == 1 and result.hedge_won
    assert result.backoff_s == 0.0 and result.attempts == 1
    assert [f.status for f in result.failures] == [500]  # the first copy's failure is kept


async def test_the_first_copy_answer_is_kept_even_when_a_backup_answered_sooner():
    """No answer is chosen for being fast: a backup's is held until the first copy fails."""
    server = ByArrival((0.15, 200, "first"), (0.0, 200, "backup"))
    result, _ = await one_call(server)
    assert result.message.content == "first"
    assert server.arrivals == 2 and result.hedged == 1 and not result.hedge_won
    # the losing backup answered (a first byte), so it counts as billed
    assert result.hedge_usage is not None and result.hedge_usage.prompt_tokens == 5


async def test_when_every_copy_fails_the_call_is_retried_as_usual():
    server = ByArrival((0.05, 500, "a"), (0.0, 503, "b"), (0.0, 200, "retried"))
    result, _ = await one_call(server, backoff_base_s=0.01)
    assert result.message.content in ("retried", "late")  # the retry (maybe with its backup)
    assert result.attempts == 2 and result.statuses[-1] == 200


async def test_no_idle_slot_no_backup_and_one_slot_is_shared_by_all_calls():
    server = ByArrival(*[(0.05, 200, f"r{i}") for i in range(8)])
    async with serve(server.handle) as url, ModelClient(endpoint(url)) as c:
        c.spare = IdleSlots(idle=0)
        lately_failed(c)
        await c.complete(req("a"))
        assert server.arrivals == 1 and c.spare.sent == 0
        c.spare.idle = 1  # one idle slot: at most one backup in flight, whatever the calls
        results = await asyncio.gather(*(c.complete(req(str(i))) for i in range(3)))
    assert sum(r.hedged for r in results) == 1 and c.spare.sent == 1 and c.spare.lent == 0


async def test_an_endpoint_that_has_not_failed_lately_gets_no_backups():
    server = ByArrival((0.05, 200, "a"), (0.05, 500, "b"), (0.02, 200, "c"))
    async with serve(server.handle) as url, ModelClient(endpoint(url),
                                                        backoff_base_s=0.01) as c:
        c.spare = IdleSlots(idle=4)
        for _ in range(MIN_SAMPLES):
            c.stalls.latency.add(0.3)  # the latency is known; only a fault is missing
        assert (await c.complete(req("1"))).hedged == 0  # nothing failed yet: no copy
        assert server.arrivals == 1
        second = await c.complete(req("2"))  # its first attempt goes alone and fails
        # its retry goes with two backups, a failure being in the window now; the retry's own
        # answer is the one used
        assert second.attempts == 2 and second.hedged == 2 and c.spare.sent == 2
        assert server.arrivals == 5 and second.message.content == "c"


async def test_an_endpoint_at_its_rate_limit_gets_no_backups():
    server = ByArrival((0.02, 200, "a"))
    async with serve(server.handle) as url, ModelClient(endpoint(url)) as c:
        c.spare = IdleSlots(idle=4)
        for _ in range(4):  # 429s clustering: a real limit is being hit
            c.limits.outcomes.add(LIMITED)
        result = await c.complete(req())
    assert result.hedged == 0 and server.arrivals == 1 and c.spare.sent == 0


async def test_backups_follow_the_hedge_switch_and_their_own_setting():
    for options in ({"hedge": False}, {"backups": 0}):
        server = ByArrival((0.05, 500, "boom"), (0.0, 200, "x"), (0.0, 200, "y"))
        result, spare = await one_call(server, idle=4, backoff_base_s=0.01, **options)
        assert spare.sent == 0 and result.attempts == 2, options  # a plain retry


async def test_a_backup_never_waits_for_the_limits_it_uses_room_that_is_free_now():
    clock = FakeClock()
    limits = EndpointLimits(max_concurrency=2, rpm=60, headroom=1.0, burst_s=1.0, clock=clock)
    first = limits.try_permit(10)
    assert first is not None and limits.requests.level < 1  # the RPM bucket's one token taken
    assert limits.try_permit(10) is None  # the bucket is empty: it would wait
    clock.t += 1.0
    second = limits.try_permit(10)
    assert second is not None
    assert limits.try_permit(10) is None  # both slots are taken
    limits.concurrency.release()
    clock.t += 1.0
    limits.pause(5.0)
    assert limits.try_permit(10) is None  # a Retry-After holds every request
    clock.t += 6.0
    assert limits.try_permit(10) is not None


def test_a_backup_leaves_half_of_each_bucket_for_first_copies():
    clock = FakeClock()
    limits = EndpointLimits(max_concurrency=8, rpm=120, tpm=10**6, headroom=1.0, burst_s=1.0,
                            clock=clock)  # 2 requests a second, 2 banked
    assert limits.try_permit(10, keep=0.5) is not None  # 2 -> 1: half is left
    assert limits.try_permit(10, keep=0.5) is None  # 1 -> 0 would spend the bank
    assert limits.try_permit(10) is not None  # what a request that must go may take


def test_backups_are_not_part_of_an_episode_identity():
    ep = Endpoint(name="m", base_url="http://h/v1", temperature=0.5)
    changed = msgspec.structs.replace(ep, backups=0)
    assert endpoint_identity(changed) == endpoint_identity(ep)
    assert endpoint_identity(msgspec.structs.replace(ep, temperature=0.7)) != endpoint_identity(ep)


def test_backups_is_validated():
    with pytest.raises(ConfigError, match="backups"):
        Endpoint(name="x", base_url="http://h", backups=-1).validate()
    with pytest.raises(ConfigError, match="backups"):
        Endpoint(name="x", base_url="http://h", backups=9).validate()


async def test_a_sweep_with_idle_slots_sends_backups_and_gets_the_same_results(tmp_path):
    """Fewer episodes than slots: the whole sweep is a ramp-down. With 500s injected, the
    backups answer for failed first copies, and every trajectory and metric is the one a
    sweep without backups gets; without faults no backup is sent."""
    base = {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle",
            "scripted/noisy:0.3"], "trials": 1, "max_concurrency": 64,
            "reference_latency": "uniform:0.005,0.02", "reference_faults": "500=0.2",
            "judge_models": []}
    out = {}
    for name, extra in (("backups", {}), ("none", {"endpoints": without_backups(
            "scripted/oracle", "scripted/noisy:0.3", "scripted/user")}),
            ("clean", {"reference_faults": None})):
        with RunStore(tmp_path / f"{name}.sqlite") as store:
            sweep = Sweep(load_config(None, {**base, **extra}), store)
            outcome = await sweep.run()
            calls = store.model_calls(set(store.episode_status()))
            out[name] = {
                "transcripts": {(r.model, r.task_id): msgspec.json.encode(r.messages)
                                for r in store.episodes(outcome.run_id)},
                "hedged": sum(json.loads(c.stalls)["hedged"] for c in calls if c.stalls),
                "retried": sum(c.attempts > 1 for c in calls),
                "report": without_profiles(build_report(store, outcome.run_id)["benchmarks"]),
            }
    assert out["backups"]["transcripts"] == out["none"]["transcripts"]
    assert out["backups"]["report"] == out["none"]["report"]
    assert out["none"]["hedged"] == 0 and out["backups"]["hedged"] > 0
    assert out["clean"]["hedged"] == 0  # an endpoint that does not fail gets no backups
    assert out["clean"]["transcripts"] == out["none"]["transcripts"]
    assert out["backups"]["retried"] < out["none"]["retried"]  # the backups answered instead


async def test_a_failing_backup_does_not_fail_a_first_copy_that_answers():
    server = ByArrival((0.1, 200, "first"), (0.0, 500, "backup failed"))
    result, _ = await one_call(server)
    assert result.message.content == "first" and result.attempts == 1 and not result.failures
    assert result.hedge_usage is None  # the backup's 500 had headers, but no answer to bill



async def test_slots_are_given_back_when_a_backup_is_cancelled_before_it_ever_ran():
    transport = MemoryTransport()  # answers without waiting: the first copy wins at once
    c = ModelClient(Endpoint(name="ep", max_retries=0), base_url="http://ref.invalid/v1",
                    transport=transport)
    c.spare = IdleSlots(idle=1)
    lately_failed(c)
    result = await c.complete(req())
    for _ in range(3):
        await asyncio.sleep(0)  # the cancelled backup ends and its callbacks run
    assert transport.count == 1 and result.hedged == 1  # the backup never reached the wire
    assert c.spare.lent == 0 and c.limits.concurrency.in_flight == 0


async def test_no_backups_before_the_endpoint_latency_is_known():
    """Without a hedge delay there is nothing to hold a backup to (when the first copy is
    late), so none is sent until the endpoint has answered enough requests."""
    server = ByArrival((0.05, 500, "boom"), (0.0, 200, "retried"))
    async with serve(server.handle) as url, ModelClient(endpoint(url),
                                                        backoff_base_s=0.01) as c:
        c.spare = IdleSlots(idle=4)
        c.limits.outcomes.add(FAILED)
        result = await c.complete(req())
    assert c.spare.sent == 0 and result.attempts == 2 and server.arrivals == 2


async def test_a_backup_rescuing_an_abandoned_first_copy_counts_one_hung_request():
    server = ByArrival((5.0, 200, "never in time"), (0.0, 200, "backup"), (0.0, 200, "b2"))
    # abandoned at 0.2 s, before the hedge delay of 0.45 s
    result, _ = await one_call(server, idle=2, ttfb_floor_s=0.1, ttfb_ceiling_s=0.2)
    assert result.message.content == "backup" and result.hedge_won
    assert result.hung == 1 and result.hedged == 2


class FirstByteEarly:
    """A transport: the first request's headers come at 0.1 s and its body at 0.6 s; any
    other request answers whole at 0.5 s."""

    def __init__(self) -> None:
        self.count = 0

    async def post(self, body: bytes, headers):
        n, self.count = self.count, self.count + 1
        if n == 0:
            await asyncio.sleep(0.1)
            first_byte()  # the answer is on its way
            await asyncio.sleep(0.5)
            return 200, {}, reply("first")
        await asyncio.sleep(0.5)
        return 200, {}, reply("backup")

    async def aclose(self) -> None:
        pass


async def test_a_backup_does_not_replace_a_first_copy_whose_answer_is_on_its_way():
    c = ModelClient(Endpoint(name="ep", max_retries=0), base_url="http://ref.invalid/v1",
                    transport=FirstByteEarly())
    c.spare = IdleSlots(idle=1)
    lately_failed(c)  # hedge delay 0.45 s: the backup answers after it
    result = await c.complete(req())
    assert result.message.content == "first" and not result.hedge_won
