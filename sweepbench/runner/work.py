"""The work list of a sweep: every (model, task, trial) the config asks for, and its shards.

Each item carries its episode key (the hash of its identity, see
:mod:`sweepbench.runner.identity`): the store skips what it has under that key, whichever
sweep ran it, so more trials, another model or another benchmark add only their episodes.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.catalog import BenchmarkSpec, load_tasks
from sweepbench.config import SweepConfig
from sweepbench.datasets.task import Task
from sweepbench.errors import ConfigError
from sweepbench.ids import EpisodeId, TaskKey
from sweepbench.store.runstore import EpisodeMeta
from sweepbench.runner.identity import EpisodeIdentity

__all__ = ["DEFAULT_STORE", "Shard", "WorkItem", "build_work", "new_run_id", "select_tasks"]

DEFAULT_STORE = Path("runs") / "sweepbench.sqlite"
"""Where ``sweepbench run`` keeps episodes when ``--out`` is not given: one store that grows."""


@dataclass(frozen=True)
class WorkItem:
    model: str
    spec: str
    task: Task
    trial: int
    key: str = ""
    identity: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    unreachable: str | None = None

    @property
    def episode_id(self) -> str:
        """The readable label (``model|task key|trial``); the store keys by ``key``."""
        t = self.task
        return str(EpisodeId(self.model, TaskKey(t.benchmark, t.domain, t.lang, t.id), self.trial))

    def meta(self, cfg: SweepConfig) -> EpisodeMeta:
        t = self.task
        return EpisodeMeta(key=self.key, label=self.episode_id, model=self.model,
                           benchmark=t.benchmark, spec=self.spec, domain=t.domain,
                           task_id=t.id, lang=t.lang, trial=self.trial,
                           user_model=cfg.user_model, user_mode=cfg.user_mode,
                           identity=self.identity, unreachable=self.unreachable)


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count``: a deterministic partition of the work by episode label."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        try:
            i, n = (int(x) for x in text.split("/"))
        except ValueError:
            raise ValueError(f"--shard takes I/N (e.g. 0/4), got {text!r}") from None
        if not (n >= 1 and 0 <= i < n):
            raise ValueError(f"--shard {text}: need 0 <= I < N")
        return cls(i, n)

    def owns(self, episode_id: str) -> bool:
        if self.count == 1:
            return True
        digest = hashlib.blake2b(episode_id.encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") % self.count == self.index


def new_run_id() -> str:
    """A fresh id for one invocation: sortable by time, unique."""
    return time.strftime("run-%Y%m%d-%H%M%S-", time.gmtime()) + uuid.uuid4().hex[:6]


def select_tasks(cfg: SweepConfig) -> list[tuple[str, Task]]:
    """(spec, task) pairs for every benchmark in the config, filtered by ids and limit; a
    task in several specs of the config is selected once (under the first)."""
    out: list[tuple[str, Task]] = []
    seen: set[str] = set()
    matched: set[str] = set()
    for raw in cfg.benchmarks:
        spec = BenchmarkSpec.parse(raw)
        tasks = load_tasks(spec, data_dir=cfg.data_dir, lang=cfg.lang)
        if cfg.task_ids:
            wanted = set(cfg.task_ids)
            tasks = [t for t in tasks if t.id in wanted]
            matched.update(t.id for t in tasks)
        if cfg.limit is not None:
            tasks = tasks[: cfg.limit]
        for t in tasks:
            if t.key not in seen:
                seen.add(t.key)
                out.append((str(spec), t))
    unknown = [i for i in dict.fromkeys(cfg.task_ids) if i not in matched]
    if unknown:  # a typo would otherwise run nothing and say nothing
        raise ConfigError(f"no task {', '.join(map(repr, unknown))} in "
                          f"{', '.join(cfg.benchmarks)} ({cfg.lang}); `sweepbench tasks "
                          "--benchmark SPEC` lists the ids")
    return out


def build_work(cfg: SweepConfig, data_dir: Path | None, shard: Shard | None = None
               ) -> list[WorkItem]:
    """Every (model, task, trial) of ``cfg`` that ``shard`` owns, each with its key and
    identity, in file order: trial-major, tasks as loaded, models as configured. The sweep
    starts them in the order :mod:`sweepbench.runner.schedule` makes of this one."""
    shard = shard or Shard(0, 1)
    ident = EpisodeIdentity(cfg, data_dir)
    agents = {m: ident.endpoint(m) for m in cfg.models}
    for i, a in enumerate(cfg.models):
        for b in cfg.models[i + 1:]:
            if agents[a] == agents[b]:
                raise ConfigError(f"models {a!r} and {b!r} are the same endpoint (same URL, "
                                  "model and request options): their episodes would be the "
                                  "same; list it once")
    selected = select_tasks(cfg)
    unreachable = {t.key: registry.get(t.benchmark).unreachable(t) for _, t in selected}
    work = []
    for trial in range(cfg.trials):
        for spec, task in selected:
            for model in cfg.models:
                item = WorkItem(model, spec, task, trial)
                if not shard.owns(item.episode_id):
                    continue
                identity = ident.of(model, task, trial)
                work.append(WorkItem(model, spec, task, trial, ident.key(identity), identity,
                                     unreachable[task.key]))
    return work
