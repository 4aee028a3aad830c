"""A store keeps its judges: `run --model X` into the quick start's store judges X like the
models already there (VitaBench's headline is an LLM judge), and `plan` counts those judge
calls; judges named on the command line are used exactly."""

from __future__ import annotations

import argparse
import sqlite3

import pytest

from sweepbench.cli import main
from sweepbench.cli.judges import sweep_judges
from sweepbench.config import load_config
from sweepbench.store.runstore import RunStore

from .helpers import entry, run_json

BENCH = "vitabench@2025-12"


@pytest.fixture
def quick_start(tmp_path, capsys):
    """The quick start's sweep (no --model, no config), one domain and one trial, in a store."""
    out = tmp_path / "s.sqlite"
    assert main(["run", "--benchmark", "vitabench:delivery", "--trials", "1", "--out", str(out),
                 "--no-progress", "--json"]) == 0
    capsys.readouterr()
    return out


def test_a_model_added_to_the_quick_start_store_is_judged_by_its_judge(quick_start, capsys):
    code, report = run_json(capsys, "run", "--benchmark", "vitabench:delivery", "--trials", "1",
                            "--model", "scripted/noisy:0.5", "--out", str(quick_start),
                            "--no-progress", "--json")
    added = entry(report, BENCH, "scripted/noisy:0.5")
    assert code == 0 and added["unjudged"] == 0 and not added.get("undefined")
    assert report["benchmarks"][BENCH]["source"]["judge"] == "scripted/judge"
    judged = sqlite3.connect(quick_start).execute(
        "select count(*) from judgments j join episodes e using (episode_key) "
        "where e.model = 'scripted/noisy:0.5' and j.judge = 'scripted/judge'").fetchone()[0]
    assert judged == 7  # every delivery sample task


def _store_judged_by(path, judges: list[str], endpoints: list[dict]) -> None:
    with RunStore(path) as store:
        store.begin_run("r1", {"judge_models": judges, "endpoints": endpoints})
        store.flush_sync()


GPT_J = {"name": "gpt-j", "base_url": "https://judge.example/v1", "api_key_env": "J_KEY",
         "price_input_per_mtok": 1.0}


def test_a_stored_judge_comes_with_its_stored_endpoint(tmp_path):
    _store_judged_by(tmp_path / "s.sqlite", ["gpt-j"], [GPT_J])
    cfg = load_config(None, {"models": ["scripted/oracle"]})
    args = argparse.Namespace(judge_model=None, config=None, model=["scripted/oracle"])
    kept = sweep_judges(cfg, args, tmp_path / "s.sqlite")
    assert kept.judge_models == ["gpt-j"]
    ep = kept.endpoint("gpt-j", reference_url="http://ref.invalid")
    assert (ep.base_url, ep.api_key_env, ep.price_input_per_mtok) == (
        "https://judge.example/v1", "J_KEY", 1.0)


def test_judges_named_are_used_exactly_whatever_the_store_was_judged_with(tmp_path):
    _store_judged_by(tmp_path / "s.sqlite", ["gpt-j"], [GPT_J])
    cfg = load_config(None, {"models": ["scripted/oracle"], "judge_models": ["scripted/judge"]})
    args = argparse.Namespace(judge_model=["scripted/judge"], config=None,
                              model=["scripted/oracle"])
    assert sweep_judges(cfg, args, tmp_path / "s.sqlite") is cfg


def test_a_stored_endpoint_this_version_cannot_read_is_not_guessed_at(tmp_path):
    _store_judged_by(tmp_path / "s.sqlite", ["gpt-j", "scripted/judge"],
                     [{**GPT_J, "field_of_the_future": 1}])
    cfg = load_config(None, {"models": ["scripted/oracle"]})
    args = argparse.Namespace(judge_model=None, config=None, model=["scripted/oracle"])
    assert sweep_judges(cfg, args, tmp_path / "s.sqlite").judge_models == ["scripted/judge"]


def test_a_fresh_store_with_a_model_named_has_no_llm_judge(tmp_path, capsys):
    code, report = run_json(capsys, "run", "--benchmark", "vitabench:delivery", "--trials", "1",
                            "--model", "scripted/oracle", "--out", str(tmp_path / "f.sqlite"),
                            "--no-progress", "--json")
    assert entry(report, BENCH, "scripted/oracle")["unjudged"] == 7


def test_plan_on_the_quick_start_store_counts_its_judge_calls(quick_start, capsys):
    code, plan = run_json(capsys, "plan", "--benchmark", "vitabench:delivery", "--trials", "2",
                          "--out", str(quick_start), "--json")
    stored = sqlite3.connect(quick_start).execute(
        "select count(*) from events where kind = 'model_call' and journal != ''").fetchone()[0]
    assert code == 0 and plan["episodes"]["to_run"] == 14
    # the same tasks once more, from their own history: as many judge calls as trial 0 made
    assert plan["endpoints"]["scripted/judge"]["requests"] == stored > 0
    assert plan["unpriced"] == ["scripted/judge", "scripted/noisy:0.3", "scripted/oracle",
                                "scripted/user"]
    assert plan["endpoints"]["scripted/judge"]["dollars"] is None
