"""A third benchmark is one folder: the test-only ``tests/plugins/toyretail`` runs end to end
through ``run``, ``report`` and ``replay`` with nothing outside its folder naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweepbench import cli
from sweepbench.benchmarks import registry

PLUGIN = Path(__file__).resolve().parent / "plugins" / "toyretail"


@pytest.fixture
def toyretail(monkeypatch):
    monkeypatch.setenv("SWEEPBENCH_PLUGINS", str(PLUGIN))
    assert "toyretail" in registry.names()
    return registry.get("toyretail")


def test_the_folder_is_found_through_the_environment(toyretail):
    assert toyretail.name == "toyretail"
    assert registry.get("toyretail") is toyretail  # loaded once


def test_run_report_and_replay_end_to_end(toyretail, tmp_path, capsys):
    store = tmp_path / "toy.sqlite"
    assert cli.main(["run", "--benchmark", "toyretail", "--model", "scripted/oracle",
                     "--model", "scripted/noisy:1.0", "--trials", "2", "--out", str(store),
                     "--no-progress", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    models = report["models"]
    assert models["scripted/oracle"]["avg"] == 1.0  # the oracle cancels the right order
    assert models["scripted/noisy:1.0"]["avg"] == 0.0  # every step wrong: nothing cancelled

    assert cli.main(["report", str(store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["models"].keys() == models.keys()

    assert cli.main(["replay", "--benchmark", "toyretail", "--json", "--no-progress"]) == 0
    replay = json.loads(capsys.readouterr().out)
    assert (replay["tasks"], replay["passed"]) == (3, 3)


def test_an_unloadable_plugin_is_a_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("SWEEPBENCH_PLUGINS", str(tmp_path / "nothing_here"))
    assert cli.main(["tasks", "--benchmark", "toyretail"]) == 2
    assert "SWEEPBENCH_PLUGINS" in capsys.readouterr().err
