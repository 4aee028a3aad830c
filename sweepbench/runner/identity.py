"""What an episode *is*: the identity whose hash keys it in the store (``ids.EpisodeKey``).

Everything that decides an episode's outcome is in it, nothing else:

- the agent endpoint as it is sent: base URL, the model name sent, ``extra_body``,
  temperature, max_tokens and any other request option (not the endpoint's display name, its
  API key variables, its limits, timeouts or prices, nor its other replicas: the first base
  URL stands for the model); scripted models are identified by name
  alone (they are deterministic wherever the reference server runs);
- the benchmark and the task's *content* (a hash of the Task as loaded, without the path it
  came from): editing a task file makes its episodes new, moving it does not; the benchmark
  by its ``identity_name`` (VitaBench's November release keeps the plain name its episodes
  were recorded under before releases had names);
- the trial index, the seed, the episode limits (turns, tool errors, steps);
- the user model's endpoint identity and the user mode;
- the benchmark's fingerprint: the prompts and tool schemas the episode would use and the
  benchmark's code version (``Benchmark.fingerprint``).

A new request option added to ``Endpoint`` is part of the identity unless it is listed in
``NOT_SENT`` below; options left unset (None, an empty mapping or list, at their default) are
left out, so adding an option does not change the identity of endpoints that do not use it. An
empty string is sent as one (``assistant_empty_content = ""`` for llama.cpp): it is kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from sweepbench.benchmarks import registry
from sweepbench.config import Endpoint, SweepConfig
from sweepbench.datasets.task import Task
from sweepbench.ids import EpisodeKey, content_hash
from sweepbench.memo import IdentityMemo

__all__ = ["NOT_SENT", "EpisodeIdentity", "endpoint_identity", "task_hash"]

NOT_SENT = frozenset({
    "name", "api_key_env", "max_concurrency", "timeout_s", "connect_timeout_s", "max_retries",
    "transport", "rpm", "tpm", "rate_headroom", "adaptive_concurrency", "min_concurrency",
    "breaker_threshold", "breaker_cooldown_s", "breaker_max_wait_s", "limits_key",
    "price_input_per_mtok", "price_cached_input_per_mtok", "price_output_per_mtok",
    "max_cost_usd", "max_reply_bytes", "backups", "unpriced", "follow_redirects", "proxy",
    "kind", "base_urls", "api_key_envs", "routing", "load_factor",
})
"""Endpoint fields that do not change what is sent to the model (how, how fast, at what
price, under which name): not part of an episode's identity."""


_UNSET = object()
_DEFAULTS = {f.name: f.default for f in msgspec.structs.fields(Endpoint)
             if f.default is not msgspec.NODEFAULT}


def endpoint_identity(ep: Endpoint) -> dict[str, Any]:
    """The part of an endpoint that decides its answers: what it sends, and to where."""
    if ep.scripted:
        return {"scripted": ep.name}
    out: dict[str, Any] = {}
    for name, value in msgspec.structs.asdict(ep).items():
        if (name in NOT_SENT or value is None or value == {} or value == []
                or value == _DEFAULTS.get(name, _UNSET)):
            continue
        out[name] = msgspec.to_builtins(value)
    out["model"] = ep.model_name
    out["base_url"] = (ep.urls or [""])[0].rstrip("/")  # replicas are ways in, not the model
    return out


def task_hash(task: Task) -> str:
    """The hash of a task's content as loaded (not of the file path it came from)."""
    return content_hash(msgspec.structs.replace(task, source=""))


class EpisodeIdentity:
    """Builds identities for one sweep config; caches per task and per endpoint."""

    def __init__(self, cfg: SweepConfig, data_dir: Path | None) -> None:
        self.cfg, self.data_dir = cfg, data_dir
        self._endpoints: dict[str, dict] = {}
        self._tasks: IdentityMemo[Task, dict[str, Any]] = IdentityMemo()

    def endpoint(self, name: str) -> dict[str, Any]:
        if name not in self._endpoints:
            # scripted models need no URL to be identified: a placeholder resolves them
            ep = self.cfg.endpoint(name, reference_url="http://reference.invalid")
            self._endpoints[name] = endpoint_identity(ep)
        return self._endpoints[name]

    def _task_part(self, task: Task) -> dict[str, Any]:
        return self._tasks.get(task, self._make_task_part)

    def _make_task_part(self, task: Task) -> dict[str, Any]:
        bench = registry.get(task.benchmark)
        name = bench.identity_name
        same = task if task.benchmark == name else msgspec.structs.replace(task, benchmark=name)
        return {"benchmark": name, "task": task_hash(same),
                "fingerprint": bench.fingerprint(task, self.data_dir)}

    def of(self, model: str, task: Task, trial: int) -> dict[str, Any]:
        """The identity of (model, task, trial) under this config."""
        cfg = self.cfg
        return {
            "v": 1,
            "agent": self.endpoint(model),
            **self._task_part(task),
            "trial": trial,
            "user": self.endpoint(cfg.user_model),
            "user_mode": cfg.user_mode,
            "seed": cfg.seed,
            "limits": {"max_turns": cfg.max_turns or task.max_turns,
                       "max_tool_errors": cfg.max_tool_errors, "max_steps": cfg.max_steps,
                       # only when set, so episodes stored before these limits keep theirs
                       **{k: v for k, v in (("token_limit", cfg.token_limit),
                                            ("time_limit_s", cfg.time_limit_s)) if v}},
        }

    @staticmethod
    def key(identity: dict[str, Any]) -> str:
        return str(EpisodeKey.of(identity))


_PARTS = (("task", "task content"), ("fingerprint", "prompts, tools or benchmark code"),
          ("agent", "agent endpoint"), ("user", "user model"), ("user_mode", "user mode"),
          ("seed", "seed"), ("limits", "episode limits"))


def what_changed(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The parts of an identity that differ, in words (why a stored episode is not reused)."""
    if "legacy" in old:
        return ["identity not recorded (older store)"]
    return [words for part, words in _PARTS if old.get(part) != new.get(part)]
