"""VitaBench's reading of judge replies: upstream's rules, crashes turned into "unreadable"."""

from __future__ import annotations

import json

import pytest

from sweepbench.benchmarks.vitabench.judge_reading import (
    NO_JUSTIFICATION,
    met,
    read_overall,
    read_rubrics,
)
from sweepbench.judge.rubric import KEEP, RubricUpdate

KEYS = ["rubric_0", "rubric_1", "rubric_2"]


def entries(*items) -> str:
    return json.dumps(list(items))


@pytest.mark.parametrize("value,expected", [
    (True, True), (False, False), (1, True), (0, False), (1.0, True), (0.0, False),
    ("true", True), ("TRUE", True), ("Yes", True), ("y", True), ("on", True), ("t", True),
    ("1", True), ("false", False), ("no", False), ("off", False), ("0", False), ("F", False),
])
def test_verdicts_read_as_pydantic_lax_booleans(value, expected):
    reply = entries({"rubric_idx": "rubric_0", "meetExpectation": value})
    assert read_rubrics(reply, KEYS) == {0: RubricUpdate(NO_JUSTIFICATION, value)}
    assert met(value) is expected


@pytest.mark.parametrize("value", [None, "maybe", 2, " true", [], {}, 0.5])
def test_a_verdict_pydantic_refuses_makes_the_reply_unreadable(value):
    assert read_rubrics(entries({"rubric_idx": "rubric_0", "meetExpectation": value}), KEYS) is None


def test_only_an_exact_rubric_idx_updates_a_rubric():
    reply = entries({"rubric": "the first rubric", "meetExpectation": True},  # no key: ignored
                    {"rubric_idx": 1, "meetExpectation": True},  # not the key's text: ignored
                    {"rubric_idx": "rubric_9", "meetExpectation": True},  # unknown: ignored
                    {"rubric_idx": "Rubric_2", "meetExpectation": True},  # case matters
                    {"rubric_idx": "rubric_1", "justification": "seen [3]"})
    assert read_rubrics(reply, KEYS) == {1: RubricUpdate("seen [3]", KEEP)}


@pytest.mark.parametrize("reply,expected", [
    ("[]", {}), ("{}", {}), ("```json\n[]\n```", {}),  # empty: nothing changes, no retry
    ("I cannot evaluate this.", None), ("", None), (None, None),  # no JSON
    ('{"rubric_idx": "rubric_0", "meetExpectation": true}', None),  # an object, not a list
    ('[{"rubric_idx": "rubric_0", "meetExpectation": true}, "x"]', None),  # a non-object entry
    ('[{"rubric_idx": ["rubric_0"], "meetExpectation": true}]', None),  # unhashable key
    ('[{"rubric_idx": "rubric_0", "justification": null}]', None),  # justification not text
])
def test_shapes_upstream_keeps_or_raises_on(reply, expected):
    assert read_rubrics(reply, KEYS) == expected


def test_lenient_json_and_later_entries_win():
    reply = ("Here you go:\n[{'rubric_idx': 'rubric_0', 'meetExpectation': True,},"
             " {'rubric_idx': 'rubric_0', 'meetExpectation': False, 'justification': 'undone'}")
    assert read_rubrics(reply, KEYS) == {0: RubricUpdate("undone", False)}


def test_no_rubric_replies():
    ok = '{"memory": "paid in [12]", "justification": "done", "meetExpectation": "yes"}'
    assert read_overall("sliding_no_rubrics", ok) == (
        {"justification": "done", "meetExpectation": "yes"}, "paid in [12]")
    assert read_overall("sliding_no_rubrics", '{"memory": {"a": 1}}') == (KEEP, {"a": 1})
    assert read_overall("sliding_no_rubrics", '{"justification": "x", "meetExpectation": true}') is None
    assert read_overall("sliding_no_rubrics", '{"memory": "", "meetExpectation": true}') is None
    assert read_overall("full_no_rubrics", '[{"justification": "x", "meetExpectation": false}]') == (
        {"justification": "x", "meetExpectation": False}, KEEP)
    assert read_overall("full_no_rubrics", "[]") == (
        {"justification": "Not evaluated yet", "meetExpectation": False}, KEEP)
    assert read_overall("full_no_rubrics", "no json") is None


@pytest.mark.parametrize("reply", [
    '{"justification": 3, "meetExpectation": true}',  # justification not text
    '{"justification": "x", "meetExpectation": "maybe"}',  # verdict pydantic refuses
    '{"memory": "m"}',  # no evaluation in it
    '[{"justification": "x"}]',  # the first element without a verdict
])
def test_a_full_no_rubrics_reply_that_is_no_evaluation_is_unreadable(reply):
    assert read_overall("full_no_rubrics", reply) is None
