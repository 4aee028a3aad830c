"""The ``sweepbench`` console script: the CLI, with a Ctrl-C during its imports handled.

Importing the CLI's modules takes a tenth of a second; a Ctrl-C then would end in a
traceback from somewhere in the import machinery. Here it ends like one a moment later: one
line and exit status 130.
"""

from __future__ import annotations

import sys


def main() -> int:
    try:
        from sweepbench.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    return cli_main()
