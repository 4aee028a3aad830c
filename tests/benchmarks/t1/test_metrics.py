"""§3.2.1 metrics: gold plans score 1.0, spoiled plans score less, worked example G.3."""

from __future__ import annotations

import random

import msgspec
import pytest

from sweepbench.benchmarks.t1.data.ontology import DOMAINS
from sweepbench.benchmarks.t1.metrics import Call, calls_from_messages, score
from sweepbench.benchmarks.t1.oracle import corrupt, gold_plan
from sweepbench.benchmarks.t1.tools import TOOLS, toolkit_for
from sweepbench.datasets.task import Task
from sweepbench.wire import (
    AssistantMessage,
    FunctionCall,
    ToolCall,
    ToolMessage,
    UserMessage,
)


def values(s) -> list[float]:
    d = s.as_dict()
    return [*d["tool"].values(), *d["param"].values(), d["output_em"]]


def test_every_gold_plan_scores_perfectly_and_every_spoiled_one_less(tasks, run_steps):
    for task in tasks:
        plan = gold_plan(task)
        perfect = score(task, run_steps(task, plan))
        assert perfect.passed and values(perfect) == [1.0] * 9, (task.id, perfect)
        rng = random.Random(task.id)
        j = rng.randrange(len(plan))
        spoiled = plan[:j] + [corrupt(plan[j], rng, task)] + plan[j + 1:]
        worse = score(task, run_steps(task, spoiled))
        assert not worse.passed and min(values(worse)) < 1.0 and worse.param.recall < 1.0, (task.id, j)


def test_the_oracle_reads_ids_from_earlier_outputs(tasks):
    task = next(t for t in tasks if t.id == "t1-bar-16")
    plan = gold_plan(task)
    refs = [s.arguments for s in plan if any(isinstance(v, dict) and "$from_step" in v for v in s.arguments.values())]
    assert refs and {"$from_step": 0, "$field": "results.0.venue_id"} in [a.get("venue_id") for a in refs]


def _g3_task(kb) -> tuple[Task, dict]:
    """G.3: one flight on a route and day; gold searches by airline then books it."""
    flights, ap, cities = kb["flights"], kb["airports"], kb["cities"]
    kit, probe = toolkit_for(DOMAINS), Task(id="probe", benchmark="t1", domain="flight", instructions="")
    for r in range(flights.n):
        route = {"departure_city": cities.string("name", int(ap["city"][int(flights["origin"][r])])),
                 "arrival_city": cities.string("name", int(ap["city"][int(flights["destination"][r])])),
                 "departure_date": str(flights["departure_date"][r])}
        found = msgspec.json.decode(kit.call(TOOLS.new_state(probe), "search_flight", msgspec.json.encode(route)).content)
        if found["total"] == 1:
            break
    users = kb["users"]
    gold = [{"tool": "search_flight", "arguments": {**route, "airline": [flights.string("airline", r)]}},
            {"tool": "book_flight", "arguments": {
                "user_id": users.ident(3), "flight_id": flights.ident(r), "passenger_names": ["Jennifer Smith"],
                "number_passengers": 1, "credit_card_last_four": users.string("card_last_four", 3)}}]
    task = Task(id="g3-worked-example", benchmark="t1", domain="flight", instructions="Book the cheapest flight.",
                environment={"time": "2026-04-20 09:00:00"}, evaluation={"gold_calls": gold})
    return task, route


def test_worked_example_g3(kb):
    task, route = _g3_task(kb)
    predicted_args = {**route, "ticket_class": "Economy"}  # airline missing, an extra ticket_class
    output = TOOLS.toolkit(task).call(TOOLS.new_state(task), "search_flight", msgspec.json.encode(predicted_args))
    s = score(task, [Call("search_flight", predicted_args, output.content)])
    assert (s.tool.precision, s.tool.recall, round(s.tool.f1, 2)) == (1.0, 0.5, 0.67)
    assert s.output_em == 0.5 and not s.passed
    assert (s.param.precision, s.param.recall) == (0.75, 3 / 9)


def test_repeated_calls_count_individually_and_pairing_prefers_overlap(tasks):
    task = next(t for t in tasks if [g["tool"] for g in t.evaluation["gold_calls"]].count("filter_hotel") == 2)
    gold = task.evaluation["gold_calls"]
    outputs = [""] * len(gold)
    calls = [Call(g["tool"], g["arguments"], o) for g, o in zip(gold, outputs)]
    filters = [i for i, c in enumerate(calls) if c.name == "filter_hotel"]
    assert calls[filters[0]].arguments != calls[filters[1]].arguments
    swapped = list(calls)
    swapped[filters[0]], swapped[filters[1]] = calls[filters[1]], calls[filters[0]]
    s = score(task, swapped)  # paired by overlap, not position: nothing is lost
    assert (s.tool.accuracy, s.param.recall, s.param.accuracy) == (1.0, 1.0, 1.0)
    once = [c for i, c in enumerate(calls) if i != filters[1]]
    s = score(task, once)
    assert s.tool.precision == 1.0 and s.tool.recall == pytest.approx((len(gold) - 1) / len(gold))
    assert s.output_em == 0.0 and not s.passed  # no output was observed at all


def test_output_em_counts_any_matching_observed_output(tasks, run_steps):
    task = next(t for t in tasks if len(t.evaluation["gold_calls"]) >= 3)
    calls = run_steps(task, gold_plan(task))
    shuffled = [Call(c.name, c.arguments, o) for c, o in zip(calls, reversed([c.output for c in calls]))]
    assert score(task, shuffled).output_em == 1.0


def test_calls_from_messages():
    messages = [UserMessage("hi"),
                AssistantMessage(tool_calls=[ToolCall("a", FunctionCall("search_bars", '{"city": "Denver"}')),
                                             ToolCall("b", FunctionCall("filter_bars", "{not json"))]),
                ToolMessage("a", "out-a"), ToolMessage("b", "Error: bad")]
    assert calls_from_messages(messages) == [Call("search_bars", {"city": "Denver"}, "out-a"),
                                             Call("filter_bars", {}, "Error: bad")]


@pytest.mark.parametrize("arguments", [
    '{"city": ' + "[" * 10_000 + "]" * 10_000 + "}",  # deeper than any decoder recurses
    '{"city": 1e400}', '{"city": ' + "9" * 5000 + "}", '{"city": NaN}', '{"city": "\\ud800"}',
], ids=["nested-10000", "1e400", "5000-digits", "nan", "lone-surrogate"])
def test_unreadable_arguments_are_a_call_without_arguments_never_an_exception(arguments):
    messages = [AssistantMessage(tool_calls=[ToolCall("a", FunctionCall("search_bars", arguments))]),
                ToolMessage("a", "Error: bad")]
    assert calls_from_messages(messages) == [Call("search_bars", {}, "Error: bad")]


# ---- hand-made tasks: one behaviour each ---------------------------------------------------

from decimal import Decimal  # noqa: E402
from itertools import permutations  # noqa: E402
from types import SimpleNamespace  # noqa: E402

from sweepbench.benchmarks.t1 import metrics  # noqa: E402
from sweepbench.benchmarks.t1.metrics import reference_outputs  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_reference_outputs(monkeypatch):
    """Every test computes reference outputs itself instead of reading another test's."""
    monkeypatch.setattr(metrics, "_outputs_cache", {})


class ScriptedTools:
    """Test double of T1's tools, without the knowledge base: a call's output names the task's
    domain and id (a fresh episode per task), the call's place in that episode, the tool and
    the JSON it was given; ``calls`` counts the calls made."""

    def __init__(self) -> None:
        self.calls = 0

    def toolkit(self, task: Task) -> ScriptedTools._Kit:
        return ScriptedTools._Kit(self, task.domain)

    def new_state(self, task: Task) -> list[str]:
        return [f"{task.id}@{task.environment.get('time')}"]

    class _Kit:
        def __init__(self, tools: ScriptedTools, domain: str) -> None:
            self.tools, self.domain = tools, domain

        def call(self, state: list[str], name: str, arguments: bytes) -> SimpleNamespace:
            self.tools.calls += 1
            state.append(name)
            return SimpleNamespace(content=f"{self.domain}/{state[0]}#{len(state) - 1} {name} "
                                           f"{arguments.decode()}")


@pytest.fixture
def scripted_tools(monkeypatch) -> ScriptedTools:
    """The metrics read their reference outputs from a ScriptedTools: fast, and exact."""
    tools = ScriptedTools()
    monkeypatch.setattr(metrics, "TOOLS", tools)
    return tools


def hand_task(*gold: tuple[str, dict], id: str = "hand", time: str = "2026-04-20 09:00:00") -> Task:
    return Task(id=id, benchmark="t1", domain="hotel", instructions="", environment={"time": time},
                evaluation={"gold_calls": [{"tool": t, "arguments": a} for t, a in gold]})


def test_pairing_maximises_total_overlap_not_greedy(scripted_tools):
    g1 = {"city": "Denver", "has_gym": True, "has_pool": True}
    g2 = {"has_pool": True, "has_spa": True}
    task = hand_task(("search_hotel", g1), ("search_hotel", g2))
    p1 = {"city": "Denver", "has_gym": True, "has_pool": True, "has_spa": True}  # shares 3 with g1, 2 with g2
    p2 = {"city": "Denver", "has_gym": True}  # shares 2 with g1, none with g2
    s = score(task, [Call("search_hotel", p1, ""), Call("search_hotel", p2, "")])
    # greedy (g1-p1 first) matches 3 + 0; the best one-to-one pairing g1-p2, g2-p1 matches 2 + 2
    assert (s.param.recall, s.param.precision, s.param.accuracy) == (4 / 5, 4 / 6, 0.0)


def _brute_param_rates(gold, pred):
    """Recall, precision and accuracy of the best one-to-one pairing per tool name, found by
    enumerating every pairing: as many pairs as there can be, then the most shared parameters,
    then the fewest passed, then the most exact."""
    matched = passed = exact = 0
    for name in {t for t, _ in gold}:
        gs = [set(a.items()) for t, a in gold if t == name]
        ps = [set(a.items()) for t, a in pred if t == name]
        if len(gs) <= len(ps):
            choices = [list(zip(gs, perm)) for perm in permutations(ps, len(gs))]
        else:
            choices = [list(zip(perm, ps)) for perm in permutations(gs, len(ps))]
        best = max(((sum(len(g & p) for g, p in pairs), -sum(len(p) for _, p in pairs),
                     sum(g == p for g, p in pairs)) for pairs in choices), default=(0, 0, 0))
        matched, passed, exact = matched + best[0], passed - best[1], exact + best[2]
    gold_params = sum(len(a) for _, a in gold)
    if not gold_params:
        return 1.0, (matched / passed if passed else 1.0), exact / len(gold)
    return matched / gold_params, (matched / passed if passed else 0.0), exact / len(gold)


def test_pairing_equals_the_best_one_to_one_pairing_on_random_calls(scripted_tools):
    rng = random.Random(13)
    pool = {"city": ["denver", "boston"], "has_gym": [True, False], "has_pool": [True, False],
            "has_spa": [True, False], "has_digital_key": [True]}

    def args():
        keys = rng.sample(sorted(pool), rng.randint(0, 5))
        return {k: rng.choice(pool[k]) for k in keys}

    names = ["search_hotel"] * 9 + ["filter_hotel"]  # mostly one name: the pairings get hard
    for n in range(400):
        gold = [(rng.choice(names), args()) for _ in range(rng.randint(1, 4))]
        pred = [(rng.choice(names), args()) for _ in range(rng.randint(1, 6))]
        pred += [(t, dict(a)) for t, a in gold if rng.random() < 0.3]  # some exact calls
        rng.shuffle(pred)
        s = score(hand_task(*gold, id=f"random-{n}"), [Call(t, a, "") for t, a in pred])
        recall, precision, accuracy = _brute_param_rates(gold, pred)
        assert s.param.recall == pytest.approx(recall), (gold, pred)
        assert s.param.precision == pytest.approx(precision), (gold, pred)
        assert s.param.accuracy == pytest.approx(accuracy), (gold, pred)


def test_values_compare_after_case_spacing_and_number_normalisation_only(scripted_tools):
    gold = {"city": "New York", "price_per_night_max": 200, "has_gym": True}
    task = hand_task(("search_hotel", gold))

    def param_recall(**changed):
        return score(task, [Call("search_hotel", {**gold, **changed}, "")]).param.recall

    assert param_recall(city="  new   YORK ") == 1.0  # case and spacing of text
    assert param_recall(price_per_night_max=200.0) == 1.0  # 200 == 200.0
    assert param_recall(city="Newark") == pytest.approx(2 / 3)
    assert param_recall(price_per_night_max=201) == pytest.approx(2 / 3)
    # the tools reject 1 for a boolean (and "true"): neither is the gold value
    assert param_recall(has_gym=1) == pytest.approx(2 / 3)
    assert param_recall(has_gym="true") == pytest.approx(2 / 3)
    assert param_recall(has_gym=False) == pytest.approx(2 / 3)
    assert param_recall(has_gym=None) == pytest.approx(2 / 3)


def test_reference_outputs_are_the_gold_calls_run_on_fresh_tools_per_task_content(kb):
    denver, boston = {"city": "Denver"}, {"city": "Boston"}
    first = hand_task(("search_hotel", denver), ("filter_hotel", {"cache_key": "search_hotel_results_0",
                                                                   "has_gym": True}))
    kit, state = TOOLS.toolkit(first), TOOLS.new_state(first)  # in order, on one episode
    expected = [kit.call(state, "search_hotel", msgspec.json.encode(denver)).content,
                kit.call(state, "filter_hotel", b'{"cache_key": "search_hotel_results_0", "has_gym": true}').content]
    assert not expected[1].startswith("Error")  # the filter read the search's cached results
    assert reference_outputs(first) == expected
    assert reference_outputs(first) == expected  # asked again: the same
    # same task id, other gold calls: their own outputs, never the first task's
    other_gold = hand_task(("search_hotel", boston))
    assert reference_outputs(other_gold) == [
        TOOLS.toolkit(other_gold).call(TOOLS.new_state(other_gold), "search_hotel",
                                       msgspec.json.encode(boston)).content]


def _observed(task: Task) -> list[Call]:
    """The gold calls made exactly, each showing the output the reference tools give."""
    gold = task.evaluation["gold_calls"]
    return [Call(g["tool"], g["arguments"], o) for g, o in zip(gold, reference_outputs(task))]


DENVER = {"city": "Denver", "has_gym": True}
BOSTON = {"city": "Boston"}


def test_pass_needs_every_gold_output_observed(scripted_tools):
    task = hand_task(("search_hotel", DENVER), ("search_hotel", BOSTON))
    calls = _observed(task)
    assert score(task, calls).passed
    blind = [calls[0], calls[1]._replace(output="")]  # the right calls, one output never seen
    s = score(task, blind)
    assert (s.tool.recall, s.param.recall, s.output_em) == (1.0, 1.0, 0.5) and not s.passed


def test_pass_needs_recall_not_precision(scripted_tools):
    task = hand_task(("search_hotel", DENVER))
    right = _observed(task)[0]
    # an extra call, and an extra argument beside the gold call: precision drops, recall holds
    s = score(task, [right, Call("filter_hotel", BOSTON, "x")])
    assert (s.tool.precision, s.tool.recall, s.tool.f1) == (0.5, 1.0, pytest.approx(2 / 3))
    assert s.passed
    s = score(task, [right._replace(arguments={**DENVER, "has_pool": True})])
    assert (s.param.precision, s.param.recall, s.param.f1) == (2 / 3, 1.0, pytest.approx(0.8))
    assert s.param.accuracy == 0.0  # a superset of the gold arguments is not exact
    assert s.passed
    # and a missing gold parameter fails it, whatever else is right
    s = score(task, [right._replace(arguments={"city": "Denver"})])
    assert (s.param.precision, s.param.recall, s.param.accuracy) == (1.0, 0.5, 0.0)
    assert not s.passed


def test_tool_accuracy_needs_the_gold_order(scripted_tools):
    task = hand_task(("search_hotel", DENVER), ("filter_hotel", BOSTON))
    calls = _observed(task)
    s = score(task, calls)
    assert (s.tool.accuracy, s.param.accuracy) == (1.0, 1.0)
    s = score(task, calls[::-1])  # the same calls, the other way round
    assert (s.tool.precision, s.tool.recall, s.tool.accuracy) == (1.0, 1.0, 0.0)
    assert (s.param.recall, s.param.accuracy, s.output_em) == (1.0, 1.0, 1.0)
    assert s.passed  # Pass (eq. 5) asks for recall and outputs, not order
    assert score(task, calls + calls[:1]).tool.accuracy == 0.0  # a repeat is not the sequence


def test_one_predicted_call_pairs_with_one_gold_call(scripted_tools):
    task = hand_task(("search_hotel", DENVER), ("search_hotel", DENVER))  # asked twice
    once = _observed(task)[:1]
    s = score(task, once)
    assert (s.tool.precision, s.tool.recall) == (1.0, 0.5)
    assert (s.param.precision, s.param.recall, s.param.accuracy) == (1.0, 0.5, 0.5)
    assert s.output_em == 0.5 and not s.passed  # the second search's output is another one
    s = score(task, _observed(task))
    assert (s.param.recall, s.param.accuracy) == (1.0, 1.0) and s.passed


def test_empty_sides(scripted_tools):
    nothing = hand_task()
    assert values(score(nothing, [])) == [1.0] * 9 and score(nothing, []).passed
    s = score(nothing, [Call("search_hotel", DENVER, "x")])  # calls nobody asked for
    assert (s.tool.precision, s.tool.recall, s.tool.f1) == (0.0, 1.0, 0.0)
    assert (s.param.precision, s.param.recall, s.output_em) == (1.0, 1.0, 1.0)
    task = hand_task(("search_hotel", DENVER))
    s = score(task, [])  # a task with gold calls and an agent that made none
    assert values(s)[:8] == [0.0] * 8 and s.output_em == 0.0 and not s.passed
    s = score(task, [Call("filter_hotel", DENVER, "x")])  # only calls of other tools
    assert (s.tool.precision, s.tool.f1, s.param.precision, s.param.recall) == (0.0, 0.0, 0.0, 0.0)
    # a gold call without arguments, made without arguments
    bare = hand_task(("get_results_from_cache", {}))
    s = score(bare, _observed(bare))
    assert (s.param.precision, s.param.recall, s.param.accuracy) == (1.0, 1.0, 1.0) and s.passed
    s = score(bare, [Call("get_results_from_cache", {"cache_key": "k"}, "")])
    assert (s.param.precision, s.param.recall, s.param.accuracy) == (0.0, 1.0, 0.0)


def test_arguments_that_are_not_an_object_count_as_none(scripted_tools):
    task = hand_task(("search_hotel", DENVER))
    s = score(task, [("search_hotel", ["Denver", True], "x")])  # rows may be plain tuples
    assert (s.tool.recall, s.param.precision, s.param.recall) == (1.0, 0.0, 0.0)


def test_nested_values_compare_element_by_element(scripted_tools):
    gold = {"amenities": ["Pool", "Gym"], "window": {"from": "09:00", "to": 5}}
    task = hand_task(("search_hotel", gold))

    def param_recall(**changed):
        return score(task, [Call("search_hotel", {**gold, **changed}, "")]).param.recall

    assert param_recall(amenities=[" pool", "GYM"], window={"to": 5.0, "from": "09:00"}) == 1.0
    assert param_recall(amenities=["Pool", "Spa"]) == 0.5
    assert param_recall(amenities=["Pool"]) == 0.5
    assert param_recall(window={"from": "09:00", "to": 6}) == 0.5
    assert param_recall(window={"from": "10:00", "to": 5}) == 0.5
    assert param_recall(window=[["from", "09:00"], ["to", 5]]) == 0.5  # pairs are not an object
    assert param_recall(window={"to": "09:00", "from": 5}) == 0.5  # values stay with their keys
    # values no JSON decoder makes (a caller's own objects) compare by their repr
    task = hand_task(("search_hotel", {"price": Decimal("1.5")}))
    for price, recall in ((Decimal("1.5"), 1.0), (Decimal("2.5"), 0.0)):
        assert score(task, [Call("search_hotel", {"price": price}, "")]).param.recall == recall


def test_calls_from_messages_take_untrusted_arguments_and_missing_outputs():
    messages = [AssistantMessage(tool_calls=[ToolCall("a", FunctionCall("search_bars", "[1, 2]")),
                                             ToolCall("b", FunctionCall("search_bars", "")),
                                             ToolCall("c", FunctionCall("search_bars", '"x"'))]),
                ToolMessage("b", "out-b")]  # no output for a or c (the episode ended first)
    assert calls_from_messages(messages) == [Call("search_bars", {}, ""),
                                             Call("search_bars", {}, "out-b"),
                                             Call("search_bars", {}, "")]


def test_reference_outputs_run_the_gold_calls_in_order_on_one_episode_per_task_content(scripted_tools):
    denver, gym = ("search_hotel", {"city": "Denver"}), ("filter_hotel", {"has_gym": True})
    task = hand_task(denver, gym, id="a")
    expected = ['hotel/a@2026-04-20 09:00:00#1 search_hotel {"city":"Denver"}',
                'hotel/a@2026-04-20 09:00:00#2 filter_hotel {"has_gym":true}']
    assert reference_outputs(task) == expected and scripted_tools.calls == 2
    assert reference_outputs(task) == expected and scripted_tools.calls == 2  # kept, not rerun
    # a task differing in one part of its content alone gets its own outputs
    assert reference_outputs(hand_task(denver, gym, id="b"))[1] == \
        'hotel/b@2026-04-20 09:00:00#2 filter_hotel {"has_gym":true}'
    assert reference_outputs(hand_task(denver, gym, id="a", time="2026-05-01 10:00:00"))[0] == \
        'hotel/a@2026-05-01 10:00:00#1 search_hotel {"city":"Denver"}'
    assert reference_outputs(hand_task(gym, id="a")) == [
        'hotel/a@2026-04-20 09:00:00#1 filter_hotel {"has_gym":true}']
    assert reference_outputs(msgspec.structs.replace(task, domain="bar"))[0].startswith("bar/a@")
    calls = scripted_tools.calls
    assert reference_outputs(msgspec.structs.replace(task, lang="zh")) == expected  # another key
    assert scripted_tools.calls == calls + 2
    assert reference_outputs(hand_task(id="a")) == [] and scripted_tools.calls == calls + 2


def test_every_rate_of_a_partly_right_conversation(scripted_tools):
    task = hand_task(("search_hotel", {"city": "Denver", "has_gym": True}),
                     ("filter_hotel", {"cache_key": "k"}))
    ref = reference_outputs(task)
    s = score(task, [Call("search_hotel", {"city": " denver", "has_gym": True, "has_pool": True}, ref[0]),
                     Call("search_hotel", {"city": "Boston"}, ""),
                     Call("get_results_from_cache", {}, ref[1])])
    assert (s.tool.precision, s.tool.recall, s.tool.accuracy) == (1 / 3, 0.5, 0.0)
    assert s.tool.f1 == pytest.approx(0.4)
    # the search pairs with the call sharing two of its parameters; the filter has no partner
    assert (s.param.precision, s.param.recall, s.param.accuracy) == (2 / 3, 2 / 3, 0.0)
    assert s.param.f1 == pytest.approx(2 / 3)
    assert s.output_em == 1.0 and not s.passed
    assert s.as_dict() == {"tool": {"precision": 1 / 3, "recall": 0.5, "f1": s.tool.f1, "accuracy": 0.0},
                           "param": {"precision": 2 / 3, "recall": 2 / 3, "f1": s.param.f1,
                                     "accuracy": 0.0},
                           "output_em": 1.0, "passed": False}


def test_pass_needs_the_tool_recall_too(scripted_tools):
    # a gold call without arguments: missing it costs no parameter, only the tool's recall
    task = hand_task(("search_hotel", DENVER), ("get_results_from_cache", {}))
    ref = reference_outputs(task)
    s = score(task, [Call("search_hotel", DENVER, ref[0]), Call("filter_hotel", {}, ref[1])])
    assert (s.tool.recall, s.param.recall, s.output_em) == (0.5, 1.0, 1.0) and not s.passed


def test_a_pairing_takes_most_shared_then_fewest_extra_parameters(scripted_tools):
    gold = {"city": "Denver", "has_gym": True}
    task = hand_task(("search_hotel", gold))
    # the same overlap: the partner passing fewer extra parameters
    s = score(task, [Call("search_hotel", {"city": "Denver", "has_spa": True}, ""),
                     Call("search_hotel", {"city": "Denver"}, "")])
    assert (s.param.precision, s.param.recall, s.param.accuracy) == (1.0, 0.5, 0.0)
    # more overlap wins over any number of extra parameters
    many = {**gold, "has_pool": True, "has_spa": True, "has_digital_key": True}
    s = score(task, [Call("search_hotel", {"city": "Denver"}, ""), Call("search_hotel", many, "")])
    assert (s.param.precision, s.param.recall, s.param.accuracy) == (0.4, 1.0, 0.0)
    # more gold calls of a name than predicted ones: the one call goes where it fits best
    task = hand_task(("search_hotel", {"city": "Denver"}), ("search_hotel", gold))
    s = score(task, [Call("search_hotel", gold, "")])
    assert (s.param.precision, s.param.recall, s.param.accuracy) == (1.0, 2 / 3, 0.5)
    s = score(task, [Call("search_hotel", {"city": "Denver"}, "")])
    assert (s.param.precision, s.param.recall, s.param.accuracy) == (1.0, 1 / 3, 0.5)
