"""VitaBench (life services: delivery, in-store, online travel) as one benchmark package."""

from sweepbench.benchmarks.vitabench.benchmark import VitaBench

BENCHMARK = VitaBench()

__all__ = ["BENCHMARK", "VitaBench"]
