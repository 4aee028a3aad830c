"""Where benchmark data lives: the ``--data-dir`` option, else ``$SWEEPBENCH_DATA``, else none."""

from __future__ import annotations

import os
from pathlib import Path

from sweepbench.errors import TaskError


def resolve_data_dir(data_dir: str | Path | None) -> Path | None:
    """The data dir from the option, else $SWEEPBENCH_DATA, else None (built-in samples)."""
    value = data_dir if data_dir not in (None, "") else os.environ.get("SWEEPBENCH_DATA")
    if not value:
        return None
    path = Path(value).expanduser().resolve()
    if not path.is_dir():
        raise TaskError(f"data dir {path} does not exist or is not a directory")
    return path
