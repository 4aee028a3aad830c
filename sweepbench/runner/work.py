"""The work list of a sweep: every (model, task, trial) the config asks for, and its shards."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import msgspec

from sweepbench.benchmarks.catalog import BenchmarkSpec, load_tasks
from sweepbench.config import SweepConfig
from sweepbench.datasets.task import Task
from sweepbench.ids import EpisodeId, TaskKey


@dataclass(frozen=True)
class WorkItem:
    model: str
    spec: str
    task: Task
    trial: int

    @property
    def episode_id(self) -> str:
        t = self.task
        return str(EpisodeId(self.model, TaskKey(t.benchmark, t.domain, t.lang, t.id), self.trial))


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count``: a deterministic partition of the work by episode id."""

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


def run_id_for(cfg: SweepConfig) -> str:
    """Same sweep identity, same run id: that is what makes re-running resume."""
    blob = msgspec.json.encode(cfg.identity(), order="sorted")
    return "run-" + hashlib.sha256(blob).hexdigest()[:12]


def select_tasks(cfg: SweepConfig) -> list[tuple[str, Task]]:
    """(spec, task) pairs for every benchmark in the config, filtered by ids and limit."""
    out: list[tuple[str, Task]] = []
    for raw in cfg.benchmarks:
        spec = BenchmarkSpec.parse(raw)
        tasks = load_tasks(spec, data_dir=cfg.data_dir, lang=cfg.lang)
        if cfg.task_ids:
            wanted = set(cfg.task_ids)
            tasks = [t for t in tasks if t.id in wanted]
        if cfg.limit is not None:
            tasks = tasks[: cfg.limit]
        out.extend((str(spec), t) for t in tasks)
    return out
