"""Self-hosted endpoints (one engine, requests served in turn): never hedged by default, and a
request queued behind another's long prefill is not taken for a hung one. Hosted endpoints
hedge as before."""

from __future__ import annotations

import asyncio
import random

import msgspec
import pytest
from aiohttp import web

from sweepbench.client.facade import ModelClient
from sweepbench.client.stalls import StallPolicy, self_hosted
from sweepbench.client.transports.memory import completion
from sweepbench.config import Endpoint
from sweepbench.errors import ConfigError, FirstByteTimeout
from sweepbench.wire import ChatRequest, UserMessage

from ..support import serve

OK = msgspec.json.encode(completion("fine", usage={"prompt_tokens": 7, "completion_tokens": 2,
                                                   "total_tokens": 9}))


class OneSlot:
    """A one-slot engine: requests are served one at a time, each taking a time
    proportional to its prompt (a prefill), the headers coming with the whole answer."""

    def __init__(self, seconds_per_kb: float) -> None:
        self.slot = asyncio.Semaphore(1)
        self.seconds_per_kb = seconds_per_kb
        self.served = 0

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        async with self.slot:
            await asyncio.sleep(self.seconds_per_kb * len(raw) / 1024)
            self.served += 1
        return web.Response(body=OK, content_type="application/json")


def prompt(words: int) -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage("w " * words)])


async def _busy_day(kind: str | None, *, return_exceptions: bool = False,
                    ) -> tuple[list, OneSlot, ModelClient]:
    """20 short requests one by one (the endpoint learns its latency), then 30 of mixed
    sizes at once, the longest prompts 50 times the shortest: the last in the queue waits
    about 30 x a median latency, far past a first-byte budget of 4 x p99."""
    server = OneSlot(seconds_per_kb=0.01)
    rng = random.Random(7)
    ep = Endpoint(name="local", max_retries=3, ttfb_floor_s=0.05, ttfb_ceiling_s=30.0,
                  hedge_min_s=0.01, kind=kind)
    async with serve(server.handle) as url:
        async with ModelClient(msgspec.structs.replace(ep, base_url=url)) as client:
            for _ in range(20):
                await client.complete(prompt(rng.randint(10, 200)))
            results = await asyncio.gather(
                *(client.complete(prompt(rng.choice([20, 200, 1000, 5000]))) for _ in range(30)),
                return_exceptions=return_exceptions)
    return results, server, client


async def test_a_busy_one_slot_local_server_gets_no_copies_and_no_abandoned_requests():
    results, server, client = await _busy_day(None)  # 127.0.0.1: self-hosted by its address
    assert client.stalls.self_hosted and not client.stalls.hedging
    assert [(r.hung, r.hedged, r.attempts) for r in results] == [(0, 0, 1)] * 30
    assert server.served == 50  # every request once: no copy, no retry


async def test_the_same_server_declared_hosted_is_hedged_and_its_queue_taken_for_hangs():
    results, server, client = await _busy_day("hosted", return_exceptions=True)
    assert client.stalls.hedging
    # on a loaded machine a request can be abandoned outright after its retries: taken for
    # hung as well, only more so
    abandoned = [r for r in results if isinstance(r, BaseException)]
    assert all(isinstance(r, FirstByteTimeout) for r in abandoned), abandoned
    answered = [r for r in results if not isinstance(r, BaseException)]
    assert sum(r.hung for r in answered) + len(abandoned) > 0
    assert sum(r.hedged for r in answered) > 0 or abandoned
    assert server.served > 50  # copies and retries queued on the one slot too


@pytest.mark.parametrize(("base_url", "kind", "expected"), [
    ("https://api.openai.com/v1", None, False), ("https://8.8.8.8/v1", None, False),
    ("http://127.0.0.1:8001/v1", None, True), ("http://localhost:11434/v1", None, True),
    ("http://10.1.2.3:8000/v1", None, True), ("http://192.168.0.7/v1", None, True),
    ("http://[::1]:8000/v1", None, True), ("http://169.254.0.5/v1", None, True),
    ("http://gpu-box:8000/v1", None, False), ("http://gpu-box:8000/v1", "self-hosted", True),
    ("http://127.0.0.1:8001/v1", "hosted", False), ("", None, False)])
def test_an_endpoint_is_self_hosted_by_its_address_unless_its_kind_says(base_url, kind,
                                                                        expected):
    assert self_hosted(Endpoint(name="e", base_url=base_url, kind=kind)) is expected


@pytest.mark.parametrize(("base_url", "options", "hedging"), [
    ("https://api.example.com/v1", {}, True),  # hosted, unpriced: as before
    ("https://api.example.com/v1", {"price_input_per_mtok": 1.0}, False),
    ("http://127.0.0.1:8001/v1", {}, False),
    ("http://127.0.0.1:8001/v1", {"hedge": True}, True),
    ("http://127.0.0.1:8001/v1", {"kind": "hosted"}, True)])
def test_hedging_is_on_by_default_only_where_a_copy_can_win(base_url, options, hedging):
    assert StallPolicy(Endpoint(name="e", base_url=base_url, **options)).hedging is hedging


def test_an_unknown_kind_is_a_config_error_naming_the_endpoint():
    with pytest.raises(ConfigError, match="endpoint 'e': kind must be \"hosted\" or "
                                          "\"self-hosted\", got 'gpu'"):
        Endpoint(name="e", kind="gpu").validate()


async def test_a_long_prompt_alone_on_a_local_server_is_given_time_for_its_prefill():
    """Short prompts answer in ~2 ms (a budget of the 50 ms floor); one 40 times longer takes
    ~0.3 s to read: its budget grows with its prompt, so it is not abandoned."""
    server = OneSlot(seconds_per_kb=0.03)
    ep = Endpoint(name="local", max_retries=3, ttfb_floor_s=0.05, ttfb_ceiling_s=30.0)
    async with serve(server.handle) as url:
        async with ModelClient(msgspec.structs.replace(ep, base_url=url)) as client:
            for _ in range(20):
                await client.complete(prompt(100))
            long = await client.complete(prompt(4000))
    assert (long.hung, long.attempts, server.served) == (0, 1, 21)
