"""A worker's store: the write methods the episode runner calls on a
:class:`~sweepbench.store.runstore.RunStore`, buffering what they are given for the driver,
which writes it into the one real store.

Payloads are encoded to JSON here, on the worker (the driver's store takes JSON bytes as they
are, checking them), so the driver's core spends its time storing, not encoding. The journal
of an episode started before comes with its work item (``journals``): the runner reads it
through :meth:`events` as it would from the store, and continues the episode from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from sweepbench.ids import EPISODE_JOURNAL
from sweepbench.scaleout.messages import Event, Finished, Report

__all__ = ["ForwardingStore"]

_encode = msgspec.json.Encoder().encode


class ForwardingStore:
    """Buffers ``episode_started``, ``event`` and ``episode_finished``; ``take`` empties the
    buffer into a :class:`Report`. ``wake`` is called on the first write after a take."""

    path = ":forwarded:"

    def __init__(self, wake: Callable[[], None] = lambda: None,
                 judge: Callable[[Any, Any], Any] | None = None) -> None:
        self.journals: dict[str, list[dict[str, Any]]] = {}
        self.tasks: dict[str, Any] = {}  # key -> task of each episode being run here
        self._wake = wake
        self._judge = judge  # (task, record) -> the state check's judgment
        self._started: list[str] = []
        self._events: list[Event] = []
        self._finished: list[Finished] = []

    def episode_started(self, meta: Any, *, run_id: str) -> None:
        self._started.append(meta.key)
        self._wake()

    def event(self, episode_key: str, seq: int, kind: str, payload: dict, *,
              journal: str = EPISODE_JOURNAL, run_id: str | None = None,
              endpoint: str | None = None) -> None:
        self._events.append(Event(episode_key, seq, kind, _encode(payload), endpoint))
        self._wake()

    def episode_finished(self, episode_key: str, record: Any, *, run_id: str | None = None
                         ) -> None:
        task = self.tasks.pop(episode_key, None)
        self._finished.append(Finished(episode_key, _encode(record),
                                       self._state(task, record) if task is not None else None))
        self.journals.pop(episode_key, None)
        self._wake()

    def _state(self, task: Any, record: Any) -> bytes | None:
        """The state check of a finished episode, judged here: on the driver it was most of
        its CPU per call after storing (one driver serves every worker)."""
        if self._judge is None:
            return None
        try:
            return _encode(self._judge(task, record))
        except Exception:  # noqa: BLE001 - the driver judges it again and records the error
            return None

    def events(self, episode_key: str, *, kind: str | None = None) -> list[dict[str, Any]]:
        """The journal the driver sent with the episode (``model_call`` events only)."""
        return [{"payload": p} for p in self.journals.get(episode_key, [])]

    @property
    def calls_pending(self) -> int:
        return sum(e.kind == "model_call" for e in self._events)

    @property
    def pending(self) -> int:
        return len(self._started) + len(self._events) + len(self._finished)

    def take(self, report: Report) -> Report:
        report.started, self._started = self._started, []
        report.events, self._events = self._events, []
        report.finished, self._finished = self._finished, []
        return report
