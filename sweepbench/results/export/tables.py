"""The three export tables of a store's episodes: ``episodes``, ``calls`` and ``judgments``.

Each is a list of rows (dicts) with the columns of ``COLUMNS`` (name, type, meaning), in that
order; ``episodes`` also has one group of columns per judge/method pair present
(``judge_<judge>_<method>_passed``, ``..._score`` and one per numeric value of its details,
e.g. ``judge_state_state_tool_f1``; judge and method written in snake_case). Every column
name is snake_case ASCII, so SQL needs no quoting; every table has ``episode_key`` (the
store's key, the join key) and ``episode_label`` (``model|benchmark:domain:lang:task|trial``).
Timestamps are ``datetime`` in UTC (ISO 8601 in CSV and JSONL); token counts are integers;
dollars are at the prices stored with each run (null when a call has none).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Iterator, Mapping

import msgspec
import numpy as np

from sweepbench.results.details import numeric_details
from sweepbench.results.export.calls import EpisodeSums, read_calls
from sweepbench.results.export.columns import Column, Numbers
from sweepbench.results.sources import headline_sources
from sweepbench.store.runstore import RunStore
from sweepbench.results.selection import EpisodeView

__all__ = ["CHUNK", "COLUMNS", "TablePlan", "judge_prefix", "plan_tables", "snake",
           "table_chunks"]

# (name, type, meaning); types: string, int64, float64, bool, timestamp
COLUMNS: dict[str, list[tuple[str, str, str]]] = {
    "episodes": [
        ("episode_key", "string", "the episode's key in the store (join key)"),
        ("episode_label", "string", "model|benchmark:domain:lang:task_id|trial"),
        ("run_id", "string", "the run that last ran it"),
        ("model", "string", "agent model (endpoint name)"),
        ("benchmark", "string", "benchmark name"),
        ("spec", "string", "benchmark spec it was selected under (e.g. t1:single)"),
        ("headline", "string", "what scores the benchmark, in words; says when its numbers "
                               "are not comparable with published ones"),
        ("domain", "string", "domain (a comma list for compositions)"),
        ("task_id", "string", "task id"),
        ("lang", "string", "task language"),
        ("trial", "int64", "trial, 0-based"),
        ("user_model", "string", "user-simulator model"),
        ("user_mode", "string", "default | neutral | solo"),
        ("status", "string", "done | error | running"),
        ("termination", "string", "why it ended (user_stop, max_steps, error, ...)"),
        ("error", "string", "the error that ended it, if any"),
        ("unreachable", "string", "why no agent can pass its task (data defect), else null"),
        ("started_at", "timestamp", "when it started (UTC)"),
        ("finished_at", "timestamp", "when it finished (UTC)"),
        ("turns", "int64", "user turns"),
        ("steps", "int64", "messages as VitaBench counts steps"),
        ("agent_calls", "int64", "agent model calls"),
        ("user_calls", "int64", "user-simulator model calls"),
        ("tool_calls", "int64", "tool calls"),
        ("tool_errors", "int64", "tool calls that failed"),
        ("wall_s", "float64", "wall time, seconds"),
        ("agent_prompt_tokens", "int64", "agent prompt tokens (cached included)"),
        ("agent_cached_prompt_tokens", "int64", "agent prompt tokens read from cache"),
        ("agent_completion_tokens", "int64", "agent completion tokens (reasoning included)"),
        ("agent_reasoning_tokens", "int64", "agent reasoning tokens (part of completion)"),
        ("user_prompt_tokens", "int64", "user-simulator prompt tokens (cached included)"),
        ("user_cached_prompt_tokens", "int64", "user-simulator cached prompt tokens"),
        ("user_completion_tokens", "int64", "user-simulator completion tokens"),
        ("user_reasoning_tokens", "int64", "user-simulator reasoning tokens"),
        ("judge_prompt_tokens", "int64", "prompt tokens of every judge's calls on it"),
        ("judge_completion_tokens", "int64", "completion tokens of every judge's calls"),
        ("agent_latency_mean_s", "float64", "mean latency of its agent model calls, seconds"),
        ("agent_latency_max_s", "float64", "slowest agent model call, seconds"),
        ("retries", "int64", "retried attempts over its own model calls"),
        ("cost_agent_usd", "float64", "agent calls, dollars (stored prices)"),
        ("cost_user_usd", "float64", "user-simulator calls, dollars"),
        ("cost_judge_usd", "float64", "judge calls, dollars"),
        ("cost_total_usd", "float64", "all of the above; null when no call is priced"),
        ("unpriced_calls", "int64", "calls without a stored price (not in the cost)"),
        ("headline_judge", "string", "judge of the benchmark's headline (state: the check)"),
        ("headline_method", "string", "method of the headline (state, sliding, ...)"),
        ("passed", "bool", "the headline verdict; null: unjudged; false for errors"),
        ("score", "float64", "the headline judgment's score"),
    ],
    "calls": [
        ("episode_key", "string", "the episode (join key)"),
        ("episode_label", "string", "model|benchmark:domain:lang:task_id|trial"),
        ("source", "string", "agent | user | judge (who paid for it)"),
        ("judge", "string", "for judge calls: the judge model"),
        ("judge_method", "string", "for judge calls: the method"),
        ("seq", "int64", "position in its journal"),
        ("ts", "timestamp", "when it was journaled (UTC)"),
        ("run_id", "string", "the run that made it"),
        ("endpoint", "string", "endpoint name"),
        ("role", "string", "role recorded with the call"),
        ("prompt_tokens", "int64", "prompt tokens (cached included)"),
        ("cached_prompt_tokens", "int64", "prompt tokens read from cache"),
        ("completion_tokens", "int64", "completion tokens"),
        ("latency_s", "float64", "latency, seconds"),
        ("attempts", "int64", "HTTP attempts (0: answered from the response cache)"),
        ("http_statuses", "string", "HTTP statuses of its attempts, JSON list"),
        ("cost_usd", "float64", "dollars at its run's stored price; null: unpriced"),
    ],
    "judgments": [
        ("episode_key", "string", "the episode (join key)"),
        ("episode_label", "string", "model|benchmark:domain:lang:task_id|trial"),
        ("judge", "string", "judge model (state: the deterministic check)"),
        ("method", "string", "state | sliding | full | ... | likert"),
        ("passed", "bool", "verdict; null when the method gives none (Likert)"),
        ("score", "float64", "score in [0, 1]"),
        ("headline", "bool", "whether this is its benchmark's headline judgment"),
        ("created_at", "timestamp", "when it was judged (UTC)"),
        ("run_id", "string", "the run that judged it"),
        ("judge_key", "string", "the judge's endpoint identity"),
        ("details_json", "string", "the judgment's details (rubrics, metrics, reasons), JSON"),
    ],
}


def snake(text: str) -> str:
    """``scripted/noisy:0.3`` -> ``scripted_noisy_0_3``."""
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_") or "x"


def judge_prefix(judge: str, method: str) -> str:
    return f"judge_{snake(judge)}_{snake(method)}"


class TablePlan(msgspec.Struct):
    """What every chunk of the tables needs to know of all of them: the columns (fixed, and
    one group per judge/method pair present) and where each benchmark's headline comes
    from."""

    types: dict[str, dict[str, str]]
    pair_columns: list[tuple[tuple[str, str], str, str, str]]  # pair, field, column, type
    sources: dict[str, dict]


CHUNK = 900
"""Episodes per chunk: the store's reads ask for keys in chunks of this size, so the rows
come in the order one read of every key gives."""


def plan_tables(store: RunStore, view: EpisodeView,
                benchmarks: Mapping[str, Mapping[str, Any]] | None = None) -> TablePlan:
    """The columns and headline sources of ``view``'s tables, from one pass over the
    judgments (a chunk of episodes at a time: their details are not all held at once)."""
    detail_keys: dict[tuple[str, str], set[str]] = defaultdict(set)
    verdicts = []  # what headline_sources reads of a judgment
    for keys in _chunks(view.keys):
        for j in store.judgments(keys):
            pair = (j["judge"], j["method"])
            detail_keys[pair].update(k for k in numeric_details(j["details"])
                                     if k not in ("passed", "score"))
            verdicts.append({"episode_key": j["episode_key"], "judge": j["judge"],
                             "method": j["method"], "passed": j["passed"]})
    sources = headline_sources(view, verdicts, benchmarks)
    fixed = {name for name, _, _ in COLUMNS["episodes"]}
    pair_columns: list[tuple[tuple[str, str], str, str, str]] = []
    taken: set[str] = set(fixed)
    for pair in sorted(detail_keys):
        prefix = judge_prefix(*pair)
        while any(c.startswith(prefix + "_") for c in taken - fixed):
            prefix += "_2"
        for field, typ in (("passed", "bool"), ("score", "float64"),
                           *((k, "float64") for k in sorted(detail_keys[pair]))):
            col = f"{prefix}_{snake(field)}"
            if col not in taken:
                taken.add(col)
                pair_columns.append((pair, field, col, typ))
    types = {t: {name: typ for name, typ, _ in cols} for t, cols in COLUMNS.items()}
    types["episodes"].update({col: typ for _, _, col, typ in pair_columns})
    return TablePlan(types=types, pair_columns=pair_columns, sources=sources)


def _chunks(keys: list[str]) -> Iterator[list[str]]:
    for i in range(0, len(keys), CHUNK):
        yield keys[i:i + CHUNK]


def table_chunks(store: RunStore, view: EpisodeView, plan: TablePlan, table: str,
                 benchmarks: Mapping[str, Mapping[str, Any]] | None = None, *,
                 sums: list[EpisodeSums] | None = None) -> Iterator[dict[str, Column]]:
    """The columns of one table (``episodes``, ``calls`` or ``judgments``), a chunk of
    episodes at a time: an export holds one chunk, whatever the store's size. ``sums``: the
    calls table appends each chunk's sums per episode to it, and the episodes table takes
    them from it instead of reading the calls again (a few numbers per episode)."""
    label = {r["episode_key"]: r["label"] for r in view.rows}
    bench_of = {r["episode_key"]: r["benchmark"] for r in view.rows}
    prices = view.prices()
    for n, i in enumerate(range(0, len(view.rows), CHUNK)):
        rows = view.rows[i:i + CHUNK]
        keys = [r["episode_key"] for r in rows]
        if table == "judgments":
            yield _judgment_columns(store.judgments(keys), label, bench_of, plan.sources)
            continue
        if table == "episodes" and sums is not None:
            per_episode = sums[n]
        else:
            calls = read_calls(store, keys, prices)
            per_episode = EpisodeSums(calls, len(keys))
        if table == "calls":
            if sums is not None:
                sums.append(per_episode)
            yield calls.columns([label.get(k) for k in keys])
            continue
        mine: dict[str, dict[tuple[str, str], dict]] = defaultdict(dict)
        for j in store.judgments(keys):
            j["numeric"] = numeric_details(j["details"])
            mine[j["episode_key"]][(j["judge"], j["method"])] = j
        facts = store.episode_facts(keys) if store.has_facts else store.records(keys)
        yield _episode_columns(rows, [facts.get(k) for k in keys], per_episode,
                               [mine.get(k, {}) for k in keys], plan, benchmarks)


def _judgment_columns(judgments: list[dict], label: Mapping[str, str],
                      bench_of: Mapping[str, str], sources: Mapping[str, dict]
                      ) -> dict[str, Column]:
    heads = {b: (src.get("judge"), src.get("method")) for b, src in sources.items()}
    keys = [j["episode_key"] for j in judgments]
    cols: dict[str, Column] = {"episode_key": keys, "episode_label": [label.get(k) for k in keys]}
    for name in ("judge", "method", "passed", "score"):
        cols[name] = [j[name] for j in judgments]
    cols["headline"] = [(j["judge"], j["method"]) == heads.get(bench_of.get(k, ""), (None, None))
                        for j, k in zip(judgments, keys)]
    for name in ("created_at", "run_id", "judge_key"):
        cols[name] = [j[name] for j in judgments]
    encode = msgspec.json.encode
    cols["details_json"] = [encode(j["details"]).decode("utf-8") for j in judgments]
    return cols


def _episode_columns(rows: list[dict], recs: list[Any], sums: EpisodeSums,
                     mine: list[Mapping[tuple[str, str], dict]], plan: TablePlan,
                     benchmarks: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Column]:
    """The episodes table's columns of a chunk (``recs``: each one's record, or its facts:
    the same numbers; None while it runs)."""
    cols: dict[str, Column] = {}
    for name, field in (("episode_key", "episode_key"), ("episode_label", "label"),
                        ("run_id", "run_id"), ("model", "model"), ("benchmark", "benchmark"),
                        ("spec", "spec")):
        cols[name] = [r[field] for r in rows]
    info = benchmarks or {}
    cols["headline"] = [info.get(r["benchmark"], {}).get("headline_label") for r in rows]
    for name in ("domain", "task_id", "lang", "trial", "user_model", "user_mode", "status",
                 "termination"):
        cols[name] = [r[name] for r in rows]
    cols["error"] = [rec.error if rec else None for rec in recs]
    cols["unreachable"] = [
        r["unreachable"] or ((m.get(("state", "state")) or {}).get("details") or {}).get(
            "unreachable") or None for r, m in zip(rows, mine)]
    cols["started_at"] = [r["started_at"] for r in rows]
    cols["finished_at"] = [r["finished_at"] for r in rows]
    for c in ("turns", "steps", "agent_calls", "user_calls", "tool_calls", "tool_errors",
              "wall_s"):
        cols[c] = [getattr(rec, c) if rec else None for rec in recs]
    for who in ("agent", "user"):
        usage = [getattr(rec, f"{who}_usage") if rec else None for rec in recs]
        for c in ("prompt_tokens", "cached_prompt_tokens", "completion_tokens",
                  "reasoning_tokens"):
            cols[f"{who}_{c}"] = [getattr(u, c) if u else None for u in usage]
    cols["judge_prompt_tokens"] = Numbers(sums.judge_prompt)
    cols["judge_completion_tokens"] = Numbers(sums.judge_completion)
    timed = sums.lat_n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        cols["agent_latency_mean_s"] = Numbers(sums.lat_sum / sums.lat_n, ~timed)
    cols["agent_latency_max_s"] = Numbers(sums.lat_max, ~timed)
    cols["retries"] = Numbers(sums.retries)
    unpriced = sums.priced == 0
    for who in ("agent", "user", "judge"):
        cols[f"cost_{who}_usd"] = Numbers(sums.cost[who], unpriced)
    cols["cost_total_usd"] = Numbers(sums.cost["agent"] + sums.cost["user"]
                                     + sums.cost["judge"], unpriced)
    cols["unpriced_calls"] = Numbers(sums.unpriced)
    heads = [plan.sources.get(r["benchmark"], {}) for r in rows]
    cols["headline_judge"] = [src.get("judge") for src in heads]
    cols["headline_method"] = [src.get("method") for src in heads]
    head = [m.get((src.get("judge"), src.get("method"))) for m, src in zip(mine, heads)]
    cols["passed"] = [False if r["status"] == "error" else (None if h is None else h["passed"])
                      for r, h in zip(rows, head)]
    cols["score"] = [None if h is None else h["score"] for h in head]
    for pair, field, col, _ in plan.pair_columns:
        got = [m.get(pair) for m in mine]
        cols[col] = ([None if j is None else j[field] for j in got]
                     if field in ("passed", "score") else
                     [None if j is None else j["numeric"].get(field) for j in got])
    return cols
