"""Which upstream release a set of VitaBench files is, told from the files themselves.

Each piece of evidence is a :class:`Signal`: a file, the releases it fits, and why.

- The work tree's commit, when HEAD is a release's commit (``Release.commit``).
- Tool names, in the schema sources and in the tools' code: the releases name three tools
  differently (``Release.tool_renames``). A file naming both spellings fits no release.
- A task file byte-identical to a release's own (by git blob id: upstream's trees name every
  file's blob, even where a snapshot lacks the file). Otherwise a fact of its content: delivery
  stores' products have a ``quantity`` in the updated release only (it was null before).

The release is the one every signal fits. None fits: a mix, refused naming every file and the
release it points to. Several fit (only files both releases share, such as the instore tasks):
the caller must name one. A named release is checked against every signal the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from msgspec import Struct

from sweepbench.benchmarks.vitabench.release import RELEASES, release
from sweepbench.errors import ReleaseError, ReleaseMixError

__all__ = ["RELEASE_TASK_FILES", "Decision", "Signal", "commit_signal", "decide", "git_blob_id",
           "names_signal", "task_file_signal"]

RELEASE_TASK_FILES: dict[str, dict[str, str]] = {
    "2025-11": {
        "cross_domain/tasks.json": "62484752dacff51d0b5cf261d489608e84f5e957",
        "cross_domain/tasks_en.json": "440ff4a5db00847122aae5b18690b93408473bd9",
        "delivery/tasks.json": "4b8f2843f2a37c00b65d66dfc3ce1d60ef1c7df1",
        "delivery/tasks_en.json": "803c6a28452d42da437254e35a93bbe63db968b2",
        "instore/tasks.json": "91f424f877c782b370f5b0889ca17c43f62bf1bb",
        "instore/tasks_en.json": "744adaabf2913ed6eb8dd319a44c0b4aecc581d6",
        "ota/tasks.json": "a819ccadef093f71befdab9127890291d7b012d3",
        "ota/tasks_en.json": "40bc7f98867e95921d7ae1e4ee995667caf99bf3",
    },
    "2025-12": {
        "cross_domain/tasks.json": "eb2db14ec3c05a055b9ea33ffa2a84c52e4700bf",
        "cross_domain/tasks_en.json": "ffae71d330c1395da8bc695e7972a7ae2790dc3d",
        "delivery/tasks.json": "79293079b4d65247fd15c0df080b1321b797c5f7",
        "delivery/tasks_en.json": "dbae57343538edf59cc7db3352b0f48c9c984f8c",
        "instore/tasks.json": "91f424f877c782b370f5b0889ca17c43f62bf1bb",
        "instore/tasks_en.json": "744adaabf2913ed6eb8dd319a44c0b4aecc581d6",
        "ota/tasks.json": "a75e28ddbae4e8f5d714218b34c1fb7e553b156b",
        "ota/tasks_en.json": "40bc7f98867e95921d7ae1e4ee995667caf99bf3",
    },
}
"""Release -> its task files (path in a data dir -> git blob id), from upstream's trees at the
release's commit (``git ls-tree``): identity only, none of the files' content."""

_STORE_QUANTITY = {"2025-11": False, "2025-12": True}
"""Release -> whether its delivery stores' products carry a quantity."""
_QUANTITY_FOLDER = "delivery"


class Signal(Struct, frozen=True):
    """One file's word on the release: the releases it fits and why."""

    file: str
    fits: frozenset[str]
    why: str

    def text(self) -> str:
        return f"{self.file} ({self.why})"


class Decision(Struct, frozen=True, kw_only=True):
    release: str
    matched_by: str
    """``"commit"`` (HEAD is the release's commit), ``"content"`` or ``"name"`` (the caller's)."""
    evidence: list[str]


def git_blob_id(data: bytes) -> str:
    """The id git gives a file with these bytes (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def commit_signal(commit: str | None) -> Signal | None:
    """HEAD's word: the release whose commit it is; None for any other commit."""
    fits = frozenset(r.name for r in RELEASES.values() if commit and commit.startswith(r.commit))
    return Signal(".git HEAD", fits, f"commit {commit[:7]}") if fits and commit else None


def names_signal(file: str, names: set[str]) -> Signal | None:
    """The releases whose spelling of every renamed tool ``names`` uses (and no other
    spelling of it); None when ``names`` has none of the renamed tools."""
    fits, seen = set(RELEASES), []
    for original in sorted({o for r in RELEASES.values() for o in r.tool_renames}):
        spelling = {r.name: r.tool_renames.get(original, original) for r in RELEASES.values()}
        present = set(spelling.values()) & names
        if present:
            seen += sorted(present)
            fits &= {r for r, name in spelling.items() if present == {name}}
    if not seen:
        return None
    return Signal(file, frozenset(fits), "names " + ", ".join(seen))


def _store_products(tasks: list[Any]) -> list[Any]:
    out = []
    for task in tasks:
        env = task.get("environment") if isinstance(task, dict) else None
        stores = env.get("stores") if isinstance(env, dict) else None
        for store in (stores.values() if isinstance(stores, dict) else stores or ()):
            products = store.get("products") if isinstance(store, dict) else None
            out += [p for p in products or () if isinstance(p, dict)]
    return out


def task_file_signal(file: str, key: str, data: bytes, tasks: list[Any]) -> Signal | None:
    """A task file's word (``file`` names it, ``key`` is its path in a data dir)."""
    blob = git_blob_id(data)
    same = frozenset(r for r, files in RELEASE_TASK_FILES.items() if files.get(key) == blob)
    if same:
        return Signal(file, same, f"the release's own {key}, git blob {blob[:7]}")
    if key.partition("/")[0] != _QUANTITY_FOLDER:
        return None
    products = _store_products(tasks)
    with_quantity = sum(p.get("quantity") is not None for p in products)
    if not products:
        return None
    if with_quantity in (0, len(products)):
        has = with_quantity == len(products)
        fits = frozenset(r for r, q in _STORE_QUANTITY.items() if q == has)
        return Signal(file, fits, f"store products {'with' if has else 'without'} a quantity")
    return Signal(file, frozenset(), f"{with_quantity} of {len(products)} store products "
                                     f"with a quantity")


def _grouped(signals: list[Signal]) -> str:
    parts = []
    for name in RELEASES:
        only = [s.text() for s in signals if s.fits == {name}]
        if only:
            parts.append(f"{name}: {', '.join(only)}")
    none = [s.text() for s in signals if not s.fits]
    if none:
        parts.append(f"no release: {', '.join(none)}")
    return "; ".join(parts)


def decide(source: str, signals: list[Signal], *, named: str | None = None,
           notes: Sequence[str] = ()) -> Decision:
    """The release every signal fits (or the named one, checked against them); ``notes`` are
    evidence lines that fit any release (kept in the manifest)."""
    evidence = [f"{s.file}: {s.why} -> {', '.join(sorted(s.fits)) or 'no release'}"
                for s in signals] + list(notes)
    if named is not None:
        name = release(named).name
        against = [s for s in signals if name not in s.fits]
        if against:
            raise ReleaseMixError(f"{source} is not VitaBench release {name}: "
                                  f"{_grouped(against)}")
        return Decision(release=name, matched_by="name", evidence=evidence)
    fits = set(RELEASES)
    for s in signals:
        fits &= s.fits
    if not fits:
        raise ReleaseMixError(f"{source}: files of different VitaBench releases: "
                              f"{_grouped(signals)}")
    if len(fits) > 1:
        told = "; ".join(evidence) or "no file tells"
        raise ReleaseError(f"{source}: these files fit VitaBench releases "
                           f"{' and '.join(sorted(fits))} alike ({told}); name the release")
    by = "commit" if any(s.file == ".git HEAD" for s in signals) else "content"
    return Decision(release=fits.pop(), matched_by=by, evidence=evidence)
