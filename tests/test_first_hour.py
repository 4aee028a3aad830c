"""docs/first-hour.md, run: every block the page marks is run in order in an empty directory,
each command through a shell, and must exit as the page says and print the lines the page
shows, so the page cannot drift from the tool.

Markers (an HTML comment right before a fenced block):

- ``<!-- first-hour: run -->``: a ``console`` block; ``$ `` lines are commands, the lines after
  one are what it prints. A line ``...`` stands for lines left out; every other line must be
  a line of the command's output (stdout and stderr), compared with runs of blanks collapsed,
  run ids and ports (8000: the reference server's, 8765: the viewer's) left free.
- ``<!-- first-hour: run, exit N -->``: the same, the commands exiting with N.
- ``<!-- first-hour: file NAME -->``: the block is written to NAME.

What the test does not run as written: ``pip install`` (CI has installed the project);
``sweepbench serve ... &`` starts the server itself on a free port (``kill %1`` stops it), and
``sweepbench view`` starts the viewer on a free port, fetches its page and stops it.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "first-hour.md"

MARKER = re.compile(
    r"<!-- first-hour: (?:(?P<run>run)(?:, exit (?P<exit>\d+))?|file (?P<file>\S+)) -->\n"
    r"```(?P<lang>[\w-]*)\n(?P<body>.*?)^```", re.DOTALL | re.MULTILINE)
RUN_ID = re.compile(r"run-\d{8}-\d{6}-[0-9a-f]+")
SERVER_PORT = "8000"
VIEWER_PORT = "8765"


@dataclass
class Step:
    kind: str                   # "command" or "file"
    text: str                   # the command, or the file's content
    name: str = ""              # the file's name
    exit: int = 0
    expected: list[str] = field(default_factory=list)


def page_steps(text: str) -> list[Step]:
    """The marked blocks of the page, as steps in page order."""
    steps: list[Step] = []
    for m in MARKER.finditer(text):
        if m["file"]:
            steps.append(Step("file", m["body"], name=m["file"]))
            continue
        assert m["lang"] == "console", f"a run block must be a console block: {m[0][:80]!r}"
        for line in m["body"].splitlines():
            if line.startswith("$ "):
                steps.append(Step("command", line[2:].strip(), exit=int(m["exit"] or 0)))
            else:
                assert steps and steps[-1].kind == "command", f"output before a command: {line!r}"
                steps[-1].expected.append(line)
    return steps


def _squash(line: str) -> str:
    return " ".join(line.split())


def _pattern(line: str, ports: dict[str, str]) -> re.Pattern[str]:
    """A documented output line as a regex over a squashed output line: its run ids free,
    its documented ports the real ones."""
    line = _squash(line)
    for documented, real in ports.items():
        line = line.replace(f"127.0.0.1:{documented}", f"127.0.0.1:{real}")
    return re.compile(r"run-\S+".join(re.escape(part) for part in RUN_ID.split(line)))


def missing_lines(expected: list[str], output: str, ports: dict[str, str]) -> list[str]:
    """The documented lines (``...`` aside) that are no line of ``output``."""
    real = [_squash(line) for line in output.splitlines()]
    return [line for line in expected if line.strip() != "..."
            and not any(_pattern(line, ports).fullmatch(r) for r in real)]


class Background:
    """A long-running command whose first line of output is awaited."""

    def __init__(self, command: str, cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(["sh", "-c", "exec " + command], cwd=cwd, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                assert self.proc.poll() is None, f"exited {self.proc.returncode}: {self.seen}"
                continue
            self.seen.append(line)
            if m := re.search(pattern, line):
                return m
        raise AssertionError(f"no line matching {pattern!r} in {timeout} s: {self.seen}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def _env(bin_dir: Path) -> dict[str, str]:
    """The environment of the commands: ``sweepbench`` is this Python's, this checkout's code,
    an 80-column terminal, no data dir, base URL or key from the caller's environment."""
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("SWEEPBENCH_") or k.endswith(("_BASE_URL", "_API_KEY")))}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["COLUMNS"] = "80"
    env.pop("LINES", None)
    return env


def test_the_page_marks_the_whole_first_hour():
    """The markers hold: a test that found no blocks would pass without checking anything."""
    steps = page_steps(PAGE.read_text(encoding="utf-8"))
    commands = [s.text for s in steps if s.kind == "command"]
    for start in ("pip install", "sweepbench run", "sweepbench report", "sweepbench view",
                  "sweepbench serve", "sweepbench plan", "sweepbench export", "kill %1"):
        assert any(c.startswith(start) or f" {start}" in c for c in commands), start
    assert sum(bool(s.expected) for s in steps) >= 8


def test_the_first_hour_runs_as_the_page_says(tmp_path):
    steps = page_steps(PAGE.read_text(encoding="utf-8"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "sweepbench"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m sweepbench "$@"\n',
                       encoding="utf-8")
    wrapper.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = _env(bin_dir)
    ports: dict[str, str] = {}
    server: Background | None = None
    try:
        for step in steps:
            if step.kind == "file":
                text = step.text.replace(f"127.0.0.1:{SERVER_PORT}",
                                         f"127.0.0.1:{ports.get(SERVER_PORT, SERVER_PORT)}")
                (work / step.name).write_text(text, encoding="utf-8")
                continue
            command = step.text
            if command.startswith("pip install"):
                continue  # CI installs the project itself
            if command.endswith("&"):
                assert command.startswith("sweepbench serve") and server is None, command
                bare = re.sub(r"--port \d+", "", command[:-1]).strip()
                server = Background(bare + " --port 0", work, env)
                ports[SERVER_PORT] = server.wait_for(r"^http://127\.0\.0\.1:(\d+)/v1$")[1]
                assert not missing_lines(step.expected, "\n".join(server.seen), ports)
                continue
            if command == "kill %1":
                assert server is not None, "kill %1 with no server started"
                server.stop()
                server = None
                continue
            for documented, real in ports.items():
                command = command.replace(f"127.0.0.1:{documented}", f"127.0.0.1:{real}")
            if command.startswith("sweepbench view"):
                viewer = Background(command + " --port 0", work, env)
                try:
                    url = viewer.wait_for(r"at (http://127\.0\.0\.1:(\d+)/)")
                    ports[VIEWER_PORT] = url[2]
                    with urllib.request.urlopen(url[1], timeout=30) as answer:
                        assert answer.status == 200
                    assert not missing_lines(step.expected, "\n".join(viewer.seen), ports)
                finally:
                    viewer.stop()
                continue
            done = subprocess.run(["sh", "-c", command], cwd=work, env=env, timeout=120,
                                  capture_output=True, text=True, check=False)
            output = done.stdout + done.stderr
            assert done.returncode == step.exit, (
                f"`{step.text}` exited {done.returncode}, the page says {step.exit}:\n{output}")
            missing = missing_lines(step.expected, output, ports)
            assert not missing, (f"`{step.text}` did not print these lines the page shows:\n"
                                 + "\n".join(missing) + f"\n--- it printed:\n{output}")
    finally:
        if server is not None:
            server.stop()


def test_a_drifted_line_is_caught_and_run_ids_and_ports_are_free():
    out = ("run run-20261128-014031-6f56e6: 24 episodes run; store: runs/local.sqlite\n"
           "│ scripted/oracle    │    20 │ 4 │ 100.0% │\n"
           "viewing sweepbench at http://127.0.0.1:40123/ (Ctrl-C stops)\n")
    ports = {VIEWER_PORT: "40123"}
    assert not missing_lines(
        ["run run-20261128-999999-000000: 24 episodes run; store: runs/local.sqlite",
         "│ scripted/oracle │ 20 │ 4 │ 100.0% │", "...",
         "viewing sweepbench at http://127.0.0.1:8765/ (Ctrl-C stops)"], out, ports)
    assert missing_lines(["│ scripted/oracle │ 20 │ 4 │ 99.0% │"], out, ports)
    assert missing_lines(["run run-1: 25 episodes run; store: runs/local.sqlite"], out, ports)
    assert missing_lines(["viewing sweepbench at http://127.0.0.1:8765/"], out, ports)
