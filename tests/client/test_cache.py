"""The response cache (client/cache.py) on its own: a put is got back and counted, the first
response under a key is kept, the key is a fixed hash (a cache file from an earlier run still
hits), and one file serves other connections and threads at once."""

from __future__ import annotations

import hashlib
import threading

from sweepbench.client.cache import ResponseCache


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
