"""A worker's start does its one-time work (the benchmarks' imports) before the driver hands it
episodes: done in the first episodes instead, it was 8% of a quick sweep's worker CPU, in the
middle of the sweep. Checked in a fresh interpreter, where nothing is imported yet."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import asyncio, sys
    import msgspec
    from sweepbench.config import load_config
    from sweepbench.scaleout.worker import EpisodeWorker

    cfg = load_config(None, {"models": ["scripted/oracle"],
                             "benchmarks": ["vitabench:delivery", "t1:flight"]})
    names = ("sweepbench.benchmarks.vitabench.benchmark", "sweepbench.benchmarks.t1.benchmark")
    print(*(n in sys.modules for n in names))
    worker = EpisodeWorker(msgspec.to_builtins(cfg), "run", slots=1,
                           reference_url="http://127.0.0.1:9/v1")  # never called
    asyncio.run(worker.start())
    print(*(n in sys.modules for n in names))
""")


def test_start_imports_the_benchmarks_before_any_episode():
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120, check=True).stdout.split("\n")
    assert out[0] == "False False", out  # not imported by the worker's own imports
    assert out[1] == "True True", out
