"""Loading T1 tasks: the generated templates, cached on disk next to the knowledge base.

Generating the 525 templates executes every gold plan against the knowledge base (about a
second); the result is cached as JSON under the same cache directory, keyed by seed and by
both generator versions, so later loads only decode a file. The data dir plays no part in
the tasks (the paper's data is not public); it only holds the paper's prompts.
"""

from __future__ import annotations

import threading
from pathlib import Path

import msgspec

from sweepbench.benchmarks.t1.data import splits
from sweepbench.benchmarks.t1.data.compose import TEMPLATE_VERSION, build_all
from sweepbench.benchmarks.t1.data.kb import (
    DEFAULT_SEED,
    GENERATOR_VERSION,
    cache_dir,
    knowledge_base,
    write_atomically,
)
from sweepbench.benchmarks.t1.tools import DOMAIN_TOOLKITS
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError

_decoder = msgspec.json.Decoder(list[Task])
_cache: dict[tuple[int, str], tuple[Task, ...]] = {}
_lock = threading.Lock()


def tasks_path(seed: int, directory: Path | None = None) -> Path:
    return (directory or cache_dir()) / f"t1-tasks-v{TEMPLATE_VERSION}-kb{GENERATOR_VERSION}-seed{seed}.json"


def all_tasks(seed: int = DEFAULT_SEED) -> tuple[Task, ...]:
    """All 525 templates for ``seed``: from memory, the cache file, or generated and cached."""
    key = (seed, str(cache_dir()))
    with _lock:
        if key not in _cache:
            path = tasks_path(seed)
            try:
                tasks = _decoder.decode(path.read_bytes())
            except (OSError, msgspec.DecodeError, msgspec.ValidationError):
                tasks = build_all(knowledge_base(seed), seed)
                try:
                    write_atomically(path, msgspec.json.encode(tasks))
                except OSError:
                    pass  # an unwritable cache only costs regenerating next time
            _cache[key] = tuple(tasks)
        return _cache[key]


def load_tasks(split: str = "all", *, data_dir: Path | None = None, lang: str = "en",
               seed: int = DEFAULT_SEED) -> list[Task]:
    """The templates of a split selector (see ``splits``): ``all``, a tier, a split or domains."""
    if lang != "en":
        raise TaskError(f"T1-Bench tasks are in English only, not {lang!r}")
    try:
        names = {s.name for s in splits.resolve(split)}
    except ValueError as exc:
        raise TaskError(str(exc)) from None
    return [t for t in all_tasks(seed) if t.evaluation["split"] in names]


def catalog_summary(seed: int = DEFAULT_SEED) -> dict:
    """What ``sweepbench tasks --benchmark t1 --json`` prints: templates and domain tools per
    split and tier (Table 4; each toolkit adds the 2 cache tools) and the KB's row counts."""
    tasks = all_tasks(seed)
    out: dict[str, dict] = {}
    for name in [s.name for s in splits.SPLITS] + list(splits.TIERS):
        chosen = splits.resolve(name)
        domains = {d for s in chosen for d in s.domains}
        names = {s.name for s in chosen}
        out[name] = {"templates": sum(t.evaluation["split"] in names for t in tasks),
                     "tools": sum(len(DOMAIN_TOOLKITS[d]) for d in domains)}
    return {"total": len(tasks), "splits": out, "kb": knowledge_base(seed).rows()}
