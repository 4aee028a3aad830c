"""Helpers shared by the client, runner and devserver tests (imported, not a conftest)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

import msgspec
from aiohttp import web


@asynccontextmanager
async def serve(handler) -> AsyncIterator[str]:
    """An aiohttp server on a free port answering chat completions with ``handler``; yields
    its base URL (``http://127.0.0.1:PORT/v1``)."""
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    finally:
        await runner.cleanup()


@contextmanager
def thread_app(app: Callable[[], web.Application]) -> Iterator[str]:
    """The aiohttp application ``app()`` served on 127.0.0.1 from a thread and loop of its own
    (for tests of the CLI, which runs a loop of its own); yields ``http://127.0.0.1:PORT``."""
    ready = threading.Event()
    state: dict = {}

    def run() -> None:
        loop = asyncio.new_event_loop()
        state["loop"] = loop
        runner = web.AppRunner(app(), access_log=None, shutdown_timeout=0.1)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        state["url"] = f"http://127.0.0.1:{runner.addresses[0][1]}"
        ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield state["url"]
    finally:
        state["loop"].call_soon_threadsafe(state["loop"].stop)
        thread.join(10)


class FakeClock:
    """Time moves only when someone sleeps (by what they sleep) or the test says so."""

    def __init__(self, t: float = 1000.0) -> None:
        self.t = t
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += max(0.0, seconds)
        await asyncio.sleep(0)

    def advance(self, seconds: float) -> None:
        self.t += seconds


def without_backups(*names: str) -> list[dict]:
    """Endpoint entries that turn ramp-down backups and hedging off for these scripted models,
    for tests that count the reference server's requests as one per journaled call (a backup
    or a hedged copy is one more request for a call, and a loaded machine's latency spikes
    set hedges off)."""
    return [{"name": name, "backups": 0, "hedge": False, "max_concurrency": 1 << 16}
            for name in names]


RESUME = {"models": ["scripted/oracle", "scripted/noisy:0.3"], "trials": 2,
          "max_concurrency": 8, "reference_latency_s": 0.005,  # a request per call: no backups
          "endpoints": without_backups("scripted/oracle", "scripted/noisy:0.3", "scripted/user")}
"""A small sweep's config for the store's resume tests (interrupted, then continued)."""


def transcripts(store, run_id: str) -> dict[str, bytes]:
    """``model|task|trial`` -> the encoded messages of each episode ``run_id`` selected."""
    return {f"{r.model}|{r.task_id}|{r.trial}": msgspec.json.encode(r.messages)
            for r in store.episodes(run_id)}


async def interrupt_and_continue(tmp_path, interrupt, between, **store) -> str | None:
    """The ``RESUME`` sweep run whole, then into another store interrupted (the ``interrupt``
    fixture), ``between(path)``, and continued: every transcript the same as the whole run's,
    no journaled call paid twice, each stored once. ``store``: the stores' keyword arguments.
    Returns what opening the interrupted store migrated."""
    from sweepbench.config import load_config
    from sweepbench.runner.sweep import Sweep
    from sweepbench.store.runstore import RunStore

    cfg = load_config(None, RESUME)
    with RunStore(tmp_path / "a.sqlite") as a:  # the reference: one uninterrupted run
        whole = Sweep(cfg, a)
        await whole.run()
        expected = transcripts(a, whole.run_id)
        total = sum(whole.reference.requests.values())
    path = tmp_path / "b.sqlite"
    with RunStore(path, **store) as b:
        await interrupt(Sweep(cfg, b))
        await b.flush()
        assert "running" in b.episode_status().values()
        recorded = len(b.model_calls())
    between(path)
    with RunStore(path, create=False, **store) as b:
        sweep = Sweep(cfg, b)
        outcome = await sweep.run()
        assert outcome.resumed > 0 and outcome.replayed_calls > 0
        assert sum(sweep.reference.requests.values()) == total - recorded  # none paid twice
        assert transcripts(b, sweep.run_id) == expected
        assert len(b.model_calls()) == total  # the replayed calls are stored once
        assert b.damaged == []
        return b.migrated


def call_facts(db: sqlite3.Connection) -> list[tuple]:
    """Every ``call_facts`` row (schema 6) with its texts in place of their ids (which differ
    between a store that wrote them as it went and one that was filled at once)."""
    text = "(SELECT text FROM fact_texts WHERE id = c.{})".format
    return db.execute(
        f"SELECT c.ep, c.journal, c.seq, c.valid, {text('run_id')}, {text('endpoint')}, c.ts, "
        f"{text('role')}, c.prompt, c.completion, c.cached, c.latency_s, c.attempts, "
        f"{text('statuses')}, c.stalls, c.replica, c.failures FROM call_facts c "
        "ORDER BY c.ep, c.journal, c.seq").fetchall()
