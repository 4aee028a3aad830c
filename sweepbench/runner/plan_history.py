"""What a plan knows of the store: its finished episodes' calls, tokens and time outside model
calls, summed by (model, task) and (model, benchmark), endpoints' mean latencies, and how
fast stored runs went.

A store with the facts (schema 6) is read by a few SQL aggregates (GROUP BY over
``call_facts`` and ``episode_facts``): what reaches Python is a row per (model, task, journal)
and per (endpoint, run), never a row per episode or per call, so a plan's memory and time
grow with the cells, not with the transcripts. An older store is summed from its journals and
records, episode by episode.

A mean is a sum over a count. Calls and tokens are integers, summed exactly, so their means
are the ones a mean over the episodes gives; times (an episode's overhead, a call's latency)
are SQLite's sums, which may differ from a sum in another order in the last bits.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sweepbench.devserver.faults import LatencySpec
from sweepbench.ids import EpisodeStatus
from sweepbench.store.runstore import RunStore

__all__ = ["Cell", "History", "configured_latency", "spec_mean"]


@dataclass
class Cell:
    """The summed shapes of ``n`` finished episodes: role -> [calls, prompt, cached,
    completion]; (judge, method) -> [episodes it judged, calls, prompt, cached, completion];
    their seconds outside model calls."""

    n: int = 0
    roles: dict[str, list[float]] = field(default_factory=lambda: {
        "agent": [0, 0, 0, 0], "user": [0, 0, 0, 0]})
    judges: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    overhead_s: float = 0.0

    def add(self, other: Cell) -> None:
        self.n += other.n
        self.overhead_s += other.overhead_s
        for role, sums in other.roles.items():
            self.roles[role] = [a + b for a, b in zip(self.roles[role], sums)]
        for pair, sums in other.judges.items():
            mine = self.judges.setdefault(pair, [0] * 5)
            self.judges[pair] = [a + b for a, b in zip(mine, sums)]


class History:
    """Measured shapes of the store's finished episodes: ``by_task[model, task key]`` and
    ``by_bench[model, benchmark]`` (with how many episodes of each task it sums); endpoint ->
    mean call latency (``latency``) and, for scripted endpoints, mean seconds beyond the
    configured latency (``overhead``). ``calls_only``: their own model calls alone (all
    counted as agent calls), for the scheduler."""

    def __init__(self, store: RunStore | None, *, calls_only: bool = False) -> None:
        self.by_task: dict[tuple[str, str], Cell] = {}
        self.by_bench: dict[tuple[str, str], tuple[Cell, dict[str, int]]] = {}
        self.latency: dict[str, float] = {}
        self.overhead: dict[str, float] = {}
        self.harness_s: float | None = None
        self.startup_s: float | None = None
        if store is None:
            return
        cells: dict[tuple[str, str, str, str, str], Cell] = defaultdict(Cell)
        if calls_only:
            for *task, calls in store.call_counts():
                cell = cells[tuple(task)]
                cell.n += 1
                cell.roles["agent"][0] += calls
        else:
            runs = store.runs()
            configured = {run["run_id"]: configured_latency(run["config"]) for run in runs}
            if store.has_facts:
                spans = _Facts(store).read(cells, self, configured)
            else:
                _from_journals(store, cells, self, configured)
                spans = store.call_spans()
            created = {run["run_id"]: run["created_at"] for run in runs}
            busy = [(hi - lo) / n for r, (n, lo, hi) in spans.items() if n >= 50]
            self.harness_s = min(busy) if busy else None  # seconds of sweep per call, at best
            starts = [lo - created[r] for r, (n, lo, _) in spans.items()
                      if r in created and n >= 50]
            self.startup_s = statistics.median(starts) if starts else None
        for (model, benchmark, domain, lang, task_id), cell in sorted(cells.items()):
            task = f"{benchmark}:{domain}:{lang}:{task_id}"
            self.by_task[model, task] = cell
            bench, tasks = self.by_bench.setdefault((model, benchmark), (Cell(), {}))
            bench.add(cell)
            tasks[task] = tasks.get(task, 0) + cell.n


class _Facts:
    """The history from the facts (schema 6), by SQL aggregates."""

    def __init__(self, store: RunStore) -> None:
        # the store's reads module owns its SQL; these aggregates are the plan's own reads
        self.read_sql, self.store = store._read, store
        self.texts = store.fact_texts()

    def read(self, cells: dict[tuple, Cell], history: History,
             configured: dict[str, float | None]) -> dict[str, tuple[int, float, float]]:
        self._episodes(cells)
        self._calls(cells)
        self._latencies(history, configured)
        return {self.texts.get(r, ""): (n, lo, hi) for r, n, lo, hi in self.read_sql(
            "SELECT run_id, count(*), min(ts), max(ts) FROM call_facts "
            "WHERE run_id IS NOT NULL GROUP BY run_id")}

    def _episodes(self, cells: dict[tuple, Cell]) -> None:
        """Finished episodes by task, and their seconds outside their own model calls."""
        rows = self.read_sql(
            "SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, count(*), "
            "total(max(0.0, x.wall_s - coalesce(s.spent, 0.0))) "
            "FROM episodes e JOIN episode_facts x ON x.episode_key = e.episode_key "
            "LEFT JOIN event_keys k ON k.episode_key = e.episode_key LEFT JOIN ("
            "SELECT f.ep AS ep, sum(coalesce(f.latency_s, 0.0)) AS spent FROM call_facts f "
            "WHERE f.valid AND f.journal = '' GROUP BY f.ep) s ON s.ep = k.ep "
            "WHERE e.status = 'done' GROUP BY 1, 2, 3, 4, 5")
        for *task, n, overhead in rows:
            cell = cells[tuple(task)]
            cell.n += n
            cell.overhead_s += overhead
        # finished without facts (a record written outside the store): read themselves
        missing = self.read_sql(
            "SELECT e.episode_key, e.model, e.benchmark, e.domain, e.lang, e.task_id "
            "FROM episodes e LEFT JOIN episode_facts x ON x.episode_key = e.episode_key "
            "WHERE e.status = 'done' AND x.episode_key IS NULL")
        if missing:
            keys = [m[0] for m in missing]
            facts = self.store.episode_facts(keys)
            spent = {k: s[0] for k, j, _, *s in self.store.call_sums(keys) if j is None}
            for key, *task in missing:
                cell = cells[tuple(task)]
                cell.n += 1
                if key in facts:
                    cell.overhead_s += max(0.0, facts[key].wall_s - spent.get(key, 0.0))

    def _calls(self, cells: dict[tuple, Cell]) -> None:
        """Calls and tokens by task and journal: the episode's own (the agent's: role
        'agent'; the user simulator's: the rest) and each judge's, with the episodes it
        judged."""
        agent = next((i for i, t in self.texts.items() if t == "agent"), -1)
        own = "f.journal = '' AND f.role IS ?1"
        rows = self.read_sql(
            "SELECT e.model, e.benchmark, e.domain, e.lang, e.task_id, c.journal, count(*), "
            "sum(c.na), sum(c.pa), sum(c.ca), sum(c.oa), sum(c.n - c.na), sum(c.p - c.pa), "
            "sum(c.c - c.ca), sum(c.o - c.oa) FROM (SELECT f.ep AS ep, f.journal AS journal, "
            "count(*) AS n, sum(f.prompt) AS p, sum(f.cached) AS c, sum(f.completion) AS o, "
            f"sum({own}) AS na, sum(CASE WHEN {own} THEN f.prompt ELSE 0 END) AS pa, "
            f"sum(CASE WHEN {own} THEN f.cached ELSE 0 END) AS ca, "
            f"sum(CASE WHEN {own} THEN f.completion ELSE 0 END) AS oa "
            "FROM call_facts f WHERE f.valid GROUP BY f.ep, f.journal) c "
            "JOIN event_keys k ON k.ep = c.ep JOIN episodes e ON e.episode_key = k.episode_key "
            "WHERE e.status = 'done' GROUP BY 1, 2, 3, 4, 5, 6", (agent,))
        for model, benchmark, domain, lang, task_id, journal, episodes, *sums in rows:
            cell = cells[model, benchmark, domain, lang, task_id]
            if journal:
                mine = cell.judges.setdefault(_judge_of(journal), [0] * 5)
                mine[0] += episodes
                for i, v in enumerate(sums[4:], 1):  # a judge's calls are none of the agent's
                    mine[i] += v
                continue
            for role, part in (("agent", sums[:4]), ("user", sums[4:])):
                cell.roles[role] = [a + b for a, b in zip(cell.roles[role], part)]

    def _latencies(self, history: History, configured: dict[str, float | None]) -> None:
        """Mean latency by endpoint over finished episodes' calls; for scripted endpoints,
        the mean seconds beyond the latency their run configured."""
        base = {i: configured.get(t) for i, t in self.texts.items()
                if configured.get(t) is not None}
        case = " ".join("WHEN ? THEN ?" for _ in base)
        beyond = (f"max(0.0, f.latency_s - CASE coalesce(f.run_id, 0) {case} END)" if base
                  else "NULL")
        rows = self.read_sql(
            f"SELECT f.endpoint, count(*), total(f.latency_s), count({beyond}), total({beyond}) "
            "FROM episodes e JOIN event_keys k ON k.episode_key = e.episode_key "
            "JOIN call_facts f ON f.ep = k.ep WHERE e.status = 'done' AND f.valid "
            "AND f.latency_s IS NOT NULL AND f.endpoint IS NOT NULL GROUP BY 1",
            tuple(x for kv in base.items() for x in kv) * 2)
        for endpoint, n, total, n_beyond, total_beyond in rows:
            name = self.texts.get(endpoint)
            if not name:
                continue
            history.latency[name] = total / n
            if name.startswith("scripted/") and n_beyond:
                history.overhead[name] = total_beyond / n_beyond


def _from_journals(store: RunStore, cells: dict[tuple, Cell], history: History,
                   configured: dict[str, float | None]) -> None:
    """The history from the journals' payloads and the records (a store of an older schema
    read as it is), episode by episode."""
    rows = {r["episode_key"]: r for r in store.episode_rows()
            if r["status"] == EpisodeStatus.DONE}
    if not rows:
        return
    mine: dict[str, Cell] = {k: Cell(n=1) for k in rows}
    spent: dict[str, float] = defaultdict(float)
    latency: dict[str, list[float]] = defaultdict(list)
    overhead: dict[str, list[float]] = defaultdict(list)
    for c in store.model_calls(list(rows)):
        cell = mine[c.episode_key]
        if c.journal:  # [episodes judged, calls, prompt, cached, completion]
            target, offset = cell.judges.setdefault(_judge_of(c.journal), [1, 0, 0, 0, 0]), 1
        else:
            target, offset = cell.roles["agent" if c.role == "agent" else "user"], 0
            spent[c.episode_key] += c.latency_s or 0.0
        for i, v in enumerate((1, c.prompt_tokens, c.cached_prompt_tokens,
                               c.completion_tokens)):
            target[i + offset] += v
        if c.latency_s is not None and c.endpoint:
            latency[c.endpoint].append(c.latency_s)
            base = configured.get(c.run_id or "")
            if base is not None and c.endpoint.startswith("scripted/"):
                overhead[c.endpoint].append(max(0.0, c.latency_s - base))
    for key, rec in store.records(list(rows)).items():
        mine[key].overhead_s = max(0.0, rec.wall_s - spent[key])
    for key, r in rows.items():
        cells[r["model"], r["benchmark"], r["domain"], r["lang"], r["task_id"]].add(mine[key])
    history.latency.update({e: statistics.fmean(v) for e, v in latency.items()})
    history.overhead.update({e: statistics.fmean(v) for e, v in overhead.items()})


def _judge_of(journal: str) -> tuple[str, str]:
    """(judge, method) of a judge's journal, ``judge|<judge>|<method>``: a method never holds
    a ``|``, a judge's endpoint name may."""
    judge, _, method = journal.partition("|")[2].rpartition("|")
    return judge, method


def configured_latency(config: Any) -> float | None:
    """Mean latency of the reference server a stored run was configured with; None when the
    stored config does not say it in a form this reads (a store written by hand, an older
    sweepbench)."""
    if not isinstance(config, dict):
        return None
    try:
        if config.get("reference_latency"):
            return spec_mean(LatencySpec.parse(config["reference_latency"]))
        return float(config.get("reference_latency_s") or 0.0)
    except (TypeError, ValueError, AttributeError):  # AttributeError: a spec that is not text
        return None


def spec_mean(spec: LatencySpec) -> float:
    """The mean of a latency spec (a lognormal's capped at its cap)."""
    if spec.kind == "uniform":
        return (spec.a + spec.b) / 2
    if spec.kind == "lognormal":
        mean = spec.a * math.exp(spec.b ** 2 / 2)
        return mean if spec.cap is None else min(mean, spec.cap)
    return spec.a
