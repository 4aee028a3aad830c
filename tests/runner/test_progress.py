"""The live progress display counts what the sweep reports and renders it per endpoint."""

from __future__ import annotations

import io
import types
import time

import pytest
from rich.console import Console

from sweepbench.config import Endpoint
from sweepbench.errors import ServerError
from sweepbench.runner.progress import ProgressDisplay
from sweepbench.wire import EpisodeRecord, Usage


class Result:
    def __init__(self, usage, attempts=1, rate_limited=0, latency_s=0.0):
        self.usage, self.attempts, self.rate_limited = usage, attempts, rate_limited
        self.latency_s = latency_s


def test_counts_costs_and_rates_per_endpoint():
    prices = {"m": Endpoint(name="m", price_input_per_mtok=2.0, price_cached_input_per_mtok=0.5,
                            price_output_per_mtok=8.0)}
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    display = ProgressDisplay(console, prices=prices)
    display.update("planned", total=3, skipped=1)
    display.update("started")
    display.update("call", endpoint="m", result=Result(Usage(1_000_000, 100_000, 400_000)))
    display.update("call", endpoint="m", result=Result(Usage(10, 10, 0), attempts=3, rate_limited=1))
    display.update("call", endpoint="u", result=Result(Usage(5, 5, 0)))
    display.update("finished", record=EpisodeRecord(run_id="r", model="m", benchmark="b",
                                                    domain="d", task_id="t", trial=0,
                                                    termination="error"))
    m = display.endpoints["m"]
    assert (m.calls, m.retries, m.rate_limited) == (2, 2, 1)
    # 600k uncached x $2 + 400k cached x $0.5 + 100k out x $8, per million (+ the small call)
    assert abs(m.cost - (1.2 + 0.2 + 0.8) - (10 * 2 + 10 * 8) / 1e6) < 1e-9
    assert display.endpoints["u"].cost == 0.0 and display.failed == 1 and display.done == 1
    console.print(display._render())
    text = console.file.getvalue()
    assert "1/3 done" in text and "1 already stored" in text and "50.0%" in text  # 429 share


def test_plain_lines_when_not_a_terminal():
    console = Console(file=io.StringIO(), force_terminal=False, width=200)
    display = ProgressDisplay(console, log_every_s=0.0)
    with display:
        display.update("planned", total=2, skipped=0)
        display.update("started")
    assert "0/2 done" in console.file.getvalue() and "1 in flight" in console.file.getvalue()


# ---- slow and failing endpoints, and the periodic line (issue 15, defect 5) ------------------


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def plain(**kw):
    console = Console(file=io.StringIO(), force_terminal=False, width=400)
    clock = FakeClock()
    return ProgressDisplay(console, clock=clock, **kw), console.file, clock


def test_a_line_every_interval_even_when_nothing_happens():
    display, out, clock = plain(log_every_s=15.0)
    display.update("planned", total=4, skipped=0)
    display.update("call", endpoint="slow", result=Result(Usage(10, 5, 0), latency_s=40.0))
    assert out.getvalue() == ""
    clock.t += 14.9
    assert not display.tick()
    clock.t += 0.2
    assert display.tick()  # no update came: the line is printed anyway
    line = out.getvalue()
    assert "slow: 1 calls, 40.0 s/call, last done 15s ago" in line
    assert "4.0 model calls/min" in line  # not "0.0 model calls/s"
    assert not display.tick()  # and not again before another interval
    clock.t += 300
    assert display.tick() and "last done 315s ago" in out.getvalue()


def test_the_ticker_thread_prints_while_the_sweep_is_stalled():
    console = Console(file=io.StringIO(), force_terminal=False, width=200)
    display = ProgressDisplay(console, log_every_s=0.05)  # the wall clock is the point
    with display:
        display.update("planned", total=1, skipped=0)
        deadline = time.monotonic() + 5.0
        while console.file.getvalue().count("0/1 done") < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert console.file.getvalue().count("0/1 done") >= 2


def test_an_endpoint_whose_calls_all_fail_shows_its_latest_error():
    display, out, clock = plain(log_every_s=15.0)
    display.update("planned", total=4, skipped=0)
    display.update("call", endpoint="m", result=Result(Usage(10, 5, 0)))
    for i in range(5):
        err = ServerError(f"m: HTTP 500: boom {i}", endpoint="m", status=500)
        err.attempts = 7
        display.update("call", endpoint="m", result=err)
    clock.t += 15
    display.tick()
    assert "m: 1 calls, 0.0 s/call, 5 failed" in out.getvalue()
    assert "last 5 calls failed; latest error: m: HTTP 500: boom 4" in out.getvalue()
    assert display.endpoints["m"].retries == 30


def test_an_open_breaker_is_shown_with_the_failure_behind_it():
    class Client:
        def health(self):
            return {"breaker": "open", "failing": 3, "last_failure": "HTTP 503: overloaded",
                    "since_ok_s": None}

    display, out, clock = plain(log_every_s=15.0)
    display.update("planned", total=4, skipped=0)
    display.update("clients", clients={"judge": Client()})
    clock.t += 15
    display.tick()  # nothing completed yet: the endpoint is shown from its client
    assert "judge: no call done yet, breaker open; latest error: HTTP 503: overloaded" \
        in out.getvalue()
    console = Console(file=io.StringIO(), force_terminal=True, width=250)
    console.print(display._render())
    assert "breaker open" in console.file.getvalue()


def test_an_open_breaker_says_what_it_waits_for_and_when_calls_give_up():
    class Client:
        def __init__(self, **more):
            self.more = more

        def health(self):
            return {"breaker": "open", "failing": 12, "last_failure": "HTTP 503: overloaded",
                    "since_ok_s": 42.0, "open_for_s": 30.4, "probe_in_s": 8.0,
                    "max_wait_s": 600.0, "gives_up_in_s": 569.6, **self.more}

    display, out, clock = plain(log_every_s=15.0)
    display.update("planned", total=4, skipped=0)
    display.update("clients", clients={"a": Client(), "b": Client(max_wait_s=None),
                                       "c": Client(breaker="half_open", probe_in_s=0.0)})
    clock.t += 15
    display.tick()
    text = " ".join(out.getvalue().split())  # as one line, wherever the console wrapped it
    assert ("a: no call done yet, breaker open for 30s, waiting for the endpoint to answer a "
            "probe (next probe in 8s); waiting calls fail after 600s (breaker_max_wait_s), the "
            "first in 570s; latest error: HTTP 503: overloaded") in text
    assert ("b: no call done yet, breaker open for 30s, waiting for the endpoint to answer a "
            "probe (next probe in 8s); waiting calls wait until it answers (no "
            "breaker_max_wait_s); latest error: HTTP 503: overloaded") in text
    assert ("c: no call done yet, breaker half-open for 30s, waiting for the endpoint to answer "
            "a probe (a probe in flight); waiting calls fail after 600s") in text


def test_reasoning_share_and_cost_counted_once():
    prices = {"r": Endpoint(name="r", price_input_per_mtok=1.0, price_output_per_mtok=10.0)}
    display, out, clock = plain(prices=prices)
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000, reasoning_tokens=800_000)
    display.update("call", endpoint="r", result=Result(usage))
    e = display.endpoints["r"]
    assert e.reasoning == 800_000 and e.cost == pytest.approx(11.0)  # reasoning inside output


@pytest.mark.parametrize("width", [80, 100])
def test_a_narrow_terminal_gets_fewer_columns_each_readable(width):
    console = Console(file=io.StringIO(), force_terminal=True, width=width)
    display = ProgressDisplay(console)
    display.update("planned", total=3, skipped=0)
    for name in ("scripted/noisy:0.3", "scripted/oracle"):
        display.update("call", endpoint=name, result=Result(Usage(1000, 10, 0), latency_s=0.2))
    console.print(display._render())
    text = console.file.getvalue()
    header = next(line for line in text.splitlines() if "endpoint" in line)
    assert "…" not in text and "scripted/noisy:0.3" in text  # nothing cut
    assert all(c in header for c in ("calls", "s/call", "429s", "retries", "hung", "$", "status"))
    assert "reasoning" not in header and "tokens/s" not in header
    wide = Console(file=io.StringIO(), force_terminal=True, width=160)
    ProgressDisplay(wide).update("planned", total=1, skipped=0)
    display.console = wide
    wide.print(display._render())
    assert "reasoning" in wide.file.getvalue() and "…" not in wide.file.getvalue()


def test_episodes_asleep_on_a_lent_slot_are_shown_in_the_summary():
    from sweepbench.client.hedging import IdleSlots
    from sweepbench.runner.slots import Slots

    display = ProgressDisplay(Console(file=io.StringIO(), width=200))
    slots = Slots(2, IdleSlots())
    display.update("slots", slots=slots)
    display.update("planned", total=5, skipped=0)
    for _ in range(3):
        display.update("started")
    assert "3 in flight ·" in display._summary().plain  # nobody asleep: nothing said
    slots.asleep = 1
    assert "3 in flight (1 asleep, slot lent) ·" in display._summary().plain


# ---- a model with several ways in (client/fleet.py) ------------------------------------------


class FleetStub:
    def replicas(self):
        return [{"replica": "http://a/v1", "in_flight": 3, "calls": 2, "failed": 0,
                 "drained": False},
                {"replica": "http://b/v1", "in_flight": 0, "calls": 1, "failed": 1,
                 "drained": True}]

    def health(self):
        return {"breaker": "closed", "failing": 0, "last_failure": None, "since_ok_s": 0.0}


def test_a_fleet_shows_each_replicas_load_latency_errors_and_cached_share():
    from sweepbench.client.results import AttemptFailure

    console = Console(file=io.StringIO(), force_terminal=False, width=300)
    display = ProgressDisplay(console, log_every_s=0.0, clock=lambda: 10.0)
    display.update("clients", clients={"m": FleetStub()})
    for latency, cached in ((0.5, 75), (1.5, 25)):
        r = Result(Usage(100, 0, cached), latency_s=latency)
        r.replica = "http://a/v1"
        r.failures = [AttemptFailure(error="ConnectionRefused", replica="http://b/v1")]
        display.update("call", endpoint="m", result=r)
    rows = [line for line in display._endpoint_bits(10.0) if " via " in line]
    assert rows == [
        "m via http://a/v1: 3 in flight, 2 calls, 1.00 s/call, 50% cached, 0 errors, up",
        "m via http://b/v1: 0 in flight, 0 calls, - s/call, - cached, 2 errors, drained"]
    wide = Console(file=io.StringIO(), force_terminal=True, width=200)
    wide.print(display._render())
    assert "via http://b/v1" in wide.file.getvalue() and "drained" in wide.file.getvalue()


async def test_a_live_client_whose_breaker_opened_after_working_says_so_in_the_log():
    from ..client.rig import OK, Rig, status

    rig = Rig(OK, status(503, "overloaded"), max_retries=0, breaker_threshold=1,
              breaker_cooldown_s=20.0, breaker_max_wait_s=300.0)
    await rig()  # it worked once
    with pytest.raises(ServerError):
        await rig()  # then fails: the breaker opens
    rig.clock.advance(5.0)
    display, out, clock = plain(log_every_s=15.0)
    display.update("planned", total=1, skipped=0)
    display.update("clients", clients={"m": rig.client})
    clock.t += 15
    display.tick()
    assert ("m: no call done yet, breaker open for 5s, waiting for the endpoint to answer a "
            "probe (next probe in 15s); waiting calls fail after 300s (breaker_max_wait_s), "
            "the first in 295s; latest error: HTTP 503: overloaded") \
        in " ".join(out.getvalue().split())


class Call:
    """A call's result with any of the attributes the display reads."""

    def __init__(self, usage, **kw):
        self.usage = usage
        self.__dict__.update(kw)


def test_the_plain_line_says_every_count_exactly():
    display, out, clock = plain(log_every_s=10.0)
    display.update("planned", total=10, skipped=2)
    for _ in range(4):
        display.update("started")
    display.update("call", endpoint="a", result=Call(
        Usage(100, 10, 40), latency_s=2.0, attempts=3, rate_limited=1, hung=2, hedged=1,
        hedge_won=True))
    clock.t += 50
    display.update("finished", record=None)  # a record-less end is no failure
    assert display.failed == 0
    assert out.getvalue() == (
        "episodes 1/10 done · 3 in flight · 0 failed · 2 already stored · 1.2 model calls/min"
        " · 2 hung requests abandoned · 1 hedged · $0.0000 · 50s · ETA 450s"
        " | a: 1 calls, 2.0 s/call, 2 hung (abandoned, no first byte), 1 hedged (1 won by the "
        "copy), last done 50s ago\n")
    e = display.endpoints["a"]
    assert (e.calls, e.prompt, e.cached, e.completion, e.reasoning, e.retries, e.rate_limited,
            e.hung, e.hedged, e.hedge_wins, e.latency, e.last_done) == (
        1, 100, 40, 10, 0, 2, 1, 2, 1, 1, 2.0, 100.0)


def test_the_terminal_table_shows_each_column_exactly():
    console = Console(file=io.StringIO(), force_terminal=True, width=200, color_system=None)
    clock = FakeClock()
    display = ProgressDisplay(console, clock=clock)
    display.update("planned", total=10, skipped=2)
    display.update("call", endpoint="a", result=Call(
        Usage(100, 10, 40, reasoning_tokens=5), latency_s=2.0, attempts=3, rate_limited=1,
        hung=2, hedged=1, hedge_won=True))
    display.update("call", endpoint="b", result=Call(Usage(0, 0, 0), latency_s=1.0))
    clock.t += 50
    console.print(display._render())
    lines = [" ".join(line.split()) for line in console.file.getvalue().splitlines()]
    assert lines[1:] == [
        "endpoint calls s/call last done tokens/s cached reasoning 429s retries hung hedged $ status",
        "a 1 2.0 50s ago 2 40% 50% 100.0% 200.0% 2 1 (1 won) 0.0000 ok",
        "b 1 1.0 50s ago 0 - - 0.0% 0.0% 0 0 0.0000 ok"]
    assert lines[0].startswith("episodes 0/10 done · 0 in flight · 0 failed · 2 already stored")
    display.update("clients", clients={"c": object()})  # a client without calls or health
    console.file.truncate(0)
    console.file.seek(0)
    console.print(display._render())
    row = [" ".join(line.split()) for line in console.file.getvalue().splitlines()][-1]
    assert row == "c 0 - - 0 - - - - 0 0 0.0000 ok"


def test_the_summary_speed_eta_and_cost():
    prices = {"p": Endpoint(name="p", price_input_per_mtok=1.0, price_output_per_mtok=2.0)}
    display, out, clock = plain(prices=prices, log_every_s=1000.0)
    display.update("planned", total=3, skipped=0)
    assert display._summary().plain == (
        "episodes 0/3 done · 0 in flight · 0 failed · 0 already stored · 0.0 model calls/s · "
        "$0.0000 · 0s · ETA -")
    for _ in range(30):
        display.update("call", endpoint="p", result=Call(Usage(1000, 500, 0)))
    display.update("started")
    display.update("finished", record=EpisodeRecord(
        run_id="r", model="m", benchmark="b", domain="d", task_id="t", trial=0,
        termination="user_stop"))
    clock.t += 10
    assert display._summary().plain == (
        "episodes 1/3 done · 0 in flight · 0 failed · 0 already stored · 3.0 model calls/s · "
        "$0.0600 · 10s · ETA 20s")
    for _ in range(2):
        display.update("finished", record=None)
    assert display._summary().plain.endswith("· 10s · ETA -")  # nothing left
    # exactly one call a second is said per second
    display, _, clock = plain()
    display.update("planned", total=1, skipped=0)
    display.update("call", endpoint="x", result=Call(Usage(1, 1, 0)))
    clock.t += 1
    assert "· 1.0 model calls/s ·" in display._summary().plain
    clock.t += 1
    assert "· 30.0 model calls/min ·" in display._summary().plain


def test_hedges_are_billed_and_a_price_missing_costs_nothing():
    prices = {"p": Endpoint(name="p", price_input_per_mtok=1.0, price_cached_input_per_mtok=0.5,
                            price_output_per_mtok=2.0)}
    display, _, _ = plain(prices=prices)
    display.update("call", endpoint="p", result=Call(
        Usage(1_000_000, 1_000_000, 500_000), hedge_usage=Usage(2_000_000, 0, 0)))
    # (500k x $1 + 500k x $0.5 + 1M x $2) + 2M x $1, per million
    assert display.endpoints["p"].cost == pytest.approx(2.75 + 2.0)
    display.update("call", endpoint="p", result=Call(Usage(1_000_000, 0, 0), hedge_usage=None))
    assert display.endpoints["p"].cost == pytest.approx(5.75)
    display.update("call", endpoint="free", result=Call(Usage(1_000_000, 0, 0)))
    assert display.endpoints["free"].cost == 0.0


def test_a_failed_call_and_a_retried_one_leave_their_errors():
    class Failure:
        def __init__(self, message):
            self.message = message

        def __str__(self):
            return f"failure {self.message!r}"

    display, out, clock = plain(log_every_s=1.0)
    err = ServerError("m: HTTP 500: boom", endpoint="m", status=500)  # no attempts recorded
    display.update("call", endpoint="m", result=err)
    e = display.endpoints["m"]
    assert (e.failed_calls, e.retries, e.last_error, list(e.recent)) == (
        1, 0, "m: HTTP 500: boom", [False])
    assert (e.calls, e.hung, e.hedged, e.hedge_wins) == (0, 0, 0, 0)
    display.update("call", endpoint="m", result=Call(
        Usage(1, 1, 0), failures=[Failure("first"), Failure("")], attempts=0))
    assert e.last_error == "failure ''" and e.retries == 0 and list(e.recent) == [False, True]
    display.update("call", endpoint="m", result=Call(Usage(1, 1, 0), failures=["plain text"]))
    assert e.last_error == "plain text"
    display.update("call", endpoint="m", result=Call(Usage(1, 1, 0), failures=[]))
    assert e.last_error == "plain text"  # an answer without failures keeps the last error
    for _ in range(5):
        display.update("call", endpoint="m", result=Call(Usage(1, 1, 0)))
    assert len(e.recent) == 5 and all(e.recent)


def test_trouble_is_said_from_health_or_the_recent_calls():
    class Client:
        def __init__(self, **health):
            self.h = health

        def health(self):
            return self.h

    display, _, _ = plain()
    display.update("clients", clients={
        "half": Client(breaker="half_open", last_failure=None),
        "closed": Client(breaker="closed", failing=1, last_failure="x"),
        "two": Client(breaker="closed", failing=2, last_failure="HTTP 429:\n  slow"),
        "none": Client(), "nohealth": object()})
    assert display._trouble("half", None) == "breaker half-open; latest error: -"
    assert display._trouble("closed", None) is None
    assert display._trouble("two", None) == "2 requests failed in a row; latest: HTTP 429: slow"
    assert display._trouble("none", None) is None and display._trouble("nohealth", None) is None
    assert display._trouble("unknown", None) is None
    err = ServerError("m: HTTP 500: " + "x" * 300, endpoint="m", status=500)
    display.update("call", endpoint="nohealth", result=err)
    said = display._trouble("nohealth", display.endpoints["nohealth"])
    assert said == "last 1 calls failed; latest error: " + ("m: HTTP 500: " + "x" * 300)[:157] + "..."
    # health's failure wins over the endpoint's own; one that worked again is no trouble
    display.update("call", endpoint="half", result=err)
    assert display._trouble("half", display.endpoints["half"]) == (
        "breaker half-open; latest error: " + str(err)[:157] + "...")
    display.update("call", endpoint="nohealth", result=Call(Usage(1, 1, 0)))
    assert display._trouble("nohealth", display.endpoints["nohealth"]) is None


def test_short_errors_are_one_line_escaped_and_cut_at_160():
    from sweepbench.runner.progress import _short

    assert _short(None) == "-" and _short("") == "-"
    assert _short(" a\n\tb \x1b[2J ") == "a b \\x1b[2J"
    assert _short("y" * 160) == "y" * 160
    assert _short("y" * 161) == "y" * 157 + "..."


def test_no_line_is_printed_when_disabled_or_live():
    display, out, clock = plain(enabled=False, log_every_s=1.0)
    clock.t += 100
    assert not display.tick() and out.getvalue() == ""
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    live = ProgressDisplay(console, log_every_s=0.0)
    assert live.live and not live.tick()
    assert not ProgressDisplay(console, enabled=False).live
    # a plain display with the interval at 0 starts no ticker thread; a live one no ticker
    quiet, _, _ = plain(log_every_s=0.0)
    with quiet:
        assert quiet._ticker is None
    with plain(enabled=False, log_every_s=1.0)[0] as off:
        assert off._ticker is None and off._live is None


class Ticking:
    """A clock that moves a quarter second each time it is read."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        self.t += 0.25
        return self.t


def test_the_table_aligns_names_and_status_left_and_numbers_right_of_one_moment():
    console = Console(file=io.StringIO(), force_terminal=True, width=200, color_system=None)
    display = ProgressDisplay(console, clock=Ticking())
    display.update("planned", total=4, skipped=0)
    display.update("call", endpoint="long-name\nx", result=Call(
        Usage(100, 10, 40, reasoning_tokens=5), latency_s=1.0, attempts=2, hung=1))
    display.update("call", endpoint="long-name\nx", result=Call(
        Usage(50, 30, 10, reasoning_tokens=5), latency_s=2.0, rate_limited=1, hedged=2,
        hedge_won=True))
    for _ in range(5):
        display.update("call", endpoint="b", result=RuntimeError("down"))
    console.print(display._render())
    assert [line.rstrip() for line in console.file.getvalue().splitlines()] == [
        "episodes 0/4 done · 0 in flight · 0 failed · 0 already stored · 30.0 model calls/min"
        " · 1 hung requests abandoned · 2 hedged · $0.0000 · 4s · ETA -",
        "endpoint        calls  s/call  last done  tokens/s  cached  reasoning   429s  retries"
        "  hung     hedged       $  status",
        "b                   0       -     0s ago         0       -          -      -        -"
        "     0          0  0.0000  last 5 calls failed; latest error: down",
        "long-name\\x0ax      2     1.5     3s ago        48     33%        25%  50.0%    50.0%"
        "     1  2 (1 won)  0.0000  ok"]
    # 120 columns are wide enough for every column
    console = Console(file=io.StringIO(), force_terminal=True, width=120, color_system=None)
    display.console = console
    console.print(display._render())
    assert "tokens/s" in console.file.getvalue()


def test_tokens_per_second_in_the_first_second():
    console = Console(file=io.StringIO(), force_terminal=True, width=200, color_system=None)
    clock = FakeClock()
    display = ProgressDisplay(console, clock=clock)
    display.update("call", endpoint="a", result=Call(Usage(100, 50, 0)))
    clock.t += 0.5
    console.print(display._render())
    assert " 300 " in console.file.getvalue().splitlines()[2]


def test_counts_add_up_over_calls():
    display, out, clock = plain()
    for hung, hedged in ((1, 1), (2, 3)):
        display.update("call", endpoint="a", result=Call(
            Usage(100, 10, 40, reasoning_tokens=3), latency_s=1.5, attempts=3, rate_limited=2,
            hung=hung, hedged=hedged, hedge_won=True))
    e = display.endpoints["a"]
    assert (e.calls, e.prompt, e.cached, e.completion, e.reasoning, e.retries, e.rate_limited,
            e.hung, e.hedged, e.hedge_wins, e.latency) == (2, 200, 80, 20, 6, 4, 4, 3, 4, 2, 3.0)
    assert display._endpoint_bits(clock.t) == [
        "a: 2 calls, 1.5 s/call, 3 hung (abandoned, no first byte), 4 hedged (2 won by the copy), "
        "last done 0s ago"]
    display.update("call", endpoint="a\nb", result=Call(Usage(1, 1, 0)))
    assert display._endpoint_bits(clock.t)[1] == "a\\x0ab: 1 calls, 0.0 s/call, last done 0s ago"
    # a usage without reasoning counts none; a failure without attempts retried none
    display.update("call", endpoint="b", result=Call(types.SimpleNamespace(
        prompt_tokens=1, cached_prompt_tokens=0, completion_tokens=1)))
    display.update("call", endpoint="b", result=RuntimeError("x"))
    b = display.endpoints["b"]
    assert (b.reasoning, b.retries, b.failed_calls, b.last_error, b.latency) == (0, 0, 1, "x", 0.0)


def test_hung_alone_is_said_in_the_line_and_the_summary():
    display, out, clock = plain(log_every_s=1.0)
    display.update("planned", total=1, skipped=0)
    display.update("call", endpoint="a", result=Call(Usage(1, 1, 0), hung=1))
    clock.t += 1
    display.tick()
    line = out.getvalue()
    assert "· 1 hung requests abandoned · 0 hedged ·" in line
    assert "a: 1 calls, 0.0 s/call, 1 hung (abandoned, no first byte), 0 hedged" in line


def test_a_failure_with_a_message_is_shown_by_it():
    class Failure:
        message = "HTTP 503: busy"

    display, _, _ = plain()
    display.update("call", endpoint="a", result=Call(Usage(1, 1, 0), failures=[Failure()]))
    assert display.endpoints["a"].last_error == "HTTP 503: busy"


def test_failed_episodes_add_up():
    display, _, _ = plain()
    for _ in range(2):
        display.update("finished", record=EpisodeRecord(
            run_id="r", model="m", benchmark="b", domain="d", task_id="t", trial=0,
            termination="error"))
    assert display.failed == 2 and display.done == 2


def test_the_line_and_the_summary_are_of_the_moment_asked():
    display, _, clock = plain()
    display.update("planned", total=2, skipped=0)
    display.update("call", endpoint="a", result=Call(Usage(1, 1, 0)))
    assert "· 1.0 model calls/s · $0.0000 · 1s ·" in display._line(clock.t + 1).plain
    assert "· 30.0 model calls/min · $0.0000 · 2s ·" in display._summary(clock.t + 2).plain


def test_a_live_display_redraws_its_table_on_the_console_and_leaves_it():
    console = Console(file=io.StringIO(), force_terminal=True, width=200, color_system=None)
    display = ProgressDisplay(console, clock=FakeClock())
    with display:
        live = display._live
        assert live.console is console and live.refresh_per_second == 4
        assert not live.transient and display._ticker is None
        display.update("planned", total=7, skipped=0)
    assert display._live is live
    assert "episodes 0/7 done" in console.file.getvalue().splitlines()[-3]


def test_a_plain_display_ticks_in_a_daemon_thread_named_progress():
    display, out, clock = plain(log_every_s=3600.0)
    with display:
        ticker = display._ticker
        assert ticker.name == "progress" and ticker.daemon and ticker.is_alive()
    assert not ticker.is_alive() and display._live is None
    assert ProgressDisplay(Console(file=io.StringIO())).log_every_s == 15.0


def test_the_ticker_wakes_at_most_every_second_and_the_exit_waits_five():
    for every, wait in ((8.0, 1.0), (0.4, 0.1)):
        display, _, _ = plain(log_every_s=every)
        waits = []
        display._stop = types.SimpleNamespace(wait=lambda s: waits.append(s) or True,
                                              set=lambda: None)
        display._tick_forever()
        assert waits == [pytest.approx(wait)]
    joined = []
    display._ticker = types.SimpleNamespace(join=lambda timeout: joined.append(timeout))
    display.__exit__(None, None, None)
    assert joined == [5]


# ---- an adaptive sweep's rounds (issue 40) ---------------------------------------------------


def test_an_adaptive_sweeps_rounds_add_to_the_totals_and_never_start_over():
    """Each round is a sweep with its own "planned" (its new episodes, and the rounds before
    it as stored): the display adds them up, keeps its clock, and says the round."""
    display, _, clock = plain(log_every_s=1e9)

    def finish(n):
        for _ in range(n):
            display.update("started")
            display.update("finished", record=None)

    display.update("round", round=0, more=True)
    display.update("planned", total=6, skipped=2)  # 2 on record from an earlier invocation
    finish(6)
    clock.t += 30
    text = display._summary().plain
    assert "adaptive sweep, first trials · episodes 6 done of 6 planned so far, more " \
           "rounds may follow" in text and "2 already stored" in text
    display.update("round", round=1, more=True)
    display.update("planned", total=3, skipped=9)  # the 8 of round 0, 1 new one on record
    assert (display.done, display.total, display.skipped) == (6, 9, 3)
    assert display.t0 == 100.0  # the clock runs on: the rate is the whole sweep's
    finish(2)
    text = display._summary().plain
    assert "adaptive sweep, round 1 · episodes 8 done of 9 planned so far" in text
    assert "ETA 4s of those planned" in text  # 1 left at 8 episodes in 30 s
    finish(1)
    display.update("round", round=1, more=False, why="the target half-width was reached")
    text = display._summary().plain
    assert text.startswith("adaptive sweep stopped after round 1: the target half-width "
                           "was reached · episodes 9/9 done")
    assert "more rounds may follow" not in text


def test_a_fixed_sweeps_plan_still_sets_the_totals():
    display, _, _ = plain(log_every_s=1e9)
    display.update("planned", total=5, skipped=1)
    display.update("planned", total=4, skipped=2)  # a sweep planned anew (judge, say)
    assert (display.total, display.skipped) == (4, 2)
    assert display._summary().plain.startswith("episodes 0/4 done")


def test_a_fleets_rows_cover_every_way_in_seen_or_live_each_on_one_line():
    """A replica only seen in calls (no longer live) has a row too, with 0 in flight; names
    and labels with a line break stay on their line, escaped; the table's sub-rows put each
    cell under its column."""
    console = Console(file=io.StringIO(), force_terminal=True, width=200, color_system=None)
    display = ProgressDisplay(console, log_every_s=0.0, clock=lambda: 10.0)
    display.update("clients", clients={"m\nx": FleetStub()})
    r = Result(Usage(200, 0, 50), latency_s=3.0)
    r.replica = "http://c/v1\nX"
    display.update("call", endpoint="m\nx", result=r)
    rows = [line for line in display._endpoint_bits(10.0) if " via " in line]
    assert rows == [
        "m\\x0ax via http://a/v1: 3 in flight, 0 calls, - s/call, - cached, 0 errors, up",
        "m\\x0ax via http://b/v1: 0 in flight, 0 calls, - s/call, - cached, 0 errors, drained",
        ("m\\x0ax via http://c/v1\\x0aX: 0 in flight, 1 calls, 3.00 s/call, 25% cached, "
         "0 errors, up")]
    console.print(display._render())
    lines = [" ".join(line.split()) for line in console.file.getvalue().splitlines()]
    assert lines[-3:] == ["via http://a/v1 0 - - 3 in flight, 0 errors, up",
                          "via http://b/v1 0 - - 0 in flight, 0 errors, drained",
                          "via http://c/v1\\x0aX 1 3.00 25% 0 in flight, 0 errors, up"]
    table = display._render().renderables[1]
    cells = [[str(c) for c in col._cells] for col in table.columns]
    via = [i for i, name in enumerate(cells[0]) if "via" in name]
    assert [[col[i] for col in cells] for i in via][2] == [
        "  via http://c/v1\\x0aX", "1", "3.00", "", "", "25%", "", "", "", "", "", "",
        "0 in flight, 0 errors, up"]


def test_on_ray_each_workers_episodes_and_rate_are_said_dead_ones_so():
    display, _, clock = plain(log_every_s=15.0)
    rates = {"w1": {"episodes": 1200, "calls_per_s": 35.6, "alive": True},
             "w0": {"episodes": 3, "calls_per_s": 0.0, "alive": False}}
    display.update("planned", total=4, skipped=0)
    assert display._workers() is None and " | workers" not in display._line(clock.t).plain
    display.update("workers", workers=lambda: rates)
    workers = "workers: w0 3 ep 0 calls/s (dead), w1 1,200 ep 36 calls/s"
    assert display._workers().plain == workers
    assert display._line(clock.t).plain.endswith(" | " + workers)
    group = display._render().renderables
    assert len(group) == 3 and group[-1].plain == workers
    display.update("round", round=1, more=True)  # another kind leaves the workers as they are
    assert display._workers().plain == workers


def test_a_breakers_next_probe_is_said_while_open_and_due_later_only():
    from sweepbench.runner.progress import _breaker_wait

    base = {"open_for_s": 5.0, "max_wait_s": None, "gives_up_in_s": 0.0}
    assert "(next probe in 0s)" in _breaker_wait({**base, "breaker": "open", "probe_in_s": 0.4})
    assert "(a probe in flight)" in _breaker_wait({**base, "breaker": "open", "probe_in_s": 0.0})
    assert "(a probe in flight)" in _breaker_wait({**base, "breaker": "half_open",
                                                   "probe_in_s": 3.0})
    assert _breaker_wait({"breaker": "open"}) == ""


def test_a_round_planned_after_an_empty_one_adds_up_and_keeps_the_clock():
    display, _, clock = plain(log_every_s=1e9)
    display.update("round", round=0, more=True)
    display.update("planned", total=0, skipped=0)  # nothing new in the first trials
    clock.t += 10
    display.update("round", round=1, more=True)
    display.update("planned", total=3, skipped=0)
    assert (display.total, display.skipped, display.t0) == (3, 0, 100.0)
    display.update("planned", total=2, skipped=3)  # the 3 before, now on record: none new
    assert (display.total, display.skipped) == (5, 0)
    text = display._summary().plain
    assert "planned so far, more rounds may follow" in text and "of those planned" not in text
    display.update("round", round=2, more=False)  # stopped, no reason given
    assert display._summary().plain.startswith("adaptive sweep stopped after round 2:  · ")
