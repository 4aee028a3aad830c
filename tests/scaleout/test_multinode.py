"""A head and one extra node started with ``ray start`` on 127.0.0.1, the driver joining with
``--ray``'s address: the workers spread over both nodes, and when the extra node dies (its
raylet and workers SIGKILLed) the sweep completes on the head with the same episodes."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec
import pytest

from sweepbench.config import load_config
from sweepbench.runner.sweep import Sweep
from sweepbench.store.runstore import RunStore

from ..support import without_backups

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

from sweepbench.scaleout.cluster import Cluster  # noqa: E402
from sweepbench.scaleout.driver import Driver  # noqa: E402

MODELS = ["scripted/oracle", "scripted/noisy:0.3"]
CFG = dict(models=MODELS, trials=2, max_concurrency=8, reference_latency_s=0.02,
           endpoints=without_backups(*MODELS, "scripted/user"))
RAY = str(Path(sys.executable).with_name("ray"))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(tmp: str) -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])
    # token auth off: a test cluster on loopback, joined by this process as a driver
    return {**os.environ, "PYTHONPATH": root, "RAY_TMPDIR": tmp, "RAY_AUTH_MODE": "disabled",
            "RAY_USAGE_STATS_ENABLED": "0"}


def _node(env: dict[str, str], *args: str) -> subprocess.Popen:
    """``ray start ... --block`` in a session of its own: killing its group kills the node
    (its raylet and workers), and only it."""
    return subprocess.Popen([RAY, "start", "--block", "--num-cpus=1", "--disable-usage-stats",
                             "--node-ip-address=127.0.0.1", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _kill(node: subprocess.Popen) -> None:
    try:
        os.killpg(node.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    node.wait(30)


@pytest.fixture
def two_nodes():
    """(address, the extra node's process) of a head + one extra node on 127.0.0.1."""
    port = _port()
    tmp = tempfile.mkdtemp(prefix="r", dir="/tmp")  # short: Ray's socket paths have a limit
    env = _env(tmp)
    head = _node(env, "--head", f"--port={port}", "--include-dashboard=false")
    nodes = [head]
    try:
        deadline = time.monotonic() + 60
        while True:  # the head's GCS answers
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and head.poll() is None, "no head"
                time.sleep(0.2)
        address = f"127.0.0.1:{port}"
        extra = _node(env, f"--address={address}", '--resources={"extra": 1}')
        nodes.append(extra)
        yield address, extra
    finally:
        for node in reversed(nodes):
            _kill(node)
        shutil.rmtree(tmp, ignore_errors=True)


def stored(store: RunStore, run_id: str) -> dict[str, bytes]:
    return {f"{r.model}|{r.task_id}|{r.trial}": msgspec.json.encode([r.termination, r.messages])
            for r in store.episodes(run_id)}


def test_the_extra_node_dies_and_the_sweep_completes_on_the_head(two_nodes, tmp_path):
    address, extra = two_nodes
    cfg = load_config(None, CFG)
    with RunStore(tmp_path / "one.sqlite") as store:
        one = Sweep(cfg, store)
        asyncio.run(one.run())
        expected = stored(store, one.run_id)
    with Cluster(workers=2, address=address) as cluster:
        deadline = time.monotonic() + 60
        while len([n for n in ray.nodes() if n["Alive"]]) < 2:  # the extra node joined
            assert time.monotonic() < deadline, "the extra node did not join"
            time.sleep(0.2)
        extra_node = next(n["NodeID"] for n in ray.nodes()
                          if n["Alive"] and "extra" in n["Resources"])
        with RunStore(tmp_path / "ray.sqlite") as store:
            driver = Driver(cfg, store, cluster=cluster, workers=2)

            async def run_and_kill_the_node():
                task = asyncio.create_task(driver.run())
                while sum(w.episodes for w in driver.workers) < 4:
                    await asyncio.sleep(0.005)
                nodes = [await w.handle.node_id.remote() for w in driver.workers]
                assert extra_node in nodes and len(set(nodes)) == 2, nodes  # spread over both
                _kill(extra)  # the node: its raylet and its workers
                return await task

            outcome = asyncio.run(run_and_kill_the_node())
            assert driver.worker_deaths == 1 and outcome.errors == 0
            assert stored(store, driver.run_id) == expected
