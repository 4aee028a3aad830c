"""``sweepbench run --workers N``: the one-line error without Ray, and Ctrl-C at the driver as
in one process (exit 130, nothing stored as an error, a rerun completes)."""

from __future__ import annotations

import importlib.util
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sweepbench.cli import main

RUN = [sys.executable, "-m", "sweepbench.cli", "run", "--workers", "2", "--no-progress",
       "--json", "--model", "scripted/oracle", "--model", "scripted/noisy:0.3", "--trials", "2",
       "--latency", "0.03", "--max-concurrency", "8"]


def test_workers_without_ray_is_one_line_naming_the_pip_command(monkeypatch, capsys,
                                                                  tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    code = main(["run", "--workers", "2", "--out", str(tmp_path / "s.sqlite"), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "pip install 'sweepbench[ray]'" in err
    assert not (tmp_path / "s.sqlite").exists()  # nothing started


def test_a_dead_ray_address_is_one_line_at_once(monkeypatch, capsys, tmp_path):
    pytest.importorskip("ray", reason="the ray extra is not installed")
    import socket

    with socket.socket() as s:  # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    start = time.monotonic()
    code = main(["run", "--ray", f"127.0.0.1:{port}", "--out", str(tmp_path / "s.sqlite"),
                 "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and time.monotonic() - start < 10  # ray.init alone would retry for minutes
    assert len(err.splitlines()) == 1 and f"no Ray cluster answers at 127.0.0.1:{port}" in err


def _statuses(store: Path) -> dict[str, int]:
    try:
        with sqlite3.connect(store) as c:
            return dict(c.execute("SELECT status, count(*) FROM episodes GROUP BY status"))
    except sqlite3.OperationalError as exc:  # the file is made before its schema is committed
        if "no such table" in str(exc):
            return {}
        raise


def test_ctrl_c_at_the_driver_stops_as_in_one_process_and_a_rerun_completes(tmp_path):
    pytest.importorskip("ray", reason="the ray extra is not installed")
    store = tmp_path / "s.sqlite"
    proc = subprocess.Popen([*RUN, "--out", str(store)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if store.exists() and _statuses(store).get("done", 0) >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()[1]
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    statuses = _statuses(store)
    assert "error" not in statuses and statuses.get("running", 0) > 0, statuses
    rerun = subprocess.run([*RUN, "--out", str(store)], capture_output=True, text=True,
                           timeout=300, check=False)
    assert rerun.returncode == 0, rerun.stderr
    assert set(_statuses(store)) == {"done"}
    report = json.loads(rerun.stdout)
    assert report["status"] == "done"
