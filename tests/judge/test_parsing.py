"""Reading verdicts out of messy judge replies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepbench.judge.parsing import (
    extract_json,
    loads_lenient,
    parse_overall_verdict,
    parse_rubric_verdicts,
)

KEYS = ["rubric_0", "rubric_1", "rubric_2"]
RUBRICS = ["The order is placed", "The address is the hospital", "Delivery before 12:00"]


def verdicts(text):
    return {i: v.met for i, v in parse_rubric_verdicts(text, KEYS, RUBRICS).items()}


@pytest.mark.parametrize("text,expected", [
    (('[{"rubric_idx": "rubric_0", "meetExpectation": true},'
      ' {"rubric_idx": "rubric_1", "meetExpectation": false}]'), {0: True, 1: False}),
    # code fence, trailing commas
    ('Here you go:\n```json\n[{"rubric_idx": "rubric_2", "meetExpectation": true,},]\n```\nDone.',
     {2: True}),
    # single quotes and Python literals
    ("[{'rubric_idx': 'rubric_1', 'justification': 'ok', 'meetExpectation': True}]", {1: True}),
    # bare keys, comments
    ('[{rubric_idx: "rubric_0", // seen in [3]\n meetExpectation: false}]', {0: False}),
    # prose with round references before the JSON
    (('In round [3] the assistant ordered; see {details}. [{"rubric_idx": "rubric_0", '
      '"meetExpectation": true}]'), {0: True}),
    # reasoning model output
    ('<think>maybe [1]? {no}</think>\n[{"rubric_idx": "rubric_2", "meetExpectation": false}]',
     {2: False}),
    # the paper's rubric_key field and string booleans
    ('[{"rubric_key": "rubric_1", "meetExpectation": "true"}]', {1: True}),
    # a mapping keyed by rubric id
    ('{"rubric_0": true, "rubric_2": {"meetExpectation": false}}', {0: True, 2: False}),
    # a wrapper object
    ('{"rubrics": [{"rubric_idx": 1, "meetExpectation": true}]}', {1: True}),
    # the upstream extract_json_fields names: rubrics / reasoning / meetExpectation, by text
    ('{"rubrics": "The address is the hospital", "reasoning": "r", "meetExpectation": true}',
     {1: True}),
    # restated rubric text (fuzzy), no key
    ('[{"rubric": "the order is placed.", "meetExpectation": true}]', {0: True}),
    # no keys, no text, one entry per rubric: by position
    ('[{"meetExpectation": true}, {"meetExpectation": false}, {"meetExpectation": true}]',
     {0: True, 1: False, 2: True}),
])
def test_rubric_verdicts_from_messy_replies(text, expected):
    assert verdicts(text) == expected


def test_truncated_reply_keeps_complete_entries():
    text = ('```json\n[{"rubric_idx": "rubric_0", "justification": "done in [4]", '
            '"meetExpectation": true}, {"rubric_idx": "rubric_1", "justification": "the add')
    got = parse_rubric_verdicts(text, KEYS, RUBRICS)
    assert got[0].met is True and got[0].reasoning == "done in [4]"
    assert got[1].met is None  # cut off before its verdict: no boolean, state must be kept


def test_unreadable_replies_give_nothing():
    for text in (None, "", "I think it went fine overall.", "[1, 2, 3]", "{not json at all",
                 '[{"rubric_idx": "rubric_9", "meetExpectation": true}]'):
        assert verdicts(text) == {}, text


def test_last_resort_field_scan():
    # broken structure (an unescaped quote) but the fields are there
    text = ('[{"rubric_idx": "rubric_1", "justification": "he said "ok" then", '
            '"meetExpectation": true}')
    assert verdicts(text)[1] is True


def test_first_match_wins_and_unknown_fields_ignored():
    text = ('[{"rubric_idx": "rubric_0", "meetExpectation": true, "extra": [1, {"a": 2}]},'
            ' {"rubric_idx": "rubric_0", "meetExpectation": false}]')
    assert verdicts(text) == {0: True}


def test_loads_lenient_closes_truncated_values():
    assert loads_lenient('{"a": [1, 2, {"b": "x') == {"a": [1, 2, {"b": "x"}]}
    assert loads_lenient('{"a": 1, "b":') == {"a": 1}
    assert loads_lenient("{'a': None, b: True,}") == {"a": None, "b": True}
    with pytest.raises(ValueError):
        loads_lenient("")
    with pytest.raises(ValueError):
        loads_lenient("[" * 500)


def test_extract_json_prefers_fenced_and_accepts_predicate():
    text = 'noise {"x": 1} ```json\n{"y": 2}\n```'
    assert extract_json(text) == {"y": 2}
    assert extract_json(text, lambda v: isinstance(v, dict) and "x" in v) == {"x": 1}


def test_overall_verdict():
    v = parse_overall_verdict('```json\n{"memory": {"orders": "placed [7]"}, '
                              '"justification": "all done", "meetExpectation": true}\n```')
    assert v.met is True and v.reasoning == "all done" and "placed [7]" in v.memory
    assert parse_overall_verdict('[{"justification": "no", "meetExpectation": false}]').met is False
    assert parse_overall_verdict("no verdict here") is None
    assert parse_overall_verdict('{"memory": "x"}') is None


def test_keys_and_rubrics_must_align():
    with pytest.raises(ValueError):
        parse_rubric_verdicts("[]", ["rubric_0"], [])


_PIECES = ['[', ']', '{', '}', '"', "'", ',', ':', 'rubric_idx', '"rubric_1"', 'meetExpectation',
           'true', 'False', 'null', '```json\n', '```', '<think>', '</think>', '//', '/*', '\\',
           ' ', '\n', '12', '-3.5e2', 'justification', '"rubric"', 'memory', '\u201c']


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=5), max_size=40).map("".join))
def test_parsers_never_raise_on_arbitrary_text(text):
    got = parse_rubric_verdicts(text, KEYS, RUBRICS)
    assert set(got) <= {0, 1, 2}
    parse_overall_verdict(text)
    extract_json(text)
