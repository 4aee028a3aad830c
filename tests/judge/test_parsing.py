"""Reading verdicts out of messy judge replies."""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepbench.judge.parsing import (
    OverallVerdict,
    Verdict,
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
    with pytest.raises(ValueError, match="^keys and rubrics must have the same length$"):
        parse_rubric_verdicts("[]", ["rubric_0"], [])


def test_with_no_rubrics_nothing_is_placed():
    assert parse_rubric_verdicts('[{"rubric": "x", "met": true}, {"rubric_idx": 0, "met": true}]',
                                 [], []) == {}


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


# ---- edges: every reading of a boolean, both ends of the index range, the fuzzy threshold -----

def met_of(value):
    """The verdict read from ``value`` as rubric_0's meetExpectation (JSON-encoded)."""
    text = '[{"rubric_idx": "rubric_0", "meetExpectation": %s}]' % json.dumps(value, ensure_ascii=False)
    return parse_rubric_verdicts(text, KEYS, RUBRICS)[0].met


@pytest.mark.parametrize("value", [
    True, 1, 1.0, "true", "yes", "y", "1", "met", "pass", "passed", "satisfied", "满足", "是",
    "已满足", "TRUE", " Yes. ", "Met.", "  Satisfied  "])
def test_every_spelling_of_yes_reads_as_met(value):
    assert met_of(value) is True


@pytest.mark.parametrize("value", [
    False, 0, 0.0, "false", "no", "n", "0", "not met", "unmet", "fail", "failed",
    "not satisfied", "unsatisfied", "不满足", "否", "未满足", "FALSE", " No. ", "Not Met.", "Fail"])
def test_every_spelling_of_no_reads_as_not_met(value):
    assert met_of(value) is False


@pytest.mark.parametrize("value", [2, -1, 0.5, "maybe", "", "partially", [True], {"a": 1}, "NOX",
                                   "METX"])
def test_anything_else_is_no_verdict(value):
    assert met_of(value) is None


def test_a_null_verdict_is_no_entry_at_all():
    assert verdicts('[{"rubric_idx": "rubric_0", "meetExpectation": null}]') == {}


def test_a_verdict_in_the_thinking_is_not_the_verdict():
    draft = '[{"rubric_idx": "rubric_2", "meetExpectation": true}]'
    final = '[{"rubric_idx": "rubric_2", "meetExpectation": false}]'
    assert verdicts(f"<think>draft: {draft}</think>\n{final}") == {2: False}
    assert verdicts(f"<THINK>line one\n{draft}\nline two</Think> {final}") == {2: False}
    assert verdicts(f"<think>a {draft}</think> mid <think>b {draft}</think> {final}") == {2: False}
    assert verdicts(f"<think>an open thought {draft}") == {2: True}  # never closed: kept
    # removed without a trace: a verdict written around the thinking still reads
    assert verdicts('{"rubric_idx": "rubric_1", "meetExpectation": <think>sure?</think>true}') == {
        1: True}


@pytest.mark.parametrize("key,expected", [
    ("rubric_0", 0), ("rubric_2", 2), (0, 0), (2, 2), (2.0, 2), ("0", 0), ("2", 2),
    ("Rubric 1", 1), ("criterion_1", 1), ("rubric 0", 0),
    ("rubric_3", None), (3, None), ("3", None), (-1, None), ("rubric_-1", None), (True, None),
    (False, None), ("rubric1", None), ("", None), (None, None)])
def test_a_key_places_its_entry_from_the_first_to_the_last_rubric_and_no_further(key, expected):
    # two entries for three rubrics: nothing is placed by position
    text = json.dumps([{"rubric_idx": key, "meetExpectation": True},
                       {"note": "x", "meetExpectation": False}])
    assert verdicts(text) == ({} if expected is None else {expected: True})


def test_an_outer_key_places_its_entry_by_index_or_by_rubric_text():
    assert verdicts('{"0": true, "rubric 2": false}') == {0: True, 2: False}
    assert verdicts('{"3": true, "rubric_9": false}') == {}
    assert verdicts('{"delivery before 12:00": {"met": true}}') == {2: True}
    assert verdicts('{"The Order is placed": "yes", "other": "no"}') == {0: True}


ROUGH = ["order paid", "The order is placed", "paid by card a", "paid by card b"]


def rough(text_field):
    text = json.dumps([{"rubric": text_field, "meetExpectation": True},
                       {"note": "unplaced", "meetExpectation": False}])
    return {i: v.met for i, v in parse_rubric_verdicts(text, list("abcd"), ROUGH).items()}


def test_a_restated_rubric_is_matched_at_a_ratio_of_90_and_not_below():
    assert rough("order said") == {0: True}  # ratio exactly 90
    assert rough("the order is plaxex") == {}  # 89.47
    assert rough("the order is plaxed") == {1: True}  # 94.7
    assert rough("  THE  ORDER IS PLACED ") == {1: True}  # whitespace and case folded: exact


def test_a_restatement_as_close_to_two_rubrics_is_matched_to_neither():
    assert rough("paid by card x") == {}  # 92.9 to both
    assert rough("paid by card a") == {2: True}


def test_an_exact_restatement_of_a_repeated_rubric_goes_to_the_first():
    got = parse_rubric_verdicts('[{"rubric": "same", "met": true}]', ["a", "b"], ["same", "Same"])
    assert {i: v.met for i, v in got.items()} == {0: True}


def test_position_fills_only_what_keys_left_and_only_when_every_rubric_has_an_entry():
    text = json.dumps([{"meetExpectation": True}, {"rubric_idx": "rubric_0", "meetExpectation": False},
                       {"meetExpectation": True}])
    assert verdicts(text) == {0: False, 2: True}  # the first entry's position is taken
    assert verdicts(json.dumps([{"meetExpectation": True}] * 2)) == {}
    assert verdicts(json.dumps([{"meetExpectation": True}] * 4)) == {}


def test_a_wrapper_field_holding_entries_is_read_in_its_order():
    wrapped = {"verdicts": [{"rubric_idx": 1, "met": True}], "results": [1, 2],
               "rubrics": [{"rubric_idx": 2, "met": False}]}
    assert verdicts(json.dumps(wrapped)) == {2: False}  # "rubrics" comes first
    assert verdicts(json.dumps({"results": [1, 2], "scores": [{"rubric_idx": 0, "met": 1}]})) == {
        0: True}
    for name in ("rubrics", "results", "evaluations", "rubric_states", "current_rubrics", "items",
                 "verdicts", "scores"):
        assert verdicts(json.dumps({name: [{"rubric_idx": 1, "passed": "no"}]})) == {1: False}


def test_a_mapping_keyed_by_rubric_skips_values_that_are_no_verdict():
    assert verdicts('{"rubric_0": "maybe", "rubric_1": [true], "rubric_2": "no"}') == {2: False}


@pytest.mark.parametrize("field", ["meetExpectation", "meet_expectation", "meetsExpectation", "met",
                                   "satisfied", "passed", "pass", "status", "result", "value",
                                   "MEETEXPECTATION", "Met"])
def test_every_verdict_field_name_is_read_in_any_case(field):
    assert verdicts(json.dumps([{"rubric_idx": 1, field: "yes"}])) == {1: True}


@pytest.mark.parametrize("field", ["rubric_idx", "rubric_key", "rubric_id", "rubricIdx", "rubricKey",
                                   "key", "id", "idx", "index", "RUBRIC_IDX"])
def test_every_key_field_name_is_read(field):
    assert verdicts(json.dumps([{field: "rubric_1", "met": True}])) == {1: True}


@pytest.mark.parametrize("field", ["rubric", "rubrics", "criterion", "criteria", "description",
                                   "name", "Criterion"])
def test_every_rubric_text_field_name_is_read(field):
    assert verdicts(json.dumps([{field: "Delivery before 12:00", "met": True}])) == {2: True}


@pytest.mark.parametrize("field", ["justification", "reasoning", "reason", "explanation",
                                   "rationale", "analysis", "Reason"])
def test_every_reasoning_field_name_is_read(field):
    got = parse_rubric_verdicts(json.dumps([{"rubric_idx": 0, field: "why", "met": True}]), KEYS,
                                RUBRICS)
    assert got[0] == Verdict(True, "why")


def test_the_first_field_named_wins_and_structured_reasoning_is_kept_as_json():
    text = json.dumps([{"rubric_idx": 0, "met": False, "meetExpectation": True,
                        "reason": "second", "justification": {"rounds": [3], "ok": "是"}}])
    got = parse_rubric_verdicts(text, KEYS, RUBRICS)[0]
    assert got == Verdict(True, '{"rounds":[3],"ok":"是"}')
    assert parse_rubric_verdicts('[{"rubric_idx": 0, "met": true}]', KEYS, RUBRICS)[0].reasoning == ""


def test_one_entry_with_a_verdict_and_no_nested_object_is_an_entry_by_itself():
    assert verdicts('{"rubric_idx": "rubric_1", "meetExpectation": false}') == {1: False}
    # nested objects: a mapping of entries, not one entry
    assert verdicts('{"met": true, "rubric_2": {"met": false}}') == {2: False}


def test_the_field_scan_pairs_each_verdict_with_the_fields_since_the_last():
    # unescaped quotes inside the reasoning: no structure can be read
    text = ('{rubric_idx: "rubric_2", justification: "said \\"late\\"", note: "a "b" c", '
            'meetExpectation: false} '
            "{'rubric': 'The order is placed', 'reasoning': 'it is', 'x': 'a 'b' c', "
            "'meetExpectation': 'true'} "
            '{"justification": "no key", "x": "a "b" c", "meetExpectation": true}')
    got = parse_rubric_verdicts(text, KEYS, RUBRICS)
    assert got == {2: Verdict(False, 'said \\"late\\"'), 0: Verdict(True, "it is")}  # raw
    # the third verdict has neither key nor text: it goes to its position, 2, already taken


def test_the_field_scan_places_unkeyed_verdicts_by_order_and_skips_unreadable_ones():
    text = '"meetExpectation": maybe, "meetExpectation": false, "meetExpectation": true, x'
    assert verdicts(text + ' "meetExpectation": true, "meetExpectation": false') == {1: False,
                                                                                     2: True}
    assert verdicts('"rubric_key": "rubric_1", "meetExpectation": "no" (') == {1: False}
    assert verdicts("'rubrics': 'Delivery before 12:00', 'meetExpectation': yes ]") == {2: True}
    assert verdicts('"rubric_idx": "rubric_0", "meetExpectation": true, '
                    '"rubric_idx": "rubric_0", "meetExpectation": false {') == {0: True}
    assert parse_rubric_verdicts('"meetExpectation": true {', KEYS, RUBRICS) == {0: Verdict(True, "")}


def test_the_lenient_reader_decodes_every_escape():
    assert loads_lenient(r'"a\"b\'c\\d\/e\bf\fg\nh\ri\tj"') == "a\"b'c\\d/e\bf\fg\nh\ri\tj"
    assert loads_lenient(r"'it\'s'") == "it's"
    assert loads_lenient(r'"\u00e9\u4E2D\u0041"') == "é中A"
    assert loads_lenient(r'"\u00zz"') == "u00zz"  # not four hex digits: the letter itself
    assert loads_lenient(r'"\u12"') == "u12"
    assert loads_lenient(r'"\q"') == "q"
    assert loads_lenient('"ends with \\') == "ends with \\"  # cut off after a backslash
    assert loads_lenient('"a\\"') == 'a"'  # cut off after an escaped quote
    assert loads_lenient("\u201ccurly\u201d") == "curly"
    assert loads_lenient("\u201cthe \"inner\" one\u201d rest") == 'the "inner" one'


def test_the_lenient_reader_reads_numbers_literals_and_bare_words():
    assert loads_lenient("[1, -2, 1.5, .5, -0.25, 1e3, -3.5e2, 12., 2E-1]") == [
        1, -2, 1.5, 0.5, -0.25, 1000.0, -350.0, 12.0, 0.2]
    assert [type(x) for x in loads_lenient("[1, -1, 1.0, -1.0, 1e0]")] == [int, int, float, float,
                                                                             float]
    assert loads_lenient("[true, false, null, True, False, None, yes, $x, a-b, Xavier]") == [
        True, False, None, True, False, None, "yes", "$x", "a-b", "Xavier"]
    assert loads_lenient('[1,2,{"a":1,"b":[3]},"c"]') == [1, 2, {"a": 1, "b": [3]}, "c"]  # no spaces
    assert loads_lenient('[[{"a":1}],2]') == [[{"a": 1}], 2]
    assert loads_lenient("[1, tru") == [1, "tru"]
    with pytest.raises(ValueError, match="^unexpected '@' at offset 1$"):
        loads_lenient("[@]")
    assert loads_lenient("  x[1]", 3) == [1]


def test_the_lenient_reader_skips_comments_and_reads_separators_loosely():
    assert loads_lenient("{a: 1 /* two */; b = 2, // three\n c: 3,,}") == {"a": 1, "b": 2, "c": 3}
    assert loads_lenient("{X: 1, Xs = 2}") == {"X": 1, "Xs": 2}
    assert loads_lenient("[1 // the rest is a comment") == [1]
    assert loads_lenient("[1,\n2 // two\n, 3 // three\n]") == [1, 2, 3]
    assert loads_lenient("[1 // one\n2]") == [1, 2]
    assert loads_lenient("[1 /* a */, 2 /* b */]") == [1, 2]
    assert loads_lenient("[1 /* c */2]") == [1, 2]
    assert loads_lenient("[1, /**/ 2, /*/ odd */ 3]") == [1, 2, 3]
    assert loads_lenient("[1 /* never closed ]") == [1]
    assert loads_lenient("[1,, 2,]") == [1, 2]
    assert loads_lenient('{1: "one", "two": 2}') == {"1": "one", "two": 2}
    with pytest.raises(ValueError, match="^expected ':' after key 'a' at offset 5$"):
        loads_lenient('{"a" 1}')
    with pytest.raises(ValueError, match="^expected ':' after key 'a' at offset 5$"):
        loads_lenient('{"a" X 1}')
    with pytest.raises(ValueError, match="^expected a key at offset 1, got '\\['$"):
        loads_lenient("{[1]: 2}")
    with pytest.raises(ValueError, match="^input ended where a value belongs$"):
        loads_lenient("  // nothing\n")


def test_the_lenient_reader_drops_a_key_cut_off_or_left_without_a_value():
    assert loads_lenient('{"a": 1, "b') == {"a": 1}
    assert loads_lenient('{"a": 1, "b"') == {"a": 1}
    assert loads_lenient('{"a": 1, b') == {"a": 1}
    assert loads_lenient('{"a": 1, "b": ') == {"a": 1}
    assert loads_lenient('{"a": "x') == {"a": "x"}
    assert loads_lenient('{"a": [') == {"a": []}
    assert loads_lenient("[") == [] and loads_lenient("{") == {}


def test_the_lenient_reader_nests_64_deep_and_no_deeper():
    assert loads_lenient("[" * 64) == functools.reduce(lambda inner, _: [inner], range(63), [])
    with pytest.raises(ValueError, match="^nested too deeply$"):
        loads_lenient("[" * 65)
    with pytest.raises(ValueError, match="^nested too deeply$"):
        loads_lenient('{"a": ' * 65)
    # the depth is given back when a value closes: siblings do not add up
    assert loads_lenient("[" + "[], " * 100 + "]") == [[]] * 100
    assert len(loads_lenient("[[], " + "[" * 63)) == 2
    with pytest.raises(ValueError, match="^nested too deeply$"):
        loads_lenient("[[], " + "[" * 64)
    with pytest.raises(ValueError, match="^nested too deeply$"):
        loads_lenient("[[[], " + "[" * 63)


def test_extract_json_reads_a_whole_reply_strictly_then_each_opening_in_turn():
    assert extract_json(None) is None and extract_json("") is None
    assert extract_json('  [1, {"a": 2}]  ') == [1, {"a": 2}]
    assert extract_json('[1, {"a": 2}]', lambda v: isinstance(v, dict)) == {"a": 2}
    assert extract_json("42") is None  # a scalar is no verdict
    assert extract_json("42", lambda v: v == 42) == 42  # the whole reply, read strictly
    assert extract_json("[42]", lambda v: v == 42) is None  # openings give lists and objects


def test_extract_json_goes_past_an_opening_it_cannot_read():
    assert extract_json('see {details}. {"a": 1}') == {"a": 1}


def test_extract_json_tries_the_first_64_openings_only():
    def found(n):
        return extract_json("see [x] " * n + '{"a": 1}', lambda v: isinstance(v, dict))

    assert found(63) == {"a": 1}
    assert found(64) is None


@pytest.mark.parametrize("fence", ["```json\n", "```json5\n", "```JSON\n", "```javascript\n",
                                   "```js\n", "```\n", "``` json \n", "```json"])
def test_every_fence_language_is_read_first(fence):
    assert extract_json('{"out": 0} ' + fence + '{"in": 1}\n```') == {"in": 1}


def test_fences_are_read_in_order_an_empty_one_skipped_and_an_open_one_kept():
    assert extract_json('```json\n  \n``` ```json\n{"b": 2}\n``` ```json\n{"c": 3}\n```') == {"b": 2}
    assert extract_json('```json\n{"open": true') == {"open": True}
    assert extract_json('```json\nnot json\n``` {"after": 1}') == {"after": 1}


def test_the_overall_verdict_reads_the_first_entry_memory_as_text_and_falls_back_to_a_scan():
    assert parse_overall_verdict('[1, {"met": "no", "reason": "r"}, {"met": true}]') == \
        OverallVerdict(False, "r", None)
    assert parse_overall_verdict('{"meetExpectation": "yes", "memory": "m"}') == \
        OverallVerdict(True, "", "m")
    assert parse_overall_verdict('{"meetExpectation": 1, "memory": null}').memory is None
    assert parse_overall_verdict('{"met": 0, "memory": [1, "a"]}') == \
        OverallVerdict(False, "", '[1,"a"]')
    assert parse_overall_verdict('"justification": "broke", "meetExpectation": no, {') == \
        OverallVerdict(False, "broke")
    assert parse_overall_verdict('"meetExpectation": true, {') == OverallVerdict(True, "")
    assert parse_overall_verdict('"rubric": "the goal", "meetExpectation": yes {') == \
        OverallVerdict(True, "")
    assert parse_overall_verdict('"meetExpectation": perhaps {') is None
    assert parse_overall_verdict('[{"met": "perhaps"}]') is None
    assert parse_overall_verdict(None) is None


def test_an_overall_verdict_is_the_first_object_with_one_not_an_object_quoted_before_it():
    reply = '["summary: {\'met\': false} was the draft", {"met": true}]'
    assert parse_overall_verdict(reply) == OverallVerdict(True, "")
    assert parse_overall_verdict('{"note": 1} {"meetExpectation": true, "memory": "kept"}') == \
        OverallVerdict(True, "", "kept")


def test_the_overall_scan_takes_the_first_verdict_or_a_later_one_named_overall():
    assert parse_overall_verdict('"meetExpectation": maybe, "meetExpectation": true {') is None
    for name, later in (("rubric_idx", "overall"), ("rubric", "Overall")):
        reply = f'"{name}": "overall", "meetExpectation": maybe, "{name}": "{later}", ' \
                '"meetExpectation": true {'
        assert parse_overall_verdict(reply) == OverallVerdict(True, ""), name


def test_escaped_surrogates_become_text_any_output_can_hold():
    # a pair is one character; a lone one (which no UTF-8 store or JSON output can write,
    # so a verdict holding it could not be recorded) becomes U+FFFD
    reply = '{"rubric_0": {"justification": "x\\ud83d\\ude00y\\ud800z", "meetExpectation": true'
    assert extract_json(reply) == {"rubric_0": {"justification": "x\U0001f600y\ufffdz",
                                                "meetExpectation": True}}
    assert loads_lenient('"\\udc00"').encode("utf-8") == "\ufffd".encode("utf-8")


@pytest.mark.parametrize("depth", [65, 500, 1000, 10_000])
def test_a_reply_nested_past_the_bound_is_read_by_the_lenient_reader_only(depth):
    deep = "[" * depth + "]" * depth
    # orjson reads 1,000 levels, but writing them back (the reasoning text) would raise
    assert parse_overall_verdict('{"meetExpectation": true, "justification": ' + deep + "}") \
        == OverallVerdict(met=True, reasoning="", memory=None)
    assert parse_overall_verdict('{"meetExpectation": false, "justification": "[[1]]"}') \
        == OverallVerdict(met=False, reasoning="[[1]]", memory=None)
