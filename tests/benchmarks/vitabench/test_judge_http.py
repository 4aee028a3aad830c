"""End to end: the scripted judge judges real delivery trajectories over the HTTP path.

Trajectories come from the real episode loop (scripted oracle and noisy agents, scripted user,
in-process) on real VitaBench delivery tasks; the judge runs behind the reference server and is
reached through the model client, as in a sweep.
"""

from __future__ import annotations

import msgspec
import pytest

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.catalog import load_tasks
from sweepbench.benchmarks.doubles import scripted_models
from sweepbench.benchmarks.vitabench.judge import judge_episode, task_rubrics
from sweepbench.benchmarks.vitabench.judge_double import scripted_judge
from sweepbench.config import Endpoint
from sweepbench.client.facade import ModelClient
from sweepbench.devserver.server import ReferenceServer
from sweepbench.simulator.episode import EpisodeLimits, TerminationReason, run_episode
from sweepbench.wire import Usage

SPEC = "vitabench@2025-11:delivery"  # the November goldens' data dir
N_TASKS = 3


class Reply:
    def __init__(self, message):
        self.message, self.usage, self.latency_s = message, Usage(), 0.0


def in_process(policy):
    async def call(req):
        return Reply(policy(req))
    return call


async def play(task, agent_name, data_dir):
    tools = registry.get(task.benchmark)
    meta = {"task": task.key, "spec": SPEC, "lang": task.lang, "data_dir": str(data_dir),
            "trial": 0, "seed": 0}
    return await run_episode(task, agent=in_process(scripted_models()(agent_name)),
                             user=in_process(scripted_models()("scripted/user")),
                             toolkit=tools.toolkit(task), state=tools.new_state(task),
                             final_state=tools.final_state, meta=meta,
                             limits=EpisodeLimits(max_turns=task.max_turns))


def with_hint(call, hint):
    async def hinted(req):
        return await call(msgspec.structs.replace(req, sweepbench={**req.sweepbench,
                                                                   "judge_hint": hint}))
    return hinted


@pytest.fixture
async def judge_server():
    server = ReferenceServer(lambda name: scripted_judge if name == "scripted/judge" else None,
                             models=["scripted/judge"])
    await server.start()
    client = ModelClient(Endpoint(name="scripted/judge", base_url=server.url))
    try:
        yield server, client
    finally:
        await client.aclose()
        await server.stop()


async def test_scripted_judge_over_http_on_real_trajectories(shared_data, judge_server):
    server, client = judge_server
    tasks = load_tasks(SPEC, data_dir=shared_data)[:N_TASKS]
    trajectories = []
    for task in tasks:
        for agent in ("scripted/oracle", "scripted/noisy:1.0"):
            res = await play(task, agent, shared_data)
            assert res.termination == TerminationReason.USER_STOP
            trajectories.append((task, agent, res.messages))
    assert any(len(m) > 11 for _, _, m in trajectories)  # some need more than one window

    expected_calls = 0
    for task, agent, messages in trajectories:
        over_http = await judge_episode(task, messages, call=client.complete,
                                        data_dir=shared_data, meta={"task": task.key})
        local = await judge_episode(task, messages, call=in_process(scripted_judge),
                                    data_dir=shared_data, meta={"task": task.key})
        assert over_http.template == "upstream"
        assert over_http.windows >= 1 and over_http.unjudged_windows == 0
        assert over_http.calls == over_http.windows
        assert [r.rubric for r in over_http.rubrics] == task_rubrics(task)
        # the HTTP path changes nothing about the verdicts
        assert msgspec.to_builtins(over_http.rubrics) == msgspec.to_builtins(local.rubrics)
        assert (over_http.passed, over_http.score) == (local.passed, local.score)
        assert over_http.usage.prompt_tokens > 0  # the server's estimated usage came back
        expected_calls += over_http.calls

        scripted = await judge_episode(task, messages, call=with_hint(client.complete, True),
                                       data_dir=shared_data)
        assert scripted.passed and scripted.score == 1.0
        expected_calls += scripted.calls

    # recovery end to end: garbage on the first attempt of every window, then a verdict
    task, _, messages = max(trajectories, key=lambda t: len(t[2]))
    recovered = await judge_episode(task, messages, call=with_hint(client.complete, "garbage:1"),
                                    data_dir=shared_data)
    assert recovered.unjudged_windows == 0 and recovered.calls == 2 * recovered.windows
    assert all(o.attempts == 2 for o in recovered.window_log)
    expected_calls += recovered.calls

    # garbage forever: every window unjudgeable, nothing met, no crash
    hopeless = await judge_episode(task, messages, call=with_hint(client.complete, "garbage"),
                                   data_dir=shared_data, retries=2)
    assert hopeless.unjudged_windows == hopeless.windows >= 2
    assert hopeless.calls == 3 * hopeless.windows
    assert not hopeless.passed and not any(r.met for r in hopeless.rubrics)
    expected_calls += hopeless.calls

    # a reversal scripted per window survives the round trip
    reversed_ = await judge_episode(task, messages,
                                    call=with_hint(client.complete, [True, {"rubric_0": False}]),
                                    data_dir=shared_data)
    assert reversed_.rubrics[0].met is False and reversed_.rubrics[0].window == 1
    assert all(r.met for r in reversed_.rubrics[1:])
    expected_calls += reversed_.calls

    # the no-rubric variants over HTTP too
    for method in ("full", "sliding_no_rubrics", "full_no_rubrics"):
        res = await judge_episode(task, messages, call=client.complete, method=method,
                                  data_dir=shared_data)
        assert res.unjudged_windows == 0
        expected_calls += res.calls

    assert server.requests["scripted/judge"] == expected_calls
    assert server.rejected == 0


async def test_judge_over_http_with_own_templates(judge_server):
    """Without a data dir: the built-in sample tasks and sweepbench's own judge prompts."""
    server, client = judge_server
    task = load_tasks(SPEC)[0]
    tools = registry.get(task.benchmark)
    meta = {"task": task.key, "spec": SPEC, "lang": task.lang, "data_dir": None, "trial": 0,
            "seed": 0}
    res = await run_episode(task, agent=in_process(scripted_models()("scripted/oracle")),
                            user=in_process(scripted_models()("scripted/user")),
                            toolkit=tools.toolkit(task), state=tools.new_state(task),
                            final_state=tools.final_state, meta=meta)
    judged = await judge_episode(task, res.messages, call=client.complete)
    assert judged.template == "sweepbench" and judged.unjudged_windows == 0 and judged.calls >= 1
    assert server.requests["scripted/judge"] == judged.calls == judged.windows
