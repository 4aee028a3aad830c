"""What ``run`` says after its sweep, and the exit status it ends with, from a sweep's outcome
alone (no sweep runs): exact lines."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from sweepbench.cli import BUDGET_EXIT, ERRORS_EXIT, FAILING_EXIT
from sweepbench.cli.run import _exit_status, _say_error_reasons, _say_outcome
from sweepbench.runner.sweep import SweepOutcome


def outcome(**fields) -> SweepOutcome:
    return SweepOutcome(**{"run_id": "run-1", "store_path": Path("runs/s.sqlite"),
                           "episodes": 8, "skipped": 2, "errors": 0, **fields})


def run_args(*argv: str) -> argparse.Namespace:
    return argparse.Namespace(argv=list(argv))


def test_a_clean_sweep_is_one_line(capsys):
    _say_outcome(outcome())
    assert capsys.readouterr().err == ("run run-1: 8 episodes run, 2 already finished in the "
                                       "store, 0 ended in error; store: runs/s.sqlite\n")


def test_resumed_episodes_changed_identities_and_failed_judgments_are_said(capsys):
    _say_outcome(outcome(errors=1, resumed=3, replayed_calls=12, stored_errors=2,
                         changed={"task content": 1, "agent prompt": 4},
                         judge_failures={"j2 / full": 1, "j1 / sliding": 5}))
    assert capsys.readouterr().err.splitlines() == [
        "run run-1: 8 episodes run (3 resumed from their journal, 12 recorded model calls "
        "reused), 2 already finished in the store (2 of them ended in error), 1 ended in "
        "error; store: runs/s.sqlite",
        "not reused: stored episodes of the same model, task and trial whose identity changed: "
        "agent prompt (4), task content (1); they ran as new episodes (the old ones stay in the "
        "store, superseded in reports)",
        "5 judgments by j1 / sliding failed (left unjudged; run again to retry)",
        "1 judgments by j2 / full failed (left unjudged; run again to retry)",
    ]


class ErrorStore:
    """The two reads ``_say_error_reasons`` makes, over rows and records given."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        self.asked: list[set[str]] = []

    def episode_rows(self, run_id: str) -> list[dict]:
        assert run_id == "run-1"
        return [{"episode_key": "done-1", "status": "done"},
                *({"episode_key": k, "status": "error"} for k in self.errors)]

    def records(self, keys: set[str]) -> dict:
        self.asked.append(set(keys))
        return {k: SimpleNamespace(error=self.errors[k]) for k in keys}


def test_the_five_commonest_error_reasons_are_said_with_the_rest_counted(capsys):
    reasons = {"timeout": 7, "HTTP 500": 6, "reset": 5, "HTTP 429": 4, "garbage": 3,
               "overflow": 2, "length": 1}
    store = ErrorStore({f"{why}-{i}": why for why, n in reasons.items() for i in range(n)})
    _say_error_reasons(store, "run-1")
    assert store.asked == [set(store.errors)]  # the episodes that ended in error, only
    assert capsys.readouterr().err.splitlines() == [
        "episodes that ended in error (counted as failures):",
        "  7 x timeout", "  6 x HTTP 500", "  5 x reset", "  4 x HTTP 429", "  3 x garbage",
        "  ... and 3 more, of 2 other reasons"]


def test_an_error_reason_over_lines_is_said_on_one(capsys):
    _say_error_reasons(ErrorStore({"e-1": "bad\nreply"}), "run-1")
    assert capsys.readouterr().err.splitlines()[1:] == ["  1 x bad\\x0areply"]


def test_no_stop_and_no_error_ends_with_0_and_says_nothing(capsys):
    assert _exit_status(outcome(), run_args("run")) == 0
    assert capsys.readouterr().err == ""


def test_a_spending_cap_stop_ends_with_the_budget_status(capsys):
    stopped = outcome(budget_stop="max_cost 5.0", not_started=7, spent=1234.56789, errors=2,
                      error_stop="the last 20 episodes ended in error")
    assert _exit_status(stopped, run_args("run")) == BUDGET_EXIT == 3
    assert capsys.readouterr().err == (
        "stopped by the spending cap: max_cost 5.0; 7 episodes not started; $1,234.5679 spent "
        "on this selection in all, once the episodes in flight ended and were judged; run "
        "again with a higher --max-cost to continue\n")


def test_an_error_streak_stop_ends_with_the_failing_status_and_the_retry_command(capsys):
    stopped = outcome(error_stop="the last 20 episodes ended in error", not_started=40,
                      errors=20)
    assert _exit_status(stopped, run_args("run", "--model", "my model")) == FAILING_EXIT == 5
    assert capsys.readouterr().err == (
        "stopped: the last 20 episodes ended in error, so the setup looks broken (see the "
        "reasons above); 40 episodes not started. Fix it, then run "
        "`sweepbench run --model 'my model' --retry-errors`\n")


def test_episodes_in_error_end_with_the_errors_status_and_the_retry_command(capsys):
    assert _exit_status(outcome(errors=1, stored_errors=2),
                        run_args("run", "--retry-errors")) == ERRORS_EXIT == 4
    assert capsys.readouterr().err == ("3 episodes of this selection ended in error; run them "
                                       "again with `sweepbench run --retry-errors`\n")
    assert _exit_status(outcome(stored_errors=1), argparse.Namespace()) == ERRORS_EXIT
    assert capsys.readouterr().err == ("1 episodes of this selection ended in error; run them "
                                       "again with `sweepbench run --retry-errors`\n")


def test_errors_no_retry_fixes_name_their_fix_before_the_retry_command(capsys):
    reasons = Counter({"agent model call failed: gpt: HTTP 401: invalid api key": 3,
                       "agent model call failed: gpt: HTTP 500: oops": 1})
    assert _exit_status(outcome(errors=4), run_args("run"), reasons) == ERRORS_EXIT
    assert capsys.readouterr().err == (
        "4 episodes of this selection ended in error, some for a reason no retry fixes: the "
        "server refused the key: check the key in the endpoint's api_key_env variable. Fix "
        "that first, then run them again with `sweepbench run --retry-errors`\n")


def test_an_error_streak_of_404s_says_to_check_the_model_name(capsys):
    stopped = outcome(error_stop="the last 20 episodes ended in error", not_started=40,
                      errors=20)
    reasons = Counter({"agent model call failed: m: HTTP 404: model not found": 20})
    assert _exit_status(stopped, run_args("run"), reasons) == FAILING_EXIT
    assert capsys.readouterr().err == (
        "stopped: the last 20 episodes ended in error, so the setup looks broken (see the "
        "reasons above): the server knows no such model or path: check the endpoint's model "
        "name and base_url; 40 episodes not started. Fix it, then run "
        "`sweepbench run --retry-errors`\n")


def test_retryable_reasons_keep_the_plain_retry_hint(capsys):
    reasons = Counter({"agent model call failed: gpt: HTTP 503: busy": 2,
                       "agent model call failed: gpt: timed out after 120 s": 1})
    assert _exit_status(outcome(errors=3), run_args("run"), reasons) == ERRORS_EXIT
    assert capsys.readouterr().err == ("3 episodes of this selection ended in error; run them "
                                       "again with `sweepbench run --retry-errors`\n")
