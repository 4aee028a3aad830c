"""The viewer's JSON API on a small stored run, checked against the store's own read methods."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from sweepbench.cli import main
from sweepbench.errors import ConfigError, StoreError
from sweepbench.ids import STATE_JUDGE, EpisodeId
from sweepbench.judge.rubric import make_windows
from sweepbench.results.profile import Prices, usage_cost
from sweepbench.results.store import RunStore
from sweepbench.view.queries import Filters, StoreReader
from sweepbench.view.server import SECURITY_HEADERS, build_app, is_loopback, serve, store_ids
from sweepbench.wire import Usage

from .conftest import PLANTED_MODEL, XSS_SCRIPT

PRICES = {"scripted/noisy:0.3": Prices(input=2.0, cached_input=0.5, output=8.0)}


@pytest.fixture
async def client(stored_run):
    app = build_app([stored_run["path"]], prices=PRICES)
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        yield c


async def get(client, name, **params):
    resp = await client.get(f"/api/{name}", params={"store": "tiny", **params})
    assert resp.status == 200, await resp.text()
    return await resp.json()


@pytest.fixture(scope="module")
def truth(stored_run):
    """What the store's public reads say: rows, judgments, records."""
    with RunStore(stored_run["path"], create=False) as store:
        run = stored_run["run_id"]
        return {"rows": store.episode_rows(run), "judgments": store.judgments(run),
                "records": dict(store.episode_records(run))}


async def test_summary_counts_match_the_store(client, stored_run, truth):
    s = await get(client, "summary", run=stored_run["run_id"])
    assert (s["judge"], s["method"]) == (STATE_JUDGE, "state")  # most verdicts
    pairs = {(p["judge"], p["method"]): p for p in s["pairs"]}
    judged = Counter((j["judge"], j["method"]) for j in truth["judgments"])
    assert {k: p["episodes"] for k, p in pairs.items()} == dict(judged)
    state = {j["episode_id"]: j["passed"] for j in truth["judgments"] if j["method"] == "state"}
    want = Counter()
    for r in truth["rows"]:
        key = (r["model"], r["benchmark"], r["domain"])
        want[key, "episodes"] += 1
        if r["status"] == "error":
            want[key, "error"] += 1
        elif state.get(r["episode_id"]):
            want[key, "passed"] += 1
    got = Counter()
    for c in s["cells"]:
        key = (c["model"], c["benchmark"], c["domain"])
        for k in ("episodes", "error", "passed"):
            got[key, k] += c[k]
        assert c["episodes"] == c["passed"] + c["failed"] + c["error"] + c["unjudged"] + c["running"]
    assert +got == +want
    assert "user_stop" in s["terminations"] and s["trials"] == [0, 1]


async def test_another_judge_decides_the_cells(client, stored_run, truth):
    s = await get(client, "summary", run=stored_run["run_id"], judge="scripted/judge",
                  method="sliding")
    sliding = {j["episode_id"]: j["passed"] for j in truth["judgments"] if j["method"] == "sliding"}
    assert sum(c["passed"] for c in s["cells"]) == sum(bool(v) for v in sliding.values())
    t1 = [c for c in s["cells"] if c["benchmark"] == "t1"]
    assert t1 and all(c["unjudged"] == c["episodes"] - c["error"] for c in t1)  # VitaBench's


async def test_filters_narrow_and_pages_cover_the_list(client, stored_run, truth):
    run = stored_run["run_id"]
    everything = await get(client, "episodes", run=run, per_page=200)
    assert everything["total"] == len(truth["rows"])
    pages, page = [], 0
    while True:
        got = await get(client, "episodes", run=run, per_page=7, page=page)
        if not got["rows"]:
            break
        pages += [r["episode_id"] for r in got["rows"]]
        page += 1
    assert pages == [r["episode_id"] for r in everything["rows"]]
    assert len(set(pages)) == len(truth["rows"])

    noisy = await get(client, "episodes", run=run, model="scripted/noisy:0.3",
                      benchmark="vitabench", domain="delivery", per_page=200)
    want = [r for r in truth["rows"] if r["model"] == "scripted/noisy:0.3"
            and r["benchmark"] == "vitabench" and r["domain"] == "delivery"]
    assert noisy["total"] == len(want) > 0
    failed = await get(client, "episodes", run=run, model="scripted/noisy:0.3", outcome="failed",
                       per_page=200)
    state = {j["episode_id"]: j["passed"] for j in truth["judgments"] if j["method"] == "state"}
    want_failed = {r["episode_id"] for r in truth["rows"] if r["model"] == "scripted/noisy:0.3"
                   and r["status"] == "done" and state.get(r["episode_id"]) is False}
    assert {r["episode_id"] for r in failed["rows"]} == want_failed
    assert failed["total"] == len(want_failed)  # counted from the cached cells
    narrowed = await get(client, "episodes", run=run, model="scripted/noisy:0.3",
                         outcome="failed", termination="user_stop", per_page=2)
    assert narrowed["total"] == len(want_failed) and len(narrowed["rows"]) == 2  # counted by SQL
    assert all(r["outcome"] == "failed" for r in failed["rows"])
    errors = await get(client, "episodes", run=run, outcome="error")
    assert [r["model"] for r in errors["rows"]] == [PLANTED_MODEL]
    trial1 = await get(client, "episodes", run=run, trial=1, task="-0", per_page=200)
    assert trial1["rows"] and all(r["trial"] == 1 and "-0" in r["task_id"] for r in trial1["rows"])
    unjudged = await get(client, "episodes", run=run, outcome="unjudged", judge="scripted/judge",
                         method="sliding", per_page=200)
    assert {r["benchmark"] for r in unjudged["rows"]} == {"t1"}


async def test_search_matches_message_text_only_and_continues(client, stored_run, truth):
    run = stored_run["run_id"]
    word = "window.__xss"  # only in the planted episode's messages
    got = await get(client, "episodes", run=run, q=word.upper())
    assert [r["episode_id"] for r in got["rows"]] == [stored_run["planted"]]
    assert got["next_cursor"] is None
    keys_only = await get(client, "episodes", run=run, q="tool_call_id")  # a JSON key, not text
    assert keys_only["rows"] == []
    # a common word: a small page, then the cursor gets the rest, without repeats
    word = "help"
    want = {eid for eid, rec in truth["records"].items()
            if any(word in (m.content or "").lower() for m in rec.messages)}
    seen, cursor = [], 0
    while cursor is not None:
        got = await get(client, "episodes", run=run, q=word, per_page=3, cursor=cursor)
        seen += [r["episode_id"] for r in got["rows"]]
        cursor = got["next_cursor"]
    assert len(seen) == len(set(seen)) and set(seen) == want and len(want) > 3


async def test_an_episode_ties_calls_to_messages_and_prices_them(client, stored_run, truth):
    run = stored_run["run_id"]
    eid = next(e for e, rec in truth["records"].items()
               if rec.model == "scripted/noisy:0.3" and rec.tool_calls
               and rec.benchmark == "vitabench")
    rec = truth["records"][eid]
    d = await get(client, "episode", run=run, id=eid)
    agent = [c for c in d["calls"] if c["role"] == "agent"]
    user = [c for c in d["calls"] if c["role"] == "user"]
    assert len(agent) == rec.agent_calls and len(user) == rec.user_calls
    for c in agent:
        assert d["messages"][c["message_index"]]["role"] == "assistant"
        u = Usage(**c["usage"])
        assert c["cost"] == pytest.approx(usage_cost(u, PRICES["scripted/noisy:0.3"]))
    assert all(d["messages"][c["message_index"]]["role"] == "user" for c in user)
    # T1's referee calls are journaled as the user model's: each user turn still gets its own
    t1 = next(e for e, rec in truth["records"].items()
              if rec.benchmark == "t1" and rec.model == "scripted/noisy:0.3")
    d1 = await get(client, "episode", run=run, id=t1)
    tied = [c["message_index"] for c in d1["calls"] if c["message_index"] is not None]
    users = [m["index"] for m in d1["messages"] if m["role"] == "user"]
    assert sorted(i for i in tied if d1["messages"][i]["role"] == "user") == users
    assert all(c["cost"] is None for c in user)  # the user model has no prices: no guess
    assert d["totals"]["cost"] is None and d["totals"]["priced"] == len(agent)
    assert sum(Usage(**c["usage"]).prompt_tokens for c in agent) == rec.agent_usage.prompt_tokens
    tools = [m for m in d["messages"] if m["role"] == "tool"]
    assert len(tools) == rec.tool_calls and all(m["tool_ok"] in (True, False) for m in tools)
    assert all(m["name"] for m in tools)


async def test_sliding_windows_carry_states_and_sit_at_their_messages(client, stored_run, truth):
    run = stored_run["run_id"]
    multi = [j for j in truth["judgments"] if j["method"] == "sliding"
             and j["details"]["windows"] >= 2]
    assert multi
    for j in multi:
        d = await get(client, "episode", run=run, id=j["episode_id"])
        sliding = next(x for x in d["judgments"] if x["method"] == "sliding")
        assert sliding["windows_note"] is None
        conv = [m for m in d["messages"] if m["role"] != "system"]
        ranges = make_windows(len(conv))
        assert [(w["start"], w["end"]) for w in sliding["windows"]] == ranges
        for w in sliding["windows"]:
            assert d["messages"][w["anchor"]]["number"] == w["end"]
            assert len(w["states"]) == len(j["details"]["rubrics"])
        final = [s["met"] for s in sliding["windows"][-1]["states"]]
        assert final == [r["met"] for r in j["details"]["rubrics"]]
        # what changed in a window is what differs from the window before
        before = [False] * len(final)
        for w in sliding["windows"]:
            now = [s["met"] for s in w["states"]]
            assert [s["changed"] for s in w["states"]] == [a != b for a, b in zip(before, now)]
            before = now


async def test_windows_without_a_journal_say_so(client, stored_run, tmp_path, truth):
    j = next(j for j in truth["judgments"] if j["method"] == "sliding")
    copy = tmp_path / "nojournal.sqlite"
    copy.write_bytes(Path(stored_run["path"]).read_bytes())
    with sqlite3.connect(copy) as c:
        c.execute("DELETE FROM events WHERE episode_id LIKE 'judge|%'")
    app = build_app([copy])
    async with TestClient(TestServer(app, host="127.0.0.1")) as c2:
        resp = await c2.get("/api/episode", params={"store": "nojournal", "run": stored_run["run_id"],
                                                     "id": j["episode_id"]})
        d = await resp.json()
    sliding = next(x for x in d["judgments"] if x["method"] == "sliding")
    assert sliding["windows"] and all(w["states"] is None for w in sliding["windows"])
    assert "not in this store's journal" in sliding["windows_note"]


async def test_t1_state_check_details_and_same_task(client, stored_run, truth):
    run = stored_run["run_id"]
    eid = next(r["episode_id"] for r in truth["rows"] if r["benchmark"] == "t1"
               and r["model"] == "scripted/noisy:0.3")
    d = await get(client, "episode", run=run, id=eid)
    state = next(x for x in d["judgments"] if x["method"] == "state")
    assert set(state["details"]["tool"]) >= {"precision", "recall", "f1", "accuracy"}
    same = await get(client, "same-task", run=run, id=eid)
    task = EpisodeId.parse(eid).task.id
    assert {r["task_id"] for r in same} == {task}
    assert {(r["model"], r["trial"]) for r in same if r["model"] != PLANTED_MODEL} == {
        (m, t) for m in ("scripted/oracle", "scripted/noisy:0.3") for t in (0, 1)}


async def test_planted_markup_leaves_only_as_json_text(client, stored_run):
    d = await get(client, "episode", run=stored_run["run_id"], id=stored_run["planted"])
    assert d["messages"][0]["content"].endswith(XSS_SCRIPT)
    assert d["record"]["error"].startswith("model call failed: <svg")
    assert d["calls"][0]["message_index"] == len(d["messages"]) - 1  # the last reply


async def test_headers_errors_and_hosts(client, stored_run):
    for path in ("/", "/static/app.js", "/api/stores", "/api/summary?store=nope"):
        resp = await client.get(path)
        for k, v in SECURITY_HEADERS.items():
            assert resp.headers[k] == v
    assert "'unsafe-inline'" not in SECURITY_HEADERS["Content-Security-Policy"]
    assert (await client.get("/api/summary", params={"store": "nope"})).status == 404
    assert (await client.get("/api/summary", params={"store": "tiny", "run": "x"})).status == 404
    bad = await client.get("/api/episodes", params={"store": "tiny", "run": stored_run["run_id"],
                                                     "outcome": "sideways"})
    assert bad.status == 400 and "outcome" in (await bad.json())["error"]
    bad = await client.get("/api/episodes", params={"store": "tiny", "run": stored_run["run_id"],
                                                     "trial": "one"})
    assert bad.status == 400
    missing = await client.get("/api/episode", params={"store": "tiny", "run": stored_run["run_id"],
                                                        "id": "nobody|x:y:en:z|0"})
    assert missing.status == 404
    assert (await client.get("/static/../queries.py")).status in (403, 404)
    # a request for another host name (DNS rebinding) is refused
    rebound = await client.get("/api/stores", headers={"Host": "attacker.example"})
    assert rebound.status == 421


def test_loopback_only_unless_allowed(stored_run, capsys):
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    with pytest.raises(ConfigError, match="--allow-remote"):
        serve([stored_run["path"]], host="0.0.0.0", port=0, prices=None, allow_remote=False,
              say=print)
    assert main(["view", str(stored_run["path"]), "--host", "0.0.0.0"]) == 2
    assert "not a loopback address" in capsys.readouterr().err


def test_reader_is_read_only_and_store_ids_are_unique(stored_run, tmp_path):
    path = Path(stored_run["path"])
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    reader = StoreReader(path)
    assert reader.missing_indexes() == []
    page = reader.episodes(stored_run["run_id"], Filters(), per_page=5)
    assert len(page["rows"]) == 5
    with pytest.raises(StoreError):
        reader._q("DELETE FROM episodes")
    reader.close()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert list(store_ids([Path("a/x.sqlite"), Path("b/x.sqlite"), Path("y.db")])) == [
        "x", "x-2", "y"]
    with pytest.raises(StoreError, match="no run store"):
        StoreReader(tmp_path / "missing.sqlite")
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StoreError, match="not a sweepbench run store"):
        StoreReader(other)


def test_the_page_never_parses_data_as_html():
    static = Path(__file__).resolve().parents[2] / "sweepbench" / "view" / "static"
    js = "\n".join(p.read_text() for p in static.glob("*.js"))
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                 "new Function", "setAttribute(\"on", "DOMParser"):
        assert sink not in js, sink
    html = (static / "index.html").read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)  # no inline script
    assert "style=" not in html and "<style" not in html


async def test_a_store_being_written_is_read_again(stored_run, tmp_path, monkeypatch):
    from sweepbench.view import server as server_mod

    monkeypatch.setattr(server_mod, "LIVE_REFRESH_S", 0.0)
    copy = tmp_path / "live.sqlite"
    copy.write_bytes(Path(stored_run["path"]).read_bytes())
    run = stored_run["run_id"]
    async with TestClient(TestServer(build_app([copy]), host="127.0.0.1")) as c:
        async def cells():
            resp = await c.get("/api/summary", params={"store": "live", "run": run})
            return {(x["model"], x["domain"]): x for x in (await resp.json())["cells"]}
        before = await cells()
        with RunStore(copy, create=False) as store:  # a sweep goes on writing
            store.episode_started(run, "late/model|vitabench:delivery:en:X|0", model="late/model",
                                  benchmark="vitabench", domain="delivery", task_id="X",
                                  lang="en", trial=0)
            store.flush_sync()
        after = await cells()
    assert ("late/model", "delivery") not in before
    assert after["late/model", "delivery"]["running"] == 1


def test_the_command_serves_and_adds_indexes_to_an_older_store(stored_run, tmp_path):
    import subprocess
    import sys
    import urllib.request

    old = tmp_path / "old.sqlite"
    old.write_bytes(Path(stored_run["path"]).read_bytes())
    with sqlite3.connect(old) as c:
        c.execute("DROP INDEX episodes_view")
        c.execute("DROP INDEX judgments_pair")
    proc = subprocess.Popen([sys.executable, "-m", "sweepbench.cli", "view", str(old),
                             "--port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        while not any("viewing" in line for line in lines):
            line = proc.stderr.readline()
            assert line, f"the viewer exited: {lines}"
            lines.append(line)
        assert "adding the store's reader indexes" in lines[0]
        url = re.search(r"http://127\.0\.0\.1:\d+/", lines[-1]).group(0)
        with urllib.request.urlopen(url + "api/stores") as resp:
            assert resp.headers["Content-Security-Policy"].startswith("default-src 'self'")
            stores = __import__("json").load(resp)
        assert [s["id"] for s in stores] == ["old"]
        assert StoreReader(old).missing_indexes() == []
    finally:
        proc.terminate()
        proc.wait(timeout=10)
