"""``sweepbench view``: the viewer's HTTP side, an aiohttp app serving a JSON API and the page.

Routes: ``/`` (the page), ``/static/...`` (its files, shipped in the package), and under
``/api/``: ``stores``, ``summary`` (each benchmark's source and judge pairs, leaderboard
cells, filter facets), ``episodes`` (a filtered page, or a text search continued by cursor),
``episode`` (one episode by its key, assembled by ``episode.build_episode``) and
``same-task`` (a task's episodes, for side by side). Parameters are query strings: ``store``
(its id: the file's stem), ``run`` (one run's selection; absent: every episode of the store,
as ``sweepbench report``), ``src.<benchmark>=<judge>/<method>`` (score that benchmark by
another pair than its headline).

Every parameter is checked before anything is read: a route's unknown or repeated
parameter, a number out of its range (``page`` and ``cursor`` >= 0, ``per_page`` 1..200,
``trial`` >= 0) or a ``src.`` for a benchmark the scope does not hold is a 400, an unknown
store, run or episode a 404, each as ``{"error": ...}``; anything else a handler raises is
logged and answered as a JSON 500 with one short line, never the framework's plain text.

What the store holds is untrusted (model output): it only ever leaves as JSON, and every
response carries a Content-Security-Policy that allows no inline script or style and nothing
from another origin, so the page cannot run what a model wrote even if it tried to. The app
answers only requests addressed to a loopback host name (a page elsewhere cannot reach it
through DNS rebinding) unless it was started with ``allow_remote``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import sqlite3
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

import msgspec
import orjson
from aiohttp import web

from sweepbench.errors import ConfigError, StoreError
from sweepbench.ids import STATE_JUDGE
from sweepbench.results.cost import prices_by_run
from sweepbench.results.profile import Prices, as_prices
from sweepbench.results.sources import Source, choose_source
from sweepbench.store.damage import open_error
from sweepbench.store.schema import READABLE_SINCE, SCHEMA_VERSION
from sweepbench.results.selection import name_rows
from sweepbench.view.episode import build_episode
from sweepbench.view.queries import OUTCOMES, PAGE_MAX, Filters, Sources, StoreReader

__all__ = ["SECURITY_HEADERS", "ViewerError", "build_app", "is_loopback", "store_ids"]

STATIC = Path(__file__).with_name("static")
log = logging.getLogger(__name__)

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class ViewerError(Exception):
    """A bad request: shown to the page as ``{"error": ...}`` with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def store_ids(paths: list[Path]) -> dict[str, Path]:
    """Store id (the file's stem, made unique) -> path, in the given order."""
    out: dict[str, Path] = {}
    for p in paths:
        name, n = p.stem or "store", 2
        while name in out:
            name, n = f"{p.stem}-{n}", n + 1
        out[name] = p
    return out


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


INT_MAX = 2**31 - 1
"""The largest page, cursor or trial asked for (SQLite's integers hold any offset from it)."""
_INTEGER = re.compile(r"-?[0-9]+")
_SCOPE = ("store", "run")
_FILTERS = ("model", "user_model", "user_mode", "benchmark", "domain", "task", "trial",
            "outcome", "termination", "q", "page", "per_page", "cursor")
PARAMS: dict[str, tuple[str, ...]] = {
    "stores": (), "summary": _SCOPE, "episodes": _SCOPE + _FILTERS, "episode": ("store", "id"),
    "same-task": (*_SCOPE, "id")}
"""Each route's parameters (besides ``src.<benchmark>`` where a scope is read)."""


def _int(q: Mapping[str, str], name: str, default: Any, lo: int = 0, hi: int = INT_MAX) -> Any:
    """The integer ``name`` in ``lo..hi`` (``default`` when absent), or a 400."""
    text = q.get(name)
    if text in (None, ""):
        return default
    if not _INTEGER.fullmatch(text):
        raise ViewerError(400, f"{name} must be an integer, got {_short(text)}")
    if len(text) > 12 or not lo <= int(text) <= hi:
        raise ViewerError(400, f"{name} must be in {lo}..{hi}, got "
                               f"{text if len(text) <= 20 else text[:20] + '…'}")
    return int(text)


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def check_names(route: str, q: Any) -> None:
    """400 for a parameter ``route`` does not take, or one given twice."""
    known = PARAMS[route]
    for name in q:
        if len(q.getall(name)) > 1:
            raise ViewerError(400, f"parameter {_short(name)} given more than once")
        if name not in known and not (name.startswith(SOURCE_PARAM) and "run" in known):
            raise ViewerError(400, f"unknown parameter {_short(name)} for /api/{route} "
                                   f"(known: {', '.join(known) or 'none'})")


LIVE_REFRESH_S = 2.0
"""How stale a store's aggregates may be while a sweep is writing to it."""

SOURCE_PARAM = "src."
"""``src.<benchmark>=<judge>/<method>``: score that benchmark by another pair than its
headline's."""


def count_from_cells(cells: list[dict], f: Filters) -> int | None:
    """How many episodes match ``f``, from the leaderboard's cells under the same sources;
    None when ``f`` filters on something the cells do not count."""
    if f.task or f.trial is not None or f.termination or f.outcome == "superseded":
        return None
    return sum(c["episodes"] if f.outcome is None else c[f.outcome] for c in cells
               if all(v is None or c[k] == v for k, v in (
                   ("model", f.model), ("user_model", f.user_model),
                   ("user_mode", f.user_mode), ("benchmark", f.benchmark),
                   ("domain", f.domain))))


class _Viewer:
    """The API over a set of stores. A store's aggregates (judge pairs, leaderboard cells,
    facets) read every episode's index entry, so they are kept until the store changes
    (at most ``LIVE_REFRESH_S`` stale while a sweep writes); everything else is read per
    request.

    What is scored follows ``sweepbench report``: each benchmark by its headline
    (``benchmarks``: the registry's headlines, over what the store's runs recorded), from
    the judge with the most verdicts of that method on it (``results.report.choose_source``),
    unless the request names another pair for it."""

    def __init__(self, stores: dict[str, StoreReader], *,
                 benchmarks: Mapping[str, Mapping[str, Any]],
                 override: Mapping[str, Prices] | None) -> None:
        self.stores = stores
        self.benchmarks = dict(benchmarks)
        self.override = dict(override) if override else None
        self._memo: dict[tuple, tuple[int, float, Any]] = {}

    def _cached(self, store: StoreReader, key: tuple, compute: Callable[[], Any]) -> Any:
        version = store.data_version()
        key = (id(store), *key)
        hit = self._memo.get(key)
        if hit is not None and (hit[0] == version or
                                time.monotonic() - hit[1] < LIVE_REFRESH_S):
            return hit[2]
        value = compute()
        self._memo[key] = (version, time.monotonic(), value)
        return value

    def _runs(self, store: StoreReader) -> list[dict]:
        return self._cached(store, ("runs",), store.runs)

    def _superseded(self, store: StoreReader, run: str | None) -> int:
        """How many superseded episodes the scope holds (none: queries skip the test)."""
        return self._cached(store, ("superseded", run), lambda: store.superseded(run))

    def _pairs(self, store: StoreReader, run: str | None) -> list[dict]:
        return self._cached(store, ("pairs", run), lambda: store.judge_pairs(
            run, superseded=self._superseded(store, run) > 0))

    def _facets(self, store: StoreReader, run: str | None) -> dict:
        return self._cached(store, ("facets", run), lambda: store.facets(run))

    def _cells(self, store: StoreReader, run: str | None, sources: Sources) -> list[dict]:
        def compute() -> list[dict]:
            cells = store.cells(run, sources, superseded=self._superseded(store, run) > 0)
            name_rows(cells)
            return cells
        return self._cached(store, ("cells", run, tuple(sorted(sources.items()))), compute)

    def _info(self, store: StoreReader) -> dict[str, dict]:
        """benchmark -> headline info: what the runs recorded (later runs winning), the
        registry's over it (as ``sweepbench report`` merges them)."""
        out: dict[str, dict] = {}
        for run in reversed(self._runs(store)):
            recorded = (run.get("info") or {}).get("benchmarks") if isinstance(
                run.get("info"), dict) else None
            if isinstance(recorded, dict):
                out.update({b: m for b, m in recorded.items() if isinstance(m, dict)})
        return {**out, **self.benchmarks}

    def _sources(self, store: StoreReader, run: str | None,
                 q: Mapping[str, str]) -> dict[str, Source]:
        """benchmark -> where its pass comes from: its headline, or the pair asked for."""
        info = self._info(store)
        verdicts: dict[str, dict[tuple[str, str], int]] = {}
        for p in self._pairs(store, run):
            verdicts.setdefault(p["benchmark"], {})[p["judge"], p["method"]] = p["verdicts"]
        held = self._facets(store, run)["benchmarks"]
        for name in q:
            if name.startswith(SOURCE_PARAM) and name[len(SOURCE_PARAM):] not in held:
                raise ViewerError(400, f"no benchmark {_short(name[len(SOURCE_PARAM):])} in "
                                       f"this scope (benchmarks: {', '.join(held)})")
        out = {}
        for bench in held:
            asked = q.get(SOURCE_PARAM + bench) or ""
            if not asked:
                out[bench] = choose_source(info.get(bench) or {}, verdicts.get(bench, {}))
                continue
            judge, _, method = asked.rpartition("/")
            have = {pair for pair in verdicts.get(bench, {})} | {(STATE_JUDGE, "state")}
            if (judge, method) not in have:
                raise ViewerError(400, f"no {asked!r} judgments of {bench} in this scope "
                                       f"(pairs: {', '.join(sorted('/'.join(p) for p in have))})")
            out[bench] = choose_source(info.get(bench) or {}, verdicts[bench] if bench in
                                       verdicts else {}, method=method, judge=judge)
        return out

    @staticmethod
    def _pairs_of(sources: Mapping[str, Source]) -> Sources:
        return {b: (s.judge, s.method) if s.judge is not None and s.applicable else None
                for b, s in sources.items()}

    def warm(self) -> None:
        """Compute each store's aggregates for all its episodes (startup, before serving)."""
        for sid in self.stores:
            self.summary({"store": sid})

    def _store(self, q: Mapping[str, str]) -> StoreReader:
        sid = q.get("store", "")
        if sid not in self.stores:
            raise ViewerError(404, f"no store {sid!r} in this viewer (stores: "
                                   f"{', '.join(self.stores)})")
        return self.stores[sid]

    @staticmethod
    def _run(store: StoreReader, q: Mapping[str, str]) -> str | None:
        """The run whose selection is looked at; None: every episode of the store."""
        run = q.get("run") or None
        if run is not None and not store.has_run(run):
            raise ViewerError(404, f"no run {run!r} in {store.path.name}")
        return run

    def _filters(self, q: Mapping[str, str]) -> Filters:
        outcome = q.get("outcome") or None
        if outcome is not None and outcome not in OUTCOMES:
            raise ViewerError(400, f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
        return Filters(model=q.get("model") or None, user_model=q.get("user_model") or None,
                       user_mode=q.get("user_mode") or None,
                       benchmark=q.get("benchmark") or None, domain=q.get("domain") or None,
                       task=q.get("task") or None, trial=_int(q, "trial", None),
                       outcome=outcome, termination=q.get("termination") or None)

    # ---- handlers (run in a worker thread: SQLite calls block) ------------------------------

    def stores_(self, q: Mapping[str, str]) -> Any:
        out = []
        for sid, store in self.stores.items():
            runs = [{k: r[k] for k in ("run_id", "created_at", "finished_at", "status")}
                    for r in self._runs(store)]
            out.append({"id": sid, "path": str(store.path), "runs": runs})
        return out

    def summary(self, q: Mapping[str, str]) -> Any:
        store = self._store(q)
        run = self._run(store, q)
        sources = self._sources(store, run, q)
        pairs = self._pairs(store, run)
        info = self._info(store)
        benchmarks = []
        for bench, src in sources.items():
            headline = choose_source(info.get(bench) or {}, {
                (p["judge"], p["method"]): p["verdicts"] for p in pairs
                if p["benchmark"] == bench})
            benchmarks.append({
                "name": bench, "source": msgspec.to_builtins(src),
                "headline": msgspec.to_builtins(headline),
                "pairs": sorted(({k: p[k] for k in ("judge", "method", "episodes", "verdicts")}
                                 for p in pairs if p["benchmark"] == bench),
                                key=lambda p: (p["method"] != "state", p["judge"], p["method"]))})
        runs = [{k: r[k] for k in ("run_id", "created_at", "finished_at", "status")}
                for r in self._runs(store)]
        facets = self._facets(store, run)
        return {"store": q["store"], "run": run, "runs": runs, "benchmarks": benchmarks,
                "cells": self._cells(store, run, self._pairs_of(sources)),
                "superseded": self._superseded(store, run),
                "terminations": facets["terminations"], "trials": facets["trials"]}

    def episodes(self, q: Mapping[str, str]) -> Any:
        store = self._store(q)
        run = self._run(store, q)
        f = self._filters(q)
        sources = self._pairs_of(self._sources(store, run, q))
        superseded = self._superseded(store, run) > 0
        text = q.get("q", "").strip()
        per_page = _int(q, "per_page", 50, 1, PAGE_MAX)
        if text:
            return {"search": text, **store.search(
                run, f, sources, text, cursor=_int(q, "cursor", 0), want=per_page,
                superseded=superseded)}
        total = count_from_cells(self._cells(store, run, sources), f)
        page = store.episodes(run, f, sources, page=_int(q, "page", 0), per_page=per_page,
                              count=total is None, superseded=superseded)
        return page if total is None else {**page, "total": total}

    def _episode(self, q: Mapping[str, str]) -> tuple[StoreReader, dict]:
        store = self._store(q)
        raw = store.episode(q.get("id", ""))
        if raw is None:
            raise ViewerError(404, f"no episode {q.get('id', '')!r} in {store.path.name}")
        return store, raw

    def episode(self, q: Mapping[str, str]) -> Any:
        store, raw = self._episode(q)
        return build_episode(raw, prices=prices_by_run(self._runs(store)),
                             override=self.override)

    def same_task(self, q: Mapping[str, str]) -> Any:
        store, raw = self._episode(q)
        run = self._run(store, q)
        sources = self._pairs_of(self._sources(store, run, q))
        models = sorted({c["model"] for c in self._cells(store, run, sources)} | {raw["model"]})
        return store.same_task(run, raw, sources, models)


def _api(route: str, fn: Callable[[Mapping[str, str]], Any]
         ) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        query = request.rel_url.query
        try:
            check_names(route, query)
            return _json(await asyncio.to_thread(fn, query))
        except ViewerError as e:
            return _json({"error": str(e)}, e.status)
        except StoreError as e:
            return _json({"error": str(e)}, 500)
    return handler


def _internal(request: web.Request, exc: BaseException) -> web.Response:
    """A handler's unexpected exception: logged whole, answered as one short JSON line."""
    log.error("viewer: %s %s failed", request.method, request.rel_url, exc_info=exc)
    return _json({"error": f"internal error: {type(exc).__name__} (the viewer's log has "
                           "the details)"}, 500)


def build_app(stores: list[Path], *, prices: Mapping[str, Any] | None = None,
              benchmarks: Mapping[str, Mapping[str, Any]] | None = None,
              allow_remote: bool = False) -> web.Application:
    """The viewer's app over ``stores`` (opened read-only now; closed with the app).

    ``prices``: endpoint -> prices (or an endpoint config) replacing the stored ones, as
    ``report --config`` does; ``benchmarks``: name -> headline info (the registry's,
    ``benchmarks.registry.benchmark_info``; default: what the stores' runs recorded)."""
    readers: dict[str, StoreReader] = {}
    try:
        for sid, path in store_ids(stores).items():
            readers[sid] = StoreReader(path)
    except BaseException:
        for r in readers.values():
            r.close()
        raise
    override = None if prices is None else {n: as_prices(p) for n, p in prices.items()}
    viewer = _Viewer(readers, benchmarks=benchmarks or {}, override=override)

    async def warm(app: web.Application) -> None:
        await asyncio.to_thread(viewer.warm)

    @web.middleware
    async def guard(request: web.Request, handler: Callable) -> web.StreamResponse:
        if not allow_remote and not is_loopback(request.url.host or ""):
            resp: web.StreamResponse = web.Response(
                status=421, text="this viewer answers only requests to a loopback address\n")
        else:
            try:
                resp = await handler(request)
            except web.HTTPException as e:
                resp = (_json({"error": e.reason or f"HTTP {e.status}"}, e.status)
                        if request.path.startswith("/api/")
                        else web.Response(status=e.status, text=e.reason or ""))
            except Exception as e:  # noqa: BLE001 - a bug, answered in JSON, not plain text
                resp = _internal(request, e)
        resp.headers.update(SECURITY_HEADERS)
        return resp

    app = web.Application(middlewares=[guard])

    async def index(request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "index.html")

    async def no_icon(request: web.Request) -> web.Response:
        return web.Response(status=204)

    app.router.add_get("/", index)
    app.router.add_get("/favicon.ico", no_icon)
    app.router.add_static("/static/", STATIC, show_index=False, follow_symlinks=False)
    for name, fn in (("stores", viewer.stores_), ("summary", viewer.summary),
                     ("episodes", viewer.episodes), ("episode", viewer.episode),
                     ("same-task", viewer.same_task)):
        app.router.add_get(f"/api/{name}", _api(name, fn))

    async def close(app: web.Application) -> None:
        for r in readers.values():
            r.close()

    app.on_startup.append(warm)
    app.on_cleanup.append(close)
    return app


def prepare(paths: list[Path], say: Callable[[str], None]) -> None:
    """Have the store bring older files up to date before they are read: migrate an older
    schema and add its reader indexes (once; needs write access)."""
    for path in paths:
        if not path.is_file():
            raise StoreError(f"no run store at {path}")
        try:
            version = StoreReader.schema_version(path)
        except sqlite3.Error as e:
            raise open_error(path, e, "cannot read") from e
        if version < READABLE_SINCE:
            say(f"{path}: schema version {version}, migrating to {SCHEMA_VERSION} (once)")
            note = StoreReader.prepare(path)
            if note:
                say(note)
            continue
        reader = StoreReader(path)
        try:
            missing = reader.missing_indexes()
        finally:
            reader.close()
        if not missing:
            continue
        try:
            say(f"{path}: adding the store's reader indexes ({', '.join(missing)}), once")
            StoreReader.prepare(path)
        except (StoreError, OSError) as e:
            say(f"{path}: cannot add indexes ({e}); lists of a large store will be slow")


async def _serve(app: web.Application, host: str, port: int,
                 ready: Callable[[str], None]) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = site._server.sockets[0].getsockname()[1] if site._server else port  # port 0
        shown = f"[{host}]" if ":" in host else host
        ready(f"http://{shown}:{bound}/")
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def serve(paths: list[Path], *, host: str, port: int, prices: Mapping[str, Any] | None,
          benchmarks: Mapping[str, Mapping[str, Any]] | None, allow_remote: bool,
          say: Callable[[str], None]) -> None:
    """Serve the viewer until interrupted; ``say`` gets progress lines and the address."""
    if not allow_remote and not is_loopback(host):
        raise ConfigError(f"--host {host} is not a loopback address: the viewer would serve "
                          "the stores to anyone who can reach it; add --allow-remote to mean it")
    prepare(paths, say)
    app = build_app(paths, prices=prices, benchmarks=benchmarks, allow_remote=allow_remote)
    names = ", ".join(store_ids(paths))
    asyncio.run(_serve(app, host, port, lambda url: say(f"viewing {names} at {url} (Ctrl-C stops)")))
