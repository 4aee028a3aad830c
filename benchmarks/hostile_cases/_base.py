"""The shape of one attack, shared by benchmarks/hostile.py and its case modules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Attack:
    """One attack: ``run(tmp)`` performs it in an empty directory and returns (got, held).

    A case module says ``from _base import Attack`` (the runner puts this directory on
    sys.path) and lists its attacks in ``ATTACKS``.
    """

    point: int  # the class it belongs to, as numbered in the reliability issue
    name: str
    expected: str
    run: Callable[[Path], tuple[str, bool]]
