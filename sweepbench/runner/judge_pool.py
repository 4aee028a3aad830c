"""The judge pool: finished episodes are judged while the sweep is still running.

Episodes are submitted as they finish; a fixed number of worker coroutines judge them with
every configured judge. The deterministic state check runs inline (it is cheap); LLM judges
call their own endpoint through their own client, so judge models keep their own rate limits.
A judgment that raises is told apart by what raised: a judge call (the client already
retried) or a judge that gave no verdict (:class:`~sweepbench.judge.likert.NoVerdict`) leaves
the episode unjudged, judged again by the next run; anything else, and anything the state
check raises, means the episode's output cannot be scored (the model sent something no reader
survives): it fails, with the reason in its details, and still counts in Avg@k.

Judgments are versioned by (judge, method) and live side by side; each carries its judge's
key (the judge endpoint's identity and the method), and a judgment made by a judge with
another key (the endpoint's model changed) is not taken as done.

Judge calls are journaled under the episode's key in a journal of their own
(``judge|<judge>|<method>``), so an interrupted judging resumes without paying twice. Each
judge request (one sliding window, one Likert prompt) is its own conversation, so the journal
matches a recorded answer to a request by a hash of the *whole* request, not by position: a
window whose prompt is unchanged is answered from the journal, a changed one is asked live
and appended, never answered with a stale reply.
"""

from __future__ import annotations

import asyncio
import hashlib
import traceback
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

import msgspec

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.base import Judgment
from sweepbench.datasets.task import Task
from sweepbench.ids import (
    FAILED_TERMINATIONS,
    LIMIT_TERMINATIONS,
    STATE_JUDGE,
    JudgeMethod,
    judge_journal,
)
from sweepbench.judge.likert import NoVerdict
from sweepbench.store.runstore import RunStore
from sweepbench.runner.journal import Replayed
from sweepbench.client.secrets import KEYS
from sweepbench.wire import AssistantMessage, ChatRequest, Usage, encoder


@dataclass(frozen=True)
class JudgeSpec:
    """One judge: ``model`` is an endpoint name (or "state" for the deterministic check);
    ``key`` identifies what judges (the endpoint's identity and the method)."""

    model: str
    method: str
    key: str = ""

    @property
    def is_state(self) -> bool:
        return self.model == STATE_JUDGE

    def applies_to(self, benchmark: str) -> bool:
        return self.is_state or self.method in registry.get(benchmark).judge_methods


STATE = JudgeSpec(STATE_JUDGE, JudgeMethod.STATE, STATE_JUDGE)

# the pool's queue items: (task, episode key, record, benchmark)
_Item = tuple[Task, str, Any]


def state_judgment(task: Task, record: Any) -> Judgment:
    """The benchmark's deterministic check; an episode that could not run to its end (an
    error, a context overflow, a truncated reply) fails it."""
    if record.termination in FAILED_TERMINATIONS:
        return {"passed": False, "score": 0.0,
                "details": {"why": f"episode ended in {record.termination}: {record.error}"}}
    return registry.get(task.benchmark).check(task, record)


def limit_judgment(record: Any) -> Judgment:
    """An LLM judge's verdict on an episode a token or time limit ended: failed, with no
    call (upstream scores an episode its limits ended 0, unjudged)."""
    return {"passed": False, "score": 0.0,
            "details": {"premature": True, "termination": record.termination, "calls": 0}}


def request_hash(req: ChatRequest) -> str:
    """A hash of everything a judge request asks (messages and tools), whole."""
    h = hashlib.blake2b(digest_size=16)
    h.update(encoder.encode(req.messages))
    h.update(b"\x1e")
    if req.tools:
        h.update(encoder.encode(req.tools))
    return h.hexdigest()


class JudgeJournal:
    """One judge's calls for one episode: recorded answers by request hash, live calls
    appended after the recorded ones."""

    def __init__(self, store: RunStore, key: str, spec: JudgeSpec, run_id: str | None) -> None:
        self.store, self.key, self.spec, self.run_id = store, key, spec, run_id
        self.journal = judge_journal(spec.model, spec.method)
        events = store.events(key, journal=self.journal, kind="model_call")
        self.recorded: dict[str, deque[dict]] = defaultdict(deque)
        for e in events:
            self.recorded[e["payload"].get("request_hash", "")].append(e["payload"])
        self.seq = 1 + max((e["seq"] for e in store.events(key, journal=self.journal)),
                           default=-1)
        self.replayed = 0

    def caller(self, complete: Callable[[ChatRequest], Awaitable[Any]],
               observe: Callable[[Any], None] | None) -> Callable[[ChatRequest], Awaitable[Any]]:
        async def call(req: ChatRequest) -> Any:
            digest = request_hash(req)
            if self.recorded.get(digest):
                self.replayed += 1
                rec = self.recorded[digest].popleft()
                return Replayed(msgspec.convert(rec["message"], AssistantMessage),
                                msgspec.convert(rec.get("usage") or {}, Usage),
                                float(rec.get("latency_s") or 0.0), int(rec.get("attempts") or 0))
            result = await complete(req)
            self.store.event(self.key, self.seq, "model_call", encoder.encode({
                "role": "judge", "request_hash": digest, "message": result.message,
                "usage": result.usage, "latency_s": result.latency_s,
                "attempts": getattr(result, "attempts", 1),
                "statuses": getattr(result, "statuses", None)}),
                journal=self.journal, run_id=self.run_id, endpoint=self.spec.model)
            self.seq += 1
            await self.store.flush()
            if observe is not None:
                observe(result)
            return result

        return call


def _noting(call: Callable[[ChatRequest], Awaitable[Any]],
            raised: list[BaseException]) -> Callable[[ChatRequest], Awaitable[Any]]:
    """``call``, remembering in ``raised`` every exception that escapes it."""
    async def noted(req: ChatRequest) -> Any:
        try:
            return await call(req)
        except Exception as exc:
            raised.append(exc)
            raise
    return noted


class JudgePool:
    """Judges submitted episodes with every judge spec; ``drain()`` waits for all of them."""

    def __init__(self, store: RunStore, run_id: str | None, *, judges: list[JudgeSpec],
                 clients: dict[str, Any], workers: int = 16, data_dir: Path | None = None,
                 on_judged: Callable[[str, JudgeSpec, dict], None] | None = None,
                 observe: Callable[[str, Any], None] | None = None,
                 keys: list[str] | None = None) -> None:
        self.store, self.run_id = store, run_id
        self.judges = judges
        self.clients = clients
        self.data_dir = data_dir
        self.on_judged = on_judged or (lambda key, spec, judgment: None)
        self.observe = observe  # told (endpoint, result) of every live judge call
        self.queue: asyncio.Queue[_Item | None] = asyncio.Queue()
        self.n_workers = max(1, workers)
        # done: made by the same judge (same key) without error; a failed one is tried again
        current = {(j.model, j.method): j.key for j in judges}
        self.done = {(key, judge, method) for key, judge, method, judge_key, error
                     in store.judgment_keys(keys)
                     if not error and current.get((judge, method)) in (None, judge_key)}
        self.judged = self.failed = 0
        self.failures: dict[tuple[str, str], int] = defaultdict(int)
        self._workers: list[asyncio.Task] = []
        self._states: dict[str, Judgment] = {}  # key -> state check made elsewhere

    def start(self) -> None:
        self._workers = [asyncio.create_task(self._work()) for _ in range(self.n_workers)]

    def submit(self, task: Task, key: str, record: Any, *, fresh: bool = False,
               state: Judgment | None = None) -> None:
        """Judge ``record`` (the episode ``key`` of ``task``; None: the stored record, read
        when a worker takes it, so a pool holds one record per worker however many it is
        given); ``fresh``: it was just (re)run, so judgments of an earlier record do not
        count; ``state``: its state check, already made (by the Ray worker that ran it)."""
        if fresh:
            for j in self.judges:
                self.done.discard((key, j.model, j.method))
        if state is not None:
            self._states[key] = state
        self.queue.put_nowait((task, key, record))

    def pending(self, key: str, benchmark: str) -> bool:
        """Whether some judge that applies to the episode has not judged it yet."""
        return any((key, j.model, j.method) not in self.done
                   for j in self.judges if j.applies_to(benchmark))

    async def drain(self) -> None:
        """Wait until every submitted episode is judged, then stop the workers."""
        for _ in self._workers:
            self.queue.put_nowait(None)
        await asyncio.gather(*self._workers)

    def cancel(self) -> None:
        """Stop judging now (the sweep was interrupted): judgments in flight are not recorded,
        so the next run makes them."""
        for worker in self._workers:
            worker.cancel()

    async def _work(self) -> None:
        while (item := await self.queue.get()) is not None:
            task, key, record = item
            if record is None:  # a stored episode: its record read when its turn comes
                record = self.store.records([key]).get(key)
                if record is None:  # not finished, or it does not decode (said by the store)
                    continue
            for spec in self.judges:
                if spec.applies_to(task.benchmark) and (key, spec.model, spec.method) not in self.done:
                    await self._judge(task, key, record, spec)

    def _store(self, key: str, spec: JudgeSpec, judgment: Judgment) -> None:
        self.store.judgment(key, judge=spec.model, method=spec.method,
                            passed=judgment["passed"], score=judgment["score"],
                            details=judgment["details"], run_id=self.run_id, judge_key=spec.key)

    async def _judge(self, task: Task, key: str, record: Any, spec: JudgeSpec) -> None:
        judge_raised: list[BaseException] = []  # what escaped the judge's own calls
        try:
            if spec.is_state:
                judgment = self._states.pop(key, None) or state_judgment(task, record)
            else:  # an episode that ended too early gets the benchmark's verdict, no call
                benchmark = registry.get(task.benchmark)
                judgment = (limit_judgment(record) if record.termination in LIMIT_TERMINATIONS
                            else benchmark.premature_judgment(task, record))
                if judgment is None:
                    journal = JudgeJournal(self.store, key, spec, self.run_id)
                    observe = ((lambda result: self.observe(spec.model, result))
                               if self.observe else None)
                    call = _noting(journal.caller(self.clients[spec.model].complete, observe),
                                   judge_raised)
                    judgment = await benchmark.judge(task, record, spec.method, call,
                                                     data_dir=self.data_dir)
        except Exception as exc:  # recorded, never a crash
            why = KEYS.scrub(traceback.format_exception_only(exc)[-1].strip())
            if exc in judge_raised or isinstance(exc, NoVerdict):  # the judge could not judge
                judgment = {"passed": None, "score": None, "details": {"error": why}}
            else:  # the episode could not be scored: a failure with its reason
                judgment = {"passed": False, "score": 0.0,
                            "details": {"why": f"the episode could not be scored: {why}"}}
        details = judgment["details"] or {}  # a judgment without details has none to say
        if not spec.is_state and judgment["passed"] is None and judgment["score"] is None:
            # no verdict (unreadable output, a failed call): unjudged, tried again on a rerun
            why = details.get("error") or details.get("unjudged") or "the judge gave no verdict"
            details = {**details, "error": why}
            self.failed += 1
            self.failures[spec.model, spec.method] += 1
        judgment = {**judgment, "details": details}
        try:
            self._store(key, spec, judgment)
        except (TypeError, ValueError) as exc:  # details no JSON holds (a lone surrogate)
            kept = "error" if "error" in details else "unstorable"
            judgment = {**judgment, "details": {
                kept: f"the verdict's details could not be stored: {exc}"}}
            self._store(key, spec, judgment)
        self.done.add((key, spec.model, spec.method))
        self.judged += 1
        self.on_judged(key, spec, judgment)
