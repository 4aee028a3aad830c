"""The viewer's JSON API on a small store, checked against the store's own reads and against
``sweepbench report`` (the leaderboard, its sources, superseded episodes, cost)."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sqlite3
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from sweepbench.cli import main
from sweepbench.errors import ConfigError, StoreError
from sweepbench.ids import EPISODE_JOURNAL
from sweepbench.judge.rubric import make_windows
from sweepbench.results.cost import Spend, call_cost, prices_by_run
from sweepbench.results.profile import Prices
from sweepbench.results.report import build_report
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.store.schema import SCHEMA_VERSION
from sweepbench.results.selection import Selection
from sweepbench.runner.build import benchmark_info
from sweepbench.view.queries import Filters, StoreReader
from sweepbench.view.server import (
    SECURITY_HEADERS,
    build_app,
    is_loopback,
    prepare,
    serve,
    store_ids,
)

from .conftest import PLANTED_MODEL, UNREACHABLE, XSS_SCRIPT

NOISY = "scripted/noisy:0.3"
INFO = benchmark_info()


@pytest.fixture
async def client(stored_run):
    app = build_app([stored_run["path"]], benchmarks=INFO)
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        yield c


async def get(client, name, **params):
    resp = await client.get(f"/api/{name}", params={"store": "tiny", **params})
    assert resp.status == 200, await resp.text()
    return await resp.json()


@pytest.fixture(scope="module")
def truth(stored_run):
    """What the store's public reads say: rows, judgments, records, identities, runs."""
    with RunStore(stored_run["path"], create=False) as store:
        return {"rows": store.episode_rows(), "judgments": store.judgments(),
                "records": store.records(), "identities": store.identities(),
                "runs": store.runs(),
                "selection": {r: set(store.run_selection(r)) for r in stored_run["runs"]}}


def report(stored_run, run=None, **options) -> dict:
    with RunStore(stored_run["path"], create=False) as store:
        return build_report(store, selection=Selection(run_id=run), benchmarks=INFO,
                            profile=False, n_boot=10, **options)


def board(summary: dict) -> dict:
    """(row name, benchmark, domain) -> the counts the report shows for them."""
    out = {}
    for c in summary["cells"]:
        out[c["name"], c["benchmark"], c["domain"]] = {
            "episodes": c["passed"] + c["failed"] + c["error"], "passed": c["passed"],
            "errors": c["error"], "unjudged": c["unjudged"], "unfinished": c["running"],
            "avg": pytest.approx(c["rate_sum"] / c["rated_tasks"]) if c["rated_tasks"] else None}
    return out


def report_board(rep: dict) -> dict:
    out = {}
    for bench, b in rep["benchmarks"].items():
        for name, entry in b["models"].items():
            for domain, d in entry["domains"].items():
                out[name, bench, domain] = {k: d[k] for k in ("episodes", "passed", "errors",
                                                              "avg")}
                out[name, bench, domain].update(unjudged=d["unjudged"],
                                                unfinished=d["unfinished"])
    return out


@pytest.mark.parametrize("scope", [None, 0, 1, 2])
async def test_the_leaderboard_is_the_reports(client, stored_run, scope):
    run = None if scope is None else stored_run["runs"][scope]
    s = await get(client, "summary", **({"run": run} if run else {}))
    rep = report(stored_run, run)
    assert board(s) == report_board(rep)
    for b in s["benchmarks"]:
        assert b["source"] == rep["benchmarks"][b["name"]]["source"] == b["headline"]
    assert s["superseded"] == rep["superseded"]


async def test_headlines_by_default_and_another_source_on_request(client, stored_run):
    s = await get(client, "summary")
    sources = {b["name"]: (b["source"]["judge"], b["source"]["method"]) for b in s["benchmarks"]}
    assert sources == {"vitabench@2025-12": ("scripted/judge", "sliding"), "t1": ("state", "state")}
    names = {c["name"] for c in s["cells"]}
    assert {"scripted/oracle [user scripted/user, default]",
            "scripted/oracle [user scripted/user, neutral]", NOISY} <= names
    # VitaBench by its state check: what the report says with method=state
    other = await get(client, "summary", **{"src.vitabench@2025-12": "state/state"})
    assert board(other) == report_board(report(stored_run, method="state"))
    vita = next(b for b in other["benchmarks"] if b["name"] == "vitabench@2025-12")
    assert vita["source"]["explicit"] and vita["headline"]["method"] == "sliding"
    # T1 by the Likert judge, which gives scores, never verdicts: every episode unjudged
    likert = await get(client, "summary", **{"src.t1": "scripted/judge/likert"})
    want = report(stored_run, method="likert", judge="scripted/judge")["benchmarks"]["t1"]
    t1 = {k[0]: v for k, v in board(likert).items() if k[1] == "t1"}  # one domain each
    assert {name: (v["episodes"], v["unjudged"]) for name, v in t1.items()} == {
        name: (e["episodes"], e["unjudged"]) for name, e in want["models"].items()}
    assert all(v["unjudged"] == 6 and v["episodes"] == 0 for v in t1.values())
    bad = await client.get("/api/summary", params={"store": "tiny",
                                                   "src.t1": "nobody/sliding"})
    assert bad.status == 400 and "scripted/judge/likert" in (await bad.json())["error"]


async def test_superseded_identities_are_listed_apart(client, stored_run, truth):
    old = [r for r in truth["rows"] if r["model"] == NOISY and r["task_id"] == "SB-D-001"
           and r["trial"] == 0]
    assert len(old) == 2
    older, newer = sorted(old, key=lambda r: r["started_at"])
    got = await get(client, "episodes", outcome="superseded")
    assert [r["episode_key"] for r in got["rows"]] == [older["episode_key"]]
    everything = await get(client, "episodes", per_page=200)
    keys = {r["episode_key"] for r in everything["rows"]}
    assert newer["episode_key"] in keys and older["episode_key"] not in keys
    # within the first run's selection the older one is the only one, and counts
    first = await get(client, "episodes", run=stored_run["runs"][0], per_page=200)
    keys = {r["episode_key"] for r in first["rows"]}
    assert older["episode_key"] in keys and newer["episode_key"] not in keys
    assert keys == truth["selection"][stored_run["runs"][0]]
    same = await get(client, "same-task", id=older["episode_key"])
    flags = {r["episode_key"]: r["superseded"] for r in same}
    assert flags[older["episode_key"]] is True and flags[newer["episode_key"]] is False


async def test_filters_narrow_and_pages_cover_the_list(client, stored_run, truth):
    everything = await get(client, "episodes", per_page=200)
    assert everything["total"] == len(truth["rows"]) - 1  # one superseded
    pages, page = [], 0
    while True:
        got = await get(client, "episodes", per_page=7, page=page)
        if not got["rows"]:
            break
        pages += [r["episode_key"] for r in got["rows"]]
        page += 1
    assert pages == [r["episode_key"] for r in everything["rows"]]
    assert len(set(pages)) == everything["total"]

    run = stored_run["run_id"]
    noisy = await get(client, "episodes", run=run, model=NOISY, benchmark="vitabench@2025-12",
                      domain="delivery", per_page=200)
    want = [r for r in truth["rows"] if r["model"] == NOISY and r["benchmark"] == "vitabench@2025-12"
            and r["episode_key"] in truth["selection"][run]]
    assert noisy["total"] == len(want) == 6
    source = {"vitabench@2025-12": ("scripted/judge", "sliding"), "t1": ("state", "state")}
    bench_of = {r["episode_key"]: r["benchmark"] for r in truth["rows"]}
    verdict = {j["episode_key"]: j["passed"] for j in truth["judgments"]
               if (j["judge"], j["method"]) == source[bench_of[j["episode_key"]]]}
    failed = await get(client, "episodes", run=run, model=NOISY, outcome="failed", per_page=200)
    want_failed = {r["episode_key"] for r in truth["rows"] if r["model"] == NOISY
                   and r["episode_key"] in truth["selection"][run] and r["status"] == "done"
                   and verdict.get(r["episode_key"]) is False}
    assert {r["episode_key"] for r in failed["rows"]} == want_failed
    assert failed["total"] == len(want_failed) > 0  # counted from the cached cells
    narrowed = await get(client, "episodes", run=run, model=NOISY, outcome="failed",
                         termination="user_stop", per_page=2)
    assert narrowed["total"] == len(want_failed) and len(narrowed["rows"]) == 2  # by SQL
    assert all(r["outcome"] == "failed" for r in failed["rows"])
    errors = await get(client, "episodes", outcome="error")
    assert [r["model"] for r in errors["rows"]] == [PLANTED_MODEL]
    unreachable = await get(client, "episodes", outcome="unreachable")
    assert [r["episode_key"] for r in unreachable["rows"]] == [stored_run["planted"]]
    assert unreachable["rows"][0]["unreachable"] == UNREACHABLE
    trial1 = await get(client, "episodes", trial=1, task="-0", per_page=200)
    assert trial1["rows"] and all(r["trial"] == 1 and "-0" in r["task_id"]
                                  for r in trial1["rows"])
    neutral = await get(client, "episodes", model="scripted/oracle", user_mode="neutral")
    assert neutral["total"] == 1 and neutral["rows"][0]["user_mode"] == "neutral"


async def test_search_matches_message_text_only_and_continues(client, stored_run, truth):
    word = "window.__xss"  # only in the planted episode's messages
    got = await get(client, "episodes", q=word.upper())
    assert [r["episode_key"] for r in got["rows"]] == [stored_run["planted"]]
    assert got["next_cursor"] is None
    keys_only = await get(client, "episodes", q="tool_call_id")  # a JSON key, not text
    assert keys_only["rows"] == []
    # a common word: a small page, then the cursor gets the rest, without repeats
    word = "help"
    listed = {r["episode_key"] for r in (await get(client, "episodes", per_page=200))["rows"]}
    want = {k for k, rec in truth["records"].items() if k in listed
            and any(word in (m.content or "").lower() for m in rec.messages)}
    seen, cursor = [], 0
    while cursor is not None:
        got = await get(client, "episodes", q=word, per_page=3, cursor=cursor)
        seen += [r["episode_key"] for r in got["rows"]]
        cursor = got["next_cursor"]
    assert len(seen) == len(set(seen)) and set(seen) == want and len(want) > 3


async def test_an_episode_ties_calls_to_messages_and_costs_them_as_the_report(
        client, stored_run, truth):
    key = next(k for k, rec in truth["records"].items()
               if rec.model == NOISY and rec.tool_calls and rec.benchmark == "vitabench@2025-12"
               and rec.run_id == stored_run["run_id"])
    rec = truth["records"][key]
    d = await get(client, "episode", id=key)
    agent = [c for c in d["calls"] if c["role"] == "agent"]
    user = [c for c in d["calls"] if c["role"] == "user"]
    assert len(agent) == rec.agent_calls and len(user) == rec.user_calls
    assert {c["model"] for c in agent} == {NOISY} and {c["model"] for c in user} == {
        "scripted/user"}
    for c in agent:
        assert d["messages"][c["message_index"]]["role"] == "assistant"
    assert all(d["messages"][c["message_index"]]["role"] == "user" for c in user)
    # each call at its run's stored prices for its endpoint, as the report's cost
    with RunStore(stored_run["path"], create=False) as store:
        calls = store.model_calls([key])
        spend = Spend.of(calls, prices_by_run(store.runs()))
    own = [call_cost(c, prices_by_run(truth["runs"])).cost for c in calls if not c.journal]
    assert [c["cost"] for c in d["calls"]] == pytest.approx(own)
    assert all(c["cost"] > 0 for c in agent) and all(c["cost"] == 0 for c in user)
    roles = spend.by_episode[key]
    assert d["totals"]["cost"] == pytest.approx(roles["agent"] + roles["user"])
    assert d["totals"]["judge_cost"] == pytest.approx(roles["judge"]) and roles["judge"] > 0
    assert sum(c["usage"]["prompt_tokens"] for c in agent) == rec.agent_usage.prompt_tokens
    tools = [m for m in d["messages"] if m["role"] == "tool"]
    assert len(tools) == rec.tool_calls and all(m["tool_ok"] in (True, False) for m in tools)
    assert all(m["name"] for m in tools)
    # T1's referee calls are journaled as the user model's: each user turn still gets its own
    t1 = next(k for k, rec in truth["records"].items()
              if rec.benchmark == "t1" and rec.model == NOISY)
    d1 = await get(client, "episode", id=t1)
    tied = [c["message_index"] for c in d1["calls"] if c["message_index"] is not None]
    users = [m["index"] for m in d1["messages"] if m["role"] == "user"]
    assert sorted(i for i in tied if d1["messages"][i]["role"] == "user") == users


async def test_prices_given_to_the_viewer_replace_the_stored_ones(stored_run, truth):
    key = next(k for k, rec in truth["records"].items() if rec.model == NOISY)
    override = {NOISY: Prices(input=100.0, output=100.0), "scripted/user": Prices(output=1.0)}
    app = build_app([stored_run["path"]], prices=override)
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        d = await get(c, "episode", id=key)
    with RunStore(stored_run["path"], create=False) as store:
        calls = [c for c in store.model_calls([key]) if not c.journal]
    want = [call_cost(c, prices_by_run(truth["runs"]), override).cost for c in calls]
    assert [c["cost"] for c in d["calls"]] == pytest.approx(want)
    assert {round(c["cost"], 9) > 0 for c in d["calls"]} == {True}


async def test_the_episode_shows_its_identity(client, stored_run, truth):
    key = next(k for k, rec in truth["records"].items() if rec.benchmark == "t1")
    d = await get(client, "episode", id=key)
    assert d["identity"] == truth["identities"][key]
    assert set(d["identity"]) >= {"agent", "task", "fingerprint", "user", "user_mode", "limits"}
    assert d["episode"]["episode_key"] == key
    assert d["episode"]["runs"] == sorted(r for r, keys in truth["selection"].items()
                                          if key in keys)


async def test_sliding_windows_carry_states_and_sit_at_their_messages(client, truth):
    multi = [j for j in truth["judgments"] if j["method"] == "sliding"
             and j["details"].get("windows", 0) >= 2]
    assert multi
    for j in multi:
        d = await get(client, "episode", id=j["episode_key"])
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


async def test_windows_without_a_journal_say_so(stored_run, tmp_path, truth):
    j = next(j for j in truth["judgments"] if j["method"] == "sliding")
    copy = tmp_path / "nojournal.sqlite"
    copy.write_bytes(Path(stored_run["path"]).read_bytes())
    with sqlite3.connect(copy) as c:
        c.execute("DELETE FROM events WHERE journal != ?", (EPISODE_JOURNAL,))
    app = build_app([copy])
    async with TestClient(TestServer(app, host="127.0.0.1")) as c2:
        resp = await c2.get("/api/episode", params={"store": "nojournal",
                                                     "id": j["episode_key"]})
        d = await resp.json()
    sliding = next(x for x in d["judgments"] if x["method"] == "sliding")
    assert sliding["windows"] and all(w["states"] is None for w in sliding["windows"])
    assert "not in this store's journal" in sliding["windows_note"]


async def test_t1_state_check_details_and_same_task(client, truth):
    key = next(r["episode_key"] for r in truth["rows"] if r["benchmark"] == "t1"
               and r["model"] == NOISY)
    d = await get(client, "episode", id=key)
    state = next(x for x in d["judgments"] if x["method"] == "state")
    assert set(state["details"]["tool"]) >= {"precision", "recall", "f1", "accuracy"}
    same = await get(client, "same-task", id=key)
    task = d["episode"]["task_id"]
    assert {r["task_id"] for r in same} == {task}
    assert {(r["model"], r["trial"]) for r in same} == {
        (m, t) for m in ("scripted/oracle", NOISY) for t in (0, 1)}


async def test_planted_markup_leaves_only_as_json_text(client, stored_run):
    d = await get(client, "episode", id=stored_run["planted"])
    assert d["messages"][0]["content"].endswith(XSS_SCRIPT)
    assert d["record"]["error"].startswith("model call failed: <svg")
    assert d["calls"][0]["message_index"] == len(d["messages"]) - 1  # the last reply
    assert d["episode"]["unreachable"] == UNREACHABLE


async def test_headers_errors_and_hosts(client, stored_run):
    for path in ("/", "/static/app.js", "/api/stores", "/api/summary?store=nope"):
        resp = await client.get(path)
        for k, v in SECURITY_HEADERS.items():
            assert resp.headers[k] == v
    assert "'unsafe-inline'" not in SECURITY_HEADERS["Content-Security-Policy"]
    assert (await client.get("/api/summary", params={"store": "nope"})).status == 404
    assert (await client.get("/api/summary", params={"store": "tiny", "run": "x"})).status == 404
    bad = await client.get("/api/episodes", params={"store": "tiny", "outcome": "sideways"})
    assert bad.status == 400 and "outcome" in (await bad.json())["error"]
    bad = await client.get("/api/episodes", params={"store": "tiny", "trial": "one"})
    assert bad.status == 400
    missing = await client.get("/api/episode", params={"store": "tiny", "id": "ep-nobody"})
    assert missing.status == 404
    assert (await client.get("/static/../queries.py")).status in (403, 404)
    # a request for another host name (DNS rebinding) is refused
    rebound = await client.get("/api/stores", headers={"Host": "attacker.example"})
    assert rebound.status == 421


def test_loopback_only_unless_allowed(stored_run, capsys):
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    with pytest.raises(ConfigError, match="--allow-remote"):
        serve([stored_run["path"]], host="0.0.0.0", port=0, prices=None, benchmarks=None,
              allow_remote=False, say=print)
    assert main(["view", str(stored_run["path"]), "--host", "0.0.0.0"]) == 2
    assert "not a loopback address" in capsys.readouterr().err


def test_reader_is_read_only_and_store_ids_are_unique(stored_run, tmp_path):
    path = Path(stored_run["path"])
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    reader = StoreReader(path)
    assert reader.missing_indexes() == []
    page = reader.episodes(None, Filters(), {}, per_page=5)
    assert len(page["rows"]) == 5 and {r["outcome"] for r in page["rows"]} <= {
        "unjudged", "error"}  # no source: nothing judged
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


def _v1_store(path: Path) -> None:
    """A schema-1 store, as tests/store/test_migrate.py writes it."""
    here = Path(__file__).resolve().parents[1] / "store" / "test_migrate.py"
    spec = importlib.util.spec_from_file_location("_v1_fixture", here)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.v1_store(path)


def test_an_older_schema_is_refused_until_migrated(tmp_path):
    old = tmp_path / "v1.sqlite"
    _v1_store(old)
    with pytest.raises(StoreError, match="schema version 1"):
        StoreReader(old)
    said = []
    prepare([old], said.append)
    assert f"migrating to {SCHEMA_VERSION}" in said[0] and "from schema 1 to" in said[1]
    reader = StoreReader(old)
    assert reader.episodes(None, Filters(), {})["total"] == 1  # two legacy ids, one newest
    reader.close()


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
    async with TestClient(TestServer(build_app([copy]), host="127.0.0.1")) as c:
        async def cells():
            resp = await c.get("/api/summary", params={"store": "live"})
            return {(x["model"], x["domain"]): x for x in (await resp.json())["cells"]}
        before = await cells()
        with RunStore(copy, create=False) as store:  # a sweep goes on writing
            meta = EpisodeMeta(key="ep-late", label="late/model|vitabench:delivery:en:X|0",
                               model="late/model", benchmark="vitabench", domain="delivery",
                               task_id="X", lang="en", trial=0)
            store.select(stored_run["run_id"], [meta])
            store.episode_started(meta, run_id=stored_run["run_id"])
            store.flush_sync()
        after = await cells()
    assert ("late/model", "delivery") not in before
    assert after["late/model", "delivery"]["running"] == 1


def test_the_command_serves_and_adds_indexes_to_an_older_store(stored_run, tmp_path):
    import json
    import subprocess
    import sys
    import urllib.request

    old = tmp_path / "old.sqlite"
    old.write_bytes(Path(stored_run["path"]).read_bytes())
    with sqlite3.connect(old) as c:
        c.execute("DROP INDEX episodes_view")
        c.execute("DROP INDEX judgments_by_episode")
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
            stores = json.load(resp)
        assert [s["id"] for s in stores] == ["old"]
        with urllib.request.urlopen(url + "api/summary?store=old") as resp:
            summary = json.load(resp)
        # the registry's headlines, passed by the command
        assert {b["name"]: b["source"]["method"] for b in summary["benchmarks"]} == {
            "t1": "state", "vitabench@2025-12": "sliding"}
        assert StoreReader(old).missing_indexes() == []
    finally:
        proc.terminate()
        proc.wait(timeout=10)
