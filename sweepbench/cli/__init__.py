"""The ``sweepbench`` command.

``sweepbench run`` with no arguments is the embedded default: the built-in reference server on
loopback, scripted oracle and noisy agents on the project's own sample tasks, 4 trials, judged
by the deterministic state check, a leaderboard at the end. No network, no API key.

A module per command group (``run``, ``results``, ``tools``, ``serve``), the parser beside
them (``parser``), what they share (``common``) and the entry point (``app.main``).
Re-exported here: ``main``, the parser and the exit statuses.
"""

from sweepbench.cli.common import (BUDGET_EXIT, ERRORS_EXIT, FAILING_EXIT, STUCK_EXIT,
                                   UNDECIDED_EXIT)
from sweepbench.cli.app import main
from sweepbench.cli.parser import build_parser

__all__ = ["BUDGET_EXIT", "ERRORS_EXIT", "FAILING_EXIT", "STUCK_EXIT", "UNDECIDED_EXIT",
           "build_parser", "main"]
