"""Upstream's ranking: every text kept, best first; in the November release equal texts all
stand for the last key with that text, the updated one keeps them apart (``-`` appended)."""

from __future__ import annotations

from sweepbench.benchmarks.vitabench.tools.fuzzy import rerank

DOCS = {"k1": "ab", "k2": "ab", "k3": "xy", "k4": "ab-"}


def test_november_collapses_equal_texts_onto_the_last_key():
    assert rerank("ab", DOCS, dedupe=False) == [
        ("k2", "ab", 100), ("k2", "ab", 100), ("k4", "ab-", 100), ("k3", "xy", 0)]


def test_the_updated_release_appends_dashes_until_a_text_is_new():
    assert rerank("ab", DOCS, dedupe=True) == [
        ("k1", "ab", 100), ("k2", "ab-", 100), ("k4", "ab--", 100), ("k3", "xy", 0)]


def test_distinct_texts_rank_the_same_either_way():
    docs = {"a": "Lantern Dumpling Bar", "b": "Juniper Noodle House", "c": "Honeycomb Bakery"}
    assert rerank("noodle", docs, dedupe=True) == rerank("noodle", docs, dedupe=False)
    assert next(key for key, _, _ in rerank("noodle", docs, dedupe=True)) == "b"
