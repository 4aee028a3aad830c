"""Runs shared by the report, HTML, export and inspect tests, made once per session through
the command line (reference server on loopback, scripted test doubles, real store), and a
headless Chromium driven through the DevTools protocol (skips when Chromium is absent)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import aiohttp
import pytest

from sweepbench.cli import ERRORS_EXIT, main

# Prices make every cost column and the cost-vs-score plot real; a 1% injected HTTP 500 on an
# agent endpoint without retries makes some episodes end in error (the error table).
_ENDPOINTS = """
[[endpoints]]
name = "scripted/noisy:0.3"
max_retries = 0
price_input_per_mtok = 0.40
price_cached_input_per_mtok = 0.10
price_output_per_mtok = 1.60

[[endpoints]]
name = "scripted/oracle"
price_input_per_mtok = 2.00
price_cached_input_per_mtok = 0.50
price_output_per_mtok = 8.00

[[endpoints]]
name = "scripted/user"
price_input_per_mtok = 0.15
price_output_per_mtok = 0.60

[[endpoints]]
name = "scripted/judge"
price_input_per_mtok = 2.00
price_output_per_mtok = 8.00
"""


def _run(tmp: Path, name: str, config: str, *argv: str) -> None:
    cfg = tmp / f"{name}.toml"
    cfg.write_text(config + _ENDPOINTS, encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["run", "--config", str(cfg), "--no-progress", "--json", *argv])
    assert code in (0, ERRORS_EXIT), f"the {name} run failed"  # 4: faults ended some episodes


@pytest.fixture(scope="session")
def t1_store(tmp_path_factory) -> Path:
    """A full T1 run: all 525 templates, trials 1, the noisy agent (1% HTTP 500 faults, no
    retries: some episodes end in error), judged by the state check and the Likert double;
    then the oracle on the first 100 templates in a second run into the same store."""
    tmp = tmp_path_factory.mktemp("t1run")
    store = tmp / "t1.sqlite"
    common = ('user_model = "scripted/user"\njudge_models = ["scripted/judge"]\ntrials = 1\n'
              'reference_faults = "500=0.01"\n')
    _run(tmp, "noisy", 'benchmarks = ["t1"]\nmodels = ["scripted/noisy:0.3"]\n' + common,
         "--out", str(store))
    _run(tmp, "oracle", 'benchmarks = ["t1"]\nmodels = ["scripted/oracle"]\nlimit = 100\n'
         + common, "--out", str(store))
    return store


_VITA = ('models = ["scripted/oracle", "scripted/noisy:0.3"]\nuser_model = "scripted/user"\n'
         'judge_models = ["scripted/judge"]\n')


@pytest.fixture(scope="session")
def vita_samples_store(tmp_path_factory) -> Path:
    """VitaBench on the built-in sample tasks (three domains and the cross-domain set), four
    trials, oracle and noisy agents, the sliding-window judge double."""
    tmp = tmp_path_factory.mktemp("vitasamples")
    store = tmp / "vita.sqlite"
    _run(tmp, "samples", 'benchmarks = ["vitabench:delivery", "vitabench:instore", '
         '"vitabench:ota", "vitabench:delivery,instore,ota"]\ntrials = 4\n' + _VITA,
         "--out", str(store))
    return store


@pytest.fixture(scope="session")
def vita_real_store(tmp_path_factory, shared_data) -> Path:
    """VitaBench on the real delivery and in-store tasks (three of them unreachable), one
    trial, oracle and noisy agents, the sliding-window judge double."""
    tmp = tmp_path_factory.mktemp("vitareal")
    store = tmp / "vita.sqlite"
    _run(tmp, "real", 'benchmarks = ["vitabench@2025-11:delivery", "vitabench@2025-11:instore"]'
         '\ntrials = 1\n'
         f'data_dir = "{shared_data}"\n' + _VITA, "--out", str(store))
    return store


# ---- headless Chromium ----------------------------------------------------------------------

SCREENS = Path(__file__).resolve().parents[2] / "screens"  # screenshots to look at (ignored)


def _chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser",
                                               "google-chrome")) if p), None)


class Page:
    """One tab of a headless Chromium driven through the DevTools protocol (aiohttp's
    websocket client): navigate, evaluate JavaScript, wait for a condition, screenshot."""

    FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run",
             "--disable-quic", "--hide-scrollbars", "--force-device-scale-factor=1",
             "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1")

    def __init__(self, binary: str, width: int, height: int) -> None:
        # Chromium's helpers may still write to the profile as it exits
        self.profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        self.proc = subprocess.Popen(
            [binary, *self.FLAGS, f"--user-data-dir={self.profile.name}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        ws = None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                ws = found.group(1)
                break
            if not line and self.proc.poll() is not None:
                break
        assert ws, "Chromium did not start its DevTools endpoint"
        port = re.search(r":(\d+)/", ws).group(1)
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self._connect(int(port)))
        self._id = 0

    async def _connect(self, port: int) -> None:
        self.session = aiohttp.ClientSession()
        async with self.session.get(f"http://127.0.0.1:{port}/json/list") as r:
            targets = await r.json()
        page = next(t for t in targets if t["type"] == "page")
        self.ws = await self.session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)

    async def _send(self, method: str, params: dict | None = None) -> dict:
        self._id += 1
        await self.ws.send_json({"id": self._id, "method": method, "params": params or {}})
        while True:
            msg = await asyncio.wait_for(self.ws.receive_json(), 60)
            if msg.get("id") == self._id:
                assert "error" not in msg, msg["error"]
                return msg["result"]

    def send(self, method: str, params: dict | None = None) -> dict:
        return self.loop.run_until_complete(self._send(method, params))

    def eval(self, expression: str):  # noqa: ANN201 - any JSON value
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                             "awaitPromise": True})
        assert "exceptionDetails" not in res, res["exceptionDetails"]
        return res["result"].get("value")

    def goto(self, url: str, *, ready: str = "document.readyState === 'complete'",
             timeout: float = 30.0) -> None:
        self.send("Page.navigate", {"url": url})
        self.wait(ready, timeout=timeout)

    def wait(self, condition: str, *, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.eval(f"!!({condition})"):
            assert time.monotonic() < deadline, f"timed out waiting for {condition}"
            time.sleep(0.2)

    def screenshot(self, out: Path, *, full_page: bool = True) -> Path:
        params: dict = {"format": "png"}
        if full_page:
            w, h = self.eval("[document.documentElement.clientWidth, "
                             "document.documentElement.scrollHeight]")
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": w, "height": h, "scale": 1})
        data = self.send("Page.captureScreenshot", params)["data"]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(data))
        return out

    def close(self) -> None:
        async def shut() -> None:
            await self.ws.close()
            await self.session.close()

        self.loop.run_until_complete(shut())
        self.loop.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stderr.close()
        self.profile.cleanup()


@pytest.fixture
def browser():
    """``browser(width, height) -> Page``; every page is closed after the test. Skips when
    Chromium is absent."""
    binary = _chromium()
    if binary is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    pages: list[Page] = []

    def open_page(width: int = 1400, height: int = 900) -> Page:
        pages.append(Page(binary, width, height))
        return pages[-1]

    yield open_page
    for p in pages:
        p.close()
