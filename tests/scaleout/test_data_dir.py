"""Where a worker finds the data directory: the driver's path where it exists on the node,
else the copy Ray unpacked as the job's working directory."""

from __future__ import annotations

from sweepbench.scaleout.worker import data_dir_here


def test_the_drivers_path_where_it_exists_else_the_unpacked_copy(tmp_path, monkeypatch):
    here = tmp_path / "data"
    here.mkdir()
    assert data_dir_here(str(here)) == str(here)
    assert data_dir_here(None) is None
    monkeypatch.chdir(tmp_path)  # Ray's working_dir for the job on a node without the path
    assert data_dir_here("/no/such/dir/on/this/node") == str(tmp_path)


def test_a_joined_cluster_gets_the_package_and_the_data_dir_with_the_job(tmp_path):
    import pytest

    pytest.importorskip("ray", reason="the ray extra is not installed")
    from pathlib import Path

    import sweepbench.scaleout
    from sweepbench.scaleout.cluster import Cluster

    env = Cluster(workers=2, address="10.0.0.5:6379", data_dir=tmp_path).runtime_env()
    package = Path(sweepbench.scaleout.__file__).resolve().parents[1]
    assert env == {"py_modules": [str(package)], "working_dir": str(tmp_path)}
    # no data dir (the built-in samples, generated T1): only the package
    assert Cluster(workers=2, address="auto").runtime_env() == {"py_modules": [str(package)]}
