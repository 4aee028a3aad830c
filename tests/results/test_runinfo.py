"""What a report says beside its numbers: the runs' configurations without secrets, error
texts grouped into reasons, judgments without a verdict by judge, and how episodes ended."""

from __future__ import annotations

from importlib import metadata

import pytest

from sweepbench.results import runinfo
from sweepbench.results.runinfo import (
    MASK,
    configuration,
    error_reason,
    error_reasons,
    package_version,
    redact_url,
    terminations,
    unjudged_by_judge,
)


def test_the_package_version_is_the_installed_one_else_unknown(monkeypatch):
    assert package_version() == metadata.version("sweepbench")
    asked = []

    def missing(name):
        asked.append(name)
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(runinfo.metadata, "version", missing)
    assert package_version() == "unknown" and asked == ["sweepbench"]


@pytest.mark.parametrize(("url", "shown"), [
    ("", ""),
    ("https://api.example.com/v1", "https://api.example.com/v1"),
    ("https://user:pw@host/v1?api_key=x&a=1", "https://***@host/v1?api_key=***&a=1"),
    ("https://a@b@host:8080/v1", "https://***@host:8080/v1"),
    ("http://h/p?Token=1&TOKEN_2=2&secret=3&password=4&auth=5&signature=6&sig=7&signed=8"
     "&credentials=9&b=&q=a b#frag",
     "http://h/p?Token=***&TOKEN_2=***&secret=***&password=***&auth=***&signature=***&sig=***"
     "&signed=8&credentials=***&b=&q=a+b#frag"),
    ("http://[::1", MASK),  # unparseable: nothing of it is shown
])
def test_a_url_is_shown_without_its_user_info_or_secret_query_values(url, shown):
    assert redact_url(url) == shown


def run(**kw):
    return {"run_id": "r1", "created_at": 0, "finished_at": 1700000000.5, "status": "done",
            **kw}


def test_a_configuration_shows_settings_endpoints_and_prices_without_secrets(monkeypatch):
    monkeypatch.setattr(runinfo, "package_version", lambda: "9.9")
    config = {
        "models": ["a"], "trials": 3, "seed": None, "lang": "", "task_ids": [], "extra": {},
        "zero": 0, "off": False,
        "endpoints": [
            {"name": "a", "base_url": "https://u:p@h/v1?key=k", "api_key_env": "A_KEY",
             "model": "", "extra_body": {"reasoning": {"effort": "low"},
                                         "headers": [{"X-Auth": "s", "n": 1}],
                                         "api_token": "t", 3: "three"},
             "temperature": None, "rpm": 0},
            "not an endpoint",
            {"name": "b"},
        ]}
    info = {"command": "sweepbench run", "sweepbench": "0.1.0",
            "benchmarks": {"vitabench": {"headline_label": "avg@4", "headline": "avg"},
                           "t1": {"headline": "f1"}, "x": None, "y": "odd"}}
    out = configuration([run(config=config, info=info, prices={"a": {"in": 1.0}})])
    assert out["report_sweepbench"] == "9.9"
    (r,) = out["runs"]
    assert r == {
        "run_id": "r1", "created_at": "1970-01-01T00:00:00.000Z",
        "finished_at": "2023-11-14T22:13:20.500Z", "status": "done",
        "command": "sweepbench run", "sweepbench": "0.1.0",
        "headlines": {"vitabench": "avg@4", "t1": "f1"},
        "settings": {"models": ["a"], "trials": 3, "zero": 0, "off": False},
        "endpoints": [
            {"name": "a", "base_url": "https://***@h/v1?key=***", "api_key_env": "A_KEY",
             "extra_body": {"reasoning": {"effort": "low"},
                            "headers": [{"X-Auth": MASK, "n": 1}], "api_token": MASK,
                            3: "three"},
             "rpm": 0},
            {"name": "b"}],
        "prices": {"a": {"in": 1.0}},
    }
    assert "endpoints" in config  # the run's own config is left as it was


def test_a_run_without_config_info_or_prices_still_has_its_row(monkeypatch):
    monkeypatch.setattr(runinfo, "package_version", lambda: "9.9")
    (r,) = configuration([{"run_id": "r0", "config": None, "info": None,
                           "prices": None}])["runs"]
    assert r == {"run_id": "r0", "created_at": None, "finished_at": None, "status": None,
                 "command": None, "sweepbench": None, "headlines": {}, "settings": {},
                 "endpoints": [], "prices": {}}
    (r,) = configuration([{"run_id": "r2", "config": {"endpoints": None},
                           "info": {"benchmarks": ["not", "a", "map"]}}])["runs"]
    assert r["headlines"] == {} and r["endpoints"] == [] and r["settings"] == {}
    runs = configuration([{"run_id": "a"}, {"run_id": "b"}])["runs"]
    assert [x["run_id"] for x in runs] == ["a", "b"]
    assert configuration([]) == {"report_sweepbench": "9.9", "runs": []}


def test_an_error_reason_masks_the_variable_parts():
    assert error_reason(None) == "(no error message recorded)"
    assert error_reason("") == "(no error message recorded)"
    assert error_reason("ep-12345678abc failed after 12345 ms\n\t and  3 tries ") == (
        "ep-… failed after N ms and 3 tries")
    assert error_reason("id DEADbeef01 and abc1234 and 999 and 1000") == (
        "id … and abc1234 and 999 and N")
    assert error_reason("ep-1234567 stays") == "ep-N stays"  # too short for an episode key
    assert error_reason("  padded  ") == "padded"
    assert error_reason("x" * 300) == "x" * 300
    assert error_reason("x" * 301) == "x" * 299 + "…"
    assert len(error_reason("y " * 400)) == 300


def row(key, status="error", benchmark="b", name="m", **kw):
    return {"episode_key": key, "status": status, "benchmark": benchmark, "name": name, **kw}


def test_errors_are_grouped_by_benchmark_and_reason_most_episodes_first():
    rows = [row("e1", label="m|t1|0"), row("e2", name="a"), row("e3", benchmark="a"),
            row("e4", status="done"), row("e5", name="z"), row("e6"), row("e7")]
    errors = {"e1": "timeout after 12345 ms", "e2": "timeout after 99999 ms",
              "e3": "timeout after 1 ms", "e4": "ignored", "e5": None, "e6": "boom",
              "e7": "zap"}
    out = error_reasons(rows, errors)
    assert out == [
        {"benchmark": "b", "reason": "timeout after N ms", "episodes": 2,
         "models": {"a": 1, "m": 1}, "example": "timeout after 12345 ms",
         "example_episode": "m|t1|0"},
        {"benchmark": "a", "reason": "timeout after 1 ms", "episodes": 1, "models": {"m": 1},
         "example": "timeout after 1 ms", "example_episode": "e3"},
        {"benchmark": "b", "reason": "(no error message recorded)", "episodes": 1,
         "models": {"z": 1}, "example": "", "example_episode": "e5"},
        {"benchmark": "b", "reason": "boom", "episodes": 1, "models": {"m": 1},
         "example": "boom", "example_episode": "e6"},
        {"benchmark": "b", "reason": "zap", "episodes": 1, "models": {"m": 1},
         "example": "zap", "example_episode": "e7"},
    ]
    assert list(out[0]["models"]) == ["a", "m"] and type(out[0]["models"]) is dict
    assert error_reasons([row("e1", status="done")], {}) == []
    twice = error_reasons([row("e1"), row("e2"), row("e3", name="a")], {})
    assert twice[0]["models"] == {"a": 1, "m": 2} and twice[0]["episodes"] == 3
    assert error_reasons([row("e9", label="")], {})[0]["example_episode"] == "e9"


def judgment(judge="j", method="m", passed=None, score=None, error="bad output 12345"):
    return {"judge": judge, "method": method, "passed": passed, "score": score,
            "details": {"error": error} if error is not None else None}


def test_judgments_without_a_verdict_are_counted_by_judge_and_method():
    js = [judgment(), judgment(error="bad output 99999"), judgment(error="other"),
          judgment(judge="a", error=ValueError("x 1234")), judgment(method="k"),
          judgment(passed=True), judgment(score=0.0), judgment(passed=False),
          judgment(error=None), judgment(error=""), judgment(judge="a")]
    assert unjudged_by_judge(js) == [
        {"judge": "j", "method": "m", "episodes": 3, "reason": "bad output N"},
        {"judge": "a", "method": "m", "episodes": 2, "reason": "x N"},
        {"judge": "j", "method": "k", "episodes": 1, "reason": "bad output N"},
    ]
    tie = unjudged_by_judge([judgment(judge="z", method="b"), judgment(judge="z", method="a"),
                             judgment(judge="y", method="c")])
    assert [(g["judge"], g["method"]) for g in tie] == [("y", "c"), ("z", "a"), ("z", "b")]
    assert unjudged_by_judge([]) == []


def test_terminations_count_each_rows_endings_running_ones_as_unfinished():
    rows = [row("1", status="done", termination="user_stop"),
            row("2", status="done", termination="user_stop"),
            row("3", status="running", termination="user_stop"),
            row("4", status="error", termination=None),
            row("5", status="done", termination="max_turns", name="a"),
            row("6", status="done", termination="", benchmark="a")]
    out = terminations(rows)
    assert out == {"a": {"m": {"unknown": 1}},
                   "b": {"a": {"max_turns": 1},
                         "m": {"unfinished": 1, "unknown": 1, "user_stop": 2}}}
    assert list(out) == ["a", "b"] and list(out["b"]) == ["a", "m"]
    assert list(out["b"]["m"]) == ["unfinished", "unknown", "user_stop"]
    assert type(out["b"]) is dict and type(out["b"]["m"]) is dict
    assert terminations([]) == {}


def test_the_adaptive_section_says_the_rule_the_trials_per_cell_and_per_pair_exactly():
    """Scored trials per (benchmark, model) cell over tasks (fewest, upper median, most, all;
    unjudged ones not counted), each benchmark's k, the trials charged to each pair (the
    newest run's count of a pair standing, as a resumed sweep replays every round), and each
    run's rule as its info says it."""
    from sweepbench.results.runinfo import adaptive_section
    from sweepbench.results.stats import Outcome

    def o(model, task, bench="vb", unjudged=False):
        return Outcome(model=model, domain="d", task_key=task, trial=0, passed=True,
                       benchmark=bench, unjudged=unjudged)

    outcomes = ([o("A", "t1")] * 3 + [o("A", "t2")] + [o("A", "t3")] * 2 + [o("A", "t4")] * 4
                + [o("A", "t2", unjudged=True)] * 5 + [o("B", "t1")] * 2
                + [o("A", "x1", bench="t1b"), o("A", "y", bench="")])
    runs = [{"run_id": "r1", "info": {"adaptive": {
                "rule": "target_ci", "target": 0.1, "why": "max_trials", "rounds": 3,
                "benchmarks": {"vb": {"by_pair": {"A|B": 3, "A|C": 1}}}}}},
            {"run_id": "r2", "info": {"adaptive": {"benchmarks": None}}},
            {"run_id": "r3", "info": {"adaptive": {
                "stopping_rule": "until_ranked", "margin": 0.02, "start": 2, "max_trials": 8,
                "benchmarks": {"vb": {"by_pair": {"A|B": "5"}}, "t1b": {"asked": 4}}}}}]
    leaderboards = {"vb": {"k": {"value": 2}}, "t1b": {"k": {"value": None}}}
    got = adaptive_section(runs, outcomes, leaderboards)
    keys = ("rule", "stopping_rule", "target", "margin", "start", "max_trials", "why",
            "rounds", "benchmarks")
    assert got == {
        "runs": [{"run_id": r["run_id"], **{k: r["info"]["adaptive"].get(k) for k in keys}}
                 for r in runs],
        "interval": "the 95% intervals over these tasks are the adaptive ones: each task's "
                    "variance at least that of its pass rate shrunk towards 1/2 (trials were "
                    "added where outcomes were uncertain, which the plain estimate does not "
                    "cover)",
        "benchmarks": {
            "": {"trials_per_cell": {"A": {"min": 1, "median": 1, "max": 1, "total": 1}},
                 "pass_k": None},
            "t1b": {"trials_per_cell": {"A": {"min": 1, "median": 1, "max": 1, "total": 1}},
                    "pass_k": None},
            "vb": {"trials_per_cell": {"A": {"min": 1, "median": 3, "max": 4, "total": 10},
                                       "B": {"min": 2, "median": 2, "max": 2, "total": 2}},
                   "pass_k": "Pass@2 and Pass^2 are shown only for rows whose every task has "
                             "at least 2 scored trials (k = the fewest of any task); the "
                             "other rows are marked incomplete",
                   "trials_per_pair": {"A|B": 5, "A|C": 1}}}}
    assert list(got["benchmarks"]) == ["", "t1b", "vb"]  # in benchmark order
    assert list(got["benchmarks"]["vb"]["trials_per_cell"]) == ["A", "B"]
    assert type(got["benchmarks"]["vb"]["trials_per_pair"]["A|B"]) is int
    assert adaptive_section([], outcomes, leaderboards) is None
    only_unjudged = adaptive_section(runs[:1], [o("A", "t1", unjudged=True)], leaderboards)
    assert only_unjudged["benchmarks"] == {}
