"""Judgments as columns (``results/judged.py``): every judgment of a real store placed where the
dict-per-judgment reading (``EpisodeView.judgments``, the report's former input and this
module's oracle) puts it, the agreement the same as ``judge_agreement`` of those dicts, the
pairs and each pair's episodes in read order, and judgments that do not decode said as
``judgments`` says them."""

from __future__ import annotations

import random
from collections import defaultdict

import numpy as np
import pytest

from sweepbench.results.agreement import judge_agreement, rubric_decisions
from sweepbench.results.details import numeric_details
from sweepbench.results.judged import ABSENT, NO_VERDICT, load_judged, read_order
from sweepbench.results.runinfo import unjudged_by_judge
from sweepbench.results.selection import load_view
from sweepbench.store import reads
from sweepbench.store.readonly import ReadOnlyStore
from sweepbench.store.runstore import EpisodeMeta, RunStore
from sweepbench.wire import EpisodeRecord

PAIRS = [("state", "state"), ("J", "sliding"), ("J2", "full"), ("J3", "likert")]


def _details(rng: random.Random, method: str) -> dict:
    if method == "state":
        return {"tool": {"f1": rng.random(), "n": rng.randrange(5)}, "output_em": rng.random(),
                **({"unreachable": "no such dish"} if rng.random() < 0.1 else {})}
    if method == "sliding":
        n = rng.choice([2, 2, 3])
        return {"rubrics": [{"rubric": f"r{i}", "met": rng.random() < 0.6, "why": "x" * 30}
                            for i in range(n)], "windows": rng.randrange(1, 4)}
    if method == "full":
        return rng.choice([{"rubric": {"b": True, "a": rng.randrange(2)}, "recall": 0.5},
                           {"rubric": [True, "yes"]}, {"rubric": [False, 1, 0.0]}])
    return rng.choice([{"error": f"timeout {rng.randrange(3)}"}, {"helpfulness": 3},
                       {"error": "", "overall": 2.5}])


def _store(path, n: int = 40, seed: int = 1) -> None:
    rng = random.Random(seed)
    with RunStore(path) as s:
        s.begin_run("r", {})
        for i in range(n):
            model, task, trial = "AB"[i % 2], f"t{i % 7}", i // 14
            label = f"{model}|vitabench:delivery:en:{task}|{trial}"
            meta = EpisodeMeta(key=f"ep-{i:03d}-{label}", label=label, model=model,
                               benchmark="vitabench", domain="delivery", task_id=task,
                               lang="en", trial=trial)
            s.select("r", [meta])
            s.episode_started(meta, run_id="r")
            s.episode_finished(meta.key, EpisodeRecord(
                run_id="r", model=model, benchmark="vitabench", domain="delivery",
                task_id=task, trial=trial, termination="user_stop"))
            for judge, method in PAIRS:
                if rng.random() < 0.2:
                    continue  # not every pair judged every episode
                passed = rng.choice([True, False, None])
                score = rng.choice([None, 0.25, 1.0])
                s.judgment(meta.key, judge=judge, method=method, passed=passed, score=score,
                           details=_details(rng, method))
        s.finish_run("r", "done")
    # two judgments whose details do not decode (text that is not JSON, and a blob)
    import sqlite3

    with sqlite3.connect(path) as c:
        keys = [k for (k,) in c.execute("SELECT episode_key FROM judgments WHERE method = "
                                        "'likert' ORDER BY episode_key LIMIT 2")]
        c.execute("UPDATE judgments SET details = '{oops' WHERE episode_key = ? AND "
                  "method = 'likert'", (keys[0],))
        c.execute("UPDATE judgments SET details = x'00ff' WHERE episode_key = ? AND "
                  "method = 'likert'", (keys[1],))


@pytest.fixture(scope="module", params=[False, True], ids=["by keys", "one pass"])
def read(request, tmp_path_factory, monkeypatch_module):
    path = tmp_path_factory.mktemp("judged") / "s.sqlite"
    _store(path)
    # one pass over the table (most of the store selected) or reads by chunks of keys;
    # chunks of 7 keys, so that read order is not the rows' order
    monkeypatch_module.setattr(reads, "SCAN_SHARE", 0.0 if request.param else 2.0)
    monkeypatch_module.setattr(reads, "_chunks", lambda keys: _in_chunks(keys, 7))
    from sweepbench.results import judged as module

    monkeypatch_module.setattr(module, "chunks", lambda keys: _in_chunks(keys, 7))
    monkeypatch_module.setattr(reads, "_ROWS", 5)
    with ReadOnlyStore(path) as s:
        view = load_view([s])
        want = view.judgments()
        want_damaged = list(s.damaged)
        s._damaged.clear()
        got = load_judged(view)
        yield view, got, want, want_damaged, list(s.damaged)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def _in_chunks(keys, n):
    keys = list(keys)
    return [keys[i:i + n] for i in range(0, len(keys), n)]


def test_each_judgment_is_placed_at_its_row_and_pair(read):
    view, got, want, _, _ = read
    row = {r["episode_key"]: i for i, r in enumerate(view.rows)}
    seen = defaultdict(set)
    for j in want:
        p = got.index((j["judge"], j["method"]))
        i = row[j["episode_key"]]
        seen[p].add(i)
        assert got.verdict[p][i] == (NO_VERDICT if j["passed"] is None else int(j["passed"]))
        assert got.has_score[p][i] == (j["score"] is not None)
        if j["score"] is not None:
            assert got.score[p][i] == j["score"]
        assert got.rubric[p].get(i) == (None if rubric_decisions(j["details"]) is None
                                        else bytes(rubric_decisions(j["details"])))
        assert got.unreachable[p].get(i) == j["details"].get("unreachable")
    for p in range(len(got.pairs)):  # and nothing else
        assert set(np.flatnonzero(got.verdict[p] != ABSENT).tolist()) == seen[p]
    assert len(want) == sum(len(v) for v in seen.values()) > 100


def test_numbers_keep_their_names_values_and_whether_they_were_counts(read):
    view, got, want, _, _ = read
    row = {r["episode_key"]: i for i, r in enumerate(view.rows)}
    expect = defaultdict(dict)  # pair -> row -> numbers
    for j in want:
        numbers = numeric_details(j["details"])
        if numbers:
            expect[got.index((j["judge"], j["method"]))][row[j["episode_key"]]] = numbers
    for p, groups in enumerate(got.numbers):
        have = {}
        for numbers in groups.values():
            at, values, ints = numbers.arrays()
            for i, v, n in zip(at.tolist(), values.tolist(), ints.tolist()):
                have[i] = dict(zip(numbers.names, v))
                assert n == [type(x) is int for x in expect[p][i].values()]
        assert have == expect[p]
    assert any(n.arrays()[2].any() for g in got.numbers for n in g.values())  # counts seen


def test_pairs_and_their_episodes_come_in_read_order(read):
    view, got, want, _, _ = read
    order = list(dict.fromkeys((j["judge"], j["method"]) for j in want))
    assert got.pairs == order
    row = {r["episode_key"]: i for i, r in enumerate(view.rows)}
    for p, pair in enumerate(got.pairs):
        assert got.judged_rows(p).tolist() == [row[j["episode_key"]] for j in want
                                               if (j["judge"], j["method"]) == pair]
    keys = [r["episode_key"] for r in view.rows]
    assert [keys[i] for i in np.argsort(read_order(view))] == \
        list(dict.fromkeys(j["episode_key"] for j in want))
    assert np.argsort(read_order(view)).tolist() != list(range(len(keys)))  # not the rows'


def test_methods_counts_and_unjudged_are_the_dicts_own(read):
    _, got, want, _, _ = read
    pairs = defaultdict(lambda: [0, 0])
    for j in want:
        pairs[j["judge"], j["method"]][0] += 1
        pairs[j["judge"], j["method"]][1] += j["passed"] is not None
    assert got.methods() == sorted(
        ({"judge": a, "method": b, "episodes": e, "verdicts": v}
         for (a, b), (e, v) in pairs.items()), key=lambda p: (-p["verdicts"], p["judge"],
                                                              p["method"]))
    assert unjudged_by_judge(got.unjudged()) == unjudged_by_judge(want)
    assert got.unjudged() and [(u["judge"], u["details"]["error"]) for u in got.unjudged()] == \
        [(j["judge"], str(j["details"]["error"])) for j in want
         if j["passed"] is None and j["score"] is None and j["details"].get("error")]


def test_agreement_of_every_two_pairs_is_judge_agreement_of_their_dicts(read):
    view, got, want, _, _ = read
    by_pair = defaultdict(dict)
    for j in want:
        by_pair[j["judge"], j["method"]][j["episode_key"]] = j
    compared = 0
    for a in range(len(got.pairs)):
        for b in range(len(got.pairs)):
            if a != b:
                assert got.agreement(a, b) == judge_agreement(by_pair[got.pairs[a]],
                                                             by_pair[got.pairs[b]])
                compared += got.agreement(a, b).rubric_episodes
    assert compared  # rubric decisions compared somewhere, lengths mismatched elsewhere
    assert any(got.agreement(a, b).rubric_mismatched for a in range(4) for b in range(4))


def test_judgments_that_do_not_decode_are_said_as_judgments_says_them(read):
    _, _, _, want_damaged, got_damaged = read
    assert got_damaged == want_damaged and len(got_damaged) == 2
    assert all("does not decode" in d and "J3/likert" in d for d in got_damaged)


def test_a_view_without_judgments_has_no_pairs(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path) as s:
        s.begin_run("r", {})
        meta = EpisodeMeta(key="e", label="A|vitabench:d:en:t|0", model="A",
                           benchmark="vitabench", domain="d", task_id="t", lang="en", trial=0)
        s.select("r", [meta])
        s.episode_started(meta, run_id="r")
        s.finish_run("r", "done")
    with ReadOnlyStore(path) as s:
        got = load_judged(load_view([s]))
    assert got.pairs == [] and got.methods() == [] and got.unjudged() == []
    assert got.index(("state", "state")) is None
