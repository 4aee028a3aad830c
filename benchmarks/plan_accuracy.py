"""How close `sweepbench plan` comes to the run that follows it.

Against the built-in reference server with latency (scripted agents, user and judge): a plan
is made, then the sweep it plans is run, and the ratios predicted / actual of requests
(counted at the server), tokens (prompt and completion, from the server's usage) and wall
time are taken, in two settings:

- **with history**: the store already holds trials 0-1 of the sweep; the plan (and the run)
  adds trials 2-3. Targets: requests and tokens within 15%, wall time within 25%.
- **without history**: an empty store; the plan falls back to the benchmarks' defaults and
  says the estimate is rough. Target: within a factor of 2.
- **the embedded default** (``sweepbench run`` with no options: no latency, the judge double)
  on an empty store: the sweep's wall time must fall in the plan's range (``default``).

Each setting is repeated (``--runs``, default 3) and the medians are reported, after one
unmeasured warm-up sweep (a real `run` is a process of its own, as warm as the runs in its
history). The last line printed is one JSON object.
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
from sweepbench.runner.plan import make_plan
from sweepbench.runner.sweep import Sweep, install_uvloop

BASE = {"models": ["scripted/oracle", "scripted/noisy:0.3"], "judge_models": ["scripted/judge"],
        "max_concurrency": 32, "reference_latency": "lognormal:median=0.02,sigma=0.3,max=0.2"}


async def measure(cfg_data: dict, store_path: Path) -> dict:
    """Plan ``cfg_data`` against the store, run it, and compare."""
    cfg = load_config(None, cfg_data)
    with RunStore(store_path) as store:
        plan = make_plan(cfg, store)
        sweep = Sweep(cfg, store)
        t0 = time.perf_counter()
        await sweep.run()
        wall = time.perf_counter() - t0
        server = sweep.reference
        actual = {"requests": sum(server.requests.values()),
                  "tokens": server.prompt_tokens + server.completion_tokens,
                  "wall_s": wall}
    predicted = {"requests": plan["requests"],
                 "tokens": plan["prompt_tokens"] + plan["completion_tokens"],
                 "wall_s": plan["wall_s"]["estimate"]}
    return {"ratios": {k: predicted[k] / actual[k] for k in actual}, "rough": plan["rough"],
            "predicted": predicted, "actual": actual,
            "in_range": plan["wall_s"]["low"] <= wall <= plan["wall_s"]["high"],
            "range_s": [plan["wall_s"]["low"], plan["wall_s"]["high"]]}


async def one_round(tmp: Path, i: int, trials: int) -> tuple[dict, dict, dict]:
    history = tmp / f"history-{i}.sqlite"
    await Sweep(load_config(None, {**BASE, "trials": trials}), RunStore(history)).run()
    with_history = await measure({**BASE, "trials": 2 * trials}, history)
    without = await measure({**BASE, "trials": trials}, tmp / f"fresh-{i}.sqlite")
    default = await measure({"judge_models": ["scripted/judge"]}, tmp / f"default-{i}.sqlite")
    return with_history, without, default


def median_ratios(results: list[dict]) -> dict:
    return {k: round(statistics.median(r["ratios"][k] for r in results), 3)
            for k in results[0]["ratios"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller version")
    ap.add_argument("--runs", type=int, default=None, help="repetitions (default 3; quick 1)")
    opts = ap.parse_args()
    runs = opts.runs or (1 if opts.quick else 3)
    trials = 1 if opts.quick else 2
    install_uvloop()
    tmp = Path(tempfile.mkdtemp(prefix="sweepbench-plan-"))
    # one sweep first, unmeasured: each `sweepbench run` is a process of its own, so the
    # history run and the planned run start equally warm (tasks, knowledge base, schemas)
    asyncio.run(Sweep(load_config(None, {**BASE, "trials": 1}), RunStore(tmp / "warm.sqlite")).run())
    hist, fresh, default = [], [], []
    for i in range(runs):
        h, f, d = asyncio.run(one_round(tmp, i, trials))
        hist.append(h)
        fresh.append(f)
        default.append(d)
        print(json.dumps({"run": i, "with_history": h, "without_history": f, "default": d}),
              file=sys.stderr)
    with_history, without = median_ratios(hist), median_ratios(fresh)
    print(json.dumps({
        "with_history": with_history,
        "without_history": without,
        "default": {"wall_s": [round(d["actual"]["wall_s"], 2) for d in default],
                    "range_s": [[round(d["range_s"][0], 2), round(d["range_s"][1], 2)]
                                for d in default]},
        "without_history_said_rough": all(r["rough"] for r in fresh),
        "with_history_said_rough": any(r["rough"] for r in hist),
        "wall_in_predicted_range": {"with_history": sum(r["in_range"] for r in hist),
                                    "without_history": sum(r["in_range"] for r in fresh),
                                    "default": sum(r["in_range"] for r in default),
                                    "of": runs},
        "targets_met": (all(abs(with_history[k] - 1) <= 0.15 for k in ("requests", "tokens"))
                        and abs(with_history["wall_s"] - 1) <= 0.25
                        and all(0.5 <= v <= 2.0 for v in without.values())),
        "runs": runs,
        "trials": {"history": trials, "planned": trials},
    }))


if __name__ == "__main__":
    main()
