"""How reports write numbers and names: exact strings at each format's edges (the unit
boundaries, negatives, what is not a finite number), and the orders of metrics and models."""

from __future__ import annotations

import pytest

from sweepbench.results.fmt import (
    DASH,
    by_score,
    ci,
    cost_rows,
    count,
    domain_short,
    interval,
    iso_utc,
    judge_label,
    metric_name,
    metric_order,
    num,
    pct,
    price,
    seconds,
    tokens,
    usd,
    wrap_label,
)

NOT_NUMBERS = [None, True, False, "0.5", float("nan"), float("inf"), float("-inf")]


@pytest.mark.parametrize("fmt", [pct, usd, price, tokens, num, seconds])
@pytest.mark.parametrize("x", NOT_NUMBERS)
def test_what_is_not_a_finite_number_is_a_dash(fmt, x) -> None:
    assert DASH == "—"
    assert fmt(x) == DASH


@pytest.mark.parametrize("x", NOT_NUMBERS)
def test_what_is_not_a_finite_number_has_no_time(x) -> None:
    assert iso_utc(x) is None


@pytest.mark.parametrize("x, text", [(0.123, "12.3%"), (0, "0.0%"), (1, "100.0%"),
                                     (0.0005, "0.1%"), (-0.25, "-25.0%")])
def test_a_rate_is_a_percentage_with_one_decimal(x, text: str) -> None:
    assert pct(x) == text


def test_an_interval_is_its_ends_in_percent() -> None:
    assert ci((0.102, 0.148)) == "10.2–14.8"
    assert ci([0, 1]) == "0.0–100.0"


@pytest.mark.parametrize("interval", [None, (), [], (0.1, None), (float("nan"), 0.2),
                                      (0.1, True)])
def test_an_interval_without_two_finite_ends_is_a_dash(interval) -> None:
    assert ci(interval) == DASH


@pytest.mark.parametrize("x, text", [
    (1.23456, "$1.2346"), (0, "$0.0000"), (99.99, "$99.9900"), (100, "$100.00"),
    (1234.5, "$1,234.50"), (-5, "$-5.0000"), (-150, "$-150.00"), (-99.5, "$-99.5000"),
])
def test_dollars_have_four_decimals_under_100_and_two_from_100(x, text: str) -> None:
    assert usd(x) == text


@pytest.mark.parametrize("x, text", [(2, "$2.00"), (2.5, "$2.50"), (0.075, "$0.075"),
                                     (0.0375, "$0.0375"), (1234.5678, "$1,235"),
                                     (1500, "$1,500.00")])
def test_a_price_has_cents_or_four_significant_digits(x, text: str) -> None:
    assert price(x) == text


@pytest.mark.parametrize("x, text", [(1234567, "1,234,567"), (0, "0"), (-1000, "-1,000"),
                                     (True, DASH), (1.0, DASH), (None, DASH), ("3", DASH)])
def test_a_count_is_an_int_with_thousands_separators(x, text: str) -> None:
    assert count(x) == text


@pytest.mark.parametrize("x, text", [
    (812, "812"), (69_900, "69.9k"), (1_210_000, "1.21M"), (1e6, "1M"), (1_225_000, "1.23M"),
    (123.4, "123"),
    (1000, "1k"), (999, "999"), (10.4, "10"), (9.5, "9.5"), (3, "3"), (3.0, "3"),
    (0.123, "0.12"), (-2000, "-2k"), (-2_500_000, "-2.5M"), (-12.6, "-13"), (-0.5, "-0.5"),
])
def test_tokens_are_compact(x, text: str) -> None:
    assert tokens(x) == text


@pytest.mark.parametrize("x, text", [(12345.6, "12,346"), (1000, "1,000"), (999.4, "999"),
                                     (3.14159, "3.14"), (-1500, "-1,500"), (-2.5, "-2.5")])
def test_a_plain_number_has_three_significant_digits_below_1000(x, text: str) -> None:
    assert num(x) == text


@pytest.mark.parametrize("x, text", [(0.085, "85 ms"), (0.9994, "999 ms"), (1, "1 s"),
                                     (1.2, "1.2 s"), (-0.5, "-500 ms"), (-2, "-2 s"),
                                     (0, "0 ms")])
def test_a_duration_is_milliseconds_below_a_second(x, text: str) -> None:
    assert seconds(x) == text


@pytest.mark.parametrize("key, name", [
    ("tool_f1", "Tool F1"), ("param_accuracy", "Param accuracy"), ("output_em", "Output EM"),
    ("llm_id", "LLM ID"), ("acc", "Accuracy"), ("f1_tool", "F1 tool"), ("a__b", "A b"),
    ("_", "_"), ("", ""), ("xYz", "XYz"),
])
def test_a_metric_key_gets_a_human_name(key: str, name: str) -> None:
    assert metric_name(key) == name


def test_metrics_are_grouped_by_family_in_the_papers_order_statistics_first() -> None:
    keys = ["output_f1", "zeta_x", "tool_recall", "tool_f1", "param_em", "alpha_f1", "tool_zz",
            "param_precision", "alpha_b", "tool", "tool_accuracy", "param_recall"]
    assert metric_order(keys) == [
        "tool_f1", "tool_recall", "tool_accuracy", "tool", "tool_zz",
        "param_precision", "param_recall", "param_em", "output_f1",
        "alpha_f1", "alpha_b", "zeta_x"]
    assert metric_order(iter(["b_x", "a_y"])) == ["a_y", "b_x"]


def test_metrics_of_other_families_are_grouped_by_family_before_statistic() -> None:
    assert metric_order(["zeta_f1", "alpha_b", "alpha_f1"]) == ["alpha_f1", "alpha_b", "zeta_f1"]


@pytest.mark.parametrize("pair, label", [
    ("scripted/judge/likert", "Likert (scripted/judge)"), ("state/state", "State check"),
    ("state", "State check"), ("j/sliding", "Sliding-window rubrics (j)"),
    ("j/full", "Full-trajectory rubrics (j)"),
    ("j/sliding_no_rubrics", "Sliding window, no rubrics (j)"),
    ("j/full_no_rubrics", "Full trajectory, no rubrics (j)"),
    ("j/param_accuracy", "Param accuracy (j)"), ("x/state", "State check (x)"),
    ("state/likert", "Likert (state)"),
])
def test_a_judge_method_pair_reads_as_the_method_and_its_judge(pair: str, label: str) -> None:
    assert judge_label(pair) == label


@pytest.mark.parametrize("domain, most, short", [
    ("a,b,c,d", 4, "a, b, c, d"), ("a,b,c,d,e", 4, "5 domains: a, b, +3"),
    ("a,b,c", 2, "3 domains: a, b, +1"), ("a,,b,", 4, "a, b"), ("", 4, ""),
])
def test_a_long_domain_composition_is_shortened(domain: str, most: int, short: str) -> None:
    assert domain_short(domain, most=most) == short


def test_more_than_four_domains_are_shortened_by_default() -> None:
    assert domain_short(",".join(f"d{i}" for i in range(11))) == "11 domains: d0, d1, +9"
    assert domain_short("a,b,c,d,e") == "5 domains: a, b, +3"
    assert domain_short("a,b,c,d") == "a, b, c, d"


@pytest.mark.parametrize("text, width, wrapped", [
    ("alpha,beta,gamma delta epsilon zeta eta theta", 28,
     "alpha, beta, gamma delta\nepsilon zeta eta theta"),
    ("a, b", 28, "a, b"), ("x" * 30, 28, "x" * 28 + "\nxx"), ("   ", 28, "   "),
    ("a-b-c-d-e-f-g-h-i-j-k-l-m-n-o", 10, "a-b-c-d-e-\nf-g-h-i-j-\nk-l-m-n-o"),
])
def test_a_label_wraps_on_spaces_and_commas(text: str, width: int, wrapped: str) -> None:
    assert wrap_label(text, width) == wrapped


def test_a_label_wraps_at_28_characters_by_default() -> None:
    assert wrap_label("x" * 28 + " y") == "x" * 28 + "\ny"
    assert wrap_label("x" * 28 + "y") == "x" * 28 + "\ny"
    assert wrap_label("x" * 28) == "x" * 28


def test_a_label_is_not_wrapped_after_a_hyphen_of_a_model_name() -> None:
    assert wrap_label("gpt-4o-mini-high [user u, default]", 14) == (
        "gpt-4o-mini-hi\ngh [user u,\ndefault]")


def test_a_timestamp_is_iso_8601_in_utc_with_milliseconds() -> None:
    assert iso_utc(1795446162.848) == "2026-11-23T15:02:42.848Z"
    assert iso_utc(0) == "1970-01-01T00:00:00.000Z"


def test_models_are_ranked_best_average_first_then_by_name_unscored_last() -> None:
    models = {"e": {"avg": None}, "a": {"avg": 0.5}, "b": {"avg": 0.9}, "c": {"avg": None},
              "d": {"avg": 0.5}, "z": {"avg": 0.0}}
    assert by_score(models) == ["b", "a", "d", "z", "c", "e"]


def test_cost_rows_are_the_priced_rows_in_leaderboard_order() -> None:
    cost = {"agent": 1.5, "user": 0.25, "judge": 0.125, "total": 1.875, "per_episode": 0.1875}
    report = {"benchmarks": {
        "t1": {"models": {"m1": {"avg": 0.5, "cost": cost},
                          "m2": {"avg": 0.9, "cost": {**cost, "total": 150.0}},
                          "m3": {"avg": 0.7, "cost": None}, "m4": {"avg": 0.8}}},
        "vitabench": {"models": {"m1": {"avg": None, "cost": {"total": 2.0}}}}}}
    assert cost_rows(report) == [
        ["m2", "t1", "$1.5000", "$0.2500", "$0.1250", "$150.00", "$0.1875", DASH],
        ["m1", "t1", "$1.5000", "$0.2500", "$0.1250", "$1.8750", "$0.1875", DASH],
        ["m1", "vitabench", DASH, DASH, DASH, "$2.0000", DASH, DASH]]


@pytest.mark.parametrize("report", [{}, {"benchmarks": None}, {"benchmarks": {}}])
def test_a_report_without_benchmarks_has_no_cost_rows(report: dict) -> None:
    assert cost_rows(report) == []


def test_a_value_that_rounds_up_to_the_next_unit_is_written_in_it():
    assert (tokens(999_999), tokens(-999_999), tokens(999.6)) == ("1M", "-1M", "1k")
    assert (tokens(999_499), tokens(999.4)) == ("999k", "999")
    assert (num(999.6), num(999.4), num(-999.6)) == ("1,000", "999", "-1,000")


def test_an_entrys_interval_is_read_by_metric_and_target_none_where_missing():
    entry = {"intervals": {"avg": {"population": (0.1, 0.3), "fixed_set": (0.15, 0.25)},
                           "pass_at_k": {"population": None}}}
    assert interval(entry, "avg", "population") == (0.1, 0.3)
    assert interval(entry, "avg", "fixed_set") == (0.15, 0.25)
    assert interval(entry, "pass_at_k", "fixed_set") is None
    assert interval(entry, "pass_hat_k", "population") is None
    assert interval({"intervals": None}, "avg", "population") is None
    assert interval({"intervals": {"avg": None}}, "avg", "population") is None
    assert interval({}, "avg", "population") is None
