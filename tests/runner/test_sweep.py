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
        assert store.runs()[-1]["info"]["command"] == "run"
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
    one = Sweep(cfg(error_streak=1), sweep.store)
    one._streak(True)
    assert one.error_stop == "the last 1 finished episodes all ended in error"
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
    sweep._on_call("k", SimpleNamespace(usage=Usage(2, 2)))  # a result without hedges
    failure = RuntimeError("gave up")
    sweep._on_call("m", failure)
    assert sweep.budget.charged == [("m", Usage(10, 5), 3, "tab-1"), ("m", Usage(7, 0), 1,
                                                                     "tab-1"),
                                    ("j", Usage(4, 4), 1, None), ("k", Usage(2, 2), 1, None)]
    assert [(k, i["endpoint"]) for k, i in seen] == [("call", "m")] * 2 + [
        ("call", "j"), ("call", "k"), ("call", "m")]
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
        gc.set_threshold(700, 10, 10)  # CPython's defaults
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


# ---- one episode (run_item) -----------------------------------------------------------------

class FakeClient:
    """A test double of a ModelClient: its endpoint's temperature, the conversations asked."""

    def __init__(self, temperature=None):
        self.endpoint = SimpleNamespace(temperature=temperature)
        self.keys = []

    def conversation(self, key):
        self.keys.append(key)

        async def complete(req):
            raise AssertionError("the scripted episode makes no call")
        return complete


def scripted_result(**kw):
    """What a scripted run_episode returns: every field set, none to its default."""
    from sweepbench.ids import TerminationReason
    from sweepbench.simulator.episode import EpisodeResult
    from sweepbench.wire import UserMessage

    result = EpisodeResult()
    values = {"termination": TerminationReason.USER_STOP,
              "messages": [UserMessage(content="hi")], "agent_usage": Usage(11, 12),
              "user_usage": Usage(13, 14), "agent_calls": 5, "user_calls": 6, "tool_calls": 7,
              "tool_errors": 8, "turns": 9, "steps": 10, "wall_s": 1.5, "error": "said so",
              "final_state": {"orders": 1}}
    for name, value in {**values, **kw}.items():
        setattr(result, name, value)
    return result


def one_item_sweep(tmp_path, monkeypatch, episode, **kw):
    """A sweep ready to run items by hand: clients are doubles, run_episode is ``episode``."""
    sweep = bare(tmp_path, **kw)
    todo, _ = sweep.work()
    sweep.store.begin_run(sweep.run_id, {})
    sweep.clients = {"scripted/oracle": FakeClient(0.25), "scripted/user": FakeClient(0.5)}
    monkeypatch.setattr(S, "run_episode", episode)
    return sweep, todo


async def test_an_episode_is_run_with_the_configs_limits_and_the_endpoints_own_fields(
        tmp_path, monkeypatch):
    from sweepbench.benchmarks import registry

    seen = {}

    async def episode(task, **kw):
        seen.update(kw, task=task)
        return scripted_result()

    sweep, todo = one_item_sweep(tmp_path, monkeypatch, episode, max_turns=7, max_tool_errors=4,
                                 max_steps=50, token_limit=9000, time_limit_s=60.0)
    item = todo[0]
    await sweep.run_item(item)
    bench = registry.get(item.task.benchmark)
    limits = seen["limits"]
    assert (limits.max_turns, limits.max_steps, limits.token_limit, limits.time_limit_s) == (
        7, 50, 9000, 60.0)
    assert limits.max_tool_errors == 3  # VitaBench's: the count that ends it, less one
    assert seen["task"] is item.task and seen["meta"] == sweep.meta(item)
    assert seen["tool_descriptions"] == bench.tool_descriptions(item.task, None)
    assert type(seen["protocol"]) is type(bench.episode_protocol(item.task, data_dir=None,
                                                                  user_mode=S.UserMode("default")))
    assert seen["request_params"] == {"agent": {"temperature": 0.25},
                                      "user": {"temperature": 0.5}}
    assert seen["final_state"] == bench.final_state and callable(seen["on_event"])
    assert [c.keys for c in sweep.clients.values()] == [[item.task.key]] * 2
    sweep.store.close()


async def test_an_episodes_record_is_what_it_produced_under_its_labels(tmp_path, monkeypatch):
    import msgspec

    async def episode(task, **kw):
        return scripted_result()

    seen = []
    sweep, todo = one_item_sweep(tmp_path, monkeypatch, episode)
    sweep.progress = lambda kind, **info: seen.append((kind, info))
    item = todo[0]
    item = S.WorkItem(item.model, item.spec, msgspec.structs.replace(item.task, lang="zh"),
                      item.trial, item.key, item.identity)
    record = await sweep.run_item(item)
    expected = S.EpisodeRecord(
        run_id=sweep.run_id, model="scripted/oracle", benchmark=item.task.benchmark,
        domain="delivery",
        task_id=item.task.id, lang="zh", trial=0, termination="user_stop",
        messages=record.messages, agent_usage=Usage(11, 12), user_usage=Usage(13, 14),
        agent_calls=5, user_calls=6, tool_calls=7, tool_errors=8, turns=9, steps=10,
        wall_s=1.5, error="said so", final_state={"orders": 1})
    assert record == expected and [m.content for m in record.messages] == ["hi"]
    await sweep.store.flush()
    assert sweep.store.records() == {item.key: expected}
    assert sweep.store.episode_rows()[0]["run_id"] == sweep.run_id
    assert seen == [("started", {"item": item}), ("finished", {"item": item, "record": record})]
    sweep.store.close()


async def test_an_internal_error_is_recorded_without_the_keys_it_names(tmp_path, monkeypatch):
    """Only the exception's last line, scrubbed of every registered key."""
    from sweepbench.client.secrets import KEYS

    secret = "sk-sweep-unit-" + "q7" * 20
    monkeypatch.setenv("SWEEPBENCH_SWEEP_TEST_KEY", secret)
    KEYS.register("SWEEPBENCH_SWEEP_TEST_KEY")

    async def episode(task, **kw):
        raise ValueError(f"bad key {secret}\nsecond line")

    sweep, todo = one_item_sweep(tmp_path, monkeypatch, episode)
    record = await sweep.run_item(todo[0])
    assert record.termination == "error" and secret not in record.error
    assert record.error.startswith("internal error: ValueError: bad key ")
    assert record.error.endswith("second line") and record.turns == 0
    sweep.store.close()


async def test_after_a_signal_no_episode_starts_and_a_failed_one_stays_running(
        tmp_path, monkeypatch):
    async def fails_after_the_signal(task, **kw):
        sweep.interrupted = 15
        raise RuntimeError("closed by the signal")

    sweep, todo = one_item_sweep(tmp_path, monkeypatch, fails_after_the_signal)
    with pytest.raises(asyncio.CancelledError):
        await sweep.run_item(todo[0])
    await sweep.store.flush()
    assert sweep.store.episode_status() == {todo[0].key: "running"}
    with pytest.raises(asyncio.CancelledError):  # the next item does not start at all
        await sweep.run_item(todo[1])
    await sweep.store.flush()
    assert sweep.store.episode_status() == {todo[0].key: "running"}

    async def ends_well(task, **kw):
        return scripted_result()

    monkeypatch.setattr(S, "run_episode", ends_well)
    sweep.interrupted = None
    first = await sweep.run_item(todo[1])
    sweep.interrupted = 15  # an episode that ended well after the signal is kept

    async def ends_well_late(task, **kw):
        sweep.interrupted = 15
        return scripted_result()

    sweep.interrupted = None
    monkeypatch.setattr(S, "run_episode", ends_well_late)
    late = await sweep.run_item(todo[0])
    await sweep.store.flush()
    assert (first.termination, late.termination) == ("user_stop", "user_stop")
    assert sweep.store.episode_status() == {todo[0].key: "done", todo[1].key: "done"}
    sweep.store.close()


async def test_each_step_is_journaled_in_order_with_the_endpoint_it_went_to(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        out = await Sweep(cfg(limit=1), store, run_id="r1").run()
        [key] = store.episode_status()
        events = store.events(key)
        assert [e["seq"] for e in events] == list(range(len(events)))
        assert {e["run_id"] for e in events} == {"r1"}
        ends = {(e["kind"], e["payload"].get("role"), e["endpoint"]) for e in events}
        assert ends == {("model_call", "agent", "scripted/oracle"),
                        ("model_call", "user", "scripted/user"), ("tool_call", None, None)}
        assert (out.resumed, out.replayed_calls) == (0, 0)


async def test_episodes_left_running_continue_from_their_journal(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(), store).run()
        calls = {k: len(store.events(k, kind="model_call")) for k in store.episode_status()}
        before = {k: store.events(k) for k in calls}
        c = sqlite3.connect(tmp_path / "s.sqlite")
        c.execute("UPDATE episodes SET status = 'running'")
        c.commit()
        c.close()
        out = await Sweep(cfg(trials=2), store, run_id="again").run()
        assert (out.episodes, out.resumed, out.replayed_calls) == (4, 2, sum(calls.values()))
        assert out.errors == 0 and set(store.episode_status().values()) == {"done"}
        # replayed, not called again: each journal as it was
        assert {k: [(e["seq"], e["kind"], e["endpoint"]) for e in store.events(k)]
                for k in calls} == {k: [(e["seq"], e["kind"], e["endpoint"]) for e in ev]
                                    for k, ev in before.items()}


async def test_the_interruption_counts_the_works_episodes_only(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(limit=3), store).run()
        keys = sorted(store.episode_status())
        c = sqlite3.connect(tmp_path / "s.sqlite")
        c.execute("UPDATE episodes SET status = 'running'")
        c.commit()
        c.close()
        sweep = Sweep(cfg(limit=3, trials=2), store)
        todo, _ = sweep.work()
        mine = [i for i in todo if i.key in keys[:2] or i.key not in keys]
        sweep.interrupted = 2
        stop = sweep._interruption(mine)
        assert (stop.signum, stop.running, stop.not_started) == (2, 2, 3)
        sweep.interrupted = None
        assert sweep._interruption([]).signum == 2  # SIGINT when none was taken


# ---- what a sweep hands its parts ------------------------------------------------------------

def spy(monkeypatch, name, calls, *, returns=None):
    """Record the calls of sweep's ``name`` (as called, positional and keyword), then call
    the real one (or return ``returns``, awaited like the real one where it is async)."""
    real = getattr(S, name)
    if asyncio.iscoroutinefunction(real):
        async def wrapper(*a, **kw):
            calls.setdefault(name, []).append((a, kw))
            return returns if returns is not None else await real(*a, **kw)
    else:
        def wrapper(*a, **kw):
            calls.setdefault(name, []).append((a, kw))
            return real(*a, **kw)
    monkeypatch.setattr(S, name, wrapper)


def spy_classes(monkeypatch, calls):
    for name in ("JudgePool", "SweepResources"):
        real = getattr(S, name)

        def init(self, *a, _real=real, _name=name, **kw):
            calls.setdefault(_name, []).append((self, a, kw))
            _real.__init__(self, *a, **kw)
        monkeypatch.setattr(S, name, type(name, (real,), {"__init__": init}))


async def test_a_sweep_hands_its_parts_the_run_the_endpoints_and_the_slots(tmp_path,
                                                                          monkeypatch):
    calls, warnings, events = {}, [], []
    for name in ("preflight", "fit_concurrency", "plan_queue", "open_cache"):
        spy(monkeypatch, name, calls, returns=True if name == "preflight" else None)
    spy_classes(monkeypatch, calls)
    limits = S.LimitsPool()

    class OwnLimits(Sweep):
        def new_limits(self):
            return limits

    config = cfg(judge_models=["scripted/judge"], judge_methods=["sliding"],
                 judge_concurrency=3, max_concurrency=5,
                 response_cache=str(tmp_path / "cache.sqlite"))
    with RunStore(tmp_path / "s.sqlite") as store:
        sweep = OwnLimits(config, store, run_id="r1", check_endpoints=False,
                          warn=warnings.append,
                          progress=lambda kind, **info: events.append((kind, info)))
        todo, _ = sweep.work()
        keys = [i.key for i in todo]
        out = await sweep.run()
        names = {"scripted/oracle", "scripted/user", "scripted/judge"}
        assert calls["preflight"] == [((config, names), {"request": False})]
        assert calls["fit_concurrency"] == [((config, names, 2), {"warn": warnings.append})]
        [((items, *rest), kw)] = calls["plan_queue"]
        assert sorted(i.key for i in items) == sorted(keys)
        assert (rest, kw) == ([config, store, None], {"slots": 2})
        assert calls["open_cache"] == [((config, store.path), {})]
        [(pool, (pool_store, run_id), kw)] = calls["JudgePool"]
        assert (pool_store, run_id) is not None and (pool_store is store, run_id) == (True, "r1")
        assert (kw["workers"], kw["data_dir"], kw["observe"], kw["clients"]) == (
            3, None, sweep._on_call, {})
        assert sorted(kw["keys"]) == sorted(keys) and pool.clients is sweep.clients
        [(res, (res_cfg, res_names), kw)] = calls["SweepResources"]
        assert (res_cfg, res_names, kw["limits"]) == (config, names, limits)
        assert kw["cache"] is not None and kw["cache"] is res.cache
        assert (out.episodes, out.judged, out.concurrency) == (2, 4, 2)
    info = dict(events)
    assert info["clients"] == {"clients": sweep.clients}
    slots = info["slots"]["slots"]
    # 5 in flight at most, fitted to the 2 episodes: no slot spare while they run, both
    # idle (lent to backups) once the queue is empty
    assert slots is sweep.slots and (slots.spare.idle, slots.free) == (2, 0)
    assert sweep.clients["scripted/oracle"].spare is slots.spare
    assert sweep.clients["scripted/user"].spare is slots.spare
    assert sweep.clients["scripted/judge"].spare is not slots.spare


async def test_a_sweep_with_nothing_to_run_checks_no_endpoint(tmp_path, monkeypatch):
    calls = {}
    judged = cfg(judge_models=["scripted/judge"], judge_methods=["sliding"])
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(), store).run()
        spy(monkeypatch, "preflight", calls, returns=True)
        spy(monkeypatch, "fit_concurrency", calls)
        spy_classes(monkeypatch, calls)
        out = await Sweep(cfg(), store).run()  # all stored and judged: nothing to ask anyone
        assert (out.episodes, out.judged) == (0, 0) and "preflight" not in calls
        assert calls["fit_concurrency"][0][0][1:] == (set(), 0)
        assert calls["SweepResources"][0][1][1] == set()
        # stored episodes a new judge has not judged: only the judge is asked
        out = await Sweep(judged, store).run()
        assert (out.episodes, out.judged) == (0, 2)
        assert calls["preflight"] == [((judged, {"scripted/judge"}), {"request": True})]
        assert calls["SweepResources"][1][1][1] == {"scripted/judge"}


async def test_each_episode_runs_on_its_slot_with_its_tab_counted_in_flight(tmp_path,
                                                                           monkeypatch):
    """In flight: episodes started and not ended; workers: one per slot, and with lending a
    quarter more (at least 1) to start episodes while others sleep on a lent slot."""
    from sweepbench.runner.slots import LEASE

    real = S.run_episode
    seen = []

    def workers():
        return sum(t.get_coro().__qualname__.endswith("worker") for t in asyncio.all_tasks()
                   if not t.done())

    async def episode(task, **kw):
        seen.append((sweep.in_flight, TAB.get(), LEASE.get(None), set(sweep.budget.open),
                     workers()))
        return await real(task, **kw)

    monkeypatch.setattr(S, "run_episode", episode)
    for n, (kw, lent, in_flight, n_workers) in enumerate((
            ({"limit": 3, "max_concurrency": 1}, True, [1, 1, 1], 2),
            ({"limit": 3, "max_concurrency": 1, "lend_slots": False}, False, [1, 1, 1], 1),
            ({"limit": 1, "max_concurrency": 1}, False, [1], 1),
            ({"limit": 2, "max_concurrency": 2}, False, [1, 2], 2))):
        seen.clear()
        with RunStore(tmp_path / f"s{n}.sqlite") as store:
            sweep = Sweep(cfg(**kw), store)
            out = await sweep.run()
        assert out.episodes == kw["limit"] == len(seen)
        assert [s[0] for s in seen] == in_flight and sweep.in_flight == 0, kw
        assert seen[0][-1] == n_workers, kw
        tabs = [s[1] for s in seen]
        assert all(tab is not None and tab in open_ for _, tab, _, open_, _ in seen)
        assert len(set(map(id, tabs))) == len(tabs)  # a tab of its own each
        assert sweep.budget.open == {} and sweep.budget.finished == len(seen)
        assert all((lease is not None) == lent for _, _, lease, _, _ in seen), kw


async def test_an_endpoints_own_budget_stops_the_episodes_that_use_it(tmp_path):
    capped = cfg(endpoints=[{"name": "scripted/oracle", "price_input_per_mtok": 1.0,
                             "max_cost_usd": 0.001}])
    with RunStore(tmp_path / "s.sqlite") as store:
        out = await Sweep(capped, store, prior={"scripted/oracle": 1.0}).run()
        assert (out.episodes, out.not_started) == (0, 2)
        assert out.budget_stop.startswith("endpoint 'scripted/oracle' budget $0.0010 reached")


async def test_a_retried_episode_is_judged_again(tmp_path, monkeypatch):
    failing(monkeypatch)
    with RunStore(tmp_path / "s.sqlite") as store:
        first = await Sweep(cfg(limit=1, error_streak=0), store).run()
        assert first.judged == 1
        monkeypatch.undo()
        again = await Sweep(cfg(limit=1), store, retry_errors=True).run()
        assert (again.episodes, again.errors, again.judged) == (1, 0, 1)
    # a new judge judges the new record only, not the stored error it replaces
    judged = cfg(limit=1, judge_models=["scripted/judge"], judge_methods=["sliding"])
    failing(monkeypatch)
    with RunStore(tmp_path / "s2.sqlite") as store:
        await Sweep(cfg(limit=1, error_streak=0), store).run()
        monkeypatch.undo()
        rerun = await Sweep(judged, store, retry_errors=True).run()
        assert (rerun.episodes, rerun.errors, rerun.judged) == (1, 0, 2)


async def test_judging_only_judges_the_stored_records_of_the_whole_selection(tmp_path,
                                                                            monkeypatch):
    """Stored errors a rerun would retry are judged as stored when no episode runs."""
    failing(monkeypatch)
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(error_streak=0), store).run()
        monkeypatch.undo()
        judged = cfg(judge_models=["scripted/judge"], judge_methods=["sliding"])
        out = await Sweep(judged, store, retry_errors=True).run(episodes=False)
        assert (out.episodes, out.judged, out.selected) == (0, 2, 2)
        assert set(store.episode_status().values()) == {"error"}


async def test_a_sweep_run_elsewhere_counts_what_the_workers_ran(tmp_path):
    seen = []

    class Elsewhere(Sweep):
        runs_elsewhere = True

        async def run_elsewhere(self, queue, pool, concurrency):
            items = []
            while (item := next(queue, None)) is not None:
                items.append(item)
                queue.finished(item)
            seen.append((len(items), pool is self.judge_pool, concurrency))
            return 2, 1

    with RunStore(tmp_path / "s.sqlite") as store:
        out = await Elsewhere(cfg(limit=3, max_concurrency=2), store).run()
        assert seen == [(3, True, 2)]
        assert (out.episodes, out.errors, out.not_started) == (2, 1, 1)
        assert store.episode_status() == {}  # the workers (none here) store them
        assert store.runs()[0]["info"]["not_started"] == 1


async def test_a_sweep_cancelled_by_its_caller_is_cancelled_not_interrupted(tmp_path,
                                                                           monkeypatch):
    started = asyncio.Event()

    async def hangs(task, **kw):
        started.set()
        await asyncio.sleep(3600)

    monkeypatch.setattr(S, "run_episode", hangs)
    with RunStore(tmp_path / "s.sqlite") as store:
        task = asyncio.ensure_future(Sweep(cfg(limit=1), store).run())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await store.flush()
        assert store.runs()[0]["status"] == "interrupted"
        assert list(store.episode_status().values()) == ["running"]


async def test_a_store_failure_in_one_episode_stops_the_sweep(tmp_path, monkeypatch):
    with RunStore(tmp_path / "s.sqlite") as store:
        real = store.episode_finished
        done = []

        def breaks(key, record, **kw):
            if done:
                raise sqlite3.OperationalError("disk I/O error")
            done.append(key)
            real(key, record, **kw)

        monkeypatch.setattr(store, "episode_finished", breaks)
        with pytest.raises(sqlite3.OperationalError):
            await Sweep(cfg(limit=4, max_concurrency=1), store).run()
        monkeypatch.undo()
        await store.flush()
        assert store.runs()[0]["status"] == "interrupted"
        statuses = list(store.episode_status().values())
        assert statuses.count("done") == 1 and set(statuses) == {"done", "running"}


async def test_the_outcome_tells_the_spend_the_changes_and_the_judge_failures(tmp_path,
                                                                             monkeypatch):
    priced = cfg(endpoints=[{"name": "scripted/oracle", "price_input_per_mtok": 1000.0}])
    with RunStore(tmp_path / "s.sqlite") as store:
        out = await Sweep(priced, store, max_cost=100.0).run()
        assert out.spent > 0 and out.spent == pytest.approx(Sweep(priced, store, max_cost=1.0)._budget(
            Sweep(priced, store).work()[1], {}).stored_total, rel=1e-12)
        c = sqlite3.connect(tmp_path / "s.sqlite")
        c.execute("UPDATE episodes SET episode_key = 'old-' || rowid, identity = ?",
                  ('{"legacy": {}}',))
        c.commit()
        c.close()

        class FailingJudges(S.JudgePool):  # a test double: two failures of one judge
            def __init__(self, *a, **kw):
                super().__init__(*a, **kw)
                self.failures = {("scripted/judge", "sliding"): 2}

        monkeypatch.setattr(S, "JudgePool", FailingJudges)
        again = await Sweep(priced, store).run()
        assert again.changed == {"identity not recorded (older store)": 2}
        assert again.judge_failures == {"scripted/judge / sliding": 2}


async def test_the_signal_handler_stops_the_sweep_once_then_at_once(tmp_path):
    """The handler called as Python calls it (with a frame) and as the loop does (without):
    the first call stops everything, a second with a frame raises KeyboardInterrupt."""
    import signal

    sweep = bare(tmp_path)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    limits = S.LimitsPool()
    victim = asyncio.ensure_future(asyncio.sleep(3600))
    try:
        sweep._on_signals(SimpleNamespace(limits=limits))
        handler = signal.getsignal(signal.SIGTERM)
        assert signal.getsignal(signal.SIGINT) is handler
        try:
            handler(signal.SIGTERM, sys._getframe())
        except KeyboardInterrupt:
            pytest.fail("the first signal must stop the sweep, not the process")
        with pytest.raises(asyncio.CancelledError):  # every task, this one too
            await asyncio.sleep(0)
        asyncio.current_task().uncancel()
        await asyncio.sleep(0)
        assert (sweep.interrupted, limits.closed, victim.cancelled()) == (
            signal.SIGTERM, True, True)
        try:
            handler(signal.SIGINT)  # the loop's call of the same signal: nothing more
        except KeyboardInterrupt:
            pytest.fail("the loop's call of a signal already taken must not stop at once")
        assert sweep.interrupted == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGINT, sys._getframe())
    finally:
        sweep._off_signals()
        sweep.store.close()
    assert {s: signal.getsignal(s) for s in before} == before


async def test_the_first_signal_stops_everything_once_and_a_second_stops_at_once(tmp_path):
    """Both handlers (the Python-level one and the loop's) run on a real signal, without an
    error in the loop; the handlers that were there before are restored."""
    import os
    import signal

    sweep = bare(tmp_path)
    loop = asyncio.get_running_loop()
    errors = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))

    def theirs(signum, frame):
        raise AssertionError("replaced while the sweep runs")

    before = {s: signal.signal(s, theirs) for s in (signal.SIGINT, signal.SIGTERM)}
    limits = S.LimitsPool()
    victim = asyncio.ensure_future(asyncio.sleep(3600))
    try:
        sweep._on_signals(SimpleNamespace(limits=limits))
        os.kill(os.getpid(), signal.SIGTERM)
        with pytest.raises(asyncio.CancelledError):  # every task, this one too
            await asyncio.sleep(1)
        asyncio.current_task().uncancel()
        await asyncio.sleep(0.05)  # the loop's own handler, from the wake-up fd
        assert (sweep.interrupted, limits.closed, victim.cancelled(), errors) == (
            signal.SIGTERM, True, True, [])
        handler = signal.getsignal(signal.SIGINT)
        handler(signal.SIGINT)  # the loop's call: no frame, stopping already
        assert sweep.interrupted == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGINT, sys._getframe())
        sweep._off_signals()
        assert {s: signal.getsignal(s) for s in before} == {s: theirs for s in before}
    finally:
        for s, old in before.items():
            signal.signal(s, old)
        loop.set_exception_handler(None)


async def test_an_adaptive_round_runs_the_items_it_is_given(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        every, _ = Sweep(cfg(limit=3), store).work()
        sweep = Sweep(cfg(limit=3), store, items=lambda: every[1:2])
        todo, stored = sweep.work()
        assert (todo, stored) == ([every[1]], [])
        out = await sweep.run()
        assert (out.episodes, out.selected) == (1, 1)
        assert store.episode_status() == {every[1].key: "done"}


async def test_the_stored_spend_and_status_read_are_the_selections(tmp_path):
    priced = {"endpoints": [{"name": "scripted/oracle", "price_input_per_mtok": 1000.0}]}
    with RunStore(tmp_path / "s.sqlite") as store:
        await Sweep(cfg(limit=1, **priced), store).run()
        one = Sweep(cfg(limit=1, **priced), store, max_cost=50.0)
        _, stored_one = one.work()
        alone = one._budget(stored_one, {}).stored_total
        await Sweep(cfg(limit=3, **priced), store).run()
        again = Sweep(cfg(limit=1, **priced), store, max_cost=50.0)
        todo, stored = again.work()
        assert (todo, [i.key for i in stored]) == ([], [i.key for i in stored_one])
        assert again._budget(stored, {}).stored_total == alone > 0
        # a shard's work: the sweep's shard, not every episode
        half = Sweep(cfg(limit=3, **priced), store, shard=S.Shard(1, 2))
        assert [i.key for i in half.work()[1]] == [i.key for i in S.build_work(
            half.cfg, None, S.Shard(1, 2))] != [i.key for i in S.build_work(half.cfg, None,
                                                                          S.Shard(0, 1))]


async def test_the_sweeps_data_dir_reaches_its_work_queue_judges_and_episodes(tmp_path,
                                                                             monkeypatch):
    """Everything that reads tasks reads them from the data dir; the doubles record it and
    read the built-in samples (the folder here is empty)."""
    import msgspec

    from sweepbench.benchmarks import registry

    data = tmp_path / "data"
    data.mkdir()
    seen = []

    def build_work(cfg_, data_dir, shard):
        seen.append(("work", data_dir, shard))
        return S_build_work(msgspec.structs.replace(cfg_, data_dir=None), None, shard)

    def plan_queue(items, cfg_, store, data_dir, *, slots):
        seen.append(("queue", data_dir, slots))
        return S_plan_queue(items, msgspec.structs.replace(cfg_, data_dir=None), store, None,
                            slots=slots)

    class Judges(S.JudgePool):
        def __init__(self, *a, data_dir, **kw):
            seen.append(("judges", data_dir, None))
            super().__init__(*a, data_dir=None, **kw)

    class Benchmark:  # a test double around the real one, recording what it is asked
        def __init__(self, real):
            self.real = real

        def __getattr__(self, name):
            return getattr(self.real, name)

        def episode_protocol(self, task, *, data_dir, user_mode):
            seen.append(("protocol", data_dir, task.id))
            protocol = self.real.episode_protocol(task, data_dir=None, user_mode=user_mode)
            limits = protocol.limits

            def recorded(task_, **kw):
                seen.append(("limits", None, task_.id))
                return limits(task_, **kw)
            protocol.limits = recorded
            return protocol

        def tool_descriptions(self, task, data_dir):
            seen.append(("tools", data_dir, task.id))
            return self.real.tool_descriptions(task, None)

    S_build_work, S_plan_queue = S.build_work, S.plan_queue
    monkeypatch.setattr(S, "build_work", build_work)
    monkeypatch.setattr(S, "plan_queue", plan_queue)
    monkeypatch.setattr(S, "JudgePool", Judges)
    monkeypatch.setattr(S, "registry", SimpleNamespace(get=lambda name: Benchmark(
        registry.get(name))))
    with RunStore(tmp_path / "s.sqlite") as store:
        sweep = Sweep(cfg(limit=1, data_dir=str(data)), store, shard=S.Shard(0, 1))
        assert sweep.data_dir == data.resolve()
        out = await sweep.run()
        assert out.episodes == 1  # (an error: the scripted user reads the empty folder)
    [task] = {s[2] for s in seen if s[0] in ("protocol", "tools", "limits")}
    assert seen == [("work", data.resolve(), S.Shard(0, 1)), ("judges", data.resolve(), None),
                    ("queue", data.resolve(), 1), ("protocol", data.resolve(), task),
                    ("limits", None, task), ("tools", data.resolve(), task)]


async def test_run_sweep_into_a_folder_that_exists(tmp_path):
    await run_sweep(cfg(limit=1), tmp_path / "s.sqlite")
    out = await run_sweep(cfg(limit=2), tmp_path / "s.sqlite")
    assert (out.episodes, out.skipped) == (1, 1)


def test_a_sweeps_defaults(tmp_path):
    sweep = bare(tmp_path)
    assert (sweep.command, sweep.check_endpoints, sweep.warn("ignored")) == ("run", True, None)
    assert sweep.progress("finished", item=None) is None
    sweep.store.close()
