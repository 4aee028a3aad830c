"""A plan's history of the store (runner/plan_history.py) in exact numbers, from the facts and
from the journals alike: each task's calls, tokens and time outside model calls, each judge's,
endpoints' mean latencies and scripted endpoints' seconds beyond their configured latency, how
fast the busiest runs went, and the latency a run was configured with."""

from __future__ import annotations

import math
import sqlite3
import types

import pytest

from sweepbench.devserver.faults import LatencySpec
from sweepbench.runner.plan_history import Cell, History, configured_latency, spec_mean
from sweepbench.store import runstore
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.reads import StoreReads
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import EpisodeRecord

M, N = "scripted/m", "other/n"
JUDGE = "judge|scripted/j|rubric"


class Clock:
    """What the store reads as the time: set by hand before each write."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        return self.now


def call(role, prompt, completion, cached=0, latency=None):
    usage = {"prompt_tokens": prompt, "completion_tokens": completion,
             "cached_prompt_tokens": cached}
    return {"role": role, "usage": usage, **({} if latency is None else {"latency_s": latency})}


def episode(store, clock, run, model, task, trial, calls, *, wall=None, benchmark="vitabench"):
    """An episode of ``run``; finished with ``wall`` seconds (None: left running); ``calls``:
    (payload, journal, endpoint, ts[, the call's own run id])."""
    label = f"{model}|{benchmark}:delivery:en:{task}|{trial}"
    meta = EpisodeMeta(key=f"ep-{run}-{label}", label=label, model=model, benchmark=benchmark,
                       domain="delivery", task_id=task, lang="en", trial=trial)
    store.episode_started(meta, run_id=run)
    for seq, (payload, journal, endpoint, ts, *own) in enumerate(calls):
        clock.now = ts
        store.event(meta.key, seq, "model_call", payload, journal=journal,
                    run_id=own[0] if own else run, endpoint=endpoint)
    if wall is not None:
        store.episode_finished(meta.key, EpisodeRecord(
            run_id=run, model=model, benchmark=benchmark, domain="delivery", task_id=task,
            trial=trial, termination="user_stop", wall_s=wall))
    return meta.key


def filler(n, lo, hi):
    """``n`` calls from ``lo`` to ``hi`` (seconds), with no latency (they count in spans)."""
    step = (hi - lo) / (n - 1)
    return [(call("agent", 0, 0), "", None, hi if i == n - 1 else lo + i * step)
            for i in range(n)]


def begin(store, clock, run, config, at):
    clock.now = at
    store.begin_run(run, config)


@pytest.fixture
def history_store(tmp_path, monkeypatch):
    """Runs r1 (configured 0.25 s a call), r2 (0.5 s) and r3 (a spec that does not parse),
    their finished episodes of tasks T1, T2 (model M) and T3 (model N), running episodes that
    count only in the runs' spans, and r4, r5 and a run never begun, only spans; a run named
    XXXX (configured 1 s) with no calls, a call of no run, a call to an endpoint named ""."""
    clock = Clock()
    monkeypatch.setattr(runstore, "time", types.SimpleNamespace(time=clock.time))
    path = tmp_path / "h.sqlite"
    with RunStore(path) as s:
        begin(s, clock, "r1", {"reference_latency": "uniform:0.125,0.375"}, 1000.0)
        begin(s, clock, "r2", {"reference_latency_s": 0.5}, 2999.5)
        begin(s, clock, "r3", {"reference_latency": "bogus:1"}, 500.0)
        begin(s, clock, "r4", {}, 1984.0)
        begin(s, clock, "r5", {}, 5000.0)
        begin(s, clock, "XXXX", {"reference_latency_s": 1.0}, 1.0)
        # T1 trial 0 (r1): 10 s, 2.25 s of it in its own calls: 7.75 outside
        episode(s, clock, "r1", M, "T1", 0, [
            (call("agent", 0, 0, 0, 0.25), "", "", 1009.0),  # an endpoint named ""
            (call("agent", 100, 10, 20, 1.0), "", M, 1010.0),
            (call("user", 50, 5, 0, 0.5), "", "scripted/u", 1011.0),
            (call("user", 0, 0, 0, 0.5), "", "scripted/u", 1011.5, None),  # of no run
            (call(None, 4, 1), "", None, 1012.0),  # no role: the user simulator's side
            (call("judge", 7, 3, 1, 0.125), JUDGE, "scripted/j", 1013.0),
            (call("judge", 9, 2, 0, 0.375), JUDGE, "scripted/j", 1014.0),
        ], wall=10.0)
        # T1 trial 1 (r2): 1 s, less than its calls took: none outside
        episode(s, clock, "r2", M, "T1", 1, [
            (call("agent", 200, 20, 0, 1.5), "", M, 3000.0),
            (call("agent", 30, 3, 5), "", M, 3001.0),  # no latency recorded
        ], wall=1.0)
        # T2 (r3, whose configured latency is unknown): no overhead for its scripted calls
        episode(s, clock, "r3", M, "T2", 0, [
            (call("agent", 1, 1, 0, 2.0), "", M, 600.0),
            (call("judge", 5, 5, 0, 1.0), JUDGE, "scripted/j", 601.0),
        ], wall=3.0)
        episode(s, clock, "r1", N, "T3", 0, [(call("agent", 8, 8, 0, 0.25), "", N, 1015.0)],
                wall=0.5)
        # running: counted in spans only (r1 then holds exactly 50 calls, 1009 to 1060)
        episode(s, clock, "r1", M, "T2", 1, filler(43, 1016.0, 1060.0))
        episode(s, clock, "r2", M, "T9", 0, filler(47, 3002.0, 3004.0))  # 49 calls: too few
        episode(s, clock, "r4", M, "T9", 1, filler(64, 2004.0, 2036.0))  # 0.5 s a call
        episode(s, clock, "r5", M, "T9", 2, filler(50, 5001.0, 5011.0))  # 0.2 s a call
        episode(s, clock, "ghost", M, "T9", 3, filler(50, 7000.0, 7100.0))
    return path


def read(path, monkeypatch, facts, **kw) -> History:
    with monkeypatch.context() as m:
        if not facts:
            m.setattr(StoreReads, "has_facts", property(lambda self: False))
        with ReadOnlyStore(path) as store:
            assert store.has_facts is facts
            return History(store, **kw)


T1, T2, T3 = ("vitabench:delivery:en:" + t for t in ("T1", "T2", "T3"))


@pytest.mark.parametrize("facts", [True, False], ids=["facts", "journals"])
def test_each_task_sums_its_finished_episodes_calls_tokens_and_time_outside_calls(
        history_store, monkeypatch, facts):
    h = read(history_store, monkeypatch, facts)
    assert set(h.by_task) == {(M, T1), (M, T2), (N, T3)}
    t1 = h.by_task[M, T1]
    # agent [calls, prompt, cached, completion]; user: the user's calls and the one without role
    assert (t1.n, t1.roles, t1.overhead_s) == (
        2, {"agent": [4, 330, 25, 33], "user": [3, 54, 0, 6]}, 7.75)
    # the judge: [episodes judged, calls, prompt, cached, completion]
    assert t1.judges == {("scripted/j", "rubric"): [1, 2, 16, 1, 5]}
    t2 = h.by_task[M, T2]
    assert (t2.n, t2.roles, t2.judges, t2.overhead_s) == (
        1, {"agent": [1, 1, 0, 1], "user": [0, 0, 0, 0]},
        {("scripted/j", "rubric"): [1, 1, 5, 0, 5]}, 1.0)
    t3 = h.by_task[N, T3]
    assert (t3.n, t3.roles, t3.judges, t3.overhead_s) == (
        1, {"agent": [1, 8, 0, 8], "user": [0, 0, 0, 0]}, {}, 0.25)


@pytest.mark.parametrize("facts", [True, False], ids=["facts", "journals"])
def test_each_benchmark_sums_its_tasks_and_counts_their_episodes(history_store, monkeypatch,
                                                                 facts):
    h = read(history_store, monkeypatch, facts)
    assert set(h.by_bench) == {(M, "vitabench"), (N, "vitabench")}
    cell, tasks = h.by_bench[M, "vitabench"]
    assert tasks == {T1: 2, T2: 1}
    assert (cell.n, cell.roles, cell.judges, cell.overhead_s) == (
        3, {"agent": [5, 331, 25, 34], "user": [3, 54, 0, 6]},
        {("scripted/j", "rubric"): [2, 3, 21, 1, 10]}, 8.75)
    cell, tasks = h.by_bench[N, "vitabench"]
    assert tasks == {T3: 1} and (cell.n, cell.roles["agent"]) == (1, [1, 8, 0, 8])


@pytest.mark.parametrize("facts", [True, False], ids=["facts", "journals"])
def test_latencies_by_endpoint_and_scripted_seconds_beyond_the_configured(
        history_store, monkeypatch, facts):
    h = read(history_store, monkeypatch, facts)
    # finished episodes' calls with a latency; M: 1.0 (r1), 1.5 (r2), 2.0 (r3)
    assert h.latency == {M: 1.5, "scripted/u": 0.5, "scripted/j": 0.5, N: 0.25}
    # beyond r1's 0.25 and r2's 0.5 (r3's unknown): M 0.75 and 1.0; the judge 0 (below) and
    # 0.125; the user's 0.25 (its call of no run: none); N is not scripted
    assert h.overhead == {M: 0.875, "scripted/u": 0.25, "scripted/j": 0.0625}


@pytest.mark.parametrize("facts", [True, False], ids=["facts", "journals"])
def test_the_busiest_runs_give_the_harness_time_and_the_startup(history_store, monkeypatch,
                                                                facts):
    """Runs of 50 calls or more: r1 1.02 s a call, started 9 s after it began; r4 0.5 s, 20 s;
    r5 0.2 s, 1 s; the run never begun 2 s a call (no start). r2 has 49 (0.08 s a call, 0.5 s
    after it began): left out."""
    h = read(history_store, monkeypatch, facts)
    assert h.harness_s == 0.2
    assert h.startup_s == 9.0  # the median of 9, 20 and 1


def test_calls_only_counts_each_finished_episodes_own_calls_as_the_agents(history_store,
                                                                         monkeypatch):
    for facts in (True, False):
        h = read(history_store, monkeypatch, facts, calls_only=True)
        assert {k: (c.n, c.roles, c.judges, c.overhead_s) for k, c in h.by_task.items()} == {
            (M, T1): (2, {"agent": [7, 0, 0, 0], "user": [0, 0, 0, 0]}, {}, 0.0),
            (M, T2): (1, {"agent": [1, 0, 0, 0], "user": [0, 0, 0, 0]}, {}, 0.0),
            (N, T3): (1, {"agent": [1, 0, 0, 0], "user": [0, 0, 0, 0]}, {}, 0.0)}
        assert (h.latency, h.overhead, h.harness_s, h.startup_s) == ({}, {}, None, None)
        assert h.by_bench[M, "vitabench"][1] == {T1: 2, T2: 1}


def test_few_calls_give_no_harness_time_or_startup(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {})
        episode(s, Clock(), "r", M, "T1", 0, [(call("agent", 1, 1, 0, 0.5), "", M, 1.0)],
                wall=2.0)
    with ReadOnlyStore(tmp_path / "s.sqlite") as store:
        h = History(store)
    assert (h.harness_s, h.startup_s) == (None, None)
    assert h.by_task[M, T1].overhead_s == 1.5 and h.overhead == {M: 0.5}


def test_no_store_no_history():
    h = History(None)
    assert (h.by_task, h.by_bench, h.latency, h.overhead, h.harness_s, h.startup_s) == (
        {}, {}, {}, {}, None, None)


def test_a_store_without_finished_episodes_has_an_empty_history(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {})
        episode(s, Clock(), "r", M, "T1", 0, [(call("agent", 1, 1, 0, 0.5), "", M, 1.0)])
    for facts in (True, False):
        with ReadOnlyStore(tmp_path / "s.sqlite") as store:
            if not facts:
                store._has_facts = False
            h = History(store)
        assert (h.by_task, h.latency, h.overhead) == ({}, {}, {})


def test_an_episode_without_facts_reads_its_record_or_counts_without_time(history_store):
    """A finished episode whose facts row is missing is read from its record; one whose
    record does not decode either still counts, with no time outside calls."""
    db = sqlite3.connect(history_store)
    with db:
        keys = dict(db.execute("SELECT task_id || model, episode_key FROM episodes"))
        db.execute("DELETE FROM episode_facts WHERE episode_key IN (?, ?)",
                   (keys["T1" + M], keys["T3" + N]))
        db.execute("UPDATE episodes SET record = x'00ff' WHERE episode_key = ?",
                   (keys["T3" + N],))
    db.close()
    with ReadOnlyStore(history_store) as store:
        h = History(store)
    assert (h.by_task[M, T1].n, h.by_task[M, T1].overhead_s) == (2, 7.75)
    assert (h.by_task[N, T3].n, h.by_task[N, T3].overhead_s) == (1, 0.0)


def test_an_episode_without_facts_or_own_calls_has_all_its_time_outside_calls(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", {})
        key = episode(s, Clock(), "r", M, "T1", 0, [
            (call("judge", 1, 1, 0, 0.5), JUDGE, "scripted/j", 1.0)], wall=2.0)
    db = sqlite3.connect(tmp_path / "s.sqlite")
    with db:
        db.execute("DELETE FROM episode_facts WHERE episode_key = ?", (key,))
    db.close()
    with ReadOnlyStore(tmp_path / "s.sqlite") as store:
        h = History(store)
    assert h.by_task[M, T1].overhead_s == 2.0


def test_cells_add_their_sums_and_judges():
    a = Cell(n=1, overhead_s=0.5, judges={("j", "m"): [1, 2, 3, 4, 5]})
    a.roles["agent"] = [1, 2, 3, 4]
    b = Cell(n=2, overhead_s=1.25, judges={("j", "m"): [1, 1, 1, 1, 1], ("k", "m"): [2, 0, 0, 0, 1]})
    b.roles["user"] = [4, 3, 2, 1]
    a.add(b)
    assert (a.n, a.overhead_s) == (3, 1.75)
    assert a.roles == {"agent": [1, 2, 3, 4], "user": [4, 3, 2, 1]}
    assert a.judges == {("j", "m"): [2, 3, 4, 5, 6], ("k", "m"): [2, 0, 0, 0, 1]}
    assert Cell().roles == {"agent": [0, 0, 0, 0], "user": [0, 0, 0, 0]}
    assert Cell().roles is not Cell().roles


@pytest.mark.parametrize(("config", "mean"), [
    ("not a dict", None),
    ({}, 0.0),
    ({"reference_latency_s": None}, 0.0),
    ({"reference_latency_s": 0.75}, 0.75),
    ({"reference_latency_s": "0.5"}, 0.5),
    ({"reference_latency_s": "soon"}, None),  # ValueError
    ({"reference_latency_s": [1]}, None),  # TypeError
    ({"reference_latency": "", "reference_latency_s": 0.25}, 0.25),  # no spec: the seconds
    ({"reference_latency": "0.3", "reference_latency_s": 9.0}, 0.3),  # the spec first
    ({"reference_latency": "uniform:0.25,0.75"}, 0.5),
    ({"reference_latency": "bogus:1"}, None),
    ({"reference_latency": 5}, None),  # a spec that is not text (a store written by hand)
    ({"reference_latency": ["fixed", 1]}, None),
])
def test_the_latency_a_run_was_configured_with(config, mean):
    assert configured_latency(config) == mean


@pytest.mark.parametrize(("spec", "mean"), [
    (LatencySpec("fixed", 0.3), 0.3),
    (LatencySpec("uniform", 0.25, 1.0), 0.625),
    (LatencySpec("lognormal", 0.5, 1.0), 0.5 * math.exp(0.5)),
    (LatencySpec("lognormal", 0.5, 1.0, cap=0.75), 0.75),
    (LatencySpec("lognormal", 0.5, 1.0, cap=2.0), 0.5 * math.exp(0.5)),
    (LatencySpec("lognormal", 0.5, 2.0), 0.5 * math.exp(2.0)),
])
def test_a_latency_specs_mean(spec, mean):
    assert spec_mean(spec) == mean


def store_of(tmp_path, run_config, calls):
    clock = Clock()
    with RunStore(tmp_path / "s.sqlite") as s:
        s.begin_run("r", run_config)
        episode(s, clock, "r", M, "T1", 0, calls, wall=5.0)
    return tmp_path / "s.sqlite"


@pytest.mark.parametrize("facts", [True, False], ids=["facts", "journals"])
def test_without_agent_calls_the_user_side_holds_every_own_call(tmp_path, monkeypatch, facts):
    """No call says role "agent": the role-less and the user's calls are the user's (the
    facts' texts then hold no "agent", and "user" is the first text)."""
    path = store_of(tmp_path, {}, [(call("user", 3, 1), "", None, 1.0, None),
                                   (call(None, 2, 1), "", None, 2.0, None)])
    h = read(path, monkeypatch, facts)
    assert h.by_task[M, T1].roles == {"agent": [0, 0, 0, 0], "user": [2, 5, 0, 2]}


@pytest.mark.parametrize("facts", [True, False], ids=["facts", "journals"])
def test_runs_without_a_configured_latency_give_no_overhead(tmp_path, monkeypatch, facts):
    path = store_of(tmp_path, {"reference_latency": "bogus:1"},
                    [(call("agent", 1, 1, 0, 0.5), "", M, 1.0)])
    h = read(path, monkeypatch, facts)
    assert (h.latency, h.overhead) == ({M: 0.5}, {})


@pytest.mark.parametrize("facts", [True, False], ids=["facts", "journals"])
def test_a_judge_whose_name_holds_a_bar_keeps_its_name(tmp_path, monkeypatch, facts):
    path = store_of(tmp_path, {}, [
        (call("judge", 4, 2, 0, 0.5), "judge|team|judge-1|likert", "team|judge-1", 1.0)])
    h = read(path, monkeypatch, facts)
    assert h.by_task[M, T1].judges == {("team|judge-1", "likert"): [1, 1, 4, 0, 2]}
