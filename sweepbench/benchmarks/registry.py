"""Benchmarks by name: the one place that turns a benchmark's name into its code.

Built-in benchmarks are the subpackages of ``sweepbench.benchmarks`` (a folder is a benchmark:
its name is the folder's, its ``BENCHMARK`` the object); each is imported on first use, not at
import time. Benchmarks from elsewhere are plugins: modules or folders named in the
``SWEEPBENCH_PLUGINS`` environment variable (``os.pathsep``-separated; a dotted module name
or a path to a package folder), or registered in-process with :func:`register`. A plugin's
``BENCHMARK`` is registered under its own ``name``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import sys
from functools import cache
from pathlib import Path
from typing import Any

from sweepbench.benchmarks.base import Benchmark
from sweepbench.errors import ConfigError, TaskError

__all__ = ["all_judge_methods", "benchmark_info", "get", "judge_owner", "names", "register"]

_PACKAGE = "sweepbench.benchmarks"
_registered: dict[str, Benchmark] = {}
_plugins_loaded: set[str] = set()


def register(benchmark: Benchmark) -> Benchmark:
    """Make ``benchmark`` known by its name (a plugin, or a test's own benchmark)."""
    if not isinstance(benchmark, Benchmark):
        raise TypeError(f"not a Benchmark: {benchmark!r}")
    _registered[benchmark.name] = benchmark
    return benchmark


def _load_plugins() -> None:
    for entry in filter(None, os.environ.get("SWEEPBENCH_PLUGINS", "").split(os.pathsep)):
        if entry in _plugins_loaded:
            continue
        path = Path(entry)
        try:
            if path.is_dir():  # a package folder outside any installed package
                spec = importlib.util.spec_from_file_location(
                    f"sweepbench_plugin_{path.name}", path / "__init__.py",
                    submodule_search_locations=[str(path)])
                if spec is None or spec.loader is None:
                    raise ImportError(f"no __init__.py in {path}")
                module = importlib.util.module_from_spec(spec)
                sys.modules[spec.name] = module
                spec.loader.exec_module(module)
            else:
                module = importlib.import_module(entry)
        except ImportError as exc:
            raise ConfigError(f"SWEEPBENCH_PLUGINS: cannot import {entry!r}: {exc}") from None
        benchmark = getattr(module, "BENCHMARK", None)
        if not isinstance(benchmark, Benchmark):
            raise ConfigError(f"SWEEPBENCH_PLUGINS: {entry!r} has no BENCHMARK (a Benchmark)")
        register(benchmark)
        _plugins_loaded.add(entry)


@cache
def _builtin_names() -> tuple[str, ...]:
    package = importlib.import_module(_PACKAGE)
    return tuple(sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.ispkg))


def names() -> tuple[str, ...]:
    """Every benchmark's name, built-in first."""
    _load_plugins()
    return _builtin_names() + tuple(n for n in _registered if n not in _builtin_names())


def get(name: str) -> Benchmark:
    """The benchmark called ``name`` (``family@release`` picks one of its releases, and
    ``+variant`` a variant of it);
    TaskError listing the known ones when there is none."""
    head, at, release = name.partition("@")
    family, plus, variant = head.partition("+")
    if at or plus:  # name@release[+variant], or name+variant of the current release
        return get(family).with_release(release + (f"+{variant}" if plus else ""))
    _load_plugins()
    if name in _registered:
        return _registered[name]
    if name in _builtin_names():
        benchmark = importlib.import_module(f"{_PACKAGE}.{name}").BENCHMARK
        _registered[name] = benchmark
        return benchmark
    raise TaskError(f"unknown benchmark {name!r}; known: {', '.join(names())}")


def all_judge_methods() -> dict[str, str]:
    """Every LLM judge method of every benchmark -> the benchmark that declares it."""
    return {method: name for name in names() for method in get(name).judge_methods}


def judge_owner(method: str) -> Benchmark:
    """The benchmark whose LLM judge ``method`` is."""
    owner = all_judge_methods().get(method)
    if owner is None:
        raise TaskError(f"no benchmark has the judge method {method!r}")
    return get(owner)


def benchmark_info(specs: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Each benchmark's headline (the method that scores its leaderboard, in words too) and
    its LLM judge methods: what runs record and reports score by, under the name its episodes
    carry. ``specs``: benchmark specs or names (default: every registered benchmark, each of
    its releases and variants, and its bare family name, which stores written before
    releases had names hold)."""
    if specs is not None:
        wanted = [get(n.partition(":")[0].strip().lower())
                  for n in sorted(set(specs))]
        return {b.name: _info(b) for b in wanted}
    out = {}
    for family in names():
        b = get(family)
        out[family] = _info(b)
        if b.releases:  # a store's episodes named before releases had names: the first one
            out[family]["headline_label"] += (f"; recorded as plain {family}, i.e. release "
                                              f"{b.releases[0]}")
        for release in b.releases:
            for suffix in ("", *(f"+{v}" for v in b.variants)):
                other = b.with_release(release + suffix)
                out[other.name] = _info(other)
        out[b.name] = _info(b)
    return out


def _info(b: Benchmark) -> dict[str, Any]:
    return {"headline": str(b.headline), "headline_label": b.headline_label,
            "judge_methods": [str(m) for m in b.judge_methods]}
