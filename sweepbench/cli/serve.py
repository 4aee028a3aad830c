"""The commands that serve until stopped: ``serve`` (the reference server of scripted models)
and ``view`` (the trajectory viewer). A server that cannot bind its address is one line, not a
traceback."""

from __future__ import annotations

import argparse
import errno
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sweepbench.cli.common import endpoint_prices, err, say
from sweepbench.config import SweepConfig
from sweepbench.errors import ConfigError, SweepbenchError


def cmd_serve(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks.doubles import scripted_models, warm
    from sweepbench.devserver.server import ReferenceServer
    from sweepbench.runner.sweep import tune_gc
    from sweepbench.simulator.scripted.models import SCRIPTED_MODELS

    tune_gc()
    try:
        server = ReferenceServer(scripted_models(), host=args.host, port=args.port,
                                 models=SCRIPTED_MODELS, latency=args.latency,
                                 faults=args.faults, seed=args.seed, rpm_limit=args.rpm,
                                 tpm_limit=args.tpm, outage=args.outage,
                                 cache_entries=args.cache_entries)
    except ValueError as exc:
        raise ConfigError(f"--host: {exc}") from None
    for spec in SweepConfig().benchmarks:  # loaded before the first request needs them
        try:
            warm(spec)
        except SweepbenchError as exc:  # not in this data dir: a request loads what it names
            say(err, f"{spec} not preloaded: {exc}", "yellow")
    with _listening(args.host, args.port):
        server.run_forever()
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    from sweepbench.benchmarks.registry import benchmark_info
    from sweepbench.view.server import serve

    with _listening(args.host, args.port):
        serve([Path(p) for p in args.stores], host=args.host, port=args.port,
              prices=endpoint_prices(args.config), benchmarks=benchmark_info(),
              allow_remote=args.allow_remote, say=lambda line: say(err, line))
    return 0


@contextmanager
def _listening(host: str, port: int) -> Iterator[None]:
    """A server that cannot bind (port in use, address not here) is one line, not a traceback."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            raise
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
