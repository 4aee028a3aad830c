"""``sweepbench view``: the viewer's HTTP side, an aiohttp app serving a JSON API and the page.

Routes: ``/`` (the page), ``/static/...`` (its files, shipped in the package), and under
``/api/``: ``stores``, ``summary`` (judge pairs, leaderboard cells, filter facets),
``episodes`` (a filtered page, or a text search continued by cursor), ``episode`` (one
episode, assembled by ``episode.build_episode``) and ``same-task`` (a task's episodes, for
side by side). Parameters are query strings; a store is named by its id (the file's stem).

What the store holds is untrusted (model output): it only ever leaves as JSON, and every
response carries a Content-Security-Policy that allows no inline script or style and nothing
from another origin, so the page cannot run what a model wrote even if it tried to. The app
answers only requests addressed to a loopback host name (a page elsewhere cannot reach it
through DNS rebinding) unless it was started with ``allow_remote``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

import orjson
from aiohttp import web

from sweepbench.errors import ConfigError, StoreError
from sweepbench.results.profile import Prices
from sweepbench.view.episode import build_episode
from sweepbench.view.queries import OUTCOMES, PAGE_MAX, Filters, StoreReader

__all__ = ["SECURITY_HEADERS", "ViewerError", "build_app", "is_loopback", "store_ids"]

STATIC = Path(__file__).with_name("static")

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


def _int(q: Mapping[str, str], name: str, default: int | None) -> int | None:
    text = q.get(name)
    if text in (None, ""):
        return default
    try:
        return int(text)
    except ValueError:
        raise ViewerError(400, f"{name} must be an integer, got {text!r}") from None


LIVE_REFRESH_S = 2.0
"""How stale a store's aggregates may be while a sweep is writing to it."""


def count_from_cells(cells: list[dict], f: Filters) -> int | None:
    """How many episodes match ``f``, from the leaderboard's cells of the same judge pair;
    None when ``f`` filters on something the cells do not count."""
    if f.task or f.trial is not None or f.termination or f.outcome == "unreachable":
        return None
    return sum(c["episodes"] if f.outcome is None else c[f.outcome] for c in cells
               if (f.model is None or c["model"] == f.model)
               and (f.benchmark is None or c["benchmark"] == f.benchmark)
               and (f.domain is None or c["domain"] == f.domain))


class _Viewer:
    """The API over a set of stores. A store's aggregates (judge pairs, leaderboard cells,
    facets) read every episode's index entry, so they are kept until the store changes
    (at most ``LIVE_REFRESH_S`` stale while a sweep writes); everything else is read per
    request."""

    def __init__(self, stores: dict[str, StoreReader], prices: Mapping[str, Prices]) -> None:
        self.stores = stores
        self.prices = dict(prices)
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

    def _pairs(self, store: StoreReader, run: str) -> list[dict]:
        return self._cached(store, ("pairs", run), lambda: store.judge_pairs(run))

    def _cells(self, store: StoreReader, run: str, judge: str | None,
               method: str | None) -> list[dict]:
        return self._cached(store, ("cells", run, judge, method),
                            lambda: store.leaderboard(run, judge, method))

    def warm(self) -> None:
        """Compute each store's aggregates for its latest run (startup, before serving)."""
        for sid, store in self.stores.items():
            runs = store.runs()
            if runs:
                self.summary({"store": sid, "run": runs[0]["run_id"]})

    def _store(self, q: Mapping[str, str]) -> StoreReader:
        sid = q.get("store", "")
        if sid not in self.stores:
            raise ViewerError(404, f"no store {sid!r} in this viewer (stores: "
                                   f"{', '.join(self.stores)})")
        return self.stores[sid]

    @staticmethod
    def _run(store: StoreReader, q: Mapping[str, str]) -> str:
        run = q.get("run", "")
        if not store.has_run(run):
            raise ViewerError(404, f"no run {run!r} in {store.path.name}")
        return run

    def _pair(self, store: StoreReader, run: str,
              q: Mapping[str, str]) -> tuple[str | None, str | None]:
        """The judge/method pair asked for, else the one with the most verdicts."""
        judge, method = q.get("judge") or None, q.get("method") or None
        if judge is None and method is None:
            pairs = self._pairs(store, run)
            if pairs:
                return pairs[0]["judge"], pairs[0]["method"]
        return judge, method

    def _filters(self, store: StoreReader, run: str, q: Mapping[str, str]) -> Filters:
        judge, method = self._pair(store, run, q)
        outcome = q.get("outcome") or None
        if outcome is not None and outcome not in OUTCOMES:
            raise ViewerError(400, f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
        return Filters(model=q.get("model") or None, benchmark=q.get("benchmark") or None,
                       domain=q.get("domain") or None, task=q.get("task") or None,
                       trial=_int(q, "trial", None), outcome=outcome,
                       termination=q.get("termination") or None, judge=judge, method=method)

    # ---- handlers (run in a worker thread: SQLite calls block) ------------------------------

    def stores_(self, q: Mapping[str, str]) -> Any:
        out = []
        for sid, store in self.stores.items():
            runs = [{k: r[k] for k in ("run_id", "created_at", "finished_at", "status")}
                    for r in store.runs()]
            out.append({"id": sid, "path": str(store.path), "runs": runs})
        return out

    def summary(self, q: Mapping[str, str]) -> Any:
        store = self._store(q)
        run = self._run(store, q)
        judge, method = self._pair(store, run, q)
        return {"store": q["store"], "run": run, "pairs": self._pairs(store, run),
                "judge": judge, "method": method,
                "cells": self._cells(store, run, judge, method),
                "config": store.run_config(run),
                **self._cached(store, ("facets", run), lambda: store.facets(run))}

    def episodes(self, q: Mapping[str, str]) -> Any:
        store = self._store(q)
        run = self._run(store, q)
        f = self._filters(store, run, q)
        text = q.get("q", "").strip()
        if text:
            return {"search": text, **store.search(
                run, f, text, cursor=_int(q, "cursor", 0) or 0,
                want=min(_int(q, "per_page", 50) or 50, PAGE_MAX))}
        total = count_from_cells(self._cells(store, run, f.judge, f.method), f)
        page = store.episodes(run, f, page=_int(q, "page", 0) or 0,
                              per_page=_int(q, "per_page", 50) or 50, count=total is None)
        return page if total is None else {**page, "total": total}

    def _episode(self, q: Mapping[str, str]) -> tuple[StoreReader, str, dict]:
        store = self._store(q)
        run = self._run(store, q)
        raw = store.episode(run, q.get("id", ""))
        if raw is None:
            raise ViewerError(404, f"no episode {q.get('id', '')!r} in run {run!r}")
        return store, run, raw

    def episode(self, q: Mapping[str, str]) -> Any:
        store, run, raw = self._episode(q)
        return build_episode(raw, run_config=store.run_config(run), prices=self.prices)

    def same_task(self, q: Mapping[str, str]) -> Any:
        store, run, raw = self._episode(q)
        judge, method = self._pair(store, run, q)
        models = sorted({c["model"] for c in self._cells(store, run, judge, method)})
        return store.same_task(run, raw["benchmark"], raw["domain"], raw["task_id"],
                               judge, method, models)


def _api(fn: Callable[[Mapping[str, str]], Any]) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        try:
            data = await asyncio.to_thread(fn, request.rel_url.query)
        except ViewerError as e:
            return _json({"error": str(e)}, e.status)
        except StoreError as e:
            return _json({"error": str(e)}, 500)
        return _json(data)
    return handler


def build_app(stores: list[Path], *, prices: Mapping[str, Prices] | None = None,
              allow_remote: bool = False) -> web.Application:
    """The viewer's app over ``stores`` (opened read-only now; closed with the app)."""
    readers: dict[str, StoreReader] = {}
    try:
        for sid, path in store_ids(stores).items():
            readers[sid] = StoreReader(path)
    except BaseException:
        for r in readers.values():
            r.close()
        raise
    viewer = _Viewer(readers, prices or {})

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
                resp = web.Response(status=e.status, text=e.reason or "")
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
        app.router.add_get(f"/api/{name}", _api(fn))

    async def close(app: web.Application) -> None:
        for r in readers.values():
            r.close()

    app.on_startup.append(warm)
    app.on_cleanup.append(close)
    return app


def prices_from(endpoints: list[Any]) -> dict[str, Prices]:
    """Model name -> prices, for endpoints that have any (a config's ``endpoints``)."""
    from sweepbench.results.profile import as_prices

    out = {}
    for ep in endpoints:
        p = as_prices(ep)
        if p != Prices():
            out[getattr(ep, "name", None) or ep["name"]] = p
    return out



def prepare_indexes(paths: list[Path], say: Callable[[str], None]) -> None:
    """Have the store add its reader indexes to older files (once; needs write access)."""
    for path in paths:
        reader = StoreReader(path)
        try:
            missing = reader.missing_indexes()
        finally:
            reader.close()
        if not missing:
            continue
        try:
            say(f"{path}: adding the store's reader indexes ({', '.join(missing)}), once")
            StoreReader.add_indexes(path)
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


def serve(paths: list[Path], *, host: str, port: int, prices: Mapping[str, Prices] | None,
          allow_remote: bool, say: Callable[[str], None]) -> None:
    """Serve the viewer until interrupted; ``say`` gets progress lines and the address."""
    if not allow_remote and not is_loopback(host):
        raise ConfigError(f"--host {host} is not a loopback address: the viewer would serve "
                          "the stores to anyone who can reach it; add --allow-remote to mean it")
    prepare_indexes(paths, say)
    app = build_app(paths, prices=prices, allow_remote=allow_remote)
    names = ", ".join(store_ids(paths))
    asyncio.run(_serve(app, host, port, lambda url: say(f"viewing {names} at {url} (Ctrl-C stops)")))
