"""Differential test against upstream VitaBench: every recorded call sequence of
``golden/tool_calls.jsonl`` (420 sequences, 4,860 calls, every task of the shared data, en and
zh) replayed through ``sweepbench tools call``; the text of each call and the end state of each
sequence compared with upstream's, byte for byte, once the ids each sequence created are named
``$NEW0``, ``$NEW1``, ... in order of creation (upstream's come from the wall clock)."""

from __future__ import annotations

import contextlib
import json
from collections import Counter

import pytest

from sweepbench.cli import main

THRESHOLD = 0.995


def _renamed(text: str, names: dict[str, str]) -> str:
    for created, name in names.items():
        text = text.replace(created, name)
    return text


@pytest.fixture(scope="module")
def replayed(shared_data, tmp_path_factory):
    golden = shared_data / "vitabench" / "golden" / "tool_calls.jsonl"
    if not golden.is_file():
        pytest.skip(f"upstream's golden tool calls are not at {golden}")
    expected = [json.loads(line) for line in golden.open(encoding="utf-8")]
    out = tmp_path_factory.mktemp("golden") / "out.jsonl"
    with out.open("w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        code = main(["tools", "call", str(golden), "--data-dir", str(shared_data)])
    got = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return code, expected, got


def test_every_golden_call_reads_as_upstreams(replayed):
    code, expected, got = replayed
    assert code == 0 and [g["key"] for g in got] == [e["key"] for e in expected]
    counts: Counter = Counter()
    misses = []
    for want, ran in zip(expected, got):
        group = f"{want['domain']}/{want['lang']}"
        names = {rid: f"$NEW{i}" for i, rid in
                 enumerate(rid for result in ran["results"] for rid in result["created"])}
        for i, (call, result) in enumerate(zip(want["calls"], ran["results"], strict=True)):
            same = _renamed(result["content"], names) == call["upstream"]["content"]
            counts[group, "calls"] += 1
            counts[group, "same calls"] += same
            if not same:
                misses.append((want["key"], i, call["tool"]))
        final = json.loads(_renamed(json.dumps(ran["final_state"], ensure_ascii=False), names))
        counts[group, "sequences"] += 1
        counts[group, "same end states"] += final == want["final_state"]
    rates = {group: {"calls": counts[group, "calls"],
                     "calls_identical": round(counts[group, "same calls"] / counts[group, "calls"], 4),
                     "sequences": counts[group, "sequences"],
                     "end_states_identical": round(counts[group, "same end states"] / counts[group, "sequences"], 4)}
             for group in sorted({g for g, _ in counts})}
    print(json.dumps(rates, indent=1))
    assert set(rates) == {"delivery/en", "delivery/zh", "instore/en"}
    assert sum(r["calls"] for r in rates.values()) == 4860
    for group, rate in rates.items():
        assert rate["calls_identical"] >= THRESHOLD, (group, rate, misses[:10])
        assert rate["end_states_identical"] >= THRESHOLD, (group, rate)
