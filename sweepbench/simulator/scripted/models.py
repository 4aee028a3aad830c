"""Scripted models: deterministic test doubles behind the reference server.

These are not model results. They let the whole pipeline (HTTP included) run with no network
and no API key, and they make the harness testable:

- ``scripted/oracle``: follows the task's gold plan, so it reaches the expected state.
- ``scripted/noisy:P``: the oracle, but each plan step is dropped or corrupted with
  probability P, decided by a seeded RNG per (seed, task, trial, step).
- ``scripted/user``: tells the task's instruction a piece at a time, then ``###STOP###``;
  ``scripted/user:N`` keeps asking follow-ups until it has spoken N times. In a solo
  episode (``solo`` in the request's ``sweepbench`` field) it says the whole instruction.
- ``scripted/judge``: answers the rubric judge's prompts deterministically (``judge_double``).
- ``scripted/chaos``: calls unknown tools, sends malformed JSON and wrong-typed, missing and
  extra arguments, then gives up; for testing that bad model output never breaks a run.

Every policy is a pure function of the request: it re-derives its position from the
conversation, so a replayed or resumed episode gets the same answers. The episode's identity
(task key, benchmark spec, trial, seed) comes from the request's ``sweepbench`` field.

What is benchmark-specific (finding the task, its gold plan and mistakes, the answers to a
protocol's referee calls, the judge prompts) comes from a :class:`ScriptedWorld` passed to
:func:`scripted_resolver`; this module knows no benchmark.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from typing import Any, Callable, Protocol

import msgspec

from sweepbench.datasets.task import Task
from sweepbench.simulator.prompts import STOP
from sweepbench.simulator.scripted.plan import Step, UnresolvedReference, resolve
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    FunctionCall,
    ToolCall,
    ToolMessage,
    UserMessage,
)

Policy = Callable[[ChatRequest], AssistantMessage]


class ScriptedWorld(Protocol):
    """What the doubles need to know about benchmarks, supplied by the caller."""

    def task(self, meta: dict[str, Any]) -> Task:
        """The episode's task, from the request's ``sweepbench`` field (task key, spec, lang)."""

    def gold_plan(self, task: Task) -> list[Step]:
        """The oracle's tool calls for ``task`` (cached by the world)."""

    def corrupt(self, step: Step, rng: random.Random, task: Task) -> Step:
        """A wrong version of ``step``."""

    def referee(self, role: str, task: Task) -> AssistantMessage | None:
        """The answer to a protocol's own call with ``role``; None: a user turn."""

    def judge(self, req: ChatRequest) -> AssistantMessage:
        """The scripted judge's answer to a judge prompt."""


def _meta(req: ChatRequest) -> dict[str, Any]:
    meta = req.sweepbench
    if not meta or "task" not in meta or "spec" not in meta:
        raise ValueError("scripted models need the `sweepbench` request field (task, spec, lang)")
    return meta


def _rng(meta: dict[str, Any], task: Task, step: int) -> random.Random:
    return random.Random(f"{meta.get('seed', 0)}|{task.key}|{meta.get('trial', 0)}|{step}")


def _tool_call(index: int, name: str, arguments: Any) -> AssistantMessage:
    args = arguments if isinstance(arguments, str) else msgspec.json.encode(arguments).decode()
    return AssistantMessage(tool_calls=[ToolCall(f"call_{index}", FunctionCall(name, args))])


def _own_calls(req: ChatRequest) -> tuple[list[ToolCall], dict[str, str]]:
    calls = [tc for m in req.messages if isinstance(m, AssistantMessage) and m.tool_calls
             for tc in m.tool_calls]
    results = {m.tool_call_id: m.content for m in req.messages if isinstance(m, ToolMessage)}
    return calls, results


class PlanFollower:
    """The oracle (``error_rate`` 0) and the noisy agent (``error_rate`` P)."""

    DONE = {"en": "All done. Is there anything else I can help you with?",
            "zh": "都已办好。请问还有其他需要吗？"}

    def __init__(self, world: ScriptedWorld, error_rate: float = 0.0) -> None:
        if not 0.0 <= error_rate <= 1.0:
            raise ValueError(f"noise must be in [0, 1], got {error_rate}")
        self.world = world
        self.error_rate = error_rate

    def _action(self, meta: dict[str, Any], task: Task, j: int) -> str:
        if self.error_rate == 0.0:
            return "do"
        rng = _rng(meta, task, j)
        if rng.random() >= self.error_rate:
            return "do"
        return "drop" if rng.random() < 0.5 else "corrupt"

    def __call__(self, req: ChatRequest) -> AssistantMessage:
        meta = _meta(req)
        task = self.world.task(meta)
        if not any(isinstance(m, UserMessage) for m in req.messages):
            return AssistantMessage("Hello! How can I help you today?")
        plan = self.world.gold_plan(task)
        calls, results = _own_calls(req)
        outputs: list[str | None] = [None] * len(plan)
        made = 0
        for j, step in enumerate(plan):
            action = self._action(meta, task, j)
            if action == "drop":
                continue
            if made < len(calls):
                outputs[j] = results.get(calls[made].id)
                made += 1
                continue
            if action == "corrupt":
                step = self.world.corrupt(step, _rng(meta, task, j), task)
            try:
                args = resolve(step.arguments, outputs)
            except UnresolvedReference:
                args = _blank_references(step.arguments)
            return _tool_call(made, step.tool, args)
        return AssistantMessage(self.DONE.get(task.lang, self.DONE["en"]))


def _blank_references(arguments: Any) -> Any:
    """An earlier step failed: send what a confused model would, an empty value."""
    if isinstance(arguments, dict):
        if "$from_step" in arguments:
            return ""
        return {k: _blank_references(v) for k, v in arguments.items()}
    if isinstance(arguments, list):
        return [_blank_references(v) for v in arguments]
    return arguments


_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s*")


def disclosure_pieces(task: Task, max_pieces: int = 3) -> list[str]:
    """The instruction split into at most ``max_pieces`` runs of whole sentences."""
    sentences = [s.strip() for s in _SENTENCE.split(task.instructions) if s.strip()]
    if not sentences:
        return [task.instructions or "Hello."]
    n = min(max_pieces, len(sentences))
    size = -(-len(sentences) // n)
    sep = "" if task.lang == "zh" else " "
    return [sep.join(sentences[i:i + size]) for i in range(0, len(sentences), size)]


class ScriptedUser:
    """Says the next piece of the instruction; once all is said and answered, stops.

    With ``turns`` set (``scripted/user:N``), it keeps the conversation going with follow-up
    questions until it has spoken N times, then stops: long episodes on demand, for
    benchmarks of per-call cost as conversations grow. A protocol's referee calls (T1's
    domain classifier and exit check) are answered by the world.
    """

    FOLLOW_UP = {"en": "Thanks. Could you confirm that everything is in order?",
                 "zh": "谢谢。能再确认一下都办好了吗？"}

    def __init__(self, world: ScriptedWorld, turns: int | None = None) -> None:
        if turns is not None and turns < 1:
            raise ValueError(f"turns must be >= 1, got {turns}")
        self.world = world
        self.turns = turns

    def __call__(self, req: ChatRequest) -> AssistantMessage:
        meta = _meta(req)
        task = self.world.task(meta)
        role = meta.get("role")
        if role not in (None, "user"):
            referee = self.world.referee(role, task)
            if referee is not None:
                return referee
        said = sum(isinstance(m, AssistantMessage) for m in req.messages)
        if meta.get("solo"):  # a solo episode's user says everything at once, then nothing
            return AssistantMessage(task.instructions or "Hello." if not said else STOP)
        pieces = disclosure_pieces(task)
        if said < len(pieces):
            return AssistantMessage(pieces[said])
        if self.turns is not None and said < self.turns:
            return AssistantMessage(self.FOLLOW_UP.get(task.lang, self.FOLLOW_UP["en"]))
        return AssistantMessage(STOP)


def scripted_chaos(req: ChatRequest) -> AssistantMessage:
    """One kind of bad tool call per request, then a plain apology."""
    calls, _ = _own_calls(req)
    tools = [t.function for t in req.tools or []]
    with_params = [t for t in tools if t.get("parameters", {}).get("required")]
    target = with_params[0] if with_params else (tools[0] if tools else {"name": "none"})
    name = target["name"]
    props = target.get("parameters", {}).get("properties", {})
    required = target.get("parameters", {}).get("required", [])
    wrong = {p: ([1, 2] if props.get(p, {}).get("type") != "array" else "not-a-list") for p in required}
    bad_calls = [
        ("no_such_tool", "{}"),
        (name, '{"' + (required[0] if required else "x") + '": '),  # truncated JSON
        (name, wrong),
        (name, "{}"),  # every required argument missing
        (name, {"unexpected_argument": True, **{p: "x" for p in required}}),
        (name, "[1, 2, 3]"),  # not an object
        (name, "NaN"),
    ]
    if len(calls) < len(bad_calls):
        tool, args = bad_calls[len(calls)]
        return _tool_call(len(calls), tool, args)
    return AssistantMessage("Sorry, I could not complete your request.")


def parse_scripted(name: str) -> tuple[str, float | int | None]:
    """``scripted/noisy:0.3`` -> ("noisy", 0.3); ValueError naming the known doubles for a
    name that is none of them (so a config fails when it loads, not as 404s at run time)."""
    kind, sep, arg = name.removeprefix("scripted/").partition(":")
    if name.startswith("scripted/"):
        if kind in ("oracle", "judge", "chaos", "user", "noisy") and not sep:
            return kind, None
        try:
            if kind == "noisy" and 0.0 <= float(arg) <= 1.0:
                return kind, float(arg)
            if kind == "user" and int(arg) >= 1:
                return kind, int(arg)
        except ValueError:
            pass
    raise ValueError(f"unknown scripted model {name!r}; the scripted doubles are "
                     f"{', '.join(SCRIPTED_MODELS)} (P in [0, 1], N >= 1)")


def scripted_resolver(world: ScriptedWorld) -> Callable[[str], Policy | None]:
    """``resolve(name)``: the scripted policy for a model name such as ``scripted/noisy:0.3``,
    or None when the name is not a scripted model."""

    @lru_cache(maxsize=256)
    def resolve(name: str) -> Policy | None:
        try:
            kind, arg = parse_scripted(name)
        except ValueError:
            return None
        if kind == "oracle":
            return PlanFollower(world, 0.0)
        if kind == "noisy":
            return PlanFollower(world, 0.3 if arg is None else float(arg))
        if kind == "user":
            return ScriptedUser(world) if arg is None else ScriptedUser(world, int(arg))
        return {"judge": world.judge, "chaos": scripted_chaos}[kind]

    return resolve


SCRIPTED_MODELS = ["scripted/oracle", "scripted/noisy:P", "scripted/user", "scripted/user:N",
                   "scripted/judge", "scripted/chaos"]
