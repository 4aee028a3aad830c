"""The judge pool: judging while the sweep runs, re-judging stored runs, never paying twice."""

from __future__ import annotations

import asyncio
import hashlib

import msgspec
import pytest

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.base import Benchmark
from sweepbench.config import load_config
from sweepbench.datasets.task import Task
from sweepbench.results.report import build_report
from sweepbench.store.runstore import RunStore
from sweepbench.runner.judge_pool import (
    STATE,
    JudgeJournal,
    JudgePool,
    JudgeSpec,
    request_hash,
    state_judgment,
)
from sweepbench.runner.sweep import Sweep
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    EpisodeRecord,
    SystemMessage,
    ToolSpec,
    Usage,
    UserMessage,
    encoder,
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


# ---- the pool's parts, with a benchmark of the test's own ----------------------------------


class Bench(Benchmark):
    name = "pooltest"
    judge_methods = ("m", "n")

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.verdict: dict | None = {"passed": True, "score": 1.0, "details": {"why": "ok"}}
        self.premature: dict | None = None
        self.fail: Exception | None = None

    def check(self, task, record):
        assert task.benchmark == "pooltest" and record.task_id == "t1"
        self.calls.append("check")
        return {"passed": True, "score": 1.0, "details": {"state": "matches"}}

    def premature_judgment(self, task, record):
        assert task.benchmark == "pooltest" and record.task_id == "t1"
        return self.premature

    async def judge(self, task, record, method, call, *, data_dir):
        self.calls.append(f"judge {method} {data_dir}")
        if self.fail is not None:
            raise self.fail
        await call(_window(0, method))
        return self.verdict


@pytest.fixture
def bench(monkeypatch):
    b = Bench()
    monkeypatch.setitem(registry._registered, "pooltest", b)
    return b


TASK = Task(id="t1", benchmark="pooltest", domain="d", instructions="")


def record(termination="user_stop", error=None):
    return EpisodeRecord(run_id="r", model="a", benchmark="pooltest", domain="d", task_id="t1",
                         trial=0, termination=termination, error=error)


class Client:
    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def complete(self, req):
        self.requests.append(req)
        reply = _Reply(f"live {len(self.requests)}")
        reply.attempts = 3
        return reply


class FailingClient(Client):
    """A judge endpoint whose every call raises ``error``."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    async def complete(self, req):
        self.requests.append(req)
        raise self.error


def test_a_judge_spec_applies_by_its_method_and_the_state_check_to_all(bench):
    assert STATE == JudgeSpec("state", "state", "state") and STATE.is_state
    assert STATE.applies_to("pooltest") and STATE.applies_to("t1")
    spec = JudgeSpec("J", "m")
    assert not spec.is_state and spec.key == ""
    assert spec.applies_to("pooltest") and not spec.applies_to("t1")
    assert not JudgeSpec("J", "x").applies_to("pooltest")


def test_an_episode_that_could_not_end_fails_the_state_check_without_checking(bench):
    for why in ("error", "context_overflow", "truncated"):
        assert state_judgment(TASK, record(why, "boom")) == {
            "passed": False, "score": 0.0, "details": {"why": f"episode ended in {why}: boom"}}
    assert bench.calls == []
    assert state_judgment(TASK, record("max_turns"))["details"] == {"state": "matches"}
    assert bench.calls == ["check"]


def test_a_request_hash_covers_the_whole_request_messages_and_tools():
    base = _window(0, "x")
    same = _window(0, "x")
    assert request_hash(base) == request_hash(same) and len(request_hash(base)) == 32
    assert request_hash(_window(1, "x")) != request_hash(base)
    tools = [ToolSpec({"name": "f", "description": "does f", "parameters": {"type": "object"}})]
    with_tools = msgspec.structs.replace(base, tools=tools)
    assert request_hash(with_tools) != request_hash(base)
    assert request_hash(msgspec.structs.replace(base, tools=[])) == request_hash(base)
    # a hash of the encoded messages, a separator, then the tools: pinned, as journals keep it
    h = hashlib.blake2b(encoder.encode(base.messages) + b"\x1e" + encoder.encode(tools),
                        digest_size=16)
    assert request_hash(with_tools) == h.hexdigest()
    h = hashlib.blake2b(encoder.encode(base.messages) + b"\x1e", digest_size=16)
    assert request_hash(base) == h.hexdigest()


async def test_a_journal_replays_recorded_answers_exactly_and_records_live_ones(tmp_path):
    observed = []

    async def complete(req):
        return _Reply("live")

    spec = JudgeSpec("J", "m", "k")
    with RunStore(tmp_path / "s.sqlite") as store:
        store.event("ep-1", 0, "message", {"x": 1}, journal="judge|J|m")  # not a call
        await store.flush()
        journal = JudgeJournal(store, "ep-1", spec, "r1")
        assert journal.journal == "judge|J|m" and journal.seq == 1 and journal.replayed == 0
        result = await journal.caller(complete, observed.append)(_window(0, "a"))
        assert observed == [result] and journal.seq == 2
        (event,) = store.events("ep-1", journal="judge|J|m", kind="model_call")
        assert event["seq"] == 1 and event["run_id"] == "r1" and event["endpoint"] == "J"
        assert event["payload"] == {
            "role": "judge", "request_hash": request_hash(_window(0, "a")),
            "message": {"role": "assistant", "content": "live"},
            "usage": {"prompt_tokens": 10, "completion_tokens": 2}, "latency_s": 0.01,
            "attempts": 1, "statuses": [200]}
        # a result without attempts or statuses is recorded as one attempt
        bare = _Reply("bare")
        del bare.attempts, bare.statuses

        async def plain(req):
            return bare

        await journal.caller(plain, None)(_window(1, "b"))
        last = store.events("ep-1", journal="judge|J|m", kind="model_call")[-1]["payload"]
        assert last["attempts"] == 1 and last["statuses"] is None
        # another judge's journal and another episode are not this one's
        assert JudgeJournal(store, "ep-1", JudgeSpec("J", "n"), None).seq == 0
        assert JudgeJournal(store, "ep-2", spec, None).recorded == {}

        again = JudgeJournal(store, "ep-1", spec, "r2")
        assert again.seq == 3
        replayed = await again.caller(complete, observed.append)(_window(0, "a"))
        assert again.replayed == 1 and len(observed) == 1  # a replay is not observed
        assert replayed.message == AssistantMessage("live")
        assert replayed.usage == Usage(10, 2) and replayed.latency_s == 0.01
        assert replayed.attempts == 1 and type(replayed.latency_s) is float
        # asked twice, recorded once: the second is asked live
        second = await again.caller(complete, None)(_window(0, "a"))
        assert second.message.content == "live" and again.replayed == 1 and again.seq == 4


async def test_a_recorded_answer_without_usage_latency_or_attempts_replays_as_zero(tmp_path):
    spec = JudgeSpec("J", "m", "k")
    with RunStore(tmp_path / "s.sqlite") as store:
        store.event("ep-1", 0, "model_call", {
            "role": "judge", "request_hash": request_hash(_window(0, "a")),
            "message": {"role": "assistant", "content": "old"}, "latency_s": None},
            journal="judge|J|m")
        await store.flush()
        journal = JudgeJournal(store, "ep-1", spec, None)
        result = await journal.caller(None, None)(_window(0, "a"))
    assert result.message.content == "old" and result.usage == Usage()
    assert result.latency_s == 0.0 and result.attempts == 0


async def pool_run(store, judges, items, **kw):
    pool = JudgePool(store, "run-1", judges=judges, **kw)
    pool.start()
    for key, rec, fresh in items:
        pool.submit(TASK, key, rec, fresh=fresh)
    await pool.drain()
    await store.flush()
    return pool


async def test_the_pool_judges_with_every_judge_that_applies_and_records_it(tmp_path, bench):
    client = Client()
    seen = []
    specs = [STATE, JudgeSpec("J", "m", "key-m"), JudgeSpec("J", "other", "key-o")]
    with RunStore(tmp_path / "s.sqlite") as store:
        pool = await pool_run(store, specs, [("ep-1", record(), False)],
                              clients={"J": client}, workers=0, data_dir=tmp_path,
                              on_judged=lambda k, s, j: seen.append((k, s.method, j["passed"])),
                              observe=lambda name, r: seen.append((name, r.message.content)))
        assert pool.n_workers == 1 and pool.judged == 2 and pool.failed == 0
        assert seen == [("ep-1", "state", True), ("J", "live 1"), ("ep-1", "m", True)]
        assert bench.calls == ["check", f"judge m {tmp_path}"]
        rows = store.judgments()
        assert [(j["judge"], j["method"], j["passed"], j["score"], j["details"], j["run_id"],
                 j["judge_key"]) for j in rows] == [
            ("J", "m", True, 1.0, {"why": "ok"}, "run-1", "key-m"),
            ("state", "state", True, 1.0, {"state": "matches"}, "run-1", "state")]
        assert pool.done == {("ep-1", "state", "state"), ("ep-1", "J", "m")}
        assert not pool.pending("ep-1", "pooltest") and pool.pending("ep-2", "pooltest")
        assert len(client.requests) == 1
        (call,) = store.events("ep-1", journal="judge|J|m")
        assert call["run_id"] == "run-1" and call["payload"]["attempts"] == 3

        # a new pool finds them done: submitted again, nothing is judged
        again = await pool_run(store, specs, [("ep-1", record(), False)],
                               clients={"J": client})
        assert again.judged == 0 and len(client.requests) == 1 and again.n_workers == 16
        plain = JudgePool(store, None, judges=specs, clients={"J": client})
        plain.start()
        plain.submit(TASK, "ep-1", record())  # not fresh unless said
        await plain.drain()
        assert plain.judged == 0
        # fresh: the episode was rerun, its judgments are made again
        fresh = await pool_run(store, specs, [("ep-1", record(), True)],
                               clients={"J": client}, workers=3)
        assert fresh.judged == 2 and fresh.n_workers == 3


async def test_a_judgment_by_another_judge_key_or_with_an_error_is_not_done(tmp_path, bench):
    with RunStore(tmp_path / "s.sqlite") as store:
        for key, judge, jkey, details in (
                ("ep-1", "J", "old-key", {}), ("ep-2", "J", "key", {"error": "bad"}),
                ("ep-3", "J", "key", {}), ("ep-4", "K", "any", {}),
                ("ep-5", "J", "key", {"why": "fine"})):
            store.judgment(key, judge=judge, method="m", passed=True, score=1.0,
                           details=details, judge_key=jkey)
        await store.flush()
        pool = JudgePool(store, None, judges=[JudgeSpec("J", "m", "key")], clients={})
        assert pool.done == {("ep-3", "J", "m"), ("ep-4", "K", "m"), ("ep-5", "J", "m")}
        only = JudgePool(store, None, judges=[JudgeSpec("J", "m", "key")], clients={},
                         keys=["ep-5", "ep-1"])
        assert only.done == {("ep-5", "J", "m")}
        assert only.pending("ep-1", "pooltest") and not only.pending("ep-5", "pooltest")
        assert not only.pending("ep-1", "t1")  # no judge of the pool applies there


async def test_a_judge_that_fails_or_gives_no_verdict_is_recorded_unjudged(tmp_path, bench):
    judged = []
    spec = JudgeSpec("J", "m", "k")
    failing = FailingClient(ValueError("cannot read\nthis"))  # the judge's own call fails
    with RunStore(tmp_path / "s.sqlite") as store:
        pool = await pool_run(store, [spec], [("ep-1", record(), False)],
                              clients={"J": failing},
                              on_judged=lambda k, s, j: judged.append(j))
        assert judged == [{"passed": None, "score": None,
                           "details": {"error": "ValueError: cannot read\nthis"}}]
        assert (pool.failed, pool.judged, dict(pool.failures)) == (1, 1, {("J", "m"): 1})
        pool = await pool_run(store, [spec], [("ep-1", record(), True), ("ep-2", record(), True)],
                              clients={"J": failing})
        assert (pool.failed, pool.judged, dict(pool.failures)) == (2, 2, {("J", "m"): 2})
        for verdict, why in (({"passed": None, "score": None, "details": None},
                              "the judge gave no verdict"),
                             ({"passed": None, "score": None, "details": {"unjudged": "cut"}},
                              "cut"),
                             ({"passed": None, "score": None,
                               "details": {"unjudged": "cut", "error": "err", "n": 1}}, "err")):
            bench.verdict = verdict
            judged.clear()
            pool = await pool_run(store, [spec], [("ep-1", record(), True)],
                                  clients={"J": Client()},
                                  on_judged=lambda k, s, j: judged.append(j))
            assert judged[0]["details"] == {**(verdict["details"] or {}), "error": why}
            assert pool.failed == 1
            row = [j for j in store.judgments() if j["judge"] == "J"][0]
            assert row["details"]["error"] == why and row["passed"] is None
        # a verdict with only a score or only a pass is a verdict
        for verdict in ({"passed": None, "score": 0.5, "details": {}},
                        {"passed": False, "score": None, "details": {}}):
            bench.verdict = verdict
            pool = await pool_run(store, [spec], [("ep-1", record(), True)],
                                  clients={"J": Client()})
            assert pool.failed == 0 and not pool.failures
        # the state check may say nothing either: it is not an unjudged LLM judgment; a
        # judgment without details is recorded with none (not a crash of the store's check)
        bench.check = lambda task, rec: {"passed": None, "score": None, "details": None}
        judged.clear()
        pool = await pool_run(store, [STATE], [("ep-9", record(), False)], clients={},
                              on_judged=lambda k, s, j: judged.append(j))
        assert pool.failed == 0 and judged == [{"passed": None, "score": None, "details": {}}]
        bench.verdict = {"passed": True, "score": 1.0, "details": None}
        pool = await pool_run(store, [spec], [("ep-9", record(), False)],
                              clients={"J": Client()})
        assert pool.judged == 1 and pool.failed == 0
        assert [j["details"] for j in store.judgments(["ep-9"])] == [{}, {}]


async def test_an_episode_that_ended_too_early_gets_the_benchmarks_verdict_without_a_call(
        tmp_path, bench):
    bench.premature = {"passed": False, "score": 0.0, "details": {"why": "max steps"}}
    client = Client()
    with RunStore(tmp_path / "s.sqlite") as store:
        pool = await pool_run(store, [JudgeSpec("J", "m", "k")], [("ep-1", record(), False)],
                              clients={"J": client})
        assert pool.judged == 1 and client.requests == [] and bench.calls == []
        assert store.judgments()[0]["details"] == {"why": "max steps"}


async def test_a_pool_never_started_drains_and_cancels_at_once(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        pool = JudgePool(store, None, judges=[STATE], clients={})
        await pool.drain()
        pool.cancel()
        assert pool.judged == 0


async def test_only_journaled_model_calls_are_replayed(tmp_path):
    spec = JudgeSpec("J", "m", "k")
    digest = request_hash(_window(0, "a"))
    with RunStore(tmp_path / "s.sqlite") as store:
        store.event("ep-1", 0, "note", {"request_hash": digest, "message": {
            "role": "assistant", "content": "not a call"}}, journal="judge|J|m")
        await store.flush()
        journal = JudgeJournal(store, "ep-1", spec, None)
        assert journal.recorded == {} and journal.seq == 1

        async def complete(req):
            return _Reply("live")

        result = await journal.caller(complete, None)(_window(0, "a"))
    assert result.message.content == "live" and journal.replayed == 0


async def test_a_pool_without_an_observer_or_callback_still_judges(tmp_path, bench):
    with RunStore(tmp_path / "s.sqlite") as store:
        pool = await pool_run(store, [JudgeSpec("J", "m", "k")], [("ep-1", record(), False)],
                              clients={"J": Client()})
        assert pool.judged == 1 and pool.observe is None


async def test_cancelling_stops_the_workers_with_judgments_in_flight_unrecorded(tmp_path, bench):
    gate = asyncio.Event()

    class Slow:
        async def complete(self, req):
            await gate.wait()
            return _Reply("late")

    with RunStore(tmp_path / "s.sqlite") as store:
        pool = JudgePool(store, None, judges=[JudgeSpec("J", "m", "k")],
                         clients={"J": Slow()}, workers=2)
        pool.start()
        assert len(pool._workers) == 2
        pool.submit(TASK, "ep-1", record())
        for _ in range(5):
            await asyncio.sleep(0)
        pool.cancel()
        await asyncio.gather(*pool._workers, return_exceptions=True)
        assert all(w.cancelled() for w in pool._workers)
        await store.flush()
        assert store.judgments() == [] and pool.judged == 0


async def test_a_state_check_made_elsewhere_is_stored_as_given_not_made_again(tmp_path, bench):
    made = {"passed": False, "score": 0.25, "details": {"made": "on a worker"}}
    with RunStore(tmp_path / "s.sqlite") as store:
        pool = JudgePool(store, "run-1", judges=[STATE], clients={})
        pool.start()
        pool.submit(TASK, "ep-1", record(), fresh=True, state=made)
        pool.submit(TASK, "ep-2", record(), fresh=True)  # none given: the pool checks it
        await pool.drain()
        await store.flush()
        rows = {j["episode_key"]: (j["passed"], j["score"], j["details"])
                for j in store.judgments()}
    assert bench.calls == ["check"]  # ep-2's only
    assert rows["ep-1"] == (False, 0.25, {"made": "on a worker"})
    assert rows["ep-2"] == (True, 1.0, {"state": "matches"})
    assert pool._states == {}


async def test_an_episode_its_own_limits_ended_fails_each_llm_judge_without_a_call(tmp_path,
                                                                                 bench):
    from sweepbench.runner.judge_pool import limit_judgment

    assert limit_judgment(record("time_limit")) == {
        "passed": False, "score": 0.0,
        "details": {"premature": True, "termination": "time_limit", "calls": 0}}
    client = Client()
    with RunStore(tmp_path / "s.sqlite") as store:
        pool = await pool_run(store, [STATE, JudgeSpec("J", "m", "k")],
                              [("ep-1", record("token_limit"), False),
                               ("ep-2", record("time_limit"), False)], clients={"J": client})
        assert (pool.judged, pool.failed, client.requests) == (4, 0, [])
        rows = {(j["episode_key"], j["judge"]): (j["passed"], j["score"], j["details"])
                for j in store.judgments()}
    for key, why in (("ep-1", "token_limit"), ("ep-2", "time_limit")):
        assert rows[key, "J"] == (False, 0.0, {"premature": True, "termination": why,
                                               "calls": 0})
        assert rows[key, "state"] == (False, 0.0, {"why": f"episode ended in {why}: None"})
    assert bench.calls == []


async def test_details_no_store_can_hold_keep_an_error_as_the_error(tmp_path, bench):
    spec = JudgeSpec("J", "m", "k")
    with RunStore(tmp_path / "s.sqlite") as store:
        for n, (passed, details, kept) in enumerate((
                (None, {"error": "bad \ud800 reply"}, "error"),  # unjudged: its error kept
                (False, {"why": "bad \ud800 reply"}, "unstorable"))):
            bench.verdict = {"passed": passed, "score": None, "details": details}
            pool = await pool_run(store, [spec], [(f"ep-{n}", record(), False)],
                                  clients={"J": Client()})
            assert pool.failed == (passed is None)
            [row] = store.judgments([f"ep-{n}"])
            assert row["details"] == {kept: (
                "the verdict's details could not be stored: 'utf-8' codec can't encode "
                "character '\\ud800' in position 4: surrogates not allowed")}, kept


async def test_stored_records_are_read_one_at_a_time_and_missing_ones_skipped(tmp_path, bench):
    with RunStore(tmp_path / "s.sqlite") as store:
        for key in ("ep-1", "ep-3"):
            store.episode_finished(key, record())
        await store.flush()
        asked = []
        real = store.records

        def records(keys=None):
            asked.append(keys)
            return real(keys)

        store.records = records
        pool = await pool_run(store, [STATE], [("ep-1", None, False), ("ep-2", None, False),
                                               ("ep-3", None, False)], clients={}, workers=1)
        assert asked == [["ep-1"], ["ep-2"], ["ep-3"]]
        assert pool.judged == 2 and bench.calls == ["check", "check"]
        assert sorted(j["episode_key"] for j in store.judgments()) == ["ep-1", "ep-3"]
