"""Turn-level resume: an interrupted sweep continues from its journal, paying for nothing twice."""

from __future__ import annotations

from collections import Counter

import msgspec
import pytest

from sweepbench.config import load_config
from sweepbench.errors import ResumeMismatch
from sweepbench.results.report import build_report
from sweepbench.store.runstore import RunStore
from sweepbench.runner.journal import CallJournal
from sweepbench.runner.sweep import Shard, Sweep, run_sweep
from sweepbench.wire import (
    AssistantMessage,
    ChatRequest,
    SystemMessage,
    Usage,
    UserMessage,
)

from ..support import without_backups

METRICS = ("k", "tasks", "episodes", "errors", "avg", "pass_at_k", "pass_hat_k", "state",
           "unjudged", "metrics")


def metrics(report: dict) -> dict:
    """Every benchmark's leaderboard numbers (not timings, which differ run to run)."""
    return {b: {m: {k: v.get(k) for k in METRICS} for m, v in bs["models"].items()}
            for b, bs in report["benchmarks"].items()}


CFG = dict(models=["scripted/oracle", "scripted/noisy:0.3"], trials=2, max_concurrency=8,
           reference_latency_s=0.005,  # requests counted one per call: no backups
           endpoints=without_backups("scripted/oracle", "scripted/noisy:0.3", "scripted/user"))


def transcripts(store: RunStore, run_id: str | None = None) -> dict[str, bytes]:
    return {f"{r.model}|{r.task_id}|{r.trial}": msgspec.json.encode(r.messages)
            for r in store.episodes(run_id)}


def calls_in(store: RunStore, run_id: str | None = None) -> int:
    return sum(r.agent_calls + r.user_calls for r in store.episodes(run_id))


async def uninterrupted(cfg, path) -> tuple[dict[str, bytes], dict, int]:
    """The reference: one uninterrupted run's transcripts, report and number of calls."""
    with RunStore(path) as a:
        sweep = Sweep(cfg, a)
        await sweep.run()
        return (transcripts(a, sweep.run_id), build_report(a, sweep.run_id),
                calls_in(a, sweep.run_id))


async def test_interrupted_sweep_resumes_without_repeating_recorded_calls(tmp_path, interrupt):
    cfg = load_config(None, CFG)
    expected, report_a, total = await uninterrupted(cfg, tmp_path / "a.sqlite")

    # an interrupted run: cancelled once a few episodes have finished
    path = tmp_path / "b.sqlite"
    with RunStore(path) as b:
        sweep_b = Sweep(cfg, b)
        await interrupt(sweep_b)
        await b.flush()
        status = b.episode_status()
        assert "running" in status.values()  # some episodes were cut mid-conversation
        recorded = sum(len(b.events(key, kind="model_call")) for key in status)
        first_requests = sum(sweep_b.reference.requests.values())

    # continue it: same config, same store
    with RunStore(path) as b:
        sweep_c = Sweep(cfg, b)
        outcome = await sweep_c.run()
        second_requests = sum(sweep_c.reference.requests.values())
        assert outcome.resumed > 0 and outcome.replayed_calls > 0
        # every recorded call was reused, only calls never recorded were requested again
        assert second_requests == total - recorded
        assert first_requests - recorded <= cfg.max_concurrency  # lost only calls in flight
        assert transcripts(b, sweep_c.run_id) == expected
        report_c = build_report(b, sweep_c.run_id)
    assert metrics(report_c) == metrics(report_a)


async def test_two_resumes_in_a_row_pay_each_call_once(tmp_path, interrupt):
    """Interrupt, resume, interrupt, resume: every call journaled once, none sent a third time,
    and the result that of one uninterrupted run."""
    cfg = load_config(None, CFG)
    expected, report_a, total = await uninterrupted(cfg, tmp_path / "a.sqlite")

    path = tmp_path / "b.sqlite"
    sent: Counter = Counter()  # request body hash -> times sent, over all four runs
    recorded = []
    for after in (4, 6):  # the second interrupt lands in the resumed run
        with RunStore(path) as b:
            sweep = Sweep(cfg, b)
            await interrupt(sweep, after)
            sent.update(sweep.reference.bodies)
            await b.flush()
            status = b.episode_status()
            assert "running" in status.values() and "error" not in status.values()
            recorded.append(sum(len(b.events(k, kind="model_call")) for k in status))
    assert recorded[0] < recorded[1] < total
    with RunStore(path) as b:
        sweep = Sweep(cfg, b)
        await sweep.run()
        sent.update(sweep.reference.bodies)
        # the last run asked only for what no earlier run had recorded
        assert sum(sweep.reference.bodies.values()) == total - recorded[1]
        for key in b.episode_status():
            calls = b.events(key, kind="model_call")
            assert [c["seq"] for c in calls] == sorted({c["seq"] for c in calls})
        assert calls_in(b, sweep.run_id) == total
        assert sum(len(b.events(k, kind="model_call")) for k in b.episode_status()) == total
        assert transcripts(b, sweep.run_id) == expected
        report_b = build_report(b, sweep.run_id)
    assert len(sent) == total  # every call of the sweep was sent, each a distinct request
    assert max(sent.values()) <= 2  # at most once more, when it was in flight at a signal
    assert sum(sent.values()) - total <= 2 * cfg.max_concurrency
    assert metrics(report_b) == metrics(report_a)


async def test_a_changed_request_is_detected_not_mixed():
    events = []

    async def never(req):
        raise AssertionError("must not go live")

    recorded = [{"role": "agent", "request_hash": "0" * 32, "message": {"content": "hi"},
                 "usage": {}, "latency_s": 0.1}]
    journal = CallJournal(emit=lambda k, p: events.append(k), recorded=recorded)
    call = journal.caller("agent", never)
    with pytest.raises(ResumeMismatch, match="does not match"):
        await call(ChatRequest(model="m", messages=[SystemMessage("changed prompt")]))


async def test_journal_replays_then_goes_live():
    live = []

    async def complete(req):
        live.append(req)
        return _Reply(AssistantMessage("live"))

    first = CallJournal(emit=lambda k, p: None)
    log = []
    first.emit = lambda k, p: log.append(p)
    call = first.caller("user", complete)
    req1 = ChatRequest(model="m", messages=[SystemMessage("s"), UserMessage("a")])
    await call(req1)
    recorded = msgspec.json.decode(msgspec.json.encode(log))
    again = CallJournal(emit=lambda k, p: None, recorded=recorded)
    call2 = again.caller("user", complete)
    reply = await call2(ChatRequest(model="m", messages=list(req1.messages)))
    assert reply.message.content == "live" and len(live) == 1 and again.replayed == 1
    await call2(ChatRequest(model="m", messages=[*req1.messages, AssistantMessage("x")]))
    assert len(live) == 2


def test_shards_partition_the_work():
    ids = [f"m|vitabench:delivery:en:T{i}|{t}" for i in range(50) for t in range(4)]
    owners = [[s for s in range(3) if Shard(s, 3).owns(e)] for e in ids]
    assert all(len(o) == 1 for o in owners)
    assert {o[0] for o in owners} == {0, 1, 2}
    with pytest.raises(ValueError):
        Shard.parse("3/3")


async def test_sharded_runs_merge_into_the_unsharded_result(tmp_path):
    from sweepbench.store.merge import merge_stores

    cfg = load_config(None, {**CFG, "trials": 1})
    whole = await run_sweep(cfg, tmp_path / "whole.sqlite")
    for i in range(2):
        await run_sweep(cfg, tmp_path / f"s{i}.sqlite", shard=Shard(i, 2))
    counts = merge_stores(tmp_path / "merged.sqlite", [tmp_path / "s0.sqlite", tmp_path / "s1.sqlite"])
    with RunStore(tmp_path / "whole.sqlite") as w, RunStore(tmp_path / "merged.sqlite") as m:
        assert counts["episodes"] == len(w.episode_status()) == whole.episodes
        assert counts["runs"] == 2  # each shard's run is kept
        assert metrics(build_report(m)) == metrics(build_report(w))
        assert transcripts(m) == transcripts(w)


class _Reply:
    def __init__(self, message):
        self.message, self.usage, self.latency_s = message, Usage(1, 1, 0), 0.01

