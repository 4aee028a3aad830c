"""Adaptive sweeps by hand: the stopping rules, where the next trials go, the budget and
the cap, and a resumed sweep making the same decisions without paying twice."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from sweepbench.results import intervals
from sweepbench.results.comparisons import ALPHA, compare
from sweepbench.runner import adaptive as ad
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


# ---- unit tests at the edges: the rates and variances the ranking reads, the ranking's
# ---- numbers, the budget's cut and replay's answer ------------------------------------------

def test_rates_and_variances_of_cells_by_hand():
    assert ad._rates({"a": (0, 0), "b": (1, 1), "c": (4, 1)}) == {"b": 1.0, "c": 0.25}
    assert ad._var(0, 0) == ad._var(1, 1) == ad._var(1, 0) == 0.25  # the bound 1/(4n)
    assert ad._var(2, 1) == float(intervals.task_variance(2, 1, adaptive=True)) == 0.25
    assert ad._var(2, 2) == pytest.approx(_floor(2, 2))
    assert ad._var(3, 3) == pytest.approx(_floor(3, 3))


def test_ranking_status_numbers_by_hand():
    counts = {"a": {"t1": (2, 2), "t2": (2, 1), "t3": (1, 1)},
              "b": {"t1": (2, 1), "t2": (2, 1), "t4": (2, 0)},
              "c": {"t1": (0, 0)}}  # no trial on record: not ranked
    (p,) = ranking_status(counts, n_boot=200)
    assert (p["a"], p["b"]) == ("a", "b")  # 0.83 over 0.33
    assert p["diff"] == 0.25  # ((1 - .5) + (.5 - .5)) / 2 over the common t1, t2
    se = math.sqrt(ad._var(2, 2) + ad._var(2, 1) + ad._var(2, 1) + ad._var(2, 1)) / 2
    assert p["se"] == pytest.approx(se, rel=1e-15)
    rates = {m: ad._rates(counts[m]) for m in ("a", "b")}
    fam = compare(rates, ["a", "b"], n_boot=200, seed=0, correction="holm")
    assert p["p_adjusted"] == fam["pairs"][0]["p_adjusted"]
    assert p["separated"] is bool(fam["pairs"][0]["significant"])
    assert set(p) == {"a", "b", "diff", "se", "p_adjusted", "separated", "within_margin",
                      "open"}
    # within the margin: |diff| + z se < margin, z at 1 - alpha (one neighbour pair)
    edge = 0.25 + NormalDist().inv_cdf(1 - ALPHA) * p["se"]
    assert not ranking_status(counts, margin=edge, n_boot=200)[0]["within_margin"]
    assert ranking_status(counts, margin=edge + 1e-9, n_boot=200)[0]["within_margin"]
    assert not ranking_status(counts, n_boot=200)[0]["within_margin"]  # no margin


def test_ranking_status_z_is_bonferroni_over_the_neighbour_pairs():
    counts = {"a": {"t1": (4, 4), "t2": (4, 3)}, "b": {"t1": (4, 2), "t2": (4, 3)},
              "c": {"t1": (4, 1), "t2": (4, 0)}}
    pairs = ranking_status(counts, n_boot=200)
    assert [(p["a"], p["b"]) for p in pairs] == [("a", "b"), ("b", "c")]
    p = pairs[0]
    edge = abs(p["diff"]) + NormalDist().inv_cdf(1 - ALPHA / 2) * p["se"]
    assert ranking_status(counts, margin=edge + 1e-9, n_boot=200)[0]["within_margin"]
    assert not ranking_status(counts, margin=edge - 1e-9, n_boot=200)[0]["within_margin"]


def test_ranking_status_orders_ties_by_name_and_uses_the_seed_and_correction():
    counts = {"b": {"t1": (2, 2), "t2": (2, 0)}, "a": {"t1": (2, 0), "t2": (2, 2)},
              "z": {"t1": (2, 2), "t2": (2, 2)}}
    pairs = ranking_status(counts, n_boot=50)
    assert [(p["a"], p["b"]) for p in pairs] == [("z", "a"), ("a", "b")]
    rates = {m: ad._rates(c) for m, c in counts.items()}
    for seed, correction in ((0, "holm"), (5, "bh")):
        fam = compare(rates, ["z", "a", "b"], n_boot=50, seed=seed, correction=correction)
        want = {(r["a"], r["b"]): r["p_adjusted"] for r in fam["pairs"]}
        got = ranking_status(counts, n_boot=50, seed=seed, correction=correction)
        assert [p["p_adjusted"] for p in got] == [want["z", "a"], want["a", "b"]]
    spread = {"a": {f"t{i}": (2, 2 if i < 4 else 1) for i in range(6)},
              "b": {f"t{i}": (2, 0 if i < 3 else 2) for i in range(6)}}
    by_seed = {s: ranking_status(spread, n_boot=50, seed=s)[0]["p_adjusted"] for s in (0, 1)}
    assert ranking_status(spread, n_boot=50)[0]["p_adjusted"] == by_seed[0] != by_seed[1]


def test_ranking_status_of_models_without_common_tasks():
    counts = {"a": {"t1": (2, 2)}, "b": {"t2": (2, 0)}}
    (p,) = ranking_status(counts, margin=10.0, n_boot=50)
    assert p["diff"] == 0.0 and p["se"] == math.inf and p["p_adjusted"] == 1.0
    assert not p["separated"] and not p["within_margin"] and p["open"]


def test_cut_takes_the_first_trials_in_the_order_of_gain():
    counts = {"m": {"a": (4, 2), "b": (16, 8)}}
    add = {("m", "a"): 2, ("m", "b"): 2}
    # a (4 trials, 2 passed) gains most, then a again at 5 trials, then b: a is at its 2
    assert ad._cut(add, counts, 1, True) == {("m", "a"): 1}
    assert ad._cut(add, counts, 2, True) == {("m", "a"): 2}
    assert ad._cut(add, counts, 3, True) == {("m", "a"): 2, ("m", "b"): 1}
    assert ad._cut(add, counts, 9, True) == add
    # b at 17 trials gains less than b at 16: with a cell unseen (first) and b twice
    assert gain(17, 8.5) < gain(16, 8)
    unseen = {("m", "b"): 2, ("x", "new"): 1}
    assert ad._cut(unseen, counts, 2, True) == {("x", "new"): 1, ("m", "b"): 1}
    assert ad._cut(unseen, counts, 3, True) == {("x", "new"): 1, ("m", "b"): 2}
    # the floor decides between an all-fail task and a settled one
    floor = {"m": {"a": (4, 0), "b": (30, 15)}}
    one_each = {("m", "a"): 1, ("m", "b"): 1}
    assert ad._cut(one_each, floor, 1, True) == {("m", "a"): 1}
    assert ad._cut(one_each, floor, 1, False) == {("m", "b"): 1}
    # later trials of a cell at the pass rate on record: a at 5 of (4, 0) vs b at 31
    assert ad._cut({("m", "a"): 3, ("m", "b"): 3}, floor, 4, True) == {
        ("m", "a"): 3, ("m", "b"): 1}


def test_next_batch_cut_to_the_budget_drops_the_pair_charges():
    counts = {"a": {f"t{i}": (2, 1) for i in range(4)}, "b": {f"t{i}": (2, 1) for i in range(4)}}
    full = next_batch(counts, RANKED, batch=4, margin=0.01, n_boot=50)
    assert not full["done"] and sum(full["add"].values()) == 4 and full["by_pair"] == {"a|b": 4}
    cut = next_batch(counts, RANKED, batch=4, margin=0.01, n_boot=50, budget=3)
    assert sum(cut["add"].values()) == 3 and cut["by_pair"] == {} and not cut["done"]
    assert next_batch(counts, RANKED, batch=4, margin=0.01, n_boot=50, budget=4) == full
    spent = next_batch(counts, RANKED, batch=4, margin=0.01, n_boot=50, budget=0)
    assert (spent["done"], spent["why"], spent["add"]) == (True, "budget", {})
    for kw, said in (({"rule": RANKED, "batch": 0}, "batch must be >= 1, got 0"),
                     ({"rule": CI, "batch": 1}, "the target-ci rule needs a target half-width"),
                     ({"rule": "x", "batch": 1},
                      "rule must be 'target-ci' or 'until-ranked', got 'x'")):
        with pytest.raises(ValueError) as info:
            next_batch(counts, **kw)
        assert str(info.value) == said
    one = next_batch(counts, RANKED, batch=1, margin=0.01, n_boot=50)
    assert sum(one["add"].values()) == 1 and one["by_pair"] == {"a|b": 1}


def test_replay_answers_in_full_before_and_after_a_round():
    trials = {"a": {"t1": [True, None], "t2": []}, "b": {"t1": [False, True, True]}}
    got = replay(trials, CI, start=2, batch=2, target=0.5)
    assert got == {"done": False, "why": None, "rounds": 0,
                   "targets": {("a", "t1"): 2, ("a", "t2"): 2, ("b", "t1"): 2},
                   "run": {("a", "t1"): [1], ("a", "t2"): [0, 1]}, "by_pair": {},
                   "status": None}
    full = {"a": {"t1": [True, False], "t2": [True, True]}, "b": {"t1": [False, True]}}
    done = replay(full, CI, start=2, batch=1, target=0.9)
    assert done["done"] and done["why"] == "target" and done["run"] == {}
    assert done["rounds"] == 0 and done["by_pair"] == {} and done["status"]["a"]["done"]
    with pytest.raises(ValueError, match="start must be >= 1, got 0"):
        replay(full, CI, start=0, batch=1, target=0.9)
    assert replay(full, CI, start=1, batch=1, target=0.9)["targets"][("a", "t1")] == 1


SPREAD = {"a": {f"t{i}": (2, 2 if i < 4 else 1) for i in range(6)},
          "b": {f"t{i}": (2, 0 if i < 3 else 2) for i in range(6)},
          "c": {f"t{i}": (2, 0 if i < 5 else 1) for i in range(6)}}


def test_next_batch_passes_its_arguments_to_the_rule():
    args = {"margin": 0.3, "correction": "bh", "seed": 3, "n_boot": 40}
    got = next_batch(SPREAD, RANKED, batch=2, **args)
    assert got["status"] == ranking_status(SPREAD, **args)
    assert next_batch(SPREAD, RANKED, batch=2, n_boot=50)["status"] == ranking_status(
        SPREAD, n_boot=50, seed=0, correction="holm")
    wide = next_batch(SPREAD, RANKED, batch=2, margin=2.0, n_boot=50)  # every pair within
    assert (wide["done"], wide["why"], wide["add"], wide["by_pair"]) == (True, "ranked", {}, {})
    for floor in (True, False):
        got = next_batch(SPREAD, CI, batch=2, target=0.2, floor=floor)
        status = ci_status(SPREAD, 0.2, floor=floor)
        assert got["status"] == status
        add = {}
        for m in (m for m in sorted(SPREAD) if not status[m]["done"]):
            add.update(allocate([(m, t) for t in SPREAD[m]], SPREAD, 2, floor=floor))
        assert got["add"] == add and not got["done"]
    assert next_batch(SPREAD, CI, batch=2, target=0.2) == next_batch(SPREAD, CI, batch=2,
                                                                     target=0.2, floor=True)
    done = next_batch(SPREAD, CI, batch=2, target=0.5)
    assert done == {"done": True, "why": "target", "add": {}, "by_pair": {},
                    "status": ci_status(SPREAD, 0.5)}


def test_ci_status_at_the_target_exactly_and_without_the_floor():
    w = half_width(SPREAD["a"])
    assert ci_status({"a": SPREAD["a"]}, w)["a"] == {"half_width": w, "done": True}
    assert ci_status(SPREAD, 0.2, floor=False)["b"]["half_width"] == half_width(
        SPREAD["b"], floor=False) != half_width(SPREAD["b"])
    with pytest.raises(ValueError) as info:
        ci_status(SPREAD, -1)
    assert str(info.value) == "the target half-width must be > 0, got -1"
    # a task of one trial counts; a task of none does not
    lo, hi = intervals.fixed_set([1, 4], [1, 2], adaptive=True)
    assert half_width({"t1": (1, 1), "t2": (4, 2), "t3": (0, 0)}) == (hi - lo) / 2


def test_ranking_order_is_the_mean_rate_and_the_correction_is_passed_on():
    counts = {"few": {"t1": (2, 2)}, "many": {f"t{i}": (2, 1) for i in range(4)}}
    assert [(p["a"], p["b"]) for p in ranking_status(counts, n_boot=50)] == [("few", "many")]
    holm = ranking_status(SPREAD, n_boot=50)
    bh = ranking_status(SPREAD, n_boot=50, correction="bh")
    assert holm[1]["p_adjusted"] != bh[1]["p_adjusted"]


def test_allocate_edges_unseen_cells_no_trials_and_the_floor():
    assert allocate([("m", "a")], {"m": {"a": (4, 2)}}, 0) == {}
    assert allocate([("m", "a")], {"m": {"a": (4, 2)}}, -3) == {}
    # a cell of a model with nothing on record: first, every time, up to the cap
    assert allocate([("new", "t"), ("m", "a")], {"m": {"a": (4, 2)}}, 2) == {("new", "t"): 2}
    assert allocate([("new", "t")], {}, 3, max_trials=1) == {("new", "t"): 1}
    floor = {"m": {"a": (4, 0), "b": (30, 15)}}
    cells = [("m", "a"), ("m", "b")]
    assert allocate(cells, floor, 1) == allocate(cells, floor, 1, floor=True) == {("m", "a"): 1}
    assert allocate(cells, floor, 1, floor=False) == {("m", "b"): 1}


def test_cut_of_tied_cells_alternates_and_unseen_cells_come_first():
    tie = {"m": {"a": (4, 2), "b": (4, 2)}}
    add = {("m", "a"): 3, ("m", "b"): 3}
    a, b = ("m", "a"), ("m", "b")
    assert [ad._cut(add, tie, k, True) for k in (2, 3, 4, 5)] == [
        {a: 1, b: 1}, {a: 2, b: 1}, {a: 2, b: 2}, {a: 3, b: 2}]
    assert ad._cut({("x", "new"): 2, a: 1}, tie, 2, True) == {("x", "new"): 2}
    floor = {"m": {"a": (4, 0), "b": (30, 15)}}
    # without the floor a's later trials gain less than b's first: b comes second
    assert ad._cut({a: 2, b: 1}, floor, 2, False) == {b: 1, a: 1}
    assert ad._cut({a: 2, b: 1}, floor, 2, True) == {a: 2}


def test_replay_counts_its_rounds_and_charges_each_pair_its_trials():
    ups = {m: {f"t{i}": [(j + i + (m == "b")) % 3 == 0 for j in range(12)] for i in range(4)}
           for m in ("a", "b")}
    got = replay(ups, RANKED, start=2, batch=2, margin=0.001, n_boot=50, max_trials=8)
    added = sum(got["targets"].values()) - 2 * 8
    assert got["rounds"] >= 2 and added == 2 * got["rounds"]
    assert got["by_pair"] == {"a|b": added}
