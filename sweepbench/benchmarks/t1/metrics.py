"""T1-Bench's automatic metrics (paper §3.2.1), computed from the calls an agent made.

- Tool call: precision, recall and F1 of tool names against the gold calls, repeated calls
  counted individually (multiset overlap); accuracy is 1 when the predicted name sequence
  equals the gold one.
- Parameters: each gold call is paired with a predicted call of the same name, highest
  parameter overlap first (each predicted call used once). Over the pairs, precision is
  matched parameters / parameters the predicted calls passed, recall is matched parameters /
  all gold parameters (unpaired gold calls count as missed); accuracy is the share of gold
  calls whose partner passed exactly the gold arguments.
- Tool output: the gold calls run on a fresh episode of the reference tools; a gold call
  counts when its output is identical to any output the agent observed. EM is the share.
- Pass = recall(tool) == 1 and recall(param) == 1 and EM == 1.

Values compare after light normalisation (case and spacing of text, 1 == 1.0), so a model
is not failed for writing "denver" for "Denver".
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, NamedTuple

import msgspec

from sweepbench.benchmarks.t1.tools import TOOLS
from sweepbench.datasets.task import Task
from sweepbench.wire import AssistantMessage, Message, ToolMessage


class Call(NamedTuple):
    """One call the agent made: tool name, decoded arguments, the output it saw."""

    name: str
    arguments: dict[str, Any]
    output: str


class Rates(msgspec.Struct, frozen=True):
    precision: float
    recall: float
    f1: float
    accuracy: float


class T1Score(msgspec.Struct, frozen=True):
    tool: Rates
    param: Rates
    output_em: float
    passed: bool

    def as_dict(self) -> dict[str, Any]:
        return msgspec.to_builtins(self)


def _norm(v: Any) -> Any:
    if isinstance(v, str):
        return " ".join(v.split()).casefold()
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, (list, tuple)):
        return tuple(_norm(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((str(k), _norm(x)) for k, x in v.items()))
    return repr(v)


def _pairs(arguments: dict[str, Any]) -> set[tuple[str, Any]]:
    return {(k, _norm(v)) for k, v in arguments.items()}


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def _ratio(num: float, den: float, empty: float = 1.0) -> float:
    return num / den if den else empty


def _reference_outputs(task: Task) -> list[str]:
    """Outputs of the gold calls run in order on a fresh episode of the reference tools."""
    toolkit, state = TOOLS.toolkit(task), TOOLS.new_state(task)
    return [toolkit.call(state, g["tool"], msgspec.json.encode(g["arguments"])).content
            for g in task.evaluation["gold_calls"]]


_outputs_cache: dict[str, list[str]] = {}


def reference_outputs(task: Task) -> list[str]:
    """Cached per task: the reference tools are deterministic."""
    key = f"{task.key}|{task.evaluation.get('kb', {}).get('digest', '')}"
    if key not in _outputs_cache:
        _outputs_cache[key] = _reference_outputs(task)
    return _outputs_cache[key]


def score(task: Task, predicted: Iterable[Call | tuple]) -> T1Score:
    """The §3.2.1 metrics of one conversation's calls against the task's gold calls."""
    calls = [Call(*c) for c in predicted]
    gold = task.evaluation["gold_calls"]
    gold_names, pred_names = [g["tool"] for g in gold], [c.name for c in calls]

    hits = sum((Counter(gold_names) & Counter(pred_names)).values())
    tp, tr = _ratio(hits, len(calls), 0.0 if gold else 1.0), _ratio(hits, len(gold))
    tool = Rates(tp, tr, _f1(tp, tr), float(gold_names == pred_names))

    gold_args = [_pairs(g["arguments"]) for g in gold]
    pred_args = [_pairs(c.arguments) if isinstance(c.arguments, dict) else set() for c in calls]
    candidates = sorted(((len(gold_args[i] & pred_args[j]), i, j) for i, g in enumerate(gold)
                         for j, c in enumerate(calls) if c.name == g["tool"]), key=lambda t: (-t[0], t[1], t[2]))
    partner: dict[int, int] = {}
    for _, i, j in candidates:
        if i not in partner and j not in partner.values():
            partner[i] = j
    matched = sum(len(gold_args[i] & pred_args[j]) for i, j in partner.items())
    passed_params = sum(len(pred_args[j]) for j in partner.values())
    gold_params = sum(len(a) for a in gold_args)
    pp = _ratio(matched, passed_params, 1.0 if not gold_params else 0.0)
    pr = _ratio(matched, gold_params)
    exact = sum(gold_args[i] == pred_args[j] for i, j in partner.items())
    param = Rates(pp, pr, _f1(pp, pr), _ratio(exact, len(gold)))

    seen = {c.output for c in calls}
    em = _ratio(sum(o in seen for o in reference_outputs(task)), len(gold))
    return T1Score(tool, param, em, tr == 1.0 and pr == 1.0 and em == 1.0)


def calls_from_messages(messages: list[Message]) -> list[Call]:
    """The agent's calls in an episode transcript, each with the output it was shown."""
    outputs = {m.tool_call_id: m.content for m in messages if isinstance(m, ToolMessage)}
    calls = []
    for m in messages:
        if isinstance(m, AssistantMessage) and m.tool_calls:
            for tc in m.tool_calls:
                try:
                    args = msgspec.json.decode(tc.function.arguments or "{}")
                except msgspec.DecodeError:
                    args = {}
                calls.append(Call(tc.function.name, args if isinstance(args, dict) else {},
                                  outputs.get(tc.id, "")))
    return calls
