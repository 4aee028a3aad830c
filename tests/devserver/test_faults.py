"""Fault, latency, outage and limit specs and their seeded decisions (no HTTP here)."""

from __future__ import annotations

import math
import statistics

import pytest

from sweepbench.devserver.faults import (
    AttemptLedger,
    FaultSpec,
    LatencySpec,
    PrefixCache,
    RateLimiter,
    body_digest,
    parse_outage,
    request_rng,
)

# ---- fault spec --------------------------------------------------------------------------------


def test_fault_spec_parses_the_documented_mix() -> None:
    spec = FaultSpec.parse("429=0.1,500=0.05, timeout=0.02,reset=0.01,garbage=0.01")
    assert dict(spec.rates) == {"429": 0.1, "500": 0.05, "timeout": 0.02, "reset": 0.01,
                                "garbage": 0.01}
    assert math.isclose(spec.total, 0.19)
    assert str(spec) == "429=0.1,500=0.05,timeout=0.02,reset=0.01,garbage=0.01"
    assert FaultSpec.parse(str(spec)) == spec
    assert not FaultSpec.parse(None) and not FaultSpec.parse("") and not FaultSpec.parse("500=0")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("429=0.1,bogus=0.2", "'bogus=0.2': unknown fault kind 'bogus'"),
        ("429", "'429': expected KIND=PROBABILITY"),
        ("500=lots", "'500=lots': 'lots' is not a number"),
        ("500=1.5", "'500=1.5': probability must be in [0, 1]"),
        ("500=-0.1", "'500=-0.1': probability must be in [0, 1]"),
        ("500=nan", "not a finite number"),
        ("500=0.1,500=0.2", "'500=0.2': fault kind '500' given twice"),
        ("429=0.6,500=0.6", "sum to 1.2 > 1"),
    ],
)
def test_fault_spec_errors_name_the_bad_item(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match="fault spec") as info:
        FaultSpec.parse(text)
    assert fragment in str(info.value)


def test_fault_decisions_follow_the_rates() -> None:
    spec = FaultSpec.parse("429=0.1,500=0.05,timeout=0.02,reset=0.01,garbage=0.01")
    n = 20_000
    seen: dict[str | None, int] = {}
    for i in range(n):
        kind = spec.decide(request_rng(3, body_digest(str(i).encode()), 1).random())
        seen[kind] = seen.get(kind, 0) + 1
    for kind, p in spec.rates:
        sigma = math.sqrt(n * p * (1 - p))
        assert abs(seen.get(kind, 0) - n * p) < 5 * sigma, (kind, seen)
    assert spec.decide(0.0) == "429" and spec.decide(0.999) is None


def test_request_rng_is_a_pure_function_of_seed_body_attempt() -> None:
    d = body_digest(b"body")
    assert request_rng(1, d, 1).random() == request_rng(1, d, 1).random()
    draws = {request_rng(1, d, 1).random(), request_rng(2, d, 1).random(),
             request_rng(1, d, 2).random(), request_rng(1, body_digest(b"other"), 1).random()}
    assert len(draws) == 4


def test_attempt_ledger_counts_per_body_and_is_bounded() -> None:
    ledger = AttemptLedger(max_entries=2)
    a, b, c = (body_digest(x) for x in (b"a", b"b", b"c"))
    assert [ledger.next(a), ledger.next(a), ledger.next(b), ledger.next(a)] == [1, 2, 1, 3]
    ledger.next(c)  # evicts b, the least recently seen
    assert ledger.next(b) == 1 and ledger.next(c) == 2


# ---- latency spec ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.2", LatencySpec("fixed", 0.2)),
        ("fixed:0.2", LatencySpec("fixed", 0.2)),
        ("uniform:0.1,0.3", LatencySpec("uniform", 0.1, 0.3)),
        ("uniform:low=0.1, high=0.3", LatencySpec("uniform", 0.1, 0.3)),
        ("lognormal:median=0.2,sigma=0.5", LatencySpec("lognormal", 0.2, 0.5)),
        ("LogNormal:0.2,0.5,max=3", LatencySpec("lognormal", 0.2, 0.5, 3.0)),
    ],
)
def test_latency_spec_parses(text: str, expected: LatencySpec) -> None:
    spec = LatencySpec.parse(text)
    assert spec == expected
    assert LatencySpec.parse(str(spec)) == spec


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("gamma:1,2", "unknown distribution 'gamma'"),
        ("uniform:0.3", "uniform needs high"),
        ("uniform:0.3,0.1", "low must be <= high"),
        ("uniform:0.1,0.2,0.3", "'0.3': too many parameters"),
        ("lognormal:median=0.2,mu=1", "'mu=1': lognormal takes median, sigma, max"),
        ("lognormal:median=0,sigma=1", "median must be > 0"),
        ("fixed:-1", "'-1': s must be >= 0"),
        ("fixed:soon", "'soon' is not a number"),
        ("uniform:0.1,,0.3", "empty parameter"),
        ("uniform:low=0.1,low=0.2", "low given twice"),
    ],
)
def test_latency_spec_errors_name_the_bad_item(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match="latency spec") as info:
        LatencySpec.parse(text)
    assert fragment in str(info.value)


def _samples(spec: LatencySpec, n: int = 4001) -> list[float]:
    return [spec.sample(request_rng(0, body_digest(str(i).encode()), 1)) for i in range(n)]


def test_latency_distributions_have_the_right_medians_and_bounds() -> None:
    assert set(_samples(LatencySpec.parse("fixed:0.2"), 10)) == {0.2}
    uniform = _samples(LatencySpec.parse("uniform:0.1,0.3"))
    assert min(uniform) >= 0.1 and max(uniform) <= 0.3
    assert statistics.median(uniform) == pytest.approx(0.2, abs=0.01)
    lognormal = _samples(LatencySpec.parse("lognormal:median=0.2,sigma=0.5"))
    assert statistics.median(lognormal) == pytest.approx(0.2, rel=0.05)
    # sigma is the spread of log-latency
    logs = [math.log(x) for x in lognormal]
    assert statistics.pstdev(logs) == pytest.approx(0.5, rel=0.05)
    capped = _samples(LatencySpec.parse("lognormal:median=0.2,sigma=2,max=0.5"))
    assert max(capped) == 0.5
    assert LatencySpec.parse("lognormal:median=0.2,sigma=2").upper is None
    assert not LatencySpec.parse("fixed:0") and LatencySpec.parse("0.1")


# ---- outage ------------------------------------------------------------------------------------


def test_outage_parsing() -> None:
    assert parse_outage("10,5") == (10.0, 5.0)
    assert parse_outage(" 0 , 0.5 ") == (0.0, 0.5)
    for bad, fragment in [("10", "START,DURATION"), ("a,5", "'a' is not a number"),
                          ("-1,5", "start must be >= 0"), ("1,0", "duration must be > 0")]:
        with pytest.raises(ValueError, match="outage") as info:
            parse_outage(bad)
        assert fragment in str(info.value)


# ---- rate limiter ------------------------------------------------------------------------------


def test_rpm_window_slides_and_says_when_a_slot_frees() -> None:
    lim = RateLimiter(rpm=3)
    for t in (0.0, 10.0, 20.0):
        decision, entry = lim.admit(t, 1)
        assert decision.allowed and entry is not None
    assert decision.remaining_requests == 0
    refused, entry = lim.admit(30.0, 1)
    assert not refused.allowed and entry is None and refused.limited_by == "requests"
    assert refused.retry_after_s == pytest.approx(30.0)  # the t=0 request leaves at 60
    assert not lim.admit(59.9, 1)[0].allowed
    assert lim.admit(60.0, 1)[0].allowed  # exactly when Retry-After said
    assert lim.admit(65.0, 1)[0].retry_after_s == pytest.approx(5.0)  # the t=10 one at 70


def test_tpm_window_counts_prompt_and_completion_tokens() -> None:
    lim = RateLimiter(tpm=100)
    _, first = lim.admit(0.0, 30)
    lim.add_tokens(first, 20)  # the completion: 50 in the window
    lim.admit(5.0, 40)  # 90
    decision = lim.check(6.0, 20)
    assert not decision.allowed and decision.limited_by == "tokens"
    assert decision.remaining_tokens == 10
    assert decision.retry_after_s == pytest.approx(54.0)  # the first entry leaves at 60
    assert lim.check(6.0, 10).allowed
    need_both = lim.check(6.0, 70)  # needs the second entry gone too: at 65
    assert need_both.retry_after_s == pytest.approx(59.0)
    never = lim.check(6.0, 101)
    assert not never.allowed and never.retry_after_s == math.inf
    assert lim.remaining(60.0) == (None, 60)
    lim.add_tokens(first, 1000)  # late tokens of an expired entry no longer count
    assert lim.remaining(60.0) == (None, 60)


def test_limiter_reports_the_longer_wait_and_refuses_bad_limits() -> None:
    lim = RateLimiter(rpm=1, tpm=10)
    lim.admit(0.0, 10)
    d = lim.check(30.0, 5)
    assert not d.allowed and d.retry_after_s == pytest.approx(30.0)
    with pytest.raises(ValueError, match="rpm limit must be >= 1"):
        RateLimiter(rpm=0)


# ---- prefix cache ------------------------------------------------------------------------------


def test_prefix_cache_finds_the_longest_seen_prefix() -> None:
    cache = PrefixCache()
    msgs = [b'{"role":"system","content":"s"}', b'{"role":"user","content":"a"}',
            b'{"role":"assistant","content":"b"}']
    first = cache.prefixes("m", None, msgs[:2])
    assert cache.lookup(first) == 0
    cache.remember(first)
    grown = cache.prefixes("m", None, msgs)
    assert cache.lookup(grown) == len(msgs[0]) + len(msgs[1]) + 2
    assert cache.lookup(cache.prefixes("other-model", None, msgs)) == 0
    assert cache.lookup(cache.prefixes("m", b"[tools]", msgs)) == 0  # tools come first
    # A full prefix is never longer than the encoded prompt: "[" + ",".join(msgs) + "]".
    assert grown[-1][1] == len(b"[" + b",".join(msgs) + b"]") - 1


def test_prefix_cache_with_tools_and_lru_bound() -> None:
    cache = PrefixCache(max_entries=3)
    with_tools = cache.prefixes("m", b"[tools]", [b"x", b"y"])
    assert [size for _, size in with_tools] == [7, 9, 11]
    cache.remember(with_tools)
    assert cache.lookup(cache.prefixes("m", b"[tools]", [b"z"])) == 7  # the tools alone
    cache.remember(cache.prefixes("n", None, [b"q"]))
    assert len(cache) == 3
    assert cache.lookup(cache.prefixes("m", b"[tools]", [b"z"])) == 0  # evicted, oldest first
