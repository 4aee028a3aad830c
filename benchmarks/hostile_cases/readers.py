"""Readers of model output against what a model can send (points 3 and 8 of the reliability
issue): tool arguments nested 10,000 deep, 10,000 calls in one reply, a 5 MB argument, odd
but valid JSON, a reply body nested 500 deep, and then every reader of the episodes (scoring,
judges, report, exports, the viewer's API and page), and the viewer's parameters.

A hostile agent endpoint (aiohttp, on loopback, in a thread) answers an episode's first agent
request with the tool calls an attack names, then ``done \\u202e0001\\u202c ###STOP###``; the
user, judge and referee are the built-in doubles. One store with every kind of hostile episode
is made once and read by the reader attacks.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import io
import json
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _base import Attack
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from sweepbench.cli import main
from sweepbench.store.runstore import RunStore
from sweepbench.view.server import build_app

DEEP = '{"a": ' + "[" * 10_000 + "]" * 10_000 + "}"
BIG = '{"a": "' + "x" * 5_000_000 + '"}'
ODD = ['{"a": 1e400}', '{"a": ' + "9" * 5000 + "}", '{"a": NaN}', '{"a": "\\ud800"}',
       '{"a": "nul\\u0000"}']
BIDI = "done \u202e0001\u202c ###STOP###"
T1, VITA = "t1:attraction", "vitabench:delivery"


# ---- the hostile agent --------------------------------------------------------------------

class Agent:
    """What the endpoint answers (``reply(tool_name) -> message``) and the largest request
    body it was sent."""

    def __init__(self, reply: Callable[[str], dict]) -> None:
        self.reply, self.largest, self.requests = reply, 0, 0

    async def complete(self, request: web.Request) -> web.Response:
        raw = await request.read()
        self.largest, self.requests = max(self.largest, len(raw)), self.requests + 1
        body = json.loads(raw)
        first = not any(m.get("role") == "tool" for m in body["messages"])
        tool = body["tools"][0]["function"]["name"] if body.get("tools") else ""
        message = self.reply(tool) if first else {"role": "assistant", "content": BIDI}
        return web.json_response({"id": "x", "choices": [
            {"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1}})


def calling(*arguments: str) -> Callable[[str], dict]:
    return lambda tool: {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": tool, "arguments": a}}
        for i, a in enumerate(arguments)]}


@contextlib.contextmanager
def serving(app: web.Application) -> Iterator[str]:
    """``app`` on a free loopback port, on a loop in a thread; yields its URL."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.run_until_complete(runner.cleanup())
        loop.close()


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def run(tmp: Path, benchmark: str, agent: Agent | None, store: Path | None = None, *,
        judge: str | None = None) -> Path:
    """One episode of ``benchmark`` by the hostile agent (None: the oracle), judged by the
    judge double or by an endpoint answering every request with ``judge``; into ``store``
    (default tmp/s.sqlite)."""
    store = store or tmp / "s.sqlite"
    app = web.Application(client_max_size=1 << 30)
    if agent is not None:
        app.router.add_post("/agent/v1/chat/completions", agent.complete)
    if judge is not None:
        app.router.add_post("/judge/v1/chat/completions",
                            Agent(lambda tool: {"role": "assistant", "content": judge}).complete)
    with serving(app) as url:
        config = tmp / "sweep.toml"
        config.write_text(
            f'benchmarks = ["{benchmark}"]\nuser_model = "scripted/user"\ntrials = 1\n'
            f'limit = 1\nmodels = ["{"hostile" if agent else "scripted/oracle"}"]\n'
            f'judge_models = ["{"hostile-judge" if judge else "scripted/judge"}"]\n'
            f'[[endpoints]]\nname = "hostile"\nbase_url = "{url}/agent/v1"\nmax_retries = 0\n'
            f'[[endpoints]]\nname = "hostile-judge"\nbase_url = "{url}/judge/v1"\n'
            'max_retries = 0\n', encoding="utf-8")
        # no preflight: its one chat request is not the episode's, and the attacks count requests
        cli("run", "--config", str(config), "--out", str(store), "--no-progress", "--no-preflight")
    return store


def episode(store: Path) -> tuple[Any, dict[str, dict]]:
    """The store's one record and its judgments by method (the last record and its own
    judgments when there are several)."""
    with RunStore(store, create=False) as s:
        key, record = list(s.records().items())[-1]
        return record, {j["method"]: j for j in s.judgments([key])}


def tool_answers(record: Any) -> list[str]:
    return [m.content for m in record.messages if type(m).__name__ == "ToolMessage"]


def counted(store: Path, bench: str) -> tuple[int, int, float]:
    """(tasks, unjudged, Avg) of the hostile model in ``report --json``."""
    report = json.loads(cli("report", str(store), "--json")[1])
    row = report["benchmarks"][bench]["models"]["hostile"]
    return row["tasks"], row["unjudged"], row["avg"]


# ---- point 3: what a model sends ------------------------------------------------------------

def deep_arguments(benchmark: str, bench: str, judge: str) -> Callable[[Path], tuple[str, bool]]:
    def attack(tmp: Path) -> tuple[str, bool]:
        store = run(tmp, benchmark, Agent(calling(DEEP)))
        record, judged = episode(store)
        answer = tool_answers(record)[0]
        tasks, unjudged, avg = counted(store, bench)
        verdicts = {m: (j["passed"], "error" in (j["details"] or {})) for m, j in judged.items()}
        got = (f"tool: {answer[-40:]!r}; verdicts {verdicts}; Avg@k over {tasks} task(s) "
               f"{avg}, {unjudged} unjudged")
        held = ("nest deeper than 64 levels" in answer and tasks == 1 and unjudged == 0
                and verdicts["state"] == (False, False) and verdicts[judge][1] is False)
        return got, held
    return attack


def many_calls(tmp: Path) -> tuple[str, bool]:
    agent = Agent(calling(*['{"keywords": ["x"]}'] * 10_000))
    record, judged = episode(run(tmp, VITA, agent))
    sliding = judged["sliding"]["details"]
    got = (f"{record.termination}: {record.error}; {agent.requests} agent request(s), largest "
           f"{agent.largest:,} B; judge: premature={sliding.get('premature')}")
    return got, (record.termination == "too_many_tool_calls" and agent.requests == 1
                 and agent.largest < 100_000 and sliding.get("premature") is True
                 and judged["sliding"]["score"] == 0.0)


def big_argument(tmp: Path) -> tuple[str, bool]:
    record, judged = episode(run(tmp, T1, Agent(calling(BIG))))
    answer = tool_answers(record)[0]
    got = f"tool: {answer[:70]!r}; state passed={judged['state']['passed']}"
    return got, "too large (5000009 bytes)" in answer and judged["state"]["passed"] is False


def odd_json(tmp: Path) -> tuple[str, bool]:
    record, judged = episode(run(tmp, VITA, Agent(calling(*ODD))))
    answers = tool_answers(record)
    got = f"{len(answers)} answers: {[a[-34:] for a in answers]}; judged {sorted(judged)}"
    unusable = ["not valid JSON" in a for a in answers]
    return got, (unusable == [False, True, True, True, False] and record.termination ==
                 "agent_stop" and sorted(judged) == ["sliding", "state"])


def deep_body(tmp: Path) -> tuple[str, bool]:
    nested = json.loads("[" * 500 + "]" * 500)
    agent = Agent(lambda tool: {"role": "assistant", "content": "x",
                                "reasoning_details": nested})
    record, judged = episode(run(tmp, T1, agent))
    got = f"{record.termination}: {record.error}"
    return got, (record.termination == "error" and "nested deeper than 128 levels"
                 in (record.error or "") and judged["state"]["passed"] is False)


def judge_replies(tmp: Path) -> tuple[str, bool]:
    """A judge answering with JSON nested 500 deep and an escaped lone surrogate: its
    verdicts are read (or the episode stays unjudged, the judge's fault), never a crash, and
    never blamed on the episode."""
    deep = "[" * 500 + "]" * 500
    reply = ('{"meetExpectation": true, "justification": ' + deep + '} then '
             '[{"rubric_idx": "rubric_0", "meetExpectation": true, "justification": "a\\ud800"}]'
             ' {"scores": {"helpfulness": {"score": 4, "reasoning": "\\ud800"}, '
             '"coherence": {"score": 5, "reasoning": ' + deep + '}}}')
    store = tmp / "s.sqlite"
    for benchmark in (VITA, T1):
        run(tmp, benchmark, None, store, judge=reply)
    with RunStore(store, create=False) as s:
        judged = {j["method"]: j for j in s.judgments() if j["method"] != "state"}
    blamed = [m for m, j in judged.items() if "could not be scored" in str(j["details"])]
    got = (f"{ {m: (j['passed'], j['score']) for m, j in judged.items()} }; blamed on the "
           f"episode: {blamed}")
    return got, sorted(judged) == ["likert", "sliding"] and not blamed


# ---- point 3: every reader of a store of hostile episodes ----------------------------------

@functools.cache
def hostile_store() -> Path:
    """T1 and VitaBench episodes with arguments nested 10,000 deep, 5 MB and odd, and a
    10,000-call reply, in one store (made once; removed at exit)."""
    tmp = Path(tempfile.mkdtemp(prefix="sb-hostile-readers-"))
    atexit.register(shutil.rmtree, tmp, True)
    store = tmp / "hostile.sqlite"
    for benchmark in (T1, VITA):
        run(tmp, benchmark, Agent(calling(DEEP, BIG, *ODD)), store)
    run(tmp, "vitabench:instore", Agent(calling(*["{}"] * 10_000)), store)
    return store


def report_formats(tmp: Path) -> tuple[str, bool]:
    store = hostile_store()
    codes = {"text": cli("report", str(store))[0], "json": cli("report", str(store), "--json")[0],
             "html": cli("report", str(store), "--html", str(tmp / "r.html"))[0]}
    return f"exit codes {codes}", set(codes.values()) == {0} and (tmp / "r.html").is_file()


def export_formats(tmp: Path) -> tuple[str, bool]:
    store = hostile_store()
    codes = {what: cli("export", str(store), *argv)[0] for what, argv in {
        "tables (parquet, csv, jsonl)": ["--tables", str(tmp / "t")],
        "trajectories": ["--trajectories", str(tmp / "t.jsonl")],
        "csv": ["--csv", str(tmp / "e.csv")],
        "inspect": ["--inspect", str(tmp / "inspect")]}.items()}
    written = sorted(p.name for p in (tmp / "t").iterdir())
    return (f"exit codes {codes}; tables {len(written)} files",
            set(codes.values()) == {0} and len(written) == 9)


def viewer_reads(tmp: Path) -> tuple[str, bool]:
    store = hostile_store()

    async def read() -> dict[str, Any]:
        async with TestClient(TestServer(build_app([store]), host="127.0.0.1")) as c:
            rows = (await (await c.get("/api/episodes", params={"store": store.stem})).json())
            statuses = []
            for row in rows["rows"]:
                for route in ("episode", "same-task"):
                    r = await c.get(f"/api/{route}", params={"store": store.stem,
                                                              "id": row["episode_key"]})
                    statuses.append((r.status, r.content_type))
            page = await c.get("/")
            return {"episodes": len(rows["rows"]), "answers": sorted(set(statuses)),
                    "page": page.status}

    seen = asyncio.run(read())
    return str(seen), seen == {"episodes": 3, "answers": [(200, "application/json")],
                               "page": 200}


# ---- point 8: the viewer's parameters and page -----------------------------------------------

def viewer_parameters(tmp: Path) -> tuple[str, bool]:
    store = hostile_store()
    asks = [("episodes", {"page": str(10**30)}), ("episodes", {"per_page": "-1"}),
            ("episodes", {"cursor": "-1", "q": "x"}), ("episodes", {"trial": "x"}),
            ("episodes", {"per_page": "1e9"}), ("episodes", {"bogus": "1"}),
            ("summary", {"src.nope": "a/b"}), ("episode", {"id": "ep-none"}),
            ("summary", {"store": "nope"})]

    async def ask() -> list[tuple[int, str]]:
        async with TestClient(TestServer(build_app([store]), host="127.0.0.1")) as c:
            out = []
            for route, params in asks:
                r = await c.get(f"/api/{route}", params={"store": store.stem, **params})
                out.append((r.status, (await r.json())["error"][:24]))
            return out

    answers = asyncio.run(ask())
    statuses = [s for s, _ in answers]
    return (f"{statuses}; e.g. {answers[0][1]!r}, {answers[1][1]!r}",
            statuses == [400] * 7 + [404, 404])


def chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)


def viewer_bidi(tmp: Path) -> tuple[str, bool]:
    """The episode page in headless Chromium (its DOM after the scripts ran)."""
    browser = chromium()
    if browser is None:
        return "headless Chromium is not installed: not checked", True
    store = hostile_store()
    with RunStore(store, create=False) as s:
        key = next(iter(s.records()))
    with serving(build_app([store])) as url:
        page = f"{url}/#/{store.stem}/episode?id={key}"
        dom = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=8000", "--dump-dom",
             page], capture_output=True, text=True, timeout=60).stdout
    shown = "done \\u202e0001\\u202c ###STOP###" in dom
    return (f"shown as {'escapes, in order' if shown else 'not found'}; raw U+202E in page: "
            f"{chr(0x202E) in dom}", shown and chr(0x202E) not in dom)


ATTACKS = [
    Attack(3, "T1: tool arguments nested 10,000 deep",
           "the tool answers an error; scored (failed), counted in Avg@k",
           deep_arguments(T1, "t1", "likert")),
    Attack(3, "VitaBench: tool arguments nested 10,000 deep",
           "the tool answers an error; judged, counted in Avg@k",
           deep_arguments(VITA, "vitabench@2025-12", "sliding")),
    Attack(3, "VitaBench: 10,000 tool calls in one reply",
           "ends as too_many_tool_calls, none run, scored 0", many_calls),
    Attack(3, "a 5 MB string argument", "the tool answers 'too large'; scored", big_argument),
    Attack(3, "odd JSON arguments (1e400, 10**5000, NaN, \\ud800, NUL)",
           "unusable ones answered as malformed; judged", odd_json),
    Attack(3, "a reply body nested 500 deep (reasoning_details)",
           "an invalid reply: the episode ends in error, scored", deep_body),
    Attack(3, "a judge replying 500 deep, with a lone surrogate",
           "verdicts read or unjudged; stored; not blamed on the episode", judge_replies),
    Attack(3, "report text / --json / --html over hostile episodes", "all exit 0",
           report_formats),
    Attack(3, "every export format over hostile episodes", "all exit 0", export_formats),
    Attack(3, "viewer API and page over hostile episodes", "every answer a JSON 200",
           viewer_reads),
    Attack(8, "viewer: page=10**30, per_page=-1, garbage parameters",
           "JSON 400 (404 for unknown ids), never 500 or 200", viewer_parameters),
    Attack(8, "viewer: a bidirectional override in model text",
           "shown as \\u202e, text in order", viewer_bidi),
]
