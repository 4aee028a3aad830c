"""What a store SQLite cannot read is called (store/damage.py): damaged, not a store, read-only
or a full disk, told from SQLite's error and the file's own bytes, at the edges."""

from __future__ import annotations

import sqlite3

import pytest

from sweepbench.store.damage import (
    DAMAGED_ADVICE,
    is_damaged,
    open_error,
    read_only_error,
)


def err(message: str, name: str | None = None) -> sqlite3.Error:
    e = sqlite3.DatabaseError(message)
    if name is not None:
        e.sqlite_errorname = name  # as SQLite's own errors carry it
    return e


@pytest.mark.parametrize(("e", "damaged"), [
    (err("x", "SQLITE_CORRUPT"), True),
    (err("x", "SQLITE_CORRUPT_INDEX"), True),  # the extended codes too
    (err("x", "SQLITE_NOTADB"), True),
    (err("database disk image is malformed"), True),
    (err("file is not a database"), True),
    (err("database is locked", "SQLITE_BUSY"), False),
    (err("no such table: episodes"), False),
])
def test_damage_is_read_from_the_error_name_or_its_words(e, damaged) -> None:
    assert is_damaged(e) is damaged


@pytest.mark.parametrize(("e", "read_only"), [
    (err("x", "SQLITE_READONLY"), True),
    (err("x", "SQLITE_CANTOPEN"), True),
    (err("x", "SQLITE_PERM"), True),
    (err("attempt to write a readonly database"), True),
    (err("x", "SQLITE_READONLY_DBMOVED"), False),  # only the three names themselves
    (err("disk I/O error", "SQLITE_IOERR"), False),
])
def test_read_only_is_read_from_the_error_name_or_its_words(e, read_only) -> None:
    assert read_only_error(e) is read_only


MAGIC = b"SQLite format 3\x00"
DAMAGED = err("database disk image is malformed", "SQLITE_CORRUPT")


def damaged_msg(path) -> str:
    return f"run store {path} is damaged (SQLite: {DAMAGED}); {DAMAGED_ADVICE}"


def not_a_store_msg(path) -> str:
    return (f"{path} is not a sweepbench run store (SQLite: {DAMAGED}); if it was one, it is "
            f"damaged: {DAMAGED_ADVICE}")


@pytest.mark.parametrize(("content", "store"), [
    (MAGIC + b"\x01" * 200, True),  # SQLite's magic: a database that was whole once
    (b"\x00" * 72 + b"junk" * 50, True),  # a zeroed header (72 bytes read)
    (b"\x00" * 71 + b"j" + b"junk" * 50, False),  # byte 72 is not zero: no zeroed header
    (b"garbage" * 10 + b"CREATE TABLE episodes (" + b"x" * 100, True),  # the schema's text
    (b"garbage" * 10 + b"CREATE TABLE event_rows (", True),
    (b"g" * ((1 << 20) - 21) + b"CREATE TABLE episodes", True),  # ends at the 1 MiB read
    (b"g" * ((1 << 20) - 20) + b"CREATE TABLE episodes", False),  # past it
    (b"hello, this is a text file\n" * 4, False),
    (b"X" * 100, False),  # a header of X's is no zeroed header
])
def test_a_damaged_file_is_a_store_by_its_magic_zeroed_header_or_schema_text(
        tmp_path, content, store) -> None:
    path = tmp_path / "s.sqlite"
    path.write_bytes(content)
    want = damaged_msg(path) if store else not_a_store_msg(path)
    assert str(open_error(path, DAMAGED)) == want


def test_a_file_that_cannot_be_read_is_called_damaged_not_foreign(tmp_path) -> None:
    path = tmp_path / "gone.sqlite"
    assert str(open_error(path, DAMAGED)) == damaged_msg(path)


@pytest.mark.parametrize("e", [err("database or disk is full", "SQLITE_FULL"),
                               err("x", "SQLITE_FULL"), err("disk is full")])
def test_a_full_disk_says_to_free_space(tmp_path, e) -> None:
    assert str(open_error(tmp_path / "s", e, "cannot write")) == (
        f"cannot write run store {tmp_path / 's'}: {e}; free some space on its disk and run "
        "the command again")


def test_any_other_error_is_said_as_it_came(tmp_path) -> None:
    e = err("database is locked", "SQLITE_BUSY")
    assert str(open_error(tmp_path / "s", e)) == f"cannot open run store {tmp_path / 's'}: {e}"
