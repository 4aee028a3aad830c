"""``python -m sweepbench.cli``: the same CLI as the console script."""

import sys

from sweepbench.cli import main

sys.exit(main())
