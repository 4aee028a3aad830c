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
from datetime import datetime, timezone
from typing import Any, Iterator, Mapping

import msgspec

from sweepbench.results.cost import call_cost, role_of
from sweepbench.results.report import numeric_details
from sweepbench.results.sources import headline_sources
from sweepbench.store.runstore import RunStore
from sweepbench.results.selection import EpisodeView

__all__ = ["CHUNK", "COLUMNS", "ExportTables", "TablePlan", "build_tables", "judge_prefix",
           "plan_tables", "snake", "table_rows"]

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


def _ts(x: Any) -> datetime | None:
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return datetime.fromtimestamp(x, timezone.utc)
    return None


class ExportTables(msgspec.Struct):
    """Rows of each table and the types of its columns (fixed and per judge)."""

    rows: dict[str, list[dict[str, Any]]]
    types: dict[str, dict[str, str]]


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


def table_rows(store: RunStore, view: EpisodeView, plan: TablePlan, table: str,
               benchmarks: Mapping[str, Mapping[str, Any]] | None = None
               ) -> Iterator[list[dict[str, Any]]]:
    """The rows of one table (``episodes``, ``calls`` or ``judgments``), a chunk of
    episodes at a time: an export holds one chunk, whatever the store's size."""
    label = {r["episode_key"]: r["label"] for r in view.rows}
    bench_of = {r["episode_key"]: r["benchmark"] for r in view.rows}
    prices = view.prices()
    for i in range(0, len(view.rows), CHUNK):
        rows = view.rows[i:i + CHUNK]
        keys = [r["episode_key"] for r in rows]
        if table == "judgments":
            yield [_judgment_row(j, label, bench_of, plan.sources)
                   for j in store.judgments(keys)]
            continue
        call_rows, per_episode = _calls(store, keys, label, prices)
        if table == "calls":
            yield call_rows
            continue
        mine: dict[str, dict[tuple[str, str], dict]] = defaultdict(dict)
        for j in store.judgments(keys):
            j["numeric"] = numeric_details(j["details"])
            mine[j["episode_key"]][(j["judge"], j["method"])] = j
        facts = store.episode_facts(keys) if store.has_facts else store.records(keys)
        yield [_episode_row(r, facts.get(r["episode_key"]), per_episode, mine, plan,
                            benchmarks) for r in rows]


def _calls(store: RunStore, keys: list[str], label: Mapping[str, str], prices: Mapping
           ) -> tuple[list[dict], dict[str, dict[str, float]]]:
    """The calls table's rows of some episodes, and per episode the sums the episodes
    table shows."""
    call_rows, per_episode = [], defaultdict(lambda: defaultdict(float))
    for call, (seq, ts) in zip(store.model_calls(keys), store.model_call_times(keys)):
        cost = call_cost(call, prices)
        src = role_of(call)
        _, judge, method = (call.journal.split("|", 2) + ["", ""])[:3] if call.journal else (
            "", None, None)
        call_rows.append({
            "episode_key": call.episode_key, "episode_label": label.get(call.episode_key),
            "source": src, "judge": judge or None, "judge_method": method or None, "seq": seq,
            "ts": _ts(ts), "run_id": call.run_id, "endpoint": call.endpoint, "role": call.role,
            "prompt_tokens": call.prompt_tokens,
            "cached_prompt_tokens": call.cached_prompt_tokens,
            "completion_tokens": call.completion_tokens, "latency_s": call.latency_s,
            "attempts": call.attempts, "http_statuses": call.statuses, "cost_usd": cost.cost})
        e = per_episode[call.episode_key]
        if cost.cost is None:
            e["unpriced"] += 1
        else:
            e[f"cost_{src}"] += cost.cost
            e["priced"] += 1
        if src == "judge":
            e["judge_prompt"] += call.prompt_tokens
            e["judge_completion"] += call.completion_tokens
        else:
            e["retries"] += max(0, (call.attempts or 1) - 1)
            if src == "agent" and call.latency_s is not None:
                e["lat_n"] += 1
                e["lat_sum"] += call.latency_s
                e["lat_max"] = max(e["lat_max"], call.latency_s)
    return call_rows, per_episode


def _judgment_row(j: dict, label: Mapping[str, str], bench_of: Mapping[str, str],
                  sources: Mapping[str, dict]) -> dict[str, Any]:
    src = sources.get(bench_of.get(j["episode_key"], ""), {})
    return {
        "episode_key": j["episode_key"], "episode_label": label.get(j["episode_key"]),
        "judge": j["judge"], "method": j["method"], "passed": j["passed"],
        "score": j["score"], "headline": (j["judge"], j["method"]) == (src.get("judge"),
                                                                      src.get("method")),
        "created_at": _ts(j["created_at"]), "run_id": j["run_id"],
        "judge_key": j["judge_key"],
        "details_json": msgspec.json.encode(j["details"]).decode("utf-8")}


def _episode_row(r: dict, rec: Any, per_episode: Mapping[str, Mapping[str, float]],
                 mine: Mapping[str, Mapping[tuple[str, str], dict]], plan: TablePlan,
                 benchmarks: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Any]:
    """One row of the episodes table (``rec``: its record, or its facts: the same numbers)."""
    key = r["episode_key"]
    e = per_episode.get(key, {})
    src = plan.sources.get(r["benchmark"], {})
    head = mine.get(key, {}).get((src.get("judge"), src.get("method")))
    state = mine.get(key, {}).get(("state", "state"))
    why = r["unreachable"] or ((state or {}).get("details") or {}).get("unreachable")
    error = r["status"] == "error"
    row = {
        "episode_key": key, "episode_label": r["label"], "run_id": r["run_id"],
        "model": r["model"], "benchmark": r["benchmark"], "spec": r["spec"],
        "headline": (benchmarks or {}).get(r["benchmark"], {}).get("headline_label"),
        "domain": r["domain"], "task_id": r["task_id"], "lang": r["lang"],
        "trial": r["trial"], "user_model": r["user_model"], "user_mode": r["user_mode"],
        "status": r["status"], "termination": r["termination"],
        "error": rec.error if rec else None, "unreachable": why or None,
        "started_at": _ts(r["started_at"]), "finished_at": _ts(r["finished_at"]),
    }
    for c in ("turns", "steps", "agent_calls", "user_calls", "tool_calls", "tool_errors",
              "wall_s"):
        row[c] = getattr(rec, c) if rec else None
    for who in ("agent", "user"):
        u = getattr(rec, f"{who}_usage") if rec else None
        for c in ("prompt_tokens", "cached_prompt_tokens", "completion_tokens",
                  "reasoning_tokens"):
            row[f"{who}_{c}"] = getattr(u, c) if u else None
    row["judge_prompt_tokens"] = int(e.get("judge_prompt", 0))
    row["judge_completion_tokens"] = int(e.get("judge_completion", 0))
    row["agent_latency_mean_s"] = e["lat_sum"] / e["lat_n"] if e.get("lat_n") else None
    row["agent_latency_max_s"] = e["lat_max"] if e.get("lat_n") else None
    row["retries"] = int(e.get("retries", 0))
    priced = bool(e.get("priced"))
    for who in ("agent", "user", "judge"):
        row[f"cost_{who}_usd"] = e.get(f"cost_{who}", 0.0) if priced else None
    row["cost_total_usd"] = (sum(e.get(f"cost_{w}", 0.0) for w in ("agent", "user", "judge"))
                             if priced else None)
    row["unpriced_calls"] = int(e.get("unpriced", 0))
    row["headline_judge"] = src.get("judge")
    row["headline_method"] = src.get("method")
    row["passed"] = False if error else (None if head is None else head["passed"])
    row["score"] = None if head is None else head["score"]
    for pair, field, col, _ in plan.pair_columns:
        j = mine.get(key, {}).get(pair)
        row[col] = (None if j is None else j[field] if field in ("passed", "score")
                    else j["numeric"].get(field))
    return row


def build_tables(store: RunStore, view: EpisodeView,
                 benchmarks: Mapping[str, Mapping[str, Any]] | None = None) -> ExportTables:
    """The three tables of ``view``'s episodes (read from ``store``), whole (exports write
    them a chunk at a time: :func:`table_rows`)."""
    plan = plan_tables(store, view, benchmarks)
    return ExportTables(
        rows={t: [row for chunk in table_rows(store, view, plan, t, benchmarks)
                  for row in chunk] for t in ("episodes", "calls", "judgments")},
        types=plan.types)
