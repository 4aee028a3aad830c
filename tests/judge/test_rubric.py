"""The rubric judge engine with a minimal benchmark of its own (no VitaBench): what it asks
when, what it carries between windows, what it pays for, and how it scores."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from sweepbench.judge.rubric import (
    KEEP,
    LenientReading,
    OverallUpdate,
    RubricUpdate,
    make_windows,
    run_rubric_judge,
)
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    SystemMessage,
    Usage,
    UserMessage,
)

NOT_JUDGED = "(not judged yet)"


class Prompts(LenientReading):
    """A benchmark's judge prompts reduced to what a test can read back: the user prompt is
    the JSON of what the engine passed in."""

    lang = "xx"
    source = "test"
    not_judged = NOT_JUDGED

    def __init__(self, rubrics: list[str]) -> None:
        self.rubrics = rubrics

    def system(self, method: str, window_idx: int, total_windows: int) -> str:
        return f"{method} {window_idx}/{total_windows}"

    def user(self, method: str, *, content: str, rubrics: list[dict[str, Any]] | None = None,
             memory: Any = "", evaluation: dict[str, Any] | None = None) -> str:
        return msgspec.json.encode({"content": content, "rubrics": rubrics, "memory": memory,
                                    "evaluation": evaluation}).decode()

    def render(self, convo, start: int, end: int) -> str:
        return " ".join(f"[{i + 1}]{m.content}" for i, m in enumerate(convo[start:end], start))

    def retry_nudge(self) -> str:
        return "JSON, please"


class Reply:
    def __init__(self, text: str | None, usage: Usage) -> None:
        self.message = AssistantMessage(text)
        self.usage = usage


class Judge:
    """Answers ``script(window, attempt, what the engine passed to user())``."""

    def __init__(self, script) -> None:
        self.script = script
        self.requests: list[ChatRequest] = []

    def sent(self, i: int) -> dict[str, Any]:
        return msgspec.json.decode(self.requests[i].messages[1].content)

    async def __call__(self, req: ChatRequest) -> Reply:
        self.requests.append(req)
        meta = req.sweepbench
        out = self.script(meta["window"], meta["attempt"],
                          msgspec.json.decode(req.messages[1].content))
        if isinstance(out, Exception):
            raise out
        return Reply(out, Usage(prompt_tokens=100, completion_tokens=7))


def said(**met: Any) -> str:
    return msgspec.json.encode([{"rubric_idx": k, "justification": f"{k} is {v}",
                                 "meetExpectation": v} for k, v in met.items()]).decode()


def overall(met: bool, why: str, memory: str | None = None) -> str:
    out: dict[str, Any] = {"justification": why, "meetExpectation": met}
    if memory is not None:
        out["memory"] = memory
    return msgspec.json.encode(out).decode()


def talk(n: int) -> list:
    return [SystemMessage("agent prompt"), *(
        UserMessage(f"u{i}") if i % 2 else AssistantMessage(f"a{i}") for i in range(n))]


RUBRICS = ["r0", "r1", "r2"]
METHODS = ("sliding", "full", "sliding_no_rubrics", "full_no_rubrics")


# ---- nothing to judge -----------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("messages", [[], [SystemMessage("only a prompt")]])
async def test_an_empty_trajectory_costs_no_judge_call(method, messages) -> None:
    judge = Judge(lambda w, a, s: said(rubric_0=True))
    res = await run_rubric_judge(Prompts(RUBRICS), messages, call=judge, method=method)
    assert judge.requests == [] and (res.calls, res.windows, res.usage) == (0, 0, Usage())
    assert (res.passed, res.score, res.unjudged) == (False, 0.0, None)
    assert res.note == "empty trajectory: nothing to judge"
    if method in ("sliding", "full"):
        assert [(r.rubric, r.met, r.reasoning, r.window) for r in res.rubrics] == \
            [(r, False, "", None) for r in RUBRICS]


@pytest.mark.parametrize("method", ["sliding", "full"])
async def test_a_task_without_rubrics_passes_without_a_call(method) -> None:
    judge = Judge(lambda w, a, s: said(rubric_0=False))
    res = await run_rubric_judge(Prompts([]), talk(30), call=judge, method=method)
    assert judge.requests == [] and res.calls == 0
    assert (res.passed, res.score, res.windows, res.rubrics) == (True, 1.0, 0, [])
    assert res.note == "task has no rubrics to judge"


# ---- arguments ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kw, what", [({"window": 0}, "window must be >= 1"),
                                      ({"window": 4, "overlap": 4}, "overlap must be in"),
                                      ({"overlap": -1}, "overlap must be in"),
                                      ({"retries": -1}, "retries must be >= 0")])
async def test_bad_arguments_are_refused_for_every_method(method, kw, what) -> None:
    with pytest.raises(ValueError, match=what):
        await run_rubric_judge(Prompts(RUBRICS), talk(3), call=Judge(None), method=method, **kw)


async def test_an_unknown_method_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown judge method 'fuzzy'; known: sliding, full, "
                                         "sliding_no_rubrics, full_no_rubrics"):
        await run_rubric_judge(Prompts(RUBRICS), talk(3), call=Judge(None), method="fuzzy")


def test_windows_cover_every_message_with_the_overlap() -> None:
    assert make_windows(1, 1, 0) == [(0, 1)]
    assert make_windows(6, 4, 3) == [(0, 4), (1, 5), (2, 6)]
    assert make_windows(-3, 4, 1) == []
    with pytest.raises(ValueError, match=r"got overlap=2, window=2"):
        make_windows(5, 2, 2)


# ---- what is asked --------------------------------------------------------------------------


async def test_each_window_is_asked_once_with_its_place_and_the_callers_settings() -> None:
    judge = Judge(lambda w, a, s: said(rubric_0=True))
    res = await run_rubric_judge(Prompts(RUBRICS), talk(7), call=judge, window=4, overlap=1,
                                 meta={"task": "T", "role": "ignored"}, temperature=0.5,
                                 max_tokens=99)
    assert (res.windows, res.calls, res.template, res.lang) == (2, 2, "test", "xx")
    assert [(o.index, o.start, o.end, o.judged, o.attempts) for o in res.window_log] == \
        [(0, 0, 4, True, 1), (1, 3, 7, True, 1)]
    assert [r.messages[0].content for r in judge.requests] == ["sliding 1/2", "sliding 2/2"]
    assert [judge.sent(i)["content"] for i in range(2)] == ["[1]a0 [2]u1 [3]a2 [4]u3",
                                                           "[4]u3 [5]a4 [6]u5 [7]a6"]
    for i, req in enumerate(judge.requests):
        assert req.sweepbench == {"task": "T", "role": "judge", "method": "sliding",
                                  "window": i, "windows": 2, "attempt": 0}
        assert (req.temperature, req.max_tokens) == (0.5, 99)
    assert res.usage == Usage(prompt_tokens=200, completion_tokens=14)


async def test_full_asks_once_for_the_whole_trajectory() -> None:
    judge = Judge(lambda w, a, s: said(rubric_1=True))
    res = await run_rubric_judge(Prompts(RUBRICS), talk(25), call=judge, method="full", window=3,
                                 overlap=1)
    assert (res.windows, res.calls, res.score) == (1, 1, 1 / 3)
    assert judge.requests[0].messages[0].content == "full 1/1"
    assert judge.sent(0)["content"].startswith("[1]a0 [2]u1") and "[25]a24" in judge.sent(0)["content"]
    assert (judge.requests[0].temperature, judge.requests[0].max_tokens) == (0.0, None)


# ---- carried state --------------------------------------------------------------------------


async def test_rubric_states_carry_between_windows_and_record_where_they_changed() -> None:
    script = {0: said(rubric_0=True, rubric_2=True),
              1: said(rubric_0=True),  # said again: not a change
              2: said(rubric_2=False)}
    judge = Judge(lambda w, a, s: script[w])
    res = await run_rubric_judge(Prompts(RUBRICS), talk(9), call=judge, window=4, overlap=1)
    assert [(r.met, r.window) for r in res.rubrics] == [(True, 0), (False, None), (False, 2)]
    assert [r.reasoning for r in res.rubrics] == ["rubric_0 is True", "", "rubric_2 is False"]
    assert (res.passed, res.score) == (False, 1 / 3)
    first, second = judge.sent(0)["rubrics"], judge.sent(1)["rubrics"]
    assert first == [{"rubric_idx": f"rubric_{i}", "rubric": r, "justification": NOT_JUDGED,
                      "meetExpectation": False} for i, r in enumerate(RUBRICS)]
    assert [(s["justification"], s["meetExpectation"]) for s in second] == \
        [("rubric_0 is True", True), (NOT_JUDGED, False), ("rubric_2 is True", True)]


class Verbatim(Prompts):
    """Reads replies as ``{"<position>": [justification or null, verdict or null]}``: a null
    keeps that part; verdicts are the words "yes"/"no", met only for "yes"."""

    def read_rubrics(self, text, keys):
        data = msgspec.json.decode(text)
        return {int(i): RubricUpdate(KEEP if j is None else j, KEEP if v is None else v)
                for i, (j, v) in data.items()}

    def met(self, verdict: Any) -> bool:
        return verdict == "yes"


async def test_a_reply_may_update_one_part_of_a_rubric_and_keep_the_other() -> None:
    script = {0: '{"0": ["seen", "yes"], "1": ["not yet", "no"]}',
              1: '{"0": ["confirmed", null], "1": [null, "yes"]}'}
    judge = Judge(lambda w, a, s: script[w])
    res = await run_rubric_judge(Verbatim(["r0", "r1"]), talk(6), call=judge, window=4, overlap=2)
    assert [(r.met, r.reasoning, r.window) for r in res.rubrics] == \
        [(True, "confirmed", 0), (True, "not yet", 1)]
    assert [s["meetExpectation"] for s in judge.sent(1)["rubrics"]] == ["yes", "no"]
    assert res.passed and res.score == 1.0


async def test_all_met_passes() -> None:
    judge = Judge(lambda w, a, s: said(rubric_0=True, rubric_1=True, rubric_2=True))
    res = await run_rubric_judge(Prompts(RUBRICS), talk(4), call=judge)
    assert (res.passed, res.score, res.unjudged_windows, res.unjudged) == (True, 1.0, 0, None)


async def test_no_rubric_memory_and_verdict_carry_until_replaced() -> None:
    script = {0: overall(False, "not yet", memory="ordered at [2]"),
              1: overall(False, "still not"),  # no memory given: the memory stays
              2: overall(True, "paid at [8]", memory="ordered [2], paid [8]")}
    judge = Judge(lambda w, a, s: script[w])
    res = await run_rubric_judge(Prompts(RUBRICS), talk(9), call=judge, window=4, overlap=1,
                                 method="sliding_no_rubrics")
    assert [judge.sent(i)["memory"] for i in range(3)] == ["", "ordered at [2]", "ordered at [2]"]
    assert judge.sent(0)["evaluation"] == {"justification": NOT_JUDGED, "meetExpectation": False}
    assert judge.sent(2)["evaluation"] == {"justification": "still not", "meetExpectation": False}
    assert judge.sent(0)["rubrics"] is None
    assert (res.passed, res.score, res.reasoning, res.rubrics) == (True, 1.0, "paid at [8]", [])


class KeepsEvaluation(Prompts):
    def read_overall(self, method, text):
        return OverallUpdate(KEEP, text) if text.startswith("memo") else super().read_overall(method, text)


async def test_a_no_rubric_reply_may_keep_the_evaluation_and_change_the_memory() -> None:
    script = {0: overall(True, "done"), 1: "memo: nothing new"}
    judge = Judge(lambda w, a, s: script[w])
    res = await run_rubric_judge(KeepsEvaluation(RUBRICS), talk(6), call=judge, window=4,
                                 overlap=1, method="sliding_no_rubrics")
    assert (res.passed, res.reasoning, res.unjudged_windows) == (True, "done", 0)


@pytest.mark.parametrize("justification, shown", [(None, ""), (NOT_JUDGED, ""), (42, "42"),
                                                  ("because", "because")])
async def test_the_overall_reasoning_is_the_judges_text(justification, shown) -> None:
    class Reads(Prompts):
        def read_overall(self, method, text):
            return OverallUpdate({"justification": justification, "meetExpectation": False})

    res = await run_rubric_judge(Reads(RUBRICS), talk(2), call=Judge(lambda w, a, s: "x"),
                                 method="full_no_rubrics")
    assert (res.passed, res.score, res.reasoning) == (False, 0.0, shown)


# ---- recovery -------------------------------------------------------------------------------


async def test_an_unreadable_reply_is_asked_again_with_a_nudge() -> None:
    judge = Judge(lambda w, a, s: "hmm\nlet me think" if a == 0 else said(rubric_0=True))
    res = await run_rubric_judge(Prompts(RUBRICS), talk(3), call=judge, retries=1)
    assert res.calls == 2 and res.window_log[0].attempts == 2 and res.window_log[0].judged
    retry = judge.requests[1]
    assert retry.sweepbench["attempt"] == 1
    assert [(type(m), m.content) for m in retry.messages[2:]] == \
        [(AssistantMessage, "hmm\nlet me think"), (UserMessage, "JSON, please")]
    assert len(judge.requests[0].messages) == 2  # the first request was not changed after
    assert res.rubrics[0].met and res.usage == Usage(prompt_tokens=200, completion_tokens=14)


@pytest.mark.parametrize("reply, error", [
    ("no verdict\nhere " + "x" * 200, "unreadable judge reply: 'no verdict here " + "x" * 104 + "'"),
    ("   ", "empty judge reply"),
    (None, "empty judge reply"),
    (RuntimeError("endpoint down"), "judge call failed: RuntimeError: endpoint down"),
])
async def test_a_window_never_answered_readably_leaves_no_verdict(reply, error) -> None:
    def script(w, a, s):
        return said(rubric_0=True, rubric_1=True, rubric_2=True) if w == 0 else reply

    judge = Judge(script)
    res = await run_rubric_judge(Prompts(RUBRICS), talk(6), call=judge, window=4, overlap=1,
                                 retries=2)
    assert len(judge.requests) == 4 and res.calls == (4 if not isinstance(reply, Exception) else 1)
    bad = res.window_log[1]
    assert (bad.judged, bad.attempts, bad.error) == (False, 3, error)
    assert (res.passed, res.score, res.unjudged_windows) == (None, None, 1)
    assert res.unjudged == f"no readable judge output in 1 of 2 window(s): {error}"
    assert [r.met for r in res.rubrics] == [True, True, True]  # the state as last judged


async def test_an_unjudged_no_rubric_window_leaves_no_verdict_either() -> None:
    judge = Judge(lambda w, a, s: overall(True, "fine") if w == 0 else "??")
    res = await run_rubric_judge(Prompts(RUBRICS), talk(6), call=judge, window=4, overlap=1,
                                 retries=0, method="sliding_no_rubrics")
    assert (res.passed, res.score, res.calls, res.unjudged_windows) == (None, None, 2, 1)
    assert res.unjudged == "no readable judge output in 1 of 2 window(s): unreadable judge reply: '??'"


async def test_lenient_reading_keeps_what_a_reply_leaves_out() -> None:
    reading = Prompts(RUBRICS)
    text = msgspec.json.encode([{"rubric_idx": "rubric_1", "justification": "  ",
                                 "meetExpectation": True},
                                {"rubric_idx": "rubric_2", "justification": "why",
                                 "meetExpectation": None}]).decode()
    keys = [f"rubric_{i}" for i in range(3)]
    got = reading.read_rubrics(text, keys)
    assert got[1] == RubricUpdate(KEEP, True) and got[2] == RubricUpdate("why", KEEP)
    assert reading.read_rubrics('[{"rubric_idx": "rubric_1", "meetExpectation": null}]', keys) is None
    assert reading.read_rubrics("no json at all", keys) is None
    assert reading.read_overall("full_no_rubrics", "nothing") is None
    assert reading.read_overall("sliding_no_rubrics", overall(True, "ok")) == \
        OverallUpdate({"justification": "ok", "meetExpectation": True}, KEEP)
    assert reading.read_overall("sliding_no_rubrics", overall(False, "no", memory="m")).memory == "m"
    assert reading.met(True) and not reading.met("true") and not reading.met(1)


async def test_the_defaults_are_the_papers_windows_of_ten_overlapping_by_two_and_two_retries() -> None:
    assert make_windows(25) == [(0, 10), (8, 18), (16, 25)]
    judge = Judge(lambda w, a, s: "not json")
    res = await run_rubric_judge(Prompts(RUBRICS), talk(25), call=judge)
    assert [(o.start, o.end, o.attempts) for o in res.window_log] == [(0, 10, 3), (8, 18, 3), (16, 25, 3)]
    assert res.method == "sliding" and len(judge.requests) == 9
    assert {r.model for r in judge.requests} == {""}  # the caller's client names the model


async def test_no_rubric_windows_are_asked_like_rubric_ones() -> None:
    judge = Judge(lambda w, a, s: overall(True, f"window {w}") if a else None)
    res = await run_rubric_judge(Prompts(RUBRICS), talk(7), call=judge, window=4, overlap=1,
                                 method="sliding_no_rubrics", retries=1)
    assert res.method == "sliding_no_rubrics" and res.reasoning == "window 1"
    assert [judge.sent(i)["content"] for i in (0, 2)] == ["[1]a0 [2]u1 [3]a2 [4]u3",
                                                         "[4]u3 [5]a4 [6]u5 [7]a6"]
    assert [r.sweepbench for r in judge.requests] == [
        {"role": "judge", "method": "sliding_no_rubrics", "window": w, "windows": 2, "attempt": a}
        for w in (0, 1) for a in (0, 1)]
    assert judge.requests[1].messages[2] == AssistantMessage("")  # the empty reply, as sent back
    assert [(o.index, o.start, o.end, o.attempts) for o in res.window_log] == [(0, 0, 4, 2), (1, 3, 7, 2)]


async def test_an_unjudged_windows_outcome_says_where_it_was() -> None:
    judge = Judge(lambda w, a, s: said(rubric_0=True) if w == 0 else "??")
    res = await run_rubric_judge(Prompts(RUBRICS), talk(7), call=judge, window=4, overlap=1,
                                 retries=0)
    bad = res.window_log[1]
    assert (bad.index, bad.start, bad.end, bad.judged) == (1, 3, 7, False)
