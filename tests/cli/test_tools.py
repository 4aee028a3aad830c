"""``tools`` and ``tasks``: a benchmark's tools and tasks listed."""

from __future__ import annotations

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
