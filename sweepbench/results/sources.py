"""Where each benchmark's pass comes from in a report: its headline judge and method (or the
ones asked for), and whether that method applies to it (see :mod:`sweepbench.results.report`,
**One headline per benchmark, fixed**)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Mapping, Sequence

import msgspec

from sweepbench.ids import STATE_JUDGE, JudgeMethod
from sweepbench.results.selection import EpisodeView

__all__ = ["Source", "choose_source", "headline_sources", "sources_from", "sources_of"]


class Source(msgspec.Struct, kw_only=True):
    """Where a benchmark's pass comes from."""

    judge: str | None
    method: str
    label: str
    explicit: bool = False
    applicable: bool = True


def choose_source(meta: Mapping[str, Any], verdicts: Mapping[tuple[str, str], int], *,
                  method: str | None = None, judge: str | None = None) -> Source:
    """Where one benchmark's pass comes from (see the module docstring). ``meta``: the
    benchmark's info (headline, headline_label, judge_methods); ``verdicts``: how many
    verdicts each (judge, method) pair gave on its selected episodes."""
    headline = str(meta.get("headline") or JudgeMethod.STATE)
    label = str(meta.get("headline_label") or ("the state check" if headline == "state"
                                               else f"the {headline} judge"))
    m = method or headline
    applicable = m == JudgeMethod.STATE or m in (meta.get("judge_methods") or [m])
    if m == JudgeMethod.STATE:
        who: str | None = STATE_JUDGE
    elif judge is not None:
        who = judge
    else:  # the judge with the most verdicts of this method on this benchmark
        ranked = sorted(((jname, n) for (jname, jmethod), n in verdicts.items() if jmethod == m),
                        key=lambda kv: (-kv[1], kv[0]))
        who = ranked[0][0] if ranked and ranked[0][1] else None
    explicit = method is not None or (judge is not None and m != JudgeMethod.STATE)
    return Source(judge=who, method=m, label=label if not method else f"the {m} judge",
                  explicit=explicit, applicable=applicable)


def sources_of(view: EpisodeView, benchmarks: Sequence[str], by_pair: dict,
               info: Mapping[str, Mapping], method: str | None, judge: str | None
               ) -> dict[str, Source]:
    """benchmark -> its source, of judgments given as (judge, method) -> episode_key ->
    judgment."""
    bench_of = {r["episode_key"]: r["benchmark"] for r in view.rows}
    verdicts: dict[str, Counter] = defaultdict(Counter)
    for pair, judged in by_pair.items():
        for key, j in judged.items():
            if j["passed"] is not None and key in bench_of:
                verdicts[bench_of[key]][pair] += 1
    return sources_from(benchmarks, verdicts, info, method, judge)


def sources_from(benchmarks: Sequence[str], verdicts: Mapping[str, Mapping[tuple[str, str], int]],
                 info: Mapping[str, Mapping], method: str | None, judge: str | None
                 ) -> dict[str, Source]:
    """benchmark -> its source, of the verdicts each (judge, method) gave on its episodes."""
    return {b: choose_source(info.get(b) or {}, verdicts.get(b) or {}, method=method,
                             judge=judge) for b in benchmarks}


def headline_sources(view: EpisodeView, judgments: list[dict],
                     benchmarks: Mapping[str, Mapping[str, Any]] | None = None
                     ) -> dict[str, dict]:
    """benchmark -> where its headline pass comes from ({"judge", "method", "label", ...}),
    as the leaderboards choose it (for exports)."""
    by_pair: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for j in judgments:
        by_pair[j["judge"], j["method"]][j["episode_key"]] = j
    info = {**view.info("benchmarks"), **(benchmarks or {})}
    names = sorted({r["benchmark"] for r in view.rows})
    return {b: msgspec.to_builtins(s)
            for b, s in sources_of(view, names, by_pair, info, None, None).items()}
