"""``sweepbench data``: a data dir built from upstream's files through the command line, and
each way it is refused said in one line with exit status 2."""

from __future__ import annotations

import json

from sweepbench.cli import main

from ..benchmarks.vitabench.upstream_data.fake_upstream import make_checkout


def test_the_command_builds_the_data_dir_and_says_where_and_which_release(tmp_path, capsys):
    src = make_checkout(tmp_path / "src", "2025-11", git=True)
    out = tmp_path / "data" / "vitabench"
    assert main(["data", "vitabench", str(src), "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert said.out.startswith("VitaBench 2025-11 (upstream 96f3b85), told by HEAD's commit")
    assert f"use it with --data-dir {out.parent}" in said.err
    assert json.loads((out / "manifest.json").read_bytes())["release"] == "2025-11"


def test_the_default_folder_is_under_the_data_env_var(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SWEEPBENCH_DATA", str(tmp_path / "env"))
    assert main(["data", "vitabench", str(make_checkout(tmp_path / "src", "2025-12"))]) == 0
    assert (tmp_path / "env" / "vitabench" / "manifest.json").is_file()


def test_a_release_in_the_name_must_be_the_files_release(tmp_path, capsys):
    src = make_checkout(tmp_path / "src", "2025-12", git=True)
    code = main(["data", "vitabench@2025-11", str(src), "--out", str(tmp_path / "o")])
    assert code == 2
    assert "is not VitaBench release 2025-11" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_two_releases_named_at_once_are_refused(tmp_path, capsys):
    src = make_checkout(tmp_path / "src", "2025-12")
    code = main(["data", "vitabench@2025-12", str(src), "--release", "2025-11",
                 "--out", str(tmp_path / "o")])
    assert code == 2
    assert "vitabench@2025-12 and --release 2025-11 name two releases" in capsys.readouterr().err


def test_a_benchmark_without_an_importer_says_so(tmp_path, capsys):
    assert main(["data", "t1", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "t1 has no data importer" in capsys.readouterr().err
