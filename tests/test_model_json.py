"""Model-sent JSON: one nesting bound, and odd but valid JSON read as malformed or exactly."""

from __future__ import annotations

import pytest

from sweepbench import model_json
from sweepbench.model_json import (
    MAX_DEPTH,
    ArgumentsError,
    check_depth,
    deeper_than,
    parse_arguments,
    python_arguments,
)

READERS = [parse_arguments, python_arguments]


def nested(depth: int) -> str:
    return '{"a": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def test_depth_counts_arrays_and_objects_but_not_brackets_in_strings():
    assert not deeper_than(nested(MAX_DEPTH), MAX_DEPTH)
    assert deeper_than(nested(MAX_DEPTH + 1), MAX_DEPTH)
    assert not deeper_than('{"a": "' + "[{" * 10_000 + '"}', 2)  # inside a string
    assert not deeper_than('{"a": "\\"[[[[\\""}', 1)  # escaped quotes do not end the string
    assert deeper_than('{"a": "x", "b": [[1]]}', 2)
    assert not deeper_than("[]" * 10_000, 1)  # siblings, not nesting
    assert deeper_than(b"[[", 1) and not deeper_than(b"[", 1)


@pytest.mark.parametrize("read", READERS)
def test_arguments_nested_10000_deep_are_malformed_not_a_crash(read):
    with pytest.raises(ArgumentsError, match=f"^arguments nest deeper than {MAX_DEPTH} levels$"):
        read(nested(10_000))
    assert read(nested(3)) == {"a": [[]]}
    assert read(nested(MAX_DEPTH)) is not None  # the limit itself is read


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize("text, why", [
    ('{"a": NaN}', "arguments are not valid JSON: JSON is malformed: invalid character (byte 6)"),
    ('{"a": "\\ud800"}', "arguments are not valid JSON: Input data was truncated"),
    ('{"a": 1', "arguments are not valid JSON: Input data was truncated"),
])
def test_what_is_not_json_is_refused_by_both_readers(read, text, why):
    with pytest.raises(ArgumentsError) as info:
        read(text)
    assert str(info.value) == why


def test_numbers_out_of_range_msgspec_refuses_python_reads_as_upstream():
    with pytest.raises(ArgumentsError, match=r"^arguments are not valid JSON: Number out of range"):
        parse_arguments('{"a": 1e400}')
    assert python_arguments('{"a": 1e400}') == {"a": float("inf")}
    digits = '{"a": ' + "1" * 5000 + "}"
    with pytest.raises(ArgumentsError, match="Integer value out of range"):
        parse_arguments(digits)
    with pytest.raises(ArgumentsError, match="Exceeds the limit"):
        python_arguments(digits)


@pytest.mark.parametrize("read", READERS)
def test_nul_characters_and_a_5_mb_string_read_exactly(read):
    assert read('{"a": "x\\u0000y"}') == {"a": "x\x00y"}
    big = "x" * 5_000_000
    assert read('{"a": "' + big + '"}') == {"a": big}


def test_check_depth_raises_past_its_limit_only():
    check_depth("[[]]", 2)
    with pytest.raises(ArgumentsError, match="^arguments nest deeper than 1 levels$"):
        check_depth("[[]]", 1)


def test_objects_alone_nest_too_and_a_lone_surrogate_is_counted_not_a_crash():
    assert deeper_than('{"a": {"b": {}}}', 2) and not deeper_than('{"a": {"b": {}}}', 3)
    assert deeper_than('[["\ud800"]]', 1)  # a str a model sent, lone surrogate and all
    assert not deeper_than('["\ud800"]', 1)
    assert deeper_than("[[], [[[]]]]", 3)  # a closed sibling takes one level back, not two


def test_a_string_with_escapes_ends_at_its_closing_quote():
    # the brackets after the string count again; those inside it do not
    assert deeper_than('["a\\\\", [[]]]', 2)  # an escaped backslash, then the quote ends it
    assert not deeper_than('["a\\"[[[", []]', 2)  # an escaped quote does not end it
    assert not deeper_than(b'["x"]', 1) and deeper_than(b'[["x"]]', 1)


def test_a_decoder_out_of_stack_is_said_in_words_not_raised(monkeypatch):
    """Deep in a caller's stack a decoder may run out of it below MAX_DEPTH."""
    def out_of_stack(text):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(model_json.json, "loads", out_of_stack)
    with pytest.raises(ArgumentsError) as info:
        python_arguments("[[1]]")
    assert str(info.value) == "arguments cannot be read: RecursionError"
