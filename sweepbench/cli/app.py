"""``main``: the command line parsed, the command run, and every way it can end turned into
an exit status: a deliberate error is one line and status 2, an interrupted sweep says what
resumes it, a Ctrl-C or SIGTERM anywhere else is one line and 128 + the signal's number, and
a reader that went away (``| head``) ends any command quietly with 141, as ``cat`` does."""

from __future__ import annotations

import os
import signal
import sys

from sweepbench.cli.common import Terminated, err, say, say_error
from sweepbench.cli.parser import build_parser
from sweepbench.errors import Interrupted, SweepbenchError

_CONTINUES = frozenset({"run", "judge"})
"""Commands that journal into a run store, so that the same command run again continues."""


def main(argv: list[str] | None = None) -> int:
    try:
        status = _main(argv)
        sys.stdout.flush()  # here, not at exit, where a closed pipe is a warning and 120
        return status
    except BrokenPipeError:  # the reader went away: stop quietly, as `cat` does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = ["run"]
    args = build_parser().parse_args(argv)
    args.argv = argv
    if not getattr(args, "func", None):
        build_parser().print_help()
        return 2
    try:
        return args.func(args)
    except Interrupted as exc:  # SIGINT / SIGTERM during a sweep: it says what resumes
        say(err, str(exc))
        return exc.exit_status
    except SweepbenchError as exc:  # every deliberate error: one line, no traceback
        say_error(str(exc))
        return 2
    except KeyboardInterrupt as exc:
        # only a sweep or a judging continues where it stopped; a server, a viewer, a report
        # just stop
        hint = ("; re-run the same command to continue where it stopped"
                if args.command in _CONTINUES else "")
        say(err, f"interrupted{hint}")
        return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
