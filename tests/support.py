"""Helpers shared by the client, runner and devserver tests (imported, not a conftest)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

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
    """Endpoint entries that turn ramp-down backups off for these scripted models, for tests
    that count the reference server's requests as one per journaled call (a backup is one
    more request for a call)."""
    return [{"name": name, "backups": 0, "max_concurrency": 1 << 16} for name in names]
