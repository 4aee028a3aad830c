"""Judging while the sweep runs: how much wall time does an LLM judge add?

The same sweep (scripted/oracle and scripted/noisy:0.3 on the default tasks, against the
built-in reference server at a fixed latency) runs twice per repetition: with judging off (the
state check only, which is CPU-cheap) and with scripted/judge judging every episode (the
sliding-window rubric judge for VitaBench, the Likert judge for T1) through the judge pool,
pipelined with the episodes. Their wall
ratio is the price of judging; the ideal is 1 (only the last episodes' judging cannot overlap).

Prints one JSON object last: {"wall_ratio", ...}, medians over --runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sweepbench.config import load_config
from sweepbench.store.runstore import RunStore
from sweepbench.runner.sweep import install_uvloop, run_sweep


async def one(cfg: dict, path: Path) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    await run_sweep(load_config(None, cfg), path)
    wall = time.perf_counter() - t0
    with RunStore(path) as store:
        llm = [j for j in store.judgments() if j["judge"] != "state"]
        episodes = len(store.episode_status())
    return wall, len(llm), episodes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller version, under a minute")
    ap.add_argument("--runs", type=int, default=None, help="repetitions (default 3; quick 1)")
    opts = ap.parse_args()
    runs = opts.runs or (1 if opts.quick else 3)
    base = {"models": ["scripted/oracle", "scripted/noisy:0.3"],
            "trials": 4 if opts.quick else 16, "max_concurrency": 32,
            "reference_latency_s": 0.05}
    install_uvloop()
    tmp = Path(tempfile.mkdtemp(prefix="sweepbench-judge-"))
    off, on, judged = [], [], []
    for r in range(runs):
        w, _, episodes = asyncio.run(one(base, tmp / f"off-{r}.sqlite"))
        off.append(w)
        w, n, _ = asyncio.run(one({**base, "judge_models": ["scripted/judge"],
                                   "judge_methods": ["sliding", "likert"]}, tmp / f"on-{r}.sqlite"))
        on.append(w)
        judged.append(n)
        print(json.dumps({"run": r, "off_s": off[-1], "on_s": on[-1], "llm_judgments": n}),
              file=sys.stderr)
    print(json.dumps({
        "wall_ratio": round(statistics.median(on) / statistics.median(off), 3),
        "wall_off_s": round(statistics.median(off), 2),
        "wall_on_s": round(statistics.median(on), 2),
        "episodes": episodes, "llm_judgments": min(judged), "runs": runs,
        "latency_s": base["reference_latency_s"],
    }))


if __name__ == "__main__":
    main()
