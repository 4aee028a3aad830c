"""Task ids are checked where every benchmark's tasks are loaded (built-in, from a data dir, or
a plugin's): a blank, space-padded, non-string or repeated id is a TaskError naming the file and the
task, so `tasks` and `plan` refuse it as `run` would, instead of `run` crashing on it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from sweepbench import cli
from sweepbench.benchmarks import catalog, registry
from sweepbench.benchmarks.base import Benchmark
from sweepbench.datasets.task import Task
from sweepbench.errors import TaskError

SAMPLE = Path(catalog.__file__).parent / "vitabench" / "samples" / "vitabench_delivery.json"


class _Ids(Benchmark):
    """A plugin-style benchmark whose tasks carry the ids it is given."""

    default_domains = ("d",)

    def __init__(self, name: str, ids: list) -> None:
        self.name, self.ids = name, ids

    def load_tasks(self, domains, *, data_dir, lang):
        return [Task(id=i, benchmark=self.name, domain="d", instructions="x",
                     source=f"{self.name}.json") for i in self.ids]


@pytest.mark.parametrize(("ids", "message"), [
    (["a", ""], "ids0.json: task #1: id '' is blank or has spaces around it"),
    ([" "], "ids1.json: task #0: id ' ' is blank or has spaces around it"),
    (["a", "b "], "ids2.json: task #1: id 'b ' is blank or has spaces around it"),
    (["\ta"], "ids3.json: task #0: id '\\ta' is blank or has spaces around it"),
    (["a", 7], "ids4.json: task #1: id 7 is not a string"),
    ([None], "ids5.json: task #0: id None is not a string"),
    (["a", "b", "a"], "ids6.json: task #2: id 'a' is task #0's too: ids must differ"),
])
def test_a_bad_task_id_of_any_benchmark_is_refused_at_load(ids, message, monkeypatch,
                                                           request) -> None:
    name = f"ids{request.node.callspec.indices['ids']}"
    monkeypatch.setitem(registry._registered, name, _Ids(name, ids))
    with pytest.raises(TaskError) as info:
        catalog.load_tasks(name)
    assert str(info.value) == message


def test_ids_with_spaces_or_control_characters_inside_load(monkeypatch) -> None:
    ids = ["a b", "R-1", "7", "T\x1b[2Jx"]  # the last printed escaped (test_hostile_text)
    monkeypatch.setitem(registry._registered, "idsok", _Ids("idsok", ids))
    assert [t.id for t in catalog.load_tasks("idsok")] == ids


@pytest.mark.parametrize("spec", ["vitabench:delivery,instore,ota", "t1", "vitabench:ota"])
def test_the_built_in_tasks_all_pass(spec) -> None:
    assert len(catalog.load_tasks(spec)) > 0


@pytest.mark.parametrize("command", [["tasks"], ["plan"], ["run", "--no-progress"]])
def test_a_blank_id_in_a_vitabench_file_stops_every_command_with_one_line(
        command, tmp_path, capsys) -> None:
    tasks = json.loads(SAMPLE.read_text())
    tasks[1]["id"] = "  "
    folder = tmp_path / "data" / "vitabench" / "delivery"
    folder.mkdir(parents=True)
    (folder / "tasks_en.json").write_text(json.dumps(tasks))
    out = ["--out", str(tmp_path / "s.sqlite")] if command[0] == "run" else []
    assert cli.main([*command, "--benchmark", "vitabench:delivery", "--prompts", "own",
                     "--data-dir", str(tmp_path / "data"), *out]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {folder / 'tasks_en.json'}: task #1: id '  ' is blank or has spaces around "
        "it"]
    if command[0] == "run":  # the store may be opened, but no episode starts
        with sqlite3.connect(tmp_path / "s.sqlite") as db:
            assert db.execute("SELECT count(*) FROM episodes").fetchone() == (0,)
