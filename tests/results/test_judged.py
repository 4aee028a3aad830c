"""Judgments as columns (``results/judged.py``): every judgment of a real store placed where the
dict-per-judgment reading (``EpisodeView.judgments``, the report's former input and this
module's oracle) puts it, the agreement the same as ``judge_agreement`` of those dicts, the
pairs and each pair's episodes in read order, and judgments that do not decode said as
``judgments`` says them."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from types import SimpleNamespace

import numpy as np
import pytest

from sweepbench.results.agreement import judge_agreement, rubric_decisions
from sweepbench.results.details import numeric_details
from sweepbench.results.judged import (
    ABSENT,
    NO_VERDICT,
    Judged,
    _agree,
    _row_at,
    load_judged,
    read_order,
)
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


# Unit tests of the columns themselves, on a Judged filled by hand (each test its own: the
# store-backed fixture above is built once, by the module's first test).

def _filled() -> Judged:
    judged = Judged(4, np.array([3, 0, 2, 1]))
    rubric = [{"met": True}, {"met": False}, {"met": True}]
    # all three rubric keys: "rubric" is the one read
    judged.add(0, "J", "m", True, 0.5, {"tool": {"f1": 0.5, "n": 2}, "rubric": [False],
                                        "rubrics": rubric, "nl_rubrics": [True],
                                        "unreachable": "no dish", "error": "kept out"})
    judged.add(1, "J", "m", None, None, {"error": 7})
    judged.add(2, "J", "m", False, None, {"error": "has a verdict", "tool": {"f1": 1.0,
                                                                           "n": 3}})
    judged.add(3, "K", "x", None, 0.0, {"error": "has a score", "unreachable": ""})
    judged.add(2, "K", "x", None, None, {"error": ""})
    judged.flush()
    return judged


def test_add_places_verdicts_scores_numbers_rubrics_and_errors_exactly():
    judged = _filled()
    assert judged.pairs == [("J", "m"), ("K", "x")]
    j, k = judged.index(("J", "m")), judged.index(("K", "x"))
    assert judged.verdict[j].dtype == np.int8 and judged.has_score[j].dtype == bool
    assert judged.verdict[j].tolist() == [1, NO_VERDICT, 0, ABSENT]
    assert judged.verdict[k].tolist() == [ABSENT, ABSENT, NO_VERDICT, NO_VERDICT]
    assert judged.has_score[j].tolist() == [True, False, False, False]
    assert judged.has_score[k].tolist() == [False, False, False, True]
    assert judged.score[j][0] == 0.5 and judged.score[k][3] == 0.0
    assert list(judged.numbers[j]) == [("tool_f1", "tool_n"), ("error",)]  # a numeric error
    numbers = judged.numbers[j]["tool_f1", "tool_n"]
    assert numbers.names == ("tool_f1", "tool_n")
    rows, values, ints = numbers.arrays()
    assert rows.tolist() == [0, 2] and values.tolist() == [[0.5, 2.0], [1.0, 3.0]]
    assert ints.dtype == bool and ints.tolist() == [[False, True], [False, True]]
    assert [a.tolist() for a in judged.numbers[j]["error",].arrays()] == [[1], [[7.0]], [[True]]]
    assert judged.numbers[k] == {}
    assert judged.rubric[j] == {0: bytes([0])} and judged.rubric[k] == {}
    assert judged.unreachable[j] == {0: "no dish"} and judged.unreachable[k] == {}
    # only a judgment with neither verdict nor score, whose error is not empty; the text of
    # a non-text error; at the row's read position
    assert judged.errors == [(0, "J", "m", "7")]
    assert judged.unjudged() == [{"judge": "J", "method": "m", "passed": None, "score": None,
                                  "details": {"error": "7"}}]


def test_pairs_are_renumbered_in_the_order_their_first_judgment_is_read():
    judged = Judged(4, np.array([3, 0, 2, 1]))
    judged.add(0, "late", "m", True, None, None)  # read 4th
    judged.add(2, "mid", "m", True, None, None)  # read 3rd
    judged.add(3, "early", "m", True, None, None)  # read 2nd
    judged.add(2, "early", "m", True, None, None)
    judged.flush()
    judged._in_read_order()
    assert judged.pairs == [("early", "m"), ("mid", "m"), ("late", "m")]
    assert judged.index(("late", "m")) == 2
    assert [v.tolist() for v in judged.verdict] == [[ABSENT, ABSENT, 1, 1],
                                                    [ABSENT, ABSENT, 1, ABSENT],
                                                    [1, ABSENT, ABSENT, ABSENT]]
    assert judged.judged_rows(0).tolist() == [3, 2]


def test_verdict_counts_count_each_benchmarks_verdicts_of_each_pair():
    judged = _filled()
    bench = np.array([1, 0, 1, 1])
    got = judged.verdict_counts(bench, ["a", "b"])
    # J: verdicts on rows 0 (b, passed) and 2 (b, failed); row 1 has none; K: none
    assert got == {"a": Counter(), "b": Counter({("J", "m"): 2})}
    assert judged.verdict_counts(bench, ["a", "b", "c"])["c"] == Counter()


def test_agree_counts_over_the_labels_either_side_used():
    # one side used one label only: κ over both labels is 0, not undefined
    assert _agree(np.array([True, True]), np.array([True, False])) == (0.5, 0.0)
    # both used one and the same label: κ undefined
    assert _agree(np.array([True, True]), np.array([True, True])) == (1.0, None)
    assert _agree(np.array([], dtype=bool), np.array([], dtype=bool)) == (None, None)


def test_read_order_goes_store_by_store_and_by_key_within_a_chunk():
    rows = [{"store": 1, "episode_key": "z"}, {"store": 0, "episode_key": "b"},
            {"store": 1, "episode_key": "y"}, {"store": 0, "episode_key": "a"}]
    pos = read_order(SimpleNamespace(rows=rows))
    assert pos.dtype == np.int64
    # store 1 first (its row comes first): y, z; then store 0: a, b (not all keys sorted)
    assert pos.tolist() == [1, 3, 0, 2]
    assert _row_at(pos, 0) == 2 and _row_at(pos, 3) == 1


def test_a_judgment_that_does_not_decode_is_said_with_its_episode_judge_and_method(tmp_path):
    path = tmp_path / "s.sqlite"
    _store(path, n=14, seed=3)
    import sqlite3

    with sqlite3.connect(path) as c:
        c.execute("UPDATE judgments SET details = '{bad' WHERE episode_key = "
                  "(SELECT MIN(episode_key) FROM judgments WHERE method = 'full') "
                  "AND method = 'full'")
        (key,) = c.execute("SELECT episode_key FROM judgments WHERE details = '{bad'").fetchone()
    with ReadOnlyStore(path) as s:
        view = load_view([s])
        s._damaged.clear()
        seen = []
        s.left_out_judgment = lambda *args: seen.append(args)
        judged = load_judged(view)
    bad = [a for a in seen if a[0] == key and a[2] == "full"]
    assert len(bad) == 1 and bad[0][1] == "J2" and isinstance(bad[0][3], Exception)
    assert all(isinstance(a[3], Exception) and a[1] and a[2] for a in seen)
    row = {r["episode_key"]: i for i, r in enumerate(view.rows)}[key]
    assert judged.verdict[judged.index(("J2", "full"))][row] == ABSENT
