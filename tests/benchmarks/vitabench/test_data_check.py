"""A data dir is never silently different from upstream: real task files need upstream's
templates (else an error naming ``sweepbench data vitabench``, or ``+own-prompts`` runs them
and says so), and a data dir of the other release is refused, by its manifest or its names."""

from __future__ import annotations

import json
import shutil

import pytest

from sweepbench.benchmarks import registry
from sweepbench.benchmarks.catalog import load_tasks
from sweepbench.benchmarks.vitabench.data_check import OWN_PROMPTS, require_upstream
from sweepbench.benchmarks.vitabench.tasks import SAMPLES
from sweepbench.benchmarks.vitabench.upstream_data.importer import import_data
from sweepbench.errors import ManifestError, TaskError

from .upstream_data.fake_upstream import make_checkout


def sample_data(tmp_path, *, prompts=False, descriptions=None):
    root = tmp_path / "data" / "vitabench"
    (root / "delivery").mkdir(parents=True)
    shutil.copy(SAMPLES / "vitabench_delivery.json", root / "delivery" / "tasks_en.json")
    if prompts:
        (root / "upstream" / "prompts").mkdir(parents=True)
    if descriptions is not None:
        (root / "upstream").mkdir(exist_ok=True)
        (root / "upstream" / "tool_descriptions.json").write_text(json.dumps(descriptions))
    return tmp_path / "data"


def test_task_files_without_upstreams_templates_name_the_import_command(tmp_path):
    data = sample_data(tmp_path)
    with pytest.raises(TaskError) as err:
        require_upstream(data)
    text = str(err.value)
    assert "upstream/prompts/ (the prompt templates) and upstream/tool_descriptions.json" in text
    assert "`sweepbench data vitabench <upstream checkout>`" in text and "--prompts own" in text
    assert OWN_PROMPTS in text
    require_upstream(None)  # the built-in samples have no templates by design


def test_a_run_needs_them_and_own_prompts_runs_without_saying_it_is_comparable(tmp_path):
    data = sample_data(tmp_path)
    (task, *_) = load_tasks("vitabench:delivery", data_dir=data)  # listing needs none
    with pytest.raises(TaskError, match="sweepbench data vitabench"):
        registry.get("vitabench").fingerprint(task, data)
    own = registry.get("vitabench+own-prompts")
    assert own.name == "vitabench@2025-12+own-prompts" and OWN_PROMPTS in own.headline_label
    (task, *_) = own.load_tasks(("delivery",), data_dir=data, lang="en")
    assert own.fingerprint(task, data) == own.fingerprint(task, None)  # the own prompts, both


def test_a_hand_made_data_dir_of_the_other_release_is_refused_by_its_tool_names(tmp_path):
    old_names = {"delivery": {"en": {"delivery_store_search_recommand": {}}}}
    data = sample_data(tmp_path, prompts=True, descriptions=old_names)
    registry.get("vitabench@2025-11").load_tasks(("delivery",), data_dir=data, lang="en")
    with pytest.raises(TaskError) as err:
        registry.get("vitabench").load_tasks(("delivery",), data_dir=data, lang="en")
    assert "holds VitaBench release 2025-11 (by the tool names in " \
           "upstream/tool_descriptions.json), and vitabench@2025-12 was asked for: run it " \
           "with --release 2025-11" in str(err.value)


def test_a_built_data_dir_is_checked_against_its_manifest_and_release(tmp_path):
    out = tmp_path / "data" / "vitabench"
    import_data(make_checkout(tmp_path / "src", "2025-11", git=True), out)
    tasks = registry.get("vitabench@2025-11").load_tasks(("delivery",), data_dir=out.parent,
                                                         lang="en")
    assert [t.benchmark for t in tasks] == ["vitabench@2025-11"] * len(tasks) and tasks
    with pytest.raises(TaskError, match="holds VitaBench release 2025-11 \\(by its manifest"):
        registry.get("vitabench@2025-12").load_tasks(("delivery",), data_dir=out.parent,
                                                     lang="en")
    (out / "delivery" / "tasks_en.json").write_bytes(b"[]")
    with pytest.raises(ManifestError, match="delivery/tasks_en.json has changed"):
        registry.get("vitabench@2025-11").load_tasks(("delivery",), data_dir=out.parent,
                                                     lang="en")
