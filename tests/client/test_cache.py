"""The response cache (client/cache.py) on its own: a put is got back and counted, the first
response under a key is kept, the key is a fixed hash (a cache file from an earlier run still
hits), and one file serves other connections and threads at once."""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading

import pytest

from sweepbench.client.cache import ResponseCache
from sweepbench.errors import ConfigError


def test_a_response_put_is_got_back_and_hits_and_misses_are_counted(tmp_path):
    cache = ResponseCache(tmp_path / "not" / "yet" / "there.sqlite")
    key = cache.key("ep", b'{"model": "m"}')
    assert cache.get(key) is None and cache.get(key) is None and len(cache) == 0
    cache.put(key, b"the reply")
    assert cache.get(key) == b"the reply" and cache.get(key) == b"the reply"
    assert (cache.hits, cache.misses, len(cache)) == (2, 2, 1)
    cache.close()


def test_the_first_response_stored_under_a_key_is_kept(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", b"first")
    cache.put("k", b"second")
    assert cache.get("k") == b"first" and len(cache) == 1
    cache.close()


def test_the_key_is_sha256_of_the_identity_a_nul_and_the_body():
    assert ResponseCache.key("http://h/v1 aiohttp", b'{"a": 1}') == hashlib.sha256(
        b'http://h/v1 aiohttp\x00{"a": 1}').hexdigest()
    assert ResponseCache.key("ab", b"c") != ResponseCache.key("a", b"bc")


def test_one_file_serves_another_connection_and_another_thread_at_once(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    other = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", b"reply")
    assert other.get("k") == b"reply"  # committed as it is written
    got: list[bytes | None] = []
    thread = threading.Thread(target=lambda: got.append(cache.get("k")))
    thread.start()
    thread.join()
    assert got == [b"reply"]
    cache.close()
    other.close()


# ---- a cache that cannot be one, or fails later ---------------------------------------------

def test_a_file_that_is_not_a_database_is_a_config_error_naming_it(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(ConfigError) as info:
        ResponseCache(path)
    assert str(info.value) == (f"response cache {path} cannot be used as a cache: file is not "
                               "a database")
    assert path.read_text().startswith("these are my notes")  # untouched


def test_a_directory_is_a_config_error_naming_it(tmp_path):
    with pytest.raises(ConfigError) as info:
        ResponseCache(tmp_path)
    assert str(info.value) == f"response cache {tmp_path} cannot be opened: unable to open " \
                              "database file"


def test_the_run_store_is_refused_by_path_and_by_inode(tmp_path):
    store = tmp_path / "runs.sqlite"
    sqlite3.connect(store).close()
    (tmp_path / "sub").mkdir()
    os.link(store, tmp_path / "hard.sqlite")
    for given in (store, tmp_path / "sub" / ".." / "runs.sqlite", tmp_path / "hard.sqlite"):
        with pytest.raises(ConfigError) as info:
            ResponseCache(given, not_at=store)
        assert str(info.value) == (f"response cache {given} is the run store: give the cache "
                                   "a file of its own (response_cache)")
    with pytest.raises(ConfigError, match="is the run store"):  # not created yet: by path
        ResponseCache(tmp_path / "new.sqlite", not_at=tmp_path / "sub" / ".." / "new.sqlite")


def test_another_database_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE episodes (key TEXT)")
        db.execute("CREATE TABLE runs (id TEXT)")
    with pytest.raises(ConfigError) as info:
        ResponseCache(path)
    assert str(info.value) == (f"response cache {path} is another database (tables episodes, "
                               "runs), not a response cache: give the cache a file of its own")
    with sqlite3.connect(path) as db:
        assert [r[0] for r in db.execute("SELECT name FROM sqlite_master ORDER BY name")] == [
            "episodes", "runs"]


def test_a_full_cache_is_given_up_once_saying_so_and_never_raises(tmp_path, caplog):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("a", b"x")
    pages = cache._db.execute("PRAGMA page_count").fetchone()[0]
    cache._db.execute(f"PRAGMA max_page_count = {pages}")  # as a full disk would be
    with caplog.at_level(logging.WARNING, logger="sweepbench.client.cache"):
        cache.put("b", b"y" * 100_000)
        cache.put("c", b"z" * 100_000)
        assert cache.get("a") is None  # given up: every call goes to its endpoint
    assert cache.broken == "database or disk is full"
    assert caplog.messages == [f"response cache {tmp_path / 'c.sqlite'} failed (database or "
                               "disk is full): not used any more; calls go to their endpoints"]
    cache.close()


def test_a_corrupted_cache_is_given_up_on_its_first_read(tmp_path, caplog):
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    for i in range(200):
        cache.put(f"k{i}", b"reply" * 200)
    cache.close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    data[4096:] = b"\xa5" * (len(data) - 4096)  # every page but the header's
    path.write_bytes(bytes(data))
    cache = ResponseCache(path)
    with caplog.at_level(logging.WARNING, logger="sweepbench.client.cache"):
        assert cache.get("k1") is None and cache.get("k2") is None
        cache.put("k3", b"new")
    assert cache.broken == "database disk image is malformed"
    assert len(caplog.messages) == 1 and str(path) in caplog.messages[0]
    assert (cache.hits, cache.misses) == (0, 2)
    cache.close()


@pytest.mark.parametrize("tables, shown", [
    (["a", "b", "c", "d"], "a, b, c, d"),
    (["a", "b", "c", "d", "e"], "a, b, c, d, ..."),
    (["a", "b", "c", "d", "e", "responses"], "a, b, c, d, ..."),
])
def test_another_databases_tables_are_named_up_to_four(tmp_path, tables, shown):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        for t in tables:
            db.execute(f"CREATE TABLE {t} (x)")
    with pytest.raises(ConfigError) as info:
        ResponseCache(path)
    assert str(info.value) == (f"response cache {path} is another database (tables {shown}), "
                               "not a response cache: give the cache a file of its own")


def test_a_cache_of_an_earlier_run_is_opened_as_it_is(tmp_path):
    """A file holding only the responses table is this cache's own: opened, entries kept."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", b"reply")
    cache.close()
    again = ResponseCache(tmp_path / "c.sqlite")
    assert again.get("k") == b"reply" and len(again) == 1 and again.broken is None
    assert again._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert again._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    again.close()


def test_a_cache_beside_the_run_store_is_not_the_run_store(tmp_path):
    """Another file, new or already there, beside a run store that exists or does not yet."""
    store = tmp_path / "runs.sqlite"
    fresh = ResponseCache(tmp_path / "new.sqlite", not_at=store)  # neither file exists yet
    fresh.close()
    sqlite3.connect(store).close()
    for path in (tmp_path / "new.sqlite", tmp_path / "other.sqlite"):
        cache = ResponseCache(path, not_at=store)
        cache.put("k", b"reply")
        assert cache.get("k") == b"reply"
        cache.close()
