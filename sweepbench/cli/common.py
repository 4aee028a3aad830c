"""What every command shares: its output, its errors, its exit statuses, its config and its
run store.

Output policy: text that may hold names, ids or server text is printed literally (never as
rich markup), control characters escaped; a failed command is one ``error: ...`` line on
stderr. Heavy modules (the store, the runner) are imported inside the functions that need
them, so that ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import msgspec
from rich.console import Console
from rich.text import Text

from sweepbench.config import SweepConfig, load_config
from sweepbench.devserver.faults import FaultSpec, LatencySpec
from sweepbench.errors import ConfigError
from sweepbench.results.text import literal



class _Console(Console):
    """A console whose reader going away raises ``BrokenPipeError`` like any other write to a
    closed pipe, so every command ends the same way (``app.main``: quietly, status 141), not
    with rich's own exit status 1."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


err = _Console(stderr=True, soft_wrap=True)
out = _Console()

BUDGET_EXIT = 3
"""Exit status of a sweep stopped by its spending cap."""
ERRORS_EXIT = 4
"""Exit status of a sweep in which episodes ended in error."""
FAILING_EXIT = 5
"""Exit status of a sweep stopped because every recent episode ended in error."""
UNDECIDED_EXIT = 6
"""Exit status of an adaptive sweep that reached ``--max-trials`` before its rule held."""
STUCK_EXIT = 7
"""Exit status of an adaptive sweep that cannot go on: trials it asked have no verdict that
running again would give."""


def say(console: Console, message: str, style: str = "", *, one_line: bool = False) -> None:
    """Print a message that may hold names, ids or server text: literally (never rich
    markup), control characters escaped (newlines too when ``one_line``)."""
    console.print(literal(message, style, one_line=one_line), highlight=False)


def say_error(message: str) -> None:
    """The one line of a failed command: ``error: ...`` on stderr."""
    err.print(Text.assemble(("error:", "red"), " ", literal(message, one_line=True)),
              highlight=False)


class Terminated(KeyboardInterrupt):
    """SIGTERM outside the sweep's event loop (loading tasks, reporting): like Ctrl-C."""


def terminate(signum: int, frame: Any) -> None:
    """A SIGTERM handler: raise :class:`Terminated`."""
    raise Terminated


_OVERRIDES = ("max_concurrency", "data_dir", "lang", "task_ids", "limit", "seed",
              "reference_latency_s", "max_cost_usd", "error_streak", "order",
              "prices", "max_connections", "token_limit", "time_limit_s")


def option_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The config fields given as options (None: not given)."""
    out = {k: getattr(args, k, None) for k in _OVERRIDES}
    out["benchmarks"] = args.benchmark
    out["models"] = getattr(args, "model", None)
    out["user_model"] = getattr(args, "user_model", None)
    out["user_mode"] = getattr(args, "user_mode", None)
    out["trials"] = getattr(args, "trials", None)
    out["judge_models"] = getattr(args, "judge_model", None)
    out["judge_methods"] = getattr(args, "judge_methods", None)
    return out


def config_from_args(args: argparse.Namespace, **fixed: Any) -> SweepConfig:
    """The config file given (or the default) with the options given, and ``fixed``, over it."""
    overrides = option_overrides(args)
    overrides.update(fixed)
    cfg = load_sweep_config(args.config, overrides)
    release, own = getattr(args, "release", None), getattr(args, "prompts", None) == "own"
    from sweepbench.benchmarks.catalog import choose

    return msgspec.structs.replace(cfg, benchmarks=choose(cfg.benchmarks, release=release,
                                                          own_prompts=own))


def chosen_spec(args: argparse.Namespace, spec: str) -> str:
    """``spec`` with the command's ``--release`` / ``--prompts own`` applied."""
    release, own = getattr(args, "release", None), getattr(args, "prompts", None) == "own"
    if release is None and not own:
        return spec
    from sweepbench.benchmarks.catalog import choose

    return choose([spec], release=release, own_prompts=own)[0]


def load_sweep_config(path: str | None, overrides: dict[str, Any] | None = None) -> SweepConfig:
    """``load_config`` plus what the config module cannot check itself: the reference
    server's specs, the scripted models' names (an unknown one fails here, listing the
    doubles, instead of as a 404 in every episode), and provider/model names made endpoints
    (each said on stderr: where its requests go, its key variable, its prices)."""
    from sweepbench.devserver.faults import check_outage
    from sweepbench.providers import resolve_models
    from sweepbench.simulator.scripted.models import parse_scripted

    cfg, resolved = resolve_models(load_config(path, overrides))
    for r in resolved:
        say(err, r.describe())
    for key, parse in (("reference_faults", FaultSpec.parse),
                       ("reference_latency", LatencySpec.parse), ("reference_outage", check_outage)):
        value = getattr(cfg, key)
        try:
            if value:
                parse(value)
        except ValueError as exc:
            raise ConfigError(f"{key}: {exc}") from None
    reference = "http://reference.invalid"
    for name in dict.fromkeys([*cfg.models, cfg.user_model, *cfg.judge_models]):
        ep = cfg.endpoint(name, reference_url=reference)
        if ep.base_url == reference:
            try:
                parse_scripted(ep.model_name)
            except ValueError as exc:
                raise ConfigError(str(exc) if ep.model_name == name
                                  else f"model {name!r}: {exc}") from None
    return cfg


def endpoint_prices(config: str | None) -> dict | None:
    """Per-endpoint prices from a config (they replace the stored ones in a report)."""
    return {ep.name: ep for ep in load_config(config).endpoints} if config else None


def shard_of(args: argparse.Namespace):  # noqa: ANN201
    """The ``--shard I/N`` given (a usage mistake is a ConfigError), else the whole work."""
    from sweepbench.runner.work import Shard

    try:
        return Shard.parse(args.shard) if getattr(args, "shard", None) else Shard(0, 1)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def store_path(out_path: str | Path | None, shard: Any) -> Path:
    """``--out``, else the default store (one of its own per shard)."""
    from sweepbench.runner.work import DEFAULT_STORE

    if out_path:
        return Path(out_path)
    if shard.count > 1:
        return DEFAULT_STORE.with_name(
            f"{DEFAULT_STORE.stem}.shard-{shard.index}-of-{shard.count}{DEFAULT_STORE.suffix}")
    return DEFAULT_STORE


def warn_damaged(lines: list[str]) -> None:
    """Say on stderr what a read left out because it does not decode (one line each)."""
    for line in lines:
        say(err, f"warning: {line}", "yellow", one_line=True)


def open_store(path: str | Path, *, create: bool = False, read_only: bool = False):  # noqa: ANN201
    """A run store; says so when opening it migrated an older schema. ``read_only``: for
    reading only (no lock, no writes, a read-only mount is fine), unless its schema must be
    migrated first."""
    from sweepbench.errors import OlderStoreError
    from sweepbench.store.readonly import ReadOnlyStore
    from sweepbench.store.runstore import RunStore

    if read_only:
        try:
            return ReadOnlyStore(path)
        except OlderStoreError:
            pass  # a writable open migrates it
    store = RunStore(path, create=create)
    if store.migrated:
        say(err, store.migrated)
    return store
