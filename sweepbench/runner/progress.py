"""Live progress of a sweep on stderr: episodes, and per endpoint calls, tokens, cost, 429s.

The sweep calls ``update(kind, **info)``: "planned" (total, skipped), "started", "finished"
(record) and "call" (endpoint, result) for every live model call. Updating only counts; the
display redraws a few times a second in a terminal, and prints a plain line every
``log_every_s`` seconds otherwise (CI logs, nohup), so long runs always show progress.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text


@dataclass
class _Endpoint:
    calls: int = 0
    prompt: int = 0
    cached: int = 0
    completion: int = 0
    retries: int = 0
    rate_limited: int = 0
    cost: float = 0.0


class ProgressDisplay:
    def __init__(self, console: Console, *, enabled: bool = True, prices: dict[str, Any] | None = None,
                 log_every_s: float = 15.0) -> None:
        self.console = console
        self.enabled = enabled
        self.live = enabled and console.is_terminal
        self.prices = prices or {}
        self.log_every_s = log_every_s
        self.total = self.skipped = self.started = self.done = self.failed = 0
        self.endpoints: dict[str, _Endpoint] = {}
        self.t0 = self._last_log = time.perf_counter()
        self._live: Live | None = None

    def __enter__(self) -> "ProgressDisplay":
        if self.live:
            self._live = Live(console=self.console, refresh_per_second=4, transient=False,
                              get_renderable=self._render)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)

    def update(self, kind: str, **info: Any) -> None:
        if kind == "planned":
            self.total, self.skipped = info["total"], info["skipped"]
            self.t0 = self._last_log = time.perf_counter()
        elif kind == "started":
            self.started += 1
        elif kind == "finished":
            self.done += 1
            record = info.get("record")
            self.failed += record is not None and record.termination == "error"
        elif kind == "call":
            self._count(info["endpoint"], info["result"])
        if self.enabled and not self.live and time.perf_counter() - self._last_log >= self.log_every_s:
            self._last_log = time.perf_counter()
            self.console.print(self._summary())

    def _count(self, endpoint: str, result: Any) -> None:
        e = self.endpoints.setdefault(endpoint, _Endpoint())
        usage = result.usage
        e.calls += 1
        e.prompt += usage.prompt_tokens
        e.cached += usage.cached_prompt_tokens
        e.completion += usage.completion_tokens
        e.retries += max(0, getattr(result, "attempts", 1) - 1)
        e.rate_limited += getattr(result, "rate_limited", 0)
        p = self.prices.get(endpoint)
        if p is not None:
            uncached = usage.prompt_tokens - usage.cached_prompt_tokens
            e.cost += (uncached * p.price_input_per_mtok + usage.cached_prompt_tokens
                       * p.price_cached_input_per_mtok + usage.completion_tokens
                       * p.price_output_per_mtok) / 1e6

    def _summary(self) -> Text:
        elapsed = max(time.perf_counter() - self.t0, 1e-9)
        rate = self.done / elapsed
        left = self.total - self.done
        eta = f"{left / rate:,.0f}s" if rate > 0 and left else "-"
        calls = sum(e.calls for e in self.endpoints.values())
        cost = sum(e.cost for e in self.endpoints.values())
        return Text(
            f"episodes {self.done:,}/{self.total:,} done · {self.started - self.done:,} in flight · "
            f"{self.failed:,} errors · {self.skipped:,} already stored · "
            f"{calls / elapsed:,.1f} model calls/s · ${cost:,.4f} · {elapsed:,.0f}s · ETA {eta}")

    def _render(self) -> Group:
        elapsed = max(time.perf_counter() - self.t0, 1e-9)
        table = Table(box=None, pad_edge=False)
        for name in ("endpoint", "calls", "calls/s", "tokens/s", "cached", "429s", "retries", "$"):
            table.add_column(name, justify="left" if name == "endpoint" else "right")
        for name, e in sorted(self.endpoints.items()):
            share = lambda n: f"{n / e.calls:.1%}" if e.calls else "-"  # noqa: E731
            table.add_row(name, f"{e.calls:,}", f"{e.calls / elapsed:,.1f}",
                          f"{(e.prompt + e.completion) / elapsed:,.0f}",
                          f"{e.cached / e.prompt:.0%}" if e.prompt else "-",
                          share(e.rate_limited), share(e.retries), f"{e.cost:,.4f}")
        return Group(self._summary(), table)
