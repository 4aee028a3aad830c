"""sweepbench: run interactive tool-use agent benchmarks at scale."""

__version__ = "0.1.0"
