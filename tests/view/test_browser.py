"""``sweepbench view`` in a real headless Chromium: the leaderboard renders, a cell lists its
episodes, a filter narrows the list, an episode shows its tool calls and each judge window's
rubric states, two episodes of a task sit side by side, and markup planted in the store is
shown as text and runs nothing.

Screenshots (1400 px wide) go to ``$SWEEPBENCH_SCREENS`` when set (else a temporary dir).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer

from sweepbench.results.store import RunStore
from sweepbench.view.server import build_app

from .cdp import Browser, chromium
from .conftest import PLANTED_MODEL, XSS_IMG, XSS_SCRIPT

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="headless Chromium is not installed (apt-get install chromium)")

ROWS = ("[...document.querySelectorAll('#episode-list tbody tr')].map(r => "
        "[...r.children].map(td => td.textContent))")


def route(run: str, view: str = "", **params: str) -> str:
    from urllib.parse import quote, urlencode
    path = f"#/tiny/{quote(run, safe='')}" + (f"/{view}" if view else "")
    return path + (f"?{urlencode(params)}" if params else "")


async def rendered(page: Browser, route_name: str, extra: str = "true") -> None:
    try:
        await page.wait_for(f"document.body.dataset.route === {json.dumps(route_name)} && "
                            f"document.getElementById('main').getAttribute('aria-busy') === "
                            f"'false' && !!({extra})")
    except TimeoutError:
        shown = await page.eval("location.hash + ' | ' + document.body.dataset.route + ' ' + document.getElementById('main').getAttribute('aria-busy') + ' ' + document.body.innerText.slice(0, 100)")
        raise AssertionError(f"not rendered: {shown}; problems: {page.problems()}") from None


async def test_viewer_in_headless_chromium(stored_run, tmp_path):
    screens = Path(os.environ.get("SWEEPBENCH_SCREENS") or tmp_path)
    run = stored_run["run_id"]
    with RunStore(stored_run["path"], create=False) as store:
        rows = store.episode_rows(run)
        judgments = store.judgments(run)
        records = dict(store.episode_records(run))
    app = build_app([stored_run["path"]])
    async with TestServer(app, host="127.0.0.1") as server, Browser(1400, 1000) as page:
        base = f"http://127.0.0.1:{server.port}/"

        # 1. The leaderboard: one row per model, one cell per (model, benchmark, domain).
        await page.goto(base)
        await rendered(page, "leaderboard", "document.querySelector('#leaderboard')")
        models = await page.eval("[...document.querySelectorAll('#leaderboard tbody tr')]"
                                 ".map(r => r.dataset.model)")
        assert sorted(models) == sorted({r["model"] for r in rows})
        assert PLANTED_MODEL in await page.eval("document.querySelector('#leaderboard').innerText")
        await page.screenshot(screens / "leaderboard.png")

        # 2. Clicking a cell lists the episodes behind it.
        cell = ('tr[data-model="scripted/noisy:0.3"] td.cell a[href*="benchmark=vitabench"]'
                '[href*="domain=delivery"]')
        await page.click(cell)
        await rendered(page, "episodes", "document.querySelector('#episode-list tbody tr')")
        listed = await page.eval(ROWS)
        want = [r for r in rows if r["model"] == "scripted/noisy:0.3"
                and r["benchmark"] == "vitabench" and r["domain"] == "delivery"]
        assert len(listed) == len(want) > 2
        assert {tuple(r[1:4]) for r in listed} == {("scripted/noisy:0.3", "vitabench", "delivery")}
        count = await page.eval("document.getElementById('list-count').textContent")
        assert count.startswith(f"{len(want)} episodes")
        await page.screenshot(screens / "episode-list.png")

        # 3. A filter narrows the list: failed episodes only.
        state = {j["episode_id"]: j["passed"] for j in judgments if j["method"] == "state"}
        failed = [r for r in want if state.get(r["episode_id"]) is False]
        assert 0 < len(failed) < len(want)
        await page.eval("(() => { const s = document.querySelector('select[name=outcome]');"
                        " s.value = 'failed'; s.dispatchEvent(new Event('change')); })()")
        await rendered(page, "episodes", "location.hash.includes('outcome=failed') && "
                       f"document.querySelectorAll('#episode-list tbody tr').length === {len(failed)}")
        narrowed = await page.eval(ROWS)
        assert {r[5] for r in narrowed} == {"failed"}
        assert sorted(r[0] for r in narrowed) == sorted(r["task_id"] for r in failed)

        # 4. One episode (a deep link): tool calls, and each window's rubric states.
        multi = max((j for j in judgments if j["method"] == "sliding"),
                    key=lambda j: (j["details"]["windows"], records[j["episode_id"]].tool_calls))
        eid = multi["episode_id"]
        assert multi["details"]["windows"] >= 2
        await page.goto(base + route(run, "episode", id=eid))
        await rendered(page, "episode", "document.querySelector('details.window')")
        names = await page.eval("[...document.querySelectorAll('details.toolcall .tool-name')]"
                                ".map(e => e.textContent)")
        rec = records[eid]
        assert names == [tc.function.name for m in rec.messages
                         if getattr(m, "tool_calls", None) for tc in m.tool_calls]
        assert names and await page.eval(
            "[...document.querySelectorAll('details.toolcall')].every(d => d.getBoundingClientRect().height > 0)")
        windows = await page.eval(
            "[...document.querySelectorAll('details.window')].map(w => ({index: +w.dataset.window, "
            "marks: [...w.querySelectorAll('tbody tr td.mark')].map(td => td.textContent), "
            "text: w.innerText}))")
        async with server_client(server) as get:
            api = await get("episode", run=run, id=eid)
        sliding = next(j for j in api["judgments"] if j["method"] == "sliding")
        assert [w["index"] for w in windows] == [w["index"] for w in sliding["windows"]]
        for shown, w in zip(windows, sliding["windows"]):
            assert shown["marks"] == ["✓" if s["met"] else "✗" for s in w["states"]]
            for s in w["states"]:
                assert s["rubric"] in shown["text"]
                assert s["justification"].strip() in shown["text"]
        # expanding a tool call shows its result
        await page.click("details.toolcall summary")
        assert await page.eval("document.querySelector('details.toolcall').open") is True
        await page.screenshot(screens / "episode.png")

        # 5. Side by side: the same task's episodes of two models.
        other = next(r["episode_id"] for r in rows if r["model"] == "scripted/oracle"
                     and r["task_id"] == rec.task_id and r["trial"] == rec.trial)
        await page.goto(base + route(run, "compare", a=eid, b=other))
        await rendered(page, "compare", "document.querySelectorAll('.side .conversation').length === 2")
        heads = await page.eval("[...document.querySelectorAll('.side h2')].map(h => h.textContent)")
        assert heads == [f"{rec.model} · trial {rec.trial}", f"scripted/oracle · trial {rec.trial}"]
        await page.screenshot(screens / "side-by-side.png")

        # 6. Planted markup is text: nothing runs, loads or opens.
        await page.goto(base + route(run, "episode", id=stored_run["planted"]))
        await rendered(page, "episode", "document.querySelector('.msg.assistant')")
        await page.click("details.toolcall summary")
        text = await page.eval("document.body.innerText")
        for planted in (XSS_SCRIPT, XSS_IMG, "<b>bold_tool</b>", "<svg onload=alert(5)>",
                        '<iframe src="javascript:alert(4)"></iframe>',
                        "order <img src=x onerror=alert(7)> differs"):
            assert planted in text, planted
        assert await page.eval("typeof window.__xss") == "undefined"
        assert await page.eval("document.images.length + document.querySelectorAll("
                               "'iframe, svg, b, main script').length") == 0
        assert page.dialogs == []
        assert not [u for u in page.requests if u.rstrip("/").endswith("/x")]
        await page.screenshot(screens / "planted-markup.png")
        assert page.problems() == []


def server_client(server: TestServer):
    """``async with server_client(s) as get: await get(name, **params)`` for the API."""
    import contextlib

    import aiohttp

    @contextlib.asynccontextmanager
    async def session():
        async with aiohttp.ClientSession() as http:
            async def get(name: str, **params: str) -> dict:
                async with http.get(f"http://127.0.0.1:{server.port}/api/{name}",
                                    params={"store": "tiny", **params}) as resp:
                    assert resp.status == 200
                    return await resp.json()
            yield get

    return session()
