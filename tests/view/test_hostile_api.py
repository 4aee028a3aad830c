"""The viewer's API against hostile requests and hostile store text: every parameter checked
(a JSON 400, 404 for what does not exist), a handler's bug a JSON 500, and model output no
decoder survives (arguments nested 10,000 deep, odd JSON) shown as written."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from sweepbench.results.text import visible
from sweepbench.runner.build import benchmark_info
from sweepbench.view import server as view_server
from sweepbench.view.server import STATIC, build_app
from sweepbench.wire import AssistantMessage, FunctionCall, ToolCall, UserMessage

from .cdp import Browser, chromium
from .conftest import plant

DEEP = '{"q": ' + "[" * 10_000 + "]" * 10_000 + "}"
ODD = ['{"q": 1e400}', '{"q": ' + "9" * 5000 + "}", '{"q": NaN}', '{"q": "\\ud800"}',
       '{"q": "nul\\u0000"}']


@pytest.fixture(scope="module")
def hostile_store(stored_run, tmp_path_factory) -> dict:
    """A copy of the viewer's store with one more episode: tool calls whose arguments nest
    10,000 deep or are odd JSON, and a reply with a bidirectional override."""
    path = tmp_path_factory.mktemp("hostile") / "tiny.sqlite"
    shutil.copy(stored_run["path"], path)
    calls = [ToolCall(f"c{i}", FunctionCall("search", a)) for i, a in enumerate([DEEP, *ODD])]
    # the calls last: the journal's one reply (what the page ties calls to) holds them too
    messages = [UserMessage("find it"), AssistantMessage("total: \u202e0001 USD\u202c, done"),
                AssistantMessage(None, tool_calls=calls)]
    key = plant(path, stored_run["run_id"], "hostile/deep", messages)
    return {"path": path, "key": key}


@pytest.fixture
async def client(hostile_store):
    app = build_app([hostile_store["path"]], benchmarks=benchmark_info())
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        yield c


async def test_an_episode_with_arguments_no_decoder_survives_is_served_as_written(
        client, hostile_store):
    resp = await client.get("/api/episode", params={"store": "tiny", "id": hostile_store["key"]})
    assert resp.status == 200, await resp.text()
    data = await resp.json()
    sent = [tc["function"]["arguments"] for tc in data["messages"][2]["tool_calls"]]
    assert sent == [DEEP, *ODD]
    assert data["messages"][1]["content"] == "total: \u202e0001 USD\u202c, done"  # exact
    assert [c["message_index"] for c in data["calls"]] == [2]  # the reply found its message
    same = await client.get("/api/same-task", params={"store": "tiny", "id": hostile_store["key"]})
    assert same.status == 200
    found = await client.get("/api/episodes", params={"store": "tiny", "q": "0001 USD"})
    assert [r["episode_key"] for r in (await found.json())["rows"]] == [hostile_store["key"]]


KNOWN = ("store, run, model, user_model, user_mode, benchmark, domain, task, trial, outcome, "
         "termination, q, page, per_page, cursor")


@pytest.mark.parametrize("route, params, status, error", [
    ("episodes", {"page": str(10**30)}, 400, "page must be in 0..2147483647, got 10000000000000000000…"),
    ("episodes", {"page": "-1"}, 400, "page must be in 0..2147483647, got -1"),
    ("episodes", {"per_page": "-1"}, 400, "per_page must be in 1..200, got -1"),
    ("episodes", {"per_page": "0"}, 400, "per_page must be in 1..200, got 0"),
    ("episodes", {"per_page": "201"}, 400, "per_page must be in 1..200, got 201"),
    ("episodes", {"q": "x", "cursor": "-3"}, 400, "cursor must be in 0..2147483647, got -3"),
    ("episodes", {"trial": "-1"}, 400, "trial must be in 0..2147483647, got -1"),
    ("episodes", {"trial": "1e3"}, 400, "trial must be an integer, got '1e3'"),
    ("episodes", {"page": "１"}, 400, "page must be an integer, got '１'"),  # a fullwidth digit
    ("episodes", {"outcome": "sideways"}, 400,
     "outcome must be one of passed, failed, error, unjudged, running, unreachable, "
     "superseded, got 'sideways'"),
    ("episodes", {"bogus": "1"}, 400, f"unknown parameter 'bogus' for /api/episodes (known: "
                                      f"{KNOWN})"),
    ("stores", {"store": "tiny"}, 400, "unknown parameter 'store' for /api/stores (known: none)"),
    ("episode", {"run": "x"}, 400, "unknown parameter 'run' for /api/episode (known: store, id)"),
    ("summary", {"src.nope": "state/state"}, 400,
     "no benchmark 'nope' in this scope (benchmarks: t1, vitabench@2025-12)"),
    ("summary", {"src.t1": "nobody/likert"}, 400,
     "no 'nobody/likert' judgments of t1 in this scope (pairs: scripted/judge/likert, "
     "state/state)"),
    ("summary", {"store": "nope"}, 404, "no store 'nope' in this viewer (stores: tiny)"),
    ("summary", {"run": "run-x"}, 404, "no run 'run-x' in tiny.sqlite"),
    ("episode", {"id": "ep-nobody"}, 404, "no episode 'ep-nobody' in tiny.sqlite"),
])
async def test_every_parameter_is_checked_with_a_json_error(client, route, params, status,
                                                           error):
    resp = await client.get(f"/api/{route}", params={"store": "tiny", **params}
                            if route != "stores" else params)
    assert (resp.status, resp.content_type) == (status, "application/json")
    assert await resp.json() == {"error": error}


async def test_a_repeated_parameter_and_an_unknown_route_are_json_errors(client):
    resp = await client.get("/api/episodes?store=tiny&page=1&page=2")
    assert (resp.status, await resp.json()) == (
        400, {"error": "parameter 'page' given more than once"})
    resp = await client.get("/api/nope")
    assert (resp.status, resp.content_type, await resp.json()) == (
        404, "application/json", {"error": "Not Found"})


async def test_a_bug_in_a_handler_is_a_json_500_and_logged(hostile_store, monkeypatch,
                                                           caplog):
    def broken(self, q):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(view_server._Viewer, "episode", broken)
    app = build_app([hostile_store["path"]])
    with caplog.at_level(logging.ERROR, logger="sweepbench.view.server"):
        async with TestClient(TestServer(app, host="127.0.0.1")) as client:
            resp = await client.get("/api/episode", params={"store": "tiny", "id": "ep-x"})
            assert (resp.status, resp.content_type) == (500, "application/json")
            assert await resp.json() == {
                "error": "internal error: RecursionError (the viewer's log has the details)"}
    (logged,) = caplog.records
    assert logged.getMessage() == "viewer: GET /api/episode?store=tiny&id=ep-x failed"
    assert logged.exc_info[0] is RecursionError


def test_the_page_shows_the_same_characters_as_escapes_as_the_terminal(tmp_path):
    """dom.js's ``visible`` against results/text.py's, on every character of the BMP."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    module = tmp_path / "dom.mjs"
    module.write_text((STATIC / "dom.js").read_text(encoding="utf-8"), encoding="utf-8")
    script = tmp_path / "run.mjs"
    script.write_text(
        f"import {{visible}} from {json.dumps(module.as_uri())};\n"
        "let all = '';\n"
        "for (let c = 0; c < 0x10000; c++) if (c < 0xd800 || c > 0xdfff) "
        "all += String.fromCharCode(c);\n"
        "process.stdout.write(JSON.stringify(visible(all)));\n", encoding="utf-8")
    shown = json.loads(subprocess.run([node, str(script)], capture_output=True, check=True,
                                      timeout=60).stdout)
    everything = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
    assert shown == visible(everything)
    assert visible("a\u202eb\u061c\u200bc\u200dd") == "a\\u202eb\\u061c\\u200bc\u200dd"


@pytest.mark.skipif(chromium() is None, reason="headless Chromium is not installed")
async def test_a_bidi_override_reads_in_order_with_the_control_shown(hostile_store, tmp_path):
    screens = Path(os.environ.get("SWEEPBENCH_SCREENS") or tmp_path)
    app = build_app([hostile_store["path"]], benchmarks=benchmark_info())
    async with TestServer(app, host="127.0.0.1") as server, Browser(1400, 1000) as page:
        await page.goto(f"http://127.0.0.1:{server.port}/#/tiny/episode?id={hostile_store['key']}")
        await page.wait_for("document.body.dataset.route === 'episode' && "
                            "!!document.querySelector('.msg.assistant')")
        for summary in range(len(ODD) + 1):
            await page.eval(f"document.querySelectorAll('details.toolcall')[{summary}].open = true")
        text = await page.eval("document.body.innerText")
        assert "total: \\u202e0001 USD\\u202c, done" in text
        assert "\u202e" not in text and "\u202c" not in text
        assert '{"q": [[[[' in text  # arguments nested 10,000 deep, shown as written
        shown = await page.eval("[...document.querySelectorAll('pre.args')].map(p => p.textContent)")
        assert shown[1:3] == [ODD[0], ODD[1]]  # numbers JavaScript cannot hold: as written
        assert shown[4:] == ['{\n  "q": "\\ud800"\n}', '{\n  "q": "nul\\u0000"\n}']
        assert page.problems() == []
        await page.screenshot(screens / "bidi-override.png")
