"""The openai-SDK transport behind ModelClient: round trip, error mapping, no key leaks."""

from __future__ import annotations

import asyncio
import socket
import traceback

import msgspec
import pytest
from aiohttp import web

pytest.importorskip("openai")

from sweepbench.client.facade import ModelClient
from sweepbench.client.transports.openai import OpenAITransport, sdk_backend
from sweepbench.config import Endpoint
from sweepbench.errors import (
    AuthenticationError,
    BadRequestError,
    ConnectionRefused,
    ContextLengthError,
    ModelError,
    NotFoundError,
    RateLimitError,
    RequestTimeout,
    ServerError,
)
from sweepbench.wire import ChatRequest, ToolSpec, UserMessage

from ...support import serve as serve_handler

CANARY = "sk-canary-openai-0d9e8f7a6b5c"
OK_BODY = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "served",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "hello from sdk"}}],
    "usage": {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24,
              "prompt_tokens_details": {"cached_tokens": 16}},
}


class Server:
    def __init__(self, *replies) -> None:
        self.replies = replies
        self.bodies: list[dict] = []
        self.headers: list[dict] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.bodies.append(msgspec.json.decode(await request.read()))
        self.headers.append(dict(request.headers))
        reply = self.replies[min(len(self.bodies) - 1, len(self.replies) - 1)]
        if isinstance(reply, float):
            import asyncio

            await asyncio.sleep(reply)
            return web.json_response(OK_BODY)
        return reply()


def ok() -> web.Response:
    return web.json_response(OK_BODY)


def err(code: int, message: str = "nope", code_str: str | None = None,
        headers: dict | None = None):
    return lambda: web.json_response(
        {"error": {"message": message, "type": "error", "code": code_str}},
        status=code, headers=headers)


def serve(server: Server):
    return serve_handler(server.handle)


class OpenAIEndpoint(Endpoint, kw_only=True):
    """Until config.Endpoint has the field (proposed to the lead)."""

    transport: str = "openai"


def endpoint(url: str, **kw) -> Endpoint:
    kw.setdefault("name", "sdk-model")
    kw.setdefault("max_retries", 2)
    kw.setdefault("timeout_s", 5.0)
    return OpenAIEndpoint(base_url=url, **kw)


def client_for(ep: Endpoint) -> ModelClient:
    return ModelClient(ep, backoff_base_s=0.001, backoff_max_s=0.01)


def req(**kw) -> ChatRequest:
    kw.setdefault("model", "x")
    kw.setdefault("messages", [UserMessage("hi")])
    return ChatRequest(**kw)


def test_backend_is_aiohttp_when_available() -> None:
    assert sdk_backend() in ("aiohttp", "httpx")


async def test_round_trip_through_the_sdk(monkeypatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_SDK_KEY", CANARY)
    server = Server(ok)
    async with serve(server) as url:
        ep = endpoint(url, model="real", temperature=0.2, api_key_env="SWEEPBENCH_SDK_KEY",
                      extra_body={"top_p": 0.5})
        async with client_for(ep) as client:
            assert isinstance(client._transport, OpenAITransport)
            result = await client.complete(req(
                seed=3, tools=[ToolSpec(function={"name": "f", "parameters": {}})],
                sweepbench={"x": 1}))
            sent = msgspec.json.decode(client.encode(req(
                seed=3, tools=[ToolSpec(function={"name": "f", "parameters": {}})])))
    assert result.message.content == "hello from sdk"
    assert (result.usage.prompt_tokens, result.usage.cached_prompt_tokens) == (20, 16)
    assert result.attempts == 1 and result.statuses == [200]
    assert server.bodies[0] == sent  # every field we encode arrives, nothing else
    assert server.headers[0]["Authorization"] == f"Bearer {CANARY}"


async def test_no_key_sends_no_authorization() -> None:
    server = Server(ok)
    async with serve(server) as url, client_for(endpoint(url)) as client:
        await client.complete(req())
    assert "Authorization" not in server.headers[0]


@pytest.mark.parametrize(
    ("reply", "error", "requests"),
    [
        (err(400, "bad"), BadRequestError, 1),
        (err(400, "maximum context length exceeded"), ContextLengthError, 1),
        (err(401), AuthenticationError, 1),
        (err(404), NotFoundError, 1),
        (err(429, "slow", headers={"Retry-After": "0"}), RateLimitError, 3),
        (err(503), ServerError, 3),
    ],
)
async def test_http_errors_map_into_our_tree(reply, error, requests) -> None:
    server = Server(reply)
    async with serve(server) as url, client_for(endpoint(url)) as client:
        with pytest.raises(ModelError) as info:
            await client.complete(req())
    assert type(info.value) is error and len(server.bodies) == requests


async def test_retry_then_success() -> None:
    server = Server(err(500), err(429), ok)
    async with serve(server) as url, client_for(endpoint(url)) as client:
        result = await client.complete(req())
    assert result.statuses == [500, 429, 200] and result.rate_limited == 1


async def test_connection_refused_and_timeout() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    async with client_for(endpoint(f"http://127.0.0.1:{port}/v1", max_retries=1)) as client:
        with pytest.raises(ConnectionRefused) as info:  # nothing there: not retried
            await client.complete(req())
    assert info.value.attempts == 1 and info.value.__cause__ is not None
    assert f"connection refused by http://127.0.0.1:{port}/v1" in str(info.value)

    server = Server(5.0)
    async with serve(server) as url, client_for(endpoint(url, timeout_s=0.2,
                                                         max_retries=0)) as client:
        with pytest.raises(RequestTimeout):
            await client.complete(req())


async def test_key_never_in_errors(monkeypatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_SDK_KEY", CANARY)
    server = Server(err(401, f"Incorrect API key provided: {CANARY}"))
    async with serve(server) as url, client_for(endpoint(
            url, api_key_env="SWEEPBENCH_SDK_KEY")) as client:
        with pytest.raises(AuthenticationError) as info:
            await client.complete(req())
        text = ("".join(traceback.format_exception(info.value)) + repr(info.value)
                + str(vars(info.value)) + repr(vars(client)) + repr(vars(client._transport)))
    assert "[redacted]" in text and CANARY not in text


# ---- the SDK transport at its edges (unit tests, exact values) ------------------------------


def transport(url: str = "http://127.0.0.1:9/v1", **kw) -> OpenAITransport:
    kw.setdefault("name", "ep")
    kw.setdefault("timeout_s", 7.0)
    kw.setdefault("connect_timeout_s", 2.0)
    kw.setdefault("proxy", "")
    return OpenAITransport(url, **kw)


class Stream:
    """An httpx byte stream double: yields ``chunks``; records whether it was closed."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks, self.closed = chunks, False

    async def __aiter__(self):
        for chunk in self.chunks:
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


async def read(stream) -> list[bytes]:
    return [chunk async for chunk in stream]


async def test_the_body_stream_stops_one_byte_past_the_limit() -> None:
    from sweepbench.client.transports.openai import (
        _capped_stream,
        _httpx_module,
        _TooLarge,
    )

    capped = _capped_stream(_httpx_module().AsyncByteStream)
    assert await read(capped(Stream(b"ab", b"cd"), 4)) == [b"ab", b"cd"]  # the limit exactly
    with pytest.raises(_TooLarge):
        await read(capped(Stream(b"ab", b"cd"), 3))
    inner = Stream(b"x")
    await capped(inner, 1).aclose()
    assert inner.closed


async def test_a_compressed_body_is_gathered_and_unpacked_under_the_limit() -> None:
    import gzip

    from sweepbench.client.transports.openai import (
        _BadBody,
        _capped_stream,
        _httpx_module,
        _TooLarge,
    )

    capped = _capped_stream(_httpx_module().AsyncByteStream)
    packed = gzip.compress(b"y" * 40)
    half = len(packed) // 2
    assert await read(capped(Stream(packed[:half], packed[half:]), 40, "gzip")) == [b"y" * 40]
    with pytest.raises(_TooLarge):  # 40 bytes unpacked over a limit of 39
        await read(capped(Stream(packed), 39, "gzip"))
    with pytest.raises(_BadBody) as info:
        await read(capped(Stream(b"not gzip"), 40, "gzip"))
    assert str(info.value).startswith("body not valid gzip (")


class Response:
    """An httpx response double for the response hooks."""

    def __init__(self, headers: dict[str, str], status_code: int = 200, url: str = "") -> None:
        from sweepbench.client.transports.openai import _httpx_module

        httpx = _httpx_module()
        self.headers = httpx.Headers(headers)
        self.status_code = status_code
        self.stream = Stream(b"body")
        self.request = httpx.Request("POST", url or "http://127.0.0.1:9/v1/chat/completions")


async def test_a_content_length_over_the_limit_is_refused_before_the_body() -> None:
    from sweepbench.client.transports.openai import _cap_hook, _TooLarge

    seen = []
    hook = _cap_hook(10, lambda stream, limit, encoding: seen.append((limit, encoding)) or stream)
    with pytest.raises(_TooLarge):
        await hook(Response({"content-length": "11"}))
    assert seen == []
    await hook(Response({"content-length": "10"}))  # the limit exactly: read, capped
    plain = Response({"content-length": "x"})
    await hook(plain)
    packed = Response({"Content-Encoding": "gzip"})
    await hook(packed)
    assert seen == [(10, ""), (10, ""), (10, "gzip")]
    assert "content-encoding" not in packed.headers and plain.stream.chunks == (b"body",)


def test_a_too_large_is_found_anywhere_in_the_chain_of_causes() -> None:
    from sweepbench.client.transports.openai import _too_large, _TooLarge

    assert _too_large(_TooLarge())
    deep = RuntimeError("top")
    deep.__cause__ = ValueError("middle")
    deep.__cause__.__context__ = _TooLarge()
    assert _too_large(deep)
    implicit = RuntimeError("top")
    implicit.__context__ = _TooLarge()  # during handling, not from
    assert _too_large(implicit)
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__context__, b.__context__ = b, a  # a loop of causes ends
    assert not _too_large(a)
    assert not _too_large(ValueError("alone"))


def test_without_the_sdks_aiohttp_client_the_backend_is_httpx(monkeypatch) -> None:
    import openai

    assert sdk_backend() == "aiohttp"
    monkeypatch.delattr(openai, "DefaultAioHttpClient")
    assert sdk_backend() == "httpx"


async def test_the_sdk_client_is_made_once_with_the_endpoints_settings() -> None:
    import openai

    t = transport(follow_redirects=True)
    client = t._get_client()
    assert t._get_client() is client
    http = client._client
    assert type(http) is type(openai.DefaultAioHttpClient()) and t.backend == "aiohttp"
    assert (client.api_key, str(client.base_url), client.max_retries) == (
        "sweepbench-key-sent-per-request", "http://127.0.0.1:9/v1/", 0)
    assert client.timeout == openai.Timeout(7.0, connect=2.0) == http.timeout
    assert http.event_hooks["request"] == [t._key_hook]
    assert http.event_hooks["response"][:2] == [t._redirect_hook,
                                                http.event_hooks["response"][1]]
    assert (http.follow_redirects, http.max_redirects) == (True, 6)
    assert http.headers["Accept-Encoding"] == "identity"
    await t.aclose()
    assert client.is_closed() and t._client is None
    with pytest.raises(RuntimeError) as info:
        t._get_client()
    assert str(info.value) == "ModelClient for 'ep' is closed"


async def test_the_httpx_backend_and_the_fallback_when_the_aiohttp_one_is_missing(
        monkeypatch) -> None:
    import openai

    t = transport(backend="httpx")
    assert type(t._get_client()._client) is type(openai.DefaultAsyncHttpxClient())
    await t.aclose()

    def stub(**options):
        raise RuntimeError("the aiohttp extra is not installed")

    monkeypatch.setattr(openai, "DefaultAioHttpClient", stub)
    t = transport(backend="aiohttp")
    assert type(t._get_client()._client) is type(openai.DefaultAsyncHttpxClient())
    assert t.backend == "httpx"
    await t.aclose()


def test_a_client_used_from_a_second_loop_is_refused() -> None:
    t = transport()

    async def use() -> None:
        t._get_client()

    asyncio.run(use())
    with pytest.raises(RuntimeError) as info:
        asyncio.run(use())
    assert str(info.value) == ("ModelClient for 'ep' is bound to another event loop; create "
                               "one client per loop")


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_without_a_proxy_of_ours_httpx_takes_none_from_the_environment(scheme,
                                                                             monkeypatch):
    from sweepbench.client.transports.openai import _httpx_module

    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(var, "http://p:3128")
    t = transport(f"{scheme}://127.0.0.1:9/v1", proxy=None)  # loopback: none of ours
    http = t._get_client()._client
    url = _httpx_module().URL(f"{scheme}://127.0.0.1:9/v1/chat/completions")
    assert http._transport_for_url(url) is http._transport
    await t.aclose()


async def test_the_key_goes_only_to_the_endpoints_own_origin() -> None:
    from sweepbench.client.transports.openai import _httpx_module

    httpx = _httpx_module()
    t = transport()
    home = httpx.Request("POST", "http://127.0.0.1:9/v1/x", headers={"Authorization": "k"})
    away = httpx.Request("POST", "https://127.0.0.1:9/v1/x", headers={"Authorization": "k"})
    await t._key_hook(home)
    await t._key_hook(away)
    assert home.headers.get("Authorization") == "k" and "Authorization" not in away.headers
    keyless = httpx.Request("POST", "https://127.0.0.1:9/v1/x")
    await t._key_hook(keyless)  # nothing to take away
    assert "Authorization" not in keyless.headers


async def test_a_body_that_is_not_json_is_refused_naming_the_endpoint() -> None:
    from sweepbench.errors import FatalError

    t = transport()
    with pytest.raises(FatalError) as info:
        await t.post(b"{not json", None)
    assert str(info.value).startswith("ep: request body is not JSON (")
    assert info.value.endpoint == "ep"
    await t.aclose()


async def test_one_deadline_holds_a_body_that_trickles_in() -> None:
    """The SDK's timeouts are per read: bytes every 0.05 s never trip a 0.3 s read timeout,
    so only the deadline over the whole call ends it (at 0.3 s, not after the 2 s body)."""
    async def trickle(request: web.Request) -> web.StreamResponse:
        await request.read()
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        await resp.prepare(request)
        for _ in range(40):
            await resp.write(b" ")
            await asyncio.sleep(0.05)
        await resp.write(msgspec.json.encode(OK_BODY))
        return resp

    async with serve_handler(trickle) as url:
        t = transport(url, timeout_s=0.3)
        with pytest.raises(RequestTimeout) as info:
            await t.post(msgspec.json.encode({"model": "x", "messages": []}), None)
        await t.aclose()
    assert str(info.value) == f"ep: request to {url} timed out (timeout_s 0.3)"
    assert info.value.endpoint == "ep"


async def test_the_headers_hook_tells_the_first_byte_budget() -> None:
    from sweepbench.client.stalls import FLIGHT, Flight
    from sweepbench.client.transports.openai import _first_byte_hook

    flight = Flight()
    token = FLIGHT.set(flight)
    try:
        await _first_byte_hook(Response({}))
    finally:
        FLIGHT.reset(token)
    assert flight.got_first_byte


@pytest.mark.parametrize(("proxy", "auth"), [("http://u:p%40w@p:3128", ("u", "p@w")),
                                             ("http://p:3128", None)])
async def test_our_proxy_is_given_to_the_sdks_client_with_its_credentials(proxy, auth) -> None:
    from sweepbench.client.transports.openai import _httpx_module

    t = transport("http://h.invalid/v1", proxy=proxy, backend="aiohttp")
    http = t._get_client()._client
    chosen = http._transport_for_url(_httpx_module().URL("http://h.invalid/v1/x")).proxy
    assert (str(chosen.url), chosen.auth) == ("http://p:3128", auth)
    await t.aclose()


async def test_a_redirect_followed_is_counted_for_the_call_and_one_not_followed_refused() -> None:
    from sweepbench.client.transports.openai import _HOPS
    from sweepbench.errors import FatalError

    t = transport(follow_redirects=True)
    hops = [2]
    _HOPS.set(hops)
    moved = Response({"Location": "/v2/chat/completions"}, status_code=307)
    await t._redirect_hook(moved)
    await t._redirect_hook(Response({}, status_code=200))
    await t._redirect_hook(Response({"Location": "/v3"}, status_code=304))  # no redirect
    assert hops == [3]
    with pytest.raises(FatalError) as info:
        await transport()._redirect_hook(moved)  # redirects not followed by default
    assert str(info.value).startswith("ep: http://127.0.0.1:9/v1/chat/completions redirects "
                                      "(307) to http://127.0.0.1:9/v2/chat/completions")


async def test_a_reply_over_the_cap_is_refused_naming_the_url_and_the_cap() -> None:
    from sweepbench.errors import FatalError

    async def big(request: web.Request) -> web.StreamResponse:
        await request.read()
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        await resp.prepare(request)  # no length: chunked, counted as it comes
        for _ in range(8):
            await resp.write(b" " * 100)
        await resp.write_eof()
        return resp

    for handler in (big, ok_after_read):
        async with serve_handler(handler) as url:
            t = transport(url, max_reply_bytes=50)
            with pytest.raises(FatalError) as info:
                await t.post(msgspec.json.encode({"model": "x", "messages": []}), None)
            await t.aclose()
        assert str(info.value) == (f"ep: reply from {url} is larger than max_reply_bytes (50); "
                                   "not read further")
        assert info.value.endpoint == "ep"


async def ok_after_read(request: web.Request) -> web.Response:
    await request.read()
    return web.json_response(OK_BODY)  # a length over 50


async def test_a_body_its_encoding_does_not_describe_is_an_invalid_response() -> None:
    from sweepbench.errors import InvalidResponseError

    async def garbled(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=b"not gzip at all", headers={
            "Content-Type": "application/json", "Content-Encoding": "gzip"})

    async with serve_handler(garbled) as url:
        t = transport(url)
        with pytest.raises(InvalidResponseError) as info:
            await t.post(msgspec.json.encode({"model": "x", "messages": []}), None)
        await t.aclose()
    assert str(info.value).startswith(f"ep: response from {url}: body not valid gzip (")
    assert info.value.endpoint == "ep"


async def test_a_refused_proxy_is_named_in_the_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = transport("http://h.invalid/v1", proxy=f"http://127.0.0.1:{port}")
    with pytest.raises(ConnectionRefused) as info:
        await t.post(msgspec.json.encode({"model": "x", "messages": []}), None)
    await t.aclose()
    assert str(info.value) == (f"ep: connection refused by proxy http://127.0.0.1:{port} (for "
                               "http://h.invalid/v1) (is the server running?)")
    assert info.value.endpoint == "ep"


def _sdk_error(kind: str):
    """An error of the SDK's, as its client raises it (``kind``), for the translation tests."""
    import openai

    from sweepbench.client.transports.openai import _httpx_module, _TooLarge

    httpx = _httpx_module()
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(502, request=request, content=b"bad gateway")
    if kind == "too large":
        err = openai.APIConnectionError(request=request)
        err.__cause__ = _TooLarge()
        return err
    if kind == "timeout":
        return openai.APITimeoutError(request=request)
    if kind == "connection":
        err = openai.APIConnectionError(request=request)
        err.__cause__ = OSError("reset")
        return err
    if kind == "bare connection":
        return openai.APIConnectionError(request=request)
    if kind == "validation":
        return openai.APIResponseValidationError(response, None, message="not a completion")
    if kind == "status":
        return openai.APIStatusError("bad gateway", response=response, body=None)
    return openai.OpenAIError("odd")


@pytest.mark.parametrize(("kind", "error", "message"), [
    ("too large", "FatalError", ("ep: reply from http://127.0.0.1:9/v1 is larger than "
                                 "max_reply_bytes (50); not read further")),
    ("timeout", "RequestTimeout", ("ep: request to http://127.0.0.1:9/v1 timed out (openai "
                                   "APITimeoutError)")),
    ("connection", "TransportError", ("ep: connection to http://127.0.0.1:9/v1 failed (openai: "
                                      "OSError)")),
    ("bare connection", "TransportError", ("ep: connection to http://127.0.0.1:9/v1 failed "
                                           "(openai: APIConnectionError)")),
    ("validation", "InvalidResponseError", "ep: invalid response (openai: not a completion)"),
    ("other", "FatalError", "ep: openai SDK error (OpenAIError)"),
])
async def test_each_sdk_error_is_translated_once_naming_the_endpoint(kind, error, message,
                                                                     monkeypatch) -> None:
    from sweepbench import errors

    t = transport(max_reply_bytes=50)
    client = t._get_client()

    async def create(**kw):
        raise _sdk_error(kind)

    monkeypatch.setattr(client.chat.completions.with_raw_response, "create", create)
    with pytest.raises(errors.ModelError) as info:
        await t.post(msgspec.json.encode({"model": "x", "messages": []}), None)
    await t.aclose()
    assert type(info.value) is getattr(errors, error) and str(info.value) == message
    assert info.value.endpoint == "ep"


async def test_an_http_error_from_the_sdk_is_handed_back_as_a_reply(monkeypatch) -> None:
    t = transport()
    client = t._get_client()

    async def create(**kw):
        raise _sdk_error("status")

    monkeypatch.setattr(client.chat.completions.with_raw_response, "create", create)
    status, _, body = await t.post(msgspec.json.encode({"model": "x", "messages": []}), None)
    await t.aclose()
    assert (status, body) == (502, b"bad gateway")
    from sweepbench.client.transports.openai import _HOPS

    assert _HOPS.get() == [0]  # each call counts its redirects from none


async def test_a_connection_failure_through_our_proxy_names_it(monkeypatch) -> None:
    from sweepbench.errors import TransportError

    t = transport(proxy="http://p:3128")
    client = t._get_client()

    async def create(**kw):
        raise _sdk_error("connection")

    monkeypatch.setattr(client.chat.completions.with_raw_response, "create", create)
    with pytest.raises(TransportError) as info:
        await t.post(msgspec.json.encode({"model": "x", "messages": []}), None)
    await t.aclose()
    assert str(info.value) == ("ep: connection to http://127.0.0.1:9/v1 through proxy "
                               "http://p:3128 failed (openai: OSError)")


def test_without_the_sdk_the_transport_says_how_to_get_it(monkeypatch) -> None:
    import sys

    from sweepbench.errors import FatalError

    monkeypatch.setitem(sys.modules, "openai", None)  # import openai: ImportError
    with pytest.raises(FatalError) as info:
        transport()
    assert str(info.value) == ("ep: transport 'openai' needs the openai package: pip install "
                               "'sweepbench[openai]'")
    assert info.value.endpoint == "ep"


def test_a_proxy_that_is_not_http_is_refused_naming_the_endpoint() -> None:
    from sweepbench.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        transport(proxy="socks5://p:1080")
    assert str(info.value) == ("endpoint 'ep': proxy (socks5://p...) is not an http://host:port "
                               "proxy; only http:// proxies are supported")
