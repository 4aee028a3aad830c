"""The parser's argument types at their edges, and a bad value through the parser: one usage
line naming the option, exit status 2."""

from __future__ import annotations

import argparse

import pytest

from sweepbench.cli.parser import (
    build_parser,
    checked,
    non_negative_float,
    non_negative_int,
    port_number,
    positive_int,
)
from sweepbench.devserver.faults import parse_outage

TAKES = [
    (non_negative_float, "0", 0.0), (non_negative_float, "0.0", 0.0),
    (non_negative_float, "1e-9", 1e-9), (non_negative_float, "2.5", 2.5),
    (non_negative_float, " 7 ", 7.0), (non_negative_float, "1e308", 1e308),
    (positive_int, str((1 << 63) - 1), (1 << 63) - 1),
    (non_negative_int, "0", 0), (non_negative_int, str((1 << 63) - 1), (1 << 63) - 1),
    (positive_int, "1", 1), (positive_int, "2", 2), (positive_int, " 3 ", 3),
    (positive_int, "007", 7), (positive_int, "1_000", 1000),
    (port_number, "0", 0), (port_number, "1", 1), (port_number, "8000", 8000),
    (port_number, "65535", 65535),
]

REFUSES = [
    (non_negative_float, "-0.01", "must be >= 0, got -0.01"),
    (non_negative_float, "-inf", "must be >= 0, got -inf"),
    # NaN passes no comparison: refused, not a cap of NaN
    (non_negative_float, "nan", "must be >= 0, got nan"),
    (non_negative_float, "inf", "must be a finite number, got inf"),
    (non_negative_float, "1e999", "must be a finite number, got 1e999"),
    (non_negative_float, "abc", "'abc' is not a number"),
    (non_negative_float, "", "'' is not a number"),
    (non_negative_float, "$5", "'$5' is not a number"),
    (positive_int, "0", "must be >= 1, got 0"),
    (positive_int, "-2", "must be >= 1, got -2"),
    (positive_int, "1.5", "'1.5' is not an integer"),
    (positive_int, "1e3", "'1e3' is not an integer"),
    (positive_int, "", "'' is not an integer"),
    (positive_int, str(1 << 63), f"must be <= {(1 << 63) - 1}, got {1 << 63}"),
    (non_negative_int, "-1", "must be >= 0, got -1"),
    (non_negative_int, "1.0", "'1.0' is not an integer"),
    (port_number, "65536", "a port is 0..65535, got 65536"),
    (port_number, "-1", "a port is 0..65535, got -1"),
    (port_number, "http", "'http' is not a port number"),
    (port_number, "80.0", "'80.0' is not a port number"),
]


@pytest.mark.parametrize(("kind", "text", "value"), TAKES)
def test_an_argument_type_takes_the_values_of_its_range(kind, text, value):
    assert kind(text) == value


@pytest.mark.parametrize(("kind", "text", "message"), REFUSES)
def test_an_argument_type_refuses_what_is_outside_its_range_saying_why(kind, text, message):
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        kind(text)
    assert str(caught.value) == message


def test_checked_keeps_the_text_or_gives_the_parsed_value():
    assert checked(int)("5") == "5"
    assert checked(int, result=True)("5") == 5
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        checked(int)("five")
    assert str(caught.value) == "invalid literal for int() with base 10: 'five'"


def test_the_parser_applies_each_type_where_the_option_enters():
    parser = build_parser()
    assert parser.parse_args(["run", "--max-cost", "0"]).max_cost_usd == 0.0
    assert parser.parse_args(["report", "s.sqlite", "--k", "1"]).k == 1
    serve = parser.parse_args(["serve", "--port", "0", "--outage", "10,5",
                               "--latency", "fixed:0.5", "--faults", "429=0.1"])
    assert serve.port == 0
    assert serve.outage == parse_outage("10,5") == (10.0, 5.0)  # parsed
    assert (serve.latency, serve.faults) == ("fixed:0.5", "429=0.1")  # checked, kept as text
    assert serve.cache_entries == 200_000
    assert parser.parse_args(["serve", "--cache-entries", "0"]).cache_entries == 0
    assert parser.parse_args(["view", "s.sqlite"]).port == 8765


@pytest.mark.parametrize(("argv", "line"), [
    (["run", "--max-cost", "-1"],
     "error: sweepbench run: argument --max-cost: must be >= 0, got -1 "
     "(see sweepbench run --help)"),
    (["plan", "--max-cost", "nan"],
     "error: sweepbench plan: argument --max-cost: must be >= 0, got nan "
     "(see sweepbench plan --help)"),
    (["serve", "--cache-entries", "-1"],
     "error: sweepbench serve: argument --cache-entries: must be >= 0, got -1 "
     "(see sweepbench serve --help)"),
    (["run", "--latency", "inf"],
     "error: sweepbench run: argument --latency: must be a finite number, got inf "
     "(see sweepbench run --help)"),
    (["judge", "--latency", "nan"],
     "error: sweepbench judge: argument --latency: must be >= 0, got nan "
     "(see sweepbench judge --help)"),
    (["run", "--max-cost", "inf"],
     "error: sweepbench run: argument --max-cost: must be a finite number, got inf "
     "(see sweepbench run --help)"),
    (["run", "--trials", "0"],
     "error: sweepbench run: argument --trials/--epochs: must be >= 1, got 0 (see sweepbench run --help)"),
    (["plan", "--max-concurrency", "-3"],
     "error: sweepbench plan: argument --max-concurrency: must be >= 1, got -3 "
     "(see sweepbench plan --help)"),
    (["run", "--limit", "0"],
     "error: sweepbench run: argument --limit: must be >= 1, got 0 (see sweepbench run --help)"),
    (["run", "--error-streak", "-1"],
     "error: sweepbench run: argument --error-streak: must be >= 0, got -1 "
     "(see sweepbench run --help)"),
    (["judge", "--judge-concurrency", "0"],
     "error: sweepbench judge: argument --judge-concurrency: must be >= 1, got 0 "
     "(see sweepbench judge --help)"),
    (["report", "s.sqlite", "--seed", "-1"],
     "error: sweepbench report: argument --seed: must be >= 0, got -1 "
     "(see sweepbench report --help)"),
    (["serve", "--seed", str(1 << 64)],
     f"error: sweepbench serve: argument --seed: must be <= {(1 << 63) - 1}, got {1 << 64} "
     "(see sweepbench serve --help)"),
    (["serve", "--rpm", "0"],
     "error: sweepbench serve: argument --rpm: must be >= 1, got 0 (see sweepbench serve --help)"),
    (["view", "s.sqlite", "--port", "x"],
     "error: sweepbench view: argument --port: 'x' is not a port number "
     "(see sweepbench view --help)"),
])
def test_a_bad_value_is_one_usage_line_and_exit_2(argv, line, capsys):
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(argv)
    assert stopped.value.code == 2
    assert capsys.readouterr().err == line + "\n"
