"""``tools`` and ``tasks``: a benchmark's tools and tasks listed."""

from __future__ import annotations

import json

from sweepbench.cli import main

from .helpers import run_json


def test_tools_listing(capsys):
    code, listing = run_json(capsys, "tools", "--benchmark", "vitabench:delivery", "--json")
    domains = [t["domain"] for t in listing["tools"]]
    assert code == 0 and domains.count("delivery") == 12 and domains.count("general") == 8
    assert {t["type"] for t in listing["tools"]} == {"read", "write", "general"}


def test_t1_tasks_summary(capsys):
    code, summary = run_json(capsys, "tasks", "--benchmark", "t1", "--json")
    assert code == 0 and summary["total"] == 525
    assert summary["splits"]["11-domain"] == {"templates": 5, "tools": 74}
    assert summary["kb"]["hotel_rooms"] == 157985


def test_vitabench_tool_graph(capsys):
    code, listing = run_json(capsys, "tools", "--json")
    domains = [t["domain"] for t in listing["tools"]]
    assert [domains.count(d) for d in ("delivery", "instore", "ota", "general")] == [12, 16, 30, 8]
    assert listing["edges"] > 0 and 0 < listing["density"] < 1


def test_release_and_prompts_choose_the_benchmark_of_tasks_and_tools(capsys):
    assert main(["tasks", "--release", "2025-11", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["benchmark"] == "vitabench@2025-11"
    assert main(["tasks", "--json", "--prompts", "own"]) == 0
    assert json.loads(capsys.readouterr().out)["benchmark"] == "vitabench@2025-12+own-prompts"
    assert main(["tasks", "--benchmark", "vitabench@2025-12:delivery", "--release", "2025-11"]) == 2
    assert "names release 2025-12, and --release 2025-11 another" in capsys.readouterr().err
    assert main(["tasks", "--benchmark", "t1:flight", "--release", "2025-11"]) == 2
    assert "no benchmark of t1:flight has releases" in capsys.readouterr().err
    assert main(["tasks", "--release", "1999"]) == 2
    assert "unknown VitaBench release '1999'" in capsys.readouterr().err
