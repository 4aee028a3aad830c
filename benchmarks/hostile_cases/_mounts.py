"""Real read-only mounts and full disks for the store's attacks and tests, in a child process.

As root, file permissions stop nothing, so a folder is made read-only (or a small disk) by a
mount in a mount namespace of the child's own (``unshare -m``): the mount exists for that
process only and goes with it. Not root: a read-only folder is its files chmod 0444 and the
folder 0555; a small disk cannot be made (``None``: the caller skips).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_READ_ONLY = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'
_SMALL = ('T=$(mktemp -d) && cp -a "$0/." "$T" && mount -t tmpfs -o size={kb}k tmpfs "$0" '
          '&& cp -a "$T/." "$0" && rm -rf "$T" && exec "$@"')


def _namespaces() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True,
                          check=False).returncode == 0


def python(*args: str, folder: Path, read_only: bool = False, disk_kb: int | None = None,
           timeout: float = 60) -> subprocess.CompletedProcess | None:
    """Run ``python *args`` (this interpreter, sweepbench from this tree) with ``folder``
    read-only or on a disk of ``disk_kb`` KiB holding its files; None when this machine
    cannot."""
    cmd = [sys.executable, *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if _namespaces():
        script = _READ_ONLY if read_only else _SMALL.format(kb=disk_kb)
        cmd = ["unshare", "-m", "sh", "-c", script, str(folder), *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False,
                              timeout=timeout)
    if not read_only:
        return None
    modes = {p: p.stat().st_mode for p in [folder, *folder.iterdir()]}
    try:
        for p in modes:
            p.chmod(0o555 if p.is_dir() else 0o444)
        return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False,
                              timeout=timeout)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
