"""Hostile endpoints against each transport: compression bombs (class 1), redirects (class 9),
and proxies (0: the first-hour issue's proxy support, checked the same way).

Each attack serves its answer from an aiohttp server on 127.0.0.1 and sends one request
through ModelClient with the transport named in the attack.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import os
import struct
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path

from _base import Attack
from aiohttp import web

from sweepbench.client.facade import ModelClient
from sweepbench.client.transports.base import DEFAULT_MAX_REPLY_BYTES
from sweepbench.config import Endpoint
from sweepbench.devserver.proxy import ForwardProxy
from sweepbench.errors import ModelError
from sweepbench.wire import ChatRequest, UserMessage

TRANSPORTS = ("http", "aiohttp", "openai")
CAP = DEFAULT_MAX_REPLY_BYTES
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def _serve(handler: Handler) -> tuple[web.AppRunner, str]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/v1"


async def _call(url: str, transport: str, **kw) -> str:
    """One chat request; what it ended in (an error's message, or the reply's content)."""
    ep = Endpoint(name="hostile", base_url=url, transport=transport, max_retries=0,
                  timeout_s=5.0, **kw)
    async with ModelClient(ep) as client:
        try:
            result = await client.complete(ChatRequest(model="x", messages=[UserMessage("hi")]))
        except ModelError as err:
            return f"{type(err).__name__}: {err}"
    return f"reply: {result.message.content}"


# ---- class 1: a 1 MB gzip body that unpacks to 1 GiB ----------------------------------------


@functools.cache
def _bomb() -> bytes:
    """One gzip member: 1 GiB of zeros in ~1 MB, made in milliseconds from one deflated MiB
    repeated (a full flush makes each copy stand alone)."""
    zero = bytes(1 << 20)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = deflate.compress(zero) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(1024):
        crc = zlib.crc32(zero, crc)
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + block * 1024 + b"\x03\x00"
            + struct.pack("<II", crc, (1 << 30) & 0xFFFFFFFF))


def _gzip_bomb(transport: str) -> Callable[[Path], tuple[str, bool]]:
    body = _bomb()

    async def attack() -> tuple[str, bool]:
        async def handler(request: web.Request) -> web.Response:
            await request.read()
            return web.Response(body=body, headers={"Content-Type": "application/json",
                                                    "Content-Encoding": "gzip"})

        runner, url = await _serve(handler)
        if transport == "openai":  # its import is not what is measured
            import sweepbench.client.transports.openai  # noqa: F401
            import openai  # noqa: F401
        try:
            tracemalloc.start()
            got = await _call(url, transport)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            await runner.cleanup()
        stopped = "larger than max_reply_bytes" in got
        held = stopped and peak < 4 * CAP
        return f"{'size error' if stopped else got}; peak {peak / 2**20:.0f} MiB", held

    return lambda _tmp: asyncio.run(attack())


# ---- class 9: redirects -----------------------------------------------------------------------


def _redirect(transport: str, status: int, follow: bool,
              elsewhere: bool) -> Callable[[Path], tuple[str, bool]]:
    """The endpoint answers ``status`` to a chat endpoint on the same server (or, with
    ``elsewhere``, on another port); held: not followed (an error naming the target, nothing
    sent there) or, followed, a POST of the same body there, the key only on its own origin."""

    async def attack() -> tuple[str, bool]:
        seen: list[tuple[str, str, bool]] = []  # method, path, key sent

        async def handler(request: web.Request) -> web.Response:
            await request.read()
            seen.append((request.method, request.path, "Authorization" in request.headers))
            if request.path == "/v1/chat/completions":
                return web.Response(status=status, headers={"Location": target})
            return web.json_response(_REPLY)

        runner, url = await _serve(handler)
        other, other_url = await _serve(handler)
        target = (other_url if elsewhere else url).replace("/v1", "/v2") + "/chat/completions"
        try:
            got = await _call(url, transport, follow_redirects=follow,
                              api_key_env="SWEEPBENCH_HOSTILE_KEY")
        finally:
            await runner.cleanup()
            await other.cleanup()
        after = seen[1:]
        if not (follow and status in (307, 308)):
            held = f"redirects ({status}) to {target}; not followed" in got and not after
            return ("error naming the target" if held else got) + f"; {len(seen)} request", held
        held = got == "reply: ok" and after == [("POST", "/v2/chat/completions", not elsewhere)]
        sent = ", ".join(f"{m} {p} {'with' if k else 'without'} the key" for m, p, k in after)
        return f"{got}; then {sent or 'nothing'}", held

    def run(_tmp: Path) -> tuple[str, bool]:
        os.environ["SWEEPBENCH_HOSTILE_KEY"] = "sk-hostile-canary-4c3b2a1"
        try:
            return asyncio.run(attack())
        finally:
            del os.environ["SWEEPBENCH_HOSTILE_KEY"]

    return run


# ---- 0: proxies (the first-hour issue) ---------------------------------------------------------

_PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
               "ALL_PROXY", "no_proxy", "NO_PROXY")
_NAME = "model.invalid"  # not loopback, so the environment's proxy applies; never resolves


def _proxied(transport: str, case: str) -> Callable[[Path], tuple[str, bool]]:
    """``case``: "env" (HTTP_PROXY with credentials carries the request), "no_proxy" (NO_PROXY
    names the host: the proxy is not used), "endpoint" (the endpoint's proxy wins over a dead
    HTTP_PROXY)."""

    async def attack() -> tuple[str, bool]:
        async def handler(request: web.Request) -> web.Response:
            await request.read()
            leaked.append("Proxy-Authorization" in request.headers)
            return web.json_response(_REPLY)

        leaked: list[bool] = []
        runner, url = await _serve(handler)
        try:
            async with ForwardProxy({_NAME: "127.0.0.1"}) as proxy:
                host = proxy.url.removeprefix("http://")
                kw = {}
                if case == "endpoint":
                    os.environ["HTTP_PROXY"] = "http://127.0.0.1:9"  # nothing listens there
                    kw["proxy"] = proxy.url
                else:
                    os.environ["HTTP_PROXY"] = f"http://agent:{_SECRET}@{host}"
                if case == "no_proxy":
                    os.environ["NO_PROXY"] = f"localhost,{_NAME}"
                got = await _call(url.replace("127.0.0.1", _NAME), transport, **kw)
        finally:
            await runner.cleanup()
        through = len(proxy.seen)
        if case == "no_proxy":
            held = through == 0 and got.startswith(("TransportError", "RequestTimeout"))
            return f"{through} via proxy; direct ({got.split(':')[0]})", held
        creds = proxy.seen[0][2] == "Basic " + base64.b64encode(
            f"agent:{_SECRET}".encode()).decode() if case == "env" and proxy.seen else True
        held = got == "reply: ok" and through == 1 and creds and not any(leaked)
        return f"{got}; {through} via proxy", held

    def run(_tmp: Path) -> tuple[str, bool]:
        saved = {v: os.environ.pop(v) for v in _PROXY_VARS if v in os.environ}
        try:
            return asyncio.run(attack())
        finally:
            for v in _PROXY_VARS:
                os.environ.pop(v, None)
            os.environ.update(saved)

    return run


_SECRET = "pr0xy-s3cret-7a6b"
_REPLY = {"id": "r", "object": "chat.completion", "created": 0, "model": "m",
          "choices": [{"index": 0, "finish_reason": "stop",
                       "message": {"role": "assistant", "content": "ok"}}]}

ATTACKS = [
    *(Attack(1, f"{t}: 1 MB gzip body, 1 GiB unpacked", "size error; < 32 MiB held (8 MiB cap)",
             _gzip_bomb(t)) for t in TRANSPORTS),
    *(Attack(9, f"{t}: 302 on a chat request", "error naming the target; nothing sent there",
             _redirect(t, 302, False, False)) for t in TRANSPORTS),
    *(Attack(9, f"{t}: 307 to another port", "error naming the target; nothing sent there",
             _redirect(t, 307, False, True)) for t in TRANSPORTS),
    *(Attack(9, f"{t}: 302, follow_redirects on", "still an error (a 302 would be a GET)",
             _redirect(t, 302, True, False)) for t in TRANSPORTS),
    *(Attack(9, f"{t}: 307 to another port, following", "same POST there, without the key",
             _redirect(t, 307, True, True)) for t in TRANSPORTS),
    *(Attack(0, f"{t}: HTTP_PROXY with credentials", "through it; creds to the proxy only",
             _proxied(t, "env")) for t in TRANSPORTS),
    *(Attack(0, f"{t}: NO_PROXY names the host", "not through the proxy",
             _proxied(t, "no_proxy")) for t in TRANSPORTS),
    *(Attack(0, f"{t}: endpoint proxy, dead HTTP_PROXY", "through the endpoint's proxy",
             _proxied(t, "endpoint")) for t in TRANSPORTS),
]
