"""Hung requests (issue 12): the time-to-first-byte budget, hedged requests, and where both are
counted (journal, profile, live progress, config). Servers here are real aiohttp servers on
loopback: what a hung request is (no headers) is a matter of sockets."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import msgspec
import pytest
from aiohttp import web
from rich.console import Console

from sweepbench.config import Endpoint, load_config
from sweepbench.errors import ConfigError, FirstByteTimeout
from sweepbench.results.profile import build_profiles, call_event
from sweepbench.store.reads import ModelCallRow
from sweepbench.client.facade import ModelClient
from sweepbench.devserver.faults import FaultSpec
from sweepbench.client.stalls import MIN_SAMPLES, StallPolicy
from sweepbench.runner.journal import CallJournal
from sweepbench.runner.progress import ProgressDisplay
from sweepbench.devserver.server import ReferenceServer
from sweepbench.client.transports.memory import completion
from sweepbench.wire import AssistantMessage, ChatRequest, UserMessage

from ..support import serve

TRANSPORTS = ["http", "aiohttp", "openai"]
OK = msgspec.json.encode(completion("fine", usage={"prompt_tokens": 7, "completion_tokens": 2,
                                                   "total_tokens": 9}))


def req(text: str = "hi") -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage(text)])


class Server:
    """Answers at once, except that the first ``hang`` arrivals of a body whose text holds
    "hang" get no headers, ever (until the client goes away, which is counted)."""

    def __init__(self, hang: int = 1, body_delay_s: float = 0.0) -> None:
        self.hang = hang
        self.body_delay_s = body_delay_s
        self.seen: Counter[bytes] = Counter()
        self.abandoned = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        self.seen[raw] += 1
        if b"hang" in raw and self.seen[raw] <= self.hang:
            while request.transport is not None and not request.transport.is_closing():
                await asyncio.sleep(0.01)
            self.abandoned += 1
            return web.Response(status=504)
        if self.body_delay_s:  # headers now, the body in pieces afterwards
            resp = web.StreamResponse(headers={"Content-Type": "application/json"})
            await resp.prepare(request)
            for i in range(0, len(OK), len(OK) // 4 + 1):
                await asyncio.sleep(self.body_delay_s)
                await resp.write(OK[i:i + len(OK) // 4 + 1])
            await resp.write_eof()
            return resp
        return web.Response(body=OK, content_type="application/json")


async def _prime(client: ModelClient) -> None:
    """Enough quick successful calls for the endpoint's latency to be known."""
    for i in range(MIN_SAMPLES):
        await client.complete(req(f"warm {i}"))
    assert client.stalls.primed


# ---- the time-to-first-byte budget --------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_request_without_headers_is_abandoned_at_its_ttfb_budget_and_retried(transport):
    server = Server(hang=1)
    ep = dict(name="hangs", transport=transport, timeout_s=60.0, ttfb_floor_s=0.3,
              ttfb_ceiling_s=0.5, hedge=False, max_retries=2)
    async with serve(server.handle) as url, ModelClient(
            Endpoint(base_url=url, **ep), backoff_base_s=0.01) as client:
        t0 = time.monotonic()
        result = await client.complete(req("please hang"))
        took = time.monotonic() - t0
    assert result.message.content == "fine"
    assert result.hung == 1 and result.attempts == 2 and result.statuses == [0, 200]
    assert [f.error for f in result.failures] == ["FirstByteTimeout"]
    assert "time-to-first-byte" in result.failures[0].message
    assert 0.45 < took < 5.0, took  # the 0.5 s ceiling (no latency known yet), not timeout_s
    await asyncio.sleep(0.05)
    assert server.abandoned == 1  # the connection was closed, the server's handler freed


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_headers_in_time_lift_the_budget_so_a_slow_body_still_arrives(transport):
    server = Server(body_delay_s=0.25)  # ~1 s of body after the headers
    ep = Endpoint(name="slow-body", transport=transport, timeout_s=20.0, ttfb_floor_s=0.3,
                  ttfb_ceiling_s=0.4, hedge=False, max_retries=0)
    async with serve(server.handle) as url, ModelClient(
            msgspec.structs.replace(ep, base_url=url)) as client:
        result = await client.complete(req())
    assert result.message.content == "fine" and result.hung == 0
    assert result.latency_s > 0.4  # longer than the budget: only the first byte is held to it


async def test_without_any_answer_the_call_fails_with_first_byte_timeouts():
    server = Server(hang=99)
    ep = Endpoint(name="dead", timeout_s=60.0, ttfb_floor_s=0.1, ttfb_ceiling_s=0.2,
                  hedge=False, max_retries=1)
    async with serve(server.handle) as url, ModelClient(
            msgspec.structs.replace(ep, base_url=url), backoff_base_s=0.01) as client:
        with pytest.raises(FirstByteTimeout) as info:
            await client.complete(req("hang"))
    assert info.value.attempts == 2 and info.value.hung == 2
    # each abandonment of one call doubles its next budget (0.2 s, then 0.4 s)
    assert "0.4 s" in str(info.value)


def _policy(**kw) -> StallPolicy:
    return StallPolicy(Endpoint(name="p", base_url="http://h", **kw))


def test_the_budget_follows_observed_latency_within_floor_and_ceiling():
    p = _policy(timeout_s=120.0, ttfb_k=4.0, ttfb_floor_s=1.0, ttfb_ceiling_s=30.0)
    assert p.ttfb_budget() == 30.0  # nothing known yet: the ceiling
    for _ in range(MIN_SAMPLES):
        p.observe(0.1)
    assert p.ttfb_budget() == 1.0  # 4 x 0.1 s is under the floor
    for _ in range(64):
        p.observe(2.0)
    assert p.ttfb_budget() == pytest.approx(8.0)  # 4 x p99
    assert p.ttfb_budget(abandoned=1) == pytest.approx(16.0)
    for _ in range(64):
        p.observe(20.0)
    assert p.ttfb_budget() == 30.0  # 4 x 20 s, cut at the ceiling
    default = _policy(timeout_s=120.0)
    assert default.ttfb_budget() is None  # ceiling = timeout_s: only timeout_s applies
    for _ in range(MIN_SAMPLES):
        default.observe(0.2)
    assert default.ttfb_budget() == 10.0  # the default floor


def test_hedging_is_off_by_default_where_the_endpoint_has_prices():
    assert _policy().hedging
    assert not _policy(price_output_per_mtok=1.0).hedging
    assert _policy(price_output_per_mtok=1.0, hedge=True).hedging
    assert not _policy(hedge=False).hedging
    p = _policy(hedge_min_s=1.0, hedge_quantile=0.5)
    assert p.hedge_delay() is None  # no basis yet
    for i in range(100):
        p.observe(0.01 * i)
    assert p.hedge_delay() == 1.0  # 1.5 x the median (0.49 s) is under hedge_min_s
    p.observe(5.0)


def test_the_hedge_delay_is_the_quantile_but_never_before_one_and_a_half_medians():
    wide = _policy(hedge_min_s=0.01)  # 0.1-0.4 s: p99 (0.394) is past 1.5 medians (0.37)
    for i in range(100):
        wide.observe(0.1 + 0.003 * i)
    assert wide.hedge_delay() == pytest.approx(0.394)
    tight = _policy(hedge_min_s=0.01)  # 0.200-0.205 s: p99 is a few ms past the median
    for i in range(100):
        tight.observe(0.2 + 0.00005 * i)
    assert tight.hedge_delay() == pytest.approx(1.5 * 0.20245)


async def test_the_watchdog_looks_only_at_requests_old_enough_to_act_on():
    """A check runs every few tens of ms with hundreds of requests on the wire; it visits the
    ones past the hedge delay or the budget (the oldest, as they were sent), not the rest."""
    from sweepbench.client.stalls import Flight

    p = _policy(hedge_min_s=0.05, ttfb_floor_s=0.3)
    for _ in range(MIN_SAMPLES):
        p.observe(0.02)  # hedge delay 0.05 s, budget 0.3 s

    class Race:
        def __init__(self) -> None:
            self.ages: list[float] = []

        def tick(self, age: float, delay: float) -> None:
            self.ages.append(age)

    loop = asyncio.get_running_loop()
    races = [Race() for _ in range(203)]
    flights = [Flight(race) for race in races]
    for flight in flights:
        p.track(flight)
    now = loop.time()
    for flight in flights[:3]:
        flight.sent_at = now - 0.1  # the oldest three: past the hedge delay
    flights[0].got_first_byte = True  # answering: no hedge
    p._check()
    assert [len(r.ages) for r in races[:3]] == [0, 1, 1]
    assert not any(r.ages for r in races[3:])  # too young: not even looked at
    flights[2].sent_at = now - 0.5  # past its budget: abandoned (its deadline expires)
    flights[2].deadline = deadline = asyncio.timeout(None)

    async def send() -> None:
        async with deadline:
            await asyncio.sleep(10)

    sender = asyncio.ensure_future(send())
    await asyncio.sleep(0)  # the sender is under its deadline
    p._check()
    assert flights[2].abandoned == pytest.approx(0.3) and deadline.when() is not None
    with pytest.raises(TimeoutError):
        await sender
    p.untrack(flights[1])
    p.untrack(flights[2])
    p._check()
    assert len(races[1].ages) == 2 and not any(r.ages for r in races[3:])


# ---- hedged requests ----------------------------------------------------------------------


def _journal() -> tuple[CallJournal, list[dict]]:
    events: list[dict] = []
    journal = CallJournal(emit=lambda kind, payload: events.append(
        {"kind": kind, **msgspec.to_builtins(payload)}))
    return journal, events


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_hedge_answers_for_a_hung_request_which_is_cancelled(transport):
    server = Server(hang=1)
    ep = Endpoint(name="hedged", transport=transport, hedge_min_s=0.05, max_retries=0,
                  kind="hosted")  # the local server stands in for a hosted API
    async with serve(server.handle) as url, ModelClient(
            msgspec.structs.replace(ep, base_url=url)) as client:
        await _prime(client)
        journal, events = _journal()
        call = journal.caller("agent", client.complete)
        t0 = time.monotonic()
        result = await call(req("hang once"))
        took = time.monotonic() - t0
        await asyncio.sleep(0.05)
    assert result.message.content == "fine"
    assert result.hedged == 1 and result.hedge_won and result.hung == 0
    assert result.attempts == 1 and result.statuses == [200]  # a copy is not a retry
    assert took < 3.0, took  # not the 10 s TTFB floor, let alone timeout_s
    assert server.abandoned == 1  # the hung first copy was cancelled
    assert server.seen[max(server.seen, key=lambda b: b"hang" in b)] == 2
    # only the winner is journaled: one model_call, carrying the stall counts
    calls = [e for e in events if e["kind"] == "model_call"]
    assert len(calls) == 1 and calls[0]["message"]["content"] == "fine"
    assert calls[0]["stalls"] == {"hung": 0, "hedged": 1, "hedge_won": True}


async def test_a_losing_copy_that_got_its_first_byte_is_counted_as_billed():
    """The first copy's headers come late (after the hedges went out) and its body later
    still; the first hedge answers first. The first copy had started answering: billed,
    and counted; the second hedge had not: free."""
    arrivals = 0

    async def handler(request: web.Request) -> web.StreamResponse:
        nonlocal arrivals
        raw = await request.read()
        if b"slow" not in raw:
            return web.Response(body=OK, content_type="application/json")
        arrivals += 1
        if arrivals == 1:  # the first copy: headers at 0.3 s, the body a second later
            await asyncio.sleep(0.3)
            resp = web.StreamResponse(headers={"Content-Type": "application/json"})
            await resp.prepare(request)
            await asyncio.sleep(1.0)
            await resp.write(OK)
            return resp
        await asyncio.sleep(0.5)  # hedges (sent at ~0.05 s and ~0.1 s) answer 0.5 s later
        return web.Response(body=OK, content_type="application/json")

    ep = Endpoint(name="billed", hedge_min_s=0.05, max_retries=0, price_input_per_mtok=1.0,
                  hedge=True)
    async with serve(handler) as url, ModelClient(
            msgspec.structs.replace(ep, base_url=url)) as client:
        await _prime(client)
        result = await client.complete(req("slow"))
        progress = ProgressDisplay(Console(record=True), log_every_s=0,
                                   prices={"billed": ep})
        progress.update("call", endpoint="billed", result=result)
    assert arrivals == 3 and result.hedged == 2 and result.hedge_won  # MAX_HEDGES copies
    assert result.hedge_usage is not None  # the first copy only: the other got no byte
    assert (result.hedge_usage.prompt_tokens, result.hedge_usage.completion_tokens) == (7, 2)
    # live cost: the winner's 7 prompt tokens and the loser's 7, at $1 per million
    assert progress.endpoints["billed"].cost == pytest.approx(14 / 1e6)


async def test_hedges_stay_under_their_share_of_requests():
    p = _policy()
    allowed = sum(p.may_hedge() for _ in range(100))
    assert allowed == 4  # the burst, with no requests yet
    p.requests = 1000
    assert sum(p.may_hedge() for _ in range(1000)) == 100


async def test_the_reference_server_hang_fault_never_answers():
    assert str(FaultSpec.parse("hang=0.01")) == "hang=0.01"

    def policy(_: ChatRequest) -> AssistantMessage:
        return AssistantMessage(content="ok")

    async with ReferenceServer(lambda m: policy, faults="hang=1") as srv:
        ep = Endpoint(name="m", base_url=srv.url, ttfb_floor_s=0.1, ttfb_ceiling_s=0.2,
                      max_retries=0, timeout_s=60.0)
        async with ModelClient(ep) as client:
            t0 = time.monotonic()
            with pytest.raises(FirstByteTimeout):
                await client.complete(ChatRequest(model="m", messages=[UserMessage("hi")]))
            assert time.monotonic() - t0 < 5.0
        assert srv.faults["hang"] == 1
    # stop() does not wait for a hang
    async with ReferenceServer(lambda m: policy, faults="hang=1") as srv:
        task = asyncio.ensure_future(ModelClient(Endpoint(name="m", base_url=srv.url)).complete(
            ChatRequest(model="m", messages=[UserMessage("hi")])))
        await asyncio.sleep(0.1)
        t0 = time.monotonic()
    assert time.monotonic() - t0 < 3.0
    task.cancel()


# ---- where they are counted ---------------------------------------------------------------


def test_the_profile_counts_hung_and_hedged_requests_and_prices_the_hedges():
    stalls = {"hung": 1, "hedged": 2, "hedge_won": True,
              "hedge_usage": {"prompt_tokens": 1000, "completion_tokens": 10}}
    row = ModelCallRow("e1", "agent", "r", "m", "agent", 5, 1, 0, 0.2, 2, "[0, 200]",
                       msgspec.json.encode(stalls).decode())
    plain = ModelCallRow("e1", "agent", "r", "m", "user", 5, 1, 0, 0.1, 1, "[200]")
    calls = [("m", "d", call_event(row)), ("m", "d", call_event(plain))]
    prof = build_profiles([], calls, prices={"m": {"input": 2.0, "output": 10.0}})["m"]
    assert prof["stalls"] == {"hung": 1, "hedged": 2, "hedge_wins": 1,
                              "hedge_usage": {"prompt_tokens": 1000, "completion_tokens": 10},
                              "hedge_cost": pytest.approx((1000 * 2.0 + 10 * 10.0) / 1e6)}
    assert prof["domains"]["d"]["stalls"]["hung"] == 1
    none = build_profiles([], [("m", "d", call_event(plain))])["m"]
    assert none["stalls"] is None  # no call said anything about stalls


def test_live_progress_shows_hung_and_hedged_requests():
    from sweepbench.client.results import CallResult
    from sweepbench.wire import Usage

    console = Console(record=True, width=300, force_terminal=False)
    progress = ProgressDisplay(console, log_every_s=0)
    progress.update("planned", total=2, skipped=0)
    result = CallResult(message=AssistantMessage(content="x"), usage=Usage(3, 1),
                        latency_s=0.1, attempts=2, statuses=[0, 200], hung=1, hedged=1,
                        hedge_won=True)
    progress.update("call", endpoint="ep", result=result)
    line = progress._line(progress.clock()).plain
    assert "1 hung requests abandoned" in line and "1 hedged" in line
    assert "1 hung (abandoned, no first byte), 1 hedged (1 won by the copy)" in line


# ---- config -------------------------------------------------------------------------------


@pytest.mark.parametrize("field,value,message", [
    ("ttfb_k", 0, "ttfb_k must be > 0"),
    ("ttfb_floor_s", -1.0, "ttfb_floor_s must be > 0"),
    ("ttfb_ceiling_s", 0.0, "ttfb_ceiling_s must be > 0"),
    ("hedge_min_s", 0, "hedge_min_s must be > 0"),
    ("hedge_quantile", 1.0, "hedge_quantile must be in (0, 1)"),
    ("hedge_quantile", 0, "hedge_quantile must be in (0, 1)"),
])
def test_stall_settings_that_cannot_work_are_config_errors(tmp_path, field, value, message):
    path = tmp_path / "sweep.toml"
    path.write_text(f'[[endpoints]]\nname = "e"\nbase_url = "http://h/v1"\n{field} = {value}\n')
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(path)
    with pytest.raises(ConfigError, match="endpoint 'e'"):
        Endpoint(name="e", **{field: value}).validate()


def test_a_ttfb_floor_above_its_ceiling_is_a_config_error():
    with pytest.raises(ConfigError, match="ttfb_floor_s .* is above ttfb_ceiling_s"):
        Endpoint(name="e", ttfb_floor_s=20.0, ttfb_ceiling_s=5.0).validate()
    Endpoint(name="e", ttfb_floor_s=2.0, ttfb_ceiling_s=5.0).validate()
