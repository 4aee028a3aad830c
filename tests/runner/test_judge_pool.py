"""The judge pool: judging while the sweep runs, re-judging stored runs, never paying twice."""

from __future__ import annotations

import msgspec

from sweepbench.config import load_config
from sweepbench.results.report import build_report
from sweepbench.results.store import RunStore
from sweepbench.runner.sweep import Sweep

BASE = dict(benchmarks=["vitabench:delivery", "t1:bar"], models=["scripted/oracle"], trials=1,
            max_concurrency=16)


async def test_pipelined_judging_covers_every_episode_with_the_right_method(tmp_path):
    cfg = load_config(None, {**BASE, "judge_models": ["scripted/judge"]})
    with RunStore(tmp_path / "s.sqlite") as store:
        sweep = Sweep(cfg, store)
        await sweep.run()
        judgments = store.judgments()
        rows = store.episode_rows()
    episodes = {r["episode_key"] for r in rows}
    by_method = {}
    for j in judgments:
        by_method.setdefault((j["judge"], j["method"]), set()).add(j["episode_key"])
    vita = {r["episode_key"] for r in rows if r["benchmark"] == "vitabench"}
    t1 = episodes - vita
    assert by_method[("state", "state")] == set(episodes)
    assert by_method[("scripted/judge", "sliding")] == vita  # rubric judge: VitaBench only
    assert by_method[("scripted/judge", "likert")] == t1  # Likert judge: T1 only
    assert sweep.reference.requests["scripted/judge"] > len(episodes)  # windows + Likert calls
    likert = [j for j in judgments if j["method"] == "likert"]
    assert all(0.0 <= j["score"] <= 1.0 and "helpfulness" in j["details"] for j in likert)


async def test_rejudging_makes_no_agent_or_user_calls_and_nothing_twice(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        first = Sweep(load_config(None, BASE), store)
        outcome = await first.run()
        assert {j["judge"] for j in store.judgments()} == {"state"}
        before = msgspec.json.encode(store.episodes(outcome.run_id))

        judged = Sweep(load_config(None, {**BASE, "judge_models": ["scripted/judge"],
                                          "judge_methods": ["full", "likert"]}), store)
        again = await judged.run(episodes=False)
        # judges are not part of an episode's identity: the same episodes are selected
        assert set(store.run_selection(again.run_id)) == set(store.run_selection(outcome.run_id))
        assert set(judged.reference.requests) == {"scripted/judge"}  # no agent or user call
        n_calls = judged.reference.requests["scripted/judge"]
        pairs = {(j["judge"], j["method"]) for j in store.judgments()}
        assert pairs == {("state", "state"), ("scripted/judge", "full"), ("scripted/judge", "likert")}
        assert msgspec.json.encode(store.episodes(outcome.run_id)) == before

        once_more = Sweep(load_config(None, {**BASE, "judge_models": ["scripted/judge"],
                                             "judge_methods": ["full", "likert"]}), store)
        await once_more.run(episodes=False)
        assert not once_more.reference or not once_more.reference.requests.get("scripted/judge")
        report = build_report(store, outcome.run_id, judge="scripted/judge", method="full")
        assert report["benchmarks"]["vitabench"]["models"]["scripted/oracle"]["episodes"] > 0
        # "full" is VitaBench's: T1's episodes are not applicable, never failures
        t1 = report["benchmarks"]["t1"]
        n_t1 = sum(r["benchmark"] == "t1" for r in store.episode_rows())
        assert t1["source"]["applicable"] is False and t1["not_applicable"] == n_t1 > 0
        assert t1["models"]["scripted/oracle"]["episodes"] == 0
        assert t1["models"]["scripted/oracle"]["avg"] is None
    assert n_calls > 0
