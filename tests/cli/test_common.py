"""What the commands share, at its edges: ``--shard`` parsing and the store a sweep goes into."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from sweepbench.cli.common import shard_of, store_path
from sweepbench.errors import ConfigError
from sweepbench.runner.work import Shard


@pytest.mark.parametrize(("given", "shard"), [
    ({}, Shard(0, 1)),  # a command without --shard (judge)
    ({"shard": None}, Shard(0, 1)),
    ({"shard": ""}, Shard(0, 1)),
    ({"shard": "0/1"}, Shard(0, 1)),
    ({"shard": "0/4"}, Shard(0, 4)),
    ({"shard": "3/4"}, Shard(3, 4)),
    ({"shard": " 1 / 2 "}, Shard(1, 2)),
])
def test_shard_of_reads_i_of_n(given, shard):
    assert shard_of(argparse.Namespace(**given)) == shard


@pytest.mark.parametrize(("text", "message"), [
    ("4/4", "--shard 4/4: need 0 <= I < N"),
    ("-1/2", "--shard -1/2: need 0 <= I < N"),
    ("0/0", "--shard 0/0: need 0 <= I < N"),
    ("1", "--shard takes I/N (e.g. 0/4), got '1'"),
    ("1/2/3", "--shard takes I/N (e.g. 0/4), got '1/2/3'"),
    ("a/b", "--shard takes I/N (e.g. 0/4), got 'a/b'"),
    ("1.0/2", "--shard takes I/N (e.g. 0/4), got '1.0/2'"),
])
def test_a_bad_shard_is_a_config_error_naming_it(text, message):
    with pytest.raises(ConfigError) as caught:
        shard_of(argparse.Namespace(shard=text))
    assert str(caught.value) == message


def test_store_path_is_out_else_the_default_one_per_shard():
    assert store_path("x/s.sqlite", Shard(1, 3)) == Path("x/s.sqlite")
    assert store_path(Path("s.db"), Shard(0, 1)) == Path("s.db")
    assert store_path(None, Shard(0, 1)) == Path("runs/sweepbench.sqlite")
    assert store_path("", Shard(0, 1)) == Path("runs/sweepbench.sqlite")
    assert store_path(None, Shard(1, 3)) == Path("runs/sweepbench.shard-1-of-3.sqlite")
    assert store_path(None, Shard(0, 2)) == Path("runs/sweepbench.shard-0-of-2.sqlite")
