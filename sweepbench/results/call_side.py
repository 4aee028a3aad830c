"""What a report reads of the stores' calls and records rather than of the judgments: spend
(per episode row, and the ``"cost"`` section), the token / latency profiles, stalls per
endpoint and the error texts of episodes that ended in error.

It needs the selected rows, never the judgments or the outcomes, so for a large selection it
is made in a second process (``fork``: the rows are inherited, not copied) while the first
reads and counts the judgments; on a machine with two free cores the report then takes the
longer half rather than the sum. The calls are the longer half, so the first process reads
the episodes' facts too and hands them over a pipe. What comes back is small: a few numbers
per episode row as arrays, and dicts per leaderboard row. A second process that cannot start
or dies is not a failed report: the same work is then done in the first.
"""

from __future__ import annotations

import functools
import multiprocessing
import signal
import sys
import threading
from collections.abc import Callable
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from sweepbench.results.cost import ROLES, Spend
from sweepbench.results.profile import Prices, endpoint_stalls, stall_table
from sweepbench.results.profile_columns import FactColumns, row_profiles
from sweepbench.results.row_codes import ERROR, RowCodes
from sweepbench.results.selection import EpisodeView

__all__ = ["APART_FROM", "CallSide", "call_side", "start"]

_GRACE = 5.0  # seconds a cancelled second process has to end on SIGTERM before SIGKILL

APART_FROM = 20_000
"""Selections of at least this many episode rows are read in a second process (where
``fork`` exists); smaller ones, which take well under a second, in this one."""


class CallSide(NamedTuple):
    """``costs`` (dollars per episode row and role, in ``view.rows``' order), ``unpriced``
    (whether that row and role made an unpriced call), ``touched`` (whether the row made any
    call); ``summary`` (the report's ``"cost"``), ``profiles`` (scope -> profile, or None),
    ``stalls`` (per endpoint), ``errors`` (episode key -> its error text) and ``damaged``
    (per store: what the reads left out, in the order they said it)."""

    costs: np.ndarray
    unpriced: np.ndarray
    touched: np.ndarray
    summary: dict
    profiles: dict[tuple[str, ...], dict] | None
    stalls: dict[str, dict[str, int]]
    errors: dict[str, str | None]
    damaged: list[list[str]]


def call_side(view: EpisodeView, override: Mapping[str, Prices] | None, *, profile: bool,
              transcripts: bool = False, codes: RowCodes | None = None,
              facts: Callable[[], FactColumns] | None = None) -> CallSide:
    """The call side of ``view``'s report: from the stores' facts (schema 6), or from the
    journals' payloads and the records (``transcripts``, or a store without facts).
    ``codes``: the rows' (``RowCodes.of(view.rows)``; from the facts, only those are read).
    ``facts``: gives ``view.fact_columns()`` read elsewhere (by default read here)."""
    codes = codes if codes is not None else RowCodes.of(view.rows)
    index = codes.index()
    before = [len(s.damaged) for s in view.stores]
    if transcripts or not view.has_facts:
        row_of = {r["episode_key"]: r for r in view.rows}
        calls = view.calls()
        spend = Spend.of(calls, view.prices(), override)
        profiles = _record_profiles(view, row_of, calls) if profile else None
        stalls = endpoint_stalls(calls)
        errors = _error_texts(view)
        del calls
    else:
        cols = view.call_columns()
        facts = view.fact_columns() if facts is None else facts()
        spend = Spend.of_columns(cols, view.prices(), override)
        profiles = row_profiles(cols, facts, codes, index) if profile else None
        counts = np.bincount(cols.endpoint, minlength=len(cols.endpoints))
        stalls = stall_table(cols.rare.values(), {
            e: int(n) for e, n in zip(cols.endpoints, counts.tolist()) if e})
        finished = set(facts.keys)
        errors = {codes.keys[i]: facts.errors.get(codes.keys[i])
                  for i in np.flatnonzero(codes.status == ERROR).tolist()
                  if codes.keys[i] in finished}
        del cols, facts
    costs, unpriced, touched = _episode_costs(spend, codes.keys)
    return CallSide(costs, unpriced, touched, cost_summary(spend, codes, index),
                    None if profiles is None else {k: _no_cost(p) for k, p in profiles.items()},
                    stalls, errors, [s.damaged[n:] for s, n in zip(view.stores, before)])


def _episode_costs(spend: Spend, keys: list[str]) -> tuple[np.ndarray, ...]:
    """Dollars per row (of ``keys``) and role, whether that row and role made an unpriced
    call, and whether the row made any call."""
    costs = np.zeros((len(keys), 3))
    unpriced = np.zeros((len(keys), 3), dtype=bool)
    touched = np.zeros(len(keys), dtype=bool)  # rows with a priced or unpriced call
    for i, key in enumerate(keys):
        spent = spend.by_episode.get(key)
        if spent is not None:
            touched[i] = True
            costs[i] = [spent.get(role, 0.0) for role in ROLES]
        for role in spend.unpriced_roles.get(key, ()):
            touched[i] = unpriced[i, ROLES.index(role)] = True
    return costs, unpriced, touched


def cost_summary(spend: Spend, codes: RowCodes, index: Mapping[str, int]) -> dict:
    """The report's ``"cost"``: total, by role, endpoint, row, benchmark and task (``index``:
    episode key -> its row in ``codes``)."""
    by_task: dict[str, float | None] = defaultdict(float)
    by_bench: dict[str, float | None] = defaultdict(float)
    by_model: dict[str, float | None] = defaultdict(float)
    task, bench, name = codes.task.tolist(), codes.bench.tolist(), codes.name.tolist()
    for key in {**spend.by_episode, **spend.unpriced_roles}:  # in order: the same sums
        i = index.get(key)
        if i is None:
            continue
        total = None if key in spend.unpriced_roles else sum(spend.by_episode[key].values())
        for table, label in ((by_task, codes.tasks[task[i]]), (by_bench, codes.benches[bench[i]]),
                             (by_model, codes.names[name[i]])):
            table[label] = None if total is None or table[label] is None else \
                table[label] + total
    by_endpoint: dict[str, float | None] = {**spend.by_endpoint,
                                            **dict.fromkeys(spend.unpriced_endpoints)}
    return {"total": spend.total, "agent": spend.by_role["agent"],
            "user": spend.by_role["user"], "judge": spend.by_role["judge"],
            "by_endpoint": dict(sorted(by_endpoint.items())),
            "by_model": dict(sorted(by_model.items())),
            "by_benchmark": dict(sorted(by_bench.items())),
            "by_task": dict(sorted(by_task.items())),
            "calls": spend.calls, "unpriced_calls": spend.unpriced}


def _record_profiles(view: EpisodeView, row_of: Mapping[str, dict],
                     calls: list) -> dict[tuple[str, ...], dict]:
    """Profiles per row and per row x benchmark from the records and the episodes' own
    calls (the transcript path)."""
    import msgspec

    from sweepbench.results.profile import build_profiles, call_event

    recs: dict[str, list] = defaultdict(list)  # benchmark -> records, named by row
    for key, rec in view.records().items():
        r = row_of.get(key)
        if r is not None:
            recs[r["benchmark"]].append(msgspec.structs.replace(rec, model=r["name"]))
    events: dict[str, list] = defaultdict(list)  # benchmark -> (row, domain, call)
    for c in calls:
        r = row_of.get(c.episode_key)
        if r is not None and not c.journal:  # the episode's own calls, not its judges'
            events[r["benchmark"]].append((r["name"], r["domain"], call_event(c)))
    out: dict[tuple[str, ...], dict] = {}
    pooled = build_profiles([x for v in recs.values() for x in v],
                            [x for v in events.values() for x in v])
    for name, p in pooled.items():
        out[(name,)] = p
    for b in recs:
        for name, p in build_profiles(recs[b], events[b]).items():
            out[(name, b)] = p
    return out


def _error_texts(view: EpisodeView) -> dict[str, str | None]:
    """episode_key -> its record's error, for the episodes that ended in error."""
    keys: dict[int, list[str]] = defaultdict(list)
    for r in view.rows:
        if r["status"] == "error":
            keys[r["store"]].append(r["episode_key"])
    return {k: rec.error for i, ks in keys.items()
            for k, rec in view.stores[i].records(ks).items()}


def _no_cost(profile: dict) -> dict:
    profile.pop("cost", None)
    for d in (profile.get("domains") or {}).values():
        d.pop("cost", None)
    return profile


class _Here:
    """The call side made in this process, when asked for."""

    def __init__(self, view: EpisodeView, override: Mapping[str, Prices] | None,
                 options: dict[str, Any]) -> None:
        self._args = (view, override, options)

    def result(self) -> CallSide:
        view, override, options = self._args
        return call_side(view, override, **options)

    def cancel(self) -> None:
        """Not wanted after all (the report failed first)."""


class _Apart:
    """The call side made in a forked process, on connections of its own; the episodes'
    facts it needs are read here meanwhile and sent over a pipe (``_FactFeed``)."""

    def __init__(self, view: EpisodeView, override: Mapping[str, Prices] | None,
                 options: dict[str, Any]) -> None:
        ctx = multiprocessing.get_context("fork")
        self._recv, send = ctx.Pipe(duplex=False)
        wanted = not options["transcripts"] and view.has_facts
        facts = ctx.Pipe(duplex=False) if wanted else None
        self._proc = ctx.Process(target=_child, args=(view, override, options, send, facts),
                                 daemon=True, name="sweepbench-report-calls")
        self._proc.start()
        send.close()
        self._feed = None
        if facts is not None:
            facts[0].close()
            try:
                self._feed = _FactFeed(view, facts[1])
            except BaseException:  # Ctrl-C while reading: the other process ended too
                facts[1].close()
                self.cancel()
                raise
            # for the work made here if the other process dies: what is still held
            options = {**options, "facts": functools.partial(self._feed.kept, view)}
        self._here = _Here(view, override, options)

    def result(self) -> CallSide:
        try:
            status, value = self._recv.recv()
        except (EOFError, OSError):  # it died (killed, out of memory): made here instead
            status, value = "died", None
        finally:
            self._recv.close()
            self._proc.join()
            if self._feed is not None:
                self._feed.join()
        try:
            if status == "ok":
                view = self._here._args[0]
                self._here = None  # nor the facts kept for it
                for store, notes in zip(view.stores, value.damaged):
                    for note in notes:  # what its reads left out, said as this one's say it
                        store._damaged[note] = None
                return value
            if status == "error":
                raise value
            return self._here.result()
        finally:
            if self._feed is not None:
                self._feed.say_notes()
                self._feed.facts = None

    def cancel(self) -> None:
        """Not wanted after all (the report failed first): the process ended."""
        if self._proc.is_alive():
            self._proc.terminate()
        self._proc.join(_GRACE)
        if self._proc.is_alive():  # SIGTERM caught or ignored there: not waited on for ever
            self._proc.kill()
            self._proc.join()
        self._recv.close()
        if self._feed is not None:
            self._feed.join()
            self._feed.facts = None


class _FactFeed:
    """``view.fact_columns()`` read in this process and sent to the forked one by a thread
    (the pipe holds little: the write waits for the reader, without the GIL), then let go
    (the other takes them as they come). What the read left out is said after the forked
    process's notes, in the order one process says them. A read that fails sends nothing:
    the forked process then reads the facts itself."""

    def __init__(self, view: EpisodeView, send: Any) -> None:
        self._stores = view.stores
        before = [len(s._damaged) for s in view.stores]
        self.facts: FactColumns | None = None
        try:
            self.facts = view.fact_columns()
        except Exception:  # noqa: BLE001 - said where the other process reads them again
            pass
        self._notes = []
        for store, n in zip(view.stores, before):
            notes = list(store._damaged)[n:]
            for note in notes:
                del store._damaged[note]
            self._notes.append(notes)
        if self.facts is None:
            self._notes = []
            send.close()
            self._thread = None
            return
        self._thread = threading.Thread(target=self._send, args=(send,),
                                        daemon=True, name="sweepbench-report-facts")
        self._thread.start()

    def _send(self, send: Any) -> None:
        try:
            send.send(self.facts)
            self.facts = None  # theirs now
        except OSError:  # the other process ended: kept, for the work made here
            pass
        finally:
            send.close()

    def kept(self, view: EpisodeView) -> FactColumns:
        """The facts, if not sent yet; else read again."""
        facts = self.facts
        return view.fact_columns() if facts is None else facts

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def say_notes(self) -> None:
        for store, notes in zip(self._stores, self._notes):
            for note in notes:
                store._damaged[note] = None


def _child(view: EpisodeView, override: Mapping[str, Prices] | None,
           options: dict[str, Any], send: Any, facts: tuple[Any, Any] | None = None) -> None:
    from contextlib import ExitStack

    from sweepbench.store.readonly import ReadOnlyStore

    # a handler inherited from the first process (an event loop's, say) would only note it
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    arriving = None
    if facts is not None:
        facts_recv, sender = facts
        sender.close()  # its end here, or the read would never see the end of the pipe
        arriving = _Arriving(facts_recv)
    try:
        with ExitStack() as stack:  # never the parent's connections: SQLite's are not fork-safe
            stores = [stack.enter_context(ReadOnlyStore(s.path)) for s in view.stores]
            mine = view.on(stores)
            if arriving is not None:
                options = {**options, "facts": functools.partial(arriving.take, mine)}
            out: tuple[str, Any] = ("ok", call_side(mine, override, **options))
    except KeyboardInterrupt:
        return
    except Exception as exc:  # noqa: BLE001 - raised again in the parent
        out = ("error", exc)
    send.send(out)
    send.close()


class _Arriving:
    """The facts the first process sends, taken off the pipe by a thread as they come (so
    that the first can let them go while this one reads the calls)."""

    def __init__(self, recv: Any) -> None:
        self._facts: FactColumns | None = None
        self._thread = threading.Thread(target=self._receive, args=(recv,), daemon=True,
                                        name="sweepbench-report-facts")
        self._thread.start()

    def _receive(self, recv: Any) -> None:
        try:
            self._facts = recv.recv()
        except (EOFError, OSError):  # none sent
            pass
        finally:
            recv.close()

    def take(self, view: EpisodeView) -> FactColumns:
        """The facts sent; read here (on ``view``) when none were."""
        self._thread.join()
        facts, self._facts = self._facts, None
        return view.fact_columns() if facts is None else facts


def start(view: EpisodeView, override: Mapping[str, Prices] | None, *, profile: bool,
          transcripts: bool = False, codes: RowCodes | None = None) -> _Here | _Apart:
    """The call side of ``view``'s report, begun: ``.result()`` gives it. In a second
    process for ``APART_FROM`` rows or more on a system with ``fork``; here otherwise.
    ``codes``: the rows' (made here when not given)."""
    # made here, so that a second process never reads (and so copies) the rows
    options: dict[str, Any] = {"profile": profile, "transcripts": transcripts,
                               "codes": RowCodes.of(view.rows) if codes is None else codes}
    if (len(view.rows) >= APART_FROM and sys.platform == "linux"
            and "fork" in multiprocessing.get_all_start_methods()):
        try:
            return _Apart(view, override, options)
        except OSError:  # no process to spare: made here
            pass
    return _Here(view, override, options)
