"""What a report reads of a judgment's details: the numbers, flattened to a depth, and for a
large store only the parts a report reads (numbers, rubric decisions, error, unreachable)."""

from __future__ import annotations

import enum

import numpy as np

from sweepbench.results.details import numeric_details, report_details


class Level(enum.IntEnum):
    HIGH = 3


def test_numeric_details_flattens_objects_and_keeps_numbers_as_written():
    got = numeric_details({"tool": {"f1": 0.5, "n": 2}, "output_em": 1.0, "passed": True,
                           "why": "text", "items": [1, 2], "none": None})
    assert got == {"tool_f1": 0.5, "tool_n": 2, "output_em": 1.0, "passed": True}
    assert [type(v) for v in got.values()] == [float, int, float, bool]


def test_numeric_details_reads_on_past_what_it_skips():
    got = numeric_details({"why": "text", "a": 1, "items": [], "b": 2.5, "none": None, "c": True,
                           "inf": float("inf"), "d": 4})
    assert got == {"a": 1, "b": 2.5, "c": True, "d": 4}


def test_numeric_details_skips_non_finite_numbers_and_reads_number_subclasses():
    got = numeric_details({"inf": float("inf"), "ninf": float("-inf"), "nan": float("nan"),
                           "np": np.float64(0.25), "level": Level.HIGH, "zero": 0})
    assert got == {"np": 0.25, "level": 3, "zero": 0}


def test_numeric_details_reads_objects_down_to_the_depth():
    details = {"a": 1, "b": {"c": 2, "d": {"e": 3, "f": {"g": 4}}}}
    assert numeric_details(details) == {"a": 1, "b_c": 2}
    assert numeric_details(details, depth=1) == {"a": 1}
    assert numeric_details(details, depth=3) == {"a": 1, "b_c": 2, "b_d_e": 3}
    assert numeric_details(details, depth=4) == {"a": 1, "b_c": 2, "b_d_e": 3, "b_d_f_g": 4}


def test_numeric_details_of_anything_but_an_object_is_empty():
    for details in (None, [1, 2], "text", 3.5):
        assert numeric_details(details) == {}


def test_report_details_keeps_numbers_to_two_levels_and_drops_texts():
    details = {"score": 0.5, "passed": False, "calls": 3, "why": "a long reason",
               "tool": {"f1": 1.0, "note": "n", "deep": {"x": 1}}, "log": ["a", "b"]}
    assert report_details(details) == {"score": 0.5, "passed": False, "calls": 3,
                                       "tool": {"f1": 1.0}}


def test_report_details_keeps_error_and_unreachable_whatever_they_hold():
    assert report_details({"error": "boom", "unreachable": None, "other": None}) == {
        "error": "boom", "unreachable": None}
    assert report_details({"unreachable": "no such store"}) == {"unreachable": "no such store"}


def test_report_details_keeps_only_the_first_rubric_key_s_decisions():
    details = {"rubrics": [{"met": True, "reason": "long", "value": "yes", "score": 1},
                           {"satisfied": False, "passed": None, "pass": 1},
                           "a rubric as text", 7, None],
               "nl_rubrics": [{"met": False}]}
    assert report_details(details) == {"rubrics": [{"met": True, "value": ""},
                                                   {"satisfied": False, "passed": None, "pass": 1},
                                                   "", 7, None]}
    assert report_details({"rubric": {"r1": {"met": "yes"}, "r2": False, "r3": "text"},
                           "rubrics": [1]}) == {"rubric": {"r1": {"met": ""}, "r2": False, "r3": ""}}
    assert report_details({"nl_rubrics": "text"}) == {"nl_rubrics": ""}
    assert report_details({"nl_rubrics": 2}) == {"nl_rubrics": 2}


def test_report_details_of_anything_but_an_object_is_itself():
    for details in (None, [1, {"a": "b"}], "text", 3.5):
        assert report_details(details) == details
