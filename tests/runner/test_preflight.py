"""Fail fast on a broken setup: the preflight names an endpoint that is down, rejects the key,
has no key or a bad URL, before any episode starts; a sweep whose recent episodes all fail
stops; errors give a non-zero exit with the retry command; concurrency fits the fd limit.
Over 600 lines: the module's end-to-end runs and its unit tests at the edges (each status,
message and the fd arithmetic) in the one test file named for it."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from aiohttp import web

from sweepbench.config import Endpoint, load_config
from sweepbench.errors import ConfigError, PreflightError
from sweepbench.runner import preflight as pf
from sweepbench.runner.preflight import fit_concurrency, preflight


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cfg(url: str, **endpoint) -> object:
    return load_config(None, {"models": ["m"], "endpoints": [
        {"name": "m", "base_url": url, **endpoint}]})


@pytest.fixture
async def rejecting_server():
    """An OpenAI-compatible-looking server that answers 401 to everything."""
    async def deny(request: web.Request) -> web.Response:
        return web.json_response({"error": {"message": "Incorrect API key provided"}},
                                 status=401)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", deny)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


async def test_endpoint_that_is_down_is_named(monkeypatch) -> None:
    cfg = _cfg(f"http://127.0.0.1:{_closed_port()}/v1")
    with pytest.raises(PreflightError, match=r"endpoint 'm': cannot reach http://127\.0\.0\.1"):
        await preflight(cfg, {"m", "scripted/user"})
    await preflight(cfg, {"m"}, request=False)  # --no-preflight: only the static checks


async def test_endpoint_that_rejects_the_key_is_named(rejecting_server, monkeypatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_TEST_KEY", "sk-test-canary-123")
    cfg = _cfg(rejecting_server, api_key_env="SWEEPBENCH_TEST_KEY")
    with pytest.raises(PreflightError) as info:
        await preflight(cfg, {"m"})
    text = str(info.value)
    assert "endpoint 'm'" in text and "SWEEPBENCH_TEST_KEY" in text and "401" in text
    assert "sk-test-canary-123" not in text


async def test_unset_key_and_bad_scheme_fail_without_a_request(monkeypatch) -> None:
    monkeypatch.delenv("SWEEPBENCH_UNSET_KEY", raising=False)
    with pytest.raises(ConfigError, match="endpoint 'b': base_url 'ftp://example.com/v1'"):
        load_config(None, {"models": ["b"], "endpoints": [
            {"name": "b", "base_url": "ftp://example.com/v1"}]})  # refused as it is read
    cfg = load_config(None, {"models": ["a"], "endpoints": [
        {"name": "a", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "SWEEPBENCH_UNSET_KEY"}]})
    with pytest.raises(PreflightError) as info:
        await preflight(cfg, {"a"}, request=False)
    assert "endpoint 'a': environment variable SWEEPBENCH_UNSET_KEY" in str(info.value)


async def test_endpoint_that_answers_passes() -> None:
    from sweepbench.benchmarks.doubles import scripted_models
    from sweepbench.devserver.server import ReferenceServer

    async with ReferenceServer(scripted_models()) as server:
        url = server.url
        await preflight(_cfg(url, model="scripted/oracle"), {"m"})
        assert server.requests["scripted/oracle"] == 1  # one real chat request, no more
        with pytest.raises(PreflightError) as info:  # every episode would fail the same way
            await preflight(_cfg(url, model="no-such-model"), {"m"})
    assert str(info.value) == (
        f"preflight failed (--no-preflight skips the request): endpoint 'm': {url}"
        "/chat/completions answered a chat request for model 'no-such-model' with HTTP 404: "
        '{"error":{"message":"The model `no-such-model` does not exist","type":'
        '"invalid_request_error","code":"model_not_found"}}; check base_url and model')


def _run(tmp: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    config = tmp / "sweep.toml"
    config.write_text(f'models = ["m"]\nbenchmarks = ["t1:flight+hotel+bar"]\ntrials = 3\n'
                      f'[[endpoints]]\nname = "m"\nbase_url = "{url}"\n', encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "sweepbench.cli", "run", "--config",
                           str(config), "--out", str(tmp / "s.sqlite"), "--no-progress", *extra],
                          capture_output=True, text=True, timeout=300)


def _episodes(store: Path) -> dict[str, int]:
    if not store.exists():
        return {}
    with sqlite3.connect(store) as c:
        return dict(c.execute("SELECT status, count(*) FROM episodes GROUP BY status"))


def test_run_against_a_down_endpoint_fails_before_any_episode(tmp_path: Path) -> None:
    proc = _run(tmp_path, f"http://127.0.0.1:{_closed_port()}/v1")
    assert proc.returncode == 2, proc.stderr
    assert "preflight failed" in proc.stderr and "endpoint 'm': cannot reach" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert _episodes(tmp_path / "s.sqlite") == {}


def test_failing_streak_stops_the_sweep_and_says_how_to_retry(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    proc = _run(tmp_path, url, "--no-preflight", "--error-streak", "5", "--max-concurrency", "2")
    assert proc.returncode == 5, proc.stderr
    assert "stopped: the last 5 finished episodes all ended in error" in proc.stderr
    assert "--retry-errors" in proc.stderr
    episodes = _episodes(tmp_path / "s.sqlite")
    assert 5 <= episodes["error"] < 60 and set(episodes) == {"error"}  # not the whole list
    again = _run(tmp_path, url, "--no-preflight", "--error-streak", "0")
    assert again.returncode == 4, again.stderr  # episodes ended in error: non-zero
    assert f"({episodes['error']} of them ended in error)" in again.stderr
    assert "x " in again.stderr and "--retry-errors" in again.stderr  # reasons with counts


def test_soft_fd_limit_is_raised_towards_the_hard_one_before_lowering() -> None:
    import resource

    cfg = load_config(None, {"max_concurrency": 1000})
    warnings: list[str] = []
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        fit = fit_concurrency(cfg, {"scripted/oracle", "scripted/user"}, 5000,
                              warn=warnings.append)
        now = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    if fit == 1000:  # the hard limit had room: the soft one went up, nothing lowered
        assert now > 256 and not warnings
    else:  # it had not: lowered, with a warning naming the limit
        assert now == hard and len(warnings) == 1 and f"is {hard}: running {fit}" in warnings[0]


FD_SCRIPT = """
import resource, sys
n = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
from sweepbench.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_fd_limit_lowers_concurrency_instead_of_failing_episodes(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    proc = subprocess.run([sys.executable, "-c", FD_SCRIPT, "256", "run", "--max-concurrency",
                           "1000", "--trials", "4", "--latency", "0.01", "--out", str(store),
                           "--no-progress", "--json"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "open-file limit (ulimit -n) is 256: running" in proc.stderr
    assert _episodes(store) == {"done": sum(_episodes(store).values())}


def test_fd_limit_too_low_for_any_concurrency_is_refused(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", FD_SCRIPT, "100", "run", "--out",
                           str(tmp_path / "s.sqlite"), "--no-progress"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "too low for even" in proc.stderr and "ulimit -n" in proc.stderr
    assert "Traceback" not in proc.stderr


async def test_a_model_with_replicas_passes_while_one_answers_and_names_each_when_none(
        monkeypatch) -> None:
    from sweepbench.benchmarks.doubles import scripted_models
    from sweepbench.devserver.server import ReferenceServer

    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    async with ReferenceServer(scripted_models()) as live:  # answers the chat request
        await preflight(_cfg(live.url, model="scripted/oracle", base_urls=[dead]),
                        {"m"})  # one of two is enough
    both = _cfg(dead, base_urls=[f"http://127.0.0.1:{_closed_port()}/v1"])
    with pytest.raises(PreflightError) as info:
        await preflight(both, {"m"})
    assert str(info.value).count("endpoint 'm': cannot reach") == 2
    monkeypatch.delenv("SWEEPBENCH_SECOND_KEY", raising=False)
    with pytest.raises(PreflightError, match="SWEEPBENCH_SECOND_KEY \\(its key\\) is not set"):
        await preflight(_cfg(dead, api_key_envs=["SWEEPBENCH_SECOND_KEY"]), {"m"},
                        request=False)


def test_each_replica_and_each_key_is_probed_without_the_full_product():
    from sweepbench.config import Endpoint
    from sweepbench.runner.preflight import probe_ways

    urls = [f"http://r{i}:8000/v1" for i in range(3)]
    ep = Endpoint(name="m", base_urls=urls, api_key_envs=["K1", "K2"])
    sent = [(w.base_url, w.api_key_env) for w in probe_ways(ep)]
    assert sent == [(urls[0], "K1"), (urls[1], "K2"), (urls[2], "K1")]  # 3, not 6
    keys = [f"K{i}" for i in range(5)]
    wide = Endpoint(name="m", base_urls=urls[:2], api_key_envs=keys)
    sent = [(w.base_url, w.api_key_env) for w in probe_ways(wide)]
    assert len(sent) == 5 and {k for _, k in sent} == set(keys) and {u for u, _ in sent} == set(
        urls[:2])
    one = Endpoint(name="m", base_url=urls[0])
    assert probe_ways(one) == [one]


async def test_a_fleet_of_replicas_and_keys_sends_one_request_per_replica_or_key(monkeypatch):
    from sweepbench.benchmarks.doubles import scripted_models
    from sweepbench.devserver.server import ReferenceServer

    keys = ["SWEEPBENCH_PF_K1", "SWEEPBENCH_PF_K2", "SWEEPBENCH_PF_K3"]
    for k in keys:
        monkeypatch.setenv(k, "secret-" + k)
    async with ReferenceServer(scripted_models()) as a, ReferenceServer(scripted_models()) as b:
        await preflight(_cfg(a.url, model="scripted/oracle", base_urls=[b.url],
                             api_key_envs=keys), {"m"})
        answered = [sum(s.stats()["requests"].values()) for s in (a, b)]
    assert sorted(answered) == [1, 2]  # 3 requests for 2 replicas x 3 keys, not 6
    dead = [f"http://127.0.0.1:{_closed_port()}/v1" for _ in range(2)]
    with pytest.raises(PreflightError) as info:
        await preflight(_cfg(dead[0], base_urls=dead[1:], api_key_envs=keys), {"m"})
    said = str(info.value)
    assert ("endpoint 'm': none of its ways in answered (3 requests: each of its 2 replicas "
            "and 3 keys once, not all 6 pairs)") in said
    assert said.count("endpoint 'm': cannot reach") == 3


@contextmanager
def _always_failing_server(status: int) -> Iterator[str]:
    """`sweepbench serve` answering every chat request with ``status``; yields its URL."""
    proc = subprocess.Popen([sys.executable, "-m", "sweepbench.cli", "serve", "--port", "0",
                             "--faults", f"{status}=1.0"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("status", [500, 503])
def test_a_server_failing_every_request_fails_the_run_within_seconds(tmp_path: Path,
                                                                     status: int) -> None:
    with _always_failing_server(status) as url:
        config = tmp_path / "sweep.toml"
        config.write_text(f'models = ["m"]\nbenchmarks = ["t1:flight+hotel+bar"]\n[[endpoints]]'
                          f'\nname = "m"\nmodel = "scripted/oracle"\nbase_url = "{url}"\n')
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "sweepbench.cli", "run", "--config",
                               str(config), "--out", str(tmp_path / "s.sqlite"), "--no-progress"],
                              capture_output=True, text=True, timeout=120)
        took = time.monotonic() - started
    assert proc.returncode == 2, proc.stderr
    assert took < 30, took  # not breaker_max_wait_s (600 s) of "breaker open"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: preflight failed (--no-preflight skips the request): endpoint 'm': {url}"
        f"/chat/completions failed a chat request (HTTP {status}: ")
    assert lines[0].endswith("the server is not answering requests, fix it or wait until "
                             "it does")
    assert _episodes(tmp_path / "s.sqlite") == {}


# ---- unit tests at the edges: messages, statuses, the request, the fd arithmetic ----------


def test_static_problems_name_the_url_and_the_key_variable(monkeypatch) -> None:
    assert pf.static_problems(Endpoint(name="a", base_url="https://h/v1")) == []
    assert pf.static_problems(Endpoint(name="a", base_url="http://h/v1")) == []
    assert pf.static_problems(Endpoint(name="a", base_url="ftp://h/v1")) == [(
        "endpoint 'a': base_url 'ftp://h/v1' is not an http(s) URL; set it to the server's "
        "OpenAI-compatible root, e.g. https://api.openai.com/v1")]
    assert len(pf.static_problems(Endpoint(name="a", base_url="http:///v1"))) == 1  # no host
    monkeypatch.setenv("SWEEPBENCH_PF_EMPTY", "")
    monkeypatch.setenv("SWEEPBENCH_PF_SET", "k")
    assert pf.static_problems(Endpoint(name="a", base_url="http://h",
                                       api_key_env="SWEEPBENCH_PF_SET")) == []
    assert pf.static_problems(Endpoint(name="a", base_url="ftp://h",
                                       api_key_env="SWEEPBENCH_PF_EMPTY"))[1:] == [(
        "endpoint 'a': environment variable SWEEPBENCH_PF_EMPTY (its key) is not set; export "
        "it (a config endpoint may name another variable in api_key_env)")]


def test_probe_body_is_one_user_message_and_a_small_budget() -> None:
    import json

    ep = Endpoint(name="a", base_url="http://h", model="the-model")
    assert json.loads(pf.probe_body(ep)) == {
        "model": "the-model", "messages": [{"role": "user", "content": "Reply with the word OK."}],
        "max_tokens": 16}
    assert pf.PROBE_BUDGET == 16 and pf.PROBE_TIMEOUT_S == 30.0


@pytest.fixture
async def status_server():
    """A server answering each chat request with the status and body the test sets; it keeps
    each request's path and headers."""
    state = {"status": 200, "body": b"{}", "seen": [], "delay": 0.0}

    async def answer(request: web.Request) -> web.StreamResponse:
        state["seen"].append((request.path, dict(request.headers), await request.read()))
        if request.path == "/moved":
            return web.Response(status=500, body=b"followed")
        if state["delay"]:
            import asyncio
            await asyncio.sleep(state["delay"])
        headers = {"Location": "/moved"} if state["status"] in (301, 302) else None
        return web.Response(status=state["status"], body=state["body"], headers=headers)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    state["url"] = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    yield state
    await runner.cleanup()


async def _probe(ep: Endpoint) -> str | None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        return await pf.probe(session, ep)


@pytest.mark.parametrize("status", [200, 204, 302, 400, 402, 407, 409, 429, 499])
async def test_probe_passes_a_status_that_is_not_a_setup_error(status_server, status) -> None:
    status_server["status"] = status
    assert await _probe(Endpoint(name="m", base_url=status_server["url"])) is None
    assert [p for p, _, _ in status_server["seen"]] == ["/v1/chat/completions"]  # no redirect


_FAILED = ("failed a chat request (HTTP {}: no such); the server is not answering requests, "
           "fix it or wait until it does")


@pytest.mark.parametrize("status,said", [
    (401, "rejected requests without a key (HTTP 401); check the key (and api_key_env)"),
    (403, "rejected requests without a key (HTTP 403); check the key (and api_key_env)"),
    (404, ("answered a chat request for model 'mm' with HTTP 404: no such; check base_url "
           "and model")),
    (408, _FAILED.format(408)), (500, _FAILED.format(500)), (599, _FAILED.format(599))])
async def test_probe_names_each_failing_status(status_server, status, said) -> None:
    status_server["status"], status_server["body"] = status, b"  no \n\t such  "
    url = status_server["url"]
    got = await _probe(Endpoint(name="m", base_url=url + "/", model="mm"))
    assert got == f"endpoint 'm': {url}/chat/completions {said}"


async def test_probe_sends_json_and_the_key_and_quotes_the_server_scrubbed_and_cut(
        status_server, monkeypatch) -> None:
    import os

    # a variable of its own (KEYS keeps every name registered in this process) and a value
    # that looks like no key pattern: only its registration can scrub it
    var = f"SWEEPBENCH_PF_KEY_{os.getpid()}"
    monkeypatch.setenv(var, "plainpreflightcanary0123456789")
    status_server["status"] = 500
    status_server["body"] = (b"key plainpreflightcanary0123456789 \xff\xfe " + b"x" * 3000)
    ep = Endpoint(name="m", base_url=status_server["url"], api_key_env=var)
    got = await _probe(ep)
    _, headers, body = status_server["seen"][0]
    assert headers["Content-Type"] == "application/json"
    assert headers["Authorization"] == "Bearer plainpreflightcanary0123456789"
    assert body == pf.probe_body(ep)
    quoted = got.split("(HTTP 500: ", 1)[1].split("); the server", 1)[0]
    assert "canary" not in quoted and len(quoted) == 160 and quoted.endswith("x" * 100)
    assert "[redacted] \ufffd\ufffd x" in quoted  # bytes that are not UTF-8 replaced
    status_server["status"], status_server["body"] = 401, b""
    assert await _probe(ep) == (
        f"endpoint 'm': {status_server['url']}/chat/completions rejected the key in "
        f"{var} (HTTP 401); check the key (and api_key_env)")
    status_server["status"] = 503  # an empty body: nothing quoted, no colon
    assert (await _probe(ep)).endswith("failed a chat request (HTTP 503); the server is not "
                                       "answering requests, fix it or wait until it does")
    assert "Authorization" not in status_server["seen"][-1][1] or ep.api_key_env


async def test_probe_without_a_key_sends_no_authorization(status_server) -> None:
    await _probe(Endpoint(name="m", base_url=status_server["url"]))
    assert "Authorization" not in status_server["seen"][0][1]


async def test_probe_that_times_out_says_within_how_long(status_server, monkeypatch) -> None:
    monkeypatch.setattr(pf, "PROBE_TIMEOUT_S", 1.0)
    status_server["delay"] = 3.0
    url = status_server["url"]
    assert await _probe(Endpoint(name="m", base_url=url)) == (
        f"endpoint 'm': no answer to a chat request from {url}/chat/completions within 1s; is "
        "the server up and the base_url right?")


class _RecordingSession:
    """A test double of aiohttp's session: records the post's arguments, then raises
    ``error`` or answers with ``status`` and a body whose read raises ``read_error``."""

    def __init__(self, *, error=None, status=200, read_error=None):
        self.error, self.status, self.read_error, self.kwargs = error, status, read_error, None

    def post(self, url, **kwargs):
        from contextlib import asynccontextmanager
        from types import SimpleNamespace

        self.url, self.kwargs = url, kwargs

        async def read(n):
            self.read_n = n
            if self.read_error:
                raise self.read_error
            return b"body"

        @asynccontextmanager
        async def answer():
            if self.error:
                raise self.error
            yield SimpleNamespace(status=self.status, content=SimpleNamespace(read=read))
        return answer()


async def test_probe_timeouts_redirects_and_errors_without_a_message() -> None:
    import aiohttp

    session = _RecordingSession()
    assert await pf.probe(session, Endpoint(name="m", base_url="http://h/v1")) is None
    t = session.kwargs["timeout"]
    assert (t.total, t.connect) == (30.0, 10.0) and session.kwargs["allow_redirects"] is False
    await pf.probe(session, Endpoint(name="m", base_url="http://h/v1", connect_timeout_s=45.0))
    assert session.kwargs["timeout"].connect == 30.0  # never longer than the whole probe
    for error, why in ((aiohttp.ClientConnectionError(), "ClientConnectionError"),
                       (aiohttp.ClientConnectionError("refused here"), "refused here"),
                       (OSError(), "OSError")):
        assert await pf.probe(_RecordingSession(error=error),
                              Endpoint(name="m", base_url="http://h/v1")) == (
            f"endpoint 'm': cannot reach http://h/v1/chat/completions ({why}); is the server "
            "running and the base_url right?")
    for read_error in (aiohttp.ClientPayloadError("cut"), OSError("gone"),
                       __import__("asyncio").TimeoutError()):
        session = _RecordingSession(status=500, read_error=read_error)
        assert (await pf.probe(session, Endpoint(name="m", base_url="http://h/v1"))).endswith(
            "(HTTP 500); the server is not answering requests, fix it or wait until it does")
    session = _RecordingSession(status=500)
    assert "(HTTP 500: body)" in await pf.probe(session, Endpoint(name="m", base_url="http://h"))
    assert session.read_n == 2048 and session.url == "http://h/chat/completions"
    await pf.probe(session, Endpoint(name="m", base_url="http://h/vX//"))
    assert session.url == "http://h/vX/chat/completions"  # only slashes stripped


def test_none_answered_names_what_was_probed() -> None:
    replicas = Endpoint(name="m", base_urls=["http://a", "http://b"])
    assert pf._none_answered(replicas, 2) == (
        "endpoint 'm': none of its ways in answered (2 requests: each of its 2 replicas once)")
    keys = Endpoint(name="m", base_url="http://a", api_key_envs=["K1", "K2", "K3"])
    assert pf._none_answered(keys, 3) == (
        "endpoint 'm': none of its ways in answered (3 requests: each of its 3 keys once)")
    both = Endpoint(name="m", base_urls=["http://a", "http://b"], api_key_envs=["K1", "K2"])
    assert pf._none_answered(both, 2) == (
        "endpoint 'm': none of its ways in answered (2 requests: each of its 2 replicas and 2 "
        "keys once, not all 4 pairs)")


async def test_preflight_messages_exactly_and_no_request_after_a_static_problem(
        status_server, monkeypatch) -> None:
    url = status_server["url"]
    monkeypatch.delenv("SWEEPBENCH_PF_UNSET", raising=False)
    cfg = load_config(None, {"models": ["m"], "endpoints": [
        {"name": "m", "base_urls": [url, url + "2"], "api_key_env": "SWEEPBENCH_PF_UNSET"}]})
    with pytest.raises(PreflightError) as info:
        await preflight(cfg, {"m"})
    assert str(info.value) == (  # the variable said once, not per replica; nothing sent
        "preflight failed (--no-preflight skips the request): endpoint 'm': environment "
        "variable SWEEPBENCH_PF_UNSET (its key) is not set; export it (a config endpoint may "
        "name another variable in api_key_env)")
    with pytest.raises(PreflightError) as info:
        await preflight(cfg, {"m"}, request=False)
    assert str(info.value).startswith("preflight failed: endpoint 'm': environment variable")
    assert status_server["seen"] == []
    status_server["status"], status_server["body"] = 500, b""
    with pytest.raises(PreflightError) as info:  # one way in: no "none of its ways" line
        await preflight(_cfg(url), {"m", "scripted/user"})
    assert str(info.value) == (
        f"preflight failed (--no-preflight skips the request): endpoint 'm': {url}"
        "/chat/completions failed a chat request (HTTP 500); the server is not answering "
        "requests, fix it or wait until it does")
    await preflight(_cfg(url), {"scripted/user"})  # only scripted models: nothing to probe
    assert len(status_server["seen"]) == 1


async def test_preflight_pairs_each_model_with_its_own_answers(status_server) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    status_server["status"] = 200
    live = status_server["url"]
    cfg = load_config(None, {"models": ["a", "b"], "endpoints": [
        {"name": "a", "base_urls": [dead, dead + "2"]},
        {"name": "b", "base_urls": [live, dead]}]})
    with pytest.raises(PreflightError) as info:
        await preflight(cfg, {"a", "b"})
    said = str(info.value)
    assert "endpoint 'a': none of its ways in answered (2 requests" in said
    assert "endpoint 'b'" not in said and said.count("cannot reach") == 2
    cfg = load_config(None, {"models": ["a", "b"], "endpoints": [
        {"name": "a", "base_urls": [live, dead]}, {"name": "b", "base_url": dead}]})
    with pytest.raises(PreflightError) as info:
        await preflight(cfg, {"a", "b"})
    assert str(info.value).count("cannot reach") == 1 and "endpoint 'b'" in str(info.value)
    cfg = load_config(None, {"models": ["a", "b"], "endpoints": [
        {"name": n, "base_url": dead} for n in ("a", "b")]})
    with pytest.raises(PreflightError) as info:  # both named, in name order, '; ' between
        await preflight(cfg, {"b", "a"})
    reach = f"cannot reach {dead}/chat/completions (Cannot connect to host"
    a, b = str(info.value).split("; is the server running and the base_url right?; ")
    assert a.startswith("preflight failed (--no-preflight skips the request): endpoint 'a': "
                        + reach) and b.startswith("endpoint 'b': " + reach)


def _limits(monkeypatch, soft, hard, *, fds=10, settable=True) -> list:
    """Fakes the open-file limit (``settable``: setrlimit works) and the open descriptors;
    returns the setrlimit calls."""
    import resource

    calls = []
    state = {"soft": soft}

    def setrlimit(which, pair):
        calls.append(pair)
        if not settable:
            raise ValueError("not allowed")
        state["soft"] = pair[0]

    monkeypatch.setattr(resource, "getrlimit", lambda which: (state["soft"], hard))
    monkeypatch.setattr(resource, "setrlimit", setrlimit)
    monkeypatch.setattr(pf, "_open_fds", lambda: fds)
    return calls


def _fit(cfg, names, todo) -> tuple[int, list[str]]:
    warned: list[str] = []
    return pf.fit_concurrency(cfg, names, todo, warn=warned.append), warned


def test_fit_concurrency_counts_sockets_exactly(monkeypatch) -> None:
    import resource

    inf = resource.RLIM_INFINITY
    # 2 models + 1 per episode, one socket each; no judge; 10 open + 64 reserved
    cfg = load_config(None, {"models": ["a", "b"], "max_concurrency": 100, "endpoints": [
        {"name": n, "base_url": "http://h"} for n in ("a", "b")]})
    need = 10 + 64 + 100 * 3
    calls = _limits(monkeypatch, need, need + 10)
    assert _fit(cfg, {"a", "b"}, 1000) == (100, []) and calls == []  # exactly at the limit
    calls = _limits(monkeypatch, need - 1, need - 1, settable=True)
    fit, warned = _fit(cfg, {"a", "b"}, 1000)
    assert fit == (need - 1 - 74) // 3 == 99 and calls == []  # hard == soft: nothing to raise
    assert warned == [(
        f"warning: 100 episodes in flight need about {need} file descriptors but the open-file "
        f"limit (ulimit -n) is {need - 1}: running 99 in flight instead; raise it (e.g. "
        f"`ulimit -n {need}`) to run more")]
    assert _fit(cfg, {"a", "b"}, 7) == (7, [])  # fewer episodes to run than allowed
    assert _fit(cfg, {"a", "b"}, 0) == (1, [])
    _limits(monkeypatch, inf, inf)
    assert _fit(cfg, {"a", "b"}, 10 ** 6) == (100, [])
    calls = _limits(monkeypatch, 100, inf)  # raised to exactly what is needed
    assert _fit(cfg, {"a", "b"}, 1000) == (100, []) and calls == [(need, inf)]
    calls = _limits(monkeypatch, 100, need + 50)
    assert _fit(cfg, {"a", "b"}, 1000) == (100, []) and calls == [(need, need + 50)]
    calls = _limits(monkeypatch, 100, 200)  # only up to the hard limit
    fit, warned = _fit(cfg, {"a", "b"}, 1000)
    assert calls == [(200, 200)] and fit == (200 - 74) // 3 and "is 200: running 42" in warned[0]
    calls = _limits(monkeypatch, 150, inf, settable=False)  # not allowed: stays
    fit, warned = _fit(cfg, {"a", "b"}, 1000)
    assert calls == [(need, inf)] and fit == (150 - 74) // 3 and "is 150:" in warned[0]


def test_fit_concurrency_counts_both_ends_and_the_judges(monkeypatch) -> None:
    # a scripted model: both ends of each socket in this process; 2 judges x 3 in flight
    cfg = load_config(None, {"models": ["scripted/oracle"], "max_concurrency": 50,
                             "judge_models": ["scripted/j1", "scripted/j2"],
                             "judge_concurrency": 3})
    per_episode, fixed = (1 + 1) * 2, 10 + 64 + 3 * 2 * 2
    _limits(monkeypatch, fixed + 50 * per_episode, fixed + 50 * per_episode)
    assert _fit(cfg, {"scripted/oracle"}, 1000) == (50, [])
    _limits(monkeypatch, fixed + 50 * per_episode - 1, fixed + 50 * per_episode - 1)
    assert _fit(cfg, {"scripted/oracle"}, 1000)[0] == 49


def test_fit_concurrency_refuses_below_four_and_runs_at_four(monkeypatch) -> None:
    cfg = load_config(None, {"models": ["a"], "max_concurrency": 100, "endpoints": [
        {"name": "a", "base_url": "http://h"}]})
    _limits(monkeypatch, 74 + 4 * 2, 74 + 4 * 2)
    assert _fit(cfg, {"a"}, 1000)[0] == 4 == pf.MIN_CONCURRENCY
    _limits(monkeypatch, 74 + 4 * 2 - 1, 74 + 4 * 2 - 1)
    with pytest.raises(ConfigError) as info:
        _fit(cfg, {"a"}, 1000)
    assert str(info.value) == (
        "the open-file limit (ulimit -n) is 81: too low for even 4 episodes in flight (about 2 "
        "file descriptors each, 74 for the rest); raise it (e.g. `ulimit -n 274`)")


def test_open_fds_counts_this_process_and_falls_back(monkeypatch) -> None:
    import os

    assert pf._open_fds() == len(os.listdir("/proc/self/fd"))
    real = os.listdir

    def without(*missing):
        def listdir(where):
            if where in missing:
                raise OSError(where)
            return real(where)
        return listdir

    monkeypatch.setattr(os, "listdir", without("/proc/self/fd"))
    assert pf._open_fds() == len(real("/dev/fd"))
    monkeypatch.setattr(os, "listdir", without("/proc/self/fd", "/dev/fd"))
    assert pf._open_fds() == 32
