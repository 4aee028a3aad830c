"""A run resumed after VitaBench's releases got names runs the release it ran."""

from __future__ import annotations

from sweepbench.cli.run import _as_recorded


def test_a_run_recorded_before_releases_had_names_resumes_the_first_release():
    legacy_info = {"benchmarks": {"vitabench": {}, "t1": {}}}
    assert _as_recorded(["vitabench:delivery", "vitabench", "t1:single"], legacy_info) == [
        "vitabench@2025-11:delivery", "vitabench@2025-11", "t1:single"]


def test_a_run_recorded_with_release_names_resumes_as_recorded():
    info = {"benchmarks": {"vitabench@2025-12": {}}}
    specs = ["vitabench@2025-12:delivery", "vitabench+own-prompts:ota"]
    assert _as_recorded(specs, info) == specs
    assert _as_recorded(None, info) is None
