"""Hostile inputs a user's own setup can hold: a response cache that cannot be one (class 6),
numbers that are not finite or out of range and task ids that are not ids (class 7), and a
server that fails every request (0: the first-hour issue's fail-fast point).

Each attack gives the input where a user would (a config, an option, a task file, a cache
file) and checks the one-line error naming it, or, for a cache that breaks during a sweep,
that every call still gets its answer from the endpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import math
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _base import Attack

from sweepbench import cli
from sweepbench.benchmarks import catalog, registry
from sweepbench.benchmarks.base import Benchmark
from sweepbench.cli.parser import build_parser
from sweepbench.client.cache import ResponseCache
from sweepbench.client.facade import ModelClient
from sweepbench.client.transports.memory import MemoryTransport, completion
from sweepbench.config import Endpoint, load_config
from sweepbench.datasets.task import Task
from sweepbench.devserver.server import ReferenceServer
from sweepbench.errors import SweepbenchError
from sweepbench.wire import ChatRequest, UserMessage

Case = Callable[[Path], tuple[str, bool]]
SAMPLE = Path(catalog.__file__).parent / "vitabench" / "samples" / "vitabench_delivery.json"


def _cli(argv: list[str]) -> tuple[int, list[str]]:
    """``sweepbench ARGV`` in this process: (exit status, stderr lines)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(argv)
    return status, err.getvalue().splitlines()


def _one_line(status: int, lines: list[str], *wanted: str) -> tuple[str, bool]:
    got = f"exit {status}: " + " / ".join(lines)[:200]
    held = status == 2 and len(lines) == 1 and all(w in lines[0] for w in wanted)
    return got, held


def _refused(build: Callable[[], Any], *wanted: str) -> tuple[str, bool]:
    """``build()`` must raise a SweepbenchError (or ValueError) whose message has ``wanted``."""
    try:
        build()
    except (SweepbenchError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}", all(w in str(exc) for w in wanted)
    return "accepted", False


def _config(data: dict[str, Any], *wanted: str) -> Case:
    return lambda _tmp: _refused(lambda: load_config(None, data), *wanted)


def _endpoint(**fields: Any) -> dict[str, Any]:
    return {"models": ["m"], "endpoints": [{"name": "m", "base_url": "http://h/v1", **fields}]}


def _usage(argv: list[str], wanted: str) -> Case:
    """The options parsed only: accepted, they would run (``--latency inf`` hangs forever)."""
    def run(_tmp: Path) -> tuple[str, bool]:
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                build_parser().parse_args(argv)
                status = 0
            except SystemExit as stop:
                status = stop.code if isinstance(stop.code, int) else 1
        return _one_line(status, err.getvalue().splitlines(), f"argument {wanted}")

    return run


def _warnings() -> tuple[logging.Handler, list[str]]:
    seen: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("sweepbench.client.cache").addHandler(handler)
    return handler, seen


# ---- class 6: the response cache ------------------------------------------------------------


def _cache_text_file(tmp: Path) -> tuple[str, bool]:
    notes = tmp / "notes.txt"
    notes.write_text("my notes\n" * 500)
    got, held = _refused(lambda: ResponseCache(notes), f"response cache {notes}",
                         "file is not a database")
    return got, held and notes.read_text() == "my notes\n" * 500


def _cache_is_run_store(tmp: Path) -> tuple[str, bool]:
    store = tmp / "s.sqlite"
    (tmp / "c.toml").write_text(f'response_cache = "{store}"\n')
    status, lines = _cli(["run", "--config", str(tmp / "c.toml"), "--out", str(store),
                          "--benchmark", "t1:flight+hotel+bar", "--limit", "1", "--trials", "1",
                          "--no-progress"])
    got, held = _one_line(status, lines, f"response cache {store} is the run store")
    with sqlite3.connect(store) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    return got, held and "responses" not in tables


def _cache_other_database(tmp: Path) -> tuple[str, bool]:
    other = tmp / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE episodes (key TEXT)")
    got, held = _refused(lambda: ResponseCache(other), "is another database (tables episodes)")
    with sqlite3.connect(other) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master")]
    return got, held and tables == ["episodes"]


def _cache_full(tmp: Path) -> tuple[str, bool]:
    cache = ResponseCache(tmp / "c.sqlite")
    pages = cache._db.execute("PRAGMA page_count").fetchone()[0]
    cache._db.execute(f"PRAGMA max_page_count = {pages}")
    handler, seen = _warnings()
    try:
        for i in range(3):
            cache.put(f"k{i}", b"x" * 100_000)
    finally:
        logging.getLogger("sweepbench.client.cache").removeHandler(handler)
        cache.close()
    return f"{len(seen)} warning(s): {seen[:1]}", (
        len(seen) == 1 and str(tmp / "c.sqlite") in seen[0] and "disk is full" in seen[0])


def _cache_garbage_entry(tmp: Path) -> tuple[str, bool]:
    async def attack() -> tuple[str, bool]:
        cache = ResponseCache(tmp / "c.sqlite")
        ep = Endpoint(name="m", base_url="http://memory.invalid/v1", max_retries=0)
        transport = MemoryTransport(completion("fresh"), completion("fresh"))
        handler, seen = _warnings()
        try:
            async with ModelClient(ep, cache=cache, transport=transport) as client:
                req = ChatRequest(model="m", messages=[UserMessage("hi")])
                await client.complete(req)
                cache._db.execute("UPDATE responses SET payload = x'00ff'")
                result = await client.complete(req)  # a model error, were it charged
        finally:
            logging.getLogger("sweepbench.client.cache").removeHandler(handler)
            cache.close()
        return (f"answer {result.message.content!r} from the endpoint; {len(seen)} warning",
                result.message.content == "fresh" and not result.from_cache and len(seen) == 1)

    return asyncio.run(attack())


# ---- class 7: numbers and task ids ------------------------------------------------------------


def _server_latency(_tmp: Path) -> tuple[str, bool]:
    return _refused(lambda: ReferenceServer(lambda name: None, latency_s=math.inf),
                    "latency_s must be a finite number")


def _vitabench_blank_id(tmp: Path) -> tuple[str, bool]:
    tasks = json.loads(SAMPLE.read_text())
    tasks[0]["id"] = ""
    folder = tmp / "data" / "vitabench" / "delivery"
    folder.mkdir(parents=True)
    (folder / "tasks_en.json").write_text(json.dumps(tasks))
    return _one_line(*_cli(["plan", "--benchmark", "vitabench:delivery", "--prompts", "own",
                            "--data-dir", str(tmp / "data")]), "task #0: id '' is blank")


class _Ids(Benchmark):
    """A plugin benchmark whose tasks carry the ids it is given."""

    default_domains = ("d",)

    def __init__(self, name: str, ids: list[Any]) -> None:
        self.name, self.ids = name, ids

    def load_tasks(self, domains: tuple[str, ...], *, data_dir: Path | None,
                   lang: str) -> list[Task]:
        return [Task(id=i, benchmark=self.name, domain="d", instructions="x",
                     source="plugin.json") for i in self.ids]


def _plugin_ids(name: str, ids: list[Any], wanted: str) -> Case:
    def run(_tmp: Path) -> tuple[str, bool]:
        registry.register(_Ids(name, ids))
        try:
            return _refused(lambda: catalog.load_tasks(name), wanted)
        finally:
            registry._registered.pop(name, None)

    return run


# ---- 0: a server answering 5xx to everything -----------------------------------------------


def _always_5xx(tmp: Path) -> tuple[str, bool]:
    server = subprocess.Popen([sys.executable, "-m", "sweepbench.cli", "serve", "--port", "0",
                               "--faults", "500=0.5,503=0.5"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        (tmp / "c.toml").write_text(f'models = ["m"]\n[[endpoints]]\nname = "m"\n'
                                    f'model = "scripted/oracle"\nbase_url = "{url}"\n')
        started = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "sweepbench.cli", "run", "--config",
                              str(tmp / "c.toml"), "--out", str(tmp / "s.sqlite"),
                              "--no-progress"], capture_output=True, text=True, timeout=120,
                             check=False)
        took = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=30)
    got, held = _one_line(run.returncode, run.stderr.splitlines(), "failed a chat request")
    return f"{took:.1f}s, {got}", held and took < 30


ATTACKS = [
    Attack(6, "response cache: a text file", "setup error naming it, file untouched",
           _cache_text_file),
    Attack(6, "response cache: the run store itself", "exit 2, one line, no table added",
           _cache_is_run_store),
    Attack(6, "response cache: another SQLite database", "refused, database unchanged",
           _cache_other_database),
    Attack(6, "response cache: full mid-sweep", "one warning naming it, no error",
           _cache_full),
    Attack(6, "response cache: an entry that is not a reply", "endpoint answers, one warning",
           _cache_garbage_entry),
    Attack(7, "config: price_input_per_mtok = inf", "config error naming the key",
           _config(_endpoint(price_input_per_mtok=math.inf),
                   "price_input_per_mtok must be a finite number")),
    Attack(7, "config: temperature = nan", "config error naming the key",
           _config(_endpoint(temperature=math.nan), "temperature must be >= 0")),
    Attack(7, "config: extra_body with a NaN inside", "config error naming the path",
           _config(_endpoint(extra_body={"kw": {"top_k": [math.nan]}}),
                   "extra_body.kw.top_k[0] must be a finite number")),
    Attack(7, "config: extra_body top_p = 7", "config error: top_p <= 1",
           _config(_endpoint(extra_body={"top_p": 7}), "extra_body.top_p must be <= 1")),
    Attack(7, "config: breaker_max_wait_s = inf", "config error naming the key",
           _config(_endpoint(breaker_max_wait_s=math.inf), "breaker_max_wait_s must be <=")),
    Attack(7, "config: rpm = 10**30", "config error: not a 64-bit integer",
           _config(_endpoint(rpm=10**30), "rpm must be a 64-bit integer")),
    Attack(7, "config: max_concurrency = 10**12", "config error naming the key",
           _config({"max_concurrency": 10**12}, "max_concurrency must be <= 1048576")),
    Attack(7, "config: max_cost_usd = inf", "config error naming the key",
           _config({"max_cost_usd": math.inf}, "max_cost_usd must be a finite number")),
    Attack(7, "config: reference_latency_s = inf", "config error (a run once hung)",
           _config({"reference_latency_s": math.inf}, "reference_latency_s must be <=")),
    Attack(7, "config: task_ids = [' ']", "config error naming the id",
           _config({"task_ids": [" "]}, "task id ' '")),
    Attack(7, "cli: run --latency inf", "usage error, exit 2", _usage(
        ["run", "--latency", "inf"], "--latency: must be a finite number")),
    Attack(7, "cli: plan --max-cost inf", "usage error, exit 2", _usage(
        ["plan", "--max-cost", "inf"], "--max-cost: must be a finite number")),
    Attack(7, "cli: run --trials -1", "usage error, exit 2", _usage(
        ["run", "--trials", "-1"], "--trials/--epochs: must be >= 1")),
    Attack(7, "cli: serve --seed 2**64", "usage error, exit 2", _usage(
        ["serve", "--seed", str(1 << 64)], "--seed: must be <=")),
    Attack(7, "server: latency_s = inf", "refused", _server_latency),
    Attack(7, "vitabench task file: id ''", "plan: exit 2, one line", _vitabench_blank_id),
    Attack(7, "plugin tasks: id '  '", "task error naming the task", _plugin_ids(
        "hostile_blank", ["ok", "  "], "task #1: id '  ' is blank")),
    Attack(7, "plugin tasks: the same id twice", "task error naming both", _plugin_ids(
        "hostile_twice", ["a", "b", "a"], "task #2: id 'a' is task #0's too")),
    Attack(7, "plugin tasks: id 42 (not a string)", "task error naming it", _plugin_ids(
        "hostile_int", [42], "task #0: id 42 is not a string")),
    Attack(0, "server answering 5xx to every request", "run exits 2 in < 30 s, one line",
           _always_5xx),
]
