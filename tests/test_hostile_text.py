"""Markup and escape sequences in names, task ids, task text, server errors and judge details
print literally and crash no command (issue 9, point 7).

Each hostile string becomes an endpoint name, a task id and a task's text (the test-only
toyretail benchmark, its tasks replaced), an order id that the judge's details name, and the
error message of a server that answers 400; then ``run``, ``report``, ``tasks``, ``replay``
and the progress lines print them. Output is captured (not a terminal), so no escape
character at all may appear in it: rich adds none there, only a raw one from the input could.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import threading
from pathlib import Path

import pytest
from aiohttp import web
from rich.console import Console

from sweepbench import cli
from sweepbench.benchmarks import catalog, registry
from sweepbench.errors import ServerError
from sweepbench.results.text import literal, visible
from sweepbench.runner.progress import ProgressDisplay

PLUGIN = Path(__file__).resolve().parent / "plugins" / "toyretail"

HOSTILE = {
    "close-tag": "[/red]",
    "link": "[link=http://x]a[/link]",
    "redacted": "[redacted]",
    "clear-screen": "\x1b[2J",
    "bell": "\x07",
    "c1-csi": "\x9b31m",
}
RAW = ("\x1b", "\x07", "\x9b")


def assert_literal(text: str, hostile: str) -> None:
    assert visible(hostile) in text, f"{visible(hostile)!r} not printed literally"
    for raw in RAW:
        assert raw not in text, f"raw {raw!r} reached the output"


def test_visible_writes_control_characters_as_escapes():
    assert visible("a\x1b[2Jb\x07\x9b\u202e") == "a\\x1b[2Jb\\x07\\x9b\\u202e"
    assert visible("tab\tand\nnewline") == "tab\tand\nnewline"
    assert visible("a\nb\rc", one_line=True) == "a\\x0ab\\x0dc"
    assert visible("[/red] 中文 é") == "[/red] 中文 é"  # markup is left alone: literal() keeps it


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_literal_renders_exactly_what_was_written(hostile):
    console = Console(file=io.StringIO(), width=200)
    console.print(literal(f"name {hostile} end"))
    assert console.file.getvalue() == f"name {visible(hostile)} end\n"


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_progress_lines_print_names_and_errors_literally(hostile):
    now = [0.0]
    console = Console(file=io.StringIO(), width=300)
    display = ProgressDisplay(console, log_every_s=1.0, clock=lambda: now[0])
    display.update("planned", total=2, skipped=0)
    for _ in range(5):
        display.update("call", endpoint=f"ep{hostile}",
                       result=ServerError(f"HTTP 500: boom {hostile}", endpoint=f"ep{hostile}"))
    now[0] = 5.0
    assert display.tick()
    line = console.file.getvalue()
    assert_literal(line, f"ep{hostile}: ")
    assert_literal(line, f"boom {hostile}")
    # the live table (a terminal) renders the same cells without crashing
    live = Console(file=io.StringIO(), width=300)
    live.print(display._render())
    assert_literal(live.file.getvalue(), f"ep{hostile}")


@pytest.fixture(scope="module")
def hostile_server():
    """An OpenAI-compatible endpoint that answers every request 400 with the message
    ``boom <text>``, where <text> is what the test last set in ``message``."""
    message = {"text": ""}

    async def complete(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response({"error": {"message": f"boom {message['text']}"}}, status=400)

    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", complete)
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/v1", message
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5)
    loop.run_until_complete(runner.cleanup())
    loop.close()


@pytest.fixture
def hostile_tasks(monkeypatch):
    """toyretail, its one task renamed: id, instructions and order id carry the hostile text."""
    monkeypatch.setenv("SWEEPBENCH_PLUGINS", str(PLUGIN))
    module = sys.modules[type(registry.get("toyretail")).__module__]

    def use(hostile: str) -> str:
        task_id = f"T{hostile}x"
        monkeypatch.setattr(module, "_TASKS", [
            {"id": task_id, "cancel": f"#W{hostile}1", "keep": None,
             "instructions": f"Cancel order #W{hostile}1, no longer needed. {hostile}"}])
        _forget_tasks()
        return task_id

    yield use
    _forget_tasks()


def _forget_tasks() -> None:
    catalog._load.cache_clear()
    catalog._index.cache_clear()


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_commands_print_hostile_names_ids_errors_and_details_literally(
        hostile, hostile_server, hostile_tasks, tmp_path, capsys):
    url, message = hostile_server
    message["text"] = hostile
    task_id = hostile_tasks(hostile)
    name = f"m{hostile}"
    config = tmp_path / "sweep.toml"
    config.write_text(
        f'benchmarks = ["toyretail"]\nmodels = [{json.dumps(name)}]\ntrials = 1\n'
        f'[[endpoints]]\nname = {json.dumps(name)}\nbase_url = "{url}"\nmax_retries = 0\n',
        encoding="utf-8")
    store = tmp_path / "s.sqlite"

    # run: the endpoint's name in the leaderboard, the server's error in the reasons
    code = cli.main(["run", "--config", str(config), "--out", str(store), "--no-progress"])
    out, err = capsys.readouterr()
    assert isinstance(code, int)
    assert_literal(out, name)
    assert_literal(err, f"boom {hostile}")

    # report (terminal): the name again, and the error reason in its table
    assert cli.main(["report", str(store)]) == 0
    out, err = capsys.readouterr()
    assert_literal(out, name)
    assert "boom" in out and not any(raw in out + err for raw in RAW)

    # tasks: the task id and its instructions
    assert cli.main(["tasks", "--benchmark", "toyretail"]) == 0
    out, _ = capsys.readouterr()
    assert_literal(out, task_id)
    assert_literal(out, f"#W{hostile}1")

    # replay: a failing task's id and the judge's details (the order it left uncancelled)
    assert cli.main(["replay", "--benchmark", "toyretail", "--model", "scripted/noisy:1.0",
                     "--no-progress"]) == 1
    out, _ = capsys.readouterr()
    assert_literal(out, f"FAIL {task_id}: wrong status: #W{hostile}1")

    # an error naming a hostile id: one literal line
    assert cli.main(["report", str(store), "--model", name, "--judge", f"j{hostile}"]) == 2
    _, err = capsys.readouterr()
    assert_literal(err, f"j{hostile}")
    assert err.count("\n") == 1


@pytest.mark.parametrize("value", ["\x9b31m", "a\x7fb", "\u202eevil", "line\u2028sep", "ok"])
def test_json_output_keeps_its_value_and_no_raw_control_character(value: str) -> None:
    import json

    from sweepbench.results.text import json_text

    text = json_text(json.dumps({"id": value, "n": [value]}, ensure_ascii=False))
    assert json.loads(text) == {"id": value, "n": [value]}
    assert not any(0x7f <= ord(c) <= 0x9f or c in "\u202e\u2028" for c in text)


def test_a_chart_label_shows_control_characters_instead_of_drawing_them() -> None:
    from sweepbench.results.render.figures import _t

    assert _t("m\x1b[2J$x") == "m\\x1b[2J\\$x"
