"""T1-Bench prompts: assistant, user, domain classifier, exit check and judge (paper App. F).

The paper's prompts are read from ``<data_dir>/t1/prompts/`` when present. They were written
for one domain (bars, named in the file names), so they are adapted to a task by structure:
the PERSONA / USER / GOAL sections are refilled, the example domain's words and tool names
are replaced by the task's, and the turn budget is the task's. Without the files (or when a
file's structure is not recognised) sweepbench's own prompts are used. Everything here is a
pure function from a task and a conversation to text, or from model output to values.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any

import msgspec
import orjson

from sweepbench.benchmarks.t1.data.ontology import DOMAINS
from sweepbench.benchmarks.t1.tools import DOMAIN_TOOLKITS
from sweepbench.benchmarks.t1.tools.policies import POLICIES, policies_for
from sweepbench.datasets.task import Task
from sweepbench.model_json import MAX_DEPTH, deeper_than
from sweepbench.wire import AssistantMessage, Message, ToolMessage, UserMessage

FILES = {"assistant": "assistant_prompt_bar_example.txt", "user": "user_prompt_bar_example.txt",
         "classifier": "domain_classifier_prompt.txt", "exit": "exit_prompt_bar_example.txt",
         "judge": "judge_prompt.txt"}
EXAMPLE_DOMAIN = "bar"  # the domain the paper's example prompts were written for
WORDS = {"attraction": "attraction", "bar": "bar", "cafe": "cafe", "cruise": "cruise", "dessert": "dessert shop",
         "flight": "flight", "food_and_dining": "restaurant", "hotel": "hotel", "kayak_rental": "kayak rental",
         "live_show": "live show", "vehicle_rental": "rental vehicle"}

OWN_USER = """You are role-playing a customer chatting with {assistant} in a messaging app, \
looking for {wants}. Stay in character as the customer from start to finish.

## PERSONA
{persona}

## USER
{user}

## GOAL
{goal}

## HOW TO BEHAVE
1. Write like a real customer texting: one to three short sentences, no greetings or sign-offs, and never \
offer help.
2. Ask only about what the assistant's services cover (the properties of {plural}); invent no other needs.
3. When the assistant lists options, choose as your goal says and carry on; do not end the chat there.
4. You have at most {max_turns} turns: be decisive and do nothing beyond your goal.
5. Use your own everyday words; do not copy field names or the wording of your goal.
6. Write dates the way people do, e.g. "May 14, 2026".
7. Ask each question once.
8. Pay with the first card in your wallet unless your goal says otherwise.
9. Give the assistant every detail from your goal and profile that the request needs."""

OWN_ASSISTANT = """You are the customer-service assistant of a travel and hospitality platform. You act \
only through the tools you are given.

# Rules for tool use
1. You know nothing about real businesses: every name, id, price and time you mention comes from a tool \
result in this conversation.
2. When the user asks for options, call the search tool straight away without announcing it. When they \
narrow down results already shown, call the filter tool with those results' cache key instead of searching \
again.
3. While calling a tool, write no text; talk to the user once the results are back.
4. Show results as a markdown table with the id column first and every result returned; never make a \
table up.
5. Check the CURRENT CACHE SUMMARY below before searching, and reuse a relevant cache key \
(get_results_from_cache or a filter tool) instead of repeating a search; if nothing relevant is cached, \
search.
6. Follow the domain policies below, and confirm every booking, change or cancellation with the user \
before calling the tool."""

OWN_CLASSIFIER = """You route requests for a travel and hospitality assistant to the policy domains they \
concern.

Read the chat history and the latest query, and answer with a JSON array of the relevant domain names, \
taken only from this list:
{domains}

Examples:
CHAT HISTORY: ["Can you find me a hotel in Austin?"]
Query: "And a car for the weekend too"
Output: ["hotel", "vehicle_rental"]

CHAT HISTORY: []
Query: "Any comedy shows tonight, and somewhere for tacos before?"
Output: ["live_show", "food_and_dining"]

CHAT HISTORY: []
Query: "Cafe Assistant"
Output: ["cafe"]

Answer with the JSON array only: at least one domain, none outside the list, no explanation."""

OWN_EXIT = """You decide whether a simulated customer-service conversation is over.

THE CUSTOMER'S INSTRUCTIONS:
{user_prompt}

CONVERSATION SO FAR:
{history}

Is the customer's goal fully done, and has the customer wrapped up (thanked, said goodbye, or confirmed \
that the booking or order is done)? If the customer is still asking for something, it is not over.

Answer with one JSON object and nothing else:
{{"should_end": true or false, "reason": "<one sentence>"}}"""

OWN_JUDGE = """You rate a conversation between a user and an AI assistant that called tools for the user.

## CONVERSATION
{conversation}

## CRITERIA (score each from 1 to 5)
helpfulness: are the assistant's replies relevant, correct and actionable for what the user needed?
  1 irrelevant or wrong, fails the user; 2 partly meets the need, with gaps or errors; 3 adequate but \
shallow or missing details; 4 relevant, correct and actionable with small gaps; 5 fully relevant, correct and \
actionable: the need is met.
coherence: does the conversation follow logically and keep its context?
  1 disjointed or contradictory, context lost again and again; 2 some logic but major gaps or \
contradictions; 3 mostly logical with occasional slips; 4 flows well, only trivial slips; 5 fully logical and \
consistent throughout.

Answer with one JSON object only:
{{"scores": {{"helpfulness": {{"score": <1-5>, "reasoning": "..."}}, "coherence": {{"score": <1-5>, \
"reasoning": "..."}}}}, "overall_score": <mean of the scores, 2 decimals>, "overall_reasoning": "..."}}"""


@lru_cache(maxsize=8)
def _paper_prompts(directory: str) -> dict[str, str]:
    folder = Path(directory) / "t1" / "prompts"
    out = {}
    for role, name in FILES.items():
        path = folder / name
        if path.is_file():
            out[role] = path.read_text(encoding="utf-8")
    return out


def paper_prompts(data_dir: str | Path | None) -> dict[str, str]:
    """The paper's prompt files found in the data dir, by role ({} without a data dir)."""
    return _paper_prompts(str(data_dir)) if data_dir else {}


def _names(task: Task) -> tuple[str, str, str]:
    """(singular words, plural words, title) naming the task's services."""
    words = [WORDS[d] for d in task.domains if d in WORDS]
    plural = [w + "s" for w in words]
    join = (lambda ws: ws[0] if len(ws) == 1 else ", ".join(ws[:-1]) + " and " + ws[-1])
    title = words[0].title() if len(words) == 1 else "Travel"
    return join(words), join(plural), title


def _user_json(task: Task) -> str:
    return orjson.dumps(task.persona.get("user", {}), option=orjson.OPT_INDENT_2).decode()


def _feature_examples(task: Task) -> list[str]:
    flags = [p for d in task.domains for p in POLICIES[d].properties if p.startswith(("has_", "is_"))]
    return flags[:3] + ["price_level"] if flags else ["rating"]


def _refill(text: str, task: Task) -> str | None:
    """The paper's user prompt with the task's persona, user, goal, domain and budget."""
    lines = text.splitlines()
    try:
        persona, user, goal = (lines.index(h) for h in ("## PERSONA", "## USER", "## GOAL"))
    except ValueError:
        return None
    end = next((i for i in range(goal + 1, len(lines)) if re.fullmatch(r"[A-Z][A-Z ]+:\s*", lines[i])), None)
    if end is None or not persona < user < goal:
        return None
    body = (lines[:persona + 1] + [task.persona.get("persona", ""), ""] + ["## USER", _user_json(task), ""]
            + ["## GOAL", task.instructions, ""] + lines[end:])
    singular, plural, title = _names(task)
    out = "\n".join(body)
    for pattern, repl in ((rf"\b{EXAMPLE_DOMAIN}s\b", plural), (rf"\b{EXAMPLE_DOMAIN}\b", singular),
                          (rf"\b{EXAMPLE_DOMAIN.title()}\b", title)):
        out = re.sub(pattern, repl, out)
    out = re.sub(r"\(e\.g\.,\s*[a-z_]+(?:,\s*[a-z_]+)+\)", f"(e.g., {', '.join(_feature_examples(task))})", out)
    return re.sub(r"\b\d+ turns\b", f"{task.max_turns} turns", out)


def user_prompt(task: Task, data_dir: str | Path | None = None) -> str:
    """The user simulator's system prompt: persona, profile, goal and how to behave."""
    paper = paper_prompts(data_dir).get("user")
    refilled = _refill(paper, task) if paper else None
    if refilled is not None:
        return refilled
    singular, plural, title = _names(task)
    return OWN_USER.format(assistant=f"an AI {title} Assistant", wants=singular, plural=plural,
                           persona=task.persona.get("persona", ""), user=_user_json(task),
                           goal=task.instructions, max_turns=task.max_turns)


def _tool_names(domains: list[str], prefix: str) -> str:
    names = [t for d in domains for t in DOMAIN_TOOLKITS[d].tools if t.startswith(prefix)]
    return " / ".join(names)


def _retool(text: str, domains: list[str]) -> str:
    """Replace the example domain's tool names with the same kind of tools of ``domains``."""
    for name in DOMAIN_TOOLKITS[EXAMPLE_DOMAIN].tools:
        prefix = name.split("_")[0] + "_"
        replacement = _tool_names(domains, prefix) or name
        text = text.replace(name, replacement).replace(name.upper(), replacement.upper())
    return text


def cache_summary_text(summary: dict[str, str]) -> str:
    return "\n".join(f"- {k}: {v}" for k, v in summary.items()) or "(empty: nothing cached yet)"


def assistant_prompt(task: Task, domains: list[str], cache_summary: dict[str, str],
                     data_dir: str | Path | None = None) -> str:
    """The agent's system prompt for this turn: tool-use rules, the policies of the classified
    domains, the cache summary and the task's clock."""
    domains = [d for d in domains if d in DOMAIN_TOOLKITS] or list(task.domains)
    paper = paper_prompts(data_dir).get("assistant")
    rules = _retool(paper.rstrip(), domains) if paper else OWN_ASSISTANT
    return (f"{rules}\n\n# Domain policies\n\n{policies_for(domains)}\n\n"
            f"# CURRENT CACHE SUMMARY\n{cache_summary_text(cache_summary)}\n\n"
            f"Current time: {task.environment.get('time', 'unknown')}")


def classifier_prompt(data_dir: str | Path | None = None) -> str:
    return paper_prompts(data_dir).get("classifier") or OWN_CLASSIFIER.format(
        domains="\n".join(f"- {d}" for d in DOMAINS))


def classifier_input(history: list[str], query: str) -> str:
    """The classifier's user message: earlier user messages and the latest one."""
    return f"CHAT HISTORY: {json.dumps(history, ensure_ascii=False)}\nQuery: {json.dumps(query, ensure_ascii=False)}"


_MAX_OPENINGS = 64
"""Openings tried per reply: a reply of 100,000 brackets costs 64 attempts, not 100,000."""


def _json_values(text: str, opener: str, closer: str) -> list[Any]:
    """JSON values of the given kind found in free text (code fences and chatter ignored).

    A model wrote the text: a value nested deeper than model_json's bound, or one with a
    lone surrogate or ``NaN`` (which no store or JSON output can hold), is no value."""
    found, decoder = [], json.JSONDecoder()
    for m in islice(re.finditer(re.escape(opener), text), _MAX_OPENINGS):
        try:
            value, end = decoder.raw_decode(text, m.start())
            span = text[m.start():end]
            if deeper_than(span, MAX_DEPTH):
                continue
            msgspec.json.decode(span, type=msgspec.Raw)
        except (ValueError, RecursionError, msgspec.DecodeError):
            continue
        found.append(value)
    return found


def parse_domains(text: str) -> list[str]:
    """Allowed domain names from the classifier's reply, in order, without repeats ([] if none)."""
    for value in _json_values(text or "", "[", "]"):
        if isinstance(value, list):
            names = [str(v).strip().lower().replace(" ", "_") for v in value]
            return list(dict.fromkeys(n for n in names if n in DOMAINS))
    return []


def exit_prompt(task: Task, history_text: str, data_dir: str | Path | None = None) -> str:
    """The exit check: the user's instructions and the conversation so far."""
    paper = paper_prompts(data_dir).get("exit")
    if paper and "{history_text}" in paper:
        lines = paper.splitlines()
        head = next((i for i, line in enumerate(lines) if line.rstrip().endswith(":")), None)
        at = next(i for i, line in enumerate(lines) if "{history_text}" in line)
        if head is not None and head < at - 1:
            return "\n".join([*lines[:head + 1], user_prompt(task, data_dir), "", *lines[at - 1:]]).replace(
                "{history_text}", history_text)
    return OWN_EXIT.format(user_prompt=user_prompt(task, data_dir), history=history_text)


def parse_exit(text: str) -> tuple[bool, str]:
    """(should_end, reason); an unreadable reply never ends the conversation."""
    for value in _json_values(text or "", "{", "}"):
        if isinstance(value, dict) and isinstance(value.get("should_end"), bool):
            return value["should_end"], str(value.get("reason", ""))
    return False, "unreadable exit-check reply"


def judge_prompt(conversation_text: str, data_dir: str | Path | None = None) -> str:
    paper = paper_prompts(data_dir).get("judge")
    if paper and "{conversation_text}" in paper:
        return paper.replace("{{", "{").replace("}}", "}").replace("{conversation_text}", conversation_text)
    return OWN_JUDGE.format(conversation=conversation_text)


CRITERIA = ("helpfulness", "coherence")


def parse_judge(text: str) -> dict[str, Any] | None:
    """{"helpfulness": n, "coherence": n, "overall": mean, "reasoning": {...}} or None.

    Tolerates what models do to the requested format: code fences, a missing comma between
    fields, chatter around the object."""
    scores: dict[str, int] = {}
    reasons: dict[str, str] = {}
    for value in _json_values(text or "", "{", "}"):
        block = value.get("scores", value) if isinstance(value, dict) else None
        for c in CRITERIA:
            item = block.get(c) if isinstance(block, dict) else None
            score = item.get("score") if isinstance(item, dict) else item
            if isinstance(score, (int, float)) and not isinstance(score, bool) and 1 <= score <= 5:
                scores.setdefault(c, int(round(score)))
                if isinstance(item, dict):
                    reasons.setdefault(c, str(item.get("reasoning", "")))
    for c in CRITERIA:
        if c not in scores:
            m = re.search(rf'"{c}"\s*:\s*\{{[^{{}}]*?"score"\s*:\s*([1-5])', text or "")
            if m:
                scores[c] = int(m.group(1))
    if len(scores) < len(CRITERIA):
        return None
    return {**scores, "overall": round(sum(scores.values()) / len(scores), 2), "reasoning": reasons}


def transcript(messages: list[Message], tools: bool = True, limit: int = 2000) -> str:
    """A conversation as text for the judge (``tools``) or the exit check (without them); tool
    arguments and results longer than ``limit`` characters are cut there."""
    lines = []
    for m in messages:
        if isinstance(m, UserMessage):
            lines.append(f"[User] {m.content}")
        elif isinstance(m, AssistantMessage):
            if m.content:
                lines.append(f"[Assistant] {m.content}")
            for tc in (m.tool_calls or []) if tools else []:
                lines.append(f"[Assistant] -> {tc.function.name}({_cut(tc.function.arguments, limit)})")
        elif isinstance(m, ToolMessage) and tools:
            lines.append(f"[Tool] {_cut(m.content, limit)}")
    return "\n".join(lines)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " ...(truncated)"
