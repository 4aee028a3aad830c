"""Loading VitaBench task files: the built-in samples, the real files, and broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweepbench.benchmarks.vitabench.tasks import load_tasks
from sweepbench.errors import TaskError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"  # holds vitabench/cross_domain, vitabench/ota
GOOD = {"id": "T1", "domain": "delivery", "instructions": "Order noodles.", "message_history": [],
        "environment": {"time": "2025-01-01 12:00:00", "user_id": "U1"},
        "user_scenario": {"user_profile": {"user id": "U1"}},
        "evaluation_criteria": {"expected_states": [], "overall_rubrics": ["r"]}}


def write(tmp_path, entries, *, name="tasks_en.json"):
    folder = tmp_path / "vitabench" / "delivery"
    folder.mkdir(parents=True, exist_ok=True)
    text = entries if isinstance(entries, str) else json.dumps(entries)
    (folder / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_samples_load_without_a_data_dir():
    tasks = load_tasks(("delivery",), data_dir=None)
    assert [t.id for t in tasks] == [f"SB-D-00{i}" for i in range(1, 8)]
    for t in tasks:
        assert (t.benchmark, t.domain, t.lang) == ("vitabench", "delivery", "en")
        assert t.persona["user_profile"]["user id"] == t.environment["user_id"]
        assert t.evaluation["expected_states"][0]["required_orders"]
        assert t.source.endswith("vitabench_delivery.json")


@pytest.mark.parametrize("domains, lang, message", [
    (("delivery",), "zh", "English only"),
    (("cinema",), "en", "no built-in VitaBench sample tasks for 'cinema'"),
    (("delivery", "cinema"), "en", "no VitaBench environment for domain 'cinema'"),
    (("delivery", "size=3"), "en", "unknown VitaBench option 'size'"),
    (("delivery", "instore", "tasks="), "en", "tasks= names no task folder"),
    (("delivery",), "fr", "unknown language 'fr'"),
])
def test_samples_refuse_what_they_do_not_have(domains, lang, message):
    with pytest.raises(TaskError, match=message):
        load_tasks(domains, data_dir=None, lang=lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_real_tasks_load_in_both_languages(shared_data, lang):
    tasks = load_tasks(("delivery",), data_dir=shared_data, lang=lang)
    assert len(tasks) == 80 and len({t.id for t in tasks}) == 80
    assert all(t.lang == lang and t.evaluation["expected_states"] for t in tasks)
    assert tasks[0].source.endswith("tasks_en.json" if lang == "en" else "tasks.json")
    same = load_tasks(("delivery",), data_dir=shared_data / "vitabench", lang=lang)
    assert [t.key for t in same] == [t.key for t in tasks]


def test_keeps_persona_history_and_evaluation(tmp_path):
    task, = load_tasks(("delivery",), data_dir=write(tmp_path, [GOOD]))
    assert task.persona == GOOD["user_scenario"]
    assert task.evaluation == GOOD["evaluation_criteria"]
    assert (task.id, task.instructions, task.message_history) == ("T1", "Order noodles.", [])


def test_numeric_ids_become_text(tmp_path):
    assert load_tasks(("delivery",), data_dir=write(tmp_path, [{**GOOD, "id": 7}]))[0].id == "7"


@pytest.mark.parametrize("entries, message", [
    ("[{", "not valid JSON"),
    ({"id": "T1"}, "expected a list of tasks"),
    (["T1"], "task #0: not an object"),
    ([{**GOOD, "id": None}], "task #0: id is missing"),
    ([{k: v for k, v in GOOD.items() if k != "environment"}], "task T1: missing environment"),
    ([{**GOOD, "instructions": None, "user_scenario": None}], "task T1: missing instructions, user_scenario"),
    ([{**GOOD, "environment": []}], "task T1: environment should be a dict, got list"),
    ([{**GOOD, "message_history": ["hi"]}], "task T1: message_history should be a list of messages"),
    ([GOOD, GOOD], "task id 'T1' appears more than once"),
])
def test_broken_files_name_the_file_the_task_and_the_problem(tmp_path, entries, message):
    root = write(tmp_path, entries)
    with pytest.raises(TaskError, match=message) as err:
        load_tasks(("delivery",), data_dir=root)
    assert "tasks_en.json" in str(err.value)


def test_a_missing_file_names_the_path(tmp_path):
    root = write(tmp_path, [GOOD])
    with pytest.raises(TaskError, match=r"delivery/tasks\.json: no VitaBench task file"):
        load_tasks(("delivery",), data_dir=root, lang="zh")


def test_instore_and_travel_samples_load_without_a_data_dir():
    assert [t.id for t in load_tasks(("instore",), data_dir=None)] == [f"SB-I-00{i}" for i in range(1, 5)]
    assert [t.id for t in load_tasks(("ota",), data_dir=None)] == [f"SB-O-00{i}" for i in range(1, 7)]


def test_a_composition_runs_the_cross_domain_tasks_tagged_with_all_its_domains():
    tasks = load_tasks(("delivery", "instore", "ota"), data_dir=None)
    assert [t.id for t in tasks] == ["SB-X-001", "SB-X-002"]
    assert {t.domain for t in tasks} == {"delivery,instore,ota"}
    assert {t.domains for t in tasks} == {("delivery", "instore", "ota")}
    assert all(t.source.endswith("vitabench_cross_domain.json") for t in tasks)
    # another composition runs the same file in another environment, keyed apart
    two = load_tasks(("delivery", "instore"), data_dir=None)
    assert [t.id for t in two] == ["SB-X-001", "SB-X-002"] and two[0].key != tasks[0].key


@pytest.mark.parametrize("lang, ids", [("en", ["C-EN-001", "C-EN-002"]), ("zh", ["C-ZH-001", "C-ZH-002"])])
def test_cross_domain_files_load_from_the_data_dir(lang, ids):
    tasks = load_tasks(("delivery", "instore", "ota"), data_dir=FIXTURES, lang=lang)
    assert [t.id for t in tasks] == ids
    assert all(t.source.endswith(f"cross_domain/{'tasks_en' if lang == 'en' else 'tasks'}.json")
               and t.lang == lang and t.domain == "delivery,instore,ota" for t in tasks)


@pytest.mark.parametrize("lang, ids", [("en", ["O-EN-001", "O-EN-002"]), ("zh", ["O-ZH-001", "O-ZH-002"])])
def test_travel_files_load_from_the_data_dir(lang, ids):
    tasks = load_tasks(("ota",), data_dir=FIXTURES, lang=lang)
    assert [t.id for t in tasks] == ids and {t.domain for t in tasks} == {"ota"}


def test_the_tasks_option_runs_another_folder_in_the_merged_environment():
    tasks = load_tasks(("delivery", "instore", "tasks=delivery"), data_dir=None)
    alone = load_tasks(("delivery",), data_dir=None)
    assert [t.id for t in tasks] == [t.id for t in alone]
    assert {t.domain for t in tasks} == {"delivery,instore,tasks=delivery"}
    assert tasks[0].key != alone[0].key


@pytest.mark.parametrize("domains, where", [
    (("delivery", "instore", "ota"), "cross_domain/tasks_en.json"),
    (("ota",), "ota/tasks_en.json"),
])
def test_a_missing_upstream_file_says_where_it_belongs(tmp_path, domains, where):
    (tmp_path / "vitabench").mkdir()
    with pytest.raises(TaskError) as err:
        load_tasks(domains, data_dir=tmp_path)
    message = str(err.value)
    assert f"vitabench/{where}: no VitaBench task file" in message
    assert f"put upstream's file there, from https://github.com/meituan-longcat/vitabench " \
           f"(data/vita/domains/{where})" in message


def test_real_instore_tasks_load_with_their_message_history(shared_data):
    tasks = load_tasks(("instore",), data_dir=shared_data)
    assert len(tasks) == 50 and all(isinstance(t.message_history, list) for t in tasks)
    with pytest.raises(TaskError, match="instore/tasks.json: no VitaBench task file"):
        load_tasks(("instore",), data_dir=shared_data, lang="zh")


def test_message_history_is_kept_as_given(tmp_path):
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello, how can I help?"}]
    task, = load_tasks(("delivery",), data_dir=write(tmp_path, [{**GOOD, "message_history": history}]))
    assert task.message_history == history
