"""What can go wrong building a VitaBench data dir from upstream's files, or trusting one later.

::

    DataDirError                the data dir (or the source it is built from) cannot be used
    ├── SourceError             a source file that is not what upstream's layout promises:
    │                           unparsable schema, non-JSON task file, not a checkout (names it)
    ├── ReleaseError            which release the files are cannot be told
    │   └── ReleaseMixError     files of different releases, or against the release named;
    │                           names every file and the release it points to
    └── ManifestError           a data dir that differs from its manifest.json (a changed,
                                missing or unlisted file; names each)

All are ``SweepbenchError``s, so the CLI prints them as one line. They belong in
``sweepbench/errors.py`` once the importer is wired in; they live here until then so this
work touches no shared file.
"""

from __future__ import annotations

from sweepbench.errors import SweepbenchError

__all__ = ["DataDirError", "ManifestError", "ReleaseError", "ReleaseMixError", "SourceError"]


class DataDirError(SweepbenchError):
    """A VitaBench data dir, or the upstream source it is built from, that cannot be used."""


class SourceError(DataDirError):
    """A source file that is not what upstream's layout promises; names the file and why."""


class ReleaseError(DataDirError):
    """The files say nothing about which release they are, and none was named."""


class ReleaseMixError(ReleaseError):
    """Files of different releases (or against the named one); names each and its release."""


class ManifestError(DataDirError):
    """A data dir whose files differ from its manifest; names every file that differs."""
