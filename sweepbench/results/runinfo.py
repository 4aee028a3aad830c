"""What a report says beside its numbers: how the runs were configured, why episodes ended in
error, and how episodes ended.

- ``configuration``: per run, its settings (models, user model and mode, judges, seeds,
  trials, limits, benchmarks with their headlines, the sweepbench version that ran it when
  recorded), its endpoints *without secrets* (an API key is never in a config, only the name
  of its variable; the free-form parts are masked anyway: a URL's user-info and
  secret-looking query values, secret-looking ``extra_body`` keys) and the prices it stored.
- ``error_reasons``: episodes that ended in error, grouped by their error text with the
  variable parts (long numbers, hex ids, episode keys) masked, so one failure mode is one row.
- ``terminations``: benchmark -> leaderboard row -> termination reason -> episodes.
- ``adaptive_section``: how an adaptive sweep went (its rule, why it stopped, trials per cell
  and per pair), from its runs' info and the scored outcomes.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from importlib import metadata
from typing import Any, Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sweepbench.results.fmt import iso_utc

__all__ = ["adaptive_section", "configuration", "error_reason", "error_reasons",
           "package_version", "redact_url", "terminations", "unjudged_by_judge"]

MASK = "***"
_SECRET = re.compile(r"key|token|secret|passw|auth|signature|^sig$|credential", re.I)
_NOISE = [(re.compile(r"\bep-[0-9a-z-]{8,}\b"), "ep-…"),
          (re.compile(r"\b[0-9a-f]{8,}\b", re.I), "…"),
          (re.compile(r"\b\d{4,}\b"), "N"),
          (re.compile(r"\s+"), " ")]
_MAX_REASON = 300


def package_version() -> str:
    """The installed sweepbench's version (what made this report)."""
    try:
        return metadata.version("sweepbench")
    except metadata.PackageNotFoundError:
        return "unknown"


def redact_url(url: str) -> str:
    """``https://user:pw@host/v1?api_key=x&a=1`` -> ``https://***@host/v1?api_key=***&a=1``."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = urlencode([(k, MASK if _SECRET.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _masked(value: Any) -> Any:
    """Free-form JSON (``extra_body``) with secret-looking keys' values masked."""
    if isinstance(value, Mapping):
        return {k: MASK if _SECRET.search(str(k)) else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _endpoint(ep: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in ep.items() if v not in (None, "", [], {})}
    if "base_url" in out:
        out["base_url"] = redact_url(str(out["base_url"]))
    if "extra_body" in out:
        out["extra_body"] = _masked(out["extra_body"])
    return out


def configuration(runs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The runs' configurations (oldest first) and the version that made the report."""
    out = []
    for run in runs:
        config = dict(run.get("config") or {})
        info = run.get("info") or {}
        endpoints = [_endpoint(e) for e in config.pop("endpoints", None) or []
                     if isinstance(e, Mapping)]
        settings = {k: v for k, v in config.items() if v not in (None, "", [], {})}
        benches = info.get("benchmarks") if isinstance(info.get("benchmarks"), Mapping) else {}
        out.append({
            "run_id": run["run_id"],
            "created_at": iso_utc(run.get("created_at")),
            "finished_at": iso_utc(run.get("finished_at")),
            "status": run.get("status"),
            "command": info.get("command"),
            "sweepbench": info.get("sweepbench"),
            "headlines": {b: (m or {}).get("headline_label") or (m or {}).get("headline")
                          for b, m in benches.items() if isinstance(m, Mapping)},
            "settings": settings,
            "endpoints": endpoints,
            "prices": run.get("prices") or {},
        })
    return {"report_sweepbench": package_version(), "runs": out}


def error_reason(text: str | None) -> str:
    """An error text with its variable parts masked: one failure mode, one reason."""
    if not text:
        return "(no error message recorded)"
    for pattern, repl in _NOISE:
        text = pattern.sub(repl, text)
    text = text.strip()
    return text if len(text) <= _MAX_REASON else text[:_MAX_REASON - 1] + "…"


def error_reasons(rows: Iterable[Mapping[str, Any]], errors: Mapping[str, str | None]
                  ) -> list[dict[str, Any]]:
    """Rows (episode rows with ``name``) that ended in error, grouped by benchmark and
    reason; ``errors``: episode_key -> its record's error text. Most episodes first."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        if r["status"] != "error":
            continue
        raw = errors.get(r["episode_key"])
        reason = error_reason(raw)
        g = groups.setdefault((r["benchmark"], reason), {
            "benchmark": r["benchmark"], "reason": reason, "episodes": 0, "models": Counter(),
            "example": raw or "", "example_episode": r.get("label") or r["episode_key"]})
        g["episodes"] += 1
        g["models"][r["name"]] += 1
    out = sorted(groups.values(), key=lambda g: (-g["episodes"], g["benchmark"], g["reason"]))
    for g in out:
        g["models"] = dict(sorted(g["models"].items()))
    return out


def unjudged_by_judge(judgments: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Judgments with no verdict (the judge's output unreadable, its calls failed), by judge
    and method: ``episodes`` and the most common ``reason``. Most episodes first."""
    groups: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for j in judgments:
        details = j.get("details") or {}
        if j["passed"] is None and j["score"] is None and details.get("error"):
            groups[j["judge"], j["method"]][error_reason(str(details["error"]))] += 1
    out = [{"judge": judge, "method": method, "episodes": sum(reasons.values()),
            "reason": reasons.most_common(1)[0][0]}
           for (judge, method), reasons in groups.items()]
    return sorted(out, key=lambda g: (-g["episodes"], g["judge"], g["method"]))


def terminations(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """benchmark -> row name -> termination reason -> finished episodes ('running' ones are
    counted as ``unfinished``)."""
    out: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for r in rows:
        why = "unfinished" if r["status"] == "running" else (r["termination"] or "unknown")
        out[r["benchmark"]][r["name"]][why] += 1
    return {b: {m: dict(sorted(c.items())) for m, c in sorted(ms.items())}
            for b, ms in sorted(out.items())}


def adaptive_section(runs: list[dict], outcomes: Iterable[Any],
                     leaderboards: Mapping[str, dict]) -> dict | None:
    """What a report says of an adaptive sweep (None for none): its stopping rule, why it
    stopped and the trials it asked per benchmark (from each adaptive run's info); per
    benchmark the scored trials per cell (per model: fewest, median, most, all) and, until
    ranked, the trials charged to each pair of neighbours; that the intervals over these
    tasks are the adaptive ones; and at which k Pass@k / Pass^k are shown (rows with a task
    of fewer trials have none)."""
    if not runs:
        return None
    cells: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for o in outcomes:
        if not o.unjudged:
            cells[o.benchmark or "", o.model][o.task_key] += 1
    per: dict[str, dict] = {}
    for (bench, model), n in sorted(cells.items()):
        v = sorted(n.values())
        per.setdefault(bench, {"trials_per_cell": {}})["trials_per_cell"][model] = {
            "min": v[0], "median": v[len(v) // 2], "max": v[-1], "total": sum(v)}
    for bench, b in per.items():
        k = ((leaderboards.get(bench) or {}).get("k") or {}).get("value")
        b["pass_k"] = (f"Pass@{k} and Pass^{k} are shown only for rows whose every task has "
                       f"at least {k} scored trials (k = the fewest of any task); the "
                       "other rows are marked incomplete" if k else None)
        pairs: dict[str, int] = {}
        for r in runs:  # oldest first: a resumed sweep replays every round, so its run's
            # count of a pair includes the earlier run's, and the newest one stands
            for pair, t in ((r["info"]["adaptive"].get("benchmarks") or {}).get(bench, {})
                            .get("by_pair") or {}).items():
                pairs[pair] = int(t)
        if pairs:
            b["trials_per_pair"] = pairs
    return {"runs": [{"run_id": r["run_id"], **{key: r["info"]["adaptive"].get(key) for key in
                      ("rule", "stopping_rule", "target", "margin", "start", "max_trials",
                       "why", "rounds", "benchmarks")}} for r in runs],
            "interval": "the 95% intervals over these tasks are the adaptive ones: each "
                        "task's variance at least that of its pass rate shrunk towards 1/2 "
                        "(trials were added where outcomes were uncertain, which the plain "
                        "estimate does not cover)",
            "benchmarks": per}
