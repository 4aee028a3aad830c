"""The episodes a report, an export or a plan looks at: from one or several stores, filtered.

A store holds episodes, not sweeps, so a report starts from every episode in its stores and
narrows down with a :class:`Selection`: models, benchmarks, splits, a trial range, or one
run's selection (``--run``). Across stores an episode (one key) counts once: a finished copy
beats an unfinished one, else the first store's. Within the selection, one (model, task,
trial) may exist under several identities (a task file, a prompt or an endpoint option changed
between sweeps): the most recently started one counts and the older ones are *superseded*
(counted, never mixed in). A model run against several user models or user modes is shown as
several rows (``model [user U, mode]``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Iterable, Iterator, Sequence

from msgspec import Struct

from sweepbench.errors import ReportError
from sweepbench.results.calls import CallColumns, load_calls
from sweepbench.results.profile import Prices
from sweepbench.results.profile_columns import FactColumns
from sweepbench.store.facts import EpisodeFacts
from sweepbench.store.reads import ModelCallRow
from sweepbench.store.runstore import RunStore
from sweepbench.wire import EpisodeRecord

__all__ = ["EpisodeView", "Selection", "load_view", "name_rows", "parse_trials"]

_RANK = {"done": 0, "error": 1, "running": 2}


def parse_trials(text: str) -> tuple[int, int]:
    """``"4"``: trials 0..3 (the first four, as ``run --trials 4`` makes); ``"2-5"``: trials
    2..5 inclusive; ``"3-"``: trial 3 and later."""
    text = text.strip()
    try:
        if "-" in text:
            lo, _, hi = text.partition("-")
            lo_i, hi_i = int(lo), (int(hi) if hi.strip() else 1 << 30)
        else:
            lo_i, hi_i = 0, int(text) - 1
    except ValueError:
        raise ValueError(f"--trials takes N (the first N trials) or A-B (trials A..B), "
                         f"got {text!r}") from None
    if lo_i < 0 or hi_i < lo_i:
        raise ValueError(f"--trials {text}: empty or negative range")
    return lo_i, hi_i


class Selection(Struct, kw_only=True, frozen=True):
    """Which episodes to look at; empty fields select everything."""

    models: tuple[str, ...] = ()
    benchmarks: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()
    trials: tuple[int, int] | None = None
    run_id: str | None = None

    def describe(self) -> dict[str, Any]:
        return {k: v for k, v in (("models", list(self.models)),
                                  ("benchmarks", list(self.benchmarks)),
                                  ("splits", list(self.splits)),
                                  ("trials", list(self.trials) if self.trials else None),
                                  ("run", self.run_id)) if v}

    def keeps(self, row: dict, specs: set[str]) -> bool:
        if self.models and row["model"] not in self.models:
            return False
        if self.benchmarks and row["benchmark"] not in self.benchmarks:
            return False
        if self.trials and not self.trials[0] <= row["trial"] <= self.trials[1]:
            return False
        if self.splits:
            names = {row["domain"]} | specs | {s.partition(":")[2] for s in specs}
            if not names & set(self.splits):
                return False
        return True


class EpisodeView:
    """Selected episode rows (one per key, each with ``"name"``: its leaderboard row) and
    what belongs to them: records, judgments, journaled calls, runs and their prices."""

    def __init__(self, stores: Sequence[RunStore], rows: list[dict], superseded: int,
                 runs: list[dict]) -> None:
        self.stores = list(stores)
        self.rows = rows
        self.superseded = superseded
        self.runs = runs
        self._by_store: dict[int, list[str]] = defaultdict(list)
        for r in rows:
            self._by_store[r["store"]].append(r["episode_key"])

    def on(self, stores: Sequence[RunStore]) -> EpisodeView:
        """The same view read through other connections to its stores (a forked process's
        own), made without going over the rows."""
        view = object.__new__(EpisodeView)
        view.__dict__.update(self.__dict__)
        view.stores = list(stores)
        return view

    @property
    def keys(self) -> list[str]:
        return [r["episode_key"] for r in self.rows]

    def store_keys(self) -> Iterator[tuple[RunStore, list[str]]]:
        """Each store with the keys of its selected rows, in the rows' order."""
        for i, keys in self._by_store.items():
            yield self.stores[i], keys

    def _gather(self, read) -> Iterable:  # noqa: ANN001 - a store method taking keys
        for i, keys in self._by_store.items():
            yield from read(self.stores[i], keys)

    def records(self) -> dict[str, EpisodeRecord]:
        out: dict[str, EpisodeRecord] = {}
        for i, keys in self._by_store.items():
            out.update(self.stores[i].records(keys))
        return out

    def facts(self) -> dict[str, EpisodeFacts]:
        """episode_key -> the facts of its record (schema 6), in ``records``' order."""
        out: dict[str, EpisodeFacts] = {}
        for i, keys in self._by_store.items():
            out.update(self.stores[i].episode_facts(keys))
        return out

    def fact_columns(self) -> FactColumns:
        """``facts`` as columns (schema 6), in the same order."""
        rows: list[tuple] = []
        for i, keys in self._by_store.items():
            rows += self.stores[i].episode_fact_rows(keys)
        return FactColumns.of(rows)

    def call_columns(self) -> CallColumns:
        """The selected episodes' calls as columns (schema 6), in ``calls``' order."""
        return load_calls((self.stores[i], keys) for i, keys in self._by_store.items())

    @property
    def has_facts(self) -> bool:
        """Whether every store holds the facts reports sum (schema 6)."""
        return all(s.has_facts for s in self.stores)

    def judgments(self, keep: Callable[[Any], Any] | None = None) -> list[dict]:
        """The selected episodes' judgments (``keep``: what to keep of their details)."""
        return list(self._gather(lambda s, keys: s.judgments(keys, keep=keep)))

    def calls(self) -> list[ModelCallRow]:
        """Every journaled call, read from the journals' payloads (the transcript path)."""
        return list(self._gather(lambda s, keys: s.model_calls(keys, transcripts=True)))

    def prices(self) -> dict[str, dict[str, Prices]]:
        from sweepbench.results.cost import prices_by_run

        return prices_by_run(self.runs)

    def info(self, name: str) -> dict[str, Any]:
        """``info[name]`` of the runs merged, later runs winning (e.g. headlines)."""
        out: dict[str, Any] = {}
        for run in self.runs:
            value = (run.get("info") or {}).get(name)
            if isinstance(value, dict):
                out.update(value)
        return out


def load_view(stores: Sequence[RunStore], selection: Selection | None = None) -> EpisodeView:
    """The episodes of ``stores`` that ``selection`` keeps (see the module docstring)."""
    selection = selection or Selection()
    runs: dict[str, dict] = {}
    for s in stores:
        for run in s.runs():
            runs.setdefault(run["run_id"], run)
    if not runs:
        raise ReportError(f"run store {', '.join(str(s.path) for s in stores)} holds no runs")
    if selection.run_id is not None and selection.run_id not in runs:
        raise ReportError(f"no run {selection.run_id!r} in {', '.join(str(s.path) for s in stores)} "
                          f"(runs: {', '.join(runs)})")
    best: dict[str, dict] = {}
    filtered = bool(selection.models or selection.benchmarks or selection.splits
                    or selection.trials)
    for i, s in enumerate(stores):
        specs = s.specs() if selection.splits else {}  # what --split matches, only then
        if selection.run_id is not None and s.run(selection.run_id) is None:
            continue
        for row in s.episode_rows(selection.run_id):
            if filtered and not selection.keeps(row, specs.get(row["episode_key"], set())):
                continue
            row["store"] = i
            old = best.get(row["episode_key"])
            if old is None or _RANK[row["status"]] < _RANK[old["status"]]:
                best[row["episode_key"]] = row
    rows, superseded = _newest(list(best.values()))
    name_rows(rows)
    rows.sort(key=lambda r: (r["name"], r["benchmark"], r["domain"], r["task_id"], r["trial"]))
    return EpisodeView(stores, rows, superseded, list(runs.values()))


def _newest(rows: list[dict]) -> tuple[list[dict], int]:
    """One row per (model, user, task, trial): the most recently started identity."""
    best: dict[tuple, dict] = {}
    for r in rows:
        group = (r["label"], r["user_model"], r["user_mode"])
        old = best.get(group)
        if old is None or ((r["started_at"] or 0.0, r["episode_key"]) >
                           (old["started_at"] or 0.0, old["episode_key"])):
            best[group] = r
    out = list(best.values())
    return out, len(rows) - len(out)


def name_rows(rows: list[dict]) -> None:
    """Give each row its leaderboard ``"name"``: the model, or ``model [user U, mode]`` when
    the rows hold that model under several user models or modes."""
    users: dict[str, set] = defaultdict(set)
    for r in rows:
        users[r["model"]].add((r["user_model"], r["user_mode"]))
    for r in rows:
        if len(users[r["model"]]) > 1:
            r["name"] = f"{r['model']} [user {r['user_model']}, {r['user_mode']}]"
        else:
            r["name"] = r["model"]
