"""A local server standing in for every provider's base URL: ``http://127.0.0.1:PORT/<tag>/v1``
answers chat completions (and the preflight's ``GET /models``) for any ``<tag>``, on a thread
and loop of its own (the CLI runs a loop of its own). It records, per request, the tag (which
base URL was used), the model sent and the Authorization header, and the most requests in
flight at once per model."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

from aiohttp import web

from sweepbench.client.transports.memory import completion
from sweepbench.runner.preflight import PROBE_MESSAGE
from tests.support import thread_app


class StandIn:
    """What the server saw; ``reply`` and ``usage`` are what it answers, after ``delay_s``."""

    def __init__(self, reply: str = "###STOP###", usage: dict | None = None,
                 delay_s: float = 0.0) -> None:
        self.reply, self.delay_s = reply, delay_s
        self.usage = usage or {"prompt_tokens": 100, "completion_tokens": 10,
                               "total_tokens": 110}
        self.seen: list[tuple[str, str, str | None]] = []  # (tag, model, authorization)
        self.probes: list[tuple[str, str | None]] = []  # (tag, authorization)
        self.in_flight: dict[str, int] = defaultdict(int)
        self.peak: dict[str, int] = defaultdict(int)
        self.url = ""

    def base_url(self, tag: str) -> str:
        return f"{self.url}/{tag}/v1"

    async def chat(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        model = body["model"]
        if body["messages"] == [{"role": "user", "content": PROBE_MESSAGE}]:  # preflight's
            self.probes.append((request.match_info["tag"], request.headers.get("Authorization")))
            return web.json_response(completion("OK", usage=self.usage))
        self.seen.append((request.match_info["tag"], model,
                          request.headers.get("Authorization")))
        self.in_flight[model] += 1
        self.peak[model] = max(self.peak[model], self.in_flight[model])
        try:
            await asyncio.sleep(self.delay_s)
        finally:
            self.in_flight[model] -= 1
        return web.json_response(completion(self.reply, usage=self.usage))

    async def models(self, request: web.Request) -> web.Response:
        self.probes.append((request.match_info["tag"], request.headers.get("Authorization")))
        return web.json_response({"object": "list", "data": []})


@contextmanager
def stand_in(**options) -> Iterator[StandIn]:
    server = StandIn(**options)

    def app() -> web.Application:
        app = web.Application()
        app.router.add_post("/{tag:.+}/v1/chat/completions", server.chat)
        app.router.add_get("/{tag:.+}/v1/models", server.models)
        return app

    with thread_app(app) as url:
        server.url = url
        yield server
