"""Every error sweepbench raises on purpose, in one tree, so callers catch at the level they mean.

::

    SweepbenchError                 root; ``cli.main`` catches it once and prints one line
    ├── ConfigError                 a config file, option or endpoint that cannot be used
    ├── TaskError                   a task file or entry that cannot be used (names file, task)
    ├── DataDirError                a benchmark data dir, or the upstream files it is built
    │   │                           from, that cannot be used (names the file)
    │   ├── SourceError             an upstream file not as its layout promises (unparsable
    │   │                           schema, non-JSON task file, not a checkout)
    │   ├── ReleaseError            which upstream release the files are cannot be told
    │   │   └── ReleaseMixError     files of different releases, or against the one named
    │   └── ManifestError           a data dir that differs from its manifest.json
    ├── StoreError                  the run store cannot do what was asked (names the store)
    │   ├── ConfigMismatchError     begin_run for a stored run with another config
    │   └── OlderStoreError         a store of a schema that must be migrated (written) before
    │                               it is read; a reader then opens it to migrate it
    ├── ReportError                 a report that cannot be built from what is stored
    ├── ImportFormatError           a result file of another harness that cannot be read
    ├── ResumeMismatch              a journaled request differs from the one made now
    ├── StoreLocked                 another process holds the run store (names it and the pid)
    ├── PreflightError              an endpoint that cannot work (key unset, bad URL, refused)
    ├── Interrupted                 SIGINT / SIGTERM stopped a sweep; episodes resume next run
    ├── ToolError                   what a tool tells the model (never leaves an episode)
    └── ModelError                  a model call that produced no response
        ├── RetryableError          worth trying again; ``retry_after`` seconds or None
        │   ├── RateLimitError      429 (Retry-After honoured)
        │   ├── ServerError         408, 5xx (Retry-After honoured on 503)
        │   ├── TransportError      connection reset / closed mid-response
        │   │   ├── ConnectionRefused  nothing listens at the URL; not retried while the
        │   │   │                   endpoint has never answered (a server that is not running)
        │   │   └── RequestTimeout  connect or total timeout
        │   │       └── FirstByteTimeout  no response headers within the endpoint's
        │   │                       time-to-first-byte budget (a hung request)
        │   └── InvalidResponseError  2xx with a truncated, non-JSON or malformed body
        ├── EndpointUnavailableError  the endpoint's circuit breaker stayed open too long;
        │                           not retried (waiting was the retry)
        └── FatalError              retrying cannot help; raised at once
            ├── BadRequestError     400
            │   └── ContextLengthError  400 saying the prompt is too long
            ├── AuthenticationError 401, 403, or the key's environment variable is unset
            ├── NotFoundError       404 (unknown model or wrong base URL)
            └── QuotaExceededError  429 whose code is ``insufficient_quota`` (billing)

Anything else that escapes is a bug and surfaces as one (with a traceback). Third-party
errors are translated into this tree at one boundary each (``raise ... from``).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AuthenticationError", "BadRequestError", "ConfigError", "ConfigMismatchError",
    "ConnectionRefused", "ContextLengthError", "DataDirError", "EndpointUnavailableError",
    "FatalError", "FirstByteTimeout", "ManifestError", "ReleaseError", "ReleaseMixError",
    "SourceError",
    "ImportFormatError", "Interrupted", "OlderStoreError", "InvalidResponseError", "ModelError", "NotFoundError",
    "PreflightError", "QuotaExceededError", "RateLimitError", "ReportError", "RequestTimeout",
    "ResumeMismatch", "RetryableError", "ServerError", "StoreError", "StoreLocked",
    "SweepbenchError", "TaskError", "ToolError", "TransportError",
]


class SweepbenchError(Exception):
    """Root of every error sweepbench raises on purpose."""


class ConfigError(SweepbenchError):
    """A config file or option that cannot be used; the message says which and why."""


class TaskError(SweepbenchError):
    """A task file or task entry that cannot be used; the message names file and task."""


class DataDirError(SweepbenchError):
    """A benchmark data dir, or the upstream source it is built from, that cannot be used."""


class SourceError(DataDirError):
    """A source file that is not what upstream's layout promises; names the file and why."""


class ReleaseError(DataDirError):
    """The files say nothing about which release they are, and none was named."""


class ReleaseMixError(ReleaseError):
    """Files of different releases (or against the named one); names each and its release."""


class ManifestError(DataDirError):
    """A data dir whose files differ from its manifest (changed, missing, unlisted)."""


class StoreError(SweepbenchError):
    """The run store cannot do what was asked; the message says which store and why."""


class ConfigMismatchError(StoreError):
    """``begin_run`` for an existing run with a different config."""


class OlderStoreError(StoreError):
    """A store of a schema readers cannot read as it is: it must be migrated first."""


class ReportError(SweepbenchError):
    """A report that cannot be built (no such run, nothing judged by that judge, ...)."""


class ImportFormatError(SweepbenchError):
    """A result file of another harness that is not in the format expected."""


class ResumeMismatch(SweepbenchError):
    """A recorded model call whose request differs from the one the episode makes now."""


class StoreLocked(StoreError):
    """Another process holds the run store's lock (a sweep writing it); names store and pid."""


class PreflightError(ConfigError):
    """An endpoint that cannot work, found before any episode starts; names it and the fix."""


class Interrupted(SweepbenchError):
    """SIGINT or SIGTERM stopped a sweep. Episodes in flight stay ``running`` and continue
    from their journal on the next run; ``exit_status`` is 128 + the signal's number."""

    def __init__(self, signum: int, *, running: int = 0, not_started: int = 0) -> None:
        import signal

        name = signal.Signals(signum).name
        super().__init__(f"interrupted ({name}); {running} episodes were in flight and resume "
                         f"from their journal on the next run ({not_started} not started yet): "
                         "re-run the same command to continue")
        self.signum = signum
        self.exit_status = 128 + signum
        self.running = running
        self.not_started = not_started


class ToolError(SweepbenchError):
    """A tool refusing a call; its message is what the model reads as the tool's result."""


class ModelError(SweepbenchError):
    """A model call that did not produce a response."""

    def __init__(self, message: str, *, endpoint: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.status = status
        self.attempts = 1  # requests made for this call when the error left the client
        self.statuses: list[int] = []  # HTTP status of each request (0: no response)
        self.failures: list[Any] = []  # why each failed request failed (client.AttemptFailure)


class RetryableError(ModelError):
    def __init__(self, message: str, *, endpoint: str = "", status: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message, endpoint=endpoint, status=status)
        self.retry_after = retry_after
        """Seconds the server asked us to wait (Retry-After), if it said."""


class RateLimitError(RetryableError):
    pass


class ServerError(RetryableError):
    pass


class TransportError(RetryableError):
    pass


class ConnectionRefused(TransportError):
    pass


class RequestTimeout(TransportError):
    pass


class FirstByteTimeout(RequestTimeout):
    pass


class InvalidResponseError(RetryableError):
    pass


class EndpointUnavailableError(ModelError):
    """The circuit breaker stayed open past ``breaker_max_wait_s``: waiting was the retry."""


class FatalError(ModelError):
    pass


class BadRequestError(FatalError):
    pass


class ContextLengthError(BadRequestError):
    pass


class AuthenticationError(FatalError):
    pass


class NotFoundError(FatalError):
    pass


class QuotaExceededError(FatalError):
    pass
