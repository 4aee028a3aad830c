"""Ray itself: the one-line error when it is not installed, starting a local cluster or joining
one, and the worker actors.

Data reaches the workers without copying by hand: work items (tasks included) travel with
each batch through Ray's object transfer; on a cluster joined with ``--ray``, the sweepbench
package goes with the job (``runtime_env`` ``py_modules``), and so does the data directory
(``working_dir``, unpacked on each node; a worker uses the driver's path where it exists on
its node, else that copy). The T1 knowledge base and templates are generated, not read: each
worker makes them from the seed as the single process does.
"""

from __future__ import annotations

import importlib.util
import os
import socket
from pathlib import Path
from typing import Any

from sweepbench.errors import ConfigError

__all__ = ["RAY_MISSING", "Cluster", "check_reachable", "local_cluster_environment", "require_ray"]

RAY_MISSING = ("--workers and --ray need Ray: pip install 'sweepbench[ray]' "
               "(or pip install ray)")


def require_ray() -> Any:
    """The ``ray`` module, or a ConfigError (exit 2) naming the pip command."""
    if importlib.util.find_spec("ray") is None:
        raise ConfigError(RAY_MISSING)
    import ray

    return ray


def check_reachable(address: str, *, timeout_s: float = 5.0) -> None:
    """A ConfigError (exit 2) when nothing accepts a connection at ``address``'s host and port
    (``host:port`` or ``ray://host:port``): ``ray.init`` would retry a dead address for
    minutes, logging, instead of failing. ``auto`` and ``local`` are Ray's to resolve."""
    hostport = address.removeprefix("ray://").rsplit("/", 1)[0]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)),
                                      timeout=timeout_s):
            pass
    except OSError as exc:
        raise ConfigError(f"no Ray cluster answers at {address} ({exc.strerror or exc}): "
                          "start one there with `ray start --head`, or drop --ray / "
                          "RAY_ADDRESS to run on a local cluster") from None


def local_cluster_environment() -> None:
    """Settings a cluster started here reads from the environment (a user's own win):

    - ``RAY_worker_niceness`` 0: Ray starts its workers at nice 15, below the driver and below
      anything else on the machine; the workers run the episodes, so on a shared machine they
      would get the CPU last and the sweep would crawl while the driver waited on them.
    - ``RAY_ENABLE_UV_RUN_RUNTIME_ENV`` 0: workers run in this interpreter's environment, not
      one that ``uv run`` would build for them.
    """
    os.environ.setdefault("RAY_worker_niceness", "0")
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")


class Cluster:
    """``with Cluster(workers=N, address=...) as cluster``: a local cluster of this machine's
    cores (``address`` None) or the cluster at ``address`` (``"auto"``, ``ray://...``, or
    ``host:port``; ``RAY_ADDRESS`` when ``address`` is None and it is set). Ray is shut down
    on exit if this started it."""

    def __init__(self, *, workers: int, address: str | None = None,
                 data_dir: str | Path | None = None) -> None:
        self.ray = require_ray()
        self.workers = max(1, workers)
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.data_dir = str(data_dir) if data_dir else None
        self._started = False

    def __enter__(self) -> Cluster:  # noqa: PYI034
        ray = self.ray
        if not ray.is_initialized():
            options: dict[str, Any] = {"log_to_driver": False, "logging_level": "ERROR",
                                       "include_dashboard": False}
            if self.address:
                check_reachable(self.address)
                options["address"] = self.address
                options["runtime_env"] = self.runtime_env()
            else:
                options["num_cpus"] = max(self.workers, os.cpu_count() or 1)
            local_cluster_environment()
            ray.init(**options)
            self._started = True
        # Ray builds its serialization context (importing pydantic, ~0.1 s of CPU) on first
        # use: here, with the cluster's start, rather than on the sweep's first report
        ray.put(None)
        return self

    def runtime_env(self) -> dict[str, Any]:
        """What a joined cluster's nodes need: this package, and the data directory."""
        package = Path(__file__).resolve().parents[1]  # sweepbench/
        env: dict[str, Any] = {"py_modules": [str(package)]}
        if self.data_dir and Path(self.data_dir).is_dir():
            env["working_dir"] = self.data_dir
        return env

    def cpus(self) -> int:
        """The cluster's CPUs (at least 1): ``--ray`` without ``--workers`` uses them all."""
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def describe(self) -> str:
        nodes = sum(1 for n in self.ray.nodes() if n.get("Alive"))
        where = f"the cluster at {self.address}" if self.address else "a local Ray cluster"
        return f"{where} ({nodes} node{'s' * (nodes != 1)}, {self.cpus()} CPUs)"

    def __exit__(self, *exc: object) -> None:
        if self._started:
            self.ray.shutdown()

    def start(self, n: int, **options: Any) -> list[Any]:
        """``n`` worker actors (:class:`~sweepbench.scaleout.worker.EpisodeWorker`), spread over
        the nodes; none restarts (a dead worker's episodes are given to the others)."""
        from sweepbench.scaleout.worker import EpisodeWorker

        # a CPU each where the cluster has them (so they spread over the nodes' cores), else
        # none: more workers than cores still start
        cpus = 1 if self.cpus() >= n else 0
        remote = self.ray.remote(EpisodeWorker).options(
            num_cpus=cpus, max_restarts=0, max_concurrency=64, scheduling_strategy="SPREAD")
        return [remote.remote(**options) for _ in range(n)]

    def kill(self, actors: list[Any]) -> None:
        for actor in actors:
            try:
                self.ray.kill(actor)
            except Exception as exc:  # noqa: BLE001 - already gone
                del exc

    @property
    def dead(self) -> tuple[type[BaseException], ...]:
        """The errors a call on a dead worker (or a lost node) raises."""
        ex = self.ray.exceptions
        return (ex.RayActorError, ex.ActorDiedError, ex.ActorUnavailableError,
                ex.NodeDiedError, ex.ObjectLostError, ex.WorkerCrashedError)
