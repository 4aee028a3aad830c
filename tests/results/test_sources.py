"""Where each benchmark's pass comes from: its headline judge and method, or the ones asked
for, the judge with the most verdicts when none is named, and whether the method applies."""

from __future__ import annotations

from sweepbench.results.selection import EpisodeView
from sweepbench.results.sources import (
    Source,
    choose_source,
    headline_sources,
    sources_of,
)

VITA = {"headline": "sliding", "headline_label": "the sliding-window rubric judge",
        "judge_methods": ["sliding", "full"]}


def source(judge, method, label, explicit=False, applicable=True) -> Source:
    return Source(judge=judge, method=method, label=label, explicit=explicit, applicable=applicable)


def test_without_a_headline_the_state_check_is_the_source():
    assert choose_source({}, {}) == source("state", "state", "the state check")
    assert choose_source({"headline": None, "headline_label": ""}, {("j", "state"): 3}) == \
        source("state", "state", "the state check")


def test_the_headline_judge_is_the_one_with_most_verdicts_of_the_method():
    verdicts = {("a", "sliding"): 2, ("b", "sliding"): 5, ("c", "full"): 9}
    assert choose_source(VITA, verdicts) == source("b", "sliding", "the sliding-window rubric judge")
    # a tie goes to the judge named first in order
    assert choose_source(VITA, {("b", "sliding"): 4, ("a", "sliding"): 4}).judge == "a"
    # no verdict of the method, or none counted: no judge
    assert choose_source(VITA, {("c", "full"): 9}).judge is None
    assert choose_source(VITA, {("a", "sliding"): 0}).judge is None
    # a headline without a label of its own is named after its method
    assert choose_source({"headline": "likert"}, {("j", "likert"): 1}) == source("j", "likert", "the likert judge")


def test_a_method_asked_for_is_explicit_and_named_after_itself():
    verdicts = {("a", "sliding"): 2, ("c", "full"): 1}
    assert choose_source(VITA, verdicts, method="full") == source("c", "full", "the full judge", explicit=True)
    assert choose_source(VITA, verdicts, method="state") == source("state", "state", "the state judge",
                                                                  explicit=True)
    # a method the benchmark does not have is not applicable to it
    assert choose_source(VITA, verdicts, method="likert") == source(None, "likert", "the likert judge",
                                                                    explicit=True, applicable=False)
    # a benchmark that lists no methods takes any
    assert choose_source({}, {("j", "likert"): 1}, method="likert").applicable is True


def test_a_judge_asked_for_is_explicit_unless_the_source_is_the_state_check():
    verdicts = {("a", "sliding"): 2}
    assert choose_source(VITA, verdicts, judge="z") == source("z", "sliding", "the sliding-window rubric judge",
                                                              explicit=True)
    assert choose_source({}, verdicts, judge="z") == source("state", "state", "the state check")
    assert choose_source(VITA, verdicts, method="state", judge="z") == source(
        "state", "state", "the state judge", explicit=True)


def view(rows, runs=()) -> EpisodeView:
    return EpisodeView([], [dict(r, store=0) for r in rows], 0, list(runs))


ROWS = [{"episode_key": "e1", "benchmark": "vita"}, {"episode_key": "e2", "benchmark": "vita"},
        {"episode_key": "e3", "benchmark": "t1"}]


def test_sources_of_counts_the_given_verdicts_of_each_benchmark_s_episodes():
    by_pair = {("a", "sliding"): {"e1": {"passed": True}, "e2": {"passed": False},
                                  "gone": {"passed": True}},  # not a selected episode
               ("b", "sliding"): {"e1": {"passed": None}, "e2": {"passed": None},  # no verdict
                                  "e3": {"passed": True}}}
    got = sources_of(view(ROWS), ["vita", "t1", "other"], by_pair, {"vita": VITA, "t1": None},
                     None, None)
    assert got == {"vita": source("a", "sliding", "the sliding-window rubric judge"),
                   "t1": source("state", "state", "the state check"),
                   "other": source("state", "state", "the state check")}
    got = sources_of(view(ROWS), ["vita"], by_pair, {"vita": VITA}, "sliding", "b")
    assert got == {"vita": source("b", "sliding", "the sliding judge", explicit=True)}


def test_sources_of_a_benchmark_whose_verdicts_are_all_elsewhere_has_no_judge():
    by_pair = {("a", "sliding"): {"e3": {"passed": True}}}
    assert sources_of(view(ROWS), ["vita"], by_pair, {"vita": VITA}, None, None)["vita"].judge is None


def test_headline_sources_reads_the_runs_info_and_the_benchmarks_given():
    judgments = [{"judge": "a", "method": "sliding", "episode_key": "e1", "passed": True},
                 {"judge": "b", "method": "sliding", "episode_key": "e1", "passed": True},
                 {"judge": "b", "method": "sliding", "episode_key": "e2", "passed": False},
                 {"judge": "state", "method": "state", "episode_key": "e3", "passed": True}]
    runs = [{"info": {"benchmarks": {"vita": {"headline": "full"}}}},
            {"info": {"benchmarks": {"vita": VITA}}}, {"info": None}]
    expected_vita = {"judge": "b", "method": "sliding", "label": "the sliding-window rubric judge",
                     "explicit": False, "applicable": True}
    state = {"judge": "state", "method": "state", "label": "the state check", "explicit": False,
             "applicable": True}
    assert headline_sources(view(ROWS, runs), judgments) == {"t1": state, "vita": expected_vita}
    # benchmarks' info given beside the runs' wins over it
    got = headline_sources(view(ROWS, runs), judgments, {"vita": {"headline": "likert"}})
    assert got["vita"] == {"judge": None, "method": "likert", "label": "the likert judge",
                           "explicit": False, "applicable": True}
    assert list(got) == ["t1", "vita"]
