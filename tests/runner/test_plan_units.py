"""The plan's arithmetic (runner/plan.py) in exact numbers: an episode's mean shape, the
benchmark's history scaled by the task's prompt size, the defaults, the judges' shapes, each
endpoint's latency, each bound on the wall time, the machine's load, and the plan's sums."""

from __future__ import annotations

import io
import math

import pytest
from rich.console import Console

from sweepbench.benchmarks import registry
from sweepbench.config import load_config
from sweepbench.runner import plan as P
from sweepbench.runner.plan_history import Cell, History
from sweepbench.runner.work import build_work

MODEL = "scripted/oracle"


def cell(n, agent, user=(0, 0, 0, 0), judges=None, overhead=0.0) -> Cell:
    return Cell(n=n, roles={"agent": list(agent), "user": list(user)}, judges=judges or {},
                overhead_s=overhead)


def test_a_cells_mean_shape():
    shape = P._mean(cell(2, [4, 200, 20, 40], [2, 100, 0, 10],
                         {("j", "likert"): [2, 4, 80, 0, 8]}, 3.0), "history of the task")
    assert shape == P.Shape(roles={"agent": [2, 100, 10, 20], "user": [1, 50, 0, 5]},
                            judges={("j", "likert"): [2, 40, 0, 4]}, overhead_s=1.5,
                            source="history of the task")
    assert P.Shape().roles == {"agent": [0.0] * 4, "user": [0.0] * 4}
    assert P.Shape().source == "defaults" and P.Shape().roles is not P.Shape().roles


# ---- latency ------------------------------------------------------------------------------

def history(**kw) -> History:
    h = History(None)
    for name, value in kw.items():
        setattr(h, name, value)
    return h


def test_a_scripted_endpoints_latency_is_the_configured_plus_its_overhead():
    spec = load_config(None, {"models": [MODEL], "reference_latency": "uniform:0.25,0.75",
                              "reference_latency_s": 9.0})
    assert P._latency(spec, MODEL, history()) == 0.5 + P.SCRIPTED_OVERHEAD_S
    assert P._latency(spec, MODEL, history(overhead={MODEL: 0.25})) == 0.75
    assert P._latency(spec, MODEL, history(overhead={MODEL: 0.0})) == 0.5  # measured none
    seconds = load_config(None, {"models": [MODEL], "reference_latency_s": 0.25})
    assert P._latency(seconds, MODEL, history()) == 0.25 + P.SCRIPTED_OVERHEAD_S


def test_another_endpoints_latency_is_its_measured_mean_else_the_default():
    cfg = load_config(None, {"models": [MODEL]})
    assert P._latency(cfg, "m", history(latency={"m": 1.5})) == 1.5
    assert P._latency(cfg, "m", history(latency={"m": 0.0})) == 0.0
    assert P._latency(cfg, "m", history(latency={MODEL: 1.0})) == P.DEFAULT_LATENCY_S == 2.0


# ---- the wall time's bounds ---------------------------------------------------------------

def wall(durations, judge_time=(), calls=None, harness=0.0, workers=None, latency=0.5,
         **endpoint):
    cfg = load_config(None, {"models": ["m"], "max_concurrency": 2, "judge_concurrency": 2,
                             "endpoints": [{"name": "m", "base_url": "http://a/v1",
                                            "max_concurrency": 4, **endpoint}]})
    return P._wall_time(cfg, list(durations), list(judge_time),
                        calls if calls is not None else {"m": [0.0, 0.0, 0.0, 0.0]},
                        {"m": latency}, harness, workers)


def test_nothing_to_run_takes_no_time():
    assert wall([]) == (0.0, "nothing to run")


def test_episodes_in_flight_bound_by_their_sum_over_the_concurrency_or_the_longest():
    assert wall([4.0, 4.0, 4.0]) == (6.0, "episodes in flight (max_concurrency)")
    assert wall([1.0, 2.0, 9.0]) == (9.0, "episodes in flight (max_concurrency)")
    assert wall([3.0]) == (3.0, "episodes in flight (max_concurrency)")  # one: min(2, 1)


def test_the_judge_pool_bounds_and_the_longest_episodes_judging_comes_after():
    assert wall([1.0, 3.0], [8.0, 2.0]) == (5.0 + 2.0, "judge pool (judge_concurrency)")
    assert wall([3.0, 1.0], [0.5, 0.25]) == (3.0 + 0.5, "episodes in flight (max_concurrency)")


def test_the_harness_time_per_call_is_shared_by_workers_and_the_driver_writes_all():
    calls = {"m": [1000.0, 0.0, 0.0, 0.0]}
    assert wall([1.0], calls=calls, harness=0.01, latency=0.0) == (
        10.0, "the harness's own time per call")
    assert wall([1.0], calls=calls, harness=0.01, latency=0.0, workers=4) == (
        2.5, "the harness's own time per call")
    assert wall([1.0], calls={"m": [100_000.0, 0.0, 0.0, 0.0]}, harness=0.0, latency=0.0,
                workers=4) == (100_000 * P.DRIVER_S_PER_CALL, "the driver's store writing")


def test_an_endpoints_in_flight_cap_rpm_and_tpm_each_with_its_ways():
    calls = {"m": [40.0, 5000.0, 0.0, 1000.0]}
    # 40 calls of 0.5 s through 4 slots: 5 s
    assert wall([1.0], calls=calls) == (5.0, "m: in-flight cap")
    assert wall([1.0], calls=calls, api_key_env="K1", api_key_envs=["K2"]) == (
        2.5, "m: in-flight cap")  # two keys: two ways, each with 4 slots
    # 40 calls at 30 a minute at half headroom: 160 s; two ways: 80 s
    assert wall([1.0], calls=calls, rpm=30, rate_headroom=0.5) == (160.0, "m: rpm")
    assert wall([1.0], calls=calls, rpm=30, rate_headroom=0.5, api_key_env="K1",
                api_key_envs=["K2"]) == (80.0, "m: rpm")
    # 6000 tokens at 600 a minute: 600 s
    assert wall([1.0], calls=calls, tpm=600, rate_headroom=1.0) == (600.0, "m: tpm")
    assert wall([1.0], calls=calls, tpm=600, rate_headroom=0.5, api_key_env="K1",
                api_key_envs=["K2"]) == (600.0, "m: tpm")


def test_an_endpoint_without_calls_bounds_nothing():
    assert wall([1.0], rpm=1, tpm=1) == (1.0, "episodes in flight (max_concurrency)")


# ---- the machine's load -------------------------------------------------------------------

def test_the_machine_load_per_core_at_least_one(monkeypatch):
    monkeypatch.setattr(P.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(P.os, "getloadavg", lambda: (10.0, 1.0, 1.0))
    assert P.machine_load() == 2.5
    monkeypatch.setattr(P.os, "getloadavg", lambda: (2.0, 9.0, 9.0))
    assert P.machine_load() == 1.0
    monkeypatch.setattr(P.os, "cpu_count", lambda: None)  # unknown: one core
    assert P.machine_load() == 2.0

    def unknown():
        raise OSError("no load average here")

    monkeypatch.setattr(P.os, "getloadavg", unknown)
    assert P.machine_load() == 1.0
    assert P.load_slowdown(6.25) == 2.5


def test_priced_means_any_price_above_zero():
    from sweepbench.results.profile import Prices

    assert not P._priced(Prices())
    assert P._priced(Prices(input=1.0)) and P._priced(Prices(cached_input=0.5))
    assert P._priced(Prices(output=2.0))


# ---- shapes from the history, the benchmark's and the defaults ------------------------------

@pytest.fixture
def t1():
    cfg = load_config(None, {"benchmarks": ["t1:bar"], "models": [MODEL],
                             "judge_models": ["scripted/judge"],
                             "judge_methods": ["likert", "sliding"]})
    items = build_work(cfg, None, None)
    return cfg, items


def estimator(cfg, items, h):
    return P._Estimator(cfg, h, None, {i.task.key: i.task for i in items})


def test_a_task_with_history_takes_its_mean_and_the_sweeps_judges_only(t1):
    cfg, items = t1
    item = items[0]
    h = history(by_task={(MODEL, item.task.key): cell(2, [6, 600, 60, 80], [4, 40, 0, 8], {
        ("scripted/judge", "likert"): [2, 2, 300, 0, 40],
        ("other/judge", "likert"): [2, 2, 1, 1, 1]}, 5.0)})
    shape = estimator(cfg, items, h).shape(item)
    assert shape == P.Shape(roles={"agent": [3, 300, 30, 40], "user": [2, 20, 0, 4]},
                            judges={("scripted/judge", "likert"): [1, 150, 0, 20]},
                            overhead_s=2.5, source="history of the task")


def test_the_benchmarks_history_is_scaled_by_the_tasks_prompt_size(t1):
    cfg, items = t1
    a, b = items[0], items[1]
    est = estimator(cfg, items, history(by_bench={(MODEL, "t1"): (
        cell(3, [9, 900, 90, 60], [3, 30, 3, 6]), {a.task.key: 2, b.task.key: 1,
                                                   "t1:bar:en:unknown": 5})}))
    size_a, size_b = est.sizes.of(a.task)[0], est.sizes.of(b.task)[0]
    assert size_a != size_b
    ratio = size_a / ((2 * size_a + size_b) / 3)  # the unknown task's size is left out
    shape = est.shape(a, judges=False)
    assert shape.source == "history of the benchmark"
    assert shape.roles["agent"] == pytest.approx([3, 300 * ratio, 30 * ratio, 20], rel=1e-12)
    assert shape.roles["agent"][0] == 3 and shape.roles["agent"][3] == 20
    assert shape.roles["user"] == [1, 10, 1, 2]  # the user's prompt is not scaled
    only_unknown = estimator(cfg, items, history(by_bench={(MODEL, "t1"): (
        cell(1, [3, 300, 30, 20]), {"t1:bar:en:unknown": 1})}))
    assert only_unknown.shape(a, judges=False).roles["agent"] == [3, 300, 30, 20]


def test_without_history_the_benchmarks_defaults(t1):
    cfg, items = t1
    item = items[0]
    est = estimator(cfg, items, history())
    shape = est.shape(item)
    d = registry.get("t1").plan_defaults
    agent_base, user_base = est.sizes.of(item.task)
    steps = len(registry.get("t1").gold_plan(item.task))
    agent, user = 3 + steps, 3 + 1 + 3 * 2  # turns + steps; turns + 1 + referee calls
    assert shape.source == "the benchmark's defaults"
    assert shape.roles == {
        "agent": [agent, agent * agent_base + 120 * agent * (agent - 1) / 2, 0.0, agent * 60],
        "user": [user, user * user_base + 120 * user * (user - 1) / 2, 0.0, user * 40]}
    # the judge (likert: one call; sliding is not a T1 method) sized by the transcript
    transcript = agent * 60 + user * 40 + 120 * agent
    assert shape.judges == {("scripted/judge", "likert"): [1.0, 1500 + transcript, 0.0, 200.0]}
    assert d["judge_completion_tokens"] == 200 and d["judge_calls"] == {"likert": 1}


def test_judges_from_the_models_history_else_any_models_on_the_benchmark(t1):
    cfg, items = t1
    item = items[0]
    mine = cell(2, [2, 2, 0, 2], judges={("scripted/judge", "likert"): [4, 8, 400, 40, 80]})
    other = cell(2, [2, 2, 0, 2], judges={("scripted/judge", "likert"): [1, 3, 30, 3, 3]})
    third = cell(2, [2, 2, 0, 2], judges={("scripted/judge", "likert"): [1, 1, 10, 1, 1]})
    h = history(by_bench={(MODEL, "t1"): (mine, {}), ("x", "t1"): (other, {}),
                          ("y", "vitabench"): (third, {})})
    assert estimator(cfg, items, h).shape(item).judges == {
        ("scripted/judge", "likert"): [2, 100, 10, 20]}
    h = history(by_bench={(MODEL, "t1"): (cell(2, [2, 2, 0, 2]), {}), ("x", "t1"): (other, {}),
                          ("z", "t1"): (other, {}), ("y", "vitabench"): (third, {})})
    est = estimator(cfg, items, h)
    # the two other models' judged episodes of T1, summed: 2 episodes, 6 calls, 60, 6, 6
    assert est.shape(item).judges == {("scripted/judge", "likert"): [3, 30, 3, 3]}
    assert est.shape(items[1]).judges == {("scripted/judge", "likert"): [3, 30, 3, 3]}
    assert list(est._judged) == [(MODEL, "t1", "scripted/judge", "likert")]  # asked once


# ---- the plan's sums ----------------------------------------------------------------------

def test_the_plan_sums_shapes_by_endpoint_prices_them_and_bounds_the_wall(monkeypatch):
    cfg = load_config(None, {"benchmarks": ["t1:bar"], "models": [MODEL],
                             "judge_models": ["scripted/judge"], "judge_methods": ["likert"],
                             "reference_latency_s": 0.5, "max_concurrency": 5,
                             "judge_concurrency": 100,
                             "endpoints": [{"name": MODEL, "price_input_per_mtok": 2.0,
                                            "price_cached_input_per_mtok": 1.0,
                                            "price_output_per_mtok": 8.0}]})
    items = build_work(cfg, None, None)
    judge = {("scripted/judge", "likert"): [2, 2, 100, 0, 10]}
    h = history(by_task={(MODEL, i.task.key): cell(2, [4, 2000, 400, 200], [2, 100, 0, 20],
                                                    judge, 1.0) for i in items},
                overhead={MODEL: 0.0, "scripted/user": 0.0, "scripted/judge": 0.0},
                harness_s=0.0, startup_s=3.0)
    monkeypatch.setattr(P, "History", lambda store, **kw: h)
    plan = P.make_plan(cfg, None)
    n = len(items)
    assert plan["episodes"] == {"selected": n, "stored": 0, "to_run": n, "to_continue": 0}
    assert plan["estimate_from"] == {f"{MODEL} / t1": ["history of the task"]}
    assert not plan["rough"]
    oracle = plan["endpoints"][MODEL]
    assert oracle == {"requests": 2 * n, "prompt_tokens": 1000 * n, "cached_prompt_tokens": 200 * n,
                      "completion_tokens": 100 * n,
                      "dollars": pytest.approx((800 * 2.0 + 200 * 1.0 + 100 * 8.0) * n / 1e6),
                      "latency_s": 0.5}
    assert plan["endpoints"]["scripted/user"] == {
        "requests": n, "prompt_tokens": 50 * n, "cached_prompt_tokens": 0,
        "completion_tokens": 10 * n, "dollars": None, "latency_s": 0.5}
    assert plan["endpoints"]["scripted/judge"]["requests"] == n
    assert plan["endpoints"]["scripted/judge"]["prompt_tokens"] == 50 * n
    assert plan["requests"] == 4 * n and plan["prompt_tokens"] == 1100 * n
    assert plan["cached_prompt_tokens"] == 200 * n and plan["completion_tokens"] == 115 * n
    assert plan["unpriced"] == ["scripted/judge", "scripted/user"]
    assert plan["dollars"] == pytest.approx(oracle["dollars"])
    assert plan["per_episode_dollars"] == {
        MODEL: pytest.approx(oracle["dollars"] / n), "scripted/judge": 0.0,
        "scripted/user": 0.0}
    # each episode: 2 agent + 1 user call of 0.5 s and 0.5 s outside them; 5 at a time; its
    # judging after the last (one call of 0.5 s); the store's startup
    w = plan["wall_s"]
    episodes = n * 2.0 / 5
    assert w == {"estimate": pytest.approx(episodes + 0.5 + 3.0), "low": pytest.approx(
        (episodes + 3.5) * 0.8), "high": pytest.approx((episodes + 3.5) * 1.25),
        "bound": "episodes in flight (max_concurrency)", "machine_load": None,
        "workers": None}
    on_ray = P.make_plan(cfg, None, workers=2)["wall_s"]
    assert on_ray["estimate"] == pytest.approx(w["estimate"] + P.RAY_STARTUP_S)
    assert on_ray["workers"] == 2


def test_a_plan_without_history_waits_on_the_machines_load(monkeypatch, t1):
    cfg, items = t1
    monkeypatch.setattr(P, "machine_load", lambda: 4.0)
    plan = P.make_plan(cfg, None)
    assert plan["rough"] and plan["wall_s"]["machine_load"] == 4.0
    w = plan["wall_s"]
    assert (w["low"], w["high"]) == (pytest.approx(w["estimate"] * 0.5),
                                     pytest.approx(w["estimate"] * 2.0))
    console = Console(record=True, width=200, file=io.StringIO())
    console.print(P.render_plan(plan))
    text = " ".join(console.export_text().split())
    assert "; the machine's load, 4.0 per core, slows the harness)" in text
    assert f"episodes: {len(items)} selected, 0 already stored, {len(items)} to run, 0 to " \
           "continue" in text
    assert "rough estimate: no history in the store" in text
    assert "estimated from: scripted/oracle / t1: the benchmark's defaults" in text


def test_a_plan_on_workers_says_so_and_an_empty_plan_has_no_estimate_line():
    plan = {"episodes": {"selected": 0, "stored": 0, "to_run": 0, "to_continue": 0},
            "estimate_from": {}, "rough": False, "endpoints": {}, "unpriced": [],
            "requests": 0, "prompt_tokens": 0, "cached_prompt_tokens": 0,
            "completion_tokens": 0, "dollars": 0.0,
            "wall_s": {"estimate": 1234.5, "low": 1000.0, "high": 1500.0, "bound": "x",
                       "machine_load": 1.0, "workers": 3}}
    console = Console(record=True, width=200, file=io.StringIO())
    console.print(P.render_plan(plan))
    text = console.export_text()
    assert "estimated from" not in text and "rough" not in text
    assert "wall time on 3 workers: ~1,234.5 s (range 1,000.0-1,500.0 s; bound by x)" in text


def test_stored_episodes_are_skipped_and_errors_retried_only_when_asked(tmp_path, t1):
    from sweepbench.store.runstore import RunStore
    from sweepbench.wire import EpisodeRecord

    cfg, items = t1
    with RunStore(tmp_path / "s.sqlite") as store:
        store.begin_run("r", {})
        for item, how in zip(items, ("user_stop", "error", None)):
            store.episode_started(item.meta(cfg), run_id="r")
            if how:
                t = item.task
                store.episode_finished(item.key, EpisodeRecord(
                    run_id="r", model=item.model, benchmark=t.benchmark, domain=t.domain,
                    task_id=t.id, lang=t.lang, trial=item.trial, termination=how))
        store.flush_sync()
        n = len(items)
        assert P.make_plan(cfg, store)["episodes"] == {
            "selected": n, "stored": 2, "to_run": n - 3, "to_continue": 1}
        assert P.make_plan(cfg, store, retry_errors=True)["episodes"] == {
            "selected": n, "stored": 1, "to_run": n - 3, "to_continue": 2}
        assert P.make_plan(cfg, store)["store"] == str(store.path)
    assert P.make_plan(cfg, None)["store"] is None


def test_episode_calls_are_the_agents_and_users_once_per_task(t1, monkeypatch):
    cfg, items = t1
    a = items[0]
    h = history(by_task={(MODEL, a.task.key): cell(2, [6, 0, 0, 0], [4, 0, 0, 0])})
    made = []

    def fake(store, **kw):
        made.append(kw)
        return h

    monkeypatch.setattr(P, "History", fake)
    asked = []
    real = P._Estimator.shape

    def shape(self, item, **kw):
        asked.append((item.task.key, kw))
        return real(self, item, **kw)

    monkeypatch.setattr(P._Estimator, "shape", shape)
    twice = [a, a, items[1]]
    got = P.episode_calls(cfg, None, twice, None)
    assert made == [{"calls_only": True}]
    assert got[0] == got[1] == (5.0, "history of the task")
    assert got[2][1] == "the benchmark's defaults" and got[2][0] > 0
    assert asked == [(a.task.key, {"judges": False}), (items[1].task.key, {"judges": False})]


def test_prior_per_episode_is_the_plans(monkeypatch, t1):
    cfg, _ = t1
    monkeypatch.setattr(P, "make_plan", lambda c, s: {"per_episode_dollars": {"m": 0.25}})
    assert P.prior_per_episode(cfg, None) == {"m": 0.25}


def test_lognormal_reference_latency_is_its_capped_mean():
    cfg = load_config(None, {"models": [MODEL],
                             "reference_latency": "lognormal:median=0.5,sigma=1,max=0.75"})
    assert P._latency(cfg, MODEL, history(overhead={MODEL: 0.0})) == 0.75
    cfg = load_config(None, {"models": [MODEL],
                             "reference_latency": "lognormal:median=0.5,sigma=1"})
    assert P._latency(cfg, MODEL, history(overhead={MODEL: 0.0})) == 0.5 * math.exp(0.5)


def rendered(plan: dict) -> list[str]:
    console = Console(record=True, width=160, file=io.StringIO())
    console.print(P.render_plan(plan))
    return [" ".join(line.split()) for line in console.export_text().splitlines()]


def cells(lines: list[str], bar: str) -> dict[str, list[str]]:
    """The table's rows (``│``) or header (``┃``), by their first cell."""
    rows = [[c.strip() for c in line.strip().strip(bar).split(bar)] for line in lines
            if line.startswith(bar)]
    return {row[0]: row for row in rows}


def endpoint(requests, dollars, latency=0.5):
    return {"requests": requests, "prompt_tokens": 1500, "cached_prompt_tokens": 0,
            "completion_tokens": 20, "dollars": dollars, "latency_s": latency}


def a_plan(endpoints, unpriced):
    return {"episodes": {"selected": 1200, "stored": 0, "to_run": 1200, "to_continue": 0},
            "estimate_from": {"m / t1": ["history of the task", "x"]}, "rough": False,
            "endpoints": endpoints, "unpriced": unpriced, "requests": 3, "prompt_tokens": 3000,
            "cached_prompt_tokens": 0, "completion_tokens": 40,
            "dollars": sum(e["dollars"] or 0.0 for e in endpoints.values()),
            "wall_s": {"estimate": 10.0, "low": 8.0, "high": 12.5, "bound": "b",
                       "machine_load": None, "workers": None}}


def test_the_plans_table_names_each_endpoint_and_its_dollars_or_unpriced():
    lines = rendered(a_plan({"m": endpoint(2, 0.5), "u": endpoint(1, None, 0.25)}, ["u"]))
    text = "\n".join(lines)
    assert lines[0] == "episodes: 1,200 selected, 0 already stored, 1,200 to run, 0 to continue"
    assert lines[1] == "estimated from: m / t1: history of the task, x"
    assert "expected calls, tokens and dollars per endpoint" in text
    assert cells(lines, "┃")["endpoint"] == [
        "endpoint", "requests", "prompt tokens", "cached", "completion", "s/call", "$"]
    rows = cells(lines, "│")
    assert rows["m"] == ["m", "2", "1.5k", "0", "20", "500 ms", "$0.5000"]
    assert rows["u"] == ["u", "1", "1.5k", "0", "20", "250 ms", "unpriced"]
    assert rows["total"] == ["total", "3", "3k", "0", "40", "", "$0.5000"]
    assert "unpriced (no prices configured; not in the $ total): u" in text
    assert lines[-1] == "wall time: ~10.0 s (range 8.0-12.5 s; bound by b)"


def test_a_plan_with_every_endpoint_unpriced_says_so_in_its_total_without_a_note():
    lines = rendered(a_plan({"u": endpoint(1, None)}, ["u"]))
    assert cells(lines, "│")["total"][-1] == "unpriced"
    assert not any("not in the $ total" in line for line in lines)


def test_the_plans_lines_exactly_with_two_sources_two_unpriced_and_some_load():
    plan = a_plan({"m": endpoint(2, 0.5), "u": endpoint(1, None), "v": endpoint(1, None)},
                  ["u", "v"])
    plan["estimate_from"]["n / t1"] = ["the benchmark's defaults"]
    plan["rough"] = True
    plan["wall_s"]["machine_load"] = 1.5
    lines = rendered(plan)
    assert lines[1:3] == [
        "estimated from: m / t1: history of the task, x; n / t1: the benchmark's defaults",
        "rough estimate: no history in the store for some model and benchmark (the "
        "benchmark's defaults are used); expect up to 2x either way"]
    assert lines[3] == "expected calls, tokens and dollars per endpoint"
    assert "unpriced (no prices configured; not in the $ total): u, v" in lines
    assert lines[-1] == ("wall time: ~10.0 s (range 8.0-12.5 s; bound by b; the machine's "
                         "load, 1.5 per core, slows the harness)")


def test_prior_per_episode_is_the_plan_of_its_config_and_store(monkeypatch, t1):
    cfg, _ = t1
    store = object()
    asked = []
    monkeypatch.setattr(P, "make_plan", lambda c, s: asked.append((c, s)) or {
        "per_episode_dollars": {"m": 0.25}})
    assert P.prior_per_episode(cfg, store) == {"m": 0.25} and asked == [(cfg, store)]


def test_the_plan_reads_its_work_history_and_sizes_in_the_data_dir_of_its_shard(
        tmp_path, monkeypatch, t1):
    import msgspec

    from sweepbench.runner.work import Shard
    from sweepbench.store.runstore import RunStore

    cfg, _ = t1
    cfg = msgspec.structs.replace(cfg, data_dir=str(tmp_path))
    seen = []
    real_work, real_history, real_estimator = P.build_work, P.History, P._Estimator

    def build_work(c, data_dir, shard):  # test doubles: the built-in samples are read
        seen.append(("work", data_dir, shard))
        return real_work(msgspec.structs.replace(c, data_dir=None), None, shard)

    def history(store, **kw):
        seen.append(("history", store, kw))
        return real_history(store, **kw)

    class Estimator(real_estimator):
        def __init__(self, c, h, data_dir, tasks):
            seen.append(("sizes", data_dir, len(tasks)))
            super().__init__(c, h, None, tasks)

    monkeypatch.setattr(P, "build_work", build_work)
    monkeypatch.setattr(P, "History", history)
    monkeypatch.setattr(P, "_Estimator", Estimator)
    with RunStore(tmp_path / "s.sqlite") as store:
        half = Shard(1, 2)
        plan = P.make_plan(cfg, store, shard=half)
        tasks = {i.task.key for i in real_work(msgspec.structs.replace(cfg, data_dir=None),
                                                None, half)}
        assert seen == [("work", tmp_path.resolve(), half), ("history", store, {}),
                        ("sizes", tmp_path.resolve(), len(tasks))]
        assert plan["episodes"]["selected"] == len(real_work(
            msgspec.structs.replace(cfg, data_dir=None), None, half))
        seen.clear()
        P.episode_calls(cfg, store, [], tmp_path)
        assert seen == [("history", store, {"calls_only": True}), ("sizes", tmp_path, 0)]


def test_a_task_history_without_a_judge_takes_the_models_judged_episodes_first(t1):
    cfg, items = t1
    item = items[0]
    mine = cell(2, [2, 2, 0, 2], judges={("scripted/judge", "likert"): [4, 8, 400, 40, 80]})
    other = cell(2, [2, 2, 0, 2], judges={("scripted/judge", "likert"): [1, 3, 30, 3, 3]})
    h = history(by_task={(MODEL, item.task.key): cell(2, [6, 600, 60, 80], [4, 40, 0, 8])},
                by_bench={("x", "t1"): (other, {}), (MODEL, "t1"): (mine, {})})
    shape = estimator(cfg, items, h).shape(item)
    assert shape.source == "history of the task"
    assert shape.judges == {("scripted/judge", "likert"): [2, 100, 10, 20]}
    # a model without judged episodes of its own: every model's of the benchmark, summed
    h = history(by_task={(MODEL, item.task.key): cell(2, [6, 600, 60, 80], [4, 40, 0, 8])},
                by_bench={("x", "t1"): (other, {}), (MODEL, "t1"): (cell(2, [2, 2, 0, 2]), {}),
                          ("z", "t1"): (mine, {})})
    assert estimator(cfg, items, h).shape(item).judges == {
        ("scripted/judge", "likert"): [11 / 5, 430 / 5, 43 / 5, 83 / 5]}


def test_a_plan_with_nothing_to_run_expects_nothing_per_episode(monkeypatch, t1):
    cfg, _ = t1
    monkeypatch.setattr(P, "build_work", lambda c, data_dir, shard: [])
    plan = P.make_plan(cfg, None)
    assert plan["episodes"]["to_run"] == 0
    assert plan["per_episode_dollars"] == dict.fromkeys(
        ["scripted/judge", "scripted/oracle", "scripted/user"], 0.0)
