"""Proxies on every transport (client/transports/proxy.py decides), through a real forwarding
proxy on 127.0.0.1 (devserver/proxy.py): the environment's variables, NO_PROXY, loopback
hosts, an endpoint's own ``proxy``, and proxy credentials that are never shown."""

from __future__ import annotations

import base64
import json
import os
import socket
import ssl
import subprocess
import sys
import textwrap
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from sweepbench.client.facade import ModelClient
from sweepbench.config import Endpoint
from sweepbench.devserver.proxy import ForwardProxy
from sweepbench.errors import ConfigError, ConnectionRefused, FatalError, TransportError
from sweepbench.wire import ChatRequest, UserMessage

from ...support import serve
from ..rig import OK_BODY

TRANSPORTS = ["http", "aiohttp", "openai"]
NAME = "model.invalid"  # not a loopback host (those never take the environment's proxy)
KEY = "sk-canary-proxy-test-5e4d3c2b"
SECRET = "pa@ss-s3cret-9911"
PROXY_VARS = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
              "ALL_PROXY", "no_proxy", "NO_PROXY"]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch) -> None:
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SWEEPBENCH_PROXY_KEY", KEY)


class Model:
    """The endpoint: answers every request; records the headers it came with."""

    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []

    async def handle(self, request: web.Request) -> web.Response:
        await request.read()
        self.headers.append(dict(request.headers))
        return web.json_response(OK_BODY)


def dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def client_for(base: str, transport: str, **kw) -> ModelClient:
    ep = Endpoint(name="prox", base_url=base, transport=transport, max_retries=0,
                  timeout_s=5.0, connect_timeout_s=2.0, api_key_env="SWEEPBENCH_PROXY_KEY",
                  **kw)
    return ModelClient(ep)


def req() -> ChatRequest:
    return ChatRequest(model="x", messages=[UserMessage("hi")])


def named(url: str) -> str:
    """``url`` with its loopback host replaced by NAME (which the proxy maps back)."""
    return url.replace("127.0.0.1", NAME)


@pytest.mark.parametrize("var", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_environments_proxy_carries_the_request(transport, var, monkeypatch) -> None:
    model = Model()
    async with serve(model.handle) as url, ForwardProxy({NAME: "127.0.0.1"}) as proxy:
        monkeypatch.setenv(var, proxy.url)
        async with client_for(named(url), transport) as client:
            result = await client.complete(req())
    assert result.message.content == "hello"
    assert proxy.seen == [("POST", named(url) + "/chat/completions", None)]
    assert model.headers[0]["Authorization"] == f"Bearer {KEY}"  # the key reaches the model


@pytest.mark.parametrize("no_proxy", [NAME, ".invalid", "invalid", "*", f"a.example, {NAME}"])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_no_proxy_sends_the_request_straight_to_the_host(transport, no_proxy,
                                                               monkeypatch) -> None:
    async with serve(Model().handle) as url, ForwardProxy({NAME: "127.0.0.1"}) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", no_proxy)
        async with client_for(named(url), transport) as client:
            with pytest.raises(TransportError) as info:  # NAME does not resolve: went direct
                await client.complete(req())
    assert proxy.seen == []
    assert named(url) in str(info.value) and "proxy" not in str(info.value)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_loopback_host_never_takes_the_environments_proxy(transport,
                                                                  monkeypatch) -> None:
    async with serve(Model().handle) as url, ForwardProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("ALL_PROXY", proxy.url)
        for base in (url, url.replace("127.0.0.1", "localhost")):
            async with client_for(base, transport) as client:
                assert (await client.complete(req())).message.content == "hello"
    assert proxy.seen == []


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_endpoints_proxy_wins_over_the_environment(transport, monkeypatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{dead_port()}")  # nothing there
    async with serve(Model().handle) as url, ForwardProxy() as proxy:
        async with client_for(url, transport, proxy=proxy.url) as client:  # loopback too
            assert (await client.complete(req())).message.content == "hello"
    assert proxy.seen == [("POST", url + "/chat/completions", None)]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_endpoints_empty_proxy_ignores_the_environment(transport, monkeypatch) -> None:
    async with serve(Model().handle) as url, ForwardProxy({NAME: "127.0.0.1"}) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        async with client_for(named(url), transport, proxy="") as client:
            with pytest.raises(TransportError):
                await client.complete(req())
    assert proxy.seen == []


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_proxy_credentials_go_to_the_proxy_only(transport, monkeypatch) -> None:
    model = Model()
    async with serve(model.handle) as url, ForwardProxy({NAME: "127.0.0.1"}) as proxy:
        host = proxy.url.removeprefix("http://")
        monkeypatch.setenv("HTTP_PROXY", f"http://agent:{SECRET.replace('@', '%40')}@{host}")
        async with client_for(named(url), transport) as client:
            assert (await client.complete(req())).message.content == "hello"
    expected = "Basic " + base64.b64encode(f"agent:{SECRET}".encode()).decode()
    assert proxy.seen == [("POST", named(url) + "/chat/completions", expected)]
    assert "Proxy-Authorization" not in model.headers[0]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_proxy_credentials_never_appear_in_errors(transport, monkeypatch) -> None:
    port = dead_port()
    monkeypatch.setenv("HTTP_PROXY", f"http://agent:{SECRET}@127.0.0.1:{port}")
    base = f"http://{NAME}:9/v1"
    async with client_for(base, transport) as client:
        with pytest.raises(ConnectionRefused) as info:
            await client.complete(req())
        text = ("".join(traceback.format_exception(info.value)) + repr(info.value)
                + str(vars(info.value)) + repr(client._transport.__dict__.get("_proxy")))
    where = base if transport == "openai" else base + "/chat/completions"
    assert str(info.value) == (f"prox: connection refused by proxy http://127.0.0.1:{port} "
                               f"(for {where}) (is the server running?)")
    assert SECRET not in text and "s3cret" not in text


@pytest.mark.parametrize(("proxy", "message"), [
    ("http://u:p@proxy.corp:3128", "endpoint 'prox': proxy holds credentials; a secret belongs "
                                   "in the environment (HTTPS_PROXY / HTTP_PROXY), not the "
                                   "config"),
    ("socks5://proxy.corp:1080", "endpoint 'prox': proxy must be an http://host:port URL"),
])
def test_a_proxy_in_the_config_is_checked(proxy, message) -> None:
    with pytest.raises(ConfigError) as info:
        Endpoint(name="prox", base_url="http://h/v1", proxy=proxy).validate()
    assert str(info.value) == message


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_environment_proxy_that_is_not_http_is_a_config_error(transport,
                                                                 monkeypatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", f"socks5://agent:{SECRET}@proxy.corp:1080")
    with pytest.raises(ConfigError) as info:
        client_for("https://api.example/v1", transport)
    assert str(info.value) == ("endpoint 'prox': the environment's https_proxy "
                               "(socks5://proxy.corp...) is not an http://host:port proxy; "
                               "only http:// proxies are supported")


# ---- https:// through the default transport's own CONNECT tunnel ------------------------------


@pytest.fixture
def tls_model(tmp_path, monkeypatch):
    """An SSL context for a server certified as NAME, trusted by this process's defaults."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", f"/CN={NAME}", "-addext",
                    f"subjectAltName=DNS:{NAME}"], check=True, capture_output=True, timeout=30)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


@asynccontextmanager
async def serve_tls(handler, context: ssl.SSLContext) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context).start()
    try:
        yield f"https://{NAME}:{runner.addresses[0][1]}/v1"
    finally:
        await runner.cleanup()


async def test_https_goes_through_a_connect_tunnel_with_the_proxys_credentials(
        tls_model, monkeypatch) -> None:
    model = Model()
    async with serve_tls(model.handle, tls_model) as url, ForwardProxy(
            {NAME: "127.0.0.1"}, password=f"agent:{SECRET}") as proxy:
        host = proxy.url.removeprefix("http://")
        monkeypatch.setenv("HTTPS_PROXY", f"http://agent:{SECRET.replace('@', '%40')}@{host}")
        async with client_for(url, "http") as client:
            results = [await client.complete(req()) for _ in range(2)]
    assert [r.message.content for r in results] == ["hello", "hello"]
    authorization = "Basic " + base64.b64encode(f"agent:{SECRET}".encode()).decode()
    port = url.split(":")[2].split("/")[0]
    assert proxy.seen == [("CONNECT", f"{NAME}:{port}", authorization)]  # one tunnel, kept
    assert model.headers[0]["Authorization"] == f"Bearer {KEY}"
    assert "Proxy-Authorization" not in model.headers[0]


async def test_a_proxy_refusing_the_tunnel_for_credentials_is_a_fatal_error(
        tls_model, monkeypatch) -> None:
    async with serve_tls(Model().handle, tls_model) as url, ForwardProxy(
            {NAME: "127.0.0.1"}, password=f"agent:{SECRET}") as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)  # no credentials
        async with client_for(url, "http") as client:
            with pytest.raises(FatalError) as info:
                await client.complete(req())
    assert str(info.value) == (
        f"prox: proxy {proxy.url} would not tunnel to {url}/chat/completions (HTTP 407): its "
        "credentials go in HTTPS_PROXY (http://user:password@host:port)")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_proxy_echoing_its_credentials_back_has_them_scrubbed(transport,
                                                                      monkeypatch) -> None:
    async def echo_407(request: web.Request) -> web.Response:  # a proxy, answering 407
        await request.read()
        auth = request.headers.get("Proxy-Authorization")
        return web.Response(status=407, text=f"denied: {SECRET} ({auth}) {dict(request.headers)}")

    async with serve(echo_407) as url:
        proxy = url.removesuffix("/v1").removeprefix("http://")
        monkeypatch.setenv("HTTP_PROXY", f"http://agent:{SECRET.replace('@', '%40')}@{proxy}")
        async with client_for(f"http://{NAME}:9/v1", transport) as client:
            with pytest.raises(FatalError) as info:
                await client.complete(req())
    text = str(info.value) + "".join(str(f) for f in info.value.failures)
    assert str(info.value).startswith("prox: HTTP 407: denied: ")
    assert "[redacted]" in text and SECRET not in text and "s3cret" not in text
    encoded = base64.b64encode(f"agent:{SECRET}".encode()).decode()
    assert encoded[8:24] not in text  # nor its base64, as the header carried it


HTTPS_EVERY_TRANSPORT = textwrap.dedent("""
    import asyncio, base64, json, os, ssl, sys
    from aiohttp import web
    from sweepbench.client.facade import ModelClient
    from sweepbench.config import Endpoint
    from sweepbench.devserver.proxy import ForwardProxy
    from sweepbench.wire import ChatRequest, UserMessage

    cert, key, name, secret = sys.argv[1:5]

    async def handle(request):
        await request.read()
        return web.json_response({"choices": [{"index": 0, "finish_reason": "stop", "message":
            {"role": "assistant", "content": "hello " + str(
                "Proxy-Authorization" in request.headers)}}]})

    async def main():
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context).start()
        url = f"https://{name}:{runner.addresses[0][1]}/v1"
        out = {}
        for transport in ("http", "aiohttp", "openai"):
            async with ForwardProxy({name: "127.0.0.1"}, password=f"agent:{secret}") as proxy:
                host = proxy.url.removeprefix("http://")
                os.environ["HTTPS_PROXY"] = f"http://agent:{secret}@{host}"
                ep = Endpoint(name="prox", base_url=url, transport=transport, max_retries=0)
                async with ModelClient(ep) as client:
                    result = await client.complete(
                        ChatRequest(model="x", messages=[UserMessage("hi")]))
                out[transport] = [result.message.content, proxy.seen]
        await runner.cleanup()
        print(json.dumps(out))

    asyncio.run(main())
""")


def test_https_goes_through_the_proxys_tunnel_on_every_transport(tls_model, tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k.lower() not in PROXY_VARS}
    env["SSL_CERT_FILE"] = str(tmp_path / "cert.pem")  # read when aiohttp is imported
    out = subprocess.run(
        [sys.executable, "-c", HTTPS_EVERY_TRANSPORT, str(tmp_path / "cert.pem"),
         str(tmp_path / "key.pem"), NAME, "s3cret-tunnel-42"],
        capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    authorization = "Basic " + base64.b64encode(b"agent:s3cret-tunnel-42").decode()
    for transport in TRANSPORTS:
        content, through = seen[transport]
        assert content == "hello False", transport  # no Proxy-Authorization at the model
        assert [(m, a) for m, _, a in through] == [("CONNECT", authorization)], transport


# ---- proxy_for at its edges (unit tests, exact values) -------------------------------------------


def _no_proxy_env(monkeypatch) -> None:
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)


def test_the_environments_proxy_is_for_its_scheme_and_not_for_loopback_names(monkeypatch):
    from sweepbench.client.transports.proxy import Proxy, proxy_for

    _no_proxy_env(monkeypatch)
    monkeypatch.setenv("HTTPS_PROXY", "http://p:3128")
    assert proxy_for("http://h/v1", None, "e") is None  # no http_proxy, no all_proxy
    assert proxy_for("https://h/v1", None, "e") == Proxy("p", 3128)
    monkeypatch.setenv("HTTP_PROXY", "http://p:3128")
    for url in ("http://localhost./v1", "http://api.localhost/v1", "http://LOCALHOST/v1"):
        assert proxy_for(url, None, "e") is None, url
    monkeypatch.setenv("NO_PROXY", "h:8080")
    assert proxy_for("http://h:8080/v1", None, "e") is None
    assert proxy_for("http://h:9090/v1", None, "e") == Proxy("p", 3128)


def test_a_configured_proxy_is_read_as_http_host_and_port(monkeypatch):
    from sweepbench.client.transports.proxy import Proxy, proxy_for
    from sweepbench.errors import ConfigError

    assert proxy_for("http://h/v1", "p:3128", "e") == Proxy("p", 3128)  # no scheme: http://
    assert proxy_for("http://h/v1", "http://p", "e") == Proxy("p", 80)
    assert proxy_for("http://h/v1", "", "e") is None
    for value, shown in (("https://p:1", "https://p"), ("http://:3128", "http://"),
                         ("http://p:99999", "http://p")):
        with pytest.raises(ConfigError) as info:
            proxy_for("http://h/v1", value, "e")
        assert str(info.value) == (f"endpoint 'e': proxy ({shown}...) is not an http://host:port "
                                   "proxy; only http:// proxies are supported")
