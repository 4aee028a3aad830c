"""Adaptive sweeps run for real (scripted models, the reference server): rounds under one run,
what the run's info and report say, and an interrupted adaptive sweep resumed paying for no
call twice and reaching the same decision."""

from __future__ import annotations

import asyncio
import io
from collections import Counter

import pytest
from rich.console import Console

from sweepbench.config import load_config
from sweepbench.results.report import build_report
from sweepbench.results.stats import Outcome, summarize
from sweepbench.runner import adaptive
from sweepbench.runner.progress import ProgressDisplay
from sweepbench.runner.rounds import AdaptiveSpec, AdaptiveSweep
from sweepbench.runner.sweep import Sweep
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
