"""Whether a VitaBench data dir can give a release the bytes upstream sends.

Real task files (a data dir, not the built-in samples) are only worth running with upstream's
own prompt templates and tool descriptions beside them: without them every agent, user and
judge request differs from upstream's and the numbers cannot sit next to published ones. So
their absence is an error that names the command that builds them (``sweepbench data
vitabench``), unless the run asks for sweepbench's own prompts, which every report then says.

A data dir can also be of the other release: one with a manifest (made by ``sweepbench data``)
is checked against it, file by file, and its release must be the one run; one without (made
by hand) is checked by the one thing the releases' descriptions differ by, the three renamed
tools' names.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import orjson

from sweepbench.benchmarks.vitabench.judge_prompts import upstream_prompts_dir
from sweepbench.benchmarks.vitabench.release import RELEASES, Release, releases_naming
from sweepbench.benchmarks.vitabench.upstream_data.manifest import find_manifest, verify
from sweepbench.errors import TaskError

__all__ = ["OWN_PROMPTS", "check_release", "require_upstream"]

OWN_PROMPTS = "sweepbench's own prompts, not comparable with published VitaBench numbers"

_BUILD = "build it from upstream's files with `sweepbench data vitabench <upstream checkout>`"


def _root(data_dir: Path) -> Path:
    return data_dir / "vitabench" if (data_dir / "vitabench").is_dir() else data_dir


def require_upstream(data_dir: Path | None) -> None:
    """A TaskError when ``data_dir`` holds task files but not upstream's prompt templates and
    tool descriptions (None: the built-in samples, which have none by design)."""
    if data_dir is None:
        return
    root = _root(data_dir)
    missing = [what for what, present in (
        ("upstream/prompts/ (the prompt templates)", upstream_prompts_dir(data_dir) is not None),
        ("upstream/tool_descriptions.json", (root / "upstream" / "tool_descriptions.json").is_file()))
        if not present]
    if missing:
        raise TaskError(
            f"{root}: VitaBench task files without upstream's {' and '.join(missing)}: every "
            f"request would differ from upstream's; {_BUILD}, or run with --prompts own "
            f"({OWN_PROMPTS})")


@lru_cache(maxsize=16)
def _descriptions_release(path: Path, mtime_ns: int) -> frozenset[str]:
    """The releases whose tool names a hand-made descriptions file fits."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return frozenset(RELEASES)  # unreadable: the descriptions loader says so
    names: set[str] = set()
    if isinstance(data, dict):
        for domain in data.values():
            for entries in (domain.values() if isinstance(domain, dict) else ()):
                if isinstance(entries, dict):
                    names.update(entries)
    return frozenset(releases_naming(names))


def check_release(data_dir: Path | None, rules: Release, benchmark: str) -> None:
    """A TaskError when ``data_dir`` is of another release than ``rules``'s (or its files
    differ from its manifest)."""
    if data_dir is None:
        return
    root = _root(data_dir)
    manifest = find_manifest(data_dir)
    if manifest is not None:
        found = verify(root).release  # every file hashed: the catalog loads a spec once
        how = f"its {manifest.name}"
    else:
        path = root / "upstream" / "tool_descriptions.json"
        if not path.is_file():
            return
        fits = _descriptions_release(path, path.stat().st_mtime_ns)
        if rules.name in fits:
            return
        found = ", ".join(sorted(fits)) or "no release"
        how = "the tool names in upstream/tool_descriptions.json"
    if found != rules.name:
        raise TaskError(
            f"{root} holds VitaBench release {found} (by {how}), and {benchmark} was asked "
            f"for: run it with --release {found}, or point --data-dir at a data dir of "
            f"{rules.name} ({_BUILD.replace('<upstream checkout>', f'<checkout at {rules.commit}>')})")
