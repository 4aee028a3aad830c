"""One episode as the page shows it, built from what ``queries.StoreReader.episode`` read.

Three things are put together here that the store keeps apart:

- **calls to messages**: each ``model_call`` journal event is tied to the message it produced
  (an agent call to its assistant message, a user-simulator call to its user turn), in
  order and only where the texts agree; every call is listed anyway with its usage,
  latency, attempts and cost.
- **tool results**: the ``tool_call`` events say whether a call failed; they pair with the
  record's last tool messages the same way.
- **judge windows**: a rubric judgment keeps its windows' message ranges (``window_log``)
  and its final rubric states; the states after each window are rebuilt from the judge's own
  journal (its replies, read with the judge's parser, carried as the engine carries them)
  and checked against the final states. Where they disagree, or there is no journal
  (imported runs), the windows are shown without states and the page says why.

Costs are :mod:`sweepbench.results.cost`'s: each call's usage at the prices its run stored
for the endpoint it went to (or the viewer's override for that endpoint); a call without a
price has ``cost: None``, never a guess.
"""

from __future__ import annotations

from typing import Any, Mapping

import msgspec

from sweepbench.ids import EPISODE_JOURNAL, judge_journal
from sweepbench.judge.parsing import parse_overall_verdict, parse_rubric_verdicts
from sweepbench.model_json import ArgumentsError, parse_arguments
from sweepbench.results.cost import call_cost
from sweepbench.results.profile import Prices
from sweepbench.store.reads import ModelCallRow
from sweepbench.wire import Usage

__all__ = ["build_episode"]

_CALLER_ROLE = {"agent": "assistant", "user": "user"}  # journal role -> the role of its message

RunPrices = Mapping[str, Mapping[str, Prices]]
"""run_id -> endpoint -> the prices that run stored (``results.cost.prices_by_run``)."""


class _Pricing:
    """Costs one journaled call as the report does (``results.cost.call_cost``)."""

    def __init__(self, prices: RunPrices, override: Mapping[str, Prices] | None) -> None:
        self.prices, self.override = prices, override

    def cost(self, key: str, journal: str, ev: Mapping, endpoint: str | None,
             usage: Usage) -> float | None:
        p = ev.get("payload") or {}
        attempts = p.get("attempts")
        prompt, completion, cached = (max(0, x) for x in (
            usage.prompt_tokens, usage.completion_tokens, usage.cached_prompt_tokens))
        row = ModelCallRow(
            key, journal, ev.get("run_id"), endpoint,
            p.get("role") if isinstance(p.get("role"), str) else None, prompt, completion,
            min(cached, prompt), None,
            attempts if isinstance(attempts, int) and not isinstance(attempts, bool) else None,
            None)
        return call_cost(row, self.prices, self.override).cost


def _usage(payload: Mapping) -> Usage:
    try:
        return msgspec.convert(payload.get("usage") or {}, Usage)
    except msgspec.ValidationError:
        return Usage()


def _args(text: Any) -> Any:
    """Tool-call arguments as a value: the record may hold them re-serialised (VitaBench
    re-sends them as Python's ``json.dumps`` writes them), the journal as the model wrote."""
    if isinstance(text, str):
        try:
            return parse_arguments(text)
        except ArgumentsError:
            pass
    return text


def _text(message: Any) -> tuple[Any, Any]:
    """What identifies a message's content: its text and its tool calls' names and args."""
    if not isinstance(message, Mapping):
        return None, None
    calls = [((tc.get("function") or {}).get("name"),
              _args((tc.get("function") or {}).get("arguments")))
             for tc in message.get("tool_calls") or [] if isinstance(tc, Mapping)]
    return (message.get("content") or "").strip(), calls


def _calls(key: str, events: list[dict], messages: list[dict],
           model_of: Mapping[str, str | None], pricing: _Pricing) -> list[dict]:
    calls = []
    for ev in events:
        p = ev.get("payload")
        if ev.get("kind") != "model_call" or not isinstance(p, Mapping):
            continue
        usage = _usage(p)
        role = str(p.get("role") or "agent")
        # where the call went; a journal without endpoints (an import) by its role
        endpoint = ev.get("endpoint") or model_of.get(role, model_of.get("user"))
        cost = pricing.cost(key, EPISODE_JOURNAL, ev, endpoint, usage)
        calls.append({
            "seq": ev["seq"], "role": role, "model": endpoint, "ts": ev.get("ts"),
            "run_id": ev.get("run_id"), "usage": msgspec.to_builtins(usage),
            "latency_s": p.get("latency_s"), "attempts": p.get("attempts"),
            "statuses": p.get("statuses"), "cost": cost, "message_index": None,
            "_reply": p.get("message"),
        })
    for role, msg_role in _CALLER_ROLE.items():
        # From the end backwards, each call takes the nearest earlier message of its role
        # with the same text: replies are appended in order, and what has no call (a
        # greeting, a task's history) sits at the start. A call whose reply is in no message
        # (a referee's verdict, journaled as the user model's) stays untied.
        slot = len(messages)
        for call in reversed([c for c in calls if c["role"] == role]):
            said = _text(call["_reply"])
            for i in range(slot - 1, -1, -1):
                m = messages[i]
                wrote = _text(m)
                if m.get("role") == msg_role and (said == wrote or (
                        role == "user" and said[0] == wrote[0])):
                    call["message_index"], slot = i, i
                    break
    for c in calls:
        del c["_reply"]
    return calls


def _tool_outcomes(events: list[dict], messages: list[dict]) -> dict[int, bool]:
    """Message index -> whether that tool call succeeded (from the ``tool_call`` events)."""
    oks = [bool((ev.get("payload") or {}).get("ok", True)) for ev in events
           if ev.get("kind") == "tool_call"]
    slots = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    if len(oks) > len(slots):
        return {}
    return dict(zip(slots[len(slots) - len(oks):], oks))


def _conversation_index(messages: list[dict]) -> list[int | None]:
    """Each message's index among the non-system messages (how judges number them)."""
    out, n = [], 0
    for m in messages:
        if m.get("role") == "system":
            out.append(None)
        else:
            out.append(n)
            n += 1
    return out


def _replies(journal: list[dict]) -> list[str | None]:
    out = []
    for ev in journal:
        msg = (ev.get("payload") or {}).get("message")
        out.append(msg.get("content") if isinstance(msg, Mapping) else None)
    return out


def _rubric_windows(details: dict, journal: list[dict]) -> tuple[list[dict], str | None]:
    """The rubric states after each window, rebuilt from the judge's replies."""
    log = [w for w in details.get("window_log") or [] if isinstance(w, Mapping)]
    rubrics = [r for r in details.get("rubrics") or [] if isinstance(r, Mapping)]
    windows = [{"index": w.get("index"), "start": w.get("start"), "end": w.get("end"),
                "judged": w.get("judged"), "attempts": w.get("attempts"),
                "error": w.get("error"), "states": None, "verdict": None} for w in log]
    replies = _replies(journal)
    if not replies:
        return windows, ("the judge's replies are not in this store's journal: window "
                         "ranges only" if windows else None)
    texts = [str(r.get("rubric", "")) for r in rubrics]
    keys = [f"rubric_{i}" for i in range(len(texts))]

    def read(text: str | None) -> Any:
        if texts:
            v = parse_rubric_verdicts(text, keys, texts)
            return v if any(x.met is not None for x in v.values()) else None
        return parse_overall_verdict(text)

    met = [False] * len(texts)
    why = [""] * len(texts)
    pos = 0
    for w in windows:
        verdicts = None
        budget = w["attempts"] if isinstance(w["attempts"], int) else 1
        while pos < len(replies) and budget > 0:
            got = read(replies[pos])
            pos += 1
            budget -= 1
            if got is not None:
                verdicts = got
                break
        if w["judged"] and verdicts is None:
            return [{**w, "states": None} for w in windows], (
                "the judge's journal does not match its windows: window ranges only")
        if not texts:  # one overall verdict per window
            if verdicts is not None:
                w["verdict"] = {"met": verdicts.met, "justification": verdicts.reasoning}
            continue
        states = []
        for i in range(len(texts)):
            v = (verdicts or {}).get(i)
            changed = v is not None and v.met is not None and v.met != met[i]
            if v is not None and v.reasoning.strip():
                why[i] = v.reasoning
            if changed:
                met[i] = bool(v.met)
            states.append({"rubric": texts[i], "met": met[i], "justification": why[i],
                           "changed": changed, "mentioned": v is not None})
        w["states"] = states
    final = [bool(r.get("met")) for r in rubrics]
    if texts and met != final:
        return [{**w, "states": None} for w in windows], (
            "the states rebuilt from the judge's journal differ from the judgment's: "
            "window ranges only")
    return windows, None


def _judgment(key: str, j: dict, anchors: dict[int, int], pricing: _Pricing) -> dict:
    details = j.get("details") if isinstance(j.get("details"), dict) else {}
    out = {k: j.get(k) for k in ("judge", "method", "passed", "score", "created_at", "run_id")}
    out["details"] = details
    journal = j.get("journal") or []
    out["calls"] = len(journal)
    usages = [_usage(ev.get("payload") or {}) for ev in journal]
    out["usage"] = msgspec.to_builtins(sum(usages, Usage()))
    name = judge_journal(str(j.get("judge")), str(j.get("method")))
    costs = [pricing.cost(key, name, ev, ev.get("endpoint") or j.get("judge"), u)
             for ev, u in zip(journal, usages)]
    out["cost"] = sum(costs) if costs and all(c is not None for c in costs) else None
    out["windows"], out["windows_note"] = ([], None)
    if details.get("window_log"):
        windows, note = _rubric_windows(details, journal)
        for w in windows:
            end = w.get("end")
            # shown after the last message of its range
            w["anchor"] = anchors.get(end - 1) if isinstance(end, int) and end > 0 else None
        out["windows"], out["windows_note"] = windows, note
    return out


def build_episode(raw: dict, *, prices: RunPrices,
                  override: Mapping[str, Prices] | None = None) -> dict:
    """The episode page's JSON from ``StoreReader.episode``'s dict; ``prices``: every run's
    stored prices, ``override``: endpoint -> prices that replace them."""
    pricing = _Pricing(prices, override)
    key = raw["episode_key"]
    record = raw.get("record") if isinstance(raw.get("record"), dict) else None
    messages = [m for m in (record or {}).get("messages") or [] if isinstance(m, dict)]
    model_of = {"agent": raw["model"], "user": raw.get("user_model")}
    events = raw.get("events") or []
    calls = _calls(key, events, messages, model_of, pricing)
    conv = _conversation_index(messages)
    anchors = {c: i for i, c in enumerate(conv) if c is not None}
    tool_ok = _tool_outcomes(events, messages)
    shown = []
    for i, m in enumerate(messages):
        shown.append({**m, "index": i, "number": None if conv[i] is None else conv[i] + 1,
                      "tool_ok": tool_ok.get(i)})
    names = {tc["id"]: (tc.get("function") or {}).get("name")
             for m in messages for tc in m.get("tool_calls") or []
             if isinstance(tc, Mapping) and "id" in tc}
    for m in shown:
        if m.get("role") == "tool" and not m.get("name"):
            m["name"] = names.get(m.get("tool_call_id"))
    judgments = [_judgment(key, j, anchors, pricing) for j in raw.get("judgments") or []]
    costs = [c["cost"] for c in calls]
    judge_costs = [j["cost"] for j in judgments if j["calls"]]
    totals = {
        "calls": len(calls),
        "latency_s": sum(c["latency_s"] or 0.0 for c in calls),
        "cost": sum(costs) if costs and all(c is not None for c in costs) else None,
        "priced": sum(c is not None for c in costs),
        "judge_cost": (sum(judge_costs) if judge_costs and all(c is not None for c in judge_costs)
                       else None),
    }
    record_meta = {k: v for k, v in (record or {}).items() if k not in ("messages", "final_state")}
    identity = raw.get("identity") if isinstance(raw.get("identity"), dict) else {}
    return {
        "episode": {k: raw.get(k) for k in ("episode_key", "label", "model", "benchmark",
                                             "spec", "domain", "task_id", "lang", "trial",
                                             "user_model", "user_mode", "unreachable", "status",
                                             "termination", "run_id", "started_at",
                                             "finished_at", "runs")},
        "identity": identity,
        "record": record_meta if record is not None else None,
        "user_model": raw.get("user_model"),
        "messages": shown,
        "calls": calls,
        "totals": totals,
        "judgments": judgments,
    }
