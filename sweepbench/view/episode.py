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

Costs use the prices given to the viewer (per model name); a model without prices has
``cost: None``, never a guess.
"""

from __future__ import annotations

from typing import Any, Mapping

import msgspec

from sweepbench.judge.parsing import parse_overall_verdict, parse_rubric_verdicts
from sweepbench.results.profile import Prices, usage_cost
from sweepbench.wire import Usage

__all__ = ["build_episode"]

_CALLER_ROLE = {"agent": "assistant", "user": "user"}  # journal role -> the role of its message


def _usage(payload: Mapping) -> Usage:
    try:
        return msgspec.convert(payload.get("usage") or {}, Usage)
    except msgspec.ValidationError:
        return Usage()


def _text(message: Any) -> tuple[Any, Any]:
    """What identifies a message's content: its text and its tool calls' names and args."""
    if not isinstance(message, Mapping):
        return None, None
    calls = [((tc.get("function") or {}).get("name"), (tc.get("function") or {}).get("arguments"))
             for tc in message.get("tool_calls") or [] if isinstance(tc, Mapping)]
    return (message.get("content") or "").strip(), calls


def _calls(events: list[dict], messages: list[dict], model_of: Mapping[str, str | None],
           prices: Mapping[str, Prices]) -> list[dict]:
    calls = []
    for ev in events:
        p = ev.get("payload")
        if ev.get("kind") != "model_call" or not isinstance(p, Mapping):
            continue
        usage = _usage(p)
        role = str(p.get("role") or "agent")
        model = model_of.get(role, model_of.get("user"))
        price = prices.get(model) if model else None
        calls.append({
            "seq": ev["seq"], "role": role, "model": model, "ts": ev.get("ts"),
            "usage": msgspec.to_builtins(usage), "latency_s": p.get("latency_s"),
            "attempts": p.get("attempts"), "statuses": p.get("statuses"),
            "cost": None if price is None else usage_cost(usage, price),
            "message_index": None, "_reply": p.get("message"),
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


def _judgment(j: dict, anchors: dict[int, int], model_prices: Prices | None) -> dict:
    details = j.get("details") if isinstance(j.get("details"), dict) else {}
    out = {k: j.get(k) for k in ("judge", "method", "passed", "score", "created_at")}
    out["details"] = details
    journal = j.get("journal") or []
    out["calls"] = len(journal)
    usage = sum((_usage(ev.get("payload") or {}) for ev in journal), Usage())
    out["usage"] = msgspec.to_builtins(usage)
    out["cost"] = None if model_prices is None or not journal else usage_cost(usage, model_prices)
    out["windows"], out["windows_note"] = ([], None)
    if details.get("window_log"):
        windows, note = _rubric_windows(details, journal)
        for w in windows:
            end = w.get("end")
            # shown after the last message of its range
            w["anchor"] = anchors.get(end - 1) if isinstance(end, int) and end > 0 else None
        out["windows"], out["windows_note"] = windows, note
    return out


def build_episode(raw: dict, *, run_config: Mapping[str, Any],
                  prices: Mapping[str, Prices]) -> dict:
    """The episode page's JSON from ``StoreReader.episode``'s dict."""
    record = raw.get("record") if isinstance(raw.get("record"), dict) else None
    messages = [m for m in (record or {}).get("messages") or [] if isinstance(m, dict)]
    user_model = run_config.get("user_model")
    model_of = {"agent": raw["model"], "user": user_model}
    events = raw.get("events") or []
    calls = _calls(events, messages, model_of, prices)
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
    costs = [c["cost"] for c in calls]
    totals = {
        "calls": len(calls),
        "latency_s": sum(c["latency_s"] or 0.0 for c in calls),
        "cost": sum(costs) if costs and all(c is not None for c in costs) else None,
        "priced": sum(c is not None for c in costs),
    }
    record_meta = {k: v for k, v in (record or {}).items() if k not in ("messages", "final_state")}
    return {
        "episode": {k: raw.get(k) for k in ("episode_id", "model", "benchmark", "domain",
                                             "task_id", "lang", "trial", "status",
                                             "termination", "started_at", "finished_at")},
        "record": record_meta if record is not None else None,
        "user_model": user_model,
        "messages": shown,
        "calls": calls,
        "totals": totals,
        "judgments": [_judgment(j, anchors, prices.get(j.get("judge"))) for j in
                      raw.get("judgments") or []],
    }
