"""``sweepbench plan``: what a sweep would do and cost, before it spends anything.

The work list is the sweep's own (:func:`sweepbench.runner.work.build_work` against the
store): episodes to run, to continue, already stored. Each episode to run gets an expected
*shape*: agent, user and judge calls, prompt / cached / completion tokens per role, and the
time it spends outside model calls. Where it comes from, best first (the store's history is
read by :mod:`sweepbench.runner.plan_history`, summed by task in SQL):

1. **history of the task**: the store's finished episodes of the same model on the same task
   (other trials): their measured means;
2. **history of the benchmark**: the model's finished episodes on the benchmark, with prompt
   tokens scaled by this task's own prompt size (system prompt + tool schemas) against theirs;
3. **the benchmark's defaults** (``Benchmark.plan_defaults``): turns, the task's gold plan
   steps, completion sizes, conversation growth; rough (the plan says so).

Judges: the sweep's own (a stored episode's calls to judges this sweep does not use are left
out), from the history of the (judge, method) on the benchmark, else the defaults. Requests,
tokens and dollars (at the config's prices) are sums over endpoints; an endpoint without
prices is *unpriced* (its dollars ``None``, listed in ``unpriced``), never $0. Wall time: each episode's calls
in sequence at the endpoint's latency (for scripted models, the reference server's configured
latency plus the measured overhead; otherwise the measured mean latency, else
``DEFAULT_LATENCY_S``), spread over the sweep's concurrency, bounded below by every endpoint's
in-flight cap, RPM and TPM, and by the harness's own time per call (the fastest a stored run
went, else ``HARNESS_S_PER_CALL`` times the machine's load per core when above 1: the
harness shares the cores), plus the judging of the last episode; a range around it
(``RANGE_HISTORY``, ``RANGE_DEFAULTS``).
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import chain, repeat
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.text import Text

from sweepbench.benchmarks import registry
from sweepbench.config import SweepConfig
from sweepbench.datasets.data_dir import resolve_data_dir
from sweepbench.datasets.task import Task
from sweepbench.ids import EpisodeStatus, UserMode
from sweepbench.memo import IdentityMemo
from sweepbench.results import fmt
from sweepbench.results.profile import Prices, usage_cost
from sweepbench.results.render.terminal import FitTable
from sweepbench.store.runstore import RunStore
from sweepbench.results.text import literal
from sweepbench.runner.build import endpoint_names, endpoint_prices
from sweepbench.runner.plan_history import Cell, History, spec_mean
from sweepbench.devserver.faults import LatencySpec
from sweepbench.devserver.server import estimate_tokens
from sweepbench.runner.work import Shard, WorkItem, build_work
from sweepbench.simulator.episode import EpisodeContext
from sweepbench.wire import Usage, encoder

__all__ = ["DEFAULT_LATENCY_S", "Shape", "episode_calls", "make_plan", "prior_per_episode",
           "render_plan"]

DEFAULT_LATENCY_S = 2.0
"""Seconds per call assumed for an endpoint with no history (not a scripted model)."""
SCRIPTED_OVERHEAD_S = 0.003
"""Client and server time per scripted call beyond the configured latency, without history."""
HARNESS_S_PER_CALL = 0.0006
"""The harness's own time per model call without history (client, journal, store, tools; the
reference server in the same process on a small machine), on idle cores: a sweep cannot go
faster than its calls times this (times the load per core, on a busy machine). The quick
start's sweep made 5,044 calls in 2.4 s (0.00048 s a call) on 2 cores on 2026-11-28. With
history: the fastest rate a stored run achieved."""
RANGE_HISTORY = (0.8, 1.25)
RANGE_DEFAULTS = (0.5, 2.0)
_STARTUP_S = 0.5  # loading tasks, starting the reference server, without history
RAY_STARTUP_S = 8.0
"""``--workers``: starting a local Ray cluster and its workers to their first report (6.6-8.5 s
on 2 loaded cores, ``benchmarks/scaleout.py``'s ``startup_s``)."""
DRIVER_S_PER_CALL = 0.00005
"""``--workers``: the driver's own time per model call (storing the call's journal events and
its episode's record, judging, leasing): 0.041-0.046 ms a call in ``benchmarks/scaleout.py``
(``cpu_driver_ms_per_call``); the most calls per second any number of workers gets through
one driver."""


@dataclass
class Shape:
    """Expected calls and tokens of one episode: role -> [calls, prompt, cached, completion];
    judges by (judge, method)."""

    roles: dict[str, list[float]] = field(default_factory=lambda: {
        "agent": [0.0] * 4, "user": [0.0] * 4})
    judges: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    overhead_s: float = 0.0  # wall time outside model calls
    source: str = "defaults"


def _mean(cell: Cell, source: str) -> Shape:
    """The mean shape of the episodes ``cell`` sums."""
    out = Shape(source=source)
    for role, sums in cell.roles.items():
        out.roles[role] = [x / cell.n for x in sums]
    for pair, (judged, *sums) in cell.judges.items():
        out.judges[pair] = [x / judged for x in sums]
    out.overhead_s = cell.overhead_s / cell.n
    return out


class _Sizes:
    """A task's own prompt sizes in tokens: the agent's system prompt with the tool schemas,
    the user's system prompt (in ``user_mode``), measured once per task object."""

    def __init__(self, data_dir: Path | None, user_mode: str) -> None:
        self.data_dir = data_dir
        self.user_mode = UserMode(user_mode)
        self._cache: IdentityMemo[Task, tuple[float, float]] = IdentityMemo()

    def of(self, task: Task) -> tuple[float, float]:
        return self._cache.get(task, self._measure)

    def _measure(self, task: Task) -> tuple[float, float]:
        bench = registry.get(task.benchmark)
        tools = bench.toolkit(task).specs(bench.tool_descriptions(task, self.data_dir))
        protocol = bench.episode_protocol(task, data_dir=self.data_dir,
                                          user_mode=self.user_mode)
        ctx = EpisodeContext(task, None, [], [], None)  # type: ignore[arg-type]
        try:
            agent_text, user_text = (protocol.agent_system_prompt(ctx),
                                     protocol.user_system_prompt(ctx))
        except Exception:  # noqa: BLE001 - a protocol that needs a live episode: skip
            agent_text = user_text = task.instructions
        agent = estimate_tokens(len(agent_text.encode()) + len(encoder.encode(tools)))
        user = estimate_tokens(len(user_text.encode()))
        return float(agent), float(user)


class _Estimator:
    def __init__(self, cfg: SweepConfig, history: History, data_dir: Path | None,
                 tasks: dict[str, Task]) -> None:
        self.cfg, self.history = cfg, history
        self.sizes = _Sizes(data_dir, cfg.user_mode)
        self.tasks = tasks  # task key -> task, to size the tasks of the history
        # (model, benchmark, judge, method) -> the history's mean judge shape, or None
        self._judged: dict[tuple[str, str, str, str], list[float] | None] = {}

    def shape(self, item: WorkItem, *, judges: bool = True) -> Shape:
        task = item.task
        exact = self.history.by_task.get((item.model, task.key))
        if exact:
            shape = _mean(exact, "history of the task")
        elif self.history.by_bench.get((item.model, task.benchmark)):
            shape = self._scaled(item, self.history.by_bench[item.model, task.benchmark])
        else:
            shape = self._defaults(item)
        wanted = set(self.cfg.judges()[1:])
        shape.judges = {p: v for p, v in shape.judges.items() if p in wanted}
        if judges:
            self._fill_judges(shape, item)
        return shape

    def _scaled(self, item: WorkItem, hist: tuple[Cell, dict[str, int]]) -> Shape:
        cell, tasks = hist
        shape = _mean(cell, "history of the benchmark")
        own = self.sizes.of(item.task)[0]
        known = [(size, n) for size, n in ((self._size_of(t), n) for t, n in tasks.items())
                 if size is not None]
        if known:  # the mean over the episodes of their tasks' sizes
            mean = math.fsum(chain.from_iterable(repeat(size, n) for size, n in known))
            ratio = own / (mean / sum(n for _, n in known))
            for i in (1, 2):
                shape.roles["agent"][i] *= ratio
        return shape

    def _size_of(self, task_key: str) -> float | None:
        task = self.tasks.get(task_key)
        return None if task is None else self.sizes.of(task)[0]

    def _defaults(self, item: WorkItem) -> Shape:
        task, bench = item.task, registry.get(item.task.benchmark)
        d = bench.plan_defaults
        turns = float(d["user_turns"])
        steps = float(len(bench.gold_plan(task)))
        agent_calls = turns + steps
        user_calls = turns + 1 + turns * float(d["referee_calls_per_turn"])
        grow = float(d["tokens_per_step"])
        agent_base, user_base = self.sizes.of(task)
        shape = Shape(source="the benchmark's defaults")
        shape.roles["agent"] = [agent_calls,
                                agent_calls * agent_base + grow * agent_calls * (agent_calls - 1) / 2,
                                0.0, agent_calls * float(d["agent_completion_tokens"])]
        shape.roles["user"] = [user_calls,
                               user_calls * user_base + grow * user_calls * (user_calls - 1) / 2,
                               0.0, user_calls * float(d["user_completion_tokens"])]
        return shape

    def _fill_judges(self, shape: Shape, item: WorkItem) -> None:
        bench = registry.get(item.task.benchmark)
        for judge, method in self.cfg.judges()[1:]:
            if method not in bench.judge_methods or (judge, method) in shape.judges:
                continue
            means = self._judged.get(key := (item.model, item.task.benchmark, judge, method))
            if key not in self._judged:  # the same for every item of the model and benchmark
                mine = self.history.by_bench.get((item.model, item.task.benchmark))
                cells = ([mine[0]] if mine and (judge, method) in mine[0].judges else
                         # any model's episodes of this benchmark judged by this judge
                         [c for (_, b), (c, _) in self.history.by_bench.items()
                          if b == item.task.benchmark and (judge, method) in c.judges])
                sums = [sum(c.judges[judge, method][i] for c in cells) for i in range(5)]
                means = self._judged[key] = ([x / sums[0] for x in sums[1:]] if cells
                                             else None)
            if means is not None:
                shape.judges[judge, method] = list(means)
                continue
            d = bench.plan_defaults
            calls = float(d["judge_calls"].get(method, 1))
            transcript = shape.roles["agent"][3] + shape.roles["user"][3] + float(
                d["tokens_per_step"]) * shape.roles["agent"][0]
            shape.judges[judge, method] = [calls, calls * (1500 + transcript), 0.0,
                                           calls * float(d["judge_completion_tokens"])]
            shape.source = "the benchmark's defaults"


def make_plan(cfg: SweepConfig, store: RunStore | None, *, shard: Shard | None = None,
              retry_errors: bool = False, workers: int | None = None) -> dict[str, Any]:
    """The plan of ``cfg`` against ``store`` (None: an empty store) as JSON; ``workers``: run
    on that many Ray workers (``--workers``)."""
    data_dir = resolve_data_dir(cfg.data_dir)
    items = build_work(cfg, data_dir, shard)
    status = store.episode_status([i.key for i in items]) if store is not None else {}
    finished = ((EpisodeStatus.DONE,) if retry_errors
                else (EpisodeStatus.DONE, EpisodeStatus.ERROR))
    todo = [i for i in items if status.get(i.key) not in finished]
    history = History(store)
    est = _Estimator(cfg, history, data_dir, {i.task.key: i.task for i in items})
    names = sorted(endpoint_names(cfg))
    prices = endpoint_prices(cfg, set(names))
    calls: dict[str, list[float]] = {n: [0.0] * 4 for n in names}  # endpoint -> sums
    latency = {n: _latency(cfg, n, history) for n in names}
    durations: list[float] = []
    judge_time: list[float] = []
    sources: dict[str, set[str]] = defaultdict(set)
    for item in todo:
        shape = est.shape(item)
        sources[f"{item.model} / {item.task.benchmark}"].add(shape.source)
        for role, endpoint in (("agent", item.model), ("user", cfg.user_model)):
            for i in range(4):
                calls[endpoint][i] += shape.roles[role][i]
        for (judge, _), cell in shape.judges.items():
            for i in range(4):
                calls[judge][i] += cell[i]
        durations.append(shape.roles["agent"][0] * latency[item.model] + shape.roles["user"][0]
                         * latency[cfg.user_model] + shape.overhead_s)
        judge_time.append(sum(cell[0] * latency[j] for (j, _), cell in shape.judges.items()))
    rough = any("defaults" in s for v in sources.values() for s in v)
    load = machine_load() if history.harness_s is None else None
    harness = history.harness_s if load is None else HARNESS_S_PER_CALL * load_slowdown(load)
    wall, bound = _wall_time(cfg, durations, judge_time, calls, latency, harness, workers)
    wall += history.startup_s if history.startup_s is not None else _STARTUP_S
    wall += RAY_STARTUP_S if workers else 0.0
    lo, hi = RANGE_DEFAULTS if rough else RANGE_HISTORY
    endpoints = {}
    for n in names:
        c = calls[n]
        usage = Usage(round(c[1]), round(c[3]), round(c[2]))
        endpoints[n] = {"requests": round(c[0]), "prompt_tokens": usage.prompt_tokens,
                        "cached_prompt_tokens": usage.cached_prompt_tokens,
                        "completion_tokens": usage.completion_tokens,
                        "dollars": (usage_cost(usage, prices[n])
                                    if n in prices and _priced(prices[n]) else None),
                        "latency_s": latency[n]}
    return {
        "store": str(store.path) if store is not None else None,
        "episodes": {"selected": len(items), "stored": len(items) - len(todo),
                     "to_run": sum(1 for i in todo if i.key not in status),
                     "to_continue": sum(1 for i in todo if i.key in status)},
        "estimate_from": {k: sorted(v) for k, v in sorted(sources.items())},
        "rough": rough,
        "endpoints": endpoints,
        "requests": sum(e["requests"] for e in endpoints.values()),
        "prompt_tokens": sum(e["prompt_tokens"] for e in endpoints.values()),
        "cached_prompt_tokens": sum(e["cached_prompt_tokens"] for e in endpoints.values()),
        "completion_tokens": sum(e["completion_tokens"] for e in endpoints.values()),
        "dollars": sum(e["dollars"] or 0.0 for e in endpoints.values()),
        "unpriced": [n for n in names if endpoints[n]["dollars"] is None],
        "wall_s": {"estimate": wall, "low": wall * lo, "high": wall * hi, "bound": bound,
                   "machine_load": load, "workers": workers},
        "per_episode_dollars": {n: ((endpoints[n]["dollars"] or 0.0) / len(todo) if todo
                                    else 0.0) for n in names},
    }


def machine_load() -> float:
    """Runnable processes per core over the last minute, at least 1 (1 where unknown)."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:
        return 1.0


def load_slowdown(load: float) -> float:
    """How many times slower than on idle cores the harness goes at ``load`` per core: its
    square root, an empirical fit (on 2 cores on 2026-11-28 the quick start's sweep took
    2.4 s on a lightly loaded machine and 7.0 to 10.2 s at 4.1 to 4.7 per core; the harness
    waits on sockets too, so it slows less than its share of a core shrinks)."""
    return math.sqrt(load)


def _priced(prices: Prices) -> bool:
    return bool(prices.input or prices.cached_input or prices.output)


def _latency(cfg: SweepConfig, name: str, history: History) -> float:
    """Expected seconds per call to endpoint ``name`` under ``cfg``."""
    if name.startswith("scripted/"):
        configured = (spec_mean(LatencySpec.parse(cfg.reference_latency))
                      if cfg.reference_latency else cfg.reference_latency_s)
        over = history.overhead.get(name)
        return configured + (over if over is not None else SCRIPTED_OVERHEAD_S)
    measured = history.latency.get(name)
    return measured if measured is not None else DEFAULT_LATENCY_S


def _wall_time(cfg: SweepConfig, durations: list[float], judge_time: list[float],
               calls: dict[str, list[float]], latency: dict[str, float],
               harness_s: float, workers: int | None = None) -> tuple[float, str]:
    """Seconds for the sweep and what bounds it; with ``workers``, the harness's time is
    shared by them and the driver's own time per call is a bound of its own."""
    if not durations:
        return 0.0, "nothing to run"
    bounds = {"episodes in flight (max_concurrency)":
              max(sum(durations) / min(cfg.max_concurrency, len(durations)), max(durations)),
              "judge pool (judge_concurrency)":
              sum(judge_time) / max(1, cfg.judge_concurrency),
              "the harness's own time per call": sum(c[0] for c in calls.values()) * harness_s
              / (workers or 1)}
    if workers:
        bounds["the driver's store writing"] = (sum(c[0] for c in calls.values())
                                                * DRIVER_S_PER_CALL)
    for name, c in calls.items():
        ep = cfg.endpoint(name, reference_url="http://reference.invalid")
        ways = len(ep.ways())  # replicas x keys: each way has the limits below
        if c[0]:
            bounds[f"{name}: in-flight cap"] = c[0] * latency[name] / max(
                1, ep.max_concurrency * ways)
            if ep.rpm:
                bounds[f"{name}: rpm"] = c[0] / (ep.rpm * ways * ep.rate_headroom / 60)
            if ep.tpm:
                bounds[f"{name}: tpm"] = (c[1] + c[3]) / (ep.tpm * ways * ep.rate_headroom / 60)
    bound = max(bounds, key=bounds.get)
    tail = judge_time[durations.index(max(durations))] if judge_time else 0.0
    return bounds[bound] + tail, bound


def prior_per_episode(cfg: SweepConfig, store: RunStore | None) -> dict[str, float]:
    """Expected dollars per episode by endpoint (the spending cap's estimate before any
    episode of the sweep has finished)."""
    return make_plan(cfg, store)["per_episode_dollars"]


def episode_calls(cfg: SweepConfig, store: RunStore | None, items: list[WorkItem],
                  data_dir: Path | None) -> list[tuple[float, str]]:
    """Expected agent + user model calls of each item, and where the estimate comes from (the
    scheduler's episode length; judges run apart and are left out)."""
    est = _Estimator(cfg, History(store, calls_only=True), data_dir,
                     {i.task.key: i.task for i in items})
    seen: dict[tuple[str, str], tuple[float, str]] = {}  # the same for every trial
    out = []
    for item in items:
        hit = seen.get((item.model, item.task.key))
        if hit is None:
            shape = est.shape(item, judges=False)
            hit = seen[item.model, item.task.key] = (
                shape.roles["agent"][0] + shape.roles["user"][0], shape.source)
        out.append(hit)
    return out


def render_plan(plan: dict[str, Any]) -> Group:
    ep = plan["episodes"]
    lines = [f"episodes: {ep['selected']:,} selected, {ep['stored']:,} already stored, "
             f"{ep['to_run']:,} to run, {ep['to_continue']:,} to continue"]
    if plan["estimate_from"]:
        lines.append("estimated from: " + "; ".join(
            f"{k}: {', '.join(v)}" for k, v in plan["estimate_from"].items()))
    if plan["rough"]:
        lines.append("rough estimate: no history in the store for some model and benchmark "
                     "(the benchmark's defaults are used); expect up to 2x either way")
    def row(name: str, e: dict, dollars: str, latency: str) -> list[str]:
        return [name, fmt.count(e["requests"]), fmt.tokens(e["prompt_tokens"]),
                fmt.tokens(e["cached_prompt_tokens"]), fmt.tokens(e["completion_tokens"]),
                latency, dollars]

    endpoints, unpriced = plan["endpoints"], plan["unpriced"]
    rows = [row(n, e, "unpriced" if e["dollars"] is None else fmt.usd(e["dollars"]),
                fmt.seconds(e["latency_s"])) for n, e in endpoints.items()]
    all_unpriced = len(unpriced) == len(endpoints)
    rows.append(row("total", plan, "unpriced" if all_unpriced else fmt.usd(plan["dollars"]), ""))
    note = (f"unpriced (no prices configured; not in the $ total): {', '.join(unpriced)}"
            if unpriced and not all_unpriced else None)
    table = FitTable("expected calls, tokens and dollars per endpoint",
                     ["endpoint", "requests", "prompt tokens", "cached", "completion", "s/call",
                      "$"], rows, caption=note)
    w = plan["wall_s"]
    busy = (f"; the machine's load, {w['machine_load']:.1f} per core, slows the harness"
            if (w.get("machine_load") or 1.0) > 1.0 else "")
    on = f" on {w['workers']} workers" if w.get("workers") else ""
    lines.append(f"wall time{on}: ~{w['estimate']:,.1f} s (range {w['low']:,.1f}-"
                 f"{w['high']:,.1f} s; bound by {w['bound']}{busy})")
    return Group(literal("\n".join(lines[:-1])), table, Text(lines[-1]))

