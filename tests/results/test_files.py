"""Output files written whole or not at all: through a temporary sibling renamed into place,
missing folders made, devices written in place, every OS error a ConfigError naming the
path."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from sweepbench.errors import ConfigError
from sweepbench.results import files
from sweepbench.results.files import replace_file, replace_text


def test_a_file_is_written_through_a_temporary_sibling_then_renamed(tmp_path):
    out = tmp_path / "r.html"
    out.write_text("old")
    seen = []

    def write(target: Path) -> str:
        seen.append((target, out.read_text()))  # the old file stays until the rename
        target.write_text("new")
        return "done"

    assert replace_file(out, write, suffix=".html") == "done"
    (target, before), = seen
    assert target == tmp_path / f".r.html.{os.getpid()}.tmp.html" and before == "old"
    assert out.read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]
    replace_file(str(out), lambda t: seen.append(t) or t.write_text("x"))
    assert seen[-1] == tmp_path / f".r.html.{os.getpid()}.tmp"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "r.csv"
    out.write_text("old")

    def boom(target: Path) -> None:
        target.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replace_file(out, boom)
    assert out.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.csv"]

    def no_space(target: Path) -> None:
        target.write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(ConfigError) as caught:
        replace_file(out, no_space)
    assert str(caught.value) == f"cannot write {out}: No space left on device"
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert out.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.csv"]
    # an OSError without a strerror is named by its text
    with pytest.raises(ConfigError) as caught:
        replace_file(out, lambda t: (_ for _ in ()).throw(OSError("odd")))
    assert str(caught.value) == f"cannot write {out}: odd"


def test_missing_folders_are_made_and_a_file_in_the_way_is_named(tmp_path):
    out = tmp_path / "a" / "b" / "r.json"
    assert replace_text(out, lambda f: f.write("{}")) == 2
    assert out.read_text() == "{}"
    (tmp_path / "plain").write_text("")
    for bad, blocker in ((tmp_path / "plain" / "r.json", tmp_path / "plain"),
                         (tmp_path / "plain" / "x" / "y" / "r.json", tmp_path / "plain")):
        with pytest.raises(ConfigError) as caught:
            replace_text(bad, lambda f: f.write("x"))
        assert str(caught.value) == f"cannot write {bad}: {blocker} is not a directory"
    assert not (tmp_path / "x").exists()


def test_a_folder_is_refused_and_a_device_is_written_in_place(tmp_path):
    with pytest.raises(ConfigError) as caught:
        replace_text(tmp_path, lambda f: f.write("x"))
    assert str(caught.value) == f"cannot write {tmp_path}: it is a directory"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        targets = []
        assert replace_file(fifo, lambda t: targets.append(t) or 7) == 7
        assert targets == [fifo]
        assert replace_text(fifo, lambda f: f.write("through")) == 7
        assert os.read(reader, 100) == b"through"
    finally:
        os.close(reader)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_text_is_utf8_without_newline_translation_and_synced(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(files.os, "fsync", lambda fd: synced.append(fd) or real(fd))
    out = tmp_path / "r.txt"
    assert replace_text(out, lambda f: f.write("é\r\nb\n")) == 5
    assert out.read_bytes() == "é\r\nb\n".encode()
    assert len(synced) == 1


def test_the_write_sees_its_text_flushed_before_the_sync(tmp_path, monkeypatch):
    sizes = []
    monkeypatch.setattr(files.os, "fsync", lambda fd: sizes.append(os.fstat(fd).st_size))
    replace_text(tmp_path / "r.txt", lambda f: f.write("abc"))
    assert sizes == [3]


def test_text_is_utf8_whatever_the_locale(tmp_path):
    """Under the C locale (and not in UTF-8 mode) Python's default encoding is ASCII: a
    report with a non-ASCII name is still written, as UTF-8."""
    import locale
    import sys

    if sys.flags.utf8_mode:
        pytest.skip("UTF-8 mode: the default encoding is UTF-8 whatever the locale")
    out = tmp_path / "r.txt"
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        assert locale.getencoding() == "ANSI_X3.4-1968"  # ASCII: the test means something
        replace_text(out, lambda f: f.write("caf\u00e9"))
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
    assert out.read_bytes() == "café".encode()
