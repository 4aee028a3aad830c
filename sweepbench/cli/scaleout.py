"""``sweepbench run --workers N`` / ``--ray ADDRESS``: the sweep of ``run`` with its episodes
on a Ray cluster (:mod:`sweepbench.scaleout`); the store locked and written here, the live
progress here, the report and exit status as ``run`` makes them."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from sweepbench.cli.common import err, open_store, say, shard_of, store_path
from sweepbench.config import SweepConfig


def run_scaled_out(cfg: SweepConfig, out_path: str | Path | None, args: argparse.Namespace):
    """Run the sweep on ``args.workers`` workers (default: 2, or the cluster's CPUs when
    joining one with ``--ray``) and return its ``SweepOutcome``."""
    from sweepbench.datasets.data_dir import resolve_data_dir
    from sweepbench.runner.progress import ProgressDisplay
    from sweepbench.runner.sweep import install_uvloop
    from sweepbench.scaleout.cluster import Cluster, require_ray
    from sweepbench.scaleout.driver import Driver
    from sweepbench.store.lock import StoreLock

    require_ray()  # before anything: the one-line error naming the pip command
    part = shard_of(args)
    path = store_path(out_path, part)
    install_uvloop()
    prices = {ep.name: ep for ep in cfg.endpoints if not ep.unpriced}
    data_dir = resolve_data_dir(cfg.data_dir)
    with Cluster(workers=args.workers or 2, address=args.ray, data_dir=data_dir) as cluster:
        workers = args.workers or cluster.cpus()
        say(err, f"scale-out: {workers} workers on {cluster.describe()}")
        with (StoreLock(path), open_store(path, create=True) as store,
              ProgressDisplay(err, enabled=not args.no_progress, prices=prices) as progress):
            driver = Driver(cfg, store, cluster=cluster, workers=workers,
                            progress=progress.update, retry_errors=args.retry_errors,
                            shard=part, check_endpoints=not args.no_preflight,
                            warn=lambda text: say(err, text))
            return asyncio.run(driver.run())
