"""Benchmark specs to task lists, and tasks by key.

A spec names a benchmark and optionally its domains: ``vitabench:delivery``, or
``vitabench:delivery,instore`` for a cross-domain composition; ``t1`` (all 525 templates) or
``t1:<split>`` (a tier such as ``single`` or ``8-domain``, a split such as ``hotel`` or
``hotel+vehicle_rental``, or a comma-separated domain list). Loading is cached per
(spec, data dir, language), so the reference server's scripted models and the runner share
one parsed copy of each task file.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from sweepbench.benchmarks import registry
from sweepbench.datasets.data_dir import resolve_data_dir
from sweepbench.datasets.task import Task
from sweepbench.errors import ConfigError, TaskError


class BenchmarkSpec(tuple):
    """(benchmark, domains) parsed from ``name[@release][:d1,d2]``; the benchmark by the name
    its object gives itself."""

    @classmethod
    def parse(cls, spec: str) -> "BenchmarkSpec":
        name, _, domains = spec.strip().partition(":")
        name = name.strip().lower()
        if name.partition("@")[0].partition("+")[0] not in registry.names():
            raise TaskError(f"unknown benchmark {name!r} in {spec!r}; known: {', '.join(registry.names())}")
        benchmark = registry.get(name)
        doms = tuple(d.strip() for d in domains.split(",") if d.strip()) or benchmark.default_domains
        return cls((benchmark.name, doms))

    @property
    def benchmark(self) -> str:
        return self[0]

    @property
    def domains(self) -> tuple[str, ...]:
        return self[1]

    def __str__(self) -> str:
        return f"{self.benchmark}:{','.join(self.domains)}"


OWN_PROMPTS = "own-prompts"
"""The variant a benchmark with upstream prompt templates runs without them (``--prompts own``)."""


def choose(specs: list[str], *, release: str | None = None,
           own_prompts: bool = False) -> list[str]:
    """``specs`` with ``release`` (``--release``) for every benchmark that has releases, and
    the own-prompts variant (``--prompts own``) for every one that has it, each bare name of a
    benchmark with releases spelled with the release it means (so a stored config says what
    it ran); a ConfigError when a spec names another release, or no benchmark has the release
    asked for."""
    out, took = [], False
    for spec in specs:
        head, colon, domains = spec.strip().partition(":")
        bench = registry.get(head.strip().lower())
        family, _, named = head.strip().lower().partition("@")
        family, _, bare_variant = family.partition("+")
        base, _, variant = named.partition("+")
        variant = variant or bare_variant
        if release is not None and bench.releases:
            if base and base != release:
                raise ConfigError(f"{spec!r} names release {base}, and --release {release} "
                                  f"another: name one")
            base, took = release, True
        if own_prompts and OWN_PROMPTS in bench.variants:
            variant = OWN_PROMPTS
        if not base and bench.releases:  # a bare name: the release it means today, in words
            base = bench.release
        name = family + (f"@{base}" if base else "") + (f"+{variant}" if variant else "")
        registry.get(name)  # an unknown release says so here
        out.append(name + colon + domains)
    if release is not None and not took:
        raise ConfigError(f"--release {release}: no benchmark of {', '.join(specs)} has "
                          f"releases")
    return out


@lru_cache(maxsize=64)
def _load(spec: BenchmarkSpec, data_dir: Path | None, lang: str) -> tuple[Task, ...]:
    tasks = registry.get(spec.benchmark).load_tasks(spec.domains, data_dir=data_dir, lang=lang)
    return check_task_ids(tasks, spec)


def check_task_ids(tasks: Iterable[Task], spec: BenchmarkSpec) -> tuple[Task, ...]:
    """Every benchmark's tasks (a plugin's too) as loaded, each id a string, not blank,
    without spaces around it, each key once: a TaskError naming the file and the task at load
    (`tasks`, `plan`), rather than a crash in the middle of `run`. Other characters are the
    task file's to choose: they are printed escaped."""
    seen: dict[str, int] = {}
    out = tuple(tasks)
    for i, task in enumerate(out):
        where = f"{task.source or spec}: task #{i}"
        if not isinstance(task.id, str):
            raise TaskError(f"{where}: id {task.id!r} is not a string")
        if not task.id.strip() or task.id != task.id.strip():
            raise TaskError(f"{where}: id {task.id!r} is blank or has spaces around it")
        first = seen.setdefault(task.key, i)
        if first != i:
            raise TaskError(f"{where}: id {task.id!r} is task #{first}'s too: ids must differ")
    return out


def load_tasks(spec: str | BenchmarkSpec, *, data_dir: str | Path | None = None,
               lang: str = "en") -> list[Task]:
    if not isinstance(spec, BenchmarkSpec):
        spec = BenchmarkSpec.parse(spec)
    if lang not in ("en", "zh"):
        raise TaskError(f"unknown language {lang!r}: use en or zh")
    return list(_load(spec, resolve_data_dir(data_dir), lang))


@lru_cache(maxsize=64)
def _index(spec: BenchmarkSpec, data_dir: Path | None, lang: str) -> dict[str, Task]:
    return {t.key: t for t in _load(spec, data_dir, lang)}


def find_task(spec: str, key: str, *, data_dir: str | Path | None, lang: str) -> Task:
    """The task with ``key`` in the benchmark ``spec``; TaskError when there is none."""
    index = _index(BenchmarkSpec.parse(spec), resolve_data_dir(data_dir), lang)
    try:
        return index[key]
    except KeyError:
        raise TaskError(f"no task {key!r} in {spec} ({lang})") from None
