"""The judge pool: judging while the sweep runs, re-judging stored runs, never paying twice."""

from __future__ import annotations

import msgspec

from sweepbench.config import load_config
from sweepbench.results.report import build_report
from sweepbench.store.runstore import RunStore
from sweepbench.runner.judge_pool import JudgeJournal, JudgeSpec
from sweepbench.runner.sweep import Sweep
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    SystemMessage,
    Usage,
    UserMessage,
)

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
    vita = {r["episode_key"] for r in rows if r["benchmark"] == "vitabench@2025-12"}
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
        assert report["benchmarks"]["vitabench@2025-12"]["models"]["scripted/oracle"]["episodes"] > 0
        # "full" is VitaBench's: T1's episodes are not applicable, never failures
        t1 = report["benchmarks"]["t1"]
        n_t1 = sum(r["benchmark"] == "t1" for r in store.episode_rows())
        assert t1["source"]["applicable"] is False and t1["not_applicable"] == n_t1 > 0
        assert t1["models"]["scripted/oracle"]["episodes"] == 0
        assert t1["models"]["scripted/oracle"]["avg"] is None
    assert n_calls > 0


class _Reply:
    def __init__(self, content: str) -> None:
        self.message, self.usage, self.latency_s = AssistantMessage(content), Usage(10, 2), 0.01
        self.attempts, self.statuses = 1, [200]


def _window(i: int, text: str) -> ChatRequest:
    """One judge window: its own conversation, all of the same length."""
    return ChatRequest(model="", messages=[SystemMessage("judge this window of the talk"),
                                           UserMessage(f"window {i}: {text}")])


async def test_judge_calls_resume_by_whole_request_after_a_prompt_changes(tmp_path):
    live: list[ChatRequest] = []

    async def complete(req):
        live.append(req)
        return _Reply(f"verdict {len(live)}")

    spec = JudgeSpec("J", "sliding", "k")
    with RunStore(tmp_path / "s.sqlite") as store:
        first = JudgeJournal(store, "ep-1", spec, "r1")
        call = first.caller(complete, None)
        before = [await call(_window(i, "same")) for i in range(3)]
        hashes = [e["payload"]["request_hash"] for e in
                  store.events("ep-1", journal=first.journal, kind="model_call")]
        assert len(live) == 3 and len(set(hashes)) == 3  # equal lengths, distinct requests

        # judged again (a crash before the judgment was written) after window 1's prompt
        # changed: windows 0 and 2 come from the journal, window 1 is asked live
        again = JudgeJournal(store, "ep-1", spec, "r2")
        call = again.caller(complete, None)
        after = [await call(_window(i, "changed" if i == 1 else "same")) for i in range(3)]
        assert len(live) == 4 and again.replayed == 2
        assert [r.message.content for r in after] == [
            before[0].message.content, "verdict 4", before[2].message.content]
        events = store.events("ep-1", journal=first.journal)
        assert [e["seq"] for e in events] == [0, 1, 2, 3]  # appended, nothing overwritten
        assert [e["run_id"] for e in events] == ["r1", "r1", "r1", "r2"]
        assert {e["endpoint"] for e in events} == {"J"}


async def test_retry_errors_reruns_and_rejudges_to_a_clean_runs_leaderboard(tmp_path):
    base = {**BASE, "trials": 2, "judge_models": ["scripted/judge"]}
    # most episodes end in error, the quickest first: no error-streak stop (not the point here)
    faulty = {**base, "reference_faults": "500=0.2", "error_streak": 0,
              "endpoints": [{"name": "scripted/oracle", "max_retries": 0}]}
    with RunStore(tmp_path / "clean.sqlite") as clean:
        await Sweep(load_config(None, base), clean).run()
        expected = build_report(clean)
    with RunStore(tmp_path / "s.sqlite") as store:
        outcome = await Sweep(load_config(None, faulty), store).run()
        assert outcome.errors > 0
        errored = {k for k, st in store.episode_status().items() if st == "error"}
        stale = [j for j in store.judgments(errored) if j["method"] == "state"]
        assert len(stale) == len(errored) and not any(j["passed"] for j in stale)
        assert build_report(store)["models"]["scripted/oracle"]["errors"] == outcome.errors
        retried = await Sweep(load_config(None, base), store, retry_errors=True).run()
        assert retried.episodes == len(errored) and retried.errors == 0
        # their judgments are new: made by the retry's run, of the new records
        fresh = store.judgments(errored)
        assert fresh and {j["run_id"] for j in fresh} == {retried.run_id}
        assert all("ended in error" not in str(j["details"]) for j in fresh)
        report = build_report(store)
    keys = ("k", "tasks", "episodes", "errors", "avg", "pass_at_k", "pass_hat_k", "state",
            "unjudged", "method_scores", "metrics")
    for b, bs in expected["benchmarks"].items():
        for m, e in bs["models"].items():
            got = report["benchmarks"][b]["models"][m]
            assert {k: got[k] for k in keys} == {k: e[k] for k in keys}


async def _judged_t1_bar(tmp_path, name: str) -> tuple[dict, dict]:
    """One T1 bar episode of the oracle, judged; (judgments by method, the T1 report row)."""
    cfg = load_config(None, {**BASE, "benchmarks": ["t1:bar"], "limit": 1,
                             "judge_models": ["scripted/judge"]})
    with RunStore(tmp_path / f"{name}.sqlite") as store:
        await Sweep(cfg, store).run()
        judgments = {j["method"]: j for j in store.judgments()}
        report = build_report(store)
    return judgments, report["benchmarks"]["t1"]["models"]["scripted/oracle"]


async def test_an_episode_whose_output_cannot_be_scored_fails_with_its_reason(tmp_path,
                                                                            monkeypatch):
    from sweepbench.benchmarks.t1 import benchmark as t1_benchmark

    def unscorable(*_args, **_kw):
        raise RecursionError("maximum recursion depth exceeded while deserializing an object")

    monkeypatch.setattr(t1_benchmark.T1, "check", unscorable)
    monkeypatch.setattr(t1_benchmark.prompts, "judge_prompt", unscorable)  # before any judge call
    judgments, row = await _judged_t1_bar(tmp_path, "unscorable")
    why = ("the episode could not be scored: RecursionError: maximum recursion depth exceeded "
           "while deserializing an object")
    for method in ("state", "likert"):
        j = judgments[method]
        assert (j["passed"], j["score"], j["details"]) == (False, 0.0, {"why": why})
    # a failure, counted in Avg@k; not an unjudged episode left out of it
    assert (row["tasks"], row["avg"], row["unjudged"]) == (1, 0.0, 0)


async def test_a_judge_that_fails_or_gives_no_verdict_leaves_the_episode_unjudged(tmp_path,
                                                                                monkeypatch):
    from sweepbench.benchmarks.t1 import benchmark as t1_benchmark
    from sweepbench.errors import ServerError
    from sweepbench.judge.likert import NoVerdict
    from sweepbench.runner import judge_pool

    def failing_caller(self, complete, observe):
        async def call(req):
            raise ServerError("HTTP 500: judge down", endpoint="scripted/judge")
        return call

    monkeypatch.setattr(judge_pool.JudgeJournal, "caller", failing_caller)
    judgments, row = await _judged_t1_bar(tmp_path, "down")
    likert = judgments["likert"]
    assert (likert["passed"], likert["score"]) == (None, None)
    assert likert["details"] == {"error": "sweepbench.errors.ServerError: HTTP 500: judge down"}
    assert judgments["state"]["passed"] is True  # the episode itself scores as ever

    async def no_verdict(self, task, record, method, call, *, data_dir):
        raise NoVerdict("Likert judge gave no readable scores in 3 attempts")

    monkeypatch.setattr(t1_benchmark.T1, "judge", no_verdict)
    judgments, _ = await _judged_t1_bar(tmp_path, "noverdict")
    assert judgments["likert"]["details"] == {
        "error": "sweepbench.judge.likert.NoVerdict: Likert judge gave no readable scores in 3 "
                 "attempts"}


async def test_a_verdict_whose_details_no_store_can_hold_is_stored_without_them(tmp_path,
                                                                              monkeypatch):
    from sweepbench.benchmarks.t1 import benchmark as t1_benchmark

    def surrogate(self, task, record):
        return {"passed": False, "score": 0.0, "details": {"why": "order \ud800 differs"}}

    monkeypatch.setattr(t1_benchmark.T1, "check", surrogate)
    judgments, row = await _judged_t1_bar(tmp_path, "surrogate")
    state = judgments["state"]
    assert (state["passed"], state["score"]) == (False, 0.0)
    assert state["details"] == {"unstorable": (
        "the verdict's details could not be stored: 'utf-8' codec can't encode character "
        "'\\ud800' in position 6: surrogates not allowed")}
    assert (row["tasks"], row["avg"]) == (1, 0.0)
