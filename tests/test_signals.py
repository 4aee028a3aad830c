"""SIGINT / SIGTERM / SIGKILL at random points of `sweepbench run` with endpoint limits (sweep 256,
endpoint 64): nothing recorded as an error because of the signal, no request after it, a quick
exit, and a rerun whose leaderboard equals an uninterrupted run's.

The sweep runs in a child process against a reference server in a thread of the test, which
stamps every request's arrival, so the test sees when the child stopped sending. The signal
lands on a child frozen while idle (see the test), so "after the signal" is exact.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import platform
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from aiohttp import web

from sweepbench.benchmarks.doubles import scripted_models
from sweepbench.devserver.server import ReferenceServer
from sweepbench.simulator.scripted.models import SCRIPTED_MODELS

MODELS = ["scripted/oracle", "scripted/noisy:0.3"]
_TGKILL = {"x86_64": 234, "aarch64": 131}.get(platform.machine())  # Linux syscall numbers
QUIET_S = 0.5  # no request for this long: the child has sent all it could


class StampingServer(ReferenceServer):
    """The reference server, noting the monotonic time each chat request arrives."""

    def __init__(self, loop: asyncio.AbstractEventLoop, **kw) -> None:
        super().__init__(scripted_models(), models=SCRIPTED_MODELS, **kw)
        self.arrivals: list[float] = []
        self.loop = loop
        self.answering = asyncio.Event()  # cleared: requests are stamped, their answers held
        self.answering.set()

    def hold(self, held: bool) -> None:
        """Hold every answer from now on (True) or send the held ones and go on (False)."""
        self.loop.call_soon_threadsafe(self.answering.clear if held else self.answering.set)

    def app(self) -> web.Application:
        app = super().app()

        @web.middleware
        async def stamp(request, handler):  # noqa: ANN001, ANN202
            if request.path.endswith("/chat/completions"):
                self.arrivals.append(time.monotonic())
                await self.answering.wait()
            return await handler(request)

        app.middlewares.insert(0, stamp)
        return app


@pytest.fixture(scope="module")
def server():
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    # 0.1 s: the sweep must outlast the random wait, the hold and the quiet periods before the
    # signal, with the whole suite loading the machine
    srv = StampingServer(loop, latency="fixed:0.1")
    asyncio.run_coroutine_threadsafe(srv.start(), loop).result(10)
    yield srv
    asyncio.run_coroutine_threadsafe(srv.stop(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def _config(tmp: Path, url: str) -> Path:
    # no hedging: a held answer would get a copy, a new request while the child should idle
    endpoints = "".join(f'[[endpoints]]\nname = "{m}"\nbase_url = "{url}"\nmax_concurrency = 64\n'
                        'hedge = false\n' for m in [*MODELS, "scripted/user"])
    path = tmp / "sweep.toml"
    path.write_text(f"models = {json.dumps(MODELS)}\nmax_concurrency = 256\ntrials = 2\n"
                    f"{endpoints}", encoding="utf-8")
    return path


def _run(config: Path, store: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "sweepbench.cli", "run", "--config", str(config), "--out",
         str(store), "--no-progress", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _signal_main_thread(proc: subprocess.Popen, sig: int) -> None:
    """``sig`` to the child's main thread, the thread the kernel picks for a running process.

    A process-directed signal sent while the child is frozen waits in the process's queue for
    whichever of its threads runs first after SIGCONT (the store's writer, libuv's workers);
    its handler then runs only once that thread is scheduled, which can be milliseconds after
    the main thread resumed sending. That is an artifact of the freeze, not of Ctrl-C.
    """
    if _TGKILL is None or sig == signal.SIGKILL:
        proc.send_signal(sig)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(_TGKILL, proc.pid, proc.pid, sig) != 0:  # the main thread's id is the pid
        raise OSError(ctypes.get_errno(), f"tgkill {proc.pid} {sig}")


def _quiet(server: StampingServer) -> int:
    """Wait until no request has arrived for ``QUIET_S``; the number stamped by then."""
    seen, quiet_since = len(server.arrivals), time.monotonic()
    while time.monotonic() - quiet_since < QUIET_S:
        time.sleep(0.02)
        if len(server.arrivals) != seen:
            seen, quiet_since = len(server.arrivals), time.monotonic()
    return seen


def _leaderboard(store: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "sweepbench.cli", "report", str(store), "--json"],
                         capture_output=True, text=True, check=True).stdout
    report = json.loads(out)
    return _scores({k: report[k] for k in ("benchmarks", "models", "terminations",
                                          "error_reasons")})


def _scores(obj):  # noqa: ANN001, ANN202
    """The report without its timing profiles (wall time and latency differ run to run)."""
    if isinstance(obj, dict):
        return {k: _scores(v) for k, v in obj.items() if k != "profile"}
    return obj


def _statuses(store: Path) -> dict[str, int]:
    with sqlite3.connect(store) as c:
        return dict(c.execute("SELECT status, count(*) FROM episodes GROUP BY status"))


@pytest.fixture(scope="module")
def clean(server, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("clean")
    proc = _run(_config(tmp, server.url), tmp / "clean.sqlite")
    _, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    board = _leaderboard(tmp / "clean.sqlite")
    assert board["benchmarks"]["t1"]["models"]["scripted/oracle"]["episodes"] > 0
    return board


@pytest.mark.parametrize("sig,seed", [(signal.SIGINT, 1), (signal.SIGTERM, 2),
                                      (signal.SIGKILL, 3)])
def test_signal_mid_sweep_loses_nothing(server, clean, tmp_path, sig, seed) -> None:
    rng = random.Random(seed)
    config, store = _config(tmp_path, server.url), tmp_path / "run.sqlite"
    before = len(server.arrivals)
    proc = _run(config, store)
    deadline = time.monotonic() + 120
    while len(server.arrivals) == before:  # the sweep is sending
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)
    time.sleep(rng.uniform(0.2, 1.5))
    assert proc.poll() is None, "the sweep finished before the signal; make it longer"
    # Hold the answers until the child has sent all it can and idles, waiting for them;
    # freeze it there, send the held answers (all due at once when it thaws: the worst case
    # for starting new requests), then signal and thaw it. Frozen while idle, the child is
    # not inside a request's write, so any request stamped after this was sent after the
    # signal. (Frozen at a random instant, one write already past the gate could finish.)
    server.hold(True)
    seen = _quiet(server)
    assert proc.poll() is None, "the sweep finished while held; make it longer"
    proc.send_signal(signal.SIGSTOP)
    seen = _quiet(server)
    server.hold(False)
    time.sleep(0.2)  # the answers reach the frozen child's sockets
    sent_at = time.monotonic()
    _signal_main_thread(proc, sig)
    proc.send_signal(signal.SIGCONT)
    _, stderr = proc.communicate(timeout=30)
    took = time.monotonic() - sent_at
    late = [t - sent_at for t in server.arrivals[seen:]]

    statuses = _statuses(store)
    assert statuses.get("error", 0) == 0, (statuses, stderr)
    assert statuses.get("running", 0) > 0  # it was interrupted mid-flight
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:
        assert took < 2.0, f"exit took {took:.2f}s"
        assert late == [], f"{len(late)} requests after the signal: {late[:5]}"
        assert proc.returncode == 128 + sig, stderr
        name = signal.Signals(sig).name
        assert f"interrupted ({name})" in stderr and "resume" in stderr, stderr
        assert "Traceback" not in stderr

    rerun = _run(config, store)
    _, stderr = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, stderr
    assert "resumed from their journal" in stderr
    assert _statuses(store) == {"done": sum(_statuses(store).values())}
    assert _leaderboard(store) == clean
