"""Every bad option, config, store or output path of issue 9 (points 12/14) ends the command
with one line on stderr naming the file, key or endpoint, and a non-zero exit; none prints a
traceback. Values are checked where they enter (config load, argument parsing, store open),
so nothing runs first."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path

import pytest

from sweepbench.store import runstore as store_module
from sweepbench.store.runstore import RunStore
from sweepbench.store.writer import StoreWriter

from .helpers import call


def toml_endpoint(**fields) -> str:
    """A config whose one model is a scripted endpoint with ``fields``."""
    body = "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items())
    return f'models = ["scripted/oracle"]\n[[endpoints]]\nname = "scripted/oracle"\n{body}'


CONFIGS = {
    "breaker_threshold=0": (toml_endpoint(breaker_threshold=0), "breaker_threshold"),
    "max_concurrency=0": (toml_endpoint(max_concurrency=0), "max_concurrency"),
    "rpm=0": (toml_endpoint(rpm=0), "rpm"),
    "tpm=-5": (toml_endpoint(tpm=-5), "tpm"),
    "max_retries=-1": (toml_endpoint(max_retries=-1), "max_retries"),
    "fault p>1": ('reference_faults = "500=1.5"\n', "reference_faults"),
    "fault p<0": ('reference_faults = "429=-0.1"\n', "reference_faults"),
    "max_turns=-1": ("max_turns = -1\n", "max_turns"),
    "limit=-1": ("limit = -1\n", "limit"),
    "duplicate endpoints": (
        '[[endpoints]]\nname = "m"\nbase_url = "http://127.0.0.1:1/v1"\n'
        '[[endpoints]]\nname = "m"\nbase_url = "http://127.0.0.1:2/v1"\n', "'m'"),
    "unknown scripted": ('models = ["scripted/nosuch"]\n', "scripted/nosuch"),
    "scripted endpoint model": (
        'models = ["scripted/mine"]\n[[endpoints]]\nname = "scripted/mine"\n'
        'model = "scripted/orcale"\n', "model 'scripted/mine': unknown scripted model "
        "'scripted/orcale'"),
}


@pytest.fixture
def paths(tmp_path):
    store = tmp_path / "good.sqlite"
    with RunStore(store) as s:
        s.begin_run("r1", {"models": ["m"]}, info={"command": "run"})
    not_store = tmp_path / "notes.sqlite"
    not_store.write_text("not a database\n")
    return {"tmp": tmp_path, "store": store, "not_store": not_store}


def cases(p) -> dict[str, tuple[list[str], str]]:
    """case -> (argv, what the error line must name)."""
    tmp, store, out = p["tmp"], str(p["store"]), str(p["tmp"] / "o.csv")
    run = ["run", "--out", str(tmp / "run.sqlite"), "--no-progress"]
    found = {
        "export missing store": (["export", str(tmp / "nope.sqlite"), "--csv", out], "nope.sqlite"),
        "export unknown run": (["export", store, "--run", "r-nope", "--csv", out], "r-nope"),
        "report --k 0": (["report", store, "--k", "0"], "--k"),
        "report --k -2": (["report", store, "--k", "-2"], "--k"),
        "report non-store": (["report", str(p["not_store"])], "notes.sqlite"),
        "export non-store": (["export", str(p["not_store"]), "--csv", out], "notes.sqlite"),
        "html under a file": (["report", store, "--html", f"{p['not_store']}/r.html"],
                              "notes.sqlite is not a directory"),
        "csv under a file": (["export", store, "--csv", f"{p['not_store']}/x.csv"],
                             "notes.sqlite is not a directory"),
        "serve --port 99999": (["serve", "--port", "99999"], "--port"),
        "view --port 70000": (["view", store, "--port", "70000"], "--port"),
        "serve --host 1.2.3.4": (["serve", "--host", "1.2.3.4"], "'1.2.3.4'"),
        "--limit -1": ([*run, "--limit", "-1"], "limit"),
        "--trials 10^9": ([*run, "--trials", str(10**9)], "trials must be <= 1000"),
        "--trials 0": ([*run, "--trials", "0"], "trials"),
        "--task ../../etc": ([*run, "--task", "../../etc"], "../../etc"),
        "--task unknown": ([*run, "--task", "no-such-task"], "no task 'no-such-task'"),
        "--model scripted/nope": ([*run, "--model", "scripted/nope"], "scripted/oracle"),
        "--model scripted/noisy:2": ([*run, "--model", "scripted/noisy:2"], "scripted/noisy:2"),
        "--max-concurrency 0": ([*run, "--max-concurrency", "0"], "--max-concurrency"),
        "--latency -1": ([*run, "--latency", "-1"], "--latency"),
    }
    return found


CASES = sorted(cases({"tmp": Path("/x"), "store": "s", "not_store": "n"}))

def nothing_ran(store: Path) -> bool:
    """Refused before anything ran: no store, or one with no run in it."""
    if not store.exists():
        return True
    with sqlite3.connect(store) as db:
        return db.execute("select count(*) from runs").fetchone()[0] == 0


def assert_one_line_error(code: int, err: str, names: str) -> None:
    assert code != 0
    assert "Traceback" not in err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, f"not one line: {err!r}"
    assert lines[0].startswith("error: ") and names in lines[0], lines[0]


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_naming_it_and_a_non_zero_exit(case, paths, capsys):
    argv, names = cases(paths)[case]
    code = call(argv)
    out, err = capsys.readouterr()
    assert_one_line_error(code, err, names)
    assert nothing_ran(paths["tmp"] / "run.sqlite")


@pytest.mark.parametrize("case", sorted(CONFIGS))
def test_bad_config_is_one_line_naming_the_key_and_a_non_zero_exit(case, tmp_path, capsys):
    text, names = CONFIGS[case]
    config = tmp_path / "sweep.toml"
    config.write_text(text, encoding="utf-8")
    code = call(["run", "--config", str(config), "--out", str(tmp_path / "run.sqlite"),
                 "--no-progress"])
    assert_one_line_error(code, capsys.readouterr().err, names)
    assert nothing_ran(tmp_path / "run.sqlite")


@pytest.mark.parametrize("command", ["serve", "view"])
def test_a_port_in_use_is_one_line(command, paths, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = ["serve"] if command == "serve" else ["view", str(paths["store"])]
        code = call([*argv, "--port", str(port)])
    assert_one_line_error(code, capsys.readouterr().err, f"cannot listen on 127.0.0.1:{port}")


def read_only(monkeypatch):
    """Stores open as on a read-only mount (as root, file permissions would not stop us)."""
    def connect(path, busy_timeout):
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None,
                               check_same_thread=False, timeout=busy_timeout)
    monkeypatch.setattr(store_module, "_connect", connect)


def test_a_store_on_a_read_only_path_is_refused_at_open_by_a_run(paths, monkeypatch, capsys):
    read_only(monkeypatch)  # report, export, view read it: tests/store/test_readonly.py
    store = str(paths["store"])
    code = call(["run", "--out", store, "--no-progress", "--limit", "1"])
    assert_one_line_error(code, capsys.readouterr().err, f"{store}: attempt to write a "
                          "readonly database (the store's file and folder must be writable")


def test_disk_full_during_a_run_ends_it_with_one_line_and_keeps_what_was_stored(
        tmp_path, monkeypatch, capsys):
    commit = StoreWriter._commit

    def fill_up(self, writes):  # the disk fills once episodes finish
        if any(op == "episode_finished" for op, *_ in writes):
            raise sqlite3.OperationalError("database or disk is full")
        commit(self, writes)

    monkeypatch.setattr(StoreWriter, "_commit", fill_up)
    # the writer commits whatever is queued when it wakes, so the run's start goes in first
    monkeypatch.setitem(RunStore.__init__.__kwdefaults__, "commit_every_s", 0.0)
    out = tmp_path / "full.sqlite"
    code = call(["run", "--benchmark", "vitabench:delivery", "--model", "scripted/oracle",
                 "--trials", "2", "--out", str(out), "--no-progress"])
    assert_one_line_error(code, capsys.readouterr().err,
                          f"run store {out}: writer failed")
    monkeypatch.undo()
    db = sqlite3.connect(out)  # the commits before the disk filled are there
    assert db.execute("select count(*) from runs").fetchone()[0] == 1
    assert db.execute("select count(*) from run_episodes").fetchone()[0] > 0


def test_an_export_that_hits_a_full_disk_is_one_line_and_leaves_no_file(paths, monkeypatch,
                                                                         capsys):
    def full(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("sweepbench.results.files.os.replace", full)
    target = paths["tmp"] / "t.jsonl"
    code = call(["export", str(paths["store"]), "--trajectories", str(target)])
    assert_one_line_error(code, capsys.readouterr().err, f"{target}: No space left on device")
    assert sorted(p.name for p in paths["tmp"].iterdir()) == ["good.sqlite", "notes.sqlite"]


def test_html_into_a_missing_directory_creates_it(paths, capsys):
    target = paths["tmp"] / "new" / "deeper" / "report.html"
    assert call(["report", str(paths["store"]), "--html", str(target)]) == 0
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
