"""T1 prompts: the paper's files adapted to each task, the project's own without them, and
the parsing of classifier, exit-check and judge replies."""

from __future__ import annotations

import re

import pytest

from sweepbench.benchmarks.t1 import prompts as p
from sweepbench.wire import (
    AssistantMessage,
    FunctionCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)


@pytest.fixture
def hotel_task(tasks):
    return next(t for t in tasks if t.domain == "hotel")


@pytest.fixture
def big_task(tasks):
    return next(t for t in tasks if t.evaluation["split"] == "11-domain")


def test_user_prompt_from_the_paper_is_refilled_for_the_task(t1_data, hotel_task, big_task):
    text = p.user_prompt(hotel_task, t1_data)
    assert hotel_task.instructions in text and hotel_task.persona["persona"] in text
    assert hotel_task.environment["user_id"] in text
    assert not re.search(r"\bbars?\b", text, re.I)
    assert "Hotel Properties" in text and "has_pool_tables" not in text
    assert "25 turns" in text and "50 turns" in p.user_prompt(big_task, t1_data)


def test_assistant_prompt_has_the_domains_tools_policies_cache_and_clock(t1_data, hotel_task):
    text = p.assistant_prompt(hotel_task, ["hotel"], {"search_hotel_results_0": "6 hotels in Denver"}, t1_data)
    assert "`search_hotel`" in text and "search_bars" not in text and "FILTER_HOTEL" in text
    assert "# Hotel Domain" in text and "# Bar Domain" not in text
    assert "- search_hotel_results_0: 6 hotels in Denver" in text
    assert text.endswith("Current time: 2026-04-20 09:00:00")
    fallback = p.assistant_prompt(hotel_task, ["not-a-domain"], {}, None)
    assert "# Hotel Domain" in fallback and "(empty" in fallback


def test_exit_and_judge_prompts_from_the_paper(t1_data, hotel_task):
    text = p.exit_prompt(hotel_task, "[User] thanks, bye", t1_data)
    assert "[User] thanks, bye" in text and hotel_task.instructions in text
    assert '"should_end"' in text and "{history_text}" not in text
    judge = p.judge_prompt("[User] hi {{braces}} stay", t1_data)
    assert "[User] hi {{braces}} stay" in judge and "{conversation_text}" not in judge
    assert "{{" not in judge.replace("{{braces}}", "")


def test_own_prompts_without_the_paper(hotel_task):
    user = p.user_prompt(hotel_task, None)
    assert hotel_task.instructions in user and "25 turns" in user and "AI Hotel Assistant" in user
    assert "[User] hi" in p.exit_prompt(hotel_task, "[User] hi", None)
    assert "[User] hi" in p.judge_prompt("[User] hi", None)
    assert "- vehicle_rental" in p.classifier_prompt(None)


def test_classifier_input_and_parsing():
    assert p.classifier_input(["I need a hotel"], 'Also a "car"') == \
        'CHAT HISTORY: ["I need a hotel"]\nQuery: "Also a \\"car\\""'
    assert p.parse_domains('```json\n["hotel", "Vehicle Rental", "spa", "hotel"]\n```') == ["hotel", "vehicle_rental"]
    assert p.parse_domains("Domains: [bar] or maybe [\"bar\"]") == ["bar"]
    assert p.parse_domains("no idea") == []


def test_exit_parsing_never_ends_on_garbage():
    assert p.parse_exit('Sure!\n{"should_end": true, "reason": "booked and said bye"}') == (True, "booked and said bye")
    assert p.parse_exit('{"should_end": "yes"}')[0] is False
    assert p.parse_exit("")[0] is False


def test_judge_parsing():
    clean = '{"scores": {"helpfulness": {"score": 4, "reasoning": "ok"}, "coherence": {"score": 5, ' \
            '"reasoning": "fine"}}, "overall_score": 4.5}'
    assert p.parse_judge(clean) == {"helpfulness": 4, "coherence": 5, "overall": 4.5,
                                    "reasoning": {"helpfulness": "ok", "coherence": "fine"}}
    missing_comma = clean.replace('}}, "overall', '}} "overall')
    assert p.parse_judge(missing_comma)["overall"] == 4.5
    assert p.parse_judge('{"scores": {"helpfulness": {"score": 9}}}') is None


def test_replies_no_reader_survives_are_no_verdict_never_an_exception():
    deep = "[" * 10_000 + "]" * 10_000
    assert p.parse_domains(deep) == []
    assert p.parse_domains('["hotel", ' + "[" * 100 + "]" * 100 + "]") == []  # past the bound
    assert p.parse_domains("[" * 100_000 + ' ["bar"]') == []  # only 64 openings are tried
    assert p.parse_exit('{"should_end": true, "x": ' + deep + "}") == (
        False, "unreadable exit-check reply")
    assert p.parse_exit('{"should_end": true, "reason": "\\ud800"}') == (
        False, "unreadable exit-check reply")  # a lone surrogate no store can write
    scores = '{"helpfulness": {"score": 4, "reasoning": "%s"}, "coherence": {"score": 5}}'
    assert p.parse_judge(scores % "\\ud800") == {"helpfulness": 4, "coherence": 5,
                                                 "overall": 4.5, "reasoning": {}}
    assert p.parse_judge(scores % "ok")["reasoning"] == {"helpfulness": "ok", "coherence": ""}


def test_transcript():
    messages = [SystemMessage("sys"), UserMessage("find bars"),
                AssistantMessage(tool_calls=[ToolCall("a", FunctionCall("search_bars", '{"city":"Denver"}'))]),
                ToolMessage("a", "x" * 3000), AssistantMessage("Here they are.")]
    full = p.transcript(messages)
    assert full.splitlines()[:2] == ["[User] find bars", '[Assistant] -> search_bars({"city":"Denver"})']
    assert "...(truncated)" in full and "sys" not in full
    assert p.transcript(messages, tools=False) == "[User] find bars\n[Assistant] Here they are."
    # a 5 MB argument is cut as a long result is: the judge's prompt stays its size
    huge = [AssistantMessage(tool_calls=[ToolCall("a", FunctionCall("f", '{"q": "' + "x" * 5_000_000 + '"}'))])]
    assert p.transcript(huge) == '[Assistant] -> f({"q": "' + "x" * 1993 + " ...(truncated))"
