"""Fail fast on a broken setup: the preflight names an endpoint that is down, rejects the key,
has no key or a bad URL, before any episode starts; a sweep whose recent episodes all fail
stops; errors give a non-zero exit with the retry command; concurrency fits the fd limit."""

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

from sweepbench.config import load_config
from sweepbench.errors import ConfigError, PreflightError
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
