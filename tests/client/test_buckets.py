"""Token buckets and the token estimator with a fake clock: reservations into debt, refills,
per-minute rates, argument checks, and what the estimator learns from usage."""

from __future__ import annotations

import asyncio

import pytest

from sweepbench.client.buckets import TokenBucket, TokenEstimator

from ..support import FakeClock


# ---- token bucket -------------------------------------------------------------------------


def test_bucket_reserves_into_debt_and_refills_at_rate() -> None:
    clock = FakeClock()
    b = TokenBucket(rate=10.0, capacity=5.0, clock=clock)
    assert [b.reserve(1) for _ in range(5)] == [0.0] * 5  # the burst
    assert b.reserve(1) == pytest.approx(0.1)  # 1 token of debt at 10/s
    assert b.reserve(1) == pytest.approx(0.2)  # served in arrival order
    clock.advance(0.2)
    assert b.level == pytest.approx(0.0)
    clock.advance(10.0)
    assert b.level == 5.0  # never more than capacity


def test_bucket_larger_than_capacity_still_goes() -> None:
    clock = FakeClock()
    b = TokenBucket(rate=100.0, capacity=50.0, clock=clock)
    assert b.reserve(250) == pytest.approx(2.0)  # no starvation, just a longer wait


def test_bucket_adjust_corrects_estimates() -> None:
    clock = FakeClock()
    b = TokenBucket(rate=1.0, capacity=100.0, clock=clock)
    b.reserve(80)
    b.adjust(30)  # the call used 50, not 80
    assert b.level == pytest.approx(50.0)
    b.adjust(-70)  # or it used more
    assert b.level == pytest.approx(-20.0)
    assert b.reserve(0) == pytest.approx(20.0)
    b.adjust(1000)
    assert b.level == 100.0


def test_per_minute_bucket() -> None:
    clock = FakeClock()
    b = TokenBucket.per_minute(600, burst_s=1.0, headroom=0.5, clock=clock)
    assert b.rate == pytest.approx(5.0) and b.capacity == pytest.approx(5.0)
    tiny = TokenBucket.per_minute(6, clock=clock)
    assert tiny.capacity == 1.0  # at least one whole request


async def test_bucket_acquire_sleeps_and_refunds_on_cancel() -> None:
    clock = FakeClock()
    b = TokenBucket(rate=2.0, capacity=1.0, clock=clock)
    assert await b.acquire(1) == 0.0
    assert await b.acquire(1) == pytest.approx(0.5)
    assert clock.slept == [pytest.approx(0.5)]

    class Stuck(FakeClock):
        async def sleep(self, seconds: float) -> None:
            await asyncio.Event().wait()

    stuck = Stuck()
    b2 = TokenBucket(rate=1.0, capacity=1.0, clock=stuck)
    b2.reserve(1)
    task = asyncio.create_task(b2.acquire(3))
    await asyncio.sleep(0)
    assert b2.level == pytest.approx(-3.0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert b2.level == pytest.approx(0.0)


@pytest.mark.parametrize("rate, capacity", [(0, 5), (5, 0), (-1, 5), (5, -1)])
def test_a_bucket_needs_a_positive_rate_and_capacity(rate, capacity) -> None:
    with pytest.raises(ValueError, match=f"bucket rate and capacity must be > 0, got {rate}, {capacity}"):
        TokenBucket(rate, capacity)


def test_a_bucket_may_start_below_capacity_never_above() -> None:
    clock = FakeClock()
    assert TokenBucket(2.0, 10.0, initial=4.0, clock=clock).level == 4.0
    assert TokenBucket(2.0, 10.0, initial=40.0, clock=clock).level == 10.0
    assert TokenBucket(2.0, 10.0, clock=clock).level == 10.0


def test_debt_is_capped_at_the_window_the_limit_is_stated_over() -> None:
    clock = FakeClock()
    bucket = TokenBucket(2.0, 10.0, clock=clock)
    assert bucket.reserve(1e9) == 60.0  # a minute of rate, at most
    assert TokenBucket(2.0, 10.0, clock=clock, window_s=5.0).reserve(1e9) == 5.0


def test_a_partly_used_bucket_lets_the_caller_go_at_once() -> None:
    clock = FakeClock()
    bucket = TokenBucket(10.0, 1.0, clock=clock)
    assert bucket.reserve(0.5) == 0.0 and bucket.level == 0.5
    assert bucket.reserve(0.5) == 0.0
    assert bucket.reserve(1.0) == pytest.approx(0.1)


def test_per_minute_buckets_take_rate_burst_and_headroom() -> None:
    clock = FakeClock()
    b = TokenBucket.per_minute(600, clock=clock)
    assert (b.rate, b.capacity) == (10.0, 10.0)
    b = TokenBucket.per_minute(600, burst_s=3.0, headroom=0.5, clock=clock)
    assert (b.rate, b.capacity) == (5.0, 15.0)
    assert TokenBucket.per_minute(6, clock=clock).capacity == 1.0  # one request at least


async def test_acquire_takes_one_token_unless_told_otherwise() -> None:
    bucket = TokenBucket(1.0, 5.0, clock=FakeClock())
    assert await bucket.acquire() == 0.0
    assert bucket.level == 4.0


# ---- the estimator ------------------------------------------------------------------------


def test_token_estimator_learns_ratio_and_completion() -> None:
    est = TokenEstimator()
    assert est.estimate(400) == 100  # four bytes per token before any usage is seen
    est.observe(400, prompt_tokens=200, completion_tokens=40)
    assert est.estimate(400) == 240
    for _ in range(50):
        est.observe(1000, prompt_tokens=250, completion_tokens=10)
    assert est.estimate(1000) == pytest.approx(260, abs=2)


def test_the_estimator_starts_at_four_bytes_a_token_and_at_least_one() -> None:
    est = TokenEstimator()
    assert est.estimate(4000) == 1000 and est.estimate(0) == 1 and est.estimate(2) == 1


def test_the_estimator_takes_its_first_observation_whole_then_moves_a_fifth() -> None:
    est = TokenEstimator()
    est.observe(1000, prompt_tokens=500, completion_tokens=100)
    assert (est.tokens_per_byte, est.completion) == (0.5, 100)
    est.observe(1000, prompt_tokens=1000, completion_tokens=200)
    assert est.tokens_per_byte == pytest.approx(0.6) and est.completion == pytest.approx(120)


@pytest.mark.parametrize("body, prompt", [(0, 10), (-5, 10), (10, 0), (10, -3)])
def test_the_estimator_ignores_reports_it_cannot_learn_from(body, prompt) -> None:
    est = TokenEstimator()
    est.observe(body, prompt_tokens=prompt, completion_tokens=50)
    assert (est.tokens_per_byte, est.completion) == (0.25, 0.0)


def test_the_estimator_learns_from_the_smallest_real_reports() -> None:
    est = TokenEstimator()
    est.observe(1, prompt_tokens=1, completion_tokens=0)
    assert est.tokens_per_byte == 1.0
    est = TokenEstimator()
    est.observe(8, prompt_tokens=1, completion_tokens=0)
    assert est.tokens_per_byte == 0.125
