"""Absurd usage is an invalid response; no reply makes the TPM bucket wait past its minute
(issue 9, point 5)."""

from __future__ import annotations

import pytest

from sweepbench.config import Endpoint
from sweepbench.errors import InvalidResponseError
from sweepbench.client.facade import ModelClient
from sweepbench.client.buckets import TokenBucket
from sweepbench.client.limits import EndpointLimits
from sweepbench.client.transports.memory import MemoryTransport, VirtualClock, completion
from sweepbench.wire import MAX_TOKEN_COUNT, ChatRequest, UserMessage


def req() -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage("hi")])


def client(transport: MemoryTransport, clock: VirtualClock, **kw) -> ModelClient:
    ep = Endpoint(name="liar", base_url="http://h/v1", **kw)
    return ModelClient(ep, transport=transport, backoff_base_s=0.0, backoff_max_s=0.0,
                       limits=EndpointLimits.for_endpoint(ep, clock=clock))


@pytest.mark.parametrize("field", ["prompt_tokens", "completion_tokens", "total_tokens"])
@pytest.mark.parametrize("value", [-1, -10**12, 10**12, MAX_TOKEN_COUNT + 1, 2**70, 1.5, 1e3,
                                   True, False, "12", [3], {"n": 1}])
async def test_usage_outside_sane_bounds_is_an_invalid_response(field, value) -> None:
    clock = VirtualClock()
    transport = MemoryTransport(completion("x", usage={field: value}), completion("ok"),
                                clock=clock)
    c = client(transport, clock, max_retries=0)
    with pytest.raises(InvalidResponseError) as info:
        await c.complete(req())
    assert f"$.usage.{field}" in str(info.value) and str(info.value).startswith("liar: ")


async def test_the_largest_sane_usage_waits_at_most_the_tpm_window() -> None:
    clock = VirtualClock()
    big = {"prompt_tokens": MAX_TOKEN_COUNT, "completion_tokens": MAX_TOKEN_COUNT}
    transport = MemoryTransport(completion("x", usage=big), completion("ok"), clock=clock)
    c = client(transport, clock, tpm=1000, max_retries=0)
    first = await c.complete(req())
    assert first.usage.prompt_tokens == MAX_TOKEN_COUNT  # 2e8 tokens: 2e5 minutes at 1000/min
    t0 = clock.now()
    second = await c.complete(req())
    waited = clock.now() - t0
    assert second.queue_wait_s == pytest.approx(waited)
    assert 50.0 < waited <= 60.0  # in debt, but for no longer than the limit's own minute


def test_a_bucket_never_owes_more_than_its_window() -> None:
    clock = VirtualClock()
    bucket = TokenBucket.per_minute(600, clock=clock)  # 10/s
    assert bucket.reserve(1e12) == pytest.approx(60.0)
    bucket.adjust(-1e15)
    assert bucket.level == pytest.approx(-600.0)
    assert bucket.reserve(1) == pytest.approx(60.0)
    clock.advance(30.0)
    assert bucket.level == pytest.approx(-300.0)
    small = TokenBucket(5.0, 5.0, clock=clock, window_s=2.0)
    assert small.reserve(1000) == pytest.approx(2.0)
