"""``sweepbench view`` in a real headless Chromium: the leaderboard renders, a cell lists its
episodes, a filter narrows the list, an episode shows its tool calls and each judge window's
rubric states, two episodes of a task sit side by side, and markup planted in the store is
shown as text and runs nothing.

Screenshots (1400 px wide; leaderboard, episode list, a VitaBench episode with its judge windows,
a T1 episode with its metrics, side by side, planted markup) go to ``$SWEEPBENCH_SCREENS`` when set (else a temporary dir).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer

from sweepbench.store.runstore import RunStore
from sweepbench.runner.build import benchmark_info
from sweepbench.view.server import build_app

from .cdp import Browser, chromium
from .conftest import PLANTED_MODEL, XSS_IMG, XSS_SCRIPT

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="headless Chromium is not installed (apt-get install chromium)")

ROWS = ("[...document.querySelectorAll('#episode-list tbody tr')].map(r => "
        "[...r.children].map(td => td.textContent))")


def route(view: str = "", **params: str) -> str:
    from urllib.parse import urlencode
    return "#/tiny" + (f"/{view}" if view else "") + (f"?{urlencode(params)}" if params else "")


async def rendered(page: Browser, route_name: str, extra: str = "true") -> None:
    try:
        await page.wait_for(f"document.body.dataset.route === {json.dumps(route_name)} && "
                            f"document.getElementById('main').getAttribute('aria-busy') === "
                            f"'false' && !!({extra})")
    except TimeoutError:
        shown = await page.eval("location.hash + ' | ' + document.body.dataset.route + ' ' + document.getElementById('main').getAttribute('aria-busy') + ' ' + document.body.innerText.slice(0, 100)")
        raise AssertionError(f"not rendered: {shown}; problems: {page.problems()}") from None


async def overflows(page: Browser) -> list[str]:
    """Elements wider than the page (what would need a horizontal scroll outside a .scroll)."""
    return await page.eval(
        "[...document.querySelectorAll('main *')].filter(e => !e.closest('.scroll') && "
        "e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)"
        ".map(e => e.tagName + '.' + e.className).slice(0, 5)")


async def test_viewer_in_headless_chromium(stored_run, tmp_path):
    screens = Path(os.environ.get("SWEEPBENCH_SCREENS") or tmp_path)
    with RunStore(stored_run["path"], create=False) as store:
        rows = store.episode_rows()
        judgments = store.judgments()
        records = store.records()
    app = build_app([stored_run["path"]], benchmarks=benchmark_info())
    async with TestServer(app, host="127.0.0.1") as server, Browser(1400, 1000) as page:
        base = f"http://127.0.0.1:{server.port}/"
        async with server_client(server) as get:
            summary = await get("summary")
        names = {c["name"] for c in summary["cells"]}

        # 1. The leaderboards: one per benchmark, each by its headline; a pooled one.
        await page.goto(base)
        await rendered(page, "leaderboard", "document.querySelector('#leaderboard')")
        shown = await page.eval("[...document.querySelectorAll('#leaderboard tbody tr')]"
                                ".map(r => r.dataset.model)")
        assert sorted(shown) == sorted(names) and PLANTED_MODEL in shown
        titles = await page.eval("[...document.querySelectorAll('section.bench-board')]"
                                 ".map(s => s.innerText.split('\\n')[0])")
        sources = await page.eval("[...document.querySelectorAll('.source-text')]"
                                  ".map(s => s.textContent)")
        assert any("scripted/judge / sliding" in t for t in sources)  # VitaBench's headline
        assert any("(state check)" in t for t in sources)  # T1's
        assert titles and await overflows(page) == []
        await page.screenshot(screens / "leaderboard.png")

        # 2. Clicking a cell lists the episodes behind it.
        cell = ('section[data-benchmark="vitabench@2025-12"] tr[data-model="scripted/noisy:0.3"] '
                'td.cell a[href*="domain=delivery"]')
        await page.click(cell)
        await rendered(page, "episodes", "document.querySelector('#episode-list tbody tr')")
        listed = await page.eval(ROWS)
        async with server_client(server) as get:
            want = (await get("episodes", model="scripted/noisy:0.3", benchmark="vitabench@2025-12",
                              domain="delivery", per_page="200"))["rows"]
        assert len(listed) == len(want) == 6
        assert {tuple(r[1:4]) for r in listed} == {("scripted/noisy:0.3", "vitabench@2025-12", "delivery")}
        count = await page.eval("document.getElementById('list-count').textContent")
        assert count.startswith(f"{len(want)} episodes")
        await page.screenshot(screens / "episode-list.png")

        # 3. A filter narrows the list: failed episodes only (under the sliding judge).
        failed = [r for r in want if r["outcome"] == "failed"]
        assert 0 < len(failed) < len(want)
        await page.eval("(() => { const s = document.querySelector('select[name=outcome]');"
                        " s.value = 'failed'; s.dispatchEvent(new Event('change')); })()")
        await rendered(page, "episodes", "location.hash.includes('outcome=failed') && "
                       f"document.querySelectorAll('#episode-list tbody tr').length === {len(failed)}")
        narrowed = await page.eval(ROWS)
        assert {r[5] for r in narrowed} == {"failed"}
        assert sorted(r[0] for r in narrowed) == sorted(r["task_id"] for r in failed)

        # 4. One VitaBench episode (a deep link): tool calls, each window's rubric states,
        #    and what its key is the hash of.
        multi = max((j for j in judgments if j["method"] == "sliding"
                     and records[j["episode_key"]].model == "scripted/noisy:0.3"
                     and records[j["episode_key"]].run_id == stored_run["run_id"]),
                    key=lambda j: (j["details"].get("windows", 0),
                                   records[j["episode_key"]].tool_calls))
        key = multi["episode_key"]
        assert multi["details"]["windows"] >= 2
        await page.goto(base + route("episode", id=key))
        await rendered(page, "episode", "document.querySelector('details.window')")
        names_shown = await page.eval("[...document.querySelectorAll('details.toolcall .tool-name')]"
                                      ".map(e => e.textContent)")
        rec = records[key]
        assert names_shown == [tc.function.name for m in rec.messages
                               if getattr(m, "tool_calls", None) for tc in m.tool_calls]
        assert names_shown and await page.eval(
            "[...document.querySelectorAll('details.toolcall')].every(d => d.getBoundingClientRect().height > 0)")
        windows = await page.eval(
            "[...document.querySelectorAll('details.window')].map(w => ({index: +w.dataset.window, "
            "marks: [...w.querySelectorAll('tbody tr td.mark')].map(td => td.textContent), "
            "text: w.innerText}))")
        async with server_client(server) as get:
            api = await get("episode", id=key)
        sliding = next(j for j in api["judgments"] if j["method"] == "sliding")
        assert [w["index"] for w in windows] == [w["index"] for w in sliding["windows"]]
        for shown_w, w in zip(windows, sliding["windows"]):
            assert shown_w["marks"] == ["✓" if st["met"] else "✗" for st in w["states"]]
            for st in w["states"]:
                assert st["rubric"] in shown_w["text"]
                assert st["justification"].strip() in shown_w["text"]
        decides = await page.eval("[...document.querySelectorAll('.judgment')].filter(j => "
                                  "j.querySelector('.badge.source')).map(j => j.dataset.judge)")
        assert decides == ["scripted/judge/sliding"]
        identity = await page.eval("document.getElementById('identity').innerText")
        assert key in identity and api["identity"]["task"][:12] in identity
        assert "scripted/noisy:0.3" in identity or "scripted/oracle" in identity
        # expanding a tool call shows its result
        await page.click("details.toolcall summary")
        assert await page.eval("document.querySelector('details.toolcall').open") is True
        assert await overflows(page) == []
        await page.screenshot(screens / "episode.png")

        # 5. A T1 episode: the state check's tool / parameter / output metrics.
        t1 = next(r["episode_key"] for r in rows if r["benchmark"] == "t1"
                  and r["model"] == "scripted/noisy:0.3")
        await page.goto(base + route("episode", id=t1))
        await rendered(page, "episode", "document.querySelector('table.metrics')")
        metrics = await page.eval("document.querySelector('.judgment[data-judge=\"state/state\"] "
                                  "table.metrics').innerText")
        assert all(w in metrics for w in ("tool", "param", "f1", "precision"))
        await page.screenshot(screens / "episode-t1.png")

        # 6. Side by side: the same task's episodes of two models.
        other = next(r["episode_key"] for r in rows if r["model"] == "scripted/oracle"
                     and r["task_id"] == rec.task_id and r["trial"] == rec.trial
                     and r["user_mode"] == "default")
        await page.goto(base + route("compare", a=key, b=other))
        await rendered(page, "compare", "document.querySelectorAll('.side .conversation').length === 2")
        heads = await page.eval("[...document.querySelectorAll('.side h2')].map(h => h.textContent)")
        assert heads == [f"{rec.model} · trial {rec.trial}",
                         f"scripted/oracle [user scripted/user, default] · trial {rec.trial}"]
        assert await overflows(page) == []
        await page.screenshot(screens / "side-by-side.png")

        # 7. Another source for T1, chosen on the page: the URL carries it.
        await page.goto(base)
        await rendered(page, "leaderboard", "document.querySelector('#leaderboard')")
        await page.eval("(() => { const s = document.querySelector('select.source[data-benchmark=t1]');"
                        " s.value = 'state/state'; s.dispatchEvent(new Event('change')); })()")
        await page.eval("(() => { const s = document.querySelector('select.source[data-benchmark=\"vitabench@2025-12\"]');"
                        " s.value = 'state/state'; s.dispatchEvent(new Event('change')); })()")
        await rendered(page, "leaderboard", "decodeURIComponent(location.hash).includes('src.vitabench@2025-12=state') && "
                       "document.querySelector('section[data-benchmark=\"vitabench@2025-12\"] .source-text')"
                       ".textContent.includes('chosen here')")

        # 8. Planted markup is text: nothing runs, loads or opens.
        await page.goto(base + route("episode", id=stored_run["planted"]))
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
