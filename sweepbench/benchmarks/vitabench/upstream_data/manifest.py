"""What a VitaBench data dir holds and where it came from: its ``manifest.json``, and the check.

The importer writes the manifest beside the files it wrote: the upstream commit (when the source
was a git work tree), the release the files are and how that was told, a sha256 per file, and
what the source lacked. ``verify`` is what a run calls before trusting a data dir: a file that
was changed, removed, or added where sweepbench reads (a task file, an upstream template) since
the import is an error naming it, because the release the manifest states is then no longer
known to be the files'. Other files (a ``golden/`` folder, notes) are not its business.
"""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath

import msgspec
from msgspec import Struct, field

from sweepbench.benchmarks.vitabench.release import RELEASES
from sweepbench.errors import ManifestError

__all__ = ["FORMAT", "MANIFEST", "Manifest", "find_manifest", "read_manifest", "sha256_file",
           "verify", "write_manifest"]

MANIFEST = "manifest.json"
FORMAT = 1
_READ_BY_SWEEPBENCH = ("*/tasks*.json", "upstream/tool_descriptions.json",
                       "upstream/prompts/*.yaml")
"""Where sweepbench reads in a data dir: a file there that the manifest lacks is an error."""


class Manifest(Struct, kw_only=True):
    """A data dir's provenance and contents."""

    release: str
    """The release the files are (a key of ``RELEASES``)."""
    release_commit: str
    """That release's upstream commit (``Release.commit``)."""
    upstream_commit: str | None
    """The commit the source work tree was at (full hash), None when it was not a git tree."""
    matched_by: str
    """How the release was told: ``commit``, ``content`` or ``name`` (the user named it)."""
    source: str
    """``checkout`` (upstream's repository) or ``dataset`` (``<domain>/tasks*.json``)."""
    files: dict[str, str]
    """Path in the data dir (``/``-separated) -> sha256 of its bytes."""
    absent: list[str] = field(default_factory=list)
    """Paths the source could not give (large task files left out of a snapshot; the
    templates and tool descriptions, which a dataset release does not carry)."""
    evidence: list[str] = field(default_factory=list)
    """What each file said about the release."""
    format: int = FORMAT
    benchmark: str = "vitabench"


def sha256_file(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def write_manifest(folder: Path, manifest: Manifest) -> Path:
    path = folder / MANIFEST
    path.write_bytes(msgspec.json.format(msgspec.json.encode(manifest), indent=2) + b"\n")
    return path


def find_manifest(data_dir: Path) -> Path | None:
    """``<data_dir>/vitabench/manifest.json`` or ``<data_dir>/manifest.json`` (``data_dir``
    being the vitabench folder itself), whichever exists."""
    for path in (data_dir / "vitabench" / MANIFEST, data_dir / MANIFEST):
        if path.is_file():
            return path
    return None


def _safe(path: Path, rel: str) -> str:
    pure = PurePosixPath(rel)
    if not rel or "\\" in rel or pure.is_absolute() or ".." in pure.parts or "." in pure.parts:
        raise ManifestError(f"{path}: lists {rel!r}, which is not a path inside the data dir")
    return rel


def read_manifest(path: Path) -> Manifest:
    try:
        manifest = msgspec.json.decode(path.read_bytes(), type=Manifest)
    except OSError as exc:
        raise ManifestError(f"{path}: unreadable: {exc.strerror or exc}") from None
    except msgspec.DecodeError as exc:  # ValidationError too: it names the field
        raise ManifestError(f"{path}: not a sweepbench data-dir manifest: {exc}") from None
    if manifest.format != FORMAT:
        raise ManifestError(f"{path}: manifest format {manifest.format}; this sweepbench "
                            f"reads format {FORMAT}")
    known = RELEASES.get(manifest.release)
    if known is None or known.commit != manifest.release_commit:
        raise ManifestError(f"{path}: names release {manifest.release!r} at "
                            f"{manifest.release_commit!r}, which is not a VitaBench release "
                            f"this sweepbench knows ({', '.join(RELEASES)})")
    for rel in manifest.files:
        _safe(path, rel)
    return manifest


def verify(data_dir: Path) -> Manifest:
    """The manifest of ``data_dir`` once every file it lists is there with the bytes it lists
    and nothing sweepbench reads is unlisted; a ManifestError naming each file otherwise
    (and when there is no manifest)."""
    path = find_manifest(data_dir)
    if path is None:
        raise ManifestError(f"{data_dir}: no {MANIFEST} (a data dir made by `sweepbench data "
                            f"vitabench` has one)")
    manifest = read_manifest(path)
    folder = path.parent
    problems = []
    for rel, digest in sorted(manifest.files.items()):
        file = folder / rel
        if not file.is_file():
            problems.append(f"{rel} is missing")
        elif sha256_file(file) != digest:
            problems.append(f"{rel} has changed")
    listed = set(manifest.files)
    for pattern in _READ_BY_SWEEPBENCH:
        for file in sorted(folder.glob(pattern)):
            rel = file.relative_to(folder).as_posix()
            if file.is_file() and rel not in listed:
                problems.append(f"{rel} is not in it")
    if problems:
        raise ManifestError(f"{folder}: files differ from {MANIFEST} (release "
                            f"{manifest.release}): {'; '.join(problems)}; import the data "
                            f"again to use them")
    return manifest
