"""Terminal manners: a reader that goes away (``| head``) ends every command quietly with
status 141; every option of every command says what it does."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sweepbench.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def _to_closed_pipe(*argv: str) -> subprocess.CompletedProcess:
    """``sweepbench ARGV`` writing to a pipe whose reader has gone already."""
    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        return subprocess.run([sys.executable, "-m", "sweepbench", *argv], stdout=write,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    finally:
        os.close(write)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("pipes") / "s.sqlite"
    subprocess.run([sys.executable, "-m", "sweepbench", "run", "--benchmark", "t1:single",
                    "--limit", "2", "--trials", "1", "--model", "scripted/oracle",
                    "--out", str(path), "--no-progress", "--json"],
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                   check=True, timeout=120)
    return str(path)


@pytest.mark.parametrize("argv", [
    ("report", "{store}", "--json"), ("report", "{store}"), ("export", "--columns"),
    ("tools",), ("tools", "--json"), ("tasks", "--benchmark", "t1:single"),
    ("plan", "--out", "{store}"), ("plan", "--out", "{store}", "--json")])
def test_a_reader_that_went_away_ends_every_command_quietly_with_141(store, argv):
    done = _to_closed_pipe(*(a.format(store=store) for a in argv))
    assert (done.returncode, done.stderr) == (141, "")


def _actions(parser: argparse.ArgumentParser, prog: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, f"{prog} {name}")
        else:
            yield prog, action


def test_every_option_of_every_command_has_a_help_text():
    missing = [f"{prog} {'/'.join(a.option_strings) or a.dest}"
               for prog, a in _actions(build_parser(), "sweepbench")
               if not a.help and not isinstance(a, argparse._HelpAction)]
    assert missing == []
