"""The live progress display counts what the sweep reports and renders it per endpoint."""

from __future__ import annotations

import io

from rich.console import Console

from sweepbench.config import Endpoint
from sweepbench.runner.progress import ProgressDisplay
from sweepbench.wire import EpisodeRecord, Usage


class Result:
    def __init__(self, usage, attempts=1, rate_limited=0):
        self.usage, self.attempts, self.rate_limited = usage, attempts, rate_limited


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
