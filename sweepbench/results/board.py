"""The leaderboards of a report's selected episodes (:mod:`sweepbench.results.report` says what
they hold): outcomes, gap counts, means of the extra columns, cost and profiles per row.

Counted as columns, not one Python object per episode: one pass over the episode rows collects
codes and numbers into lists, and every sum is a ``np.bincount`` over them. ``bincount`` adds
each bin's values one at a time in their order, from 0.0, as the running sums it replaces
did, so every mean comes out the same to the bit.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

import msgspec
import numpy as np

from sweepbench.ids import STATE_JUDGE, JudgeMethod, TaskKey
from sweepbench.results.call_side import CallSide
from sweepbench.results.comparisons import column_task_rates, compare, leaderboard_order
from sweepbench.results.cost import ROLES
from sweepbench.results.details import numeric_details
from sweepbench.results.outcome_columns import OutcomeColumns, Texts
from sweepbench.results.selection import EpisodeView
from sweepbench.results.sources import Source
from sweepbench.results.stats import Outcome, summarize

__all__ = ["Board", "k_of"]

STATE = (STATE_JUDGE, str(JudgeMethod.STATE))


class _Means:
    """Means keyed by (scope..., name) of values given per episode row: ``add`` collects, the
    first ``of`` sums (per scope of a row: its name, name x benchmark, name x domain, name x
    benchmark x domain)."""

    def __init__(self, scopes: _Scopes) -> None:
        self.scopes = scopes
        self.names = Texts()
        self.rows: list[int] = []
        self.codes: list[int] = []
        self.values: list[float] = []
        self._means: dict[tuple, float] | None = None
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # add_columns'

    def add(self, row: int, name: str, value: float) -> None:
        self.rows.append(row)
        self.codes.append(self.names.code(name))
        self.values.append(value)

    def add_columns(self, rows: np.ndarray, names: list[str], values: np.ndarray) -> None:
        """Values of ``names`` (one column each) for ``rows``; every (row, name) once."""
        for j, name in enumerate(names):
            self.parts.append((rows, np.full(len(rows), self.names.code(name)),
                               values[:, j].copy()))

    def of(self, scope: tuple, names: list[str]) -> dict[str, float]:
        if self._means is None:
            rows, codes, values = (np.array(self.rows, dtype=np.int64),
                                   np.array(self.codes, dtype=np.int64),
                                   np.array(self.values, dtype=np.float64))
            if self.parts:  # columns added together: each name's values in the rows' order
                rows, codes, values = (np.concatenate([x, *p]) for x, p in
                                       zip((rows, codes, values), zip(*self.parts)))
                order = np.argsort(rows, kind="stable")
                rows, codes, values = rows[order], codes[order], values[order]
            self.parts = []
            self._means = self.scopes.means(rows, codes, values, self.names.values)
        return {name: self._means[(*scope, name)] for name in names
                if (*scope, name) in self._means}


class _Scopes:
    """Each episode row's codes: its leaderboard row name, benchmark and domain."""

    def __init__(self, name: np.ndarray, bench: np.ndarray, domain: np.ndarray,
                 names: list[str], benches: list[str], domains: list[str]) -> None:
        self.name, self.bench, self.domain = name, bench, domain
        self.names, self.benches, self.domains = names, benches, domains

    def means(self, rows: np.ndarray, codes: np.ndarray, values: np.ndarray,
              labels: list[str]) -> dict[tuple, float]:
        out: dict[tuple, float] = {}
        if not len(rows):
            return out
        nb, nd, nl = len(self.benches), len(self.domains), len(labels)
        name, bench, domain = self.name[rows], self.bench[rows], self.domain[rows]
        for ids, scope in ((name, lambda i: (self.names[i],)),
                           (name * nb + bench, lambda i: (self.names[i // nb],
                                                          self.benches[i % nb])),
                           (name * nd + domain, lambda i: (self.names[i // nd], "d",
                                                           self.domains[i % nd])),
                           ((name * nb + bench) * nd + domain,
                            lambda i: (self.names[i // (nb * nd)], self.benches[i // nd % nb],
                                       "d", self.domains[i % nd]))):
            key = ids * nl + codes
            n = np.bincount(key)
            sums = np.bincount(key, weights=values)
            for i in np.flatnonzero(n).tolist():
                out[(*scope(i // nl), labels[i % nl])] = float(sums[i]) / int(n[i])
        return out


def empty_entry() -> dict:
    return {
        "k": None, "tasks": 0, "incomplete_tasks": 0, "episodes": 0, "passed": 0,
        "errors": 0, "avg": None, "pass_at_k": None, "pass_hat_k": None, "ci95": None,
        "intervals": {}, "unjudged": 0, "bounds": None, "score": None, "scored": 0,
        "pass_at_k_curve": None, "pass_hat_k_curve": None, "mse_vs_k": None, "domains": {},
        "benchmarks": {},
    }


class Board:
    """Outcomes and extra columns of every selected episode, grouped for the leaderboards."""

    def __init__(self, view: EpisodeView, by_pair: dict, sources: dict[str, Source], *,
                 k: int | None, n_boot: int, seed: int, correction: str,
                 adaptive: bool = False) -> None:
        self.view, self.sources, self.adaptive = view, sources, adaptive
        self.k, self.n_boot, self.seed, self.correction = k, n_boot, seed, correction
        self.counts: dict[tuple, Counter] = defaultdict(Counter)  # scope -> gap counts
        self.unreach: dict[str, dict] = {}
        self.row_of: dict[str, dict] = {}
        rows = view.rows
        names, benches, domains = Texts(), Texts(), Texts()
        name = names.codes(r["name"] for r in rows)
        bench = benches.codes(r["benchmark"] for r in rows)
        domain = domains.codes(r["domain"] for r in rows)
        self.scopes = _Scopes(name, bench, domain, names.values, benches.values,
                              domains.values)
        self.metrics, self.scores, self.state = (_Means(self.scopes), _Means(self.scopes),
                                                 _Means(self.scopes))
        metric_keys: set[str] = set()
        not_rates: set[str] = set()
        state = by_pair.get(STATE, {})
        headline = {b: by_pair.get((src.judge, src.method), {}) if src.judge else {}
                    for b, src in sources.items()}
        tasks: dict[tuple, int] = {}
        o_row, o_task, o_passed, o_error, o_unjudged, o_score, o_has = [], [], [], [], [], [], []
        metric_rows: dict[tuple[str, ...], list[tuple]] = {}  # metric names -> (row, values)
        for i, r in enumerate(rows):
            key, b = r["episode_key"], r["benchmark"]
            self.row_of[key] = r
            s = state.get(key)
            why = r["unreachable"] or ((s or {}).get("details") or {}).get("unreachable")
            if why:
                r["unreachable"] = why
                u = self.unreach.setdefault(f"{b}:{r['domain']}:{r['lang']}:{r['task_id']}", {
                    "benchmark": b, "domain": r["domain"], "lang": r["lang"],
                    "task_id": r["task_id"], "reason": why, "episodes": 0})
                u["episodes"] += 1
            status = r["status"]
            if status == "running":
                self._count(r, "unfinished")
                continue
            error = status == "error"
            if s is not None or error:  # the state check: a column whatever the headline
                self.state.add(i, "state", float(bool(s and s["passed"]) and not error))
            if not sources[b].applicable:
                self._count(r, "not_applicable")
                continue
            j = headline[b].get(key)
            verdict = None if j is None else j["passed"]
            task = (b, r["domain"], r["lang"] or "", r["task_id"])
            t = tasks.get(task)
            if t is None:
                t = tasks[task] = len(tasks)
            o_row.append(i)
            o_task.append(t)
            o_error.append(error)
            if verdict is None and not error:
                self._count(r, "unjudged")
                o_unjudged.append(True)
                o_passed.append(False)
                o_score.append(0.0)
                o_has.append(False)
                continue
            o_unjudged.append(False)
            o_passed.append(bool(verdict))
            score = None
            if j is not None:
                score = j["score"] if j["score"] is not None else float(bool(verdict))
                numbers = numeric_details(j["details"])
                if numbers:  # grouped by their names: most judgments of a kind share them
                    metric_rows.setdefault(tuple(numbers), []).append(
                        (i, *numbers.values()))
            o_score.append(0.0 if score is None else float(score))
            o_has.append(score is not None)
        for mnames, entries in metric_rows.items():
            columns = list(zip(*entries))
            for mname, v in zip(mnames, columns[1:]):
                metric_keys.add(mname)
                if any(isinstance(x, int) and not isinstance(x, bool) for x in v) or \
                        not all(0.0 <= x <= 1.0 for x in v):
                    not_rates.add(mname)
            self.metrics.add_columns(np.array(columns[0], dtype=np.int64), list(mnames),
                                     np.array(entries, dtype=np.float64)[:, 1:])
        at = np.array(o_row, dtype=np.int64)
        self.o_row = at
        self.outcomes = OutcomeColumns(
            (names.values, [str(TaskKey(*t)) for t in tasks], domains.values, benches.values),
            [name[at], np.array(o_task, dtype=np.int64), domain[at], bench[at],
             np.fromiter((rows[i]["trial"] for i in o_row), dtype=np.int64, count=len(o_row)),
             np.array(o_passed, dtype=bool), np.array(o_error, dtype=bool),
             np.array(o_unjudged, dtype=bool), np.array(o_score, dtype=np.float64),
             np.array(o_has, dtype=bool)])
        self._unreachable_task = np.array([t in self.unreach for t in self.outcomes.tasks],
                                          dtype=bool)
        index = {r["episode_key"]: i for i, r in enumerate(rows)}
        pair_names = set()
        for pair, judged in by_pair.items():
            pname = f"{pair[0]}/{pair[1]}"
            for key, j in judged.items():
                i = index.get(key)
                if j["score"] is not None and i is not None and rows[i]["status"] != "running":
                    pair_names.add(pname)
                    self.scores.add(i, pname, j["score"])
        self.pair_names = sorted(pair_names)
        self.metric_keys = sorted(metric_keys - not_rates)
        self._cost: dict[tuple, dict] = {}
        self._profiles: dict[tuple, dict] = {}

    def _count(self, r: dict, what: str) -> None:
        name, bench, domain = r["name"], r["benchmark"], r["domain"]
        for sc in ((name,), (name, bench), (name, "d", domain), (name, bench, "d", domain)):
            self.counts[sc][what] += 1

    def outcome_list(self) -> list[Outcome]:
        """The outcomes as ``Outcome``s (for what takes them one by one)."""
        oc = self.outcomes
        return [Outcome(model=oc.models[m], domain=oc.domains[d], task_key=oc.tasks[t],
                        trial=tr, passed=p, error=e, score=s if h else None,
                        benchmark=oc.benchmarks[b], unjudged=u)
                for m, d, t, tr, p, e, s, h, b, u in zip(
                    *(c.tolist() for c in (oc.model, oc.domain, oc.task, oc.trial, oc.passed,
                                           oc.error, oc.score, oc.has_score, oc.benchmark,
                                           oc.unjudged)))]

    def _extras(self, entry: dict, scope: tuple) -> None:
        for gap in ("unjudged", "unfinished", "not_applicable"):
            entry[gap] = self.counts[scope][gap]
        entry["metrics"] = self.metrics.of(scope, self.metric_keys)
        entry["method_scores"] = self.scores.of(scope, self.pair_names)
        entry["state"] = self.state.of(scope, ["state"]).get("state")

    def _leaderboard(self, outcomes: OutcomeColumns, scope: tuple[str, ...]) -> dict[str, dict]:
        models: dict[str, dict] = {}
        code = {n: i for i, n in enumerate(outcomes.models)}
        for name, stats in summarize(outcomes, k=self.k, adaptive=self.adaptive).items():
            entry = msgspec.to_builtins(stats)
            self._extras(entry, (name, *scope))
            for domain, d in entry["domains"].items():
                self._extras(d, (name, *scope, "d", domain))
            mine = outcomes.take(outcomes.model == code[name])
            reachable = ~self._unreachable_task[mine.task]
            if not reachable.all():
                entry["without_unreachable"] = _short(mine.take(reachable), entry["k"],
                                                      self.adaptive)
            models[name] = entry
        for sc, counts in self.counts.items():  # rows with nothing scored: listed, empty
            if len(sc) == 1 + len(scope) and sc[1:] == scope and sc[0] not in models:
                entry = empty_entry()
                self._extras(entry, sc)
                models[sc[0]] = entry
        return dict(sorted(models.items()))

    def _of_benchmark(self, b: str) -> OutcomeColumns:
        oc = self.outcomes
        code = oc.benchmarks.index(b) if b in oc.benchmarks else -1
        return oc.take(oc.benchmark == code)

    def benchmarks(self) -> dict[str, dict]:
        out = {}
        for b, src in sorted(self.sources.items()):
            outcomes = self._of_benchmark(b)
            models = self._leaderboard(outcomes, (b,))
            for name, entry in models.items():
                entry.pop("benchmarks", None)
                entry["cost"] = self._cost.get((name, b))
                _attach(entry, self._profiles.get((name, b)))
            out[b] = {
                "source": msgspec.to_builtins(src),
                "models": models,
                "not_applicable": sum(e["not_applicable"] for e in models.values()),
                "unreachable": [u for u in self.unreachable() if u["benchmark"] == b],
                "k": k_of(models, self.k),
            }
            cmp = self.compare(outcomes, models)
            out[b]["comparisons"], out[b]["comparisons_family"] = cmp["pairs"], cmp["family"]
        return out

    def overall(self) -> dict[str, dict]:
        """Every benchmark pooled, each episode scored by its own benchmark's source; a row
        is *undefined* (no numbers, ``undefined`` says why) when one of its benchmarks has
        nothing scored."""
        oc = self.outcomes
        pairs = oc.model * max(1, len(oc.benchmarks)) + oc.benchmark
        scored = {(oc.models[p // max(1, len(oc.benchmarks))],
                   oc.benchmarks[p % max(1, len(oc.benchmarks))])
                  for p in np.unique(pairs[~oc.unjudged]).tolist()}
        has = {(r["name"], r["benchmark"]) for r in self.view.rows}
        missing = {name: sorted(b for n, b in has - scored if n == name) for name, _ in has}
        keep = np.array([not missing.get(m) for m in oc.models], dtype=bool)
        models = self._leaderboard(oc.take(keep[oc.model]) if len(oc) else oc, ())
        for name, benches in missing.items():
            if benches:
                entry = empty_entry()
                self._extras(entry, (name,))
                entry["undefined"] = ("nothing scored by the headline of " + ", ".join(benches))
                models[name] = entry
        models = dict(sorted(models.items()))
        for name, entry in models.items():
            entry["cost"] = self._cost.get((name,))
            _attach(entry, self._profiles.get((name,)))
            for b, bstats in (entry.get("benchmarks") or {}).items():
                self._extras(bstats, (name, b))
                for domain, d in bstats["domains"].items():
                    self._extras(d, (name, b, "d", domain))
        return models

    def defined(self, models: Mapping[str, dict]) -> OutcomeColumns:
        """The outcomes of the rows ``models`` does not mark undefined."""
        oc = self.outcomes
        keep = np.array(["undefined" not in models[m] for m in oc.models], dtype=bool)
        return oc.take(keep[oc.model]) if len(oc) else oc

    def compare(self, outcomes: OutcomeColumns, models: dict[str, dict]) -> dict:
        """The leaderboard's family of paired comparisons (scored outcomes only)."""
        return compare(column_task_rates(outcomes.take(~outcomes.unjudged)),
                       leaderboard_order(models), n_boot=self.n_boot, seed=self.seed,
                       correction=self.correction)

    def add_call_side(self, side: CallSide) -> None:
        """Cost per row (and row x benchmark: agent, user, judge and total dollars, per
        episode and per passed episode) and profiles (tokens, turns, latency, retries per
        row, row x benchmark and domain), from :mod:`sweepbench.results.call_side`."""
        if side.profiles is not None:
            self._profiles.update(side.profiles)
        sc, oc, rows = self.scopes, self.outcomes, self.view.rows
        passed = _tally(sc, self.o_row[oc.passed & ~oc.error])
        costs, unpriced = side.costs, side.unpriced
        everyone = np.arange(len(rows))
        episodes = _tally(sc, everyone)
        sums = [_tally(sc, everyone, costs[:, j]) for j in range(3)]
        gaps = [_tally(sc, np.flatnonzero(unpriced[:, j])) for j in range(3)]
        for scope in _tally(sc, np.flatnonzero(side.touched)):
            by_role = {role: None if gaps[j].get(scope) else sums[j][scope]
                       for j, role in enumerate(ROLES)}
            total = None if None in by_role.values() else sum(by_role.values())
            if total is None:
                self._cost[scope] = {**by_role, "total": None, "per_episode": None,
                                     "per_pass": None}
                continue
            n, won = episodes[scope], passed.get(scope, 0)
            self._cost[scope] = {**by_role, "total": total,
                                 "per_episode": total / n if n else None,
                                 "per_pass": total / won if won else None}

    def unreachable(self) -> list[dict]:
        return sorted(self.unreach.values(),
                      key=lambda u: (u["benchmark"], u["domain"], u["task_id"]))


def _tally(sc: _Scopes, rows: np.ndarray, values: np.ndarray | None = None
           ) -> dict[tuple, Any]:
    """(row name,) and (row name, benchmark) -> how many of ``rows`` it has, or with
    ``values`` (one per episode row) the sum of theirs, added in order (as one at a time)."""
    out: dict[tuple, Any] = {}
    nb = max(1, len(sc.benches))
    name, bench = sc.name[rows], sc.bench[rows]
    for ids, scope in ((name, lambda i: (sc.names[i],)),
                       (name * nb + bench, lambda i: (sc.names[i // nb], sc.benches[i % nb]))):
        n = np.bincount(ids, minlength=1)
        sums = None if values is None else np.bincount(ids, weights=values[rows], minlength=1)
        for i in np.flatnonzero(n).tolist():
            out[scope(i)] = int(n[i]) if sums is None else float(sums[i])
    return out


def _attach(entry: dict, profile: dict | None) -> None:
    """A row's profile on its entry, each domain's on the entry's domain."""
    if profile is None:
        return
    profile = dict(profile)
    for domain, p in profile.pop("domains", {}).items():
        if domain in entry["domains"]:
            entry["domains"][domain]["profile"] = p
    entry["profile"] = profile


def _short(outcomes: OutcomeColumns, k: int | None, adaptive: bool = False) -> dict | None:
    """Avg@k, Pass@k, Pass^k and CI of one row's outcomes at its leaderboard's k (None when
    there are none)."""
    if not len(outcomes):
        return None
    [stats] = summarize(outcomes, k=k, adaptive=adaptive).values()
    return {f: getattr(stats, f) for f in ("k", "tasks", "incomplete_tasks", "episodes",
                                           "passed", "avg", "pass_at_k", "pass_hat_k", "ci95")}


def k_of(models: Mapping[str, dict], asked: int | None) -> dict:
    """The leaderboard's one k: its value, whether it was asked for, and the rows that
    cannot support it (incomplete: no Pass@k / Pass^k)."""
    ks = {e["k"] for e in models.values() if e.get("k") is not None}
    return {"value": ks.pop() if len(ks) == 1 else None, "requested": asked is not None,
            "incomplete": sorted(m for m, e in models.items() if e.get("incomplete_tasks"))}
