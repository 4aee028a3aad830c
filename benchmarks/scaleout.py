"""Scale-out on Ray: what ``--workers 2`` buys over one process, and what it keeps.

Prints one JSON object last (medians over ``--runs``, each ratio measured within one run):

- ``speedup``: model calls/s of a sweep on 2 workers over the same sweep in one process,
  client-CPU-bound: the default benchmark set, C=512, every model call answered in the
  caller's process by the scripted policy itself (:class:`InProcess`, no sockets, no server
  process eating the cores the workers need). The driver's store writing is included.
  ``identical``: both stored the same episodes (termination and transcript of each).
- ``rpm_ratio`` / ``max_window_ratio`` / ``limited_share``: 2 workers against a reference
  server enforcing ``rpm`` R per model (429 above it), the endpoints configured with R: the
  rate over the run after a warm-up over R, the busiest 10-s window over R, and the share of
  requests answered 429. ``tpm_ratio`` and ``max_in_flight`` (over the cap) the same way.
- ``extra_requests_after_kill`` / ``in_flight_at_kill``: a worker SIGKILLed at a random point;
  the requests the server saw beyond an uninterrupted run's, and the episodes (each at most
  one call) in flight on the dead worker at its last report. ``kill_identical``: the stored
  episodes equal the uninterrupted run's.
- ``startup_s``: starting a local cluster and 2 workers, to their first report.

``--quick``: smaller sweeps. The machine's load is printed (``load``): on a shared machine the
speedup is a floor.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import functools
import hashlib
import json
import os
import random
import signal
import statistics
import tempfile
import threading
import time
from pathlib import Path

import msgspec
from aiohttp import web

from sweepbench.benchmarks.doubles import scripted_models, warm
from sweepbench.client.facade import ModelClient, limits_key
from sweepbench.config import load_config
from sweepbench.devserver.server import ReferenceServer, estimate_tokens
from sweepbench.runner import build
from sweepbench.runner.sweep import Sweep, install_uvloop
from sweepbench.scaleout.cluster import Cluster, local_cluster_environment
from sweepbench.scaleout.driver import Driver
from sweepbench.simulator.scripted.models import SCRIPTED_MODELS
from sweepbench.store.runstore import RunStore
from sweepbench.wire import ChatRequest

MODELS = ["scripted/oracle", "scripted/noisy:0.3"]


class InProcess:
    """A transport whose answers are the scripted policy's, computed in the caller: a canned
    reply that costs the machine next to nothing beyond the policy itself. ``specs``: the
    benchmarks whose tasks and gold plans the double loads now (:func:`warm`), not on its
    first requests: a worker process starts cold (0.27 s for the default set, generating
    T1's tasks among it), which no real endpoint would charge the harness; one process had
    its tasks loaded by its work list already."""

    def __init__(self, endpoint=None, specs: tuple[str, ...] = ()) -> None:
        self.resolve = scripted_models()
        for spec in specs:
            warm(spec)

    async def post(self, body: bytes, headers=None):
        req = msgspec.json.decode(body, type=ChatRequest)
        message = self.resolve(req.model)(req)
        digest = hashlib.blake2b(body, digest_size=16).digest()
        out, _ = ReferenceServer._answer(req, digest, message, estimate_tokens(len(body)), 0)
        return 200, {}, out

    async def aclose(self) -> None:
        return None


def _in_process_clients(ep, *, limits, cache=None):
    return ModelClient(ep, limits=limits.get(limits_key(ep), ep), transport=InProcess(ep))


def stored(path: Path, run_id: str) -> dict[str, bytes]:
    with RunStore(path) as store:
        return {f"{r.model}|{r.task_id}|{r.trial}": msgspec.json.encode(
            [r.termination, r.messages]) for r in store.episodes(run_id)}


def calls(path: Path, run_id: str) -> int:
    with RunStore(path) as store:
        return sum(r.agent_calls + r.user_calls for r in store.episodes(run_id))


# -- 1. all cores ------------------------------------------------------------------------------

def speedup(cluster: Cluster, trials: int, tmp: Path) -> dict:
    cfg = load_config(None, dict(models=MODELS, trials=trials, max_concurrency=512,
                                 endpoints=[{"name": m, "backups": 0, "hedge": False,
                                             "max_concurrency": 1 << 16}
                                            for m in [*MODELS, "scripted/user"]]))
    out = {}
    specs = tuple(cfg.benchmarks)
    for spec in specs:  # the doubles warm in both: here for the one process, in each worker
        warm(spec)
    real = build.client_for
    build.client_for = _in_process_clients  # judges (and the one process) answered in-process
    try:
        one = _timed(Sweep, cfg, tmp / "one.sqlite")
        two = _timed(Driver, cfg, tmp / "two.sqlite", cluster=cluster, workers=2,
                     transport=functools.partial(InProcess, specs=specs))
    finally:
        build.client_for = real
    n = calls(tmp / "one.sqlite", one["run_id"])
    out["calls"] = n
    # from the first episode's start to the end: the sweep, not the set-up before it (the
    # cluster's start is ``startup_s``); ``_wall`` counts from the call to run()
    out["one_calls_per_s"] = n / one["sweep_s"]
    out["two_calls_per_s"] = calls(tmp / "two.sqlite", two["run_id"]) / two["sweep_s"]
    out["speedup"] = out["two_calls_per_s"] / out["one_calls_per_s"]
    out["speedup_wall"] = one["wall_s"] / two["wall_s"]
    # where the CPU goes, per call: on a machine of its own, 2 cores run the driver and two
    # workers at once; the projection is what the busiest core would allow
    cpu = {"one": one["cpu_s"], "driver": two["cpu_s"],
           "workers": sum(w.cpu_s or 0.0 for w in two["sweep"].workers)}
    out.update({f"cpu_{k}_ms_per_call": 1000 * v / n for k, v in cpu.items()})
    busiest = max(two["cpu_s"], *(w.cpu_s or 0.0 for w in two["sweep"].workers),
                  (cpu["driver"] + cpu["workers"]) / 2)
    out["projected_speedup_2_cores"] = cpu["one"] / busiest
    out["worker_episodes"] = [w.episodes for w in two["sweep"].workers]
    out["worker_cpu_s"] = [round(w.cpu_s or 0.0, 3) for w in two["sweep"].workers]
    out["identical"] = (stored(tmp / "one.sqlite", one["run_id"])
                        == stored(tmp / "two.sqlite", two["run_id"]))
    return out


def _timed(kind, cfg, path: Path, **kw) -> dict:
    first: list[float] = []

    def progress(what, **info):
        if what == "started" and not first:
            first.append(time.perf_counter())

    with RunStore(path) as store:
        sweep = kind(cfg, store, check_endpoints=False, progress=progress, **kw)
        t0, c0 = time.perf_counter(), time.process_time()
        asyncio.run(sweep.run())
        end, c1 = time.perf_counter(), time.process_time()
    return {"run_id": sweep.run_id, "wall_s": end - t0, "sweep_s": end - first[0],
            "cpu_s": c1 - c0, "sweep": sweep}


# -- 2. shared limits, 3. a node dies: against a server in a thread ---------------------------

class Server(ReferenceServer):
    """The reference server, stamping each chat request's answer (and the tokens it counted)
    and counting in flight."""

    def __init__(self, **kw) -> None:
        super().__init__(scripted_models(), models=SCRIPTED_MODELS, **kw)
        self.arrivals: list[tuple[float, str, str]] = []  # (time, status, model)
        self.tokens: list[tuple[float, str, int]] = []  # (time, model, tokens) of each 200
        self.in_flight = self.max_in_flight = 0

    def app(self) -> web.Application:
        app = super().app()

        @web.middleware
        async def stamp(request, handler):  # noqa: ANN001, ANN202
            if not request.path.endswith("/chat/completions"):
                return await handler(request)
            model = msgspec.json.decode(await request.read()).get("model", "")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                response = await handler(request)
            finally:
                self.in_flight -= 1
            now = time.monotonic()
            self.arrivals.append((now, str(response.status), model))
            if response.status == 200:
                usage = msgspec.json.decode(response.body).get("usage") or {}
                self.tokens.append((now, model, usage.get("prompt_tokens", 0)
                                    + usage.get("completion_tokens", 0)))
            return response

        app.middlewares.insert(0, stamp)
        return app


class Threaded:
    def __init__(self, **kw) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.kw = kw

    def __enter__(self) -> Server:
        self.thread.start()
        self.server = Server(**self.kw)
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        return self.server

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _endpoints(url: str, **limits) -> list[dict]:
    return [{"name": m, "base_url": url, "backups": 0, "hedge": False, **limits}
            for m in [*MODELS, "scripted/user"]]


def shared_limits(cluster: Cluster, seconds: float, tmp: Path) -> dict:
    rpm, warm = 1200, 5.0
    trials = int(seconds / 10) + 2  # a trial of the oracle: ~620 calls, ~15 s at 2 x R
    out = {}
    with Threaded(latency_s=0.02, rpm_limit=rpm) as server:
        _limited_sweep(cluster, server, trials, seconds, tmp / "rpm.sqlite", rpm=rpm)
        # rpm is per model: the agent model's requests (it makes the most) against R
        ok = [t for t, status, model in server.arrivals
              if status == "200" and model == "scripted/oracle"]
        t0 = ok[0] + warm
        kept = [t for t in ok if t >= t0]
        span = kept[-1] - t0 if kept else 1.0
        out["rpm_ratio"] = len(kept) / (rpm * span / 60)
        windows = [bisect.bisect_left(kept, t + 10) - i for i, t in enumerate(kept)
                   if t + 10 <= kept[-1]]
        out["max_window_ratio"] = max(windows) / (rpm / 6) if windows else None
        out["limited_share"] = _limited_share(server)
    # tpm: the same, with a token limit T per model (the server counts a request's prompt
    # and completion tokens against it); the agent model's tokens over the run against T, as
    # the server answered them (the store's times are when the driver stored a batch)
    tpm = 120_000
    with Threaded(latency_s=0.02, tpm_limit=tpm) as server:
        _limited_sweep(cluster, server, trials, seconds, tmp / "tpm.sqlite", tpm=tpm)
        used = [(t, n) for t, model, n in server.tokens if model == "scripted/oracle"]
        t0 = used[0][0] + warm
        kept = [n for t, n in used if t >= t0]
        span = used[-1][0] - t0
        out["tpm_ratio"] = sum(kept) / (tpm * span / 60) if span > 0 else None
        out["tpm_limited_share"] = _limited_share(server)
    cap = 8
    with Threaded(latency_s=0.05) as server:
        cfg = load_config(None, dict(models=["scripted/oracle"], trials=2, max_concurrency=64,
                                     endpoints=[{**e, "max_concurrency": cap,
                                                 "limits_key": "one-account"}
                                                for e in _endpoints(server.url)]))
        with RunStore(tmp / "cap.sqlite") as store:
            asyncio.run(Driver(cfg, store, cluster=cluster, workers=2).run())
        out["max_in_flight_ratio"] = server.max_in_flight / cap
    return out


def _limited_sweep(cluster: Cluster, server: Server, trials: int, seconds: float, path: Path,
                   **limits: int) -> None:
    """The oracle's sweep on 2 workers against ``server``, every endpoint with ``limits``,
    stopped ``seconds`` after the first answer."""
    cfg = load_config(None, dict(models=["scripted/oracle"], trials=trials, max_concurrency=64,
                                 endpoints=_endpoints(server.url, **limits)))
    with RunStore(path) as store:
        asyncio.run(_bounded(Driver(cfg, store, cluster=cluster, workers=2), server, seconds))


def _limited_share(server: Server) -> float:
    """The share of the server's answers that were 429s."""
    return (sum(1 for _, status, _ in server.arrivals if status == "429")
            / max(1, len(server.arrivals)))


async def _bounded(driver: Driver, server: Server, seconds: float) -> None:
    """Run ``driver`` for ``seconds`` after the server's first answer, then stop it."""
    task = asyncio.create_task(driver.run())
    while not server.arrivals:
        await asyncio.sleep(0.01)
    await asyncio.sleep(seconds)
    driver.interrupted = signal.SIGINT  # a stop, as a signal would
    task.cancel()
    try:
        await task
    except BaseException:  # noqa: BLE001 - the stop's Interrupted / cancel
        return


def killed(cluster: Cluster, trials: int, tmp: Path, seed: int) -> dict:
    rng = random.Random(seed)
    out = {}
    cfg_of = lambda url: load_config(None, dict(  # noqa: E731
        models=MODELS, trials=trials, max_concurrency=32, endpoints=_endpoints(url)))
    with Threaded(latency_s=0.02) as server:
        with RunStore(tmp / f"clean{seed}.sqlite") as store:
            clean = Driver(cfg_of(server.url), store, cluster=cluster, workers=2)
            asyncio.run(clean.run())
        clean_requests = len(server.arrivals)
    clean_episodes = stored(tmp / f"clean{seed}.sqlite", clean.run_id)
    with Threaded(latency_s=0.02) as server:
        with RunStore(tmp / f"kill{seed}.sqlite") as store:
            driver = Driver(cfg_of(server.url), store, cluster=cluster, workers=2)

            async def run_and_kill():
                task = asyncio.create_task(driver.run())
                # a random point of the run: after a share of its episodes finished
                target = rng.uniform(0.2, 0.7) * len(clean_episodes)
                while sum(w.episodes for w in driver.workers) < target:
                    await asyncio.sleep(0.002)
                count = tmp / f"unacknowledged{seed}"
                driver.workers[0].handle.kill.remote(str(count))  # SIGKILL, counting
                outcome = await task
                out["in_flight_at_kill"] = int(count.read_text())
                return outcome

            asyncio.run(run_and_kill())
        out["extra_requests_after_kill"] = len(server.arrivals) - clean_requests
    out["kill_identical"] = clean_episodes == stored(tmp / f"kill{seed}.sqlite", driver.run_id)
    return out


def ingest(tmp: Path, events: int) -> dict:
    """The driver's ingest rate: reports of 500 journal events (a model call's payload, ~0.5
    KB), decoded and stored as the driver does, until the store has committed them all."""
    from sweepbench.scaleout.messages import Event, Report
    from sweepbench.scaleout.worker import _pack

    payload = msgspec.json.encode({
        "role": "agent", "request_hash": "ab" * 16,
        "message": {"role": "assistant", "content": "x" * 240, "tool_calls": None},
        "usage": {"prompt_tokens": 1800, "completion_tokens": 60}, "finish_reason": "stop",
        "latency_s": 0.2, "queue_wait_s": 0.0, "backoff_s": 0.0, "attempts": 1,
        "failures": []})
    per = 500
    reports = [_pack(Report(events=[Event(f"ep{(r * per + i) % 2000:05d}", r * per + i,
                                          "model_call", payload, "m")
                                    for i in range(per)]))
               for r in range(events // per)]
    unpack = msgspec.msgpack.Decoder(Report).decode
    with RunStore(tmp / "ingest.sqlite", create=True) as store:
        t0 = time.perf_counter()
        for raw in reports:
            for e in unpack(raw).events:
                store.event(e.key, e.seq, e.kind, e.payload, run_id="r", endpoint=e.endpoint)
        store.flush_sync()
        took = time.perf_counter() - t0
    return {"ingest_events_per_s": len(reports) * per / took}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=["speedup", "limits", "kill", "ingest"],
                    help="measure only this (its keys only)")
    ap.add_argument("--trials", type=int, help="trials of the speedup sweep (default 4 quick, 16)")
    args = ap.parse_args()
    install_uvloop()
    t0 = time.perf_counter()
    import ray

    local_cluster_environment()  # as ``Cluster`` sets it up for ``sweepbench run --workers``
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    startup = {"ray_init_s": time.perf_counter() - t0}
    runs: list[dict] = []
    with Cluster(workers=2) as cluster, tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        # startup: 2 workers to their first report, on the cluster just started
        t1 = time.perf_counter()
        cfg = msgspec.to_builtins(load_config(None, {"models": ["scripted/oracle"]}))
        handles = cluster.start(2, cfg=cfg, run_id="startup", slots=1,
                                reference_url="http://127.0.0.1:9/v1")  # never called
        ray.get([h.start.remote() for h in handles])
        cluster.kill(handles)
        startup["startup_s"] = startup["ray_init_s"] + time.perf_counter() - t1
        for i in range(args.runs):
            one: dict = {}
            (tmp / f"s{i}").mkdir()
            if args.only in (None, "speedup"):
                # enough episodes per slot that the ramp-up and the ramp-down are not the run
                trials = args.trials or (8 if args.quick else 32)
                one.update(speedup(cluster, trials, tmp / f"s{i}"))
            if args.only in (None, "limits"):
                one.update(shared_limits(cluster, 20.0 if args.quick else 60.0, tmp / f"s{i}"))
            if args.only in (None, "kill"):
                one.update(killed(cluster, 1 if args.quick else 2, tmp, seed=i))
            if args.only in (None, "ingest"):
                one.update(ingest(tmp / f"s{i}", 50_000 if args.quick else 200_000))
            runs.append(one)
            print(json.dumps(one), flush=True)
    ray.shutdown()
    result = {k: (statistics.median(r[k] for r in runs)
                  if isinstance(runs[0][k], (int, float)) and not isinstance(runs[0][k], bool)
                  else [r[k] for r in runs] if isinstance(runs[0][k], list)
                  else all(r[k] for r in runs))
              for k in runs[0]}
    result.update(startup, runs=len(runs), quick=args.quick, load=os.getloadavg(),
                  cpus=os.cpu_count())
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
