"""Adaptive sweeps run for real (scripted models, the reference server): rounds under one run,
what the run's info and report say, and an interrupted adaptive sweep resumed paying for no
call twice and reaching the same decision."""

from __future__ import annotations

import asyncio
import io
from collections import Counter
from types import SimpleNamespace

import pytest
from rich.console import Console

from sweepbench.config import load_config
from sweepbench.results.report import build_report
from sweepbench.results.stats import Outcome, summarize
from sweepbench.runner import adaptive
from sweepbench.runner.progress import ProgressDisplay

from sweepbench.runner import rounds as rd
from sweepbench.runner.rounds import AdaptiveSpec, AdaptiveSweep
from sweepbench.runner.sweep import Sweep, SweepOutcome
from sweepbench.store.runstore import RunStore

from ..support import without_backups

MODELS = ["scripted/noisy:0.15", "scripted/noisy:0.45"]
CFG = dict(models=MODELS, trials=2, max_concurrency=8, limit=10, benchmarks=["t1:single"],
           reference_latency_s=0.005,  # requests counted one per call: no backups
           endpoints=without_backups(*MODELS, "scripted/user"))
SPEC = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.2, max_trials=8, batch=3)


class Rounds:
    """An AdaptiveSweep whose rounds' sweeps are kept (their reference servers count
    requests); ``stop``: cancel the whole adaptive sweep once round ``stop[0]`` (0-based)
    has finished ``stop[1]`` episodes (at that moment, from the sweep's own callback: a
    sleep before cancelling let a loaded machine finish every episode in flight, leaving
    none cut); ``progress``: the live display's ``update``, told by
    every round's sweep and by the adaptive sweep, as ``sweepbench run`` wires it."""

    def __init__(self, cfg, store, spec=SPEC, stop=None, progress=None):
        self.sweeps: list[Sweep] = []
        self.stop, self.task = stop, None

        def make(**kw):
            sweep = Sweep(cfg, store, progress=progress, **kw)
            if stop is not None and len(self.sweeps) == stop[0]:
                finished = 0

                def count(kind, **info):
                    nonlocal finished
                    finished += kind == "finished"
                    if kind == "finished" and finished == stop[1]:
                        self.task.cancel()
                sweep.progress = count
            self.sweeps.append(sweep)
            return sweep

        self.adaptive = AdaptiveSweep(cfg, store, spec, make, progress=progress)

    @property
    def requests(self) -> int:
        return sum(sum(s.reference.requests.values()) for s in self.sweeps if s.reference)

    async def run(self):
        if self.stop is None:
            return await self.adaptive.run()
        self.task = asyncio.create_task(self.adaptive.run())
        with pytest.raises(asyncio.CancelledError):
            await self.task
        return None


def calls_in(store: RunStore, run_id: str) -> int:
    return sum(r.agent_calls + r.user_calls for r in store.episodes(run_id))


def trials_per_cell(store: RunStore, run_id: str) -> Counter:
    return Counter((r.model, r.task_id) for r in store.episodes(run_id))


async def test_adaptive_sweep_adds_trials_by_round_and_the_report_says_so(tmp_path):
    cfg = load_config(None, CFG)
    with RunStore(tmp_path / "a.sqlite") as store:
        rounds = Rounds(cfg, store)
        outcome, summary = await rounds.run()
        run_id = rounds.adaptive.run_id
        assert len(rounds.sweeps) > 2 and {s.run_id for s in rounds.sweeps} == {run_id}
        n = trials_per_cell(store, run_id)
        assert outcome.selected == sum(n.values()) == outcome.episodes
        assert min(n.values()) >= 2 and max(n.values()) <= 8
        assert len(set(n.values())) > 1  # trials went where they narrow most, not evenly
        t1 = summary["benchmarks"]["t1"]
        assert t1["trials"] == sum(n.values()) and t1["cells"] == 20
        assert summary["why"] in ("target", "max_trials")
        info = store.run(run_id)["info"]["adaptive"]
        assert info["why"] == summary["why"] and info["rule"] == adaptive.CI
        report = build_report(store, run_id)
    a = report["adaptive"]
    assert a["runs"][0]["run_id"] == run_id and a["runs"][0]["why"] == summary["why"]
    cells = a["benchmarks"]["t1"]["trials_per_cell"]
    assert {m: c["total"] for m, c in cells.items()} == {
        m: sum(v for (mm, _), v in n.items() if mm == m) for m in MODELS}
    assert "at least 2 scored trials" in a["benchmarks"]["t1"]["pass_k"]
    # the interval over these tasks is the adaptive one, wider than the plain one
    with RunStore(tmp_path / "a.sqlite") as store:
        rows = store.episode_rows(run_id)
        state = {j["episode_key"]: j["passed"] for j in store.judgments([r["episode_key"]
                                                                        for r in rows])
                 if j["method"] == "state"}
    outs = [Outcome(r["model"], r["domain"], r["task_id"], r["trial"],
                    bool(state[r["episode_key"]]), benchmark="t1") for r in rows]
    shown = report["benchmarks"]["t1"]["models"][MODELS[1]]["intervals"]["avg"]["fixed_set"]
    want = summarize(outs, adaptive=True)[MODELS[1]].intervals["avg"]["fixed_set"]
    plain = summarize(outs)[MODELS[1]].intervals["avg"]["fixed_set"]
    assert shown == pytest.approx(want) and shown != pytest.approx(plain)


async def test_interrupted_adaptive_sweep_resumes_to_the_same_decision_paying_nothing_twice(
        tmp_path):
    cfg = load_config(None, CFG)
    with RunStore(tmp_path / "a.sqlite") as a:
        whole = Rounds(cfg, a)
        _, summary_a = await whole.run()
        total = calls_in(a, whole.adaptive.run_id)
        cells_a = trials_per_cell(a, whole.adaptive.run_id)
        assert whole.requests == total

    path = tmp_path / "b.sqlite"
    with RunStore(path) as b:
        cut = Rounds(cfg, b, stop=(1, 3))  # in the second round, 3 episodes in
        await cut.run()
        await b.flush()
        status = b.episode_status()
        assert "running" in status.values()  # some episodes were cut mid-conversation
        recorded = sum(len(b.events(key, kind="model_call")) for key in status)
        partway = {k: len(b.events(k, kind="model_call")) for k, st in status.items()
                   if st == "running"}
        first = cut.requests
        assert any(partway.values())  # ... with calls on record, to be answered from them
    with RunStore(path) as b:
        again = Rounds(cfg, b)
        outcome, summary_b = await again.run()
        # each episode cut partway continued from its journal, its calls answered from it
        assert outcome.resumed == sum(n > 0 for n in partway.values())
        assert outcome.replayed_calls == sum(partway.values())
        # only calls never recorded were requested again; in all, each call paid once
        # but those in flight at the interruption
        assert again.requests == total - recorded
        assert first - recorded <= cfg.max_concurrency
        assert trials_per_cell(b, again.adaptive.run_id) == cells_a
    for key in ("why", "benchmarks"):
        assert summary_b[key] == summary_a[key]


async def test_max_cost_caps_the_adaptive_sweep_over_all_its_rounds(tmp_path):
    priced = [{**e, "price_input_per_mtok": 300.0, "price_output_per_mtok": 1200.0}
              for e in CFG["endpoints"]]
    base = {**CFG, "endpoints": priced}
    spec = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.05, max_trials=6, batch=6)
    with RunStore(tmp_path / "full.sqlite") as full:
        whole = Rounds(load_config(None, base), full, spec)
        _, summary = await whole.run()
        total = build_report(full, whole.adaptive.run_id)["cost"]["total"]
        trials = summary["benchmarks"]["t1"]["trials"]
    per_episode = total / trials
    assert summary["rounds"] >= 3 and trials > 60
    cap = (40 + (trials - 40) / 2) * per_episode  # the first trials and half the rest
    with RunStore(tmp_path / "capped.sqlite") as store:
        capped = Rounds(load_config(None, {**base, "max_cost_usd": cap}), store, spec)
        outcome, summary = await capped.run()
        spent = build_report(store, capped.adaptive.run_id)["cost"]["total"]
        assert summary["why"] == "budget" and outcome.budget_stop
        assert store.run(capped.adaptive.run_id)["status"] == "budget"
    window = CFG["max_concurrency"] * 3 * per_episode  # what may be in flight at the stop
    assert spent <= cap + window and spent < total


async def test_live_progress_counts_on_across_rounds_and_says_the_round(tmp_path):
    """The display is told every round's plan: its totals only grow, done never passes
    them, and the line says the round and that more may follow until the sweep stops."""
    console = Console(file=io.StringIO(), force_terminal=False, width=400)
    display = ProgressDisplay(console, log_every_s=1e9)
    seen = []

    def update(kind, **info):
        display.update(kind, **info)
        if kind in ("planned", "finished", "round"):
            seen.append((kind, display.round, display.more, display.done, display.total,
                         display._summary().plain))

    cfg = load_config(None, CFG)
    with RunStore(tmp_path / "a.sqlite") as store:
        rounds = Rounds(cfg, store, progress=update)
        outcome, summary = await rounds.run()
    plans = [s for s in seen if s[0] == "planned"]
    assert len(plans) == len(rounds.sweeps) > 2
    assert [s[1] for s in plans] == sorted({s[1] for s in plans}) and plans[0][1] == 0
    totals = [s[4] for s in seen]
    assert totals == sorted(totals) and all(s[3] <= s[4] for s in seen)
    assert len({s[4] for s in plans}) == len(plans)  # each round added to the total
    assert all("planned so far, more rounds may follow" in s[5] for s in seen[:-1])
    kind, last_round, more, done, total, text = seen[-1]
    assert (kind, more, last_round) == ("round", False, summary["rounds"])
    assert done == total == outcome.episodes == sum(trials_per_cell_totals(summary))
    assert text.startswith(f"adaptive sweep stopped after round {summary['rounds']}: "
                           f"{summary['benchmarks']['t1']['stopped']} · episodes "
                           f"{done}/{done} done")


def trials_per_cell_totals(summary):
    return [b["trials"] for b in summary["benchmarks"].values()]

# ---- unit tests (test doubles of the store and of the sweep): the spec, the outcomes on
# ---- record, the rounds' loop and its summary ----------------------------------------------

def test_unit_spec_refuses_what_cannot_run_and_says_its_rule():
    for kw, said in (({"rule": adaptive.CI, "start": 2}, "--target-ci needs a half-width > 0"),
                     ({"rule": adaptive.CI, "start": 2, "target": 0.0},
                      "--target-ci needs a half-width > 0"),
                     ({"rule": "other", "start": 2}, "unknown stopping rule 'other'"),
                     ({"rule": adaptive.RANKED, "start": 1},
                      ("an adaptive sweep starts every cell with --trials >= 2 (a task's "
                       "variance needs two trials), got 1")),
                     ({"rule": adaptive.RANKED, "start": 4, "max_trials": 3},
                      "--max-trials 3 is below --trials 4")):
        with pytest.raises(ValueError) as info:
            AdaptiveSpec(**kw)
        assert str(info.value) == said
    assert AdaptiveSpec(rule=adaptive.RANKED, start=2, max_trials=2).max_trials == 2
    assert AdaptiveSpec(rule=adaptive.RANKED, start=2).max_trials == rd.DEFAULT_MAX_TRIALS == 32
    ci = AdaptiveSpec(rule=adaptive.CI, start=3, target=0.05, max_trials=9, batch=5)
    assert ci.describe() == ("target half-width 0.05: every model's 95% interval of Avg@k over "
                             "these tasks at most that wide on each side; 3 trials of every "
                             "cell first, at most 9")
    ranked = AdaptiveSpec(rule=adaptive.RANKED, start=2, margin=0.03)
    assert ranked.describe() == (
        "until ranked: every pair of neighbours on each leaderboard separated (paired test, the "
        "report's correction) or shown within 0.03 of each other; 2 trials of every cell "
        "first, at most 32")
    assert AdaptiveSpec(rule=adaptive.RANKED, start=2).describe().startswith(
        "until ranked: every pair of neighbours on each leaderboard separated (paired test, "
        "the report's correction); 2 trials")
    info = ci.info()
    assert info == {"rule": adaptive.CI, "target": 0.05, "margin": None, "start": 3,
                    "max_trials": 9, "batch": 5, "stopping_rule": ci.describe()}
    assert AdaptiveSpec.from_info({**info, "start": "3", "max_trials": "9"}) == ci
    assert AdaptiveSpec.from_info({"rule": adaptive.RANKED, "start": 2, "max_trials": 4}) == (
        AdaptiveSpec(rule=adaptive.RANKED, start=2, max_trials=4))
    assert AdaptiveSpec.from_info(ranked.info()) == ranked and ranked.margin == 0.03


def test_unit_default_batch_fills_the_slots_for_every_model():
    cfg = SimpleNamespace
    assert rd.default_batch(cfg(max_concurrency=10, models=["a", "b", "c"])) == 4
    assert rd.default_batch(cfg(max_concurrency=9, models=["a", "b", "c"])) == 3
    assert rd.default_batch(cfg(max_concurrency=2, models=["a", "b", "c"])) == 1
    assert rd.default_batch(cfg(max_concurrency=0, models=["a"])) == 1
    assert rd.default_batch(cfg(max_concurrency=5, models=[])) == 5


class _Store:
    """A test double of the store: episode statuses and judgments as given."""

    def __init__(self, status, judgments):
        self.status, self._judgments, self.asked = status, judgments, None
        self.finished, self.flushed = None, False

    def episode_status(self, keys):
        return {k: v for k, v in self.status.items() if k in keys}

    def judgments(self, keys):
        self.asked = sorted(keys)
        return [j for j in self._judgments if j["episode_key"] in keys]

    def finish_run(self, run_id, status, info):
        self.finished = (run_id, status, info)

    async def flush(self):
        self.flushed = True


def _item(key, bench="b1"):
    return SimpleNamespace(key=key, task=SimpleNamespace(benchmark=bench))


def _j(key, judge, method, passed):
    return {"episode_key": key, "judge": judge, "method": method, "passed": passed}


def test_unit_outcomes_on_record_read_the_headline_as_the_report_does():
    items = [_item(k) for k in ("done-pass", "done-fail", "error", "running", "unrun",
                                "unjudged")] + [_item("llm", "b2"), _item("llm2", "b2")]
    status = {"done-pass": "done", "done-fail": "done", "error": "error", "running": "running",
              "unjudged": "done", "llm": "done", "llm2": "done"}
    store = _Store(status, [
        _j("done-pass", "state", "state", 1), _j("done-fail", "state", "state", 0),
        _j("error", "state", "state", 1), _j("running", "state", "state", 1),
        _j("unjudged", "state", "state", None),
        # b2's headline is an LLM judge's: the judge with the most verdicts is the source
        _j("llm", "j1", "rubric", 1), _j("llm2", "j1", "rubric", None),
        _j("llm", "j2", "rubric", 0), _j("llm2", "j2", "rubric", 0)])
    got = rd.outcomes_on_record(store, items, {"b2": {"headline": "rubric"}})
    assert got == {"done-pass": True, "done-fail": False, "error": False, "running": None,
                   "unrun": None, "unjudged": None, "llm": False, "llm2": False}
    assert "unrun" not in store.asked  # judgments only of episodes on record
    # without any verdict of the headline's method there is no source: nothing on record
    store = _Store({"x": "done"}, [_j("x", "j1", "other", 1)])
    assert rd.outcomes_on_record(store, [_item("x")], {"b1": {"headline": "rubric"}}) == {
        "x": None}


def _outcome(**kw):
    base = {"run_id": "r", "store_path": None, "episodes": 0, "skipped": 0, "errors": 0}
    return SweepOutcome(**{**base, **kw})


class _Sweeps:
    """make_sweep's test double: each sweep "runs" by storing the verdicts ``verdict``
    gives its items (None: none) and returns an outcome counting them."""

    def __init__(self, store, verdict, *, stop=None):
        self.store, self.verdict, self.stop, self.made = store, verdict, stop, []

    def __call__(self, *, items, run_id, check_endpoints, info, **_):
        self.made.append({"items": items(), "run_id": run_id, "check": check_endpoints,
                          "info": info})
        sweep_items, n = items(), len(self.made)

        async def run():
            new = [i for i in sweep_items if i.key not in self.store.status]
            for i in new:
                v = self.verdict(i)
                self.store.status[i.key] = "done"
                if v is not None:
                    self.store._judgments.append(_j(i.key, "state", "state", v))
            stop = self.stop if self.stop and self.stop[0] == n else None
            return _outcome(run_id=run_id, episodes=len(new), errors=1, resumed=2,
                            replayed_calls=3, judged=len(new), selected=len(sweep_items),
                            budget_stop=stop and stop[1] == "budget" and "max_cost_usd",
                            error_stop=stop and stop[1] == "failing" and "streak")
        return SimpleNamespace(run=run)


def _adaptive_cfg():
    return load_config(None, {"models": ["scripted/noisy:0.15", "scripted/noisy:0.45"],
                              "trials": 2, "max_concurrency": 4, "limit": 3,
                              "benchmarks": ["t1:single"]})


async def test_unit_rounds_run_until_the_rule_holds_and_sum_their_counts():
    cfg = _adaptive_cfg()
    store = _Store({}, [])
    spec = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.3, max_trials=4, batch=2)
    sweeps = _Sweeps(store, lambda i: i.trial % 2 == 0)
    said = []
    ad = AdaptiveSweep(cfg, store, spec, sweeps, run_id="run-1", say=said.append)
    assert ad.batch == 2 and len(ad.all_items) == 2 * 3 * 4
    outcome, summary = await ad.run()
    made = sweeps.made
    assert [m["check"] for m in made] == [True] + [False] * (len(made) - 1)
    assert {m["run_id"] for m in made} == {"run-1"}
    assert len(made[0]["items"]) == 2 * 3 * 2  # every cell's first 2 trials
    assert made[0]["info"]["adaptive"]["why"] == "running"
    assert made[0]["info"]["adaptive"]["sweeps"] == 0 and made[-1]["info"]["adaptive"][
        "sweeps"] == len(made) - 1
    ran = len(store.status)
    assert outcome.episodes == ran and outcome.judged == ran
    assert (outcome.errors, outcome.resumed, outcome.replayed_calls) == (
        len(made), 2 * len(made), 3 * len(made))
    assert outcome.skipped == outcome.selected - ran == len(made[-1]["items"]) - ran
    assert said[0] == "adaptive sweep, pass 1: 12 episodes run, 12 selected"
    assert summary["sweeps"] == len(made) and summary["why"] in ("target", "max_trials")
    assert store.finished == ("run-1", "done", {"adaptive": summary}) and store.flushed
    t1 = summary["benchmarks"]["t1"]
    assert t1["trials"] == ran and t1["cells"] == 6 and t1["why"] == summary["why"]
    assert t1["trials_per_cell"]["min"] >= 2 and t1["trials_per_cell"]["max"] <= 4
    assert summary["rounds"] == t1["rounds"] == len(made) - 1
    assert {k: summary[k] for k in ("rule", "target", "start", "max_trials", "batch")} == {
        "rule": adaptive.CI, "target": 0.3, "start": 2, "max_trials": 4, "batch": 2}


async def test_unit_rounds_stop_when_a_round_adds_no_verdict_or_a_cap_stops_it():
    cfg = _adaptive_cfg()
    spec = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.01, max_trials=4, batch=2)
    store = _Store({}, [])
    said = []
    sweeps = _Sweeps(store, lambda i: None)  # no verdict ever: the same gaps again
    outcome, summary = await AdaptiveSweep(cfg, store, spec, sweeps, say=said.append).run()
    assert summary["why"] == "stuck" and len(sweeps.made) == 1
    assert said[-1] == (
        "adaptive sweep stopped: 6 (model, task) cells have trials without a verdict of their "
        "benchmark's headline that running again does not give (no judge of that method: add "
        "--judge-model, or judge the store with `sweepbench judge`; or the judge's calls "
        "failed for them: `sweepbench judge` again), then run again")
    assert store.finished[1] == "done" and outcome.episodes == 12
    for how, status in (("budget", "budget"), ("failing", "failing")):
        store = _Store({}, [])
        sweeps = _Sweeps(store, lambda i: i.trial % 2 == 0, stop=(2, how))
        outcome, summary = await AdaptiveSweep(cfg, store, spec, sweeps).run()
        assert summary["why"] == how and len(sweeps.made) == 2
        assert store.finished[1] == status
        assert summary["benchmarks"]["t1"]["why"] == how  # the rule had not decided
    store = _Store({}, [])
    sweeps = _Sweeps(store, lambda i: i.trial % 2 == 0)
    spec = AdaptiveSpec(rule=adaptive.RANKED, start=2, margin=0.5, max_trials=2)
    outcome, summary = await AdaptiveSweep(cfg, store, spec, sweeps).run()
    assert summary["why"] == "max_trials" and summary["batch"] == 2  # 4 slots, 2 models
    assert len(sweeps.made) == 1 and summary["benchmarks"]["t1"]["trials_per_cell"] == {
        "min": 2, "median": 2, "max": 2}


def test_unit_summary_of_decisions_by_hand():
    cfg = _adaptive_cfg()
    spec = AdaptiveSpec(rule=adaptive.RANKED, start=2, margin=0.1, max_trials=6, batch=3)
    ad = AdaptiveSweep(cfg, _Store({}, []), spec, None, run_id="r")
    decision = {"t1": {"targets": {("a", "x"): 2, ("a", "y"): 5, ("b", "x"): 3, ("b", "y"): 4,
                                   ("c", "x"): 6},
                       "why": None, "rounds": 2, "by_pair": {"a|b": 4}, "status": None},
                "t9": {"targets": {("a", "z"): 4}, "why": "ranked", "rounds": 1,
                       "by_pair": {}, "status": None}}
    got = ad.summary(decision, "budget", 3)
    assert got == {**spec.info(), "batch": 3, "why": "budget", "rounds": 2, "sweeps": 3,
                   "benchmarks": {
                       "t1": {"why": "budget", "rounds": 2, "trials": 20, "cells": 5,
                              "stopped": "--max-cost reached before the rule held",
                              "trials_per_cell": {"min": 2, "median": 4, "max": 6},
                              "by_pair": {"a|b": 4}},
                       "t9": {"why": "ranked", "rounds": 1, "trials": 4, "cells": 1,
                              "stopped": "every pair of neighbours was told apart (or shown "
                                         "within the margin)",
                              "trials_per_cell": {"min": 4, "median": 4, "max": 4},
                              "by_pair": {}}}}
    assert ad.summary({}, "target", 0)["rounds"] == 0
    items = ad._items({"t1": {"targets": {(i.model, i.task.key): 1 for i in ad.all_items}}})
    assert sorted(i.trial for i in items) == [0] * 6


async def test_unit_rounds_count_what_was_on_record_as_skipped_and_use_the_shard_and_margin():
    from sweepbench.runner.work import Shard

    cfg = _adaptive_cfg()
    spec = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.3, max_trials=4, batch=2)
    store = _Store({}, [])
    first = AdaptiveSweep(cfg, store, spec, None)
    for i in first.all_items:  # a run before this one finished every cell's first trial
        if i.trial == 0:
            store.status[i.key] = "done"
            store._judgments.append(_j(i.key, "state", "state", True))
    sweeps = _Sweeps(store, lambda i: i.trial % 2 == 0)
    outcome, _ = await AdaptiveSweep(cfg, store, spec, sweeps).run()
    assert outcome.skipped == outcome.selected - outcome.episodes == 6
    half = AdaptiveSweep(cfg, _Store({}, []), spec, None, shard=Shard(0, 2))
    assert 0 < len(half.all_items) < len(first.all_items)
    assert {i.key for i in half.all_items} <= {i.key for i in first.all_items}
    # the margin goes to the rule: pairs within 2.0 of each other are settled at once
    ranked = AdaptiveSpec(rule=adaptive.RANKED, start=2, margin=2.0, max_trials=4)
    store = _Store({}, [])
    close = AdaptiveSweep(cfg, store, ranked, None)
    for i in close.all_items:
        if i.trial < 2:
            store.status[i.key] = "done"
            store._judgments.append(_j(i.key, "state", "state", i.trial == 0))
    (d,) = close.decide().values()
    assert d["done"] and d["why"] == "ranked"


class _RetryingSweeps(_Sweeps):
    """_Sweeps that also runs again the episodes it is told to retry (as not on record), and
    whose outcomes say ``stored_errors`` and ``not_started`` as given."""

    def __init__(self, store, verdict, *, stored_errors=0, not_started=0):
        super().__init__(store, verdict)
        self.retried, self.counts = [], {"stored_errors": stored_errors,
                                         "not_started": not_started}

    def __call__(self, *, retry_errors, **kw):
        self.retried.append(set(retry_errors))
        for key in retry_errors:
            del self.store.status[key]
        made = super().__call__(**kw)

        async def run():
            import dataclasses
            return dataclasses.replace(await made.run(), **self.counts)
        return SimpleNamespace(run=run)


async def test_unit_stored_errors_are_retried_once_and_each_round_is_told():
    cfg = _adaptive_cfg()
    spec = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.3, max_trials=4, batch=2)
    store = _Store({}, [])
    errors = {i.key for i in AdaptiveSweep(cfg, store, spec, None).all_items if i.trial == 0}
    store.status.update(dict.fromkeys(errors, "error"))
    store.status["ep-elsewhere"] = "error"  # not of this selection
    told = []
    sweeps = _RetryingSweeps(store, lambda i: i.trial % 2 == 0, stored_errors=5,
                             not_started=1)
    ad = AdaptiveSweep(cfg, store, spec, sweeps, retry_errors=True,
                       progress=lambda kind, **info: told.append((kind, info)))
    outcome, summary = await ad.run()
    n = len(sweeps.made)
    assert n >= 2 and sweeps.retried == [errors] + [set()] * (n - 1) and ad.retry == set()
    assert told == [("round", {"round": r, "more": True}) for r in range(n)] + [
        ("round", {"round": summary["rounds"], "more": False,
                   "why": rd.STOPPED[summary["why"]]})]
    # errors: 1 a round, the last round's stored ones less this run's of the rounds before
    assert (outcome.errors, outcome.stored_errors) == (n, 5 - (n - 1))
    assert outcome.skipped == outcome.selected - outcome.episodes - 1
    plain = AdaptiveSweep(cfg, _Store({k: "error" for k in errors}, []), spec,
                          _RetryingSweeps(store, lambda i: True))
    assert plain.retry_errors is False
    done, _ = await plain.run()
    assert plain.make_sweep.retried[0] == set()
    assert done.stored_errors == 0  # never fewer than none


async def test_unit_benchmarks_stopped_for_different_reasons_say_both():
    cfg = _adaptive_cfg()
    spec = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.3, max_trials=4, batch=2)
    told = []

    class TwoBenchmarks(AdaptiveSweep):  # the second benchmark a copy of the first
        def decide(self):
            (d,) = super().decide().values()
            if not self.make_sweep.made:
                return {"t1": d}
            return {"t1": {**d, "done": True, "why": "target"},
                    "t2": {**d, "done": True, "why": "ranked"}}

    store = _Store({}, [])
    ad = TwoBenchmarks(cfg, store, spec, _Sweeps(store, lambda i: True),
                       progress=lambda kind, **info: told.append(info))
    _, summary = await ad.run()
    assert summary["why"] == "ranked/target" and told[-1]["why"] == "ranked/target"
    assert summary["benchmarks"]["t2"]["stopped"] == rd.STOPPED["ranked"]


def test_unit_pairs_are_counted_once_whichever_way_round_in_leaderboard_order():
    ranked = [{"a": "b", "b": "a", "open": True}]
    got = rd._by_pair({"a|b": 2, "b|a": 3, "a|c": 1, "c|d": 4, "odd": 1}, ranked,
                      {"a", "b", "c"})
    assert list(got.items()) == [("b|a", 5), ("a|c", 1), ("c|d", 4), ("odd", 1)]
    assert list(rd._by_pair({"b|a": 1, "a|b": 2}, None, {"a", "b"}).items()) == [("a|b", 3)]
    assert rd._by_pair({"b|a": 1}, [], {"a", "b"}) == {"a|b": 1}
    assert rd._by_pair({"x|y|z": 2}, None, {"x", "x|y", "y|z", "z"}) == {"x|y|z": 2}


def test_unit_what_the_rule_still_lacked():
    nan = float("nan")
    assert rd._unmet({"m1": {"done": False, "half_width": 0.123456},
                      "m2": {"done": True, "half_width": 0.5},
                      "m3": {"done": False, "half_width": float("inf")},
                      "m4": {"done": False, "half_width": nan}}) == {
        "wide": {"m1": 0.1235, "m3": None, "m4": None}}
    assert rd._unmet({"m2": {"done": True, "half_width": 0.5}}) is None
    assert rd._unmet([{"a": "x", "b": "y", "open": True},
                      {"a": "y", "b": "z", "open": False}]) == {"open_pairs": ["x|y"]}
    assert rd._unmet([{"a": "x", "b": "y", "open": False}]) is None
    assert rd._unmet(None) is None


def test_unit_summary_says_what_was_unmet_and_an_unknown_reason_as_it_is():
    cfg = _adaptive_cfg()
    spec = AdaptiveSpec(rule=adaptive.RANKED, start=2, margin=0.1, max_trials=6, batch=3)
    ad = AdaptiveSweep(cfg, _Store({}, []), spec, None, run_id="r")
    status = [{"a": "b", "b": "a", "open": True}]
    decision = {"t1": {"targets": {("a", "x"): 2, ("b", "x"): 2}, "why": None, "rounds": 1,
                       "by_pair": {"a|b": 4}, "status": status}}
    got = ad.summary(decision, "cut", 2)["benchmarks"]["t1"]
    assert (got["why"], got["stopped"], got["by_pair"], got["unmet"]) == (
        "cut", "cut", {"b|a": 4}, {"open_pairs": ["b|a"]})
    decision["t1"]["status"] = None
    assert "unmet" not in ad.summary(decision, "running", 2)["benchmarks"]["t1"]


def test_unit_the_work_is_the_configs_in_its_data_dir(tmp_path, monkeypatch):
    import msgspec

    seen = []
    real = rd.build_work

    def build_work(cfg, data_dir, shard):  # a test double: reads the built-in samples
        seen.append((data_dir, cfg.trials))
        return real(msgspec.structs.replace(cfg, data_dir=None), None, shard)

    monkeypatch.setattr(rd, "build_work", build_work)
    cfg = msgspec.structs.replace(_adaptive_cfg(), data_dir=str(tmp_path))
    spec = AdaptiveSpec(rule=adaptive.CI, start=2, target=0.3, max_trials=4, batch=2)
    AdaptiveSweep(cfg, _Store({}, []), spec, None)
    assert seen == [(tmp_path.resolve(), 4)]  # every trial up to the cap
