"""Throughput: does the runner keep an endpoint saturated, and what does a call cost us?

N episodes of scripted/oracle with scripted/user:T against a reference server in its own
process, at a fixed latency L, with at most C episodes in flight. An episode has one call in
flight at a time, so the ideal is C / L model calls per second. Measured per configuration, in
a child process of its own (clean CPU and RSS accounting):

- calls/s while the work list is non-empty (all C slots can be busy; the ramp-down tail is the
  workload's, reported separately as ``ratio_overall``), and its ratio to the ideal;
- client CPU per model call: the child's CPU time for the sweep (episode logic, tools, request
  encoding, HTTP, journaling, the store writer thread) over the calls made, after a one-trial
  warm-up sweep in the same process whose CPU (imports on first use and other once-per-process
  set-up, the same for any sweep size) is printed apart as ``warmup_cpu_ms``; of it, what the
  cyclic garbage collector took (``gc_collections``, ``gc_us_per_call``, ``gc_max_pause_ms``:
  see ``runner.sweep.tune_gc``);
- for 5-turn and 50-turn episodes (per-call CPU should not grow with the conversation), and
  the same 5-turn workload through the ``aiohttp`` transport (aiohttp's ClientSession, the
  default before ``http``) and the ``openai`` transport (the official SDK) as baselines;
- peak RSS with 1,000 episodes in flight;
- with ``--baseline REV``, the same 5-turn workload run by an earlier commit of sweepbench
  (its own package and reference server, at its own defaults), interleaved with ours run by
  run: CPU per call is process time, which moves with the machine as much as with the code,
  so a comparison across commits is only fair within one invocation.

Prints one JSON object last; medians over --runs repetitions.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TASKS = 7  # the built-in sample tasks


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(latency: float, env: dict[str, str] | None = None,
                 cwd: str | None = None) -> tuple[subprocess.Popen, str]:
    """A reference server in its own process (``env``, ``cwd``: a baseline's, so that its
    package is the one imported: ``-m`` puts the working directory first on the path)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "sweepbench.cli", "serve", "--port", str(port),
                             "--latency", str(latency)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(200):
        try:
            urllib.request.urlopen(url + "/models", timeout=1).read()
            return proc, url
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("reference server did not start")


def child(spec: dict) -> dict:
    """Run one sweep in this process and measure it (called in a fresh interpreter)."""
    import msgspec

    from sweepbench.config import load_config

    endpoint = {"base_url": spec["url"], "max_concurrency": 100000, "timeout_s": 600.0}
    if spec.get("transport"):
        endpoint["transport"] = spec["transport"]
    cfg = load_config(None, {
        "benchmarks": ["vitabench:delivery"], "models": ["scripted/oracle"],
        "user_model": spec["user"],
        "trials": spec["trials"], "max_concurrency": spec["concurrency"],
        "max_turns": 100,
        "endpoints": [{"name": n, **endpoint} for n in ("scripted/oracle", spec["user"])],
    })
    store = Path(spec["dir"]) / f"{spec['name']}.sqlite"
    # One trial first, untimed in the figures per call: the modules a sweep imports on first
    # use (the benchmark's package, its tools and judge) and other once-per-process set-up
    # cost the same whatever the sweep's size, so they are reported apart (warmup_*).
    warm_cfg = msgspec.structs.replace(cfg, trials=1)
    warm_cpu, _, _ = timed_sweep(warm_cfg, store.with_name(f"{spec['name']}-warmup.sqlite"))
    gc_times: list[float] = []  # CPU of each collection during the measured sweep
    watch = gc_timer(gc_times)
    gc.callbacks.append(watch)
    try:
        cpu, wall, _ = timed_sweep(cfg, store)
    finally:
        gc.callbacks.remove(watch)
    db = sqlite3.connect(store)
    calls = db.execute("SELECT count(*) FROM events WHERE kind = 'model_call'").fetchone()[0]
    last_start = db.execute("SELECT max(started_at) FROM episodes").fetchone()[0]
    first = db.execute("SELECT min(ts) FROM events").fetchone()[0]
    steady = db.execute("SELECT count(*) FROM events WHERE kind = 'model_call' AND ts <= ?",
                        (last_start,)).fetchone()[0]
    episodes = db.execute("SELECT count(*) FROM episodes WHERE status = 'done'").fetchone()[0]
    db.close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"calls": calls, "episodes": episodes, "cpu_s": cpu, "wall_s": wall,
            "warmup_cpu_s": warm_cpu,
            "gc_collections": len(gc_times), "gc_cpu_s": sum(gc_times),
            "gc_max_pause_s": max(gc_times, default=0.0),
            "user_s": usage.ru_utime, "sys_s": usage.ru_stime,  # whole process, imports too
            "load_1m": os.getloadavg()[0],
            "steady_calls_per_s": steady / max(last_start - first, 1e-9),
            "overall_calls_per_s": calls / wall,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def gc_timer(into: list[float]):  # noqa: ANN201
    """A ``gc.callbacks`` entry appending each collection's CPU time (of the thread that ran
    it) to ``into``: what the cyclic collector costs a sweep, and its longest pause."""
    started = [0.0]

    def watch(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.thread_time()
        else:
            into.append(time.thread_time() - started[0])

    return watch


def timed_sweep(cfg, store: Path) -> tuple[float, float, float]:  # noqa: ANN001
    """Run the sweep ``cfg`` into ``store`` on uvloop: (CPU seconds, wall seconds, start time)."""
    import asyncio

    from sweepbench.runner.sweep import install_uvloop, run_sweep

    install_uvloop()
    cpu0, t0 = time.process_time(), time.time()
    asyncio.run(run_sweep(cfg, store))
    return time.process_time() - cpu0, time.time() - t0, t0


def measure(spec: dict, script: str = __file__, env: dict[str, str] | None = None) -> dict:
    """``script --child SPEC`` in a fresh interpreter; the JSON object it prints last."""
    out = subprocess.run([sys.executable, script, "--child", json.dumps(spec)],
                         capture_output=True, text=True, env=env or {**os.environ})
    if out.returncode != 0:
        raise RuntimeError(f"{spec['name']} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def baseline_tree(rev: str, into: str) -> tuple[str, dict[str, str]]:
    """Commit ``rev`` of this repository unpacked under ``into``: (its short hash, an
    environment whose PYTHONPATH imports its ``sweepbench`` before the installed one)."""
    repo = Path(__file__).resolve().parent.parent
    try:
        sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", f"{rev}^{{commit}}"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        err = getattr(e, "stderr", "") or e
        raise SystemExit(f"--baseline {rev}: not a commit of {repo} ({str(err).strip()})") from None
    tree = Path(into) / f"baseline-{sha}"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(repo), "archive", sha, "sweepbench"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    probe = subprocess.run([sys.executable, "-c", "import sweepbench; print(sweepbench.__file__)"],
                           capture_output=True, text=True, env=env, cwd=into)
    if not probe.stdout.startswith(str(tree)):
        raise SystemExit(f"--baseline {rev}: its package did not import ({probe.stderr[-500:]})")
    return sha, env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller version, under a minute")
    ap.add_argument("--runs", type=int, default=None, help="repetitions (default 3; quick 1)")
    ap.add_argument("--baseline", metavar="REV",
                    help="also run the 5-turn workload with commit REV's sweepbench (e.g. e4798b4, "
                         "issue 12's baseline), interleaved with ours: CPU per call against it")
    ap.add_argument("--only-5", action="store_true",
                    help="only the 5-turn workload (and --baseline's): an A/B of CPU per call")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.child:
        print(json.dumps(child(json.loads(opts.child))))
        return

    quick = opts.quick
    runs = opts.runs or (1 if quick else 3)
    C, L = (64, 0.1) if quick else (256, 0.2)
    trials_5 = 40 if quick else 300  # x 7 tasks: 280 / 2,100 episodes
    trials_50 = 4 if quick else 40
    tmp = tempfile.mkdtemp(prefix="sweepbench-tp-")
    base_sha, base_env, base_server = None, None, None
    if opts.baseline:
        base_sha, base_env = baseline_tree(opts.baseline, tmp)
        base_server, base_url = start_server(L, base_env, cwd=tmp)
    server, url = start_server(L)
    try:
        rows: dict[str, list[dict]] = {"5": [], "50": [], "aiohttp": [], "openai": [],
                                       "rss": [], "baseline": []}
        for r in range(runs):
            base = {"url": url, "dir": tmp, "concurrency": C}
            rows["5"].append(measure({**base, "name": f"t5-{r}", "user": "scripted/user:5",
                                      "trials": trials_5}))
            if not opts.only_5:
                rows["50"].append(measure({**base, "name": f"t50-{r}",
                                           "user": "scripted/user:50", "trials": trials_50}))
                rows["aiohttp"].append(measure({**base, "name": f"aio-{r}",
                                                "user": "scripted/user:5", "trials": trials_5,
                                                "transport": "aiohttp"}))
                rows["openai"].append(measure({**base, "name": f"oai-{r}",
                                               "user": "scripted/user:5",
                                               "trials": max(4, trials_5 // 3),
                                               "transport": "openai"}))
            if base_env is not None:  # its own defaults: only the workload is ours
                rows["baseline"].append(measure(
                    {**base, "url": base_url, "name": f"base-{r}", "user": "scripted/user:5",
                     "trials": trials_5}, env=base_env))
            for k in ("5", "50", "aiohttp", "openai", "baseline"):
                if rows[k]:
                    print(k, json.dumps(rows[k][-1]), file=sys.stderr)
        server.terminate()
        server.wait()
        # 1,000 episodes in flight: a slow server so they all wait at once
        server, url = start_server(3.0 if not quick else 1.0)
        if not opts.only_5:
            rows["rss"].append(measure({"url": url, "dir": tmp, "concurrency": 1000,
                                        "name": "rss", "user": "scripted/user:2",
                                        "trials": 1000 // TASKS + 1}))
    finally:
        for proc in (server, base_server):
            if proc is not None:
                proc.terminate()
                proc.wait()
        if base_sha is not None:  # the stores stay for a look; the unpacked commit need not
            shutil.rmtree(Path(tmp) / f"baseline-{base_sha}", ignore_errors=True)

    def med(key: str, field: str) -> float:
        return statistics.median(x[field] for x in rows[key])

    def cpu_per_call(key: str) -> float:
        return statistics.median(x["cpu_s"] / x["calls"] * 1e6 for x in rows[key])

    result = {"episodes": int(med("5", "episodes")), "runs": runs,
              "cpu_us_per_call": round(cpu_per_call("5"), 1),
              "cpu_us_per_call_runs": [round(x["cpu_s"] / x["calls"] * 1e6, 1)
                                       for x in rows["5"]],
              "load_1m": round(statistics.median(x["load_1m"] for x in rows["5"]), 2)}
    if not opts.only_5:
        result = _all_workloads(rows, C, L, runs)
    if rows["baseline"]:
        result["baseline"] = base_sha
        result["cpu_us_per_call_baseline"] = round(cpu_per_call("baseline"), 1)
        result["cpu_us_per_call_baseline_runs"] = [round(x["cpu_s"] / x["calls"] * 1e6, 1)
                                                   for x in rows["baseline"]]
        # run by run, as for aiohttp: each pair ran back to back under the same load
        result["cpu_ratio_vs_baseline"] = round(statistics.median(
            a["cpu_s"] / a["calls"] / (b["cpu_s"] / b["calls"])
            for a, b in zip(rows["5"], rows["baseline"])), 3)
    print(json.dumps(result))


def _all_workloads(rows: dict[str, list[dict]], C: int, L: float, runs: int) -> dict:
    """The figures of every workload (without ``--only-5``)."""

    def med(key: str, field: str) -> float:
        return statistics.median(x[field] for x in rows[key])

    def cpu_per_call(key: str) -> float:
        return statistics.median(x["cpu_s"] / x["calls"] * 1e6 for x in rows[key])

    ideal = C / L
    cpu5, cpu50, cpu_oai = cpu_per_call("5"), cpu_per_call("50"), cpu_per_call("openai")
    cpu_aio = cpu_per_call("aiohttp")
    # the same workload's two transports, run by run (the same load): the transport's saving
    vs_aio = statistics.median(a["cpu_s"] / a["calls"] / (b["cpu_s"] / b["calls"])
                               for a, b in zip(rows["5"], rows["aiohttp"]))
    result = {
        "episodes": int(med("5", "episodes")), "concurrency": C, "latency_s": L, "runs": runs,
        "calls_per_s": round(med("5", "steady_calls_per_s"), 1),
        "ideal_calls_per_s": ideal,
        "ratio": round(med("5", "steady_calls_per_s") / ideal, 3),
        "ratio_overall": round(med("5", "overall_calls_per_s") / ideal, 3),
        "ratio_50_turn": round(med("50", "overall_calls_per_s") / ideal, 3),
        "cpu_us_per_call": round(cpu5, 1),
        "cpu_us_per_call_50_turn": round(cpu50, 1),
        "cpu_ratio_50_vs_5": round(cpu50 / cpu5, 3),
        "cpu_us_per_call_aiohttp": round(cpu_aio, 1),
        "cpu_ratio_vs_aiohttp": round(vs_aio, 3),
        "cpu_us_per_call_openai": round(cpu_oai, 1),
        "cpu_ratio_vs_openai": round(cpu5 / cpu_oai, 3),
        "rss_mb_1000_in_flight": round(rows["rss"][0]["rss_mb"], 1),
        "warmup_cpu_ms": round(med("5", "warmup_cpu_s") * 1e3, 1),
        "gc_collections": med("5", "gc_collections"),
        "gc_us_per_call": round(statistics.median(
            x["gc_cpu_s"] / x["calls"] * 1e6 for x in rows["5"]), 2),
        "gc_max_pause_ms": round(max(x["gc_max_pause_s"] for x in rows["5"]) * 1e3, 1),
        # each run's figure, and the machine's load while measuring: CPU time per call grows
        # when other processes share the cores, so compare runs made under the same load
        "cpu_us_per_call_runs": [round(x["cpu_s"] / x["calls"] * 1e6, 1) for x in rows["5"]],
        "cpu_us_per_call_50_turn_runs": [round(x["cpu_s"] / x["calls"] * 1e6, 1)
                                         for x in rows["50"]],
        "load_1m": round(statistics.median(x["load_1m"] for k in ("5", "50", "aiohttp", "openai")
                                           for x in rows[k]), 2),
    }
    return result


if __name__ == "__main__":
    main()
