"""inspect_ai interop: the exported eval logs read back with inspect_ai's own reader equal the
store (samples, messages, scores, token usage), inspect's dataframes open them, and
``inspect view`` serves them (in headless Chromium)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

log = pytest.importorskip("inspect_ai.log", reason="the inspect extra installs inspect_ai")

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool  # noqa: E402

from sweepbench.cli import main  # noqa: E402
from sweepbench.results.export.inspect_log import scorer_name  # noqa: E402
from sweepbench.store.runstore import RunStore  # noqa: E402
from sweepbench.wire import AssistantMessage  # noqa: E402

from .conftest import SCREENS  # noqa: E402


@pytest.fixture(scope="module")
def logs(vita_samples_store, t1_store, tmp_path_factory):
    out = {}
    for name, store in (("vita", vita_samples_store), ("t1", t1_store)):
        d = tmp_path_factory.mktemp(f"inspect-{name}")
        assert main(["export", str(store), "--inspect", str(d)]) == 0
        out[name] = (store, d)
    return out


@pytest.mark.parametrize("which", ["vita", "t1"])
def test_every_log_reads_back_equal_to_the_store(logs, which):
    store_path, d = logs[which]
    files = sorted(d.glob("*.eval"))
    with RunStore(store_path) as s:
        rows = [r for r in s.episode_rows() if r["status"] != "running"]
        records = s.records()
        judged = defaultdict(dict)
        for j in s.judgments():
            judged[j["episode_key"]][scorer_name(j["judge"], j["method"])] = j
        judge_tokens: dict = defaultdict(lambda: defaultdict(Counter))
        for c in s.model_calls():
            if c.journal:
                judge_tokens[c.episode_key][c.journal.split("|")[1]] += Counter(
                    p=c.prompt_tokens, c=c.completion_tokens)
    groups = {(r["model"], r["benchmark"]) for r in rows}
    assert len(files) == len(groups)  # one log per model x benchmark
    seen = 0
    for f in files:
        ev = log.read_eval_log(str(f))
        assert ev.status == "success" and ev.eval.task in {b for _, b in groups}
        assert ev.eval.packages["sweepbench"]
        for sample in ev.samples:
            key = sample.metadata["episode_key"]
            rec = records[key]
            seen += 1
            assert (sample.metadata["task_id"], sample.epoch) == (rec.task_id, rec.trial + 1)
            assert ev.eval.model == rec.model and ev.eval.task == rec.benchmark
            # messages: one inspect message per stored one, tool calls and results kept
            assert len(sample.messages) == len(rec.messages)
            for mine, theirs in zip(rec.messages, sample.messages):
                assert theirs.role == mine.__struct_config__.tag
                if isinstance(mine, AssistantMessage) and mine.tool_calls:
                    assert isinstance(theirs, ChatMessageAssistant)
                    assert [(c.id, c.function) for c in theirs.tool_calls] == [
                        (c.id, c.function.name) for c in mine.tool_calls]
                if isinstance(theirs, ChatMessageTool):
                    assert theirs.tool_call_id == mine.tool_call_id and theirs.function
                    assert theirs.text == mine.content
            # scores: every judge as a scorer, value and verdict as stored
            want = {n: j for n, j in judged[key].items()
                    if j["score"] is not None or j["passed"] is not None}
            assert set(sample.scores or {}) == set(want)
            for n, j in want.items():
                sc = sample.scores[n]
                assert sc.metadata["passed"] == j["passed"]
                assert sc.value == (j["score"] if j["score"] is not None else float(j["passed"]))
            # token usage: the agent's, the user simulator's and each judge's
            usage = sample.model_usage
            agent = usage[rec.model]
            assert agent.input_tokens + (agent.input_tokens_cache_read or 0) == \
                rec.agent_usage.prompt_tokens
            assert agent.output_tokens == rec.agent_usage.completion_tokens
            user = usage["scripted/user"]
            assert (user.input_tokens + (user.input_tokens_cache_read or 0),
                    user.output_tokens) == (rec.user_usage.prompt_tokens,
                                            rec.user_usage.completion_tokens)
            for judge, t in judge_tokens[key].items():
                u = usage[judge]
                assert (u.input_tokens + (u.input_tokens_cache_read or 0), u.output_tokens) == (
                    t["p"], t["c"])
            assert (sample.error is not None) == (rec.termination == "error")
        totals = Counter()
        for sample in ev.samples:
            for m, u in sample.model_usage.items():
                totals[m] += u.total_tokens
        assert {m: u.total_tokens for m, u in ev.stats.model_usage.items()} == dict(totals)
    assert seen == len(records)


def test_inspect_dataframes_open_the_logs(logs):
    from inspect_ai.analysis import evals_df, samples_df

    store_path, d = logs["t1"]
    samples = samples_df(str(d))
    evals = evals_df(str(d))
    with RunStore(store_path) as s:
        assert len(samples) == len(s.records())
    assert len(evals) == 2 and set(evals["model"]) == {"scripted/oracle", "scripted/noisy:0.3"}
    assert {"score_state", "score_scripted/judge/likert"} <= set(samples.columns)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_inspect_view_serves_the_logs(logs, browser):
    exe = shutil.which("inspect", path=os.path.dirname(sys.executable)) or shutil.which("inspect")
    if exe is None:
        pytest.skip("the inspect command is not installed")
    _, d = logs["vita"]
    port = _free_port()
    server = subprocess.Popen([exe, "view", "--log-dir", str(d), "--host", "127.0.0.1",
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, \
                    "inspect view did not start"
                time.sleep(0.3)
        page = browser(1400, 900)
        # inspect view's page lists the logs once, as it loads: on a loaded machine it can
        # load before the server lists them, and never asks again; a reload asks again
        for attempt in range(3):
            page.goto(f"http://127.0.0.1:{port}/")
            try:
                page.wait("document.body.innerText.includes('scripted/noisy:0.3')", timeout=40)
                break
            except AssertionError:
                if attempt == 2:
                    page.screenshot(SCREENS / "inspect-view-logs-failed.png", full_page=False)
                    raise
        assert "vitabench" in page.eval("document.body.innerText")
        page.screenshot(SCREENS / "inspect-view-logs.png", full_page=False)
        f = next(p.name for p in Path(d).glob("*noisy*.eval"))
        ev = log.read_eval_log(str(Path(d) / f), header_only=True)
        sample = log.read_eval_log_sample(str(Path(d) / f), id=ev.eval.dataset.sample_ids[0],
                                          epoch=1)
        tool = next(m for m in sample.messages if isinstance(m, ChatMessageAssistant)
                    and m.tool_calls).tool_calls[0].function
        page.goto(f"http://127.0.0.1:{port}/#/logs/{f}/samples/sample/{sample.id}/1/messages")
        page.wait(f"document.body.innerText.includes({tool!r})", timeout=60)
        page.screenshot(SCREENS / "inspect-view-sample.png", full_page=False)
        page.goto(f"http://127.0.0.1:{port}/#/logs/{f}/samples/sample/{sample.id}/1/scoring")
        page.wait("document.body.innerText.includes('scripted/judge/sliding')", timeout=60)
        page.screenshot(SCREENS / "inspect-view-scoring.png", full_page=False)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_arguments_no_reader_survives_are_a_parse_error_in_the_log():
    from sweepbench.results.export.inspect_log import _inspect, _messages
    from sweepbench.wire import EpisodeRecord, FunctionCall, ToolCall

    _, model, _, tool = _inspect()
    deep = '{"a": ' + "[" * 10_000 + "]" * 10_000 + "}"
    calls = [ToolCall("c0", FunctionCall("f", deep)), ToolCall("c1", FunctionCall("f", '{"a": NaN}')),
             ToolCall("c2", FunctionCall("f", '{"a": "x\\u0000"}'))]
    rec = EpisodeRecord(run_id="r", model="m", benchmark="t1", domain="d", task_id="t", trial=0,
                        termination="agent_stop", messages=[AssistantMessage(None, calls)])
    (message,) = _messages(model, tool, rec)
    assert [(c.arguments, c.parse_error) for c in message.tool_calls] == [
        ({}, "arguments nest deeper than 64 levels"),
        ({}, "arguments are not valid JSON: JSON is malformed: invalid character (byte 6)"),
        ({"a": "x\x00"}, None)]
