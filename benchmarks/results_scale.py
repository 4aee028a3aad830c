"""What do reports, exports and plans cost on a store of 100,000 episodes, from the store's facts
(schema 6) and from the transcripts (the path reports took before, kept as the oracle)?

The store is built as ``viewer_latency.py`` builds it (its ``seed_store`` and ``grow``,
imported): a real scripted sweep with the LLM judges, its episodes written again through the
store's API under other model names and task ids until the store holds ``--episodes``.

Each step runs in a child process, timed, its peak RSS read from ``os.wait4`` (the larger of the
process and the one a large report forks; ``*_rss_processes_mb``: each one's peak and the two at
once, sampled from /proc; with ``--pss``, ``"both_pss"`` too: the two at once with the pages
they share counted once, from ``smaps_rollup`` every 0.25 s); the median of ``--repeats`` runs
(the transcript path once: it is the slow one):

- ``report``: ``sweepbench report STORE --json``; ``report_html``: ``--html OUT``;
- ``export``: ``sweepbench export STORE --tables DIR --format parquet``;
- ``plan``: ``sweepbench plan --out STORE --trials 8`` (it reads the store's history);
- ``transcripts_report``: the same report computed from the journals' payloads and the records
  (``build_report(..., from_transcripts=True)``), and ``identical``: whether its JSON is the
  facts report's, byte for byte;
- ``store_bytes_per_episode`` (the file over the episodes) and ``facts_bytes_per_episode``
  (what schema 6's facts take of it, from SQLite's ``dbstat``).

Prints one JSON object last; ``report_ratio`` is the transcript report's time over the facts
report's, in this run.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from viewer_latency import grow, seed_store  # noqa: E402  (the store viewer_latency builds)

from sweepbench.store.runstore import RunStore  # noqa: E402

_TRANSCRIPTS = """
import json, sys
from sweepbench.results.report import build_report
from sweepbench.runner.build import benchmark_info
from sweepbench.store.readonly import ReadOnlyStore
with ReadOnlyStore(sys.argv[1]) as s:
    report = build_report(s, benchmarks=benchmark_info(), from_transcripts=True)
with open(sys.argv[2], "w") as f:
    f.write(json.dumps(report, indent=2) + "\\n")
"""


def _proc_kb(pid: int, name: str, field: str) -> int:
    """A size in kB from ``/proc/PID/NAME``'s ``FIELD:`` line (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/{name}") as f:
            return next((int(line.split()[1]) for line in f if line.startswith(field)), 0)
    except OSError:  # gone
        return 0


def _rss_kb(pid: int) -> int:
    return _proc_kb(pid, "status", "VmRSS:")


def _pss_kb(pid: int) -> int:
    """Proportional set size: each shared page counted over the processes that map it."""
    return _proc_kb(pid, "smaps_rollup", "Pss:")


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def timed(argv: list[str], stdout: Path | None = None, pss: bool = False
          ) -> tuple[float, float, dict]:
    """(wall seconds, peak RSS in MB as ``wait4`` reports it: the largest of the process and
    its children, {"parent", "children", "both"}: peaks in MB sampled every 50 ms from /proc,
    the process, its children summed, and the two at once) of a child process. A report of
    a large store forks a second process: "both" counts their shared pages twice; ``pss``
    adds "both_pss", which counts them once (sampled every 0.25 s: the kernel walks every
    page of both to say it)."""
    out = open(stdout, "wb") if stdout else subprocess.DEVNULL  # noqa: SIM115
    peaks = {"parent": 0, "children": 0, "both": 0, **({"both_pss": 0} if pss else {})}
    samples = 0
    try:
        t = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL,
                                env={**os.environ, "PYTHONHASHSEED": "0"})
        while True:
            done, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if done:
                break
            parent = _rss_kb(proc.pid)
            kids = sum(_rss_kb(c) for c in _children(proc.pid))
            for name, value in (("parent", parent), ("children", kids),
                                ("both", parent + kids)):
                peaks[name] = max(peaks[name], value)
            if pss and samples % 5 == 0:
                peaks["both_pss"] = max(peaks["both_pss"], sum(
                    _pss_kb(p) for p in (proc.pid, *_children(proc.pid))))
            samples += 1
            time.sleep(0.05)
        wall = time.perf_counter() - t
    finally:
        if stdout:
            out.close()
    if os.waitstatus_to_exitcode(status) not in (0, 4):
        raise SystemExit(f"{' '.join(argv)} failed ({status})")
    return wall, usage.ru_maxrss / 1024, {k: round(v / 1024) for k, v in peaks.items()}


def median_of(repeats: int, argv: list[str], stdout: Path | None = None, pss: bool = False
              ) -> tuple[float, float, dict]:
    runs = [timed(argv, stdout, pss) for _ in range(repeats)]
    return (statistics.median(r[0] for r in runs), max(r[1] for r in runs),
            {k: max(r[2][k] for r in runs) for k in runs[0][2]})


def facts_bytes(store: Path) -> int | None:
    db = sqlite3.connect(store)
    try:
        return db.execute("SELECT sum(pgsize) FROM dbstat WHERE name IN ('call_facts', "
                          "'episode_facts', 'fact_texts', 'call_facts_odd', "
                          "'sqlite_autoindex_fact_texts_1')").fetchone()[0]
    except sqlite3.Error:  # no dbstat in this SQLite
        return None
    finally:
        db.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=100_000)
    ap.add_argument("--models", type=int, default=25)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", metavar="DIR", help="build the store in DIR and keep it "
                    "(reused when it is there)")
    ap.add_argument("--no-transcripts", action="store_true",
                    help="skip the transcript report (slow and large at this size)")
    ap.add_argument("--steps", default="report,report_html,export,plan",
                    help="which steps to time, comma-separated (default: all four)")
    ap.add_argument("--pss", action="store_true",
                    help="also the processes' memory with shared pages counted once "
                         "(proportional set size; its sampling takes some CPU)")
    opts = ap.parse_args()
    tmp = Path(opts.keep or tempfile.mkdtemp(prefix="sweepbench-scale-"))
    tmp.mkdir(parents=True, exist_ok=True)
    store = tmp / f"viewer-{opts.episodes}.sqlite"
    if not store.exists():
        seed = tmp / "seed.sqlite"
        if not seed.exists():
            seed_store(seed)
        grow(seed, store, opts.episodes, opts.models)
    with RunStore(store, create=False) as s:  # a store of an older schema: migrated once
        episodes = len(s.episode_status())
    py = [sys.executable]
    cli = [*py, "-m", "sweepbench"]
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    result: dict[str, object] = {"episodes": episodes, "repeats": opts.repeats,
                                 "load_before": os.getloadavg()[0]}
    report_json = out / "report.json"
    steps = {
        "report": ([*cli, "report", str(store), "--json"], report_json),
        "report_html": ([*cli, "report", str(store), "--html", str(out / "report.html")], None),
        "export": ([*cli, "export", str(store), "--tables", str(out / "tables"), "--format",
                    "parquet"], None),
        "plan": ([*cli, "plan", "--out", str(store), "--trials", "8", "--no-progress"], None),
    }
    wanted = opts.steps.split(",")
    if unknown := set(wanted) - set(steps):
        ap.error(f"--steps: no step {', '.join(sorted(unknown))} (steps: {', '.join(steps)})")
    for name, (argv, stdout) in ((n, steps[n]) for n in wanted):
        wall, rss, peaks = median_of(opts.repeats, argv, stdout, opts.pss)
        result[f"{name}_s"], result[f"{name}_rss_mb"] = round(wall, 2), round(rss)
        if peaks["children"]:  # a second process: each one's peak, and the two at once
            result[f"{name}_rss_processes_mb"] = peaks
    if not opts.no_transcripts:
        oracle = out / "transcripts.json"
        wall, rss, _ = timed([*py, "-c", _TRANSCRIPTS, str(store), str(oracle)])
        result["transcripts_report_s"], result["transcripts_report_rss_mb"] = (round(wall, 2),
                                                                               round(rss))
        result["identical"] = oracle.read_bytes() == report_json.read_bytes()
        result["report_ratio"] = round(wall / result["report_s"], 2)
    size = store.stat().st_size
    facts = facts_bytes(store)
    result["store_bytes_per_episode"] = round(size / max(1, episodes))
    result["facts_bytes_per_episode"] = None if facts is None else round(facts / max(1, episodes))
    result["load_after"] = os.getloadavg()[0]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
