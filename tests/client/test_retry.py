"""When ModelClient retries and how long it waits (client/retry.py), through an in-memory
transport and a virtual clock: Retry-After, the request count the breaker cannot stretch, a
refused connection, and the back-off's base and doubling."""

from __future__ import annotations

import asyncio

import pytest

from sweepbench.client import retry as retry_mod
from sweepbench.client.limits import EndpointLimits
from sweepbench.client.outcomes import FAILED, LIMITED
from sweepbench.client.results import AttemptFailure, CallLedger
from sweepbench.client.stalls import LatencyTracker
from sweepbench.client.transports.memory import Answer, VirtualClock
from sweepbench.errors import (
    ConnectionRefused,
    EndpointUnavailableError,
    RateLimitError,
    RequestTimeout,
    RetryableError,
    ServerError,
    TransportError,
)

from .rig import OK, OK_BODY, Rig, status

# ---- retries ------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [429, 503])
async def test_retry_after_is_honoured(code: int) -> None:
    seen: list[tuple[type, float]] = []
    rig = Rig(status(code, headers={"Retry-After": "0.3"}), OK,
              on_retry=lambda e, w: seen.append((type(e), w)))
    result = await rig()
    assert result.attempts == 2 and result.statuses == [code, 200]
    assert 0.3 <= result.backoff_s <= 0.302  # Retry-After plus jitter; back-off alone is ~1 ms
    assert rig.transport.times[1] - rig.transport.times[0] == pytest.approx(result.backoff_s)
    assert seen[0][0] is (RateLimitError if code == 429 else ServerError) and seen[0][1] >= 0.3


async def test_retry_after_is_capped() -> None:
    rig = Rig(status(429, headers={"Retry-After": "3600"}), OK, retry_after_max_s=0.05)
    result = await rig()
    assert result.attempts == 2 and result.wall_s < 1.0


async def test_500_twice_then_success_keeps_every_failure() -> None:
    rig = Rig(status(500, "boom"), status(502, "bad gateway"), OK)
    result = await rig()
    assert result.attempts == 3 and result.retries == 2 and rig.transport.count == 3
    assert result.statuses == [500, 502, 200]
    assert result.failures == [
        AttemptFailure(error="ServerError", status=500, message="HTTP 500: boom"),
        AttemptFailure(error="ServerError", status=502, message="HTTP 502: bad gateway")]


async def test_retries_exhausted_raise_last_retryable_error() -> None:
    rig = Rig(status(500, "boom"), max_retries=2)
    with pytest.raises(ServerError) as info:
        await rig()
    assert rig.transport.count == 3
    assert info.value.attempts == 3 and info.value.status == 500
    assert info.value.statuses == [500, 500, 500] and len(info.value.failures) == 3
    assert "boom" in str(info.value) and "test-model" in str(info.value)


async def test_timeout_from_the_transport_is_retried() -> None:
    rig = Rig(RequestTimeout("test-model: request timed out", endpoint="test-model"), OK)
    result = await rig()
    assert result.attempts == 2 and result.statuses == [0, 200]
    assert result.failures[0].error == "RequestTimeout"


# ---- defect 1: the breaker never spends more sends than max_retries allows -----------------


async def test_breaker_probes_count_against_max_retries() -> None:
    # One request that always gets a 500, the breaker opening after every failure: before the
    # fix a failed half-open probe did not count, and the call was sent until the breaker's
    # max wait (50 sends in 21 minutes where 7 were allowed).
    rig = Rig(status(500, "upstream exploded"), max_retries=6, breaker_threshold=1,
              breaker_cooldown_s=1.0, breaker_max_wait_s=600.0)
    with pytest.raises(ServerError) as info:
        await rig()
    assert rig.transport.count == 7 == info.value.attempts
    assert "upstream exploded" in str(info.value)
    assert [f.status for f in info.value.failures] == [500] * 7


async def test_a_caller_that_gives_up_on_the_breaker_names_the_failure_behind_it() -> None:
    rig = Rig(status(500, "upstream exploded"), max_retries=0, breaker_threshold=1,
              breaker_cooldown_s=30.0, breaker_max_wait_s=0.1)
    with pytest.raises(ServerError):
        await rig()
    with pytest.raises(EndpointUnavailableError) as info:  # another episode, same endpoint
        await rig()
    assert rig.transport.count == 1  # it never sent: it waited on the open breaker
    assert "circuit breaker open" in str(info.value)
    assert "HTTP 500: upstream exploded" in str(info.value)
    assert not isinstance(info.value, RetryableError) and info.value.attempts == 0


async def test_breaker_waiters_do_not_burn_retries() -> None:
    # The endpoint is down for 5 s. The breaker opens after two failures; callers arriving
    # while it is open wait instead of sending and succeed once a probe has closed it.
    clock = VirtualClock()
    down_until = clock.now() + 5.0

    def reply(body: dict) -> Answer:
        return status(503) if clock.now() < down_until else OK

    limits = EndpointLimits(max_concurrency=8, breaker_threshold=2, breaker_cooldown_s=2.0,
                            clock=clock)
    first = Rig(reply, limits=limits, max_retries=1)
    with pytest.raises(ServerError):
        await first()  # two sends, two 503s: the breaker opens
    assert limits.breaker.state == "open"
    rig = Rig(reply, limits=limits, max_retries=3)
    results = await asyncio.gather(*(rig() for _ in range(6)))
    assert limits.breaker.state == "closed" and limits.breaker.opened >= 2
    assert all(r.message.content == "hello" for r in results)
    # nobody sent while it was open: besides one success each, only the probes were sent,
    # and no call sent more than max_retries + 1
    assert rig.transport.count <= limits.breaker.opened - 1 + 6
    assert all(r.attempts <= 4 for r in results)
    assert min(r.queue_wait_s for r in results) >= 2.0  # they waited, in the queue


# ---- defect 2: a refused connection fails at once, naming the URL -------------------------


def _refused() -> ConnectionRefused:
    return ConnectionRefused("test-model: connection refused by http://127.0.0.1:9/v1/chat/"
                             "completions (is the server running?)", endpoint="test-model")


async def test_refused_connection_to_an_endpoint_that_never_answered_fails_at_once() -> None:
    rig = Rig(_refused(), max_retries=6)
    for _ in range(20):  # every episode: one request each, no breaker to wait on
        with pytest.raises(ConnectionRefused) as info:
            await rig()
        assert info.value.attempts == 1
    assert rig.transport.count == 20 and rig.limits.breaker.state == "closed"
    assert rig.clock.now() == 1000.0  # no back-off, no wait at all
    assert "connection refused" in str(info.value) and "127.0.0.1:9" in str(info.value)


async def test_refused_connection_after_the_endpoint_answered_is_retried() -> None:
    rig = Rig(OK, _refused(), _refused(), OK, max_retries=3)
    await rig()
    result = await rig()  # the server restarts: worth waiting for
    assert result.statuses == [0, 0, 200]
    assert [f.error for f in result.failures] == ["ConnectionRefused"] * 2


# ---- back-off ---------------------------------------------------------------------------


def primed(*replies, monkeypatch, **kw) -> Rig:
    """A rig whose endpoint answered 20 requests in 0.2 s each (its median latency known),
    then ``replies``; jitter always draws its ceiling."""
    monkeypatch.setattr(retry_mod.random, "uniform", lambda low, high: high)
    kw.setdefault("backoff_base_s", 0.5)
    kw.setdefault("backoff_max_s", 30.0)
    return Rig(*[Answer(body=OK_BODY, delay_s=0.2)] * 20, *replies, **kw)


async def test_isolated_failures_back_off_about_one_latency_doubling(monkeypatch) -> None:
    seen: list[float] = []
    rig = primed(status(500), TransportError("reset", endpoint="test-model"), OK,
                 monkeypatch=monkeypatch, on_retry=lambda e, w: seen.append(w))
    for _ in range(20):
        await rig()
    result = await rig()
    assert result.statuses == [500, 0, 200]
    assert seen == pytest.approx([0.1, 0.2])  # 0.5 x the 0.2 s median, doubled per retry
    assert result.backoff_s == pytest.approx(0.3)


async def test_back_off_before_the_latency_is_known_is_the_base(monkeypatch) -> None:
    seen: list[float] = []
    monkeypatch.setattr(retry_mod.random, "uniform", lambda low, high: high)
    rig = Rig(status(500), status(500), OK, backoff_base_s=0.5, backoff_max_s=30.0,
              on_retry=lambda e, w: seen.append(w))
    await rig()
    assert seen == pytest.approx([0.5, 1.0])


async def test_an_endpoint_mostly_failing_gets_the_full_back_off(monkeypatch) -> None:
    seen: list[float] = []
    rig = primed(status(500), OK, monkeypatch=monkeypatch, on_retry=lambda e, w: seen.append(w))
    for _ in range(20):
        await rig()
    for _ in range(20):  # 20 failures among the 40 latest answers, then this call's: over half
        rig.limits.outcomes.add(FAILED)
    await rig()
    assert seen == pytest.approx([0.5])


async def test_an_open_breaker_gets_the_full_back_off(monkeypatch) -> None:
    seen: list[float] = []
    rig = primed(status(500), OK, monkeypatch=monkeypatch, breaker_threshold=1,
                 on_retry=lambda e, w: seen.append(w))
    for _ in range(20):
        await rig()
    result = await rig()  # the 500 opened the breaker
    assert seen == pytest.approx([0.5]) and result.statuses == [500, 200]


@pytest.mark.parametrize(("after", "wait"), [("0.2", 0.25), ("2", 2.1), ("0", 0.02)])
async def test_retry_after_jitter_is_a_quarter_of_it_at_most_the_quick_back_off(
        monkeypatch, after: str, wait: float) -> None:
    seen: list[float] = []
    rig = primed(status(429, headers={"Retry-After": after}), OK, monkeypatch=monkeypatch,
                 on_retry=lambda e, w: seen.append(w))
    for _ in range(20):
        await rig()
    await rig()
    assert seen == pytest.approx([wait])  # quick back-off 0.1; floor 0.02


# ---- RetryPolicy alone: the tests below drive it without a transport -----------------------


def policy(*, latencies: tuple[float, ...] = (), **kw) -> retry_mod.RetryPolicy:
    """A RetryPolicy over fresh limits on a virtual clock, its latency window holding
    ``latencies``."""
    tracker = LatencyTracker()
    for s in latencies:
        tracker.add(s)
    args = {"name": "ep-a", "limits": EndpointLimits(clock=VirtualClock()), "latency": tracker,
            "max_retries": 3, "backoff_base_s": 0.5, "backoff_max_s": 30.0,
            "retry_after_max_s": 60.0, "on_retry": None}
    return retry_mod.RetryPolicy(**{**args, **kw})


def test_full_jitter_draws_from_zero_to_the_capped_back_off(monkeypatch) -> None:
    draws: list[tuple[float, float]] = []
    monkeypatch.setattr(retry_mod.random, "uniform", lambda low, high: draws.append((low, high)))
    p = policy(backoff_max_s=0.75)
    for made in (1, 2, 3):
        p.backoff(made)
    assert draws == [(0, 0.5), (0, 0.75), (0, 0.75)]  # 0.5, 1.0 and 2.0 capped at 0.75


def test_the_quick_back_off_is_half_the_median_not_another_quantile() -> None:
    # 19 answers in 0.1 s, one in 0.9 s: median 0.1 (quick back-off 0.05), p100 0.9
    assert policy(latencies=(0.1,) * 19 + (0.9,)).quick_backoff_s() == 0.05
    assert policy(latencies=(0.1,) * 19).quick_backoff_s() == 0.5  # under 20 samples: the base
    assert policy(latencies=(0.001,) * 20).quick_backoff_s() == retry_mod.BACKOFF_FLOOR_S
    assert policy(latencies=(5.0,) * 20).quick_backoff_s() == 0.5  # at most the base


def test_half_the_recent_requests_failed_is_no_longer_mostly_answering() -> None:
    p = policy()
    for outcome in [FAILED] * 10:
        p.limits.outcomes.add(outcome)
    for _ in range(11):
        p.limits.outcomes.add(0)
    assert p.mostly_answering()  # 10 of 21 failed
    p.limits.outcomes.add(FAILED)
    assert p.limits.outcomes.failing_share == 0.5 and not p.mostly_answering()


def test_isolated_faults_need_no_clustered_429s_and_no_pause_running() -> None:
    p = policy()
    clock = p.limits.clock
    assert p.isolated_faults()
    p.limits.paused_until = clock.now()  # a pause ending this instant has ended
    assert p.isolated_faults()
    p.limits.paused_until = clock.now() + 0.001
    assert not p.isolated_faults()
    p.limits.paused_until = 0.0
    for _ in range(3):  # three 429s among three answers: the limit is hit
        p.limits.outcomes.add(LIMITED)
    assert p.limits.outcomes.limit_hit() and p.mostly_answering() and not p.isolated_faults()
    q = policy()
    for _ in range(12):
        q.limits.outcomes.add(FAILED)
    assert not q.mostly_answering() and not q.isolated_faults()  # nor when mostly failing


class _Lender:
    """A test double of the sweep's slot lease: records each sleep it lends for."""

    def __init__(self) -> None:
        self.lent: list[tuple[float, object]] = []

    async def sleep(self, seconds, sleep) -> None:
        self.lent.append((seconds, sleep))
        await sleep(seconds)


async def test_a_sleep_lends_the_slot_only_while_faults_are_isolated() -> None:
    p = policy()
    clock = p.limits.clock
    lender = _Lender()
    token = retry_mod.LEASE.set(lender)
    try:
        await p.sleep(0.25)
        assert lender.lent == [(0.25, clock.sleep)] and clock.now() == 1000.25
        p.limits.paused_until = clock.now() + 10.0  # an endpoint in trouble: no lending
        await p.sleep(0.5)
        assert len(lender.lent) == 1 and clock.now() == 1000.75
    finally:
        retry_mod.LEASE.reset(token)
    await policy().sleep(0.1)  # no lease: a plain sleep on the clock


async def test_each_retry_is_logged_with_its_attempt_error_and_wait(caplog, monkeypatch) -> None:
    monkeypatch.setattr(retry_mod.random, "uniform", lambda low, high: high)
    p = policy(max_retries=2)

    async def attempt():
        raise ServerError("HTTP 500", endpoint="ep-a", status=500)

    call = CallLedger()
    with caplog.at_level("DEBUG", logger=retry_mod.__name__), pytest.raises(ServerError):
        await p.run(attempt, ServerError("HTTP 500", endpoint="ep-a", status=500), call)
    assert [r.getMessage() for r in caplog.records] == [
        "ep-a: attempt 1 failed (ServerError), retrying in 0.500s",
        "ep-a: attempt 2 failed (ServerError), retrying in 1.000s"]
    assert call.backoff == 1.5
