"""T1-Bench (11 US travel and hospitality domains) as one benchmark package."""

from sweepbench.benchmarks.t1.benchmark import T1

BENCHMARK = T1()

__all__ = ["BENCHMARK", "T1"]
