"""Building a data dir from upstream's files: what is written, which release it is, what is
refused, on a small fake checkout (``fake_upstream``) made in tmp_path."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess

import pytest

from sweepbench.benchmarks.vitabench.upstream_data import importer as data_import
from sweepbench.benchmarks.vitabench.upstream_data.importer import import_data, summary
from sweepbench.benchmarks.vitabench.upstream_data.manifest import verify
from sweepbench.errors import (
    ConfigError,
    DataDirError,
    ReleaseError,
    ReleaseMixError,
    SourceError,
)

from .fake_upstream import (
    LICENSE,
    TEMPLATE,
    descriptions,
    make_checkout,
    release_commit,
    task_bytes,
    tasks,
    write_git_head,
    write_tools,
)

ABSENT = ["cross_domain/tasks.json", "cross_domain/tasks_en.json", "instore/tasks.json",
          "ota/tasks.json", "ota/tasks_en.json"]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_checkout_at_the_november_commit_is_that_release_with_every_file_as_upstream_has_it(
        tmp_path):
    src = make_checkout(tmp_path / "src", "2025-11", git=True)
    out = tmp_path / "out"
    manifest = import_data(src, out)
    assert (manifest.release, manifest.release_commit, manifest.matched_by, manifest.source) == (
        "2025-11", "96f3b85", "commit", "checkout")
    assert manifest.upstream_commit == release_commit("2025-11")
    assert manifest.absent == ABSENT
    task_file = src / "data/vita/domains/delivery/tasks.json"
    assert (out / "delivery/tasks.json").read_bytes() == task_file.read_bytes()
    assert (out / "upstream/prompts/agent_system_prompt.yaml").read_bytes() == TEMPLATE
    assert (out / "LICENSE").read_bytes() == LICENSE
    built = (out / "upstream/tool_descriptions.json").read_bytes()
    assert built == json.dumps(descriptions("2025-11"), ensure_ascii=False, indent=1).encode()
    assert manifest.files == {rel: sha((out / rel).read_bytes()) for rel in [
        "LICENSE", "delivery/tasks.json", "delivery/tasks_en.json", "instore/tasks_en.json",
        "upstream/prompts/agent_system_prompt.yaml", "upstream/tool_descriptions.json"]}
    assert json.loads((out / "manifest.json").read_bytes())["release"] == "2025-11"
    assert manifest.evidence[0] == ".git HEAD: commit 96f3b85 -> 2025-11"
    assert not (out / "upstream/prompts/__init__.py").exists()


def test_the_updated_release_is_told_by_its_content_when_there_is_no_git(tmp_path):
    manifest = import_data(make_checkout(tmp_path / "src", "2025-12"), tmp_path / "out")
    assert (manifest.release, manifest.matched_by, manifest.upstream_commit) == (
        "2025-12", "content", None)
    assert manifest.evidence == [
        "data/vita/domains/delivery/tasks.json: store products with a quantity -> 2025-12",
        "data/vita/domains/delivery/tasks_en.json: store products with a quantity -> 2025-12",
        "src/vita/domains/delivery/tools_schema.py: names delivery_store_search_recommend "
        "-> 2025-12",
        "src/vita/domains/ota/tools_schema.py: names hotel_search_recommend -> 2025-12",
        "src/vita/domains/delivery/tools.py: names delivery_store_search_recommend -> 2025-12",
        "src/vita/domains/ota/tools.py: names hotel_search_recommend -> 2025-12",
        "data/vita/domains/instore/tasks_en.json: not a released file, and nothing in it "
        "tells a release",
    ]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_real_git_clone_records_its_commit_and_a_later_commit_is_told_by_content(tmp_path):
    src = make_checkout(tmp_path / "src", "2025-12")
    git = ["git", "-C", str(src), "-c", "user.name=t", "-c", "user.email=t@t",
           "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fake"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    manifest = import_data(src, tmp_path / "out")
    assert (manifest.upstream_commit, manifest.release, manifest.matched_by) == (
        head, "2025-12", "content")
    assert f".git HEAD: commit {head[:7]}, not a release's commit" in manifest.evidence


def test_schemas_of_one_release_with_tasks_of_the_other_are_refused_naming_the_files(tmp_path):
    src = make_checkout(tmp_path / "src", "2025-11")
    for name, lang in (("tasks.json", "zh"), ("tasks_en.json", "en")):
        (src / "data/vita/domains/delivery" / name).write_bytes(
            task_bytes(tasks("2025-12", lang)))
    with pytest.raises(ReleaseMixError) as err:
        import_data(src, tmp_path / "out")
    assert str(err.value) == (
        f"{src}: files of different VitaBench releases: 2025-11: "
        "src/vita/domains/delivery/tools_schema.py (names delivery_store_search_recommand), "
        "src/vita/domains/ota/tools_schema.py (names hotel_search_recommand), "
        "src/vita/domains/delivery/tools.py (names delivery_store_search_recommand), "
        "src/vita/domains/ota/tools.py (names hotel_search_recommand); 2025-12: "
        "data/vita/domains/delivery/tasks.json (store products with a quantity), "
        "data/vita/domains/delivery/tasks_en.json (store products with a quantity)")
    assert not (tmp_path / "out").exists()


def test_code_of_one_release_with_schemas_of_the_other_is_refused(tmp_path):
    src = make_checkout(tmp_path / "src", "2025-12", git=True)
    write_tools(src / "src/vita/domains/ota/tools.py", ["hotel_search_recommand"])
    with pytest.raises(ReleaseMixError) as err:
        import_data(src, tmp_path / "out")
    assert str(err.value).startswith(
        f"{src}: files of different VitaBench releases: 2025-11: src/vita/domains/ota/tools.py "
        "(names hotel_search_recommand); 2025-12: .git HEAD (commit 742e240), ")


def test_a_commit_contradicted_by_the_work_tree_is_a_mix(tmp_path):
    src = make_checkout(tmp_path / "src", "2025-12")
    write_git_head(src, release_commit("2025-11"))
    with pytest.raises(ReleaseMixError, match=r"2025-11: \.git HEAD \(commit 96f3b85\); "
                                              r"2025-12: data/vita/domains/delivery/tasks\.json"):
        import_data(src, tmp_path / "out")


def test_a_dataset_release_is_its_task_files_and_says_what_it_lacks(tmp_path):
    src = tmp_path / "dataset"
    (src / "delivery").mkdir(parents=True)
    (src / "delivery/tasks_en.json").write_bytes(task_bytes(tasks("2025-11", "en")))
    out = tmp_path / "out"
    manifest = import_data(src, out)
    assert (manifest.release, manifest.source, manifest.matched_by) == (
        "2025-11", "dataset", "content")
    assert manifest.absent == ["cross_domain/tasks.json", "cross_domain/tasks_en.json",
                               "delivery/tasks.json", "instore/tasks.json",
                               "instore/tasks_en.json", "ota/tasks.json", "ota/tasks_en.json",
                               "upstream/prompts", "upstream/tool_descriptions.json", "LICENSE"]
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "delivery/tasks_en.json", "manifest.json"]
    assert summary(manifest, out) == (
        f"VitaBench 2025-11 (upstream 96f3b85), told by the files -> {out}\n"
        "  task files: delivery/tasks_en.json\n"
        "  not in the source: cross_domain/tasks.json, cross_domain/tasks_en.json, "
        "delivery/tasks.json, instore/tasks.json, instore/tasks_en.json, ota/tasks.json, "
        "ota/tasks_en.json, upstream/prompts, upstream/tool_descriptions.json, LICENSE")


def test_a_dataset_whose_files_tell_nothing_needs_the_release_named(tmp_path):
    src = tmp_path / "dataset"
    (src / "instore").mkdir(parents=True)
    (src / "instore/tasks_en.json").write_bytes(b'[{"id": "I1"}]')
    with pytest.raises(ReleaseError) as err:
        import_data(src, tmp_path / "out")
    assert type(err.value) is ReleaseError
    assert str(err.value) == (
        f"{src}: these files fit VitaBench releases 2025-11 and 2025-12 alike "
        "(instore/tasks_en.json: not a released file, and nothing in it tells a release); "
        "name the release")
    manifest = import_data(src, tmp_path / "out", release="2025-12")
    assert (manifest.release, manifest.matched_by) == ("2025-12", "name")


def test_a_dataset_whose_task_files_contradict_the_named_release_is_refused(tmp_path):
    src = tmp_path / "dataset"
    (src / "delivery").mkdir(parents=True)
    (src / "delivery/tasks.json").write_bytes(task_bytes(tasks("2025-12", "zh")))
    with pytest.raises(ReleaseMixError) as err:
        import_data(src, tmp_path / "out", release="2025-11")
    assert str(err.value) == (f"{src} is not VitaBench release 2025-11: 2025-12: "
                              "delivery/tasks.json (store products with a quantity)")
    with pytest.raises(ConfigError, match="unknown VitaBench release '2024-01'"):
        import_data(src, tmp_path / "out", release="2024-01")


def test_a_missing_task_file_is_reported_not_refused(tmp_path):
    src = make_checkout(tmp_path / "src", "2025-12", git=True)
    (src / "data/vita/domains/delivery/tasks_en.json").unlink()
    out = tmp_path / "out"
    manifest = import_data(src, out)
    assert manifest.absent == ["cross_domain/tasks.json", "cross_domain/tasks_en.json",
                               "delivery/tasks_en.json", "instore/tasks.json",
                               "ota/tasks.json", "ota/tasks_en.json"]
    assert summary(manifest, out) == (
        f"VitaBench 2025-12 (upstream 742e240), told by HEAD's commit -> {out}\n"
        "  task files: delivery/tasks.json, instore/tasks_en.json\n"
        "  upstream: 1 prompt templates, tool descriptions\n"
        "  not in the source: cross_domain/tasks.json, cross_domain/tasks_en.json, "
        "delivery/tasks_en.json, instore/tasks.json, ota/tasks.json, ota/tasks_en.json")


@pytest.mark.parametrize(("rel", "data", "message"), [
    ("data/vita/domains/delivery/tasks.json", b"[{\"id\": 1},",
     "data/vita/domains/delivery/tasks.json: not valid JSON: "),
    ("data/vita/domains/delivery/tasks.json", b'{"id": 1}',
     "data/vita/domains/delivery/tasks.json: should be a list of tasks, got dict"),
    ("data/vita/domains/instore/tasks_en.json", b'[{"id": 1}, {"name": "x"}]',
     "data/vita/domains/instore/tasks_en.json: task #1 is not a task with an id"),
    ("src/vita/prompts/agent_system_prompt.yaml", b"- a list\n",
     "src/vita/prompts/agent_system_prompt.yaml: should be a mapping of template texts, got list"),
    ("src/vita/prompts/agent_system_prompt.yaml", b"a: [\n",
     "src/vita/prompts/agent_system_prompt.yaml: not YAML: "),
    ("src/vita/domains/ota/tools_schema.py", b"TOOL_DESCRIPTIONS_ZH = {\n",
     "src/vita/domains/ota/tools_schema.py: not Python (line 1: "),
    ("src/vita/domains/ota/tools_schema.py",
     b"TOOL_DESCRIPTIONS_ZH = load()\nTOOL_DESCRIPTIONS_EN = {}\n",
     "src/vita/domains/ota/tools_schema.py: TOOL_DESCRIPTIONS_ZH (line 1) is not a plain "
     "literal: malformed node or string"),
])
def test_untrusted_files_that_are_not_what_upstream_writes_are_refused_by_name(
        tmp_path, rel, data, message):
    src = make_checkout(tmp_path / "src", "2025-12")
    (src / rel).write_bytes(data)
    with pytest.raises(SourceError) as err:
        import_data(src, tmp_path / "out")
    assert str(err.value).startswith(message)
    assert not (tmp_path / "out").exists()


def test_a_partial_set_of_schema_sources_is_refused(tmp_path):
    src = make_checkout(tmp_path / "src", "2025-12")
    (src / "src/vita/domains/instore/tools_schema.py").unlink()
    with pytest.raises(SourceError) as err:
        import_data(src, tmp_path / "out")
    assert str(err.value) == (f"{src}: the tool descriptions are incomplete: "
                              "src/vita/domains/instore/tools_schema.py missing")


def test_what_is_not_a_source_and_where_not_to_write_are_errors(tmp_path):
    src = make_checkout(tmp_path / "src", "2025-12")
    bare = tmp_path / "bare.git"
    for d in ("objects", "refs"):
        (bare / d).mkdir(parents=True)
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    with pytest.raises(SourceError, match="a bare git repository has no files to read"):
        import_data(bare, tmp_path / "out")
    with pytest.raises(SourceError, match="neither upstream VitaBench's repository"):
        import_data(tmp_path / "src" / "src" / "vita" / "prompts", tmp_path / "out")
    with pytest.raises(SourceError, match="not a directory"):
        import_data(src / "LICENSE", tmp_path / "out")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    with pytest.raises(DataDirError, match="exists and is not an empty directory"):
        import_data(src, tmp_path / "full")
    (tmp_path / "empty").mkdir()
    assert import_data(src, tmp_path / "empty").release == "2025-12"


def test_a_failure_while_writing_leaves_no_data_dir_and_no_partial_one(tmp_path, monkeypatch):
    src = make_checkout(tmp_path / "src", "2025-12")

    def broken(folder, manifest):
        raise OSError("disk full")

    monkeypatch.setattr(data_import, "write_manifest", broken)
    with pytest.raises(OSError, match="disk full"):
        import_data(src, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


@pytest.mark.parametrize(("name", "release"), [("data", "2025-11"), ("data-v2", "2025-12")])
def test_the_shared_data_dirs_import_as_datasets_of_their_release(
        tmp_path, shared_root, name, release):
    shared = shared_root.parent / name / "vitabench"
    if not shared.is_dir():
        pytest.skip(f"shared data is not at {shared}")
    out = tmp_path / "out"
    manifest = import_data(shared, out)
    assert (manifest.release, manifest.matched_by, manifest.source) == (
        release, "content", "dataset")
    assert sorted(manifest.files) == ["LICENSE", "delivery/tasks.json", "delivery/tasks_en.json",
                                      "instore/tasks_en.json"]
    for rel in manifest.files:
        assert (out / rel).read_bytes() == (shared / rel).read_bytes()
    assert verify(out) == manifest
