"""``scripted/judge``: a deterministic test double that answers sweepbench's judge prompts.

It reads the judge's user message (upstream's format, ``judge_prompts.judge_user_prompt``,
the same whichever system template was used): the rubrics and their current statuses from the JSON
in ``<current_rubrics>``, the conversation from ``<window_content>`` or
``<trajectory_content>``, and for the no-rubric variants the verdict so far from
``<current_evaluation>``. It answers in the upstream reply format (a fenced JSON array of
``rubric_idx`` / ``rubric`` / ``justification`` / ``meetExpectation``; one object for the
no-rubric variants, with ``memory`` when sliding).

**Verdicts.** The request's ``sweepbench.judge_hint`` scripts the judge when present:

- ``true`` / ``false``: every rubric (or the overall verdict) gets that value in every window
  (``false`` after ``true`` is an explicit negation, so it reverses a met rubric);
- ``{"rubric_1": false, "0": true}``: per rubric, by key or index (``"overall"`` for the
  no-rubric variants); rubrics not listed follow the rule below;
- ``[hint, hint, ...]``: one hint per window (``sweepbench.window``); windows past the end
  follow the rule;
- ``"garbage"``: a reply with no JSON at all, on every attempt (the window is unjudgeable);
  ``"garbage:N"``: garbage on the first N attempts of each window (``sweepbench.attempt``),
  a proper reply afterwards; ``"truncated"``: the proper reply cut off inside its last entry.

In a sweep, the judge pool tells the double the deterministic state check's verdict
(``sweepbench.reference_verdict``, a bool, sent only to scripted endpoints); without a
``judge_hint`` the double follows it, so a sweep of test doubles is judged consistently with
the state check. Without either, the rule: a rubric is met when it was already met, or when at least 60% of its
content words appear in the window's text (words: ASCII letter/digit runs of 4+ characters
outside a short stop list, lower-cased; for Chinese, each pair of adjacent CJK characters); a
rubric without content words is met. The no-rubric variants apply the same rule to the whole
instruction. The rule is a deterministic stand-in, not a judgment of quality.

The double is a pure function of the request, so retried and replayed calls get the same answer.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import orjson

from sweepbench.benchmarks.vitabench.judge_prompts import TAGS
from sweepbench.benchmarks.vitabench.judge_reading import met as verdict_met
from sweepbench.wire import AssistantMessage, ChatRequest, SystemMessage, UserMessage

__all__ = ["MET_FRACTION", "content_words", "scripted_judge"]

MET_FRACTION = 0.6

_STOP = frozenset(["about", "above", "after", "again", "also", "because", "been", "before", "being", "between", "both", "could", "does", "doing", "down", "during", "each", "either", "from", "further", "have", "having", "here", "into", "just", "more", "most", "must", "need", "needs", "only", "other", "over", "same", "should", "some", "such", "than", "that", "their", "them", "then", "there", "these", "they", "this", "those", "through", "under", "until", "very", "want", "what", "when", "where", "which", "while", "will", "with", "within", "would", "your", "yours", "user", "users", "order", "orders", "should", "the", "and", "for", "not", "are", "but", "was"])

_GARBAGE = ("I looked at the conversation and I think the assistant mostly did what was asked, "
            "although some points are unclear to me. Overall it seems fine")
_CJK = re.compile(r"[\u4e00-\u9fff]+")
_ASCII_WORD = re.compile(r"[a-z0-9]{4,}")


def content_words(text: str) -> set[str]:
    """The words the default rule looks for (see the module docstring)."""
    low = text.casefold()
    words = {w for w in _ASCII_WORD.findall(low) if w not in _STOP}
    for run in _CJK.findall(low):
        words |= {run[i:i + 2] for i in range(len(run) - 1)} or {run}
    return words


def _between(text: str, tag: str) -> str | None:
    m = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.DOTALL)
    return m.group(1) if m else None


def _judge_input(req: ChatRequest) -> str:
    """The first user message carrying the conversation (retries append nudges after it)."""
    for m in req.messages:
        if isinstance(m, UserMessage) and (f"<{TAGS['window']}>" in m.content
                                           or f"<{TAGS['trajectory']}>" in m.content):
            return m.content
    raise ValueError("scripted/judge: no <window_content> or <trajectory_content> in the request")


def _hint_for_window(hint: Any, window: int) -> Any:
    if isinstance(hint, list):
        return hint[window] if 0 <= window < len(hint) else None
    return hint


def _per_item(hint: Any, key: str, index: int) -> bool | None:
    if isinstance(hint, bool):
        return hint
    if isinstance(hint, dict):
        for k in (key, str(index), index):
            if k in hint and isinstance(hint[k], bool):
                return hint[k]
    return None


def _fenced(payload: Any) -> str:
    body = orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode()
    return f"```json\n{body}\n```"


def _rule(text: str, window_words: set[str], already: bool) -> tuple[bool, str]:
    words = content_words(text)
    if already:
        return True, "already met in an earlier window"
    if not words:
        return True, "no content words to look for"
    seen = len(words & window_words)
    met = seen >= MET_FRACTION * len(words)
    return met, f"{seen}/{len(words)} content words found in this window"


def scripted_judge(req: ChatRequest) -> AssistantMessage:
    """A deterministic judge reply to a sweepbench judge request (see the module docstring)."""
    meta = req.sweepbench or {}
    window = int(meta.get("window", 0) or 0)
    attempt = int(meta.get("attempt", 0) or 0)
    raw_hint = meta.get("judge_hint", meta.get("reference_verdict"))
    hint = _hint_for_window(raw_hint, window)

    if isinstance(hint, str):
        kind, _, n = hint.partition(":")
        if kind == "garbage" and (not n or attempt < int(n or 0)):
            return AssistantMessage(_GARBAGE)
        if kind not in ("garbage", "truncated"):
            raise ValueError(f"scripted/judge: unknown judge_hint {hint!r}")

    text = _judge_input(req)
    content = _between(text, TAGS["window"]) or _between(text, TAGS["trajectory"]) or ""
    window_words = content_words(content)
    rubrics_json = _between(text, TAGS["rubrics"])

    if rubrics_json is not None:
        try:
            states = msgspec.json.decode(rubrics_json)
        except msgspec.DecodeError as exc:
            raise ValueError(f"scripted/judge: <current_rubrics> is not JSON: {exc}") from None
        replies = []
        for i, st in enumerate(states):
            key = str(st.get("rubric_idx", f"rubric_{i}"))
            forced = _per_item(hint, key, i)
            if forced is not None:
                met, why = forced, f"scripted: {str(forced).lower()} (hint)"
            else:
                met, why = _rule(str(st.get("rubric", "")), window_words,
                                 verdict_met(st.get("meetExpectation")))
            replies.append({"rubric_idx": key, "rubric": st.get("rubric", ""),
                            "justification": f"[window {window + 1}] {why}",
                            "meetExpectation": met})
        payload: Any = replies
    else:
        evaluation = _between(text, TAGS["evaluation"])
        before = False
        if evaluation:
            try:
                before = verdict_met(msgspec.json.decode(evaluation).get("meetExpectation"))
            except (msgspec.DecodeError, AttributeError):
                before = False
        forced = _per_item(hint, "overall", 0)
        if forced is not None:
            met, why = forced, f"scripted: {str(forced).lower()} (hint)"
        else:
            instruction = _instruction(req)
            met, why = _rule(instruction, window_words, before)
        payload = {"justification": f"[window {window + 1}] {why}", "meetExpectation": met}
        if _between(text, TAGS["memory"]) is not None:
            memory = _between(text, TAGS["memory"]) or ""
            payload = {"memory": (memory + f"\nwindow {window + 1}: {why}").strip(), **payload}

    out = _fenced(payload)
    if isinstance(hint, str) and hint == "truncated":
        out = out[: out.rfind('"meetExpectation"')]  # cut inside the last entry
    return AssistantMessage(out)


_INSTRUCTION_HEADINGS = ("# What the user wanted (complete instruction)", "# 用户的完整需求",
                         "# User Complete Instruction", "# 用户完整指令")


def _instruction(req: ChatRequest) -> str:
    """The user's instruction from the judge's system prompt (own or upstream layout)."""
    system = next((m.content for m in req.messages if isinstance(m, SystemMessage)), "")
    for heading in _INSTRUCTION_HEADINGS:
        at = system.find(heading)
        if at >= 0:
            rest = system[at + len(heading):].lstrip("\n")
            end = rest.find("\n# ")
            return rest if end < 0 else rest[:end]
    return ""
