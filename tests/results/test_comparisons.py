"""A leaderboard's family of paired comparisons: Holm and Benjamini-Hochberg by hand, the
family stated, and the family-wise false-positive rate of identical models held."""

from __future__ import annotations

import numpy as np
import pytest

from sweepbench.results.comparisons import (
    ALL_PAIRS_UP_TO,
    ALPHA,
    adjust,
    column_task_rates,
    compare,
    leaderboard_order,
    task_rates,
)
from sweepbench.results.outcome_columns import OutcomeColumns
from sweepbench.results.stats import Outcome, paired_bootstrap


def test_holm_and_bh_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted .005 .01 .03 .04 times 4 3 2 1 = .02 .03 .06 .04, made non-decreasing
    assert adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: sorted times 4/1 4/2 4/3 4/4 = .02 .02 .04 .04, made non-increasing from the top
    assert adjust(p, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjust([0.5, 0.9], "holm") == [1.0, 1.0]  # capped at 1
    assert adjust([]) == []
    with pytest.raises(ValueError, match="correction must be one of holm, bh"):
        adjust(p, "bonferroni")


def test_task_rates_weigh_trials_within_a_task_and_errors_fail():
    out = [Outcome("A", "d", "t1", i, True) for i in range(40)]
    out += [Outcome("A", "d", f"f{t}", i, False) for t in range(9) for i in range(4)]
    out.append(Outcome("B", "d", "t1", 0, True, error=True))
    rates = task_rates(out)
    assert rates["A"]["t1"] == 1.0 and rates["A"]["f3"] == 0.0 and len(rates["A"]) == 10
    assert rates["B"] == {"t1": 0.0}
    assert leaderboard_order({"x": {"avg": 0.1}, "y": {"avg": 0.3}, "a": {"avg": 0.1}}) == [
        "y", "a", "x"]


def test_column_task_rates_are_task_rates_with_tasks_in_the_order_they_first_come():
    """Exact rates (passes over trials, an error a failure, a pass with an error too), the
    tasks of each model in the order of their first outcome, a model's cells apart from
    another's even where model * tasks + task would meet without the table's size."""
    out = [Outcome("B", "d", "t3", 0, True), Outcome("A", "d", "t2", 0, True),
           Outcome("A", "d", "t1", 0, True), Outcome("A", "d", "t2", 1, False),
           Outcome("B", "d", "t1", 0, True, error=True), Outcome("A", "d", "t2", 2, True),
           Outcome("B", "d", "t3", 1, False), Outcome("A", "d", "t1", 1, True),
           Outcome("B", "d", "t3", 2, True), Outcome("B", "d", "t3", 3, True)]
    rates = column_task_rates(OutcomeColumns.of(out))
    assert rates == {"B": {"t3": 0.75, "t1": 0.0}, "A": {"t2": 2 / 3, "t1": 1.0}}
    assert [list(r) for r in rates.values()] == [["t3", "t1"], ["t2", "t1"]]
    assert rates == task_rates(out)
    assert column_task_rates(OutcomeColumns.of(out[:1])) == {"B": {"t3": 1.0}}
    assert column_task_rates(OutcomeColumns.of([])) == {}


def test_the_family_is_stated_and_every_pair_adjusted():
    rates = {m: {f"t{t}": float(m == "C") for t in range(12)} for m in "ABC"}
    out = compare(rates, ["A", "B", "C"], n_boot=500, seed=0)
    assert out["family"] == {
        "pairs": 3, "models": 3, "scope": "every pair of models", "correction": "holm",
        "alpha": 0.05, "what": "per-task pass rates on common tasks; sign-flip p-value, "
                               "bootstrap interval of the difference"}
    assert [(r["a"], r["b"]) for r in out["pairs"]] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert [r["p_adjusted"] for r in out["pairs"]] == adjust([r["p_value"] for r in out["pairs"]])
    ab = out["pairs"][0]
    assert (ab["diff"], ab["p_value"], ab["p_adjusted"], ab["significant"]) == (0.0, 1.0, 1.0,
                                                                                False)
    # A and C differ by 1 on every task (a sign pattern as extreme: 2 in 4,096): significant
    # after Holm over 3 pairs
    ac = out["pairs"][1]
    assert ac["diff"] == -1.0 and ac["significant"] and ac["p_adjusted"] <= 3 * ac["p_value"]
    many = {f"m{i:02d}": {"t": 0.5} for i in range(13)}
    fam = compare(many, sorted(many), n_boot=10, seed=0)["family"]
    assert fam["pairs"] == 12 and fam["scope"].startswith("each model against the next")


def test_identical_models_rarely_show_a_significant_pair():
    """6 identical models on 20 tasks x 4 trials: uncorrected, about a fifth of boards show a
    'significant' pair; with Holm at most 6%."""
    rng = np.random.default_rng(11)
    boards = 60
    raw = holm = 0
    for i in range(boards):
        p = rng.beta(0.5, 0.5, 20)
        rates = {f"m{m}": dict(enumerate(rng.binomial(4, p) / 4)) for m in range(6)}
        pairs = compare(rates, sorted(rates), n_boot=1000, seed=i)["pairs"]
        raw += any(r["p_value"] <= 0.05 for r in pairs)
        holm += any(r["significant"] for r in pairs)
    assert raw / boards > 0.15 and holm / boards <= 0.06


# ---- the edges: one p-value, the cap at 1, tasks in common, the bootstrap's seed -------------


def test_one_p_value_is_its_own_adjustment_and_holm_caps_at_one():
    assert adjust([0.03]) == [0.03] and adjust([0.03], "bh") == [0.03]
    assert adjust([0.6, 0.7]) == [1.0, 1.0]  # 2 x 0.6 = 1.2, capped
    assert adjust([]) == [] and adjust([], "bh") == []


def test_only_common_tasks_are_compared_and_a_pair_without_any_is_skipped():
    rates = {"A": {"t1": 1.0, "t2": 0.0, "t3": 1.0}, "B": {"t9": 1.0},
             "C": {"t1": 0.0, "t2": 0.0, "t4": 1.0}}
    got = compare(rates, ["A", "B", "C"], n_boot=200, seed=7)
    assert [(r["a"], r["b"]) for r in got["pairs"]] == [("A", "C")]
    direct = paired_bootstrap([1.0, 0.0], [0.0, 0.0], n_boot=200, seed=7)  # t1, t2
    row = got["pairs"][0]
    assert (row["tasks"], row["diff"], row["ci95"], row["p_value"]) == (
        2, direct.diff, direct.ci95, direct.p_value)
    assert got["family"]["pairs"] == 1 and got["family"]["models"] == 3


def test_the_bootstrap_gets_the_seed_and_size_asked_for():
    rng = np.random.default_rng(3)
    rates = {m: {f"t{i}": float(rng.integers(0, 2)) for i in range(30)} for m in "AB"}
    row = compare(rates, ["A", "B"], n_boot=300, seed=11)["pairs"][0]
    direct = paired_bootstrap([rates["A"][f"t{i}"] for i in sorted(range(30), key=str)],
                              [rates["B"][f"t{i}"] for i in sorted(range(30), key=str)],
                              n_boot=300, seed=11)
    assert (row["ci95"], row["p_value"]) == (direct.ci95, direct.p_value)


def test_the_correction_asked_for_is_the_one_applied():
    rates = {"A": {f"t{i}": 1.0 for i in range(12)},
             "B": {f"t{i}": float(i % 2) for i in range(12)},
             "C": {f"t{i}": float(i % 3 == 0) for i in range(12)}}
    holm = compare(rates, ["A", "B", "C"], n_boot=400, seed=1)
    bh = compare(rates, ["A", "B", "C"], n_boot=400, seed=1, correction="bh")
    raw = [r["p_value"] for r in bh["pairs"]]
    assert [r["p_adjusted"] for r in bh["pairs"]] == adjust(raw, "bh")
    assert [r["p_adjusted"] for r in holm["pairs"]] == adjust(raw, "holm")
    assert adjust(raw, "bh") != adjust(raw, "holm") and bh["family"]["correction"] == "bh"


def test_twelve_models_are_compared_pair_by_pair_and_an_adjusted_p_of_alpha_is_significant(
        monkeypatch):
    from sweepbench.results import comparisons

    rates = {f"m{i:02d}": {"t": 1.0, "u": 0.0} for i in range(ALL_PAIRS_UP_TO)}
    monkeypatch.setattr(comparisons, "adjust", lambda p, method: [ALPHA] * len(p))
    got = compare(rates, sorted(rates), n_boot=50, seed=0)
    assert got["family"]["pairs"] == ALL_PAIRS_UP_TO * (ALL_PAIRS_UP_TO - 1) // 2
    assert got["family"]["scope"] == "every pair of models"
    assert all(r["significant"] for r in got["pairs"])


def test_a_model_without_an_average_ranks_as_zero():
    assert leaderboard_order({"b": {}, "a": {"avg": 0.5}, "c": {"avg": None}}) == ["a", "b", "c"]
