"""A small Chrome DevTools Protocol driver for the viewer's browser test (headless Chromium,
over aiohttp's websocket client: no driver binary, no extra dependency).

It launches Debian's ``chromium`` with a fresh profile and a DevTools port of its own
choosing, attaches to the page, and records what a test needs to know happened: console
calls, exceptions, JavaScript dialogs (an ``alert`` a planted script would open) and every
network request.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--disable-extensions", "--hide-scrollbars",
         "--force-device-scale-factor=1", "--remote-debugging-port=0"]


def chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)


class Browser:
    """``async with Browser() as page:`` a fresh headless Chromium, one page."""

    def __init__(self, width: int = 1400, height: int = 1000) -> None:
        self.width, self.height = width, height
        self.events: list[dict] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future] = {}

    async def __aenter__(self) -> "Browser":
        binary = chromium()
        assert binary, "no chromium"
        self._profile = tempfile.TemporaryDirectory(prefix="sweepbench-chromium-",
                                                    ignore_cleanup_errors=True)
        self._proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self._profile.name}",
             f"--window-size={self.width},{self.height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self._proc.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            await asyncio.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        self._http = aiohttp.ClientSession()
        async with self._http.get(f"http://127.0.0.1:{port}/json/list") as resp:
            targets = await resp.json(content_type=None)
        page = next(t for t in targets if t.get("type") == "page")
        self._ws = await self._http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        for domain in ("Page", "Runtime", "Network", "Log"):
            await self.send(f"{domain}.enable")
        await self.send("Emulation.setDeviceMetricsOverride", width=self.width,
                        height=self.height, deviceScaleFactor=1, mobile=False)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._reader.cancel()
        await self._ws.close()
        await self._http.close()
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._profile.cleanup()

    async def _read(self) -> None:
        async for msg in self._ws:
            data = json.loads(msg.data)
            if "id" in data:
                fut = self._pending.pop(data["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(data)
                continue
            method, params = data.get("method"), data.get("params", {})
            self.events.append(data)
            if method == "Network.requestWillBeSent":
                self.requests.append(params["request"]["url"])
            elif method == "Page.javascriptDialogOpening":
                self.dialogs.append(params.get("message", ""))
                asyncio.ensure_future(self.send("Page.handleJavaScriptDialog", accept=True))

    async def send(self, method: str, **params: Any) -> dict:
        i = next(self._ids)
        fut = asyncio.get_running_loop().create_future()
        self._pending[i] = fut
        await self._ws.send_str(json.dumps({"id": i, "method": method, "params": params}))
        data = await asyncio.wait_for(fut, 30)
        if "error" in data:
            raise RuntimeError(f"{method}: {data['error']}")
        return data.get("result", {})

    async def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        res = await self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                              awaitPromise=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression}: {res['exceptionDetails']}")
        return res["result"].get("value")

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", url=url)

    async def wait_for(self, expression: str, timeout: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = await self.eval(expression)
            except RuntimeError:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout}s for {expression}")
            await asyncio.sleep(0.05)

    async def click(self, selector: str) -> None:
        """A real mouse click (pressed + released) at the middle of the element."""
        box = await self.eval(
            f"(() => {{ const el = document.querySelector({json.dumps(selector)});"
            " if (!el) return null; el.scrollIntoView({block: 'center'});"
            " const r = el.getBoundingClientRect();"
            " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()")
        assert box, f"nothing matches {selector}"
        for kind in ("mousePressed", "mouseReleased"):
            await self.send("Input.dispatchMouseEvent", type=kind, x=box["x"], y=box["y"],
                            button="left", clickCount=1)

    async def screenshot(self, path: Path) -> Path:
        """The whole page from its top, ``width`` pixels wide, as PNG."""
        await self.eval("window.scrollTo(0, 0)")
        metrics = await self.send("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        height = max(self.height, min(int(size["height"]), 12000))
        shot = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                               clip={"x": 0, "y": 0, "width": self.width, "height": height,
                                     "scale": 1})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and security (CSP) log entries so far."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append(f"exception: {d.get('text')} {d.get('exception', {}).get('description')}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(f"console.{p['type']}: {[a.get('value') for a in p.get('args', [])]}")
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(f"log ({p['entry'].get('source')}): {p['entry'].get('text')}")
        return out
