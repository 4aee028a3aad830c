"""sweepbench runs as inspect_ai eval logs, so ``inspect view`` and inspect's dataframe
functions (``inspect_ai.analysis``) open them.

One log per leaderboard row (model, or model with its user model and mode) and benchmark,
written with inspect_ai's own types (``inspect_ai.log``: ``EvalLog``, ``EvalSample``,
``write_eval_log``), ``.eval`` format:

- a sample per finished episode: ``id`` is the task id (``domain:lang:task_id`` when a task
  id repeats across domains or languages), ``epoch`` the trial + 1; its messages as
  inspect's ``ChatMessage`` types (tool calls with their arguments parsed, tool results
  with their function); ``output`` the last agent message; ``metadata`` the episode's key,
  label, termination, error, unreachable reason and cost; ``error`` when it ended in error;
  ``total_time`` its wall time.
- each judge as a scorer (``state`` for the deterministic check, else ``<judge>/<method>``):
  ``Score.value`` is the judgment's score (its verdict as 1/0 when it has no score),
  ``answer`` ``passed``/``failed``, ``explanation`` the judge's reasons (the rubrics and
  verdicts of a rubric judge), ``metadata`` ``{"passed", "score", "details"}``; the log's
  results give each scorer's mean and pass rate.
- the benchmark's *headline* scorer (the one the report scores it by:
  ``report.headline_sources``) comes first, in the results and in every sample's scores, so
  ``inspect view`` shows it as the log's headline (not the first by name: T1's Likert double
  would outrank its state check). Its first metric is ``avg_at_k``, the report's Avg@k of
  the row (``stats.summarize`` over the benchmark's rows, as the report's leaderboard: the
  mean over tasks of per-task pass rates, errors failed, unjudged left out), with the
  leaderboard's ``k`` beside it; the results' metadata names the headline.
- ``model_usage`` per sample: the agent's, the user simulator's and every judge's tokens
  (inspect's convention: ``input_tokens`` excludes the cached ones, which are in
  ``input_tokens_cache_read``; ``total_tokens`` = prompt + completion), with their cost.

Needs the ``inspect`` extra (inspect_ai 0.3).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Mapping

from sweepbench.errors import StoreError
from sweepbench.ids import STATE_JUDGE, JudgeMethod
from sweepbench.model_json import ArgumentsError, parse_arguments
from sweepbench.results.cost import call_cost, role_of
from sweepbench.results.export.tables import CHUNK, snake
from sweepbench.results.files import replace_file
from sweepbench.results.fmt import iso_utc
from sweepbench.results.sources import headline_sources
from sweepbench.results.runinfo import package_version
from sweepbench.results.stats import Outcome, summarize
from sweepbench.store.runstore import RunStore
from sweepbench.results.selection import EpisodeView
from sweepbench.wire import (
    AssistantMessage,
    EpisodeRecord,
    SystemMessage,
    ToolMessage,
    Usage,
    UserMessage,
)

__all__ = ["export_inspect", "scorer_name"]


def _inspect() -> Any:
    try:
        import inspect_ai.log as log
        import inspect_ai.model as model
        import inspect_ai.scorer as scorer
        import inspect_ai.tool as tool
    except ImportError as e:
        raise StoreError("inspect_ai logs need inspect_ai: pip install 'sweepbench[inspect]'") \
            from e
    return log, model, scorer, tool


def scorer_name(judge: str, method: str) -> str:
    """``state`` for the deterministic check, else ``<judge>/<method>``."""
    return "state" if (judge, method) == (STATE_JUDGE, str(JudgeMethod.STATE)) else \
        f"{judge}/{method}"


def _usage(m: Any, u: Usage, cost: float | None = None) -> Any:
    cached = min(u.cached_prompt_tokens, u.prompt_tokens)
    return m.ModelUsage(input_tokens=u.prompt_tokens - cached, output_tokens=u.completion_tokens,
                        total_tokens=u.prompt_tokens + u.completion_tokens,
                        input_tokens_cache_read=cached or None, total_cost=cost)


def _messages(m: Any, t: Any, rec: EpisodeRecord) -> list:
    names: dict[str, str] = {}
    out: list = []
    for msg in rec.messages:
        if isinstance(msg, SystemMessage):
            out.append(m.ChatMessageSystem(content=msg.content))
        elif isinstance(msg, UserMessage):
            out.append(m.ChatMessageUser(content=msg.content))
        elif isinstance(msg, AssistantMessage):
            calls = []
            for c in msg.tool_calls or []:
                names[c.id] = c.function.name
                try:
                    args = parse_arguments(c.function.arguments or "{}")
                    error = None if isinstance(args, dict) else "arguments are not an object"
                except ArgumentsError as e:
                    args, error = None, str(e)
                calls.append(t.ToolCall(id=c.id, function=c.function.name,
                                        arguments=args if isinstance(args, dict) else {},
                                        parse_error=error))
            out.append(m.ChatMessageAssistant(content=msg.content or "", tool_calls=calls or None,
                                              model=rec.model))
        elif isinstance(msg, ToolMessage):
            out.append(m.ChatMessageTool(content=msg.content, tool_call_id=msg.tool_call_id,
                                         function=msg.name or names.get(msg.tool_call_id)))
    return out


def _explanation(details: Any) -> str | None:
    if not isinstance(details, dict):
        return None
    lines = []
    for r in details.get("rubrics") or []:
        if isinstance(r, dict):
            state = {True: "met", False: "not met"}.get(r.get("met"), "unjudged")
            lines.append(f"[{state}] {r.get('rubric', '')}: {r.get('reasoning') or ''}".strip())
    for key in ("reasoning", "why", "note"):
        if isinstance(details.get(key), str) and details[key]:
            lines.append(details[key])
    return "\n".join(lines) or None


def _score(s: Any, j: dict) -> Any:
    value = j["score"] if j["score"] is not None else (
        None if j["passed"] is None else float(j["passed"]))
    answer = None if j["passed"] is None else ("passed" if j["passed"] else "failed")
    return s.Score(value=value, answer=answer,
                   explanation=_explanation(j["details"]),
                   metadata={"passed": j["passed"], "score": j["score"],
                             "details": j["details"]})


def _sample_ids(rows: list[dict]) -> dict[str, str]:
    tasks = Counter(r["task_id"] for r in {(r["domain"], r["lang"], r["task_id"]): r
                                           for r in rows}.values())
    return {r["episode_key"]: r["task_id"] if tasks[r["task_id"]] == 1 else
            f"{r['domain']}:{r['lang']}:{r['task_id']}" for r in rows}


def export_inspect(store: RunStore, view: EpisodeView, out_dir: str | Path, *,
                   benchmarks: Mapping[str, Mapping[str, Any]] | None = None) -> list[Path]:
    """Write one inspect_ai log per row x benchmark of ``view``'s finished episodes to
    ``out_dir``; returns their paths. ``benchmarks``: name -> {"headline", ...} as for
    the report (default: what the runs recorded)."""
    log, m, s, t = _inspect()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    keys = view.keys
    # the verdicts (details left out) and which episodes have a record, read a chunk at a
    # time; each log's records, details and calls are read when it is written: memory holds
    # one log, whatever the store's size
    verdicts = store.judgments(keys, keep=lambda details: None)
    verdicts_of: dict[str, list[dict]] = defaultdict(list)
    for j in verdicts:
        verdicts_of[j["episode_key"]].append(j)
    heads = {b: scorer_name(src["judge"], src["method"]) if src.get("judge") else None
             for b, src in headline_sources(view, verdicts, benchmarks).items()}
    prices = view.prices()
    finished = {k for i in range(0, len(keys), CHUNK) for k in store.records(keys[i:i + CHUNK])}
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in view.rows:
        if r["episode_key"] in finished:
            groups[r["name"], r["benchmark"]].append(r)
    runs = {run["run_id"]: run for run in view.runs}
    headline = _headlines(groups, verdicts_of, heads)
    paths = []
    for (name, bench), rows in sorted(groups.items()):
        ids = _sample_ids(rows)
        group = [r["episode_key"] for r in rows]
        records = store.records(group)
        judged: dict[str, list[dict]] = defaultdict(list)
        for j in store.judgments(group):
            judged[j["episode_key"]].append(j)
        judge_usage = _judge_usage(store, group, prices)
        samples, totals = [], defaultdict(Usage)
        scored: dict[str, list] = defaultdict(list)
        for r in rows:
            rec = records[r["episode_key"]]
            usage = defaultdict(Usage)
            usage[rec.model] += rec.agent_usage
            usage[r["user_model"] or "user"] += rec.user_usage
            costs: dict[str, float] = {}
            for judge, (u, cost) in judge_usage[r["episode_key"]].items():
                usage[judge] += u
                costs[judge] = costs.get(judge, 0.0) + cost
            for model_name, u in usage.items():
                totals[model_name] += u
            scores = {}
            for j in judged[r["episode_key"]]:
                if j["score"] is None and j["passed"] is None:
                    continue  # nothing to score (every window unjudged)
                sname = scorer_name(j["judge"], j["method"])
                scores[sname] = _score(s, j)
                scored[sname].append(j)
            head = heads.get(bench)
            scores = dict(sorted(scores.items(), key=lambda kv: (kv[0] != head, kv[0])))
            messages = _messages(m, t, rec)
            last = next((x for x in reversed(messages)
                         if isinstance(x, m.ChatMessageAssistant)), None)
            first_user = next((x.content for x in messages if isinstance(x, m.ChatMessageUser)),
                              "")
            samples.append(log.EvalSample(
                id=ids[r["episode_key"]], epoch=r["trial"] + 1, input=first_user, target="",
                messages=messages,
                output=m.ModelOutput(model=rec.model, choices=[m.ChatCompletionChoice(
                    message=last, stop_reason="stop")] if last else []),
                scores=scores or None,
                metadata={"episode_key": r["episode_key"], "episode_label": r["label"],
                          "benchmark": bench, "domain": r["domain"], "lang": r["lang"],
                          "task_id": r["task_id"], "trial": r["trial"],
                          "termination": rec.termination, "status": r["status"],
                          "unreachable": r["unreachable"], "turns": rec.turns,
                          "tool_calls": rec.tool_calls, "judge_cost_usd": costs},
                model_usage={k: _usage(m, u) for k, u in usage.items()},
                started_at=iso_utc(r["started_at"]), completed_at=iso_utc(r["finished_at"]),
                total_time=rec.wall_s,
                error=log.EvalError(message=rec.error or "error", traceback="",
                                    traceback_ansi="") if r["status"] == "error" else None))
        created = min((runs[r["run_id"]]["created_at"] for r in rows if r["run_id"] in runs),
                      default=min(r["started_at"] for r in rows))
        run_ids = sorted({r["run_id"] for r in rows if r["run_id"]})
        head = heads.get(bench)
        results = log.EvalResults(
            total_samples=len(samples), completed_samples=len(samples),
            scores=[log.EvalScore(
                name=sname, scorer=sname, scored_samples=len(js),
                unscored_samples=len(samples) - len(js),
                metrics={k: log.EvalMetric(name=k, value=v) for k, v in
                         {**(headline.get((name, bench), {}) if sname == head else {}),
                          **_metrics(js)}.items()},
                metadata={"headline": sname == head})
                for sname, js in sorted(scored.items(), key=lambda kv: (kv[0] != head, kv[0]))],
            metadata={"headline_scorer": head})
        eval_log = log.EvalLog(
            status="success",
            eval=log.EvalSpec(
                created=iso_utc(created), task=bench, task_id=snake(f"{bench}_{name}"),
                run_id=run_ids[-1] if run_ids else "",
                dataset=log.EvalDataset(name=bench, samples=len({x.id for x in samples}),
                                        sample_ids=sorted({x.id for x in samples}, key=str)),
                model=rows[0]["model"],
                config=log.EvalConfig(epochs=max(r["trial"] for r in rows) + 1),
                packages={"sweepbench": package_version()},
                metadata={"sweepbench_row": name, "runs": run_ids,
                          "user_models": sorted({r["user_model"] or "" for r in rows}),
                          "stores": [str(x.path) for x in view.stores]}),
            results=results,
            stats=log.EvalStats(started_at=iso_utc(created),
                                completed_at=iso_utc(max(r["finished_at"] or 0 for r in rows)),
                                model_usage={k: _usage(m, u) for k, u in totals.items()}),
            samples=samples)
        stamp = (iso_utc(created) or "").replace(":", "-").replace(".", "-")
        path = out_dir / f"{stamp}_{snake(bench)}_{snake(name)}.eval"
        replace_file(path, lambda target: log.write_eval_log(eval_log, str(target),
                                                             format="eval"), suffix=".eval")
        paths.append(path)
    return paths


def _judge_usage(store: RunStore, keys: list[str], prices: Mapping
                 ) -> dict[str, dict[str, list]]:
    """episode key -> judge -> [its calls' usage, their dollars]."""
    usage: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(lambda: [Usage(), 0.0]))
    for c in store.model_calls(keys):
        if role_of(c) == "judge":
            slot = usage[c.episode_key][c.journal.split("|")[1]]
            slot[0] = slot[0] + Usage(c.prompt_tokens, c.completion_tokens,
                                      c.cached_prompt_tokens)
            slot[1] += call_cost(c, prices).cost or 0.0
    return usage


def _headlines(groups: Mapping[tuple[str, str], list[dict]], judged: Mapping[str, list[dict]],
               heads: Mapping[str, str | None]) -> dict[tuple[str, str], dict[str, float]]:
    """(row, benchmark) -> the report's Avg@k of that row and the leaderboard's one k, from
    the headline verdicts and the episodes in error (one ``summarize`` per benchmark, as the
    report's leaderboards)."""
    by_bench: dict[str, list] = defaultdict(list)
    for (name, bench), rows in groups.items():
        for r in rows:
            verdict = next((j["passed"] for j in judged[r["episode_key"]]
                            if scorer_name(j["judge"], j["method"]) == heads.get(bench)), None)
            by_bench[bench].append(Outcome(
                model=name, domain=r["domain"], trial=r["trial"],
                task_key=f"{r['domain']}:{r['lang']}:{r['task_id']}", passed=bool(verdict),
                error=r["status"] == "error", unjudged=verdict is None))
    return {(name, bench): {"avg_at_k": st.avg, "k": float(st.k)}
            for bench, outcomes in by_bench.items()
            for name, st in summarize(outcomes).items() if st.avg is not None}


def _metrics(judgments: list[Mapping[str, Any]]) -> dict[str, float]:
    scores = [j["score"] if j["score"] is not None else float(bool(j["passed"]))
              for j in judgments if j["score"] is not None or j["passed"] is not None]
    verdicts = [bool(j["passed"]) for j in judgments if j["passed"] is not None]
    out = {}
    if scores:
        out["mean"] = sum(scores) / len(scores)
    if verdicts:
        out["accuracy"] = sum(verdicts) / len(verdicts)
    return out
