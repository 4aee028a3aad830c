"""The sliding-window rubric judge: windows, carried state, recovery, the Table 5 variants."""

from __future__ import annotations

import re

import msgspec
import pytest

from sweepbench.benchmarks.vitabench.judge import (
    env_info,
    judge_episode,
    render_trajectory,
    task_rubrics,
)
from sweepbench.benchmarks.vitabench.judge_double import scripted_judge
from sweepbench.benchmarks.vitabench.judge_prompts import (
    judge_system_prompt,
    retry_nudge,
)
from sweepbench.datasets.task import Task
from sweepbench.judge.rubric import make_windows
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    FunctionCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)

TASK = Task(
    id="t1", benchmark="vitabench", domain="delivery", lang="en",
    instructions="Order mild rice noodles to the hospital before noon.",
    environment={"time": "2025-06-21 11:20:00"},
    evaluation={
        "expected_states": [{"state_rubrics": ["noodles ordered", "address is the hospital"]},
                            {"state_rubrics": ["address is the hospital", "mild flavour"]}],
        "overall_rubrics": ["mild flavour", "delivered before noon", "noodles ordered"],
    },
)
RUBRICS = ["noodles ordered", "address is the hospital", "mild flavour", "delivered before noon"]


def conversation(n: int) -> list:
    """A system prompt plus ``n`` alternating user/assistant messages."""
    msgs: list = [SystemMessage("agent prompt, not part of the trajectory")]
    for i in range(n):
        msgs.append(UserMessage(f"user says {i + 1}") if i % 2 else AssistantMessage(f"agent says {i + 1}"))
    return msgs


class Reply:
    def __init__(self, text: str | None) -> None:
        self.message = AssistantMessage(text)
        self.usage = Usage(10, 2)
        self.latency_s = 0.0


class FakeJudge:
    """Answers from ``script(window, attempt, request)``; records every request."""

    def __init__(self, script):
        self.script = script
        self.requests: list[ChatRequest] = []

    async def __call__(self, req: ChatRequest):
        self.requests.append(req)
        out = self.script(req.sweepbench["window"], req.sweepbench["attempt"], req)
        if isinstance(out, Exception):
            raise out
        return Reply(out)


def verdicts(**met: bool) -> str:
    return msgspec.json.encode([{"rubric_idx": k, "justification": f"says {v}",
                                 "meetExpectation": v} for k, v in met.items()]).decode()


def double(req_hint=None):
    async def call(req: ChatRequest):
        if req_hint is not None:
            req = msgspec.structs.replace(req, sweepbench={**req.sweepbench, "judge_hint": req_hint})
        return Reply(scripted_judge(req).content)
    return call


# ---- windows and rubrics --------------------------------------------------------------------


@pytest.mark.parametrize("n,w,d,expected", [
    (25, 10, 2, [(0, 10), (8, 18), (16, 25)]),
    (5, 10, 2, [(0, 5)]),
    (10, 10, 2, [(0, 10)]),
    (11, 10, 2, [(0, 10), (8, 11)]),
    (18, 10, 2, [(0, 10), (8, 18)]),
    (0, 10, 2, []),
    (7, 3, 0, [(0, 3), (3, 6), (6, 7)]),
    (4, 1, 0, [(0, 1), (1, 2), (2, 3), (3, 4)]),
])
def test_window_arithmetic(n, w, d, expected):
    assert make_windows(n, w, d) == expected


@pytest.mark.parametrize("w,d", [(10, 10), (10, 12), (0, 0), (5, -1)])
async def test_bad_windows_rejected(w, d):
    with pytest.raises(ValueError):
        make_windows(25, w, d)
    with pytest.raises(ValueError):
        await judge_episode(TASK, conversation(5), call=FakeJudge(lambda *a: "[]"), window=w, overlap=d)


async def test_bad_method_rejected():
    with pytest.raises(ValueError, match="method"):
        await judge_episode(TASK, conversation(5), call=FakeJudge(lambda *a: "[]"), method="vibes")


def test_rubrics_dedup_state_then_overall_in_order():
    assert task_rubrics(TASK) == RUBRICS
    odd = Task(id="x", benchmark="vitabench", domain="delivery", instructions="",
               evaluation={"expected_states": "oops", "overall_rubrics": ["a", 3, "", "a", "b"]})
    assert task_rubrics(odd) == ["a", "", "b"]  # as upstream: any string, duplicates skipped


def test_rendering_of_tool_calls_and_results():
    msgs = [
        SystemMessage("sys"),
        AssistantMessage("Hello, how can I help you?"),
        UserMessage("Rice noodles please."),
        AssistantMessage("Let me look.", tool_calls=[
            ToolCall("c1", FunctionCall("search_stores", '{"keywords":  ["米线", "q"], "n": 2}')),
            ToolCall("c2", FunctionCall("get_weather", "not json"))]),
        ToolMessage("c1", "Store(name=S1, store_id=S1)", "search_stores"),
        ToolMessage("c2", "Error: bad arguments"),
        AssistantMessage(None),  # empty: skipped, but numbering keeps counting
        AssistantMessage("Found one.\nIt is S1."),
        AssistantMessage(None, tool_calls=[ToolCall("c3", FunctionCall("pay", '{"ok": true, "x": null}'))]),
        ToolMessage("c3", ""),  # an empty output is skipped too
        AssistantMessage(" "),  # whitespace is text: kept
    ]
    text = render_trajectory([m for m in msgs if not isinstance(m, SystemMessage)])
    assert text.split("\n") == [
        "[1] assistant: Hello, how can I help you?",
        "[2] user: Rice noodles please.",
        "[3] assistant: Let me look. search_stores(keywords=['米线', 'q'], n=2).get_weather(not json)",
        "[4] tool: Store(name=S1, store_id=S1)",
        "[5] tool: Error: bad arguments",
        "[7] assistant: Found one.",
        "It is S1.",
        "[8] assistant: pay(ok=True, x=None)",
        "[10] assistant:  ",
    ]
    assert "sys" not in text


@pytest.mark.parametrize("arguments", [
    '{"keywords":' + "[" * 100 + "]" * 100 + "}",  # Python's json reads it; 64 is the bound
    '{"keywords": "\\ud800"}', '{"keywords": NaN}',
], ids=["nested-100", "lone-surrogate", "nan"])
def test_arguments_no_tool_would_read_are_shown_as_written(arguments):
    msgs = [AssistantMessage(None, tool_calls=[ToolCall("c1", FunctionCall("search", arguments))])]
    text = render_trajectory(msgs)
    assert text == f"[1] assistant: search({arguments})"
    text.encode("utf-8")


def test_rubrics_of_malformed_evaluations_are_skipped_not_crashed_on():
    def rubrics(**evaluation):
        return task_rubrics(Task(id="x", benchmark="vitabench", domain="delivery",
                                 instructions="", evaluation=evaluation))
    assert rubrics(expected_states=5, overall_rubrics=["a"]) == ["a"]
    assert rubrics(expected_states=["s", {"state_rubrics": ["b"]}]) == ["b"]
    assert rubrics(overall_rubrics="ab") == []  # text is not a list of rubrics
    assert task_rubrics(Task(id="x", benchmark="vitabench", domain="delivery", instructions="",
                             evaluation=None)) == []


@pytest.mark.parametrize("environment,lang,expected", [
    ({"time": "2025-06-21 11:20:00"}, "en", "2025-06-21 11:20:00 Saturday"),
    ({"time": "2025-06-21 11:20:00"}, "zh", "2025-06-21 11:20:00 星期六"),
    ({"time": "2025-06-23 08:00:00"}, "fr", "2025-06-23 08:00:00 Monday"),  # other: English
    ({"time": "2025-06-21"}, "en", "2025-06-21 "),  # no clock time: no weekday
    ({"time": ""}, "en", ""),
    ({"time": None}, "en", ""),
    ({}, "en", ""),
])
def test_environment_line_as_upstream_prints_it(environment, lang, expected):
    task = Task(id="x", benchmark="vitabench", domain="delivery", instructions="",
                environment=environment)
    assert env_info(task, lang) == str({"system_time": expected, "database": []})


def test_long_messages_are_clipped_only_when_asked_and_only_past_the_limit():
    msgs = [UserMessage("abcdef"), AssistantMessage("abcdefgh")]
    assert render_trajectory(msgs, max_message_chars=6) == (
        "[1] user: abcdef\n[2] assistant: abcdef …[2 more characters]")
    assert render_trajectory(msgs) == "[1] user: abcdef\n[2] assistant: abcdefgh"
    assert render_trajectory(msgs, 1, 2, max_message_chars=7) == (
        "[2] assistant: abcdefg …[1 more characters]")


async def test_language_from_the_task_unless_given_and_english_for_any_other():
    zh = msgspec.structs.replace(TASK, lang="zh")
    for task, lang, expected in ((zh, None, "zh"), (TASK, None, "en"), (TASK, "zh", "zh"),
                                 (zh, "en", "en"), (zh, "fr", "en")):
        judge = FakeJudge(lambda w, a, r: "garbage" if a == 0 else verdicts(rubric_0=True))
        res = await judge_episode(task, conversation(3), call=judge, method="full", lang=lang)
        assert res.lang == expected, (task.lang, lang)
        fields = {"env_info": env_info(task, expected), "user_instruction": task.instructions,
                  "window_idx": 1, "total_windows": 1, "window_size": 10, "overlap": 2}
        first, retry = judge.requests
        assert first.messages[0].content == judge_system_prompt(
            "full", expected, data_dir=None, fields=fields)[0]
        assert retry.messages[-1].content == retry_nudge(expected)


async def test_arguments_reach_the_engine():
    long = [UserMessage("x" * 30)] * 7
    judge = FakeJudge(lambda w, a, r: verdicts(rubric_0=True))
    res = await judge_episode(TASK, long, call=judge, window=3, overlap=1, max_tokens=77,
                              temperature=0.5, max_message_chars=4)
    assert [(o.start, o.end) for o in res.window_log] == [(0, 3), (2, 5), (4, 7)]
    assert {(r.max_tokens, r.temperature) for r in judge.requests} == {(77, 0.5)}
    assert "[1] user: xxxx …[26 more characters]" in judge.requests[0].messages[1].content
    assert "windows of 3 messages; consecutive windows share 1 messages. This is window 2 of " \
        "3." in " ".join(judge.requests[1].messages[0].content.split())
    states = judge.requests[0].messages[1].content.split("<current_rubrics>")[1]
    assert states.count('"justification": "Not evaluated yet"') == len(RUBRICS)


# ---- the sliding judge ----------------------------------------------------------------------


async def test_sliding_sends_one_request_per_window_with_global_numbering():
    judge = FakeJudge(lambda w, a, r: verdicts(rubric_0=True))
    res = await judge_episode(TASK, conversation(25), call=judge, meta={"task": "t1"})
    assert (res.windows, res.calls, res.unjudged_windows) == (3, 3, 0)
    assert [(o.start, o.end) for o in res.window_log] == [(0, 10), (8, 18), (16, 25)]
    for req, (lo, hi) in zip(judge.requests, [(1, 10), (9, 18), (17, 25)]):
        assert req.sweepbench["role"] == "judge" and req.sweepbench["task"] == "t1"
        assert req.temperature == 0.0
        assert isinstance(req.messages[0], SystemMessage) and isinstance(req.messages[1], UserMessage)
        shown = [int(x) for x in re.findall(r"^\[(\d+)\]", req.messages[1].content, re.MULTILINE)]
        assert shown == list(range(lo, hi + 1))
        assert "agent prompt" not in req.messages[1].content
    assert [r.sweepbench["window"] for r in judge.requests] == [0, 1, 2]
    assert "window 2 of 3" in judge.requests[1].messages[0].content
    assert res.usage == Usage(30, 6)


async def test_state_carries_over_and_reverses_only_on_explicit_negation():
    script = {
        0: verdicts(rubric_0=True, rubric_1=True),
        1: verdicts(rubric_2=True),                      # silent on 0 and 1: they stay true
        2: verdicts(rubric_1=False, rubric_3=True),      # explicit negation of rubric_1
    }
    judge = FakeJudge(lambda w, a, r: script[w])
    res = await judge_episode(TASK, conversation(25), call=judge)
    assert [r.met for r in res.rubrics] == [True, False, True, True]
    assert [r.window for r in res.rubrics] == [0, 2, 1, 2]
    assert res.rubrics[1].reasoning == "says False"
    assert (res.passed, res.score) == (False, 0.75)
    # the judge saw the carried state: rubric_0 true in the second window's input
    second = judge.requests[1].messages[1].content
    states = msgspec.json.decode(second.split("<current_rubrics>")[1].split("</current_rubrics>")[0])
    assert [s["meetExpectation"] for s in states] == [True, True, False, False]
    assert states[0]["justification"] == "says True"


async def test_all_rubrics_met_passes():
    judge = FakeJudge(lambda w, a, r: verdicts(rubric_0=True, rubric_1=True, rubric_2=True,
                                                  rubric_3=True))
    res = await judge_episode(TASK, conversation(12), call=judge)
    assert (res.passed, res.score, res.windows) == (True, 1.0, 2)
    assert [r.rubric for r in res.rubrics] == RUBRICS


async def test_garbage_then_valid_is_judged_after_a_retry():
    judge = FakeJudge(lambda w, a, r: "I cannot decide." if a == 0 else verdicts(rubric_0=True))
    res = await judge_episode(TASK, conversation(25), call=judge)
    assert res.unjudged_windows == 0 and res.calls == 6
    assert [o.attempts for o in res.window_log] == [2, 2, 2]
    retry = judge.requests[1]
    assert retry.sweepbench["attempt"] == 1
    assert [type(m) for m in retry.messages] == [SystemMessage, UserMessage, AssistantMessage,
                                                 UserMessage]
    assert retry.messages[2].content == "I cannot decide."
    assert res.rubrics[0].met


async def test_always_garbage_marks_the_window_unjudged_and_keeps_state():
    def script(w, a, r):
        return verdicts(rubric_0=True) if w != 1 else "{{{ not json"
    judge = FakeJudge(script)
    res = await judge_episode(TASK, conversation(25), call=judge, retries=2)
    assert res.unjudged_windows == 1 and res.calls == 1 + 3 + 1
    bad = res.window_log[1]
    assert not bad.judged and bad.attempts == 3 and "unreadable" in bad.error
    assert res.rubrics[0].met and res.rubrics[0].window == 0


async def test_failing_calls_never_crash_the_judge():
    judge = FakeJudge(lambda w, a, r: RuntimeError("endpoint down"))
    res = await judge_episode(TASK, conversation(12), call=judge, retries=1)
    assert (res.unjudged_windows, res.windows, res.calls) == (2, 2, 0)
    assert "endpoint down" in res.window_log[0].error
    assert res.passed is None and res.score is None  # unjudged, never a silent 0
    assert res.unjudged.startswith("no readable judge output in 2 of 2 window(s): judge call")


async def test_retries_zero_means_one_attempt():
    judge = FakeJudge(lambda w, a, r: "")
    res = await judge_episode(TASK, conversation(5), call=judge, retries=0)
    assert res.calls == 1 and res.unjudged_windows == 1 and res.window_log[0].error == "empty judge reply"


async def test_task_without_rubrics_and_empty_trajectory():
    bare = Task(id="b", benchmark="vitabench", domain="delivery", instructions="x")
    judge = FakeJudge(lambda w, a, r: "[]")
    res = await judge_episode(bare, conversation(5), call=judge)
    assert res.passed and res.calls == 0 and "no rubrics" in res.note
    res = await judge_episode(TASK, [SystemMessage("only a prompt")], call=judge)
    assert (res.windows, res.calls, res.passed) == (0, 0, False) and "empty" in res.note


async def test_messages_may_come_as_dicts():
    judge = FakeJudge(lambda w, a, r: verdicts(rubric_0=True))
    as_dicts = msgspec.json.decode(msgspec.json.encode(conversation(4)))
    res = await judge_episode(TASK, as_dicts, call=judge)
    assert res.windows == 1 and "[4] user: user says 4" in judge.requests[0].messages[1].content


# ---- the variants (Table 5) ----------------------------------------------------------------


async def test_full_trajectory_with_rubrics_is_one_call():
    judge = FakeJudge(lambda w, a, r: verdicts(rubric_0=True, rubric_3=True))
    res = await judge_episode(TASK, conversation(25), call=judge, method="full")
    assert (res.windows, res.calls, res.score) == (1, 1, 0.5)
    body = judge.requests[0].messages[1].content
    assert "<trajectory_content>" in body and "[25] assistant" in body and "[1] assistant" in body
    assert judge.requests[0].sweepbench["method"] == "full"


async def test_sliding_without_rubrics_carries_memory_and_verdict():
    def script(w, a, r):
        if w == 0:
            return '{"memory": "ordered in [7]", "justification": "not yet", "meetExpectation": false}'
        if w == 1:
            return '{"memory": "ordered in [7]; paid [12]", "justification": "done", "meetExpectation": true}'
        return "garbage"
    judge = FakeJudge(script)
    res = await judge_episode(TASK, conversation(25), call=judge, method="sliding_no_rubrics",
                              retries=0)
    # the last window went unread: the verdict carried so far is no verdict of the whole
    assert (res.passed, res.score, res.rubrics, res.windows) == (None, None, [], 3)
    assert res.unjudged_windows == 1 and res.reasoning == "done"
    second = judge.requests[1].messages[1].content
    assert "<memory>\nordered in [7]\n</memory>" in second
    assert '"meetExpectation": false' in second
    assert "<current_rubrics>" not in second


async def test_full_without_rubrics():
    judge = FakeJudge(lambda w, a, r: '```json\n{"justification": "missed the time", '
                                      '"meetExpectation": false}\n```')
    res = await judge_episode(TASK, conversation(25), call=judge, method="full_no_rubrics")
    assert (res.passed, res.score, res.calls, res.reasoning) == (False, 0.0, 1, "missed the time")
    assert "<memory>" not in judge.requests[0].messages[1].content


@pytest.mark.parametrize("method", ["sliding", "full", "sliding_no_rubrics", "full_no_rubrics"])
async def test_every_method_with_the_scripted_double(method):
    res = await judge_episode(TASK, conversation(25), call=double(True), method=method)
    assert res.passed and res.unjudged_windows == 0
    res = await judge_episode(TASK, conversation(25), call=double(False), method=method)
    assert not res.passed and res.unjudged_windows == 0


# ---- the scripted double's scripting --------------------------------------------------------


async def test_double_garbage_once_recovers_and_garbage_always_does_not():
    res = await judge_episode(TASK, conversation(25), call=double("garbage:1"))
    assert res.unjudged_windows == 0 and res.calls == 6
    res = await judge_episode(TASK, conversation(25), call=double("garbage"))
    assert res.unjudged_windows == 3 and res.calls == 9 and not any(r.met for r in res.rubrics)


async def test_double_per_window_hints_reverse_a_rubric():
    hint = [True, None, {"rubric_2": False}]
    res = await judge_episode(TASK, conversation(25), call=double(hint))
    assert [r.met for r in res.rubrics] == [True, True, False, True]
    assert res.rubrics[2].window == 2


async def test_double_truncated_reply_is_recovered_partially():
    said = [AssistantMessage("noodles ordered; address is the hospital; mild flavour; "
                             "delivered before noon")]
    res = await judge_episode(TASK, said, call=double(None))
    assert [r.met for r in res.rubrics] == [True, True, True, True]  # the default rule
    res = await judge_episode(TASK, said, call=double("truncated"))
    # the last entry lost its verdict: its rubric keeps its state, the others are judged
    assert res.unjudged_windows == 0
    assert [r.met for r in res.rubrics] == [True, True, True, False]


def test_double_default_rule_is_deterministic_and_word_based():
    from sweepbench.benchmarks.vitabench.judge_prompts import judge_user_prompt

    states = [{"rubric_idx": "rubric_0", "rubric": "Rice noodles delivered to Yunnan Hospital",
               "justification": "", "meetExpectation": False},
              {"rubric_idx": "rubric_1", "rubric": "Booked a spa massage",
               "justification": "", "meetExpectation": False},
              {"rubric_idx": "rubric_2", "rubric": "Booked a spa massage",
               "justification": "", "meetExpectation": True}]
    user = judge_user_prompt("sliding", content="[3] assistant: rice noodles to yunnan hospital",
                             rubrics=states)
    req = ChatRequest(model="scripted/judge", messages=[SystemMessage("s"), UserMessage(user)],
                      sweepbench={"window": 0})
    a, b = scripted_judge(req), scripted_judge(req)
    assert a == b
    got = msgspec.json.decode(a.content.strip("`").removeprefix("json"))
    assert [g["meetExpectation"] for g in got] == [True, False, True]


def test_double_rejects_unknown_hints_and_foreign_prompts():
    req = ChatRequest(model="scripted/judge", messages=[UserMessage("<window_content>\nx\n</window_content>")],
                      sweepbench={"judge_hint": "sometimes"})
    with pytest.raises(ValueError, match="judge_hint"):
        scripted_judge(req)
    with pytest.raises(ValueError, match="window_content"):
        scripted_judge(ChatRequest(model="scripted/judge", messages=[UserMessage("hello")]))
