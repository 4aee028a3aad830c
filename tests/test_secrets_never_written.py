"""A canary API key in the environment never reaches the store, logs, reports or exports."""

from __future__ import annotations

import json
import logging

from sweepbench.cli import main

CANARY = "sk-canary-7f3a9c1e5b2d4e6f8a0b1c2d3e4f5a6b"


def test_canary_key_never_written_anywhere(tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.setenv("SWEEPBENCH_CANARY_KEY", CANARY)
    caplog.set_level(logging.DEBUG)
    # scripted endpoints that send the key (the reference server ignores it), and one real-looking
    # endpoint on a port where nothing listens, so its errors (with retries) are recorded too
    config = tmp_path / "sweep.toml"
    config.write_text(
        'benchmarks = ["vitabench:delivery"]\n'
        'models = ["scripted/oracle", "remote"]\n'
        "trials = 1\n"
        "[[endpoints]]\n"
        'name = "remote"\n'
        'base_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "SWEEPBENCH_CANARY_KEY"\n'
        "max_retries = 1\n"
        "connect_timeout_s = 0.5\n"
        "breaker_max_wait_s = 1.0\n")
    store = tmp_path / "s.sqlite"
    # the down endpoint would fail the preflight; its episodes end in error: exit status 4
    assert main(["run", "--config", str(config), "--out", str(store), "--no-progress",
                 "--no-preflight", "--judge-model", "scripted/judge"]) == 4
    html, jsonl, csv = tmp_path / "r.html", tmp_path / "t.jsonl", tmp_path / "r.csv"
    assert main(["report", str(store), "--html", str(html)]) == 0
    assert main(["report", str(store), "--json"]) == 0
    assert main(["export", str(store), "--trajectories", str(jsonl), "--csv", str(csv)]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out.split("\n", 1)[-1][captured.out.split("\n", 1)[-1].index("{"):]) \
        if "{" in captured.out else {}
    assert report.get("models", {}).get("remote", {}).get("errors") == 7  # every remote episode
    texts = {"stdout": captured.out, "stderr": captured.err, "logs": caplog.text}
    for path in tmp_path.iterdir():
        texts[path.name] = path.read_bytes().decode("utf-8", "replace")
    leaks = [name for name, text in texts.items() if CANARY in text or CANARY[8:24] in text]
    assert not leaks, f"the API key leaked into {leaks}"
    assert "SWEEPBENCH_CANARY_KEY" in texts["s.sqlite"]  # the variable's name may be stored
