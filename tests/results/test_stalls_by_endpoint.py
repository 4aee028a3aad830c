"""Hung and hedged requests per endpoint in the report's profile (not only in the live line):
counted from every journaled call, judges' too, shown in the terminal and the HTML report."""

from __future__ import annotations

import io
import json

from rich.console import Console

from sweepbench.results.profile import endpoint_stalls
from sweepbench.results.render.html import _stalls
from sweepbench.results.render.terminal import render
from sweepbench.store.reads import ModelCallRow


def call(endpoint: str, stalls: dict | str | None, journal: str = "") -> ModelCallRow:
    raw = stalls if stalls is None or isinstance(stalls, str) else json.dumps(stalls)
    return ModelCallRow("ep-1", journal, "r", endpoint, "agent", 10, 2, 0, 0.1, 1, None, raw)


CALLS = [
    call("agent-x", None), call("agent-x", {"hung": 2, "hedged": 1, "hedge_won": True}),
    call("agent-x", {"hung": 0, "hedged": 2, "hedge_won": False}),
    call("user-y", None), call("user-y", None),
    call("judge-z", {"hung": 1, "hedged": 0}, journal="judge|judge-z|sliding"),
    call("judge-z", "{not json"), call("quiet", {"hung": 0, "hedged": 0}),
]


def test_stalls_are_counted_per_endpoint_judges_included_quiet_endpoints_left_out():
    assert endpoint_stalls(CALLS) == {
        "agent-x": {"calls": 3, "hung": 2, "hedged": 3, "hedge_wins": 1},
        "judge-z": {"calls": 2, "hung": 1, "hedged": 0, "hedge_wins": 0}}


def test_the_terminal_and_the_html_report_show_them():
    report = {"benchmarks": {}, "models": {}, "stalls_by_endpoint": endpoint_stalls(CALLS)}
    console = Console(record=True, width=100, file=io.StringIO())
    console.print(render(report))
    lines = console.export_text().splitlines()
    start = lines.index("requests abandoned for want of a first byte (hung) and hedged, per "
                        "endpoint")
    assert [line.split() for line in lines[start + 2:start + 6]] == [
        ["┃", "Endpoint", "┃", "Calls", "┃", "Hung", "┃", "Hedged", "┃", "Won", "by", "a",
         "copy", "┃"], ["┡━━━━━━━━━━╇━━━━━━━╇━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━┩"],
        ["│", "agent-x", "│", "3", "│", "2", "│", "3", "│", "1", "│"],
        ["│", "judge-z", "│", "2", "│", "1", "│", "0", "│", "0", "│"]]
    html = _stalls(report)
    assert "<td>agent-x</td>" in html and "Hung (abandoned)" in html
    assert _stalls({"stalls_by_endpoint": {}}) == ""
