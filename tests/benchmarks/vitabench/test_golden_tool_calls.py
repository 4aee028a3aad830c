"""Differential test against upstream VitaBench, one run per release: every recorded call
sequence of ``golden/tool_calls.jsonl`` (420 sequences, every task of the release's shared data,
en and zh) replayed through ``sweepbench tools call --benchmark vitabench@<release>``; the text
and the error flag of each call and the end state of each sequence compared with upstream's,
byte for byte, once the ids each sequence created are named ``$NEW0``, ``$NEW1``, ... in order
of creation (upstream's come from the wall clock). The November release (96f3b85) is checked on
``shared/data``, the updated one (742e240) on ``shared/data-v2``; both match on every call."""

from __future__ import annotations

import contextlib
import json
from collections import Counter

import pytest

from sweepbench.cli import main

# release -> (the fixture naming its data dir, how many calls its goldens hold)
RELEASES = {"2025-11": ("shared_data", 4860), "2025-12": ("shared_data_v2", 4808)}


def _renamed(text: str, names: dict[str, str]) -> str:
    for created, name in names.items():
        text = text.replace(created, name)
    return text


@pytest.fixture(scope="module", params=sorted(RELEASES))
def replayed(request, tmp_path_factory):
    release = request.param
    data = request.getfixturevalue(RELEASES[release][0])
    golden = data / "vitabench" / "golden" / "tool_calls.jsonl"
    if not golden.is_file():
        pytest.skip(f"upstream's golden tool calls are not at {golden}")
    expected = [json.loads(line) for line in golden.open(encoding="utf-8")]
    out = tmp_path_factory.mktemp("golden") / "out.jsonl"
    with out.open("w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        code = main(["tools", "call", str(golden), "--data-dir", str(data),
                     "--benchmark", f"vitabench@{release}"])
    got = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return release, code, expected, got


def compare(expected: list[dict], got: list[dict]) -> tuple[Counter, list[tuple]]:
    """Counts per ``domain/lang`` group and every miss: (key, call index or "end state",
    tool, what differs)."""
    counts: Counter = Counter()
    misses = []
    for want, ran in zip(expected, got, strict=True):
        group = f"{want['domain']}/{want['lang']}"
        names = {rid: f"$NEW{i}" for i, rid in
                 enumerate(rid for result in ran["results"] for rid in result["created"])}
        for i, (call, result) in enumerate(zip(want["calls"], ran["results"], strict=True)):
            same = _renamed(result["content"], names) == call["upstream"]["content"]
            same_flag = result["error"] is call["upstream"]["error"]
            counts[group, "calls"] += 1
            counts[group, "same calls"] += same
            counts[group, "same flags"] += same_flag
            if not (same and same_flag):
                misses.append((want["key"], i, call["tool"], "text" if not same else "error flag"))
        final = json.loads(_renamed(json.dumps(ran["final_state"], ensure_ascii=False), names))
        counts[group, "sequences"] += 1
        counts[group, "same end states"] += final == want["final_state"]
        if final != want["final_state"]:
            misses.append((want["key"], "end state", None, "state"))
    return counts, misses


def test_every_golden_call_reads_as_upstreams(replayed):
    release, code, expected, got = replayed
    assert code == 0 and [g["key"] for g in got] == [e["key"] for e in expected]
    counts, misses = compare(expected, got)
    groups = sorted({g for g, _ in counts})
    print(release, json.dumps({g: {k: counts[g, k] for k in ("calls", "same calls", "same flags",
                                                             "sequences", "same end states")}
                               for g in groups}, indent=1))
    assert groups == ["delivery/en", "delivery/zh", "instore/en"]
    assert sum(counts[g, "calls"] for g in groups) == RELEASES[release][1]
    assert sum(counts[g, "sequences"] for g in groups) == 420
    assert misses == []


def test_the_comparison_sees_a_changed_text_flag_and_state():
    """``compare`` is the test's eyes: a created id is renamed before comparing, and a text, an
    error flag or an end state that differs is a miss."""
    want = {"key": "k", "domain": "delivery", "lang": "en",
            "calls": [{"tool": "t", "upstream": {"content": "made $NEW0", "error": False}},
                      {"tool": "u", "upstream": {"content": "Error: x", "error": True}}],
            "final_state": {"orders": {"$NEW0": {}}}}
    ran = {"results": [{"content": "made OT1", "error": False, "created": ["OT1"]},
                       {"content": "Error: x", "error": True, "created": []}],
           "final_state": {"orders": {"OT1": {}}}}
    counts, misses = compare([want], [ran])
    assert misses == [] and counts["delivery/en", "same calls"] == 2
    ran["results"][1]["error"] = False
    ran["results"][0]["content"] = "made OT2"
    ran["final_state"] = {"orders": {}}
    assert compare([want], [ran])[1] == [("k", 0, "t", "text"), ("k", 1, "u", "error flag"),
                                         ("k", "end state", None, "state")]
