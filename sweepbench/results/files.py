"""Output files (reports, exports, logs) written whole or not at all, with a clear error.

A file is written to a temporary sibling and renamed into place, so a full disk or an
interrupt never leaves a truncated file; missing folders are created. A path that exists and
is not a regular file (``/dev/stdout``, a FIFO) is written in place: renaming onto it would
replace the device with a file. Any OS error (no space, not a directory, permission) becomes a
ConfigError naming the path, printed as one line by the command.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from sweepbench.errors import ConfigError

__all__ = ["replace_file", "replace_text"]

T = TypeVar("T")


def replace_file(path: str | Path, write: Callable[[Path], T], *, suffix: str = "") -> T:
    """``write(target)`` writes the file at ``target``; it ends up at ``path`` whole.
    ``suffix`` ends the temporary name (for writers that choose a format by extension)."""
    path = Path(path)
    try:
        if path.exists() and not path.is_file():
            if path.is_dir():
                raise ConfigError(f"cannot write {path}: it is a directory")
            return write(path)
        _make_parent(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp{suffix}")
        try:
            result = write(tmp)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return result
    except OSError as e:
        raise ConfigError(f"cannot write {path}: {e.strerror or e}") from None


def replace_text(path: str | Path, write: Callable[[IO[str]], T]) -> T:
    """``write(f)`` writes UTF-8 text (no newline translation) to the file object ``f``; the
    temporary file is synced before it is renamed into place."""
    def to(target: Path) -> T:
        with open(target, "w", encoding="utf-8", newline="") as f:
            result = write(f)
            f.flush()
            if target.is_file():
                os.fsync(f.fileno())
        return result
    return replace_file(path, to)


def _make_parent(path: Path) -> None:
    parent = path.parent
    for p in (parent, *parent.parents):
        if p.exists():
            if not p.is_dir():
                raise ConfigError(f"cannot write {path}: {p} is not a directory")
            break
    parent.mkdir(parents=True, exist_ok=True)

