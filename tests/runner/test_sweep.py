"""The sweep (runner/sweep.py) in exact counts: what a sweep runs, skips, continues and
retries, what it stores of its run, what it tells its progress, when an error streak or the
spending cap stops it, what each live call charges, and its small helpers."""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from sweepbench.config import load_config
from sweepbench.results.runinfo import package_version
from sweepbench.runner import sweep as S
from sweepbench.runner.budget import TAB
from sweepbench.runner.build import benchmark_info
from sweepbench.runner.sweep import Sweep, SweepOutcome, run_sweep
from sweepbench.store.runstore import RunStore
from sweepbench.wire import Usage

BASE = {"benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle"], "trials": 1,
        "limit": 2, "judge_models": []}


def cfg(**kw):
    return load_config(None, {**BASE, **kw})


async def test_a_sweep_runs_judges_stores_its_run_and_tells_its_progress(tmp_path):
    path = tmp_path / "s.sqlite"
    events = []
    with RunStore(path) as store:
        sweep = Sweep(cfg(), store, progress=lambda kind, **info: events.append((kind, info)),
                      run_id="r1", command="cmd", info={"extra": 1})
        out = await sweep.run()
        assert out == SweepOutcome("r1", path, episodes=2, skipped=0, errors=0, judged=2,
                                   selected=2, concurrency=2)
        [run] = store.runs()
        assert run["status"] == "done"
        assert run["info"] == {"command": "cmd", "benchmarks": benchmark_info(
            cfg().benchmarks), "shard": "0/1", "sweepbench": package_version(), "extra": 1,
            "not_started": 0}  # the stops' None: not kept
        assert run["config"]["models"] == ["scripted/oracle"]
        assert sorted(store.episode_status().values()) == ["done", "done"]
        assert sorted(store.run_selection("r1")) == sorted(store.episode_status())
    kinds = [k for k, _ in events]
    assert events[0] == ("planned", {"total": 2, "skipped": 0, "changed": {}})
    assert kinds.count("started") == kinds.count("finished") == 2
    assert "clients" in kinds and "slots" in kinds and "call" in kinds
    finished = [info for k, info in events if k == "finished"]
    assert {f["record"].termination for f in finished} == {"user_stop"}
    calls = [info for k, info in events if k == "call"]
    assert {c["endpoint"] for c in calls} == {"scripted/oracle", "scripted/user"}


async def test_a_second_sweep_skips_what_is_stored_and_runs_what_is_new(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(), store).run()
        again = await Sweep(cfg(), store, run_id="r2").run()
        assert (again.episodes, again.skipped, again.selected, again.judged) == (0, 2, 2, 0)
        more = await Sweep(cfg(trials=2), store, run_id="r3").run()
        assert (more.episodes, more.skipped, more.selected) == (2, 2, 4)
        assert store.runs()[-1]["status"] == "done"


async def test_max_cost_is_the_configs_unless_given(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        assert Sweep(cfg(max_cost_usd=3.0), store).max_cost == 3.0
        assert Sweep(cfg(max_cost_usd=3.0), store, max_cost=0.5).max_cost == 0.5
        assert Sweep(cfg(), store).max_cost is None


def failing(monkeypatch):
    async def boom(*a, **kw):
        raise RuntimeError("boom")

    monkeypatch.setattr(S, "run_episode", boom)


async def test_an_episode_that_raises_is_stored_as_an_internal_error(tmp_path, monkeypatch):
    failing(monkeypatch)
    with RunStore(tmp_path / "s.sqlite") as store:
        out = await Sweep(cfg(error_streak=0), store).run()
        assert (out.episodes, out.errors, out.error_stop) == (2, 2, None)
        records = store.records()
        assert {r.termination for r in records.values()} == {"error"}
        assert {r.error for r in records.values()} == {"internal error: RuntimeError: boom"}
        assert {r.run_id for r in records.values()} == {out.run_id}
        assert store.runs()[0]["status"] == "done"


async def test_an_error_streak_stops_starting_episodes(tmp_path, monkeypatch):
    failing(monkeypatch)
    with RunStore(tmp_path / "s.sqlite") as store:
        out = await Sweep(cfg(limit=5, error_streak=2, max_concurrency=1), store).run()
        assert (out.episodes, out.errors, out.not_started) == (2, 2, 3)
        assert out.error_stop == "the last 2 finished episodes all ended in error"
        [run] = store.runs()
        assert run["status"] == "failing"
        assert (run["info"]["error_stop"], run["info"]["not_started"]) == (out.error_stop, 3)
        # stored errors are not run again unless asked, the episodes not started are
        monkeypatch.undo()
        again = await Sweep(cfg(limit=5, error_streak=2, max_concurrency=1), store).run()
        assert (again.episodes, again.skipped, again.stored_errors, again.errors) == (3, 2, 2, 0)
        retried = await Sweep(cfg(limit=5), store, retry_errors=True).run()
        assert (retried.episodes, retried.skipped, retried.stored_errors) == (2, 3, 0)


async def test_retry_errors_as_keys_retries_those_only(tmp_path, monkeypatch):
    failing(monkeypatch)
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(error_streak=0), store).run()
        keys = sorted(store.episode_status())
        monkeypatch.undo()
        sweep = Sweep(cfg(), store, retry_errors={keys[0]})
        todo, stored = sweep.work()
        assert [i.key for i in todo] == [keys[0]] and [i.key for i in stored] == [keys[1]]
        assert sweep.stored_errors == 1 and sweep._journaled == set(keys)
        out = await sweep.run()
        assert (out.episodes, out.skipped, out.stored_errors) == (1, 1, 1)
        assert store.episode_status() == {keys[0]: "done", keys[1]: "error"}


async def test_work_continues_running_episodes_and_journals_only_those_started(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(), store).run()
        keys = sorted(store.episode_status())
        c = sqlite3.connect(tmp_path / "s.sqlite")
        c.execute("UPDATE episodes SET status = 'running' WHERE episode_key = ?", (keys[0],))
        c.commit()
        c.close()
        sweep = Sweep(cfg(trials=2), store)
        todo, stored = sweep.work()
        assert [i.key for i in stored] == [keys[1]] and len(todo) == 3
        assert keys[0] in {i.key for i in todo} and sweep._journaled == {keys[0]}
        assert sweep.stored_errors == 0


async def test_stored_episodes_whose_identity_changed_are_explained(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(), store).run()
        c = sqlite3.connect(tmp_path / "s.sqlite")
        rows = c.execute("SELECT episode_key, identity FROM episodes ORDER BY 1").fetchall()
        c.execute("UPDATE episodes SET episode_key = 'ep-old-' || rowid, identity = ? WHERE "
                  "episode_key = ?", ('{"legacy": {}}', rows[0][0]))
        c.execute("UPDATE episodes SET episode_key = 'ep-older-' || rowid, identity = ? WHERE "
                  "episode_key = ?", (rows[1][1], rows[1][0]))
        c.commit()
        c.close()
        sweep = Sweep(cfg(), store)
        todo, stored = sweep.work()
        assert len(todo) == 2 and stored == []
        assert sweep.changed == {"identity not recorded (older store)": 1, "identity": 1}
        none_new = Sweep(cfg(), store)
        none_new._explain_new([])
        assert none_new.changed == {}


async def test_the_spending_cap_stops_the_sweep_before_it_starts(tmp_path):
    priced = cfg(endpoints=[{"name": "scripted/oracle", "price_input_per_mtok": 1.0}])
    with RunStore(tmp_path / "s.sqlite") as store:
        out = await Sweep(priced, store, max_cost=0.001,
                          prior={"scripted/oracle": 1.0}).run()
        assert (out.episodes, out.not_started) == (0, 2) and out.budget_stop
        [run] = store.runs()
        assert run["status"] == "budget" and run["info"]["budget_stop"] == out.budget_stop


async def test_judge_only_runs_no_episode(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(), store).run()
        judged = cfg(judge_models=["scripted/judge"], judge_methods=["sliding"])
        out = await Sweep(judged, store, command="judge").run(episodes=False)
        assert (out.episodes, out.skipped, out.judged, out.selected) == (0, 2, 2, 2)
        assert {j["judge"] for j in store.judgments()} == {"state", "scripted/judge"}
        assert store.runs()[-1]["info"]["command"] == "judge"


async def test_run_sweep_makes_the_stores_folder(tmp_path):
    out = await run_sweep(cfg(limit=1), tmp_path / "a" / "b" / "s.sqlite", run_id="x")
    assert (out.run_id, out.episodes, out.store_path) == ("x", 1, tmp_path / "a" / "b" /
                                                          "s.sqlite")


# ---- the parts ----------------------------------------------------------------------------

def bare(tmp_path, **kw) -> Sweep:
    store = RunStore(tmp_path / "s.sqlite")
    return Sweep(cfg(**kw), store)


def test_the_error_streak_counts_the_last_finished_in_a_row(tmp_path):
    sweep = bare(tmp_path, error_streak=3)
    for failed in (True, True, False, True, True):
        sweep._streak(failed)
        assert sweep.error_stop is None
    sweep._streak(True)
    assert sweep.error_stop == "the last 3 finished episodes all ended in error"
    sweep.error_stop = "kept"
    sweep._streak(True)
    assert sweep.error_stop == "kept"
    off = Sweep(cfg(error_streak=0), sweep.store)
    for _ in range(30):
        off._streak(True)
    assert off.error_stop is None and off._recent.maxlen == 1
    sweep.store.close()


class FakeBudget:
    def __init__(self, answers, stopped_after=None):
        self.answers, self.asked, self.stopped = list(answers), [], None
        self.stopped_after = stopped_after
        self.charged = []

    def may_start(self, in_flight, uses):
        self.asked.append((in_flight, set(uses)))
        if self.stopped_after is not None and len(self.asked) > self.stopped_after:
            self.stopped = "cap reached"
        return self.answers.pop(0)

    def charge(self, endpoint, usage, attempts=1, tab=None):
        self.charged.append((endpoint, usage, attempts, tab))


async def test_may_start_waits_for_an_episode_to_end_and_asks_again(tmp_path):
    sweep = bare(tmp_path)
    sweep.budget, sweep.in_flight = FakeBudget([False, False, True]), 3
    waiting = asyncio.ensure_future(sweep._may_start({"m"}))
    for _ in range(2):
        await asyncio.sleep(0)
        assert not waiting.done()
        ended, sweep._ended = sweep._ended, asyncio.Event()
        ended.set()
    assert await waiting is True
    assert sweep.budget.asked == [(3, {"m"})] * 3
    sweep.budget = FakeBudget([False], stopped_after=0)
    assert await sweep._may_start({"m"}) is False
    sweep.budget = FakeBudget([True])
    sweep.error_stop = "streak"
    assert await sweep._may_start({"m"}) is False and sweep.budget.asked == []
    sweep.error_stop, sweep.interrupted = None, 2
    assert await sweep._may_start({"m"}) is False and sweep.budget.asked == []
    sweep.interrupted = None
    assert await sweep._may_start({"m"}) is True
    sweep.store.close()


def test_each_live_call_charges_the_episode_making_it_and_its_losing_hedges(tmp_path):
    seen = []
    sweep = bare(tmp_path)
    sweep.progress = lambda kind, **info: seen.append((kind, info))
    sweep._on_call("m", SimpleNamespace(usage=Usage(1, 2)))  # no budget yet: told only
    sweep.budget = FakeBudget([])
    token = TAB.set("tab-1")
    try:
        sweep._observer("m")(SimpleNamespace(usage=Usage(10, 5), attempts=3,
                                             hedge_usage=Usage(7, 0)))
    finally:
        TAB.reset(token)
    sweep._on_call("j", SimpleNamespace(usage=Usage(4, 4), hedge_usage=None))
    failure = RuntimeError("gave up")
    sweep._on_call("m", failure)
    assert sweep.budget.charged == [("m", Usage(10, 5), 3, "tab-1"), ("m", Usage(7, 0), 1,
                                                                     "tab-1"),
                                    ("j", Usage(4, 4), 1, None)]
    assert [(k, i["endpoint"]) for k, i in seen] == [("call", "m")] * 2 + [("call", "j"),
                                                                           ("call", "m")]
    assert seen[-1][1]["result"] is failure
    sweep.store.close()


async def test_the_budget_reads_stored_spend_only_under_a_cap(tmp_path):
    priced = {"endpoints": [{"name": "scripted/oracle", "price_input_per_mtok": 1000.0}]}
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(**priced), store).run()
        sweep = Sweep(cfg(**priced), store)
        _, stored = sweep.work()
        free = sweep._budget(stored, {})
        assert free.stored_total == 0.0 and free.endpoint_caps == {} and free.cap is None
        capped = Sweep(cfg(**priced), store, max_cost=5.0)._budget(stored, {})
        assert capped.cap == 5.0 and capped.stored_total > 0
        assert capped.stored_by_endpoint["scripted/oracle"] == capped.stored_total
        per_endpoint = cfg(endpoints=[{"name": "scripted/oracle", "price_input_per_mtok": 1000.0,
                                       "max_cost_usd": 2.0}])
        budget = Sweep(per_endpoint, store, prior={"x": 0.5})._budget(stored, {"p": 1})
        assert budget.endpoint_caps == {"scripted/oracle": 2.0} and budget.cap is None
        assert budget.stored_total == capped.stored_total
        assert budget.prior == {"x": 0.5} and budget.prices == {"p": 1}


def test_an_episodes_meta_and_endpoint_params(tmp_path):
    sweep = bare(tmp_path, seed=7)
    todo, _ = sweep.work()
    item = todo[0]
    assert sweep.meta(item) == {"episode": item.episode_id, "task": item.task.key,
                                "spec": item.spec, "lang": item.task.lang, "data_dir": None,
                                "trial": item.trial, "seed": 7}
    sweep.data_dir = Path("/data")
    assert sweep.meta(item)["data_dir"] == "/data"
    assert S._endpoint_params(SimpleNamespace(temperature=None)) == {}
    assert S._endpoint_params(SimpleNamespace(temperature=0.0)) == {"temperature": 0.0}
    assert S._endpoint_params(object()) == {}
    sweep.store.close()


def test_tune_gc_freezes_and_raises_the_young_threshold():
    before = gc.get_threshold()
    try:
        S.tune_gc()
        assert gc.get_threshold() == (200_000, 20, 100)
        assert gc.get_freeze_count() > 0
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def test_uvloop_where_available_else_asyncios_loop(monkeypatch):
    try:
        import uvloop
    except ImportError:
        uvloop = None
    try:
        S.install_uvloop()
        policy = asyncio.get_event_loop_policy()
        if uvloop is not None:
            assert isinstance(policy, uvloop.EventLoopPolicy)
        asyncio.set_event_loop_policy(None)
        monkeypatch.setitem(sys.modules, "uvloop", None)  # not installed
        default = asyncio.get_event_loop_policy()
        S.install_uvloop()
        assert asyncio.get_event_loop_policy() is default
    finally:
        asyncio.set_event_loop_policy(None)


@pytest.mark.parametrize("retry", [False, True])
async def test_a_stored_error_is_counted_whether_retried_or_not(tmp_path, monkeypatch, retry):
    failing(monkeypatch)
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(limit=1, error_streak=0), store).run()
        monkeypatch.undo()
        sweep = Sweep(cfg(limit=1), store, retry_errors=retry)
        todo, stored = sweep.work()
        assert (len(todo), len(stored), sweep.stored_errors) == (
            (1, 0, 0) if retry else (0, 1, 1))


async def test_a_signal_stops_the_sweep_says_what_is_left_and_restores_the_handlers(tmp_path):
    import os
    import signal

    from sweepbench.errors import Interrupted

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def progress(kind, **info):
        if kind == "finished":
            os.kill(os.getpid(), signal.SIGTERM)

    with RunStore(tmp_path / "s.sqlite") as store:
        sweep = Sweep(cfg(limit=4, max_concurrency=1), store, progress=progress)
        with pytest.raises(Interrupted) as e:
            await sweep.run()
        assert sweep.interrupted == signal.SIGTERM
        assert (e.value.signum, e.value.running, e.value.not_started) == (signal.SIGTERM, 0, 3)
        assert store.runs()[0]["status"] == "interrupted"
        assert list(store.episode_status().values()) == ["done"]
    assert {s: signal.getsignal(s) for s in before} == before
