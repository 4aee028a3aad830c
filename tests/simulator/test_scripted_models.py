"""The scripted test doubles, driven in-process through the real episode loop (no HTTP)."""

from __future__ import annotations

import msgspec
import pytest

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.catalog import load_tasks
from sweepbench.benchmarks.doubles import RegistryWorld, scripted_models
from sweepbench.benchmarks.vitabench.judge_prompts import judge_user_prompt
from sweepbench.benchmarks.vitabench.state_check import check_vitabench
from sweepbench.ids import TerminationReason
from sweepbench.judge.parsing import parse_rubric_verdicts
from sweepbench.simulator.episode import EpisodeLimits, run_episode
from sweepbench.simulator.prompts import STOP
from sweepbench.simulator.scripted.models import disclosure_pieces
from sweepbench.wire import ChatRequest, ToolMessage, Usage, UserMessage

SPEC = "vitabench:delivery"
resolve_model = scripted_models()
gold_plan = RegistryWorld().gold_plan
SAMPLES = load_tasks(SPEC)  # no data dir: the project's own sample tasks


class Reply:
    def __init__(self, message):
        self.message, self.usage, self.latency_s = message, Usage(), 0.0


def caller(policy):
    async def call(req: ChatRequest):
        return Reply(policy(req))
    return call


async def play(task, agent_name, *, seed=0, trial=0, max_tool_errors=10):
    tools = registry.get(task.benchmark)
    state = tools.new_state(task)
    meta = {"task": task.key, "spec": SPEC, "lang": task.lang, "data_dir": None,
            "trial": trial, "seed": seed}
    res = await run_episode(task, agent=caller(resolve_model(agent_name)),
                            user=caller(resolve_model("scripted/user")),
                            toolkit=tools.toolkit(task), state=state,
                            final_state=tools.final_state, meta=meta,
                            limits=EpisodeLimits(max_turns=task.max_turns, max_tool_errors=max_tool_errors))
    return res, check_vitabench(task, res.final_state)


def test_samples_exist():
    assert len(SAMPLES) >= 4 and all(t.benchmark == "vitabench@2025-12" for t in SAMPLES)


@pytest.mark.parametrize("task", SAMPLES, ids=lambda t: t.id)
async def test_oracle_reaches_the_expected_state(task):
    res, check = await play(task, "scripted/oracle")
    assert res.termination == TerminationReason.USER_STOP
    assert res.tool_errors == 0
    assert check.passed, check.why


async def test_noisy_is_deterministic_per_seed_and_sometimes_fails():
    outcomes = {}
    for seed in (0, 1):
        for task in SAMPLES:
            for trial in range(4):
                a, ca = await play(task, "scripted/noisy:0.3", seed=seed, trial=trial)
                b, cb = await play(task, "scripted/noisy:0.3", seed=seed, trial=trial)
                assert msgspec.json.encode(a.messages) == msgspec.json.encode(b.messages)
                assert ca.passed == cb.passed
                outcomes[(seed, task.id, trial)] = ca.passed
    assert 0 < sum(outcomes.values()) < len(outcomes)


async def test_noisy_with_p1_fails_every_task_that_needs_a_change():
    needs_change = [t for t in SAMPLES if gold_plan(t)]
    assert len(needs_change) >= 4
    for task in SAMPLES:
        _, check = await play(task, "scripted/noisy:1.0")
        assert check.passed == (task not in needs_change), task.id


async def test_chaos_calls_all_become_tool_errors_and_the_episode_completes():
    task = SAMPLES[0]
    res, check = await play(task, "scripted/chaos", max_tool_errors=100)
    assert res.termination == TerminationReason.USER_STOP
    results = [m.content for m in res.messages if isinstance(m, ToolMessage)]
    # VitaBench calls tools as upstream does: a wrong type reaches the tool, which refuses it
    # with a plain answer that is not an error; every other bad call is an error
    refusals = [r for r in results if not r.startswith("Error:")]
    assert len(results) == 7 and res.tool_errors == 6
    assert refusals == ["distance value type should be float or int, but get <class 'list'>"]
    joined = "\n".join(results)
    for needle in ("Tool 'no_such_tool' not found", "not valid JSON", "missing 1 required positional",
                   "unexpected keyword argument", "must be a JSON object"):
        assert needle in joined
    assert not check.passed


def test_user_tells_pieces_in_order_then_stops():
    task = max(SAMPLES, key=lambda t: len(t.instructions))
    pieces = disclosure_pieces(task)
    assert 1 <= len(pieces) <= 3
    assert " ".join(pieces).split() == task.instructions.split()


def test_judge_route_is_the_rubric_judge_double():
    prompt = judge_user_prompt("sliding", content="user: please place the order", rubrics=[
        {"rubric_idx": "rubric_0", "rubric": "order placed", "meetExpectation": False},
        {"rubric_idx": "rubric_1", "rubric": "address right", "meetExpectation": False}])
    req = ChatRequest(model="scripted/judge", messages=[UserMessage(prompt)],
                      sweepbench={"judge_hint": False})
    judge = resolve_model("scripted/judge")
    assert judge(req) == judge(req)  # deterministic
    verdicts = parse_rubric_verdicts(judge(req).content, ["rubric_0", "rubric_1"],
                                     ["order placed", "address right"])
    assert sorted(verdicts) == [0, 1] and not any(v.met for v in verdicts.values())


@pytest.mark.parametrize("name,known", [
    ("scripted/oracle", True), ("scripted/noisy:0.3", True), ("scripted/user", True),
    ("scripted/judge", True), ("scripted/chaos", True), ("scripted/noisy:abc", False),
    ("scripted/nope", False), ("gpt-4", False), ("scripted/noisy:2", False),
    ("scripted/user:50", True), ("scripted/user:x", False), ("scripted/user:0", False),
])
def test_resolve_model(name, known):
    assert (resolve_model(name) is not None) == known


def test_policies_need_the_request_field():
    with pytest.raises(ValueError, match="sweepbench"):
        resolve_model("scripted/oracle")(ChatRequest(model="x", messages=[UserMessage("hi")]))
    assert STOP == "###STOP###"


async def test_user_with_a_turn_count_keeps_talking_then_stops():
    task = SAMPLES[0]
    tools = registry.get(task.benchmark)
    meta = {"task": task.key, "spec": SPEC, "lang": task.lang, "data_dir": None, "trial": 0, "seed": 0}
    res = await run_episode(task, agent=caller(resolve_model("scripted/oracle")),
                            user=caller(resolve_model("scripted/user:12")),
                            toolkit=tools.toolkit(task), state=tools.new_state(task),
                            final_state=tools.final_state, meta=meta,
                            limits=EpisodeLimits(max_turns=50))
    assert res.termination == TerminationReason.USER_STOP and res.turns == 12
    assert check_vitabench(task, res.final_state).passed


def test_warm_loads_a_specs_tasks_and_gold_plans_before_any_request():
    from sweepbench.benchmarks.doubles import _world, warm
    from sweepbench.errors import TaskError

    tasks = load_tasks("vitabench:delivery")
    assert warm("vitabench:delivery") == len(tasks) > 0
    plans = _world()._plans
    assert all(f"{t.key}|{t.source}" in plans for t in tasks)
    with pytest.raises(TaskError, match="unknown benchmark"):
        warm("nosuch:x")


def test_the_world_finds_a_task_once_per_name_and_the_data_dir_is_part_of_the_name(
        monkeypatch, tmp_path):
    from sweepbench.benchmarks import doubles

    found: list[tuple] = []

    def find_task(spec, key, *, data_dir, lang):
        found.append((spec, key, data_dir, lang))
        return SAMPLES[0]

    monkeypatch.setattr(doubles, "find_task", find_task)
    monkeypatch.delenv("SWEEPBENCH_DATA", raising=False)
    world = RegistryWorld()
    meta = {"task": SAMPLES[0].key, "spec": SPEC, "lang": "en", "data_dir": None}
    assert world.task(meta) is world.task(dict(meta)) is SAMPLES[0]
    assert len(found) == 1  # every request asks; the lookup runs once
    monkeypatch.setenv("SWEEPBENCH_DATA", str(tmp_path))  # another data dir: looked up again
    world.task(meta)
    world.task({**meta, "data_dir": str(tmp_path)})
    assert len(found) == 3
    # a name that cannot be one (a list) is not remembered: find_task says what is wrong
    world.task({**meta, "task": ["not", "a", "key"]})
    world.task({**meta, "task": ["not", "a", "key"]})
    assert len(found) == 5
