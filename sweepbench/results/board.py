"""The leaderboards of a report's selected episodes (:mod:`sweepbench.results.report` says what
they hold): outcomes, gap counts, means of the extra columns, cost and profiles per row.

Counted as columns, not one Python object per episode: the rows' codes and the judgments'
columns (:mod:`sweepbench.results.judged`, one verdict and score per row and judge) are
arrays, and every sum is a ``np.bincount`` over them. ``bincount`` adds each bin's values one
at a time in their order, from 0.0, as the running sums it replaced did (each judge's scores
in read order, the rest in the rows' order), so every mean comes out the same to the bit.
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
from sweepbench.results.judged import ABSENT, Judged
from sweepbench.results.outcome_columns import OutcomeColumns, Texts
from sweepbench.results.row_codes import ERROR, RUNNING, RowCodes
from sweepbench.results.selection import EpisodeView
from sweepbench.results.sources import Source
from sweepbench.results.stats import Outcome, summarize

__all__ = ["Board", "k_of"]

STATE = (STATE_JUDGE, str(JudgeMethod.STATE))


class _Means:
    """Means keyed by (scope..., name) of values given per episode row: ``extend`` and
    ``add_columns`` collect, the first ``of`` sums (per scope of a row: its name, name x
    benchmark, name x domain, name x benchmark x domain)."""

    def __init__(self, scopes: _Scopes) -> None:
        self.scopes = scopes
        self.names = Texts()
        self.ordered: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # extend's
        self._means: dict[tuple, float] | None = None
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # add_columns'

    def extend(self, rows: np.ndarray, name: str, values: np.ndarray) -> None:
        """``name``'s values of ``rows``, summed in the order given."""
        self.ordered.append((rows, np.full(len(rows), self.names.code(name)),
                             np.asarray(values, dtype=np.float64)))

    def add_columns(self, rows: np.ndarray, names: list[str], values: np.ndarray) -> None:
        """Values of ``names`` (one column each) for ``rows``, summed in the rows' order;
        every (row, name) once."""
        for j, name in enumerate(names):
            self.parts.append((rows, np.full(len(rows), self.names.code(name)),
                               values[:, j].copy()))

    def of(self, scope: tuple, names: list[str]) -> dict[str, float]:
        if self._means is None:
            parts = [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                      np.zeros(0)), *self.ordered]
            rows, codes, values = (np.concatenate(x) for x in zip(*parts))
            if self.parts:  # columns added together: each name's values in the rows' order
                rows, codes, values = (np.concatenate([x, *p]) for x, p in
                                       zip((rows, codes, values), zip(*self.parts)))
                order = np.argsort(rows, kind="stable")
                rows, codes, values = rows[order], codes[order], values[order]
            self.parts = self.ordered = []
            self._means = self.scopes.means(rows, codes, values, self.names.values)
        return {name: self._means[(*scope, name)] for name in names
                if (*scope, name) in self._means}


class _Scopes:
    """Each episode row's codes: its leaderboard row name, benchmark and domain."""

    def __init__(self, name: np.ndarray, bench: np.ndarray, domain: np.ndarray,
                 names: list[str], benches: list[str], domains: list[str]) -> None:
        self.name, self.bench, self.domain = name, bench, domain
        self.names, self.benches, self.domains = names, benches, domains

    def scoped(self, rows: np.ndarray) -> list[tuple[np.ndarray, Any]]:
        """For ``rows`` (a mask or indices), per scope (row name; name x benchmark; name x
        domain; name x benchmark x domain): each row's id in that scope, and the function
        from an id to the scope's key."""
        nb, nd = max(1, len(self.benches)), max(1, len(self.domains))
        names, benches, domains = self.names, self.benches, self.domains
        name, bench, domain = self.name[rows], self.bench[rows], self.domain[rows]
        return [(name, lambda i: (names[i],)),
                (name * nb + bench, lambda i: (names[i // nb], benches[i % nb])),
                (name * nd + domain, lambda i: (names[i // nd], "d", domains[i % nd])),
                ((name * nb + bench) * nd + domain,
                 lambda i: (names[i // (nb * nd)], benches[i // nd % nb], "d",
                            domains[i % nd]))]

    def means(self, rows: np.ndarray, codes: np.ndarray, values: np.ndarray,
              labels: list[str]) -> dict[tuple, float]:
        out: dict[tuple, float] = {}
        if not len(rows):
            return out
        nl = len(labels)
        for ids, scope in self.scoped(rows):
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

    def __init__(self, view: EpisodeView, judged: Judged, sources: dict[str, Source], *,
                 k: int | None, n_boot: int, seed: int, correction: str,
                 adaptive: bool = False, codes: RowCodes | None = None) -> None:
        self.view, self.sources, self.adaptive = view, sources, adaptive
        self.k, self.n_boot, self.seed, self.correction = k, n_boot, seed, correction
        self.counts: dict[tuple, Counter] = defaultdict(Counter)  # scope -> gap counts
        self.unreach: dict[str, dict] = {}
        rows = view.rows
        codes = RowCodes.of(rows) if codes is None else codes
        name, bench, domain = codes.name, codes.bench, codes.domain
        self.scopes = _Scopes(name, bench, domain, codes.names, codes.benches, codes.domains)
        self.metrics, self.scores, self.state = (_Means(self.scopes), _Means(self.scopes),
                                                 _Means(self.scopes))
        running, error = codes.status == RUNNING, codes.status == ERROR
        # unreachable tasks: the row's own reason, else its state check's
        sp = judged.index(STATE)
        said = {} if sp is None else judged.unreachable[sp]
        for i in sorted({i for i, r in enumerate(rows) if r["unreachable"]} | said.keys()):
            r = rows[i]
            why = r["unreachable"] or said.get(i)
            r["unreachable"] = why
            b = r["benchmark"]
            u = self.unreach.setdefault(f"{b}:{r['domain']}:{r['lang']}:{r['task_id']}", {
                "benchmark": b, "domain": r["domain"], "lang": r["lang"],
                "task_id": r["task_id"], "reason": why, "episodes": 0})
            u["episodes"] += 1
        self._count_rows(running, "unfinished")
        # the state check: a column whatever the headline
        state = judged.verdict[sp] if sp is not None else np.full(len(rows), ABSENT)
        at = np.flatnonzero(~running & ((state != ABSENT) | error))
        self.state.extend(at, "state", ((state[at] == 1) & ~error[at]).astype(np.float64))
        applicable = np.array([sources[b].applicable for b in codes.benches], dtype=bool)
        self._count_rows(~running & ~applicable[bench], "not_applicable")
        o_row = np.flatnonzero(~running & applicable[bench])
        # each outcome's headline judgment: its benchmark's source
        verdict = np.full(len(o_row), ABSENT, dtype=np.int8)
        score, has = np.zeros(len(o_row)), np.zeros(len(o_row), dtype=bool)
        headline = np.full(len(rows), -1, dtype=np.int64)  # row -> its headline pair
        for code, b in enumerate(codes.benches):
            src = sources[b]
            hp = judged.index((src.judge, src.method)) if src.judge else None
            if hp is None:
                continue
            sel = np.flatnonzero(bench[o_row] == code)
            at = o_row[sel]
            verdict[sel], score[sel] = judged.verdict[hp][at], judged.score[hp][at]
            has[sel] = judged.has_score[hp][at]
            headline[at] = hp
        err = error[o_row]
        unjudged = (verdict < 0) & ~err  # no verdict (nor a judgment) and no error
        mask = np.zeros(len(rows), dtype=bool)
        mask[o_row[unjudged]] = True
        self._count_rows(mask, "unjudged")
        passed = verdict == 1
        scored = (verdict != ABSENT) & ~unjudged  # a judgment: its score, else its pass
        o_score = np.where(scored, np.where(has, score, passed.astype(np.float64)), 0.0)
        metric_keys: set[str] = set()
        not_rates: set[str] = set()
        eligible = np.zeros(len(rows), dtype=bool)
        eligible[o_row[scored]] = True
        for p, groups in enumerate(judged.numbers):
            mine = eligible & (headline == p)
            for numbers in groups.values():
                at, values, ints = numbers.arrays()
                keep = mine[at]
                if not keep.any():
                    continue
                at, values, ints = at[keep], values[keep], ints[keep]
                for j, mname in enumerate(numbers.names):
                    metric_keys.add(mname)
                    if ints[:, j].any() or not ((values[:, j] >= 0.0) &
                                                (values[:, j] <= 1.0)).all():
                        not_rates.add(mname)
                self.metrics.add_columns(at, list(numbers.names), values)
        self.o_row = o_row
        task_of = {}  # (benchmark, domain, lang, task_id) -> its number, in the rows' order
        task = np.fromiter((task_of.setdefault((r["benchmark"], r["domain"], r["lang"] or "",
                                                r["task_id"]), len(task_of)) for r in rows),
                           dtype=np.int64, count=len(rows))[o_row]
        firsts, at = np.unique(task, return_index=True)  # renumbered in the outcomes' order
        order = firsts[np.argsort(at)]
        renumber = np.zeros(len(task_of), dtype=np.int64)
        renumber[order] = np.arange(len(order))
        tasks = list(task_of)
        trial = np.fromiter((r["trial"] for r in rows), dtype=np.int64, count=len(rows))
        self.outcomes = OutcomeColumns(
            (codes.names, [str(TaskKey(*tasks[t])) for t in order.tolist()], codes.domains,
             codes.benches),
            [name[o_row], renumber[task], domain[o_row], bench[o_row], trial[o_row], passed,
             err, unjudged, o_score, scored])
        self._unreachable_task = np.array([t in self.unreach for t in self.outcomes.tasks],
                                          dtype=bool)
        pair_names = set()
        for p, (pj, pm) in enumerate(judged.pairs):
            at = judged.judged_rows(p)
            at = at[judged.has_score[p][at] & ~running[at]]
            if len(at):
                pname = f"{pj}/{pm}"
                pair_names.add(pname)
                self.scores.extend(at, pname, judged.score[p][at])
        self.pair_names = sorted(pair_names)
        self.metric_keys = sorted(metric_keys - not_rates)
        self._cost: dict[tuple, dict] = {}
        self._profiles: dict[tuple, dict] = {}

    def _count_rows(self, mask: np.ndarray, what: str) -> None:
        """Count ``what`` for the rows ``mask`` selects, in each scope of theirs."""
        for ids, scope in self.scopes.scoped(mask):
            n = np.bincount(ids, minlength=1)
            for i in np.flatnonzero(n).tolist():
                self.counts[scope(i)][what] += int(n[i])

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
                self._fill(entry, (name, b))
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
            self._fill(entry, (name,))
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

    def fill_call_side(self, models: Mapping[str, dict],
                       leaderboards: Mapping[str, dict]) -> None:
        """Cost and profiles (``add_call_side``'s) on entries ``overall`` and ``benchmarks``
        made before it: a report builds them while the call side is still being made."""
        for name, entry in models.items():
            self._fill(entry, (name,))
        for b, leaderboard in leaderboards.items():
            for name, entry in leaderboard["models"].items():
                self._fill(entry, (name, b))

    def _fill(self, entry: dict, scope: tuple) -> None:
        """A row's cost and profile on its entry (the keys where a later call puts them
        too: ``"cost"`` set again in place, ``"profile"`` last)."""
        entry["cost"] = self._cost.get(scope)
        _attach(entry, self._profiles.get(scope))

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
