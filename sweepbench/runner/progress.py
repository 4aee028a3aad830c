"""Live progress of a sweep: done / in flight / failed, rate and ETA, on stderr.

The sweep calls ``update(kind, **info)`` with kind "planned", "started" or "finished"; the
display redraws at most a few times a second, so updating it costs nothing on the hot path.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.text import Text


class ProgressDisplay:
    def __init__(self, console: Console, *, enabled: bool = True) -> None:
        self.console = console
        self.enabled = enabled and console.is_terminal
        self.total = self.skipped = self.started = self.done = self.failed = self.passed = 0
        self.model_calls = 0
        self.t0 = time.perf_counter()
        self._live: Live | None = None

    def __enter__(self) -> "ProgressDisplay":
        if self.enabled:
            self._live = Live(self._render(), console=self.console, refresh_per_second=4,
                              transient=False, get_renderable=self._render)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)

    def update(self, kind: str, **info: Any) -> None:
        if kind == "planned":
            self.total, self.skipped = info["total"], info["skipped"]
            self.t0 = time.perf_counter()
        elif kind == "started":
            self.started += 1
        elif kind == "finished":
            self.done += 1
            record = info.get("record")
            if record is not None:
                self.failed += record.termination == "error"
                self.model_calls += record.agent_calls + record.user_calls

    def _render(self) -> Text:
        elapsed = max(time.perf_counter() - self.t0, 1e-9)
        rate = self.done / elapsed
        left = self.total - self.done
        eta = f"{left / rate:,.0f}s" if rate > 0 and left else "-"
        return Text(
            f"episodes {self.done:,}/{self.total:,} done · {self.started - self.done:,} in flight · "
            f"{self.failed:,} errors · {self.skipped:,} already stored · "
            f"{self.model_calls / elapsed:,.1f} model calls/s · {elapsed:,.0f}s elapsed · ETA {eta}"
        )
