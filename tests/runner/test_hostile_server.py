"""A hostile server against both transports: trickling and oversized bodies, bodies that are not
UTF-8 or nest 100,000 deep, and base URLs and timeouts that can never work (issue 9)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time

import pytest
from aiohttp import web

from sweepbench.config import Endpoint, load_config
from sweepbench.errors import ConfigError, FatalError, InvalidResponseError, RequestTimeout
from sweepbench.client.facade import ModelClient
from sweepbench.wire import ChatRequest, UserMessage

from ..support import serve

TRANSPORTS = ["http", "aiohttp", "openai"]
OK_HEAD = b'{"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "'


def client_for(url: str, transport: str, **kw) -> ModelClient:
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout_s", 5.0)
    ep = Endpoint(name="hostile", base_url=url, transport=transport, **kw)
    return ModelClient(ep, backoff_base_s=0.001, backoff_max_s=0.01)


def req() -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage("hi")])


async def trickle(request: web.Request) -> web.StreamResponse:
    """A 200 whose body comes at one byte a second, for a minute."""
    await request.read()
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    await resp.prepare(request)
    try:
        for byte in (OK_HEAD + b"x" * 60)[:60]:
            await resp.write(bytes([byte]))
            await asyncio.sleep(1.0)
    except ConnectionError:
        pass  # the client gave up (as it should)
    return resp


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_trickling_body_is_cut_at_timeout_s(transport) -> None:
    async with serve(trickle) as url, client_for(url, transport, timeout_s=1.5) as client:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            await client.complete(req())
        took = time.monotonic() - t0
    assert 1.4 < took < 4.0, took  # one deadline over the whole body, not one per chunk
    assert "hostile" in str(info.value) and "timed out" in str(info.value)


def big(size: int, *, length: bool):
    """A 200 of ``size`` bytes streamed in 64 KiB chunks, with or without Content-Length."""
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        headers = {"Content-Type": "application/json"}
        if length:
            headers["Content-Length"] = str(size)
        resp = web.StreamResponse(headers=headers)
        await resp.prepare(request)
        handler.sent = len(OK_HEAD)  # type: ignore[attr-defined]
        await resp.write(OK_HEAD)
        chunk = b"y" * 65536
        try:
            while handler.sent < size:  # type: ignore[attr-defined]
                await resp.write(chunk)
                handler.sent += len(chunk)  # type: ignore[attr-defined]
        except (ConnectionError, RuntimeError):
            pass  # the client stopped reading
        return resp
    handler.sent = 0  # type: ignore[attr-defined]
    return handler


@pytest.mark.parametrize("length", [True, False], ids=["content-length", "chunked"])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_reply_over_max_reply_bytes_is_an_error(transport, length) -> None:
    handler = big(40 << 20, length=length)
    async with serve(handler) as url, \
            client_for(url, transport, max_reply_bytes=1 << 20, max_retries=2) as client:
        with pytest.raises(FatalError) as info:
            await client.complete(req())
        await asyncio.sleep(0.2)
    assert "max_reply_bytes" in str(info.value) and "hostile" in str(info.value)
    assert info.value.attempts == 1  # it would be as large again: not retried
    assert handler.sent < 20 << 20  # the read stopped early (socket buffers aside)


@pytest.mark.parametrize("body", [
    OK_HEAD + b'caf\xc3 \xff\xfe"}}]}',  # not UTF-8
    b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"choices": [{"message": {"role": "assistant", "content": "x", "deep": '
    + b"[" * 100_000 + b"]" * 100_000 + b"}}]}",
], ids=["invalid-utf8", "deep-choices", "deep-unknown-field"])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_unreadable_200_bodies_are_invalid_responses_of_the_endpoint(transport, body):
    async def handler(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=body, content_type="application/json")

    async with serve(handler) as url, client_for(url, transport, max_retries=1) as client:
        with pytest.raises(InvalidResponseError) as info:
            await client.complete(req())
    assert str(info.value).startswith("hostile: invalid response from ")
    assert info.value.attempts == 2  # retried like any garbled reply
    assert info.value.__cause__ is None and info.value.__suppress_context__


def write_config(tmp_path, endpoint: str):
    path = tmp_path / "sweep.toml"
    path.write_text('models = ["far"]\n[[endpoints]]\nname = "far"\n' + endpoint)
    return path


@pytest.mark.parametrize("field, message", [
    ('base_url = "ftp://example.com/v1"', "base_url 'ftp://example.com/v1' is not an http"),
    ('base_url = "file:///etc/passwd"', "is not an http:// or https:// URL with a host"),
    ('base_url = "http:///v1"', "is not an http:// or https:// URL with a host"),
    ('base_url = "http://h/v1"\ntimeout_s = 0', "timeout_s must be > 0 seconds, got 0"),
    ('base_url = "http://h/v1"\ntimeout_s = -1', "timeout_s must be > 0 seconds, got -1"),
    ('base_url = "http://h/v1"\ntimeout_s = inf', "timeout_s must be > 0 seconds, got inf"),
    ('base_url = "http://h/v1"\nconnect_timeout_s = 0', "connect_timeout_s must be > 0"),
    ('base_url = "http://h/v1"\nmax_reply_bytes = 0', "max_reply_bytes must be >= 1"),
])
def test_endpoints_that_can_never_work_are_config_errors(tmp_path, field, message) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write_config(tmp_path, field + "\n"))
    assert "endpoint 'far'" in str(info.value) and message in str(info.value)


async def test_a_client_refuses_an_ftp_url_before_any_request() -> None:
    with pytest.raises(ConfigError, match="'ftp://h/v1' is not an http"):
        client_for("ftp://h/v1", "aiohttp")


MEMORY_PROBE = textwrap.dedent("""
    import asyncio, resource, sys
    from aiohttp import web
    from sweepbench.config import Endpoint
    from sweepbench.errors import FatalError
    from sweepbench.client.facade import ModelClient
    from sweepbench.wire import ChatRequest, UserMessage

    SIZE = 50 << 20

    async def handler(request):
        await request.read()
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        await resp.prepare(request)
        chunk, sent = b"z" * 65536, 0
        try:
            while sent < SIZE:
                await resp.write(chunk)
                sent += len(chunk)
        except (ConnectionError, RuntimeError):
            pass
        return resp

    async def main(transport):
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handler)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
        ep = Endpoint(name="big", base_url=url, transport=transport, max_retries=0)
        async with ModelClient(ep) as client:
            await asyncio.sleep(0)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            req = ChatRequest(model="x", messages=[UserMessage("hi")])
            outcomes = await asyncio.gather(*(client.complete(req) for _ in range(4)),
                                            return_exceptions=True)
        await runner.cleanup()
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert all(isinstance(o, FatalError) for o in outcomes), outcomes
        print((after - before) / 1024)  # MiB (ru_maxrss is KiB on Linux)

    asyncio.run(main(sys.argv[1]))
""")


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB is Linux's")
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_four_50mb_replies_in_flight_stay_under_300mb(transport) -> None:
    out = subprocess.run([sys.executable, "-c", MEMORY_PROBE, transport], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    growth_mib = float(out.stdout.strip().splitlines()[-1])
    assert growth_mib < 300, growth_mib
