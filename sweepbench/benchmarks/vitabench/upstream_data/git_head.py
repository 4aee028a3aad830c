"""The commit a work tree is at, read from its ``.git`` files without running git.

Running ``git`` in a directory someone handed us would run that repository's configuration
(``core.fsmonitor`` and the like); reading a few small files runs nothing. Handled: a clone
(``.git/``), a linked work tree or submodule (a ``.git`` file naming its git dir, which names
the shared one in ``commondir``), a detached HEAD, loose and packed refs. Anything else
(reftable, a ref that resolves to nothing) is "unknown", never a guess.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["head_commit", "is_bare_repository"]

_HASH = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_MAX_SYMREF_DEPTH = 5  # git's own limit for a ref pointing at a ref


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _git_dir(work_tree: Path) -> Path | None:
    dot = work_tree / ".git"
    if dot.is_dir():
        return dot
    text = _read(dot) if dot.is_file() else None
    if text is None or not text.startswith("gitdir:"):
        return None
    target = (work_tree / text.removeprefix("gitdir:").strip()).resolve()
    return target if target.is_dir() else None


def _common_dir(git_dir: Path) -> Path:
    text = _read(git_dir / "commondir")
    return (git_dir / text).resolve() if text else git_dir


def _packed(common: Path, ref: str) -> str | None:
    text = _read(common / "packed-refs") or ""
    for line in text.splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and _HASH.fullmatch(sha):
            return sha
    return None


def _resolve(git_dir: Path, common: Path, ref: str) -> str | None:
    if not ref.startswith("refs/") or ".." in ref.split("/"):
        return None
    for root in (git_dir, common):
        text = _read(root / ref)
        if text:
            return text
    return _packed(common, ref)


def head_commit(work_tree: Path) -> str | None:
    """The full hash HEAD names in ``work_tree``'s ``.git``, or None when it cannot be told."""
    git_dir = _git_dir(work_tree)
    if git_dir is None:
        return None
    common = _common_dir(git_dir)
    head = _read(git_dir / "HEAD")
    for _ in range(_MAX_SYMREF_DEPTH):
        if head is None:
            return None
        if _HASH.fullmatch(head):
            return head
        if not head.startswith("ref:"):
            return None
        head = _resolve(git_dir, common, head.removeprefix("ref:").strip())
    return None


def is_bare_repository(path: Path) -> bool:
    """A git dir without a work tree (what ``git clone --bare`` makes): no files to read."""
    return ((path / "HEAD").is_file() and (path / "objects").is_dir()
            and (path / "refs").is_dir() and not (path / ".git").exists())
