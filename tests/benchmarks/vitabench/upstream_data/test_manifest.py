"""A data dir is trusted only while its files are the ones its manifest lists."""

from __future__ import annotations

import pytest

from sweepbench.benchmarks.vitabench.upstream_data.importer import import_data
from sweepbench.benchmarks.vitabench.upstream_data.manifest import find_manifest, verify
from sweepbench.errors import ManifestError

from .fake_upstream import make_checkout


@pytest.fixture
def data_dir(tmp_path):
    import_data(make_checkout(tmp_path / "src", "2025-11", git=True), tmp_path / "vitabench")
    return tmp_path / "vitabench"


def test_an_untouched_data_dir_verifies_from_itself_or_its_parent(data_dir):
    assert verify(data_dir).release == "2025-11"
    assert verify(data_dir.parent).files == verify(data_dir).files
    assert find_manifest(data_dir.parent) == data_dir / "manifest.json"
    (data_dir / "golden").mkdir()
    (data_dir / "golden" / "notes.md").write_text("not the manifest's business")
    assert verify(data_dir).release == "2025-11"


def test_a_changed_a_missing_and_an_added_file_are_each_named(data_dir):
    (data_dir / "delivery/tasks.json").write_bytes(b"[]")
    (data_dir / "upstream/prompts/agent_system_prompt.yaml").unlink()
    (data_dir / "ota").mkdir()
    (data_dir / "ota/tasks_en.json").write_bytes(b"[]")
    with pytest.raises(ManifestError) as err:
        verify(data_dir)
    assert str(err.value) == (
        f"{data_dir}: files differ from manifest.json (release 2025-11): delivery/tasks.json "
        "has changed; upstream/prompts/agent_system_prompt.yaml is missing; ota/tasks_en.json "
        "is not in it; import the data again to use them")


@pytest.mark.parametrize(("edit", "message"), [
    (lambda m: m.replace(b'"delivery/tasks.json"', b'"../tasks.json"'),
     "lists '../tasks.json', which is not a path inside the data dir"),
    (lambda m: m.replace(b'"2025-11"', b'"2031-01"'),
     "names release '2031-01' at '96f3b85', which is not a VitaBench release"),
    (lambda m: m.replace(b'"96f3b85"', b'"742e240"'),
     "names release '2025-11' at '742e240', which is not a VitaBench release"),
    (lambda m: m.replace(b'"format": 1', b'"format": 9'),
     "manifest format 9; this sweepbench reads format 1"),
    (lambda m: m[:-20], "not a sweepbench data-dir manifest: "),
    (lambda m: m.replace(b'"files"', b'"filez"'),
     "not a sweepbench data-dir manifest: Object missing required field `files`"),
])
def test_a_manifest_that_cannot_be_believed_is_an_error(data_dir, edit, message):
    path = data_dir / "manifest.json"
    path.write_bytes(edit(path.read_bytes()))
    with pytest.raises(ManifestError) as err:
        verify(data_dir)
    assert str(err.value).startswith(f"{path}: {message}")


def test_a_data_dir_without_a_manifest_is_an_error(tmp_path):
    with pytest.raises(ManifestError) as err:
        verify(tmp_path)
    assert str(err.value) == (f"{tmp_path}: no manifest.json (a data dir made by `sweepbench "
                              "data vitabench` has one)")
