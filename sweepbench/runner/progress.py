"""Live progress of a sweep on stderr: episodes, and per endpoint calls, latency, tokens, cost.

The sweep calls ``update(kind, **info)``: "planned" (total, skipped), "started", "finished"
(record), "call" (endpoint, result) for every live model call, where ``result`` is the call's
``CallResult`` or the ``ModelError`` it failed with, and optionally "clients" (name -> model
client) so the display can ask each endpoint how it is doing right now (``client.health()``:
breaker state, latest failed request), and "slots" (the sweep's
:class:`~sweepbench.runner.slots.Slots`) so the summary can say how many episodes in flight
sleep before a retry with their slot lent to another (``lend_slots``), and "workers" (on Ray:
a callable giving each worker's episodes, calls and calls per second) for a line of them, and
"round" (round, more, why) from an adaptive sweep (:mod:`sweepbench.runner.rounds`) before
each round and when it stops: each round is a sweep of its own with its own "planned", whose
new episodes are added to the totals (never reset), and the line says the round and that
more may follow, so the count does not reach "all done" once a round. Updating only counts. In
a terminal the display redraws a few times a second; otherwise (CI logs, nohup) a background
thread prints a plain line every ``log_every_s`` seconds whether or not anything happened, so a
stalled sweep is visible as one: per endpoint the seconds per call, the time since its last
completed call, and, for an endpoint whose breaker is open or whose recent calls all failed,
its latest error. A model with several ways in (replicas, keys: :mod:`sweepbench.client.fleet`)
gets a row per way: requests in flight now, calls, seconds per call, cached share, failed
requests and whether it is drained. Hung requests (abandoned for want of a first byte) and hedged ones (a second
copy sent; "won" when the copy answered first) are counted per endpoint and in the summary
line, so an ETA that jumps has a visible reason (:mod:`sweepbench.client.stalls`). Names and
errors print literally, control characters escaped (:mod:`sweepbench.results.text`)."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from sweepbench.ids import FAILED_TERMINATIONS
from sweepbench.results.text import literal, visible

__all__ = ["ProgressDisplay"]

_RECENT = 5  # calls that decide whether an endpoint "keeps failing"
_MAX_ERROR = 160


@dataclass
class _Endpoint:
    calls: int = 0
    failed_calls: int = 0
    prompt: int = 0
    cached: int = 0
    completion: int = 0
    reasoning: int = 0
    retries: int = 0
    rate_limited: int = 0
    hung: int = 0  # requests abandoned with no first byte (TTFB budget)
    hedged: int = 0  # second copies sent
    hedge_wins: int = 0  # answers that came from the copy
    cost: float = 0.0
    latency: float = 0.0  # summed latency_s of successful calls
    last_done: float | None = None  # clock time of the last completed call (either outcome)
    last_error: str | None = None
    recent: deque[bool] = field(default_factory=lambda: deque(maxlen=_RECENT))  # ok?
    replicas: dict[str, _Replica] = field(default_factory=dict)  # a fleet's ways in


@dataclass
class _Replica:
    """One way in to a model with several (a replica or key): what it answered."""

    calls: int = 0
    latency: float = 0.0
    prompt: int = 0
    cached: int = 0
    errors: int = 0  # failed requests sent to it


class ProgressDisplay:
    """``clock`` (default ``time.monotonic``) is injectable for tests."""

    def __init__(self, console: Console, *, enabled: bool = True,
                 prices: dict[str, Any] | None = None, log_every_s: float = 15.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.enabled = enabled
        self.live = enabled and console.is_terminal
        self.prices = prices or {}
        self.log_every_s = log_every_s
        self.clock = clock
        self.total = self.skipped = self.started = self.done = self.failed = 0
        self.round: int | None = None  # an adaptive sweep's round (batches after the first)
        self.more = False  # more rounds may follow this one
        self.why = ""  # why the adaptive sweep stopped, once it has
        self._selection = -1  # episodes of the round planned last (-1: none yet)
        self.endpoints: dict[str, _Endpoint] = {}
        self.clients: dict[str, Any] = {}
        self.slots: Any = None  # the sweep's Slots, while it runs
        self.workers: Callable[[], dict[str, dict[str, Any]]] | None = None  # on Ray: rates
        self.t0 = self._last_log = clock()
        self._live: Live | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> "ProgressDisplay":
        if self.live:
            self._live = Live(console=self.console, refresh_per_second=4, transient=False,
                              get_renderable=self._render)
            self._live.__enter__()
        elif self.enabled and self.log_every_s > 0:
            self._ticker = threading.Thread(target=self._tick_forever, name="progress",
                                            daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
        if self._live is not None:
            self._live.__exit__(*exc)

    def _tick_forever(self) -> None:
        while not self._stop.wait(min(1.0, self.log_every_s / 4)):
            self.tick()

    def tick(self) -> bool:
        """Print the plain line if ``log_every_s`` passed since the last one; True if printed."""
        with self._lock:
            now = self.clock()
            if not self.enabled or self.live or now - self._last_log < self.log_every_s:
                return False
            self._last_log = now
            line = self._line(now)
        self.console.print(line, markup=False, highlight=False)
        return True

    def update(self, kind: str, **info: Any) -> None:
        with self._lock:  # the ticker thread reads these
            if kind == "planned":
                self._planned(info["total"], info["skipped"])
            elif kind == "round":
                self.round, self.more = info["round"], info["more"]
                self.why = info.get("why") or ""
            elif kind == "started":
                self.started += 1
            elif kind == "finished":
                self.done += 1
                record = info.get("record")
                self.failed += record is not None and record.termination in FAILED_TERMINATIONS
            elif kind == "call":
                self._count(info["endpoint"], info["result"])
            elif kind == "clients":
                self.clients = dict(info["clients"])
            elif kind == "slots":
                self.slots = info["slots"]
            elif kind == "workers":
                self.workers = info["workers"]
        self.tick()

    def _planned(self, todo: int, stored: int) -> None:
        """A sweep's plan: ``todo`` episodes to run, ``stored`` already finished. A later
        round of an adaptive sweep selects the rounds before it again (now stored) and new
        trials: those new ones to run join the total, those new ones already on record the
        stored count, and the clock runs on."""
        if self.round is not None and self._selection >= 0:
            self.total += todo
            self.skipped += max(0, stored - self._selection)
        else:
            self.total, self.skipped = todo, stored
            self.t0 = self._last_log = self.clock()
        self._selection = todo + stored

    def _count(self, endpoint: str, result: Any) -> None:
        e = self.endpoints.setdefault(endpoint, _Endpoint())
        e.last_done = self.clock()
        failures = getattr(result, "failures", None) or []
        for failure in failures:
            if getattr(failure, "replica", ""):
                e.replicas.setdefault(failure.replica, _Replica()).errors += 1
        e.hung += getattr(result, "hung", 0) or 0
        e.hedged += getattr(result, "hedged", 0) or 0
        e.hedge_wins += bool(getattr(result, "hedge_won", False))
        if isinstance(result, BaseException):  # the call failed for good
            e.failed_calls += 1
            e.retries += max(0, getattr(result, "attempts", 1) - 1)
            e.last_error = str(result)
            e.recent.append(False)
            return
        usage = result.usage
        e.calls += 1
        e.recent.append(True)
        e.latency += getattr(result, "latency_s", 0.0) or 0.0
        e.prompt += usage.prompt_tokens
        e.cached += usage.cached_prompt_tokens
        e.completion += usage.completion_tokens
        e.reasoning += getattr(usage, "reasoning_tokens", 0)
        e.retries += max(0, getattr(result, "attempts", 1) - 1)
        e.rate_limited += getattr(result, "rate_limited", 0)
        if getattr(result, "replica", ""):
            r = e.replicas.setdefault(result.replica, _Replica())
            r.calls += 1
            r.latency += result.latency_s
            r.prompt += usage.prompt_tokens
            r.cached += usage.cached_prompt_tokens
        if failures:
            last = failures[-1]
            e.last_error = getattr(last, "message", None) or str(last)
        p = self.prices.get(endpoint)
        if p is not None:  # completion_tokens include reasoning tokens: priced once
            for u in (usage, getattr(result, "hedge_usage", None)):  # + hedges billed
                if u is not None:
                    e.cost += ((u.prompt_tokens - u.cached_prompt_tokens) * p.price_input_per_mtok
                               + u.cached_prompt_tokens * p.price_cached_input_per_mtok
                               + u.completion_tokens * p.price_output_per_mtok) / 1e6

    # -- rendering ------------------------------------------------------------------------

    def _trouble(self, name: str, e: _Endpoint | None) -> str | None:
        """Why ``name`` looks unwell now (breaker open, recent calls all failed), or None."""
        health = None
        client = self.clients.get(name)
        if client is not None and hasattr(client, "health"):
            health = client.health()
        last = (health or {}).get("last_failure") or (e.last_error if e else None)
        if health is not None and health.get("breaker") in ("open", "half_open"):
            state = health["breaker"].replace("_", "-")
            return f"breaker {state}{_breaker_wait(health)}; latest error: {_short(last)}"
        if e is not None and e.recent and not any(e.recent):
            return f"last {len(e.recent)} calls failed; latest error: {_short(last)}"
        if health is not None and health.get("failing", 0) >= 2:
            return f"{health['failing']} requests failed in a row; latest: {_short(last)}"
        return None

    def _endpoint_bits(self, now: float) -> list[str]:
        out = []
        for name in sorted(set(self.endpoints) | set(self.clients)):
            e = self.endpoints.get(name)
            bits = [visible(name, one_line=True)]
            if e is not None and e.calls:
                bits.append(f"{e.calls:,} calls, {e.latency / e.calls:,.1f} s/call")
            if e is not None and e.failed_calls:
                bits.append(f"{e.failed_calls:,} failed")
            if e is not None and (e.hung or e.hedged):
                bits.append(_stalls(e))
            since = now - e.last_done if e is not None and e.last_done is not None else None
            bits.append("no call done yet" if since is None else f"last done {since:,.0f}s ago")
            trouble = self._trouble(name, e)
            if trouble:
                bits.append(trouble)
            out.append(" ".join(bits[:1]) + ": " + ", ".join(bits[1:]))
            out.extend(f"{visible(name, one_line=True)} via {visible(label, one_line=True)}: "
                       + ", ".join(cells) for label, cells in self._replica_rows(name, e))
        return out

    def _replica_rows(self, name: str, e: _Endpoint | None) -> list[tuple[str, list[str]]]:
        """Per way in of a fleet: in flight now, calls, s/call, cached share, errors, and
        whether it is drained (the client's ``replicas()`` for what is live)."""
        client = self.clients.get(name)
        live = {r["replica"]: r for r in (client.replicas() if hasattr(client, "replicas")
                                          else [])}
        seen = e.replicas if e is not None else {}
        rows = []
        for label in sorted(set(live) | set(seen)):
            r, now = seen.get(label) or _Replica(), live.get(label) or {}
            rows.append((label, [
                f"{now.get('in_flight', 0):,} in flight", f"{r.calls:,} calls",
                f"{r.latency / r.calls:,.2f} s/call" if r.calls else "- s/call",
                f"{r.cached / r.prompt:.0%} cached" if r.prompt else "- cached",
                f"{r.errors:,} errors", "drained" if now.get("drained") else "up"]))
        return rows

    def _summary(self, now: float | None = None) -> Text:
        now = self.clock() if now is None else now
        elapsed = max(now - self.t0, 1e-9)
        rate = self.done / elapsed
        left = self.total - self.done
        eta = f"{left / rate:,.0f}s" if rate > 0 and left else "-"
        calls = sum(e.calls for e in self.endpoints.values())
        cost = sum(e.cost for e in self.endpoints.values())
        hung = sum(e.hung for e in self.endpoints.values())
        hedged = sum(e.hedged for e in self.endpoints.values())
        stalls = (f" · {hung:,} hung requests abandoned · {hedged:,} hedged"
                  if hung or hedged else "")
        per_s = calls / elapsed
        speed = (f"{per_s:,.1f} model calls/s" if per_s >= 1 or not calls
                 else f"{per_s * 60:,.1f} model calls/min")  # a slow endpoint is not "0.0/s"
        asleep = getattr(self.slots, "asleep", 0)
        lent = f" ({asleep:,} asleep, slot lent)" if asleep else ""
        return Text(
            f"{self._episodes()} · {self.started - self.done:,} in flight{lent} · "
            f"{self.failed:,} failed · {self.skipped:,} already stored · "
            f"{speed}{stalls} · ${cost:,.4f} · {elapsed:,.0f}s · ETA {eta}"
            f"{' of those planned' if self.more and eta != '-' else ''}")

    def _episodes(self) -> str:
        """Episodes done of those planned; in an adaptive sweep, its round and whether more
        may follow (the total then is what is planned so far, not the end)."""
        if self.round is None:
            return f"episodes {self.done:,}/{self.total:,} done"
        stage = "first trials" if self.round == 0 else f"round {self.round}"
        if self.more:
            return (f"adaptive sweep, {stage} · episodes {self.done:,} done of {self.total:,} "
                    "planned so far, more rounds may follow")
        return (f"adaptive sweep stopped after {stage}: {self.why} · episodes "
                f"{self.done:,}/{self.total:,} done")

    def _line(self, now: float) -> Text:
        """The plain (no terminal) line: the summary, then one clause per endpoint."""
        text = self._summary(now)
        for bit in self._endpoint_bits(now):
            text.append(" | " + bit)
        workers = self._workers()
        if workers is not None:
            text.append(" | " + workers.plain)
        return text

    def _workers(self) -> Text | None:
        """On Ray (``--workers``): each worker's episodes, calls and calls per second."""
        if self.workers is None:
            return None
        bits = [f"{name} {w['episodes']:,} ep {w['calls_per_s']:,.0f} calls/s"
                + ("" if w["alive"] else " (dead)")
                for name, w in sorted(self.workers().items())]
        return Text("workers: " + ", ".join(bits))

    def _render(self) -> Group:
        now = self.clock()
        elapsed = max(now - self.t0, 1e-9)
        table = Table(box=None, pad_edge=False)
        keep = [i for i, name in enumerate(_COLUMNS)
                if self.console.width >= _WIDE or name not in _WIDE_ONLY]
        for i in keep:
            name = _COLUMNS[i]
            table.add_column(name, justify="left" if name in ("endpoint", "status") else "right")
        for name in sorted(set(self.endpoints) | set(self.clients)):
            e = self.endpoints.get(name) or _Endpoint()
            share = lambda n: f"{n / e.calls:.1%}" if e.calls else "-"  # noqa: E731
            since = f"{now - e.last_done:,.0f}s ago" if e.last_done is not None else "-"
            row = (
                literal(name, one_line=True), f"{e.calls:,}", f"{e.latency / e.calls:,.1f}" if e.calls else "-",
                since, f"{(e.prompt + e.completion) / elapsed:,.0f}",
                f"{e.cached / e.prompt:.0%}" if e.prompt else "-",
                f"{e.reasoning / e.completion:.0%}" if e.completion else "-",
                share(e.rate_limited), share(e.retries), f"{e.hung:,}",
                f"{e.hedged:,} ({e.hedge_wins:,} won)" if e.hedged else "0", f"{e.cost:,.4f}",
                literal(self._trouble(name, e) or "ok"))
            table.add_row(*(row[i] for i in keep))
            for label, cells in self._replica_rows(name, e):
                inflight, calls, per_call, cached, errors, state = cells
                sub = (literal("  via " + label, one_line=True), calls.split()[0],
                       per_call.split()[0], "", "", cached.split()[0], "", "", "", "", "", "",
                       literal(f"{inflight}, {errors}, {state}"))
                table.add_row(*(sub[i] for i in keep))
        workers = self._workers()
        return Group(self._summary(now), table, *([workers] if workers is not None else []))


_COLUMNS = ("endpoint", "calls", "s/call", "last done", "tokens/s", "cached", "reasoning",
            "429s", "retries", "hung", "hedged", "$", "status")
_WIDE = 120
"""Below this many columns the table leaves out ``_WIDE_ONLY``: on an 80-column terminal all
13 columns would be cut to a letter or two each ("endp…", "cal…") and none could be read."""
_WIDE_ONLY = frozenset({"last done", "tokens/s", "cached", "reasoning", "hedged"})


def _stalls(e: _Endpoint) -> str:
    return (f"{e.hung:,} hung (abandoned, no first byte), {e.hedged:,} hedged "
            f"({e.hedge_wins:,} won by the copy)")


def _breaker_wait(health: dict[str, Any]) -> str:
    """What an open breaker waits for and when its waiting calls give up, in words."""
    if "open_for_s" not in health:
        return ""
    probe = health["probe_in_s"]
    waits = (f"next probe in {probe:,.0f}s" if health["breaker"] == "open" and probe > 0
             else "a probe in flight")
    max_wait = health["max_wait_s"]
    gives = ("waiting calls wait until it answers (no breaker_max_wait_s)" if max_wait is None
             else f"waiting calls fail after {max_wait:,.0f}s (breaker_max_wait_s), the first "
                  f"in {health['gives_up_in_s']:,.0f}s")
    return (f" for {health['open_for_s']:,.0f}s, waiting for the endpoint to answer a probe "
            f"({waits}); {gives}")


def _short(text: str | None) -> str:
    if not text:
        return "-"
    text = visible(" ".join(text.split()), one_line=True)
    return text if len(text) <= _MAX_ERROR else text[:_MAX_ERROR - 3] + "..."
