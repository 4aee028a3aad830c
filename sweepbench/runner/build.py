"""From config to the things a sweep talks to: the built-in reference server (when a scripted
model is used), one set of limits per endpoint + account, the response cache, and one model
client per endpoint name (a fleet for a model with several replicas or keys). The batch layer
(:mod:`sweepbench.runner.sweep`) only schedules."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from sweepbench.benchmarks.doubles import scripted_models
from sweepbench.benchmarks.registry import benchmark_info  # noqa: F401 - its old home
from sweepbench.config import SweepConfig
from sweepbench.ids import content_hash
from sweepbench.results.profile import Prices, as_prices
from sweepbench.client.facade import ModelClient
from sweepbench.client.fleet import Fleet, client_for
from sweepbench.runner.identity import EpisodeIdentity
from sweepbench.runner.judge_pool import STATE, JudgeSpec
from sweepbench.client.limits import LimitsPool
from sweepbench.devserver.server import ReferenceServer
from sweepbench.client.cache import ResponseCache


def judge_specs(cfg: SweepConfig) -> list[JudgeSpec]:
    """The state check, then every LLM judge with every method, each keyed by what judges
    (its endpoint's identity and the method)."""
    ident = EpisodeIdentity(cfg, None)
    return [STATE] + [
        JudgeSpec(model, method, content_hash({"judge": ident.endpoint(model),
                                               "method": method})[:16])
        for model, method in cfg.judges()[1:]]


def endpoint_names(cfg: SweepConfig, *, episodes: bool = True) -> set[str]:
    """Every endpoint a sweep of ``cfg`` may call: agents and the user model (when it runs
    episodes) and the LLM judges."""
    names = set(cfg.judge_models)
    if episodes:
        names |= set(cfg.models) | {cfg.user_model}
    return names


def endpoint_prices(cfg: SweepConfig, names: set[str]) -> dict[str, Prices]:
    """The configured prices of ``names`` (zero for endpoints without prices, e.g. scripted
    models; none for an ``unpriced`` one, whose calls then count as unpriced): what a run
    stores, so that its report prices its calls without a config."""
    endpoints = {n: cfg.endpoint(n, reference_url="http://reference.invalid") for n in names}
    return {n: as_prices(ep) for n, ep in sorted(endpoints.items()) if not ep.unpriced}


def reference_server(cfg: SweepConfig, **options: Any) -> ReferenceServer:
    """The built-in server of scripted models, with the config's latency, faults and limits."""
    return ReferenceServer(
        scripted_models(), latency_s=cfg.reference_latency_s, latency=cfg.reference_latency,
        faults=cfg.reference_faults, seed=cfg.reference_seed, rpm_limit=cfg.reference_rpm,
        tpm_limit=cfg.reference_tpm, outage=cfg.reference_outage,
        cache_entries=cfg.reference_cache_entries, **options)


def open_cache(cfg: SweepConfig, store: Path | None) -> ResponseCache | None:
    """The config's response cache, opened (None: off); a file that cannot be one, or the run
    store ``store``, is a ConfigError naming it, before any episode starts."""
    return ResponseCache(cfg.response_cache, not_at=store) if cfg.response_cache else None


class SweepResources:
    """``async with SweepResources(cfg, names, cache=...) as res``: ``res.clients[name]`` for
    every model name in ``names``, sharing the response cache given (see :func:`open_cache`)
    and the limits given (default: a pool of its own);
    everything is closed on exit."""

    def __init__(self, cfg: SweepConfig, names: set[str], *,
                 cache: ResponseCache | None = None, limits: LimitsPool | None = None) -> None:
        self.cfg = cfg
        self.names = names
        self.cache = cache  # the response cache, opened by the caller (closed on exit)
        self.clients: dict[str, ModelClient | Fleet] = {}
        self.reference: ReferenceServer | None = None  # the built-in server, while it runs
        # agent, user and judge calls to one account share a budget
        self.limits = limits if limits is not None else LimitsPool()
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> "SweepResources":
        cfg, stack = self.cfg, self._stack
        await stack.__aenter__()
        try:
            url = None
            if any(n.startswith("scripted/") for n in self.names):
                self.reference = await stack.enter_async_context(reference_server(cfg))
                url = self.reference.url
            limits = self.limits
            cache = self.cache
            if cache is not None:
                stack.callback(cache.close)
            for name in sorted(self.names):
                client = client_for(cfg.endpoint(name, url), limits=limits, cache=cache)
                stack.push_async_callback(client.aclose)
                self.clients[name] = client
        except BaseException:
            await stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._stack.__aexit__(*exc)
