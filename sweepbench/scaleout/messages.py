"""What the driver and a worker say to each other, one exchange at a time.

The driver calls a worker's ``exchange(Delivery)`` and gets a :class:`Report` back; the
worker returns as soon as it has something worth saying (journal events, a finished episode,
a bucket or cap running dry, its work list running low) or after a heartbeat. So every
message is a reply to the driver: workers hold no handle on it, and a worker that dies shows
as a failed call, nothing else.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["Call", "Delivery", "Event", "Finished", "Grant", "LimitsInfo", "Report", "Want"]


class LimitsInfo(msgspec.Struct, frozen=True):
    """An endpoint account's limits, as its config gives them (the ledger builds the
    account's buckets and cap from the first worker's report)."""

    max_concurrency: int
    min_concurrency: int = 1
    adaptive: bool = True
    rpm: float | None = None
    tpm: float | None = None
    headroom: float = 0.97


class Want(msgspec.Struct):
    """One account's limits as a worker sees them: what it would like (``requests`` /
    ``tokens``: bucket tokens; ``demand``: requests in flight or waiting for a slot), what it
    holds (``in_flight``), and the answers since its last report."""

    requests: float = 0.0
    tokens: float = 0.0
    demand: int = 0
    in_flight: int = 0
    successes: int = 0
    overload_ages: list[float] = []  # per clustered 429: seconds since its request was sent
    pause_s: float = 0.0  # a Retry-After this worker was told, still to run


class Grant(msgspec.Struct):
    """Capacity leased to a worker for one account: bucket tokens (``requests``, ``tokens``,
    added to what it holds), its in-flight cap now (``concurrency``), and a pause every worker
    keeps (``pause_s``, a Retry-After another worker was told)."""

    requests: float = 0.0
    tokens: float = 0.0
    concurrency: int = 0
    pause_s: float = 0.0


class Event(msgspec.Struct, array_like=True):
    """One journal step of an episode, its payload already JSON (encoded on the worker)."""

    key: str
    seq: int
    kind: str
    payload: bytes
    endpoint: str | None = None


class Finished(msgspec.Struct, array_like=True):
    """An episode that ended on a worker: its record as JSON, and the benchmark's state check
    of it as JSON (made there, where the episode's task and record already are; None when it
    raised or would not encode: the driver's judge pool then makes it, and records why)."""

    key: str
    record: bytes
    state: bytes | None = None


class Call(msgspec.Struct, array_like=True):
    """A live model call, for the progress display."""

    endpoint: str
    ok: bool
    prompt: int = 0
    cached: int = 0
    completion: int = 0
    latency_s: float = 0.0
    attempts: int = 1
    error: str | None = None


class Delivery(msgspec.Struct):
    """Driver -> worker: work to add to its list (``items``: WorkItems with, for an episode
    started before, its journal in ``journals``), leases, and whether the list is empty for
    good (``drained``: no more to ask for) or the sweep stops (``stop``)."""

    items: list[Any] = []
    journals: dict[str, list[dict[str, Any]]] = {}
    grants: dict[str, Grant] = {}
    drained: bool = False
    stop: bool = False


class Report(msgspec.Struct):
    """Worker -> driver: what happened since the last report."""

    started: list[str] = []
    events: list[Event] = []
    finished: list[Finished] = []
    calls: list[Call] = []
    wants: dict[str, Want] = {}
    limits: dict[str, LimitsInfo] = {}  # accounts seen for the first time
    room: int = 0  # work items it would take now
    running: int = 0  # episodes in flight
    idle: bool = False  # nothing running, nothing queued, drained: done
