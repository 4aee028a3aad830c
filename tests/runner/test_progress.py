"""The live progress display counts what the sweep reports and renders it per endpoint."""

from __future__ import annotations

import io
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
