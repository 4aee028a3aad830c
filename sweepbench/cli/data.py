"""``sweepbench data BENCHMARK SOURCE``: a benchmark's data dir built from its upstream's own
files, so that what a model sees is upstream's, byte for byte, and the data dir says which
upstream release it is."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from sweepbench.cli.common import err, say
from sweepbench.errors import ConfigError


def default_out(family: str) -> Path:
    """``$SWEEPBENCH_DATA/<benchmark>`` when that is set, else ``./data/<benchmark>``."""
    root = os.environ.get("SWEEPBENCH_DATA") or "data"
    return Path(root).expanduser() / family


def cmd_data(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks import registry

    benchmark = registry.get(args.data_benchmark)
    family, named, _ = args.data_benchmark.strip().lower().partition("@")
    release = args.release
    if named:  # vitabench@2025-11: the files must be that release
        if release not in (None, benchmark.release):
            raise ConfigError(f"{args.data_benchmark} and --release {release} name two releases")
        release = benchmark.release
    target = Path(args.out).expanduser() if args.out else default_out(family)
    say(err, f"building {target} from {args.source} ...")
    print(benchmark.build_data_dir(Path(args.source).expanduser(), target, release=release))
    say(err, f"use it with --data-dir {target.parent} (or SWEEPBENCH_DATA={target.parent})")
    return 0
