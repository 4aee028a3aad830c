"""Adaptive sweeps by hand: the stopping rules, where the next trials go, the budget and
the cap, and a resumed sweep making the same decisions without paying twice."""

from __future__ import annotations

import math

import pytest

from sweepbench.results import intervals
from sweepbench.runner.adaptive import (CI, RANKED, allocate, ci_status, counts_from, gain,
                                        half_width, next_batch, ranking_status, replay)

A = intervals.ADAPTIVE_PRIOR


def _floor(n: int, c: int) -> float:
    q = (c + A) / (n + 2 * A)
    return q * (1 - q) / (n + 1)


def test_half_width_is_half_the_reports_interval_over_these_tasks():
    cells = {"t1": (4, 2), "t2": (4, 0)}
    lo, hi = intervals.fixed_set([4, 4], [2, 0])
    assert half_width(cells, floor=False) == pytest.approx((hi - lo) / 2)
    lo, hi = intervals.fixed_set([4, 4], [2, 0], adaptive=True)
    assert half_width(cells) == pytest.approx((hi - lo) / 2)
    assert half_width(cells) > half_width(cells, floor=False)  # 0/4 counts with the floor
    assert half_width({"t1": (0, 0)}) == math.inf


def test_ci_status_marks_each_model_against_the_target():
    counts = {"wide": {"t1": (4, 2), "t2": (4, 0)},
              "narrow": {f"t{i}": (40, 20) for i in range(50)}}
    w_wide, w_narrow = half_width(counts["wide"]), half_width(counts["narrow"])
    assert w_narrow < 0.05 < w_wide
    st = ci_status(counts, 0.05)
    assert st == {"narrow": {"half_width": w_narrow, "done": True},
                  "wide": {"half_width": w_wide, "done": False}}
    with pytest.raises(ValueError):
        ci_status(counts, 0)


def test_gain_by_hand():
    # 2 of 4, no floor: 1/12 now; after one more trial (passing w.p. 1/2) 0.6*0.4/4 either way
    assert gain(4, 2, floor=False) == pytest.approx(1 / 12 - 0.06)
    # 0 of 4 without the floor: nothing to gain (a pass would *raise* the estimate)
    p = A / (4 + 2 * A)
    assert gain(4, 0, floor=False) == pytest.approx(-p * (0.2 * 0.8 / 4))
    # with it: the floor now, minus a pass's 0.16/4 or a failure's floor at 5 trials
    after = p * max(0.16 / 4, _floor(5, 1)) + (1 - p) * _floor(5, 0)
    assert gain(4, 0) == pytest.approx(_floor(4, 0) - after)
    assert 0 < gain(4, 0) < gain(4, 2)  # far from 0 and 1 first, but 0/4 keeps a share
    assert gain(16, 8) < gain(4, 2)  # fewer trials first
    assert gain(1, 0) == gain(0, 0) == math.inf


def test_allocate_goes_to_the_largest_gain_and_respects_the_cap():
    counts = {"m": {"a": (4, 2), "b": (4, 0), "c": (16, 8)}}
    cells = [("m", t) for t in "abc"]
    assert allocate(cells, counts, 1) == {("m", "a"): 1}
    # a's gain at 5, 6, 7 trials (rate 1/2 kept) still beats b's and c's
    assert allocate(cells, counts, 3) == {("m", "a"): 3}
    # a cap of 5: a and b reach it with one each, c is past it: 2 of the 3 trials placed
    assert allocate(cells, counts, 3, max_trials=5) == {("m", "a"): 1, ("m", "b"): 1}
    assert allocate(cells, counts, 5, max_trials=4) == {}  # a, b at the cap; c past it
    # ties go to the first cell in sorted order; pending trials count against the cap
    tie = {"m": {"x": (4, 2), "y": (4, 2)}}
    assert allocate([("m", "y"), ("m", "x")], tie, 1) == {("m", "x"): 1}
    assert allocate([("m", "y"), ("m", "x")], tie, 1, pending={("m", "x"): 1}) == \
        {("m", "y"): 1}
    assert allocate([("m", "x")], tie, 3, max_trials=6, pending={("m", "x"): 1}) == \
        {("m", "x"): 1}


def test_next_batch_target_ci():
    counts = {"wide": {f"t{i}": (4, 2) for i in range(10)},
              "narrow": {f"t{i}": (200, 100) for i in range(10)}}
    assert half_width(counts["narrow"]) < 0.05 < half_width(counts["wide"])
    nb = next_batch(counts, CI, batch=7, target=0.05)
    assert not nb["done"]
    assert {m for m, _ in nb["add"]} == {"wide"}  # only the model still too wide
    assert sum(nb["add"].values()) == 7
    assert next_batch(counts, CI, batch=7, target=0.5)["why"] == "target"
    assert next_batch(counts, CI, batch=7, target=0.05, max_trials=4)["why"] == "max_trials"
    cut = next_batch(counts, CI, batch=7, target=0.05, budget=3)
    assert sum(cut["add"].values()) == 3 and not cut["done"]
    assert next_batch(counts, CI, batch=7, target=0.05, budget=0)["why"] == "budget"
    assert next_batch(counts, CI, batch=7, target=0.05) == nb  # deterministic
    with pytest.raises(ValueError):
        next_batch(counts, CI, batch=0, target=0.05)
    with pytest.raises(ValueError):
        next_batch(counts, "forever", batch=1)


def test_ranking_status_diff_and_margin_by_hand():
    counts = {"A": {"t1": (4, 2), "t2": (4, 4)}, "B": {"t1": (4, 2), "t2": (4, 0)}}
    (pair,) = ranking_status(counts, margin=None)
    assert (pair["a"], pair["b"]) == ("A", "B")  # leaderboard order: best first
    assert pair["diff"] == pytest.approx(0.5)
    v22, v40 = 1 / 12, _floor(4, 0)
    assert pair["se"] == pytest.approx(math.sqrt(2 * v22 + 2 * v40) / 2)
    assert not pair["separated"]  # two tasks cannot separate anything
    assert pair["open"] and not pair["within_margin"]


def test_ranking_separates_clear_gaps_and_closes_ties_within_the_margin():
    tasks = [f"t{i:02d}" for i in range(40)]
    good = {t: (8, 8) for t in tasks}
    bad = {t: (8, 0) for t in tasks}
    twin = {t: (400, 200) for t in tasks}
    st = ranking_status({"good": good, "bad": bad}, seed=1)
    assert st[0]["separated"] and not st[0]["open"]
    tie = ranking_status({"x": twin, "y": dict(twin)}, margin=0.02)
    # |0| + z(1 - 0.05) * sqrt(40 * 2 * 0.25/399) / 40 = 1.645 * 0.0056 = 0.0092 < 0.02
    assert tie[0]["within_margin"] and not tie[0]["open"] and not tie[0]["separated"]
    assert ranking_status({"x": twin, "y": dict(twin)}, margin=0.009)[0]["open"]
    done = next_batch({"good": good, "bad": bad}, RANKED, batch=10, seed=1)
    assert done["done"] and done["why"] == "ranked"
    # an open pair gets the batch over both models' cells, charged to it
    nb = next_batch({"x": {t: (4, 2) for t in tasks}, "y": {t: (4, 2) for t in tasks}},
                    RANKED, batch=10, margin=0.01)
    assert nb["by_pair"] == {"x|y": 10} and sum(nb["add"].values()) == 10
    assert {m for m, _ in nb["add"]} == {"x", "y"}


def test_counts_from_uses_the_leading_trials_on_record():
    assert counts_from({"m": {"a": [True, False, None, True], "b": []}}) == \
        {"m": {"a": (2, 1), "b": (0, 0)}}


def _outcome(m: str, t: str, i: int) -> bool:
    """A fixed, varied pass pattern: trial i of a cell is the same episode every run."""
    return (sum(map(ord, m + t)) * 7 + i * 13) % 5 < 2


def _sweep(tasks: list[str], interrupt: int | None) -> tuple[dict, int, int]:
    record: dict = {m: {t: [] for t in tasks} for m in ("m0", "m1")}
    paid: set = set()
    repeated = step = 0
    while True:
        r = replay(record, CI, start=2, batch=5, target=0.08, max_trials=20)
        if r["done"]:
            return r, len(paid), repeated
        todo = [(cell, i) for cell, idx in sorted(r["run"].items()) for i in idx]
        if step == interrupt:
            todo = todo[: len(todo) // 2]
        for (m, t), i in todo:
            repeated += (m, t, i) in paid
            paid.add((m, t, i))
            seq = record[m][t]
            seq.extend([None] * (i + 1 - len(seq)))
            seq[i] = _outcome(m, t, i)
        step += 1


def test_replay_resumes_to_the_same_decision_without_paying_twice():
    tasks = [f"t{i}" for i in range(12)]
    whole, calls, repeated = _sweep(tasks, None)
    assert whole["done"] and whole["rounds"] >= 2 and repeated == 0
    assert calls == sum(whole["targets"].values())
    for cut in (0, 1, 2):
        again, calls_again, repeated_again = _sweep(tasks, cut)
        assert again["targets"] == whole["targets"] and again["why"] == whole["why"]
        assert repeated_again == 0 and calls_again == calls


def test_replay_runs_only_the_gaps_and_honours_the_call_cap():
    record = {"m": {"a": [True, None, None, False], "b": [False, True]}}
    r = replay(record, CI, start=4, batch=2, target=0.01)
    assert r["run"] == {("m", "a"): [1, 2], ("m", "b"): [2, 3]} and not r["done"]
    full = {"m": {"a": [True, False] * 3, "b": [False, True] * 3}}
    capped = replay(full, CI, start=4, batch=2, target=0.01, max_calls=8)
    assert capped["done"] and capped["why"] == "budget" and capped["rounds"] == 0
    with pytest.raises(ValueError):
        replay(full, CI, start=0, batch=2, target=0.01)
