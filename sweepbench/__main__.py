"""``python -m sweepbench``: the same CLI as the console script."""

import sys

from sweepbench.launch import main

sys.exit(main())
