"""VitaBench (life services: delivery, in-store, online travel) as one benchmark package."""

from sweepbench.benchmarks.vitabench.benchmark import VitaBench
from sweepbench.benchmarks.vitabench.release import CURRENT

BENCHMARK = VitaBench().with_release(CURRENT)
"""A bare ``vitabench``: the current release (the same object as ``vitabench@<current>``)."""

__all__ = ["BENCHMARK", "VitaBench"]
