"""T1-Bench's automatic metrics (paper §3.2.1), computed from the calls an agent made.

- Tool call: precision, recall and F1 of tool names against the gold calls, repeated calls
  counted individually (multiset overlap); accuracy is 1 when the predicted name sequence
  equals the gold one.
- Parameters: each gold call is paired with a predicted call of the same name, each call
  used once, choosing the pairing with the highest total parameter overlap (a maximum
  matching: a greedy pick can give one gold call's partner to another and leave it none as
  good). Over the pairs, precision is matched parameters / parameters the predicted calls
  passed, recall is matched parameters / all gold parameters (unpaired gold calls count as
  missed); accuracy is the share of gold calls whose partner passed exactly the gold
  arguments (equality: extra arguments are not exact).
- Tool output: the gold calls run on a fresh episode of the reference tools; a gold call
  counts when its output is identical to any output the agent observed. EM is the share.
- Pass = recall(tool) == 1 and recall(param) == 1 and EM == 1.

Values compare after light normalisation (case and spacing of text, 1 == 1.0), so a model
is not failed for writing "denver" for "Denver"; kinds stay apart (true is not 1).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, NamedTuple

import msgspec

from sweepbench.benchmarks.t1.tools import TOOLS
from sweepbench.datasets.task import Task
from sweepbench.model_json import ArgumentsError, parse_arguments
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


def _norm(v: Any) -> tuple:
    """A hashable, comparable form of an argument value, tagged with its JSON kind, so that
    ``true`` is not ``1`` (Python's True == 1; the tools reject one for the other) and a list
    of pairs is not an object."""
    if isinstance(v, str):
        return ("s", " ".join(v.split()).casefold())
    if isinstance(v, bool) or v is None:
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", float(v))
    if isinstance(v, (list, tuple)):
        return ("l", tuple(_norm(x) for x in v))
    if isinstance(v, dict):
        return ("d", tuple(sorted((str(k), _norm(x)) for k, x in v.items())))
    return ("r", repr(v))


def _pairs(arguments: dict[str, Any]) -> set[tuple[str, Any]]:
    return {(k, _norm(v)) for k, v in arguments.items()}


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def _ratio(num: float, den: float, empty: float = 1.0) -> float:
    return num / den if den else empty


def _pair(gold: list[set], pred: list[set]) -> list[tuple[int, int]]:
    """Gold-to-predicted pairs of one tool name, each call used once: as many pairs as there
    can be, then the most shared parameters in total, then the fewest extra ones, then the
    most exact ones (a maximum-weight matching, so no gold call is starved by a greedy pick).
    """
    if not gold or not pred:
        return []
    scale, levels = 1 + sum(len(p) for p in pred), 1 + len(gold)
    w = [[(len(g & p) * scale - len(p - g)) * levels + (g == p) for p in pred] for g in gold]
    if len(gold) <= len(pred):
        return _assign(w)
    return [(i, j) for j, i in _assign([list(col) for col in zip(*w)])]


def _assign(w: list[list[int]]) -> list[tuple[int, int]]:
    """Maximum-weight assignment of every row to its own column (rows <= columns):
    the Hungarian method with potentials, O(rows² · columns)."""
    n, m = len(w), len(w[0])
    inf = float("inf")
    u, v, row_of, way = [0.0] * (n + 1), [0.0] * (m + 1), [0] * (m + 1), [0] * (m + 1)
    for i in range(1, n + 1):
        row_of[0], j0 = i, 0
        minv, used = [inf] * (m + 1), [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = row_of[j0], inf, 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = -w[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(m + 1):
                if used[j]:
                    u[row_of[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if row_of[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            row_of[j0] = row_of[j1]
            j0 = j1
    return sorted((row_of[j] - 1, j - 1) for j in range(1, m + 1) if row_of[j])


def _reference_outputs(task: Task) -> list[str]:
    """Outputs of the gold calls run in order on a fresh episode of the reference tools."""
    toolkit, state = TOOLS.toolkit(task), TOOLS.new_state(task)
    return [toolkit.call(state, g["tool"], msgspec.json.encode(g["arguments"])).content
            for g in task.evaluation["gold_calls"]]


_outputs_cache: dict[bytes, list[str]] = {}


def reference_outputs(task: Task) -> list[str]:
    """Cached per task content (identity, environment, gold calls and knowledge base): the
    reference tools are deterministic, and two tasks that share an id but differ in content
    (an edited task file, a hand-made task) must not share outputs."""
    key = msgspec.json.encode([task.key, task.environment, task.evaluation])
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
    partner: dict[int, int] = {}
    for name in dict.fromkeys(gold_names):
        gi = [i for i, n in enumerate(gold_names) if n == name]
        pj = [j for j, n in enumerate(pred_names) if n == name]
        partner.update((gi[a], pj[b]) for a, b in _pair([gold_args[i] for i in gi],
                                                         [pred_args[j] for j in pj]))
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
                    args = parse_arguments(tc.function.arguments or "{}")
                except ArgumentsError:  # malformed, too deep: a call without arguments
                    args = {}
                calls.append(Call(tc.function.name, args if isinstance(args, dict) else {},
                                  outputs.get(tc.id, "")))
    return calls
