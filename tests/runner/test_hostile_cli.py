"""`sweepbench run`, `report`, `export` and `judge` against hostile servers (issue 9): a canary
key echoed every way never lands anywhere; a judge whose output is unreadable leaves episodes
unjudged, and every command says so."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import msgspec
from aiohttp import web

from sweepbench.cli import main
from sweepbench.client.secrets import MIN_RUN
from sweepbench.client.transports.memory import completion
from tests.support import thread_app

CANARY = "sk-canary-e2e-5c1f9a7d3b0e2c4a6f8d1b3e5a7c9f0d"
ENV = "SWEEPBENCH_HOSTILE_KEY"


@contextmanager
def thread_server(reply: Callable[[int, web.Request], web.StreamResponse]) -> Iterator[str]:
    """An aiohttp server on its own thread and loop (the CLI runs a loop of its own);
    ``reply(i, request)`` answers the i-th request."""
    state: dict = {"n": 0}

    async def handle(request: web.Request) -> web.StreamResponse:
        await request.read()
        state["n"] += 1
        return reply(state["n"] - 1, request)

    def app() -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handle)
        return app

    with thread_app(app) as url:
        yield f"{url}/v1"


def echo_forms() -> list[str]:
    raw = CANARY.encode()
    return [CANARY, "Bearer " + CANARY[:24], CANARY.upper(), CANARY[:20] + "\n  " + CANARY[20:],
            base64.b64encode(b"user:" + raw).decode(), base64.urlsafe_b64encode(raw).decode(),
            CANARY[-(MIN_RUN + 3):]]


def hostile(i: int, request: web.Request) -> web.StreamResponse:
    """Echoes the key (and the Authorization header it got) in every place a server can."""
    forms = echo_forms()
    form = forms[i % len(forms)]
    auth = request.headers.get("Authorization", "")
    headers = {"X-Echo": form.replace("\n", " "), "X-Auth": auth}
    kind = (i + 1) % 6  # the first, the preflight's chat request, is answered (kind 1)
    if kind == 0:
        return web.json_response({"error": {"message": "x" * 60 + f" {auth} {form}",
                                            "type": form}}, status=500, headers=headers)
    if kind == 1:
        return web.json_response(completion(f"Here you go: {form}"), headers=headers)
    if kind == 2:
        return web.json_response(completion(None, tool_calls=[{
            "id": "c", "type": "function", "function": {"name": "x", "arguments": {"k": form}}}]),
            headers=headers)
    if kind == 3:
        return web.json_response(completion("ok", reasoning_content=f"it said {form}"),
                                 headers=headers)
    if kind == 4:
        return web.Response(status=429, text=("y" * 75 + form), headers={
            **headers, "Retry-After": "0"})
    return web.json_response({"error": {"message": f"Incorrect API key provided: {auth}"}},
                             status=401, headers=headers)


def pieces() -> list[str]:
    b64 = base64.b64encode(CANARY.encode()).decode()
    return [s[i:i + MIN_RUN] for s in (CANARY, CANARY.upper(), b64, b64.replace("+", "-"))
            for i in range(len(s) - MIN_RUN + 1)]


def test_a_canary_echoed_every_way_lands_nowhere(tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.setenv(ENV, CANARY)
    caplog.set_level(logging.DEBUG)
    with thread_server(hostile) as url:
        config = tmp_path / "sweep.toml"
        config.write_text(
            'benchmarks = ["vitabench:delivery"]\nmodels = ["echoer"]\ntrials = 2\nlimit = 4\n'
            f'[[endpoints]]\nname = "echoer"\nbase_url = "{url}"\napi_key_env = "{ENV}"\n'
            "max_retries = 2\nbreaker_threshold = 1000\n")
        store = tmp_path / "s.sqlite"
        main(["run", "--config", str(config), "--out", str(store), "--no-progress",
              "--judge-model", "scripted/judge"])
        wal = {p.name: p.read_bytes() for p in tmp_path.glob("s.sqlite-*")}  # before closing
        assert main(["report", str(store)]) == 0
        assert main(["report", str(store), "--json"]) == 0
        assert main(["report", str(store), "--html", str(tmp_path / "r.html")]) == 0
        assert main(["export", str(store), "--trajectories", str(tmp_path / "t.jsonl"),
                     "--csv", str(tmp_path / "r.csv")]) == 0
    out = capsys.readouterr()
    report = json.loads(out.out[out.out.index("{"):])
    echoer = report["models"]["echoer"]
    assert echoer["errors"] == 8  # every episode ends in an error of the endpoint
    reasons = " ".join(r["example"] for r in report["error_reasons"])
    assert "contains an API key" in reasons and "[redacted]" in reasons
    texts = {"stdout": out.out, "stderr": out.err, "logs": caplog.text,
             **{name: data.decode("utf-8", "replace") for name, data in wal.items()}}
    for path in tmp_path.iterdir():
        texts[path.name] = path.read_bytes().decode("utf-8", "replace")
    assert {"s.sqlite", "r.html", "t.jsonl", "r.csv"} <= set(texts)
    found = {name: [p for p in pieces() if p in "".join(text.split())]
             for name, text in texts.items()}
    assert not any(found.values()), {n: f[:3] for n, f in found.items() if f}


def test_a_judge_with_unreadable_output_leaves_episodes_unjudged(tmp_path, capsys):
    def garbled(i: int, request: web.Request) -> web.StreamResponse:
        return web.json_response(completion("I cannot decide; it depends."))

    with thread_server(garbled) as url:
        config = tmp_path / "sweep.toml"
        config.write_text(
            'benchmarks = ["vitabench:delivery"]\nmodels = ["scripted/oracle"]\ntrials = 1\n'
            f'limit = 3\njudge_methods = ["sliding"]\njudge_models = ["garbler"]\n'
            f'[[endpoints]]\nname = "garbler"\nbase_url = "{url}"\nmax_retries = 0\n')
        store = tmp_path / "s.sqlite"
        assert main(["run", "--config", str(config), "--out", str(store),
                     "--no-progress"]) == 0
        run_err = capsys.readouterr().err
        assert main(["report", str(store), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert main(["report", str(store)]) == 0
        table = capsys.readouterr().out
        assert main(["judge", str(store), "--judge-model", "garbler",
                     "--method", "sliding"]) == 0
        judge_err = capsys.readouterr().err
    assert "3 judgments by garbler / sliding failed" in run_err
    oracle = report["benchmarks"]["vitabench@2025-12"]["models"]["scripted/oracle"]
    assert oracle["unjudged"] == 3 and oracle["avg"] is None  # never a silent 0
    assert oracle["state"] == 1.0  # the state check still judged them
    (row,) = report["unjudged_by_judge"]
    assert (row["judge"], row["method"], row["episodes"]) == ("garbler", "sliding", 3)
    assert row["reason"].startswith("no readable judge output in ")
    assert "left unjudged" in table and "garbler" in table and "no readable judge" in table
    assert "3 judgments by garbler / sliding failed (left unjudged)" in judge_err
    details = [msgspec.json.decode(d) for (d,) in __import__("sqlite3").connect(store).execute(
        "select details from judgments where judge = 'garbler'")]
    assert details and all(d["unjudged_windows"] >= 1 and d["error"] for d in details)
