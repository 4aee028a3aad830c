"""What do exports, plans and merges cost on a large store, this tree against a baseline
commit, in one run?

The store is built as ``results_scale.py`` builds it (``viewer_latency.py``'s ``seed_store``
and ``grow``), in a child process so that this one stays small (Linux counts the parent's
resident pages at fork in a child's peak RSS); ``--keep DIR`` keeps it (and reuses it). The
baseline is ``git archive``'d into a temporary folder and run from there (``python -m
sweepbench`` puts the working directory first on the path, so each tree runs from its own
folder). Each step runs in a child process,
wall time and peak RSS (``os.wait4``) taken, the median wall of ``--repeats`` runs:

- ``export``: ``sweepbench export STORE --tables DIR --format parquet``;
- ``plan``: ``sweepbench plan --out STORE --trials 8 --json`` (reads the store's history);
- ``trajectories``: ``sweepbench export STORE --trajectories OUT`` (once);
- ``merge``: ``sweepbench merge OUT STORE`` (once; a copy of the store).

Prints one JSON object: ``<step>_s``, ``<step>_rss_mb`` for this tree and ``base_<step>_...``
for the baseline, ``<step>_ratio`` (baseline wall over this tree's), and the load average
before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_BUILD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from viewer_latency import grow, seed_store
store, seed, n = Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
if not seed.exists():
    seed_store(seed)
grow(seed, store, n, 25)
"""


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of a child process run in ``cwd``."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(cwd), "PYTHONHASHSEED": "0"})
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {cwd} ({status})")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline", default="HEAD", help="commit to compare with (default HEAD)")
    ap.add_argument("--keep", metavar="DIR", help="build the store in DIR and keep it")
    opts = ap.parse_args()
    tmp = Path(opts.keep or tempfile.mkdtemp(prefix="sweepbench-export-"))
    tmp.mkdir(parents=True, exist_ok=True)
    store = tmp / f"viewer-{opts.episodes}.sqlite"
    if not store.exists():  # built in a child: a child's peak RSS counts its parent's at fork
        subprocess.run([sys.executable, "-c", _BUILD, str(Path(__file__).resolve().parent),
                        str(store), str(tmp / "seed.sqlite"), str(opts.episodes)], check=True)
    base = Path(tempfile.mkdtemp(prefix="sweepbench-base-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", opts.baseline],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
    cli = [sys.executable, "-m", "sweepbench"]
    out = Path(tempfile.mkdtemp(prefix="sweepbench-out-"))
    steps = {
        "export": ([*cli, "export", str(store), "--tables", str(out / "t"), "--format",
                    "parquet"], opts.repeats),
        "plan": ([*cli, "plan", "--out", str(store), "--trials", "8", "--no-progress",
                  "--json"], opts.repeats),
        "trajectories": ([*cli, "export", str(store), "--trajectories",
                          str(out / "traj.jsonl")], 1),
        "merge": ([*cli, "merge", str(out / "merged.sqlite"), str(store)], 1),
    }
    result: dict[str, object] = {"episodes": opts.episodes, "baseline": opts.baseline,
                                 "load_before": os.getloadavg()[0]}
    for name, (argv, repeats) in steps.items():
        for prefix, tree in (("base_", base), ("", ROOT)):
            runs = []
            for _ in range(repeats):
                (out / "merged.sqlite").unlink(missing_ok=True)
                runs.append(timed(argv, tree))
            result[f"{prefix}{name}_s"] = round(statistics.median(r[0] for r in runs), 2)
            result[f"{prefix}{name}_rss_mb"] = round(max(r[1] for r in runs))
        result[f"{name}_ratio"] = round(result[f"base_{name}_s"] / result[f"{name}_s"], 2)
    result["load_after"] = os.getloadavg()[0]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
